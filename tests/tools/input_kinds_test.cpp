// The input kind table: sniffing picks the most specific format, every row is complete, and the
// names messages list come from the table in its order.
#include "tools/loaders/input_kinds.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace capsim;

TEST_CASE("capsim validate's sniffing picks the most specific trace format for a file") {
  struct Case {
    const char* name;
    const char* extension;
    const char* text;
    const char* want_format;  // "" for none
  };
  const Case cases[] = {
      {"a pod trace", ".csv", "pod,submit,duration\np,0,1h\n", "capsim"},
      {"a pod trace after comments", ".csv", "# note\n\npod,submit,duration\n", "capsim"},
      {"capsim's job CSV: a job column and no pod column", ".csv", "job,submit,duration\n",
       "capsim-jobs"},
      {"a job column beside a pod column is a pod trace", ".csv", "pod,job,submit,duration\n",
       "capsim"},
      {"a Helios log has job_id", ".csv", "job_id,user,vc,gpu_num\n", "helios"},
      {"job beats job_id when both are there (and no pod)", ".csv", "job,job_id,submit\n",
       "capsim-jobs"},
      {"a CRLF header still sniffs", ".csv", "job_id,user\r\nx,y\r\n", "helios"},
      {"an openb node list", ".csv", "sn,cpu_milli,memory_mib,gpu,model\n", "alibaba-openb"},
      {"an openb pod list", ".csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n",
       "alibaba-openb"},
      {"a failure trace has cause and repair", ".csv", "time,node,gpu,cause,repair\n",
       "capsim-failures"},
      {"any JSON is a Philly log", ".json", "[]", "philly"},
      {"YAML is no trace", ".yaml", "kind: Pod\n", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const TraceFormat* f = loader_registry().sniff_trace(SniffInput{c.extension, c.text});
    CHECK(std::string(f ? f->name : "") == c.want_format);
  }
}

TEST_CASE("every trace format row can be sniffed, loaded and checked; job logs have a reader") {
  const LoaderRegistry& r = loader_registry();
  REQUIRE(!r.traces.empty());
  for (const TraceFormat& f : r.traces) {
    CAPTURE(f.name);
    CHECK(!f.summary.empty());
    CHECK((f.sniff != nullptr));
    CHECK((f.load != nullptr));
    CHECK((f.check != nullptr));
    CHECK((f.import == TraceImporter::kJobLog) == (f.read_jobs != nullptr));
    CHECK(r.trace(f.name) == &f);
  }
  CHECK(r.trace("sacct") == nullptr);
  CHECK(r.trace_names() == "capsim, alibaba-openb, capsim-jobs, helios, philly, capsim-failures");
  CHECK(r.trace_names(true) == "alibaba-openb, capsim-jobs, helios, philly");
  CHECK(r.experiment_names() == "fill");
  REQUIRE(r.experiment("fill") != nullptr);
  CHECK((r.experiment("fill")->apply != nullptr));
}

TEST_CASE("the manifest kinds are one constant table: the core kinds, then Kueue's and DRA's") {
  const ManifestKinds& kinds = loader_registry().manifests;
  REQUIRE(kinds.size() > core_manifest_kinds().size());
  for (std::size_t i = 0; i < core_manifest_kinds().size(); ++i)
    CHECK(kinds[i].kind == core_manifest_kinds()[i].kind);
  const auto has = [&](const std::string& group, const std::string& kind) {
    for (const ManifestKind& k : kinds) {
      if (k.group == group && k.kind == kind) return true;
    }
    return false;
  };
  CHECK(has("kueue.x-k8s.io", "ClusterQueue"));
  CHECK(has("resource.k8s.io", "DeviceClass"));
  // Two calls, one table: it is built once and never changed.
  CHECK(&loader_registry() == &loader_registry());
}
