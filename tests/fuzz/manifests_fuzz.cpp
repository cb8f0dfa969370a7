// libFuzzer target for the Kubernetes manifest loader with every kind capsim reads: the core kinds
// (Node, Pod, Job, PriorityClass, Namespace and the workload controllers), Kueue's and DRA's. The
// input is a manifest file (one or more `---` documents, Lists), read one document at a time as a
// scenario's `manifests:` entry reads it (load_manifest_file through MemoryFiles), then finalized
// as `capsim validate` does: cross-references resolved (priority classes, Kueue objects, DRA
// claims, classes and slices). A CronJob is expanded over one day, as validate does. Leading lines
// "#durations" (a YAML comment) add a `durations:` rule that times every workload, so inputs
// without capsim.io/duration annotations get past the duration check.
//   build/fuzz/tests/fuzz/capsim_manifests_fuzz -max_total_time=600 WORKDIR tests/fuzz/corpus/manifests
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/gpu_catalog.hpp"
#include "models/yaml_reader.hpp"
#include "sim/world.hpp"
#include "tests/fuzz/fuzz_common.hpp"
#include "tools/loaders/dra_manifests.hpp"
#include "tools/loaders/duration_rules.hpp"
#include "tools/loaders/file_source.hpp"
#include "tools/loaders/input_kinds.hpp"
#include "tools/loaders/k8s_manifests.hpp"
#include "tools/loaders/world_builder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = capsim::fuzz::text_of(data, size);
  static const capsim::DurationRules kAnyDuration = capsim::DurationRules::parse(
      capsim::YamlNode::load_string("- {duration: {uniform: [10m, 2h]}}", "<rules>"), 1);
  capsim::fuzz::expect_input_errors([&] {
    capsim::MemoryFiles files;
    files.add("manifests.yaml", text);
    capsim::World w;
    capsim::WorldBuilder b(w, capsim::GpuCatalog::builtin());
    std::vector<std::string> warnings;
    capsim::ManifestOptions mo;
    mo.kinds = &capsim::loader_registry().manifests;
    mo.warnings = &warnings;
    mo.horizon = capsim::kDay;
    if (text.rfind("#durations", 0) == 0) mo.durations = &kAnyDuration;
    capsim::load_manifest_file(files, "manifests.yaml", b, mo);
    b.finalize();
    capsim::finalize_dra(b, &warnings);
  });
  return 0;
}
