// Consumable capacity (KEP-5075, DRAConsumableCapacity) end to end, through the real binary: a
// NIC published with allowMultipleAllocations and 10G of bandwidth is shared by the claims of a
// Job's pods, each consuming its request rounded up by the capacity's requestPolicy, until the
// bandwidth is used up; the next pod waits for one to end and says why.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"

namespace capsim {

namespace {

constexpr const char* kScenario = R"(name: dra-consumable
simulation: {horizon: 24h, paranoid: true}
cluster:
  nodes:
    - {name: n1, cpu: 64, memory: 512Gi}
manifests: [m.yaml]
durations:
  - {match: {kind: Job}, duration: 1h}
)";

// The NIC: 10G of bandwidth, whole gigabits (validRange min 1G, step 1G, default 1G). Each pod's
// claim asks for 2500M, which the policy rounds up to 1G + ceil(1.5G / 1G) * 1G = 3G: three
// claims take 9G, a fourth would need 12G > 10G.
constexpr const char* kManifests = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic}
spec:
  selectors:
  - cel: {expression: device.driver == 'net.example.com'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-net}
spec:
  driver: net.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: nic-0
    allowMultipleAllocations: true
    capacity:
      bandwidth:
        value: 10G
        requestPolicy: {default: 1G, validRange: {min: 1G, step: 1G}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: bw}
spec:
  spec:
    devices:
      requests:
      - name: net
        exactly:
          deviceClassName: nic
          capacity: {requests: {bandwidth: 2500M}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: stream}
spec:
  parallelism: 4
  completions: 4
  template:
    spec:
      restartPolicy: Never
      resourceClaims: [{name: net, resourceClaimTemplateName: bw}]
      containers:
      - name: c
        image: streamer
        resources:
          requests: {cpu: 1}
          claims: [{name: net}]
)";

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("pods share a consumable-capacity NIC until its bandwidth is used up") {
    testing::ScratchDir dir("dra-consumable");
    testing::write_file(dir.file("scenario.yaml"), kScenario);
    testing::write_file(dir.file("m.yaml"), kManifests);
    const auto r = testing::run_capsim(
        "run '" + dir.file("scenario.yaml") + "' -o '" + dir.file("out.db") + "'", dir);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    RunReader reader(dir.file("out.db"));
    auto st = reader.db().prepare(
        "SELECT pod, status, coalesce(start_s, -1), coalesce(end_s, -1) FROM pod "
        "WHERE run_id = 1 ORDER BY start_s, pod");
    std::vector<std::pair<double, double>> runs;
    std::string last;
    while (st.step()) {
      CHECK(st.column_text(1) == "completed");
      runs.emplace_back(st.column_double(2), st.column_double(3));
      last = st.column_text(0);
    }
    REQUIRE(runs.size() == 4);
    // 3 x 3G = 9G of 10G at once; the fourth starts when the first ends, at 1h.
    CHECK(runs[0].first == 0.0);
    CHECK(runs[1].first == 0.0);
    CHECK(runs[2].first == 0.0);
    CHECK(runs[3].first == 3600.0);
    // Every claim got the one NIC.
    auto cl = reader.db().prepare(
        "SELECT count(*), count(DISTINCT pod) FROM pod_claim WHERE run_id = 1 AND device = "
        "'nic-0'");
    REQUIRE(cl.step());
    CHECK(cl.column_int64(0) == 4);
    CHECK(cl.column_int64(1) == 4);
    // The fourth waited for bandwidth, not for the device.
    auto ev = reader.db().prepare(
        "SELECT detail FROM event WHERE run_id = 1 AND kind = 'pending' AND pod = ?1");
    ev.bind_text(1, last);
    REQUIRE(ev.step());
    CHECK(ev.column_text(0).find("0/1 nodes are available: 1 cannot allocate all claims (claim "
                                 "net, request net: too little capacity is left on the matching "
                                 "devices)") == 0);
  }
}

}  // namespace capsim
