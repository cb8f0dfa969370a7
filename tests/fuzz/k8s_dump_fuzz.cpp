// libFuzzer target for `capsim import kubernetes` (tools/loaders/k8s_dump.hpp): the input is a
// cluster dump (`kubectl get ... -o yaml` or `-o json`, or kube-scheduler-simulator's export; read
// as dump.json when it starts with '{' or '[', else as dump.yaml). When the import succeeds, the
// scenario and manifests it wrote are loaded from memory as `capsim run` would load them: the
// import promises to refuse what run would refuse (docs/import-kubernetes.md), so a load error
// there is a finding. The three placements and both treatments of running pods are tried in turn,
// one per input (by the input's length), so the corpus covers them all.
//   build/fuzz/tests/fuzz/capsim_k8s_dump_fuzz -max_total_time=600 WORKDIR tests/fuzz/corpus/k8s_dump
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/input_error.hpp"
#include "tests/fuzz/fuzz_common.hpp"
#include "tools/loaders/file_source.hpp"
#include "tools/loaders/k8s_dump.hpp"
#include "tools/loaders/scenario_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = capsim::fuzz::text_of(data, size);
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  const bool json = first != std::string::npos && (text[first] == '{' || text[first] == '[');
  const std::string path = json ? "dump.json" : "dump.yaml";
  capsim::DumpImportOptions options;
  using P = capsim::DumpImportOptions::Placement;
  using R = capsim::DumpImportOptions::Running;
  const P placements[] = {P::kPrefer, P::kFree, P::kBind};
  options.placement = placements[size % 3];
  options.running = (size / 3) % 2 == 0 ? R::kBind : R::kPin;

  capsim::DumpImport out;
  try {
    capsim::MemoryFiles files;
    files.add(path, text);
    out = capsim::import_kubernetes_dump(files, {path}, options);
  } catch (const capsim::InputError& e) {
    capsim::fuzz::note(e);
    if (e.message().empty() || e.where().file.empty()) capsim::fuzz::finding();
    return 0;
  }
  capsim::MemoryFiles written;
  for (const capsim::DumpOutputFile& f : out.files)
    written.add("out/" + f.name, f.text);
  try {
    (void)capsim::load_scenario("out/scenario.yaml", capsim::LoadOptions{}, written);
  } catch (const capsim::InputError& e) {
    capsim::fuzz::note(e);
    capsim::fuzz::finding();  // the import wrote what run refuses
  }
  return 0;
}
