# -Wnull-dereference is left out: GCC 12 reports false positives inside libstdc++ and Boost at
# -O2. Warnings as an INTERFACE target: link `capsim_warnings` into our own targets only, never into
# third-party code. CAPSIM_WARNINGS_AS_ERRORS turns them into errors (the `ci` preset).
add_library(capsim_warnings INTERFACE)
target_compile_options(capsim_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wdouble-promotion
  -Wformat=2 -Wimplicit-fallthrough)
if(CAPSIM_WARNINGS_AS_ERRORS)
  target_compile_options(capsim_warnings INTERFACE -Werror)
endif()

# Sanitizers, as an INTERFACE target too (the `dev` preset).
add_library(capsim_sanitizers INTERFACE)
if(CAPSIM_SANITIZE)
  target_compile_options(capsim_sanitizers INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(capsim_sanitizers INTERFACE -fsanitize=address,undefined)
endif()
