// What the manifest loader does with a kind no handler reads: a table of the Kubernetes (and
// well-known add-on) kinds that either change nothing capsim simulates, and are skipped with one
// note per kind and file, or would change the answer in a way capsim does not model, and are
// refused with a message saying so and naming what capsim reads instead. Kinds in neither list
// stay unknown (an error with a did-you-mean hint). The table is a constant; loads on several
// threads share it.
#pragma once

#include <string_view>

namespace capsim {

enum class KindAction : unsigned char {
  kSkip,    // does not affect scheduling: skipped with one note per kind and file
  kRefuse,  // would change the answer and is not modelled: the load fails
};

struct UnmodelledKind {
  std::string_view group;  // "" for the core group
  std::string_view kind;
  KindAction action;
  // Skip: why it changes nothing (or what capsim reads instead). Refuse: what is not modelled and
  // what to write instead. A sentence fragment, without the kind's name.
  std::string_view why;
  // Refuse only, optional: what to write instead, when `why` does not say it.
  std::string_view instead = {};
};

// The row for (group, kind), or nullptr. The version is not looked at: every served version of
// these kinds is treated alike.
const UnmodelledKind* unmodelled_kind(std::string_view group, std::string_view kind);

}  // namespace capsim
