// WorldBuilder's rules that every source shares, checked on the builder itself.
#include "tools/loaders/world_builder.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "models/gpu_catalog.hpp"
#include "sim/world.hpp"

namespace capsim {

TEST_CASE("pod names are unique per namespace, however many pods there are") {
  World w;
  WorldBuilder b(w, GpuCatalog::builtin());
  InputLocation where;
  where.file = "pods.yaml";
  // Enough pods to grow the name table several times; the same names in a second namespace are
  // other pods. Each pod has its own line, so a refusal's "first defined at" tells which pod the
  // table matched: team-a's pod-i is on line 5001 + i.
  int line = 0;
  for (const char* ns : {"default", "team-a"}) {
    for (int i = 0; i < 5000; ++i) {
      PodSpec p;
      p.namespace_ = ns;
      p.name = fmt::format("pod-{}", i);
      where.line = ++line;
      b.add_pod(std::move(p), where);
    }
  }
  CHECK(w.pods.size() == 10000);
  for (int i : {0, 2047, 4999}) {
    PodSpec again;
    again.namespace_ = "team-a";
    again.name = fmt::format("pod-{}", i);
    where.line = 20000;
    try {
      b.add_pod(std::move(again), where);
      FAIL("a repeated pod name was accepted");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(fmt::format("duplicate pod 'team-a/pod-{}' (first defined "
                                                   "at pods.yaml:{})",
                                                   i, 5001 + i)) != std::string::npos);
    }
  }
  CHECK(w.pods.size() == 10000);
}

}  // namespace capsim
