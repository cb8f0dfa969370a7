// libFuzzer target for sweep and plan files (docs/planning.md). The input's first line names the
// kind, `sweep` or `plan`; the rest is the file, read from memory (load_sweep_text,
// load_plan_text) as if it were tests/fuzz/files/study.yaml, so `scenario: base.yaml` names the
// small base scenario there, which every axis value, choice and pool key is tried against (read
// from disk, as capsim reads it). Expected outcomes: a sweep or plan, or a located InputError.
//   build/fuzz/tests/fuzz/capsim_study_fuzz -max_total_time=600 WORKDIR tests/fuzz/corpus/study
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_common.hpp"
#include "tools/loaders/plan_spec.hpp"
#include "tools/loaders/sweep_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = capsim::fuzz::text_of(data, size);
  std::string_view rest;
  const std::string_view kind = capsim::fuzz::first_line(in, rest);
  const std::string dir = CAPSIM_FUZZ_FILES_DIR;
  const std::string path = dir + "/study.yaml";
  if (kind == "sweep") {
    capsim::fuzz::expect_input_errors(
        [&] { (void)capsim::load_sweep_text(std::string(rest), path, dir); });
  } else if (kind == "plan") {
    capsim::fuzz::expect_input_errors(
        [&] { (void)capsim::load_plan_text(std::string(rest), path, dir); });
  }
  return 0;
}
