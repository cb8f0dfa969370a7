# Script mode: turns IN into a C++ source defining SYMBOL (NUL-terminated) and SYMBOL_size.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," body "${hex}")
file(WRITE "${OUT}" "#include <cstddef>\n// Generated from ${IN}; do not edit.\n"
  "extern const char ${SYMBOL}[];\nextern const std::size_t ${SYMBOL}_size;\n"
  "const char ${SYMBOL}[] = {${body}'\\0'};\nconst std::size_t ${SYMBOL}_size = ${size};\n")
