// Result<T>: a value or an error message, for recoverable failures inside the core (parsing a
// quantity, validating a layout). The message is a sentence a user can read; callers at the I/O
// boundary add the file, line and field.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "sim/check.hpp"

namespace capsim {

struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error e) : v_(std::move(e)) {}      // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& {
    CAPSIM_CHECK(ok(), "value() on a failed Result: " + error());
    return std::get<T>(v_);
  }
  T&& value() && {
    CAPSIM_CHECK(ok(), "value() on a failed Result: " + error());
    return std::get<T>(std::move(v_));
  }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const std::string& error() const { return std::get<Error>(v_).message; }

 private:
  std::variant<T, Error> v_;
};

inline Error make_error(std::string message) {
  return Error{std::move(message)};
}

}  // namespace capsim
