#include "sim/input_error.hpp"

#include <fmt/format.h>

namespace capsim {

std::string InputLocation::to_string() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    s += fmt::format(":{}", line);
    if (column > 0) s += fmt::format(":{}", column);
  }
  if (!field.empty()) s += fmt::format(": {}", field);
  return s;
}

InputError::InputError(InputErrorKind kind, InputLocation where, const std::string& message)
    : std::runtime_error(where.to_string() + ": " + message),
      kind_(kind),
      where_(std::move(where)),
      message_(message) {}

}  // namespace capsim
