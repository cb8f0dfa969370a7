// Boxed<T>: a member kept out of line, for the parts of a large, numerous struct that most
// objects leave at their default (a PodSpec's spread constraints, pod and node affinity, Kueue
// topology request, priority class name, controller kind and spec.nodeName). A default Boxed holds
// no allocation and takes 8 bytes in place of sizeof(T); it reads as a default T. Copies copy the
// value, like a plain member.
//
// Reads go through `->` and `*` (const only); writes through mut(), which makes the value on
// first use, or by assigning a whole T, which keeps nothing when T compares equal to a default T
// (so a loader may assign what it read, set or not).
#pragma once

#include <concepts>
#include <memory>
#include <utility>

namespace capsim {

template <class T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const Boxed& o) : value_(o.value_ ? std::make_unique<T>(*o.value_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) value_ = o.value_ ? std::make_unique<T>(*o.value_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  ~Boxed() = default;

  Boxed& operator=(T v) {
    if constexpr (std::equality_comparable<T>) {
      if (v == kDefault) {
        value_.reset();
        return *this;
      }
    }
    value_ = std::make_unique<T>(std::move(v));
    return *this;
  }

  const T& operator*() const { return value_ ? *value_ : kDefault; }
  const T* operator->() const { return &**this; }
  // The value to change in place (made, as a default T, if there was none).
  T& mut() {
    if (!value_) value_ = std::make_unique<T>();
    return *value_;
  }
  // Whether a value is kept (one made by mut() may still equal a default T).
  bool set() const { return value_ != nullptr; }

 private:
  static inline const T kDefault{};
  std::unique_ptr<T> value_;
};

}  // namespace capsim
