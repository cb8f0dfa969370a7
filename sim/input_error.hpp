// Errors in what the user gave us: a scenario, a manifest, a trace row, a command-line value.
// They carry where (file, line, column, field path) so the message points at the fix, and a kind
// that the CLI maps to an exit code (invalid data 65, missing file 66).
#pragma once

#include <stdexcept>
#include <string>

namespace capsim {

enum class InputErrorKind { kInvalid, kMissing };

struct InputLocation {
  std::string file;   // may be "--set" or "<string>"
  int line = 0;       // 1-based; 0 = unknown
  int column = 0;     // 1-based; 0 = unknown
  std::string field;  // e.g. "cluster.pools[1].gpu.model"; empty = none

  std::string to_string() const;  // "file:line:col: field"
};

class InputError : public std::runtime_error {
 public:
  InputError(InputErrorKind kind, InputLocation where, const std::string& message);
  InputErrorKind kind() const { return kind_; }
  const InputLocation& where() const { return where_; }
  const std::string& message() const { return message_; }

 private:
  InputErrorKind kind_;
  InputLocation where_;
  std::string message_;
};

}  // namespace capsim
