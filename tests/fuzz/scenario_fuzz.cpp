// libFuzzer target for the scenario loader, from memory: the input is a scenario's YAML, loaded as
// "scenario.yaml" through MemoryFiles (tools/loaders/file_source.hpp) beside the small files of
// tests/fuzz/files/ (traces of every format, manifests, Kueue objects and configuration, a
// mig-parted file, a device-plugin config, a scheduler configuration, a catalog, failure and
// reclaim traces, and base.yaml for `extends:`), so a scenario that names them loads them
// without touching the disk. Leading lines "#set KEY=VALUE" (YAML comments) are passed as --set
// overrides, in order. Expected outcomes: a loaded scenario, or a located InputError.
//   build/fuzz/tests/fuzz/capsim_scenario_fuzz -max_total_time=600 WORKDIR tests/fuzz/corpus/scenario
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_common.hpp"
#include "tools/loaders/file_source.hpp"
#include "tools/loaders/scenario_loader.hpp"

namespace {

// tests/fuzz/files/*, by file name, read once.
const std::map<std::string, std::string>& side_files() {
  static const std::map<std::string, std::string> files = [] {
    std::map<std::string, std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(CAPSIM_FUZZ_FILES_DIR)) {
      std::ifstream in(e.path(), std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      out[e.path().filename().string()] = ss.str();
    }
    return out;
  }();
  return files;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = capsim::fuzz::text_of(data, size);
  capsim::LoadOptions options;
  options.data_dir = ".";
  std::string_view rest = text;
  while (rest.substr(0, 5) == "#set ") {
    std::string_view after;
    const std::string_view line = capsim::fuzz::first_line(rest, after);
    options.overrides.emplace_back(line.substr(5));
    rest = after;
  }
  capsim::MemoryFiles files;
  for (const auto& [name, bytes] : side_files())
    files.add(name, bytes);
  files.add("scenario.yaml", text);
  capsim::fuzz::expect_input_errors(
      [&] { (void)capsim::load_scenario("scenario.yaml", options, files); });
  return 0;
}
