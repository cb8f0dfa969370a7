// Reading the Alibaba openb node and pod lists: the mapping onto nodes and pods, and errors that
// name file, line and column.
#include "tools/loaders/alibaba_openb.hpp"

#include <doctest/doctest.h>

#include "models/gpu_catalog.hpp"

using namespace capsim;

namespace {
// Every file these tests read comes from disk; the reads it records are not looked at.
RealFiles disk;

const std::string kSlice = std::string(CAPSIM_SOURCE_DIR) + "/tests/data/openb-slice/";
const std::string kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

struct Fixture {
  World world;
  WorldBuilder b{world, GpuCatalog::builtin()};
  std::string error_of_pods(const std::string& text) {
    try {
      (void)read_openb_pods(CsvFile::parse(text, "pods.csv"), &b);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  std::string error_of_nodes(const std::string& text) {
    try {
      (void)read_openb_nodes(CsvFile::parse(text, "nodes.csv"), &b);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  const PodSpec& pod(const std::string& name) const {
    for (const PodSpec& p : world.pods) {
      if (p.name == name) return p;
    }
    throw std::runtime_error("no pod " + name);
  }
};

}  // namespace

TEST_CASE("an openb node list becomes nodes with their GPU model, CPU, memory and pod slots") {
  Fixture f;
  OpenbNodeOptions opt;
  opt.pods = 1001;
  REQUIRE(load_openb_nodes(disk, kSlice + "nodes.csv", f.b, opt) == 26);
  const NodeSpec& g2 = f.world.nodes[0];
  CHECK(g2.name == "openb-node-0000");
  CHECK(g2.gpu_count == 8);
  CHECK(f.world.gpu_models[g2.gpu_model].name == "G2");
  CHECK(g2.allocatable[kCpu] == 96000);
  CHECK(g2.allocatable[kMemory] == 393216LL * 1024 * 1024);
  CHECK(g2.allocatable[kPods] == 1001);
  CHECK(g2.allocatable[kNvidiaGpu] == 8);
  CHECK(g2.pool == "G2");
  const NodeSpec& cpu = f.world.nodes.back();
  CHECK(cpu.gpu_count == 0);
  CHECK(cpu.gpu_model == kNoGpuModel);
  CHECK(cpu.pool == "cpu");
}

TEST_CASE("openb pods keep their requests, GPU share or whole GPUs, models, queue and times") {
  Fixture f;
  const std::string text = kPodHeader +
                           "p-share,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
                           "p-whole,12000,16384,2,1000,V100M16|V100M32|V100M32,BE,Failed,500,900,"
                           "520\n"
                           "p-cpu,8000,30720,0,0,,Burstable,Pending,300,700,\n";
  const auto rows = read_openb_pods(CsvFile::parse(text, "pods.csv"), &f.b);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].is_share());
  CHECK(rows[1].total_gpu_milli() == 2000);
  // A repeated model is kept as listed: the peer keys typical pods on the text.
  CHECK(rows[1].gpu_spec == std::vector<std::string>{"V100M16", "V100M32", "V100M32"});
  CHECK_FALSE(rows[2].scheduled.has_value());
}

TEST_CASE("loading an openb pod list maps every column as docs/trace-format.md says") {
  Fixture f;
  REQUIRE(load_openb_pods(disk, kSlice + "pods.csv", f.b, {}) == 153);
  f.b.finalize();
  const PodSpec& share = f.pod("openb-pod-0000");  // 12000,49152,1,810,T4,LS,Running,34873,37530
  CHECK(share.gpu_milli == 810);
  CHECK(share.gpu_count == 0);
  CHECK(share.requests.get(kNvidiaGpu) == 0);
  CHECK(share.requests.get(kCpu) == 12000);
  CHECK(share.requests.get(kMemory) == 49152LL * 1024 * 1024);
  REQUIRE(share.gpu_models.size() == 1);
  CHECK(f.world.gpu_models[share.gpu_models[0]].name == "T4");
  CHECK(share.queue == "LS");
  // duration = deletion - scheduled = 37530 - 34875
  CHECK(share.duration == 2655 * kSecond);
  SimTime first = kEndOfTime;
  for (const PodSpec& p : f.world.pods)
    first = std::min(first, p.arrival);
  CHECK(first == 0);  // creation times are shifted so the first pod arrives at 0
  int whole = 0, failed = 0;
  for (const PodSpec& p : f.world.pods) {
    if (p.gpu_count > 0) {
      ++whole;
      CHECK(p.gpu_milli == 0);
      CHECK(p.requests.get(kNvidiaGpu) == p.gpu_count);
    }
    failed += p.fails ? 1 : 0;
  }
  CHECK(whole > 40);
  CHECK(failed > 10);
}

TEST_CASE("the five-column openb pod lists arrive at 0 and never finish") {
  Fixture f;
  REQUIRE(load_openb_pods(disk, kSlice + "pods5.csv", f.b, {}) == 153);
  for (const PodSpec& p : f.world.pods) {
    CHECK(p.arrival == 0);
    CHECK(p.duration == kEndOfTime);
    CHECK(p.gpu_models.empty());
    CHECK(p.queue == "default");
  }
}

TEST_CASE("broken openb rows are errors naming the file, line and column") {
  struct Case {
    const char* name;
    std::string text;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"not a number",
       kPodHeader + "a,1000,10,1,500,,LS,Running,1,2,1\nb,x,10,0,0,,LS,Running,1,2,1\n",
       "pods.csv:3: column cpu_milli: 'x' is not a whole number"},
      {"share without a GPU", kPodHeader + "a,1000,10,0,500,,LS,Running,1,2,1\n",
       "pods.csv:2: column gpu_milli: 500 milli of a GPU but num_gpu is 0"},
      {"a share spanning GPUs", kPodHeader + "a,1000,10,2,500,,LS,Running,1,2,1\n",
       "pods.csv:2: column gpu_milli: 2 GPUs of 500 milli each: a share of a GPU cannot span GPUs"},
      {"GPU milli above 1000", kPodHeader + "a,1000,10,1,1500,,LS,Running,1,2,1\n",
       "pods.csv:2: column gpu_milli: 1500 is out of range: it must be between 0 and 1000"},
      {"unknown model", kPodHeader + "a,1000,10,1,500,V100,LS,Running,1,2,1\n",
       "pods.csv:2: column gpu_spec: unknown GPU model 'V100'"},
      {"empty model in a list", kPodHeader + "a,1000,10,1,500,T4||G2,LS,Running,1,2,1\n",
       "pods.csv:2: column gpu_spec: an empty model name in a '|'-separated list"},
      {"unknown phase", kPodHeader + "a,1000,10,1,500,,LS,Runing,1,2,1\n",
       "pods.csv:2: column pod_phase: unknown pod phase 'Runing' (did you mean 'Running'"},
      {"deleted before created", kPodHeader + "a,1000,10,1,500,,LS,Running,10,2,1\n",
       "pods.csv:2: column deletion_time: deleted at 2 s, before it was created (10 s)"},
      {"unknown column", "name,cpu_milli,memory_mib,num_gpus,gpu_milli\na,1,1,0,0\n",
       "pods.csv:1: unknown column 'num_gpus' in an openb pod list (did you mean 'num_gpu'"},
      {"missing column", "name,cpu_milli,memory_mib,gpu_milli\na,1,1,0\n",
       "pods.csv:1: missing column 'num_gpu'"},
      {"short row", kPodHeader + "a,1000,10,1,500,,LS\n",
       "pods.csv:2: the row has 7 fields but the header has 11 columns"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    Fixture f;
    const std::string got = f.error_of_pods(c.text);
    CAPTURE(got);
    CHECK(got.find(c.want) != std::string::npos);
  }
  Fixture f;
  CHECK(f.error_of_nodes("sn,cpu_milli,memory_mib,gpu,model\nn0,1000,10,2,\n")
            .find("nodes.csv:2: column model: the node has 2 GPUs but no GPU model") !=
        std::string::npos);
  CHECK(f.error_of_nodes("sn,cpu_milli,memory_mib,gpu,model\nn0,1000,10,65,T4\n")
            .find("nodes.csv:2: column gpu: 65 is out of range") != std::string::npos);
  CHECK(f.error_of_nodes("sn,cpu_milli,memory_mib,gpu,model\nn0,1000,10,2,T5\n")
            .find("nodes.csv:2: column model: unknown GPU model 'T5'") != std::string::npos);
}
