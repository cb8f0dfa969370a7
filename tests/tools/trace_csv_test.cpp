// The capsim trace format: each row becomes a pod with exact times, requests and usage, and every
// bad cell is reported as file:line: column NAME.
#include "tools/loaders/trace_csv.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "sim/world.hpp"

#ifndef CAPSIM_SOURCE_DIR
#define CAPSIM_SOURCE_DIR "."
#endif

namespace capsim {
namespace {
// Every file these tests read comes from disk; the reads it records are not looked at.
RealFiles disk;

constexpr std::int64_t kGi = 1024LL * 1024 * 1024;
const std::string kTraces = std::string(CAPSIM_SOURCE_DIR) + "/tests/data/traces/";

struct Fixture {
  World world;
  WorldBuilder b{world, GpuCatalog::builtin()};
  TraceOptions opt;

  std::size_t load(const std::string& text) {
    return load_capsim_trace_text(text, "trace.csv", b, opt);
  }
  std::string model(GpuModelId id) const { return world.gpu_models.at(id).name; }
};

template <typename F>
std::optional<InputError> input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("a trace file becomes pods with exact times, requests, constraints and usage") {
  Fixture f;
  const std::size_t n = load_capsim_trace(disk, kTraces + "small.csv", f.b, f.opt);
  REQUIRE(n == 3);
  REQUIRE(f.world.pods.size() == 3);

  const PodSpec& train = f.world.pods[0];
  CHECK(train.name == "train-0");
  CHECK(train.arrival == 0);
  CHECK(train.duration == kHour);
  CHECK(train.requests.get(kCpu) == 8000);
  CHECK(train.requests.get(kMemory) == 64 * kGi);
  CHECK(train.requests.get(kNvidiaGpu) == 2);
  CHECK(train.gpu_count == 2);
  REQUIRE(train.gpu_models.size() == 2);
  CHECK(f.model(train.gpu_models[0]) == "A100-80GB");
  CHECK(f.model(train.gpu_models[1]) == "H100-80GB");
  CHECK(train.queue == "team-a");
  CHECK(*train.priority_class == "training");
  CHECK(train.gpu_util == doctest::Approx(0.9));
  CHECK(train.gpu_memory_used == 70 * kGi);
  CHECK_FALSE(train.fails);
  CHECK(train.requeue_on_preemption);
  CHECK(f.world.strings.str(train.labels.get(f.b.sym("capsim.io/job"))) == "train");
  CHECK(train.source == kTraces + "small.csv:3");

  const PodSpec& infer = f.world.pods[1];
  CHECK(infer.arrival == 90 * kSecond);
  CHECK(infer.duration == 90 * kMinute);
  CHECK(infer.requests.get(kCpu) == 500);
  CHECK(infer.requests.get(kNvidiaGpu) == 0);
  CHECK(infer.gpu_milli == 250);
  CHECK(infer.gpu_models.empty());
  CHECK(infer.queue == "default");
  CHECK(infer.node_selector.items().size() == 2);
  CHECK(f.world.strings.str(infer.node_selector.get(f.b.sym("capsim.io/pool"))) == "inference");

  const PodSpec& eval = f.world.pods[2];
  CHECK(eval.name == "eval, with comma");
  CHECK(eval.arrival == 1500 * kMillisecond);
  CHECK(eval.duration == 45 * kSecond);
  CHECK(eval.fails);
  CHECK(eval.queue == "team-b");
  CHECK(eval.source == kTraces + "small.csv:6");  // after a blank line
}

TEST_CASE("trace options scale and shift arrivals, scale durations and set the default queue") {
  struct Case {
    const char* name;
    double time_scale;
    SimDuration offset;
    double duration_scale;
    SimTime want_arrival;
    SimDuration want_duration;
  };
  // The row: submit 100 s, duration 60 s.
  const std::vector<Case> cases = {
      {"identity", 1.0, 0, 1.0, 100 * kSecond, 60 * kSecond},
      {"compressed arrivals: 100 s x 0.5", 0.5, 0, 1.0, 50 * kSecond, 60 * kSecond},
      {"started an hour in: 100 s + 3600 s", 1.0, kHour, 1.0, 3700 * kSecond, 60 * kSecond},
      {"leading idle time dropped: 100 s - 90 s", 1.0, -90 * kSecond, 1.0, 10 * kSecond,
       60 * kSecond},
      {"durations doubled", 1.0, 0, 2.0, 100 * kSecond, 120 * kSecond},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    Fixture f;
    f.opt.time_scale = c.time_scale;
    f.opt.time_offset = c.offset;
    f.opt.duration_scale = c.duration_scale;
    f.opt.default_queue = "batch";
    REQUIRE(f.load("pod,submit,duration\np,100,60\n") == 1);
    CHECK(f.world.pods[0].arrival == c.want_arrival);
    CHECK(f.world.pods[0].duration == c.want_duration);
    CHECK(f.world.pods[0].queue == "batch");
  }
}

TEST_CASE("bad trace rows and headers are reported with file, line and column") {
  const std::string head =
      "pod,submit,duration,cpu,memory,gpu,gpu_milli,gpu_model,status,"
      "gpu_util,node_selector\n";
  struct Case {
    const char* name;
    std::string text;
    int want_line;
    const char* want_field;
    std::vector<const char*> want_parts;
  };
  const std::vector<Case> cases = {
      {"GPU count is a word",
       head + "a,0,60,1,1Gi,1,,,,,\nb,10,60,1,1Gi,two,,,,,\n",
       3,
       "column gpu",
       {"'two' is not a whole number"}},
      {"fractional GPU count",
       head + "a,0,60,1,1Gi,0.5,,,,,\n",
       2,
       "column gpu",
       {"not a whole number", "gpu_milli"}},
      {"negative cpu", head + "a,0,60,-1,1Gi,,,,,,\n", 2, "column cpu", {"is negative"}},
      {"malformed memory",
       head + "a,0,60,1,500x,,,,,,\n",
       2,
       "column memory",
       {"unknown suffix 'x'"}},
      {"bad submit", head + "a,soon,60,,,,,,,,\n", 2, "column submit", {"not a duration"}},
      {"empty duration", head + "a,0,,,,,,,,,\n", 2, "column duration", {"a value is required"}},
      {"GPU share out of range",
       head + "a,0,60,,,,1000,,,,\n",
       2,
       "column gpu_milli",
       {"between 0 and 999"}},
      {"whole GPUs and a share",
       head + "a,0,60,,,1,500,,,,\n",
       2,
       "column gpu_milli",
       {"not both"}},
      {"unknown GPU model",
       head + "a,0,60,,,1,,A100-80GB|A100,,,\n",
       2,
       "column gpu_model",
       {"unknown GPU model 'A100'"}},
      {"unknown status",
       head + "a,0,60,,,,,,complete,,\n",
       2,
       "column status",
       {"unknown status 'complete'", "did you mean 'completed'"}},
      {"GPU util above 1", head + "a,0,60,,,,,,,1.2,\n", 2, "column gpu_util", {"between 0 and 1"}},
      {"node selector without '='",
       head + "a,0,60,,,,,,,,zone\n",
       2,
       "column node_selector",
       {"not key=value"}},
      {"node selector with a bad key",
       head + "a,0,60,,,,,,,,bad key=x\n",
       2,
       "column node_selector",
       {"invalid label key 'bad key'"}},
      {"empty pod name", head + ",0,60,,,,,,,,\n", 2, "column pod", {"needs a pod name"}},
      {"duplicate pod",
       head + "a,0,60,,,,,,,,\na,5,60,,,,,,,,\n",
       3,
       "column pod",
       {"duplicate pod 'default/a'", "trace.csv:2"}},
      {"too many GPUs for any node",
       "pod,submit,duration,gpu\np1,0,60,65\n",
       2,
       "column pod",
       {"65 GPUs in one pod"}},
      {"unknown column",
       "pod,submit,duration,gpus\np,0,60,1\n",
       1,
       "",
       {"unknown column 'gpus'", "did you mean 'gpu'"}},
      {"missing required column",
       "pod,duration\np,60\n",
       1,
       "",
       {"missing required column 'submit'"}},
      {"malformed CSV", "pod,submit,duration\np,0\n", 2, "", {"2 fields", "3 columns"}},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    Fixture f;
    auto e = input_error([&] { (void)f.load(c.text); });
    REQUIRE(e);
    CHECK(e->kind() == InputErrorKind::kInvalid);
    CHECK(e->where().file == "trace.csv");
    CHECK(e->where().line == c.want_line);
    CHECK(e->where().field == c.want_field);
    for (const char* part : c.want_parts) {
      INFO(std::string(part));
      CHECK(contains(e->message(), part));
    }
  }
}

TEST_CASE("the documented example message for a bad cell is exact") {
  Fixture f;
  std::string text = "pod,submit,duration,gpu\n";
  for (int i = 2; i <= 16; ++i)
    text += "p" + std::to_string(i) + ",0,60,1\n";
  text += "p17,0,60,two\n";
  auto e = input_error([&] { (void)f.load(text); });
  REQUIRE(e);
  CHECK(std::string(e->what()) == "trace.csv:17: column gpu: 'two' is not a whole number");
}

TEST_CASE("a row that arrives before the run starts after the offset is an error") {
  Fixture f;
  f.opt.time_offset = -100 * kSecond;
  auto e = input_error([&] { (void)f.load("pod,submit,duration\na,50,60\n"); });
  REQUIRE(e);
  CHECK(e->where().line == 2);
  CHECK(e->where().field == "column submit");
  CHECK(contains(e->message(), "before the start of the run"));
}

TEST_CASE("a missing trace file is a kMissing error") {
  Fixture f;
  auto e = input_error([&] { (void)load_capsim_trace(disk, kTraces + "absent.csv", f.b, f.opt); });
  REQUIRE(e);
  CHECK(e->kind() == InputErrorKind::kMissing);
  CHECK(e->where().file == kTraces + "absent.csv");
}

}  // namespace
}  // namespace capsim
