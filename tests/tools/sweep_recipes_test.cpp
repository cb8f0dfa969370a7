// The cluster recipes for sharded sweeps (docs/planning.md). docs/sweep-slurm.sh runs for real on
// a one-node Slurm in tools/test-slurm.sh; here it is only parsed by bash. The Kubernetes Indexed
// Job (docs/sweep-k8s-job.yaml) never runs in the test suite: it is parsed as YAML and its parts
// checked against each other and against the sweep it names (no API server validates it).
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tools/loaders/sweep_spec.hpp"

using namespace capsim;

namespace {

const std::string kDocs = std::string(CAPSIM_SOURCE_DIR) + "/docs/";

// The value after `flag` in a container's args, or "" when absent.
std::string arg_after(const YAML::Node& args, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i].as<std::string>() == flag) return args[i + 1].as<std::string>();
  return "";
}

}  // namespace

TEST_CASE("the Slurm sweep recipe is a script bash can parse") {
  const std::string cmd = "bash -n '" + kDocs + "sweep-slurm.sh'";
  CHECK(std::system(cmd.c_str()) == 0);
}

TEST_CASE("the Kubernetes sweep recipe's Indexed Job, shard count and merge agree") {
  const std::vector<YAML::Node> docs = YAML::LoadAllFromFile(kDocs + "sweep-k8s-job.yaml");
  REQUIRE(docs.size() == 3);
  CHECK(docs[0]["kind"].as<std::string>() == "PersistentVolumeClaim");
  const YAML::Node& sweep = docs[1];
  const YAML::Node& merge = docs[2];
  CHECK(sweep["kind"].as<std::string>() == "Job");
  CHECK(merge["kind"].as<std::string>() == "Job");
  CHECK(sweep["apiVersion"].as<std::string>() == "batch/v1");

  // One pod per shard: completions equals --shard-count, since Kubernetes does not tell the pod
  // the Job's completions (docs/planning.md).
  CHECK(sweep["spec"]["completionMode"].as<std::string>() == "Indexed");
  const int completions = sweep["spec"]["completions"].as<int>();
  const YAML::Node container = sweep["spec"]["template"]["spec"]["containers"][0];
  const YAML::Node args = container["args"];
  REQUIRE(args.size() >= 3);
  CHECK(args[0].as<std::string>() == "capsim");
  CHECK(args[1].as<std::string>() == "sweep");
  CHECK(arg_after(args, "--shard-count") == std::to_string(completions));

  // The sweep file it runs is scenarios/planning/sweep.yaml (the ConfigMap is made from that
  // directory); its shards are named <sweep name>.shard-I-of-N.db, which the merge waits for.
  CHECK(args[2].as<std::string>() == "/config/sweep.yaml");
  const SweepSpec spec =
      load_sweep(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/planning/sweep.yaml", std::nullopt);
  const std::string script =
      merge["spec"]["template"]["spec"]["containers"][0]["args"][0].as<std::string>();
  const std::string shards =
      spec.name + ".shard-*-of-" + std::to_string(completions) + ".db";  // planning-sweep...-of-4
  CHECK(script.find("ls " + shards) != std::string::npos);
  CHECK(script.find("-lt " + std::to_string(completions) + " ]") != std::string::npos);
  CHECK(script.find("capsim merge " + spec.name + ".db " + shards) != std::string::npos);
  // Both Jobs mount the claim as their working directory.
  const std::string claim = docs[0]["metadata"]["name"].as<std::string>();
  for (const YAML::Node& job : {sweep, merge}) {
    const YAML::Node pod = job["spec"]["template"]["spec"];
    CHECK(pod["containers"][0]["workingDir"].as<std::string>() == "/results");
    bool mounted = false;
    for (const YAML::Node& v : pod["volumes"])
      if (v["name"].as<std::string>() == "results")
        mounted = v["persistentVolumeClaim"]["claimName"].as<std::string>() == claim;
    CHECK(mounted);
  }
}
