// The CostLedger splits each GPU's price and energy among the pods holding it, exactly, and keeps
// idle and stranded cost apart. Each case carries its worked arithmetic. The builders' GPU model
// costs $2 per GPU-hour, idles at 100 W and peaks at 700 W.
#include "sim/cost_ledger.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fixtures/builders.hpp"
#include "sim/check.hpp"
#include "tests/fixtures/bind.hpp"

using namespace capsim;
using capsim::testing::bind_share;
using capsim::testing::bind_units;
using capsim::testing::TestWorld;

namespace {

// Drives a Cluster and its ledger by hand: bind/unbind at given times, as the Simulation does.
struct Books {
  TestWorld tw;
  std::unique_ptr<Cluster> cluster;
  std::unique_ptr<CostLedger> ledger;

  void open(EnergyPricing energy = {}, const DeviceCharge& charge = DeviceCharge::standard(),
            Recorder* recorder = nullptr) {
    cluster = std::make_unique<Cluster>(tw.world());
    ledger = std::make_unique<CostLedger>(*cluster, energy, charge, recorder);
  }
  // Whole-GPU pods take the units of GPUs `gpus` (on a node without sharing, unit i is GPU i);
  // a GPU-share pod passes no units and the GPU it takes its share of as `share_gpu`.
  void bind(SimTime t, PodId p, NodeId n, std::vector<std::uint16_t> gpus,
            std::int32_t share_gpu = -1) {
    ledger->advance(t);
    if (share_gpu >= 0) {
      bind_share(*cluster, p, n, static_cast<std::uint16_t>(share_gpu));
    } else {
      bind_units(*cluster, p, n, gpus);
    }
    cluster->pod(p).phase = PodPhase::kRunning;
    refresh_busy(n);
  }
  void unbind(SimTime t, PodId p) {
    ledger->advance(t);
    const NodeId n = cluster->pod(p).node;
    cluster->unbind(p);
    refresh_busy(n);
  }
  // What the Simulation does without a device model: a GPU is as busy as its holders' util x
  // share, capped at 1; then the ledger recomputes the node.
  void refresh_busy(NodeId node) {
    const NodeInfo& n = cluster->node(node);
    for (std::uint16_t g = 0; g < n.gpus.size(); ++g) {
      double busy = 0;
      for (PodId p : n.pods) {
        const PodSpec& sp = cluster->spec(p);
        for (std::uint16_t h : cluster->pod(p).gpus) {
          if (h == g) busy += sp.gpu_util * (is_share_pod(sp) ? sp.gpu_milli / 1000.0 : 1.0);
        }
      }
      cluster->set_gpu_busy(node, g, busy);
    }
    ledger->node_changed(node);
  }
  std::map<std::string, QueueCost> queues() const {
    std::map<std::string, QueueCost> out;
    for (const QueueCost& q : ledger->queues())
      out[q.queue] = q;
    return out;
  }
};

// Keeps the ledger's charge rows (and nothing else).
class ChargeKeeper final : public Recorder {
 public:
  void begin_run(const RunInfo&, const World&) override {}
  void record_event(const EventRecord&) override {}
  void record_sample(const SampleRecord&) override {}
  void record_charge(const ChargeRecord& c) override {
    rows.push_back(c);
    kinds.push_back(std::string(c.kind));
  }
  void end_run(const RunInfo&, const std::vector<PodRecord>&, const Summary&) override {}
  RecordLevel level() const override { return keeps; }

  // Sum of `field` over the rows of `kind` (and `pod`, unless kNoPod).
  double sum(double ChargeRecord::*field, const std::string& kind, PodId pod = kNoPod) const {
    double s = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (kinds[i] == kind && (pod == kNoPod || rows[i].pod == pod)) s += rows[i].*field;
    }
    return s;
  }
  double cost(const std::string& kind, PodId pod = kNoPod) const {
    return sum(&ChargeRecord::hardware_cost, kind, pod) +
           sum(&ChargeRecord::energy_cost, kind, pod);
  }

  std::vector<ChargeRecord> rows;
  std::vector<std::string> kinds;          // rows[i].kind, owned
  RecordLevel keeps = RecordLevel::kFull;  // what it says it keeps (`--record`)
};

}  // namespace

TEST_CASE("the ledger's charge rows are each pod's exact hardware and energy and add up to it") {
  // One $2/h GPU (100 W idle, 700 W peak) shared 50/50 by a (util 0.6, 0..1 h) and b (util 0.2,
  // 0..2 h), energy at $0.10/kWh x PUE 1.5 = $0.15 per kWh; and a $1/h CPU node (16 cores) where
  // e requests 4 cores for 2 h.
  ChargeKeeper keep;
  Books b;
  const NodeId g = b.tw.node("g").cpu("8").memory("64Gi").gpus(1, "G").add();
  const NodeId c = b.tw.node("c").cpu("16").memory("64Gi").add();
  b.tw.world().nodes[c].price_per_hour = 1.0;
  const PodId a = b.tw.pod("a").cpu("2").memory("4Gi").gpu_milli(500).util(0.6).add();
  const PodId p = b.tw.pod("b").cpu("1").memory("2Gi").gpu_milli(500).util(0.2).add();
  const PodId e = b.tw.pod("e").cpu("4").memory("8Gi").queue("etl").add();
  b.open(EnergyPricing{0.10, 1.5}, DeviceCharge::standard(), &keep);
  b.bind(0, a, g, {}, 0);
  b.bind(0, p, g, {}, 0);
  b.bind(0, e, c, {});
  b.unbind(kHour, a);
  b.unbind(2 * kHour, p);
  b.unbind(2 * kHour, e);
  b.ledger->advance(3 * kHour);
  b.ledger->finish();
  const CostTotals& t = b.ledger->totals();
  // Hardware: a 0.5 x $2 x 1 h = 1; b 0.5 x $2 x 2 h = 2; e 4/16 x $1 x 2 h = 0.5.
  CHECK(keep.sum(&ChargeRecord::hardware_cost, "pod", a) == doctest::Approx(1.0));
  CHECK(keep.sum(&ChargeRecord::hardware_cost, "pod", p) == doctest::Approx(2.0));
  CHECK(keep.sum(&ChargeRecord::hardware_cost, "pod", e) == doctest::Approx(0.5));
  CHECK(keep.sum(&ChargeRecord::energy_cost, "pod", e) == 0);
  // Hour 1: busy 0.5 x 0.6 + 0.5 x 0.2 = 0.4, power 100 + 600 x 0.4 = 340 W. Idle power by share
  // (50 W each), busy power by demand (a 0.3/0.4 x 240 = 180 W, b 60 W): a 230 W, b 110 W.
  // Hour 2: b alone, busy 0.1: 50 W of idle power + 60 W busy = 110 W; the other 50 W idle.
  CHECK(keep.sum(&ChargeRecord::gpu_kwh, "pod", a) == doctest::Approx(0.230));
  CHECK(keep.sum(&ChargeRecord::gpu_kwh, "pod", p) == doctest::Approx(0.220));
  CHECK(keep.sum(&ChargeRecord::energy_cost, "pod", a) == doctest::Approx(0.230 * 0.15));
  CHECK(keep.sum(&ChargeRecord::energy_cost, "pod", p) == doctest::Approx(0.220 * 0.15));
  // GPU-hours and requests held: a 0.5 GPU x 1 h, 2 cores.
  for (const ChargeRecord& r : keep.rows) {
    if (r.pod != a) continue;
    CHECK(r.gpus == doctest::Approx(0.5));
    CHECK(r.cpu_cores == doctest::Approx(2.0));
    CHECK(r.ram_bytes == doctest::Approx(4.0 * 1024 * 1024 * 1024));
  }
  // Rows add up to the ledger: pods to allocated, stranded to stranded, all to the total.
  const double pods = keep.cost("pod"), idle = keep.cost("idle"), stranded = keep.cost("stranded");
  CHECK(pods == doctest::Approx(t.allocated).epsilon(1e-12));
  CHECK(stranded == doctest::Approx(t.stranded).epsilon(1e-12));
  CHECK(pods + idle + stranded == doctest::Approx(t.total()).epsilon(1e-12));
  CHECK(keep.sum(&ChargeRecord::gpu_kwh, "pod") + keep.sum(&ChargeRecord::gpu_kwh, "idle") ==
        doctest::Approx(t.gpu_kwh).epsilon(1e-12));
  // A stretch closes when its rate changes: g's idle rate at 1 h (a left: half the GPU and 2
  // cores more are idle) and at 2 h (b left). b's rows cover its 2 hours without gaps or overlap
  // (its rate barely changes when a leaves: its busy power is 600 W x its own demand).
  std::vector<std::pair<SimTime, SimTime>> idle_spans, b_spans;
  for (std::size_t i = 0; i < keep.rows.size(); ++i) {
    const ChargeRecord& r = keep.rows[i];
    if (r.node == g && keep.kinds[i] == "idle") idle_spans.emplace_back(r.start, r.end);
    if (r.pod == p) b_spans.emplace_back(r.start, r.end);
  }
  std::sort(idle_spans.begin(), idle_spans.end());
  CHECK(idle_spans == std::vector<std::pair<SimTime, SimTime>>{
                          {0, kHour}, {kHour, 2 * kHour}, {2 * kHour, 3 * kHour}});
  std::sort(b_spans.begin(), b_spans.end());
  REQUIRE_FALSE(b_spans.empty());
  CHECK(b_spans.front().first == 0);
  CHECK(b_spans.back().second == 2 * kHour);
  for (std::size_t i = 1; i < b_spans.size(); ++i)
    CHECK(b_spans[i].first == b_spans[i - 1].second);
  // finish() closed everything: a second call adds nothing.
  const std::size_t n = keep.rows.size();
  b.ledger->finish();
  CHECK(keep.rows.size() == n);
}

TEST_CASE("a GPU's price is charged to its holders by their share and the rest is idle") {
  Books b;
  const NodeId n = b.tw.node("n1").cpu("64").memory("512Gi").gpus(8, "G").add();  // $16/h
  const PodId a = b.tw.pod("a").cpu("1").memory("1Gi").gpus(2).queue("alpha").add();
  const PodId s = b.tw.pod("s").cpu("1").memory("1Gi").gpu_milli(500).queue("beta").add();
  b.open();
  b.bind(0, a, n, {0, 1});
  b.bind(0, s, n, {}, 2);
  b.unbind(kHour, a);
  b.unbind(2 * kHour, s);
  b.ledger->advance(2 * kHour);
  const CostTotals& t = b.ledger->totals();
  // total = 8 GPUs x $2 x 2 h = 32
  CHECK(t.total() == doctest::Approx(32));
  CHECK(t.hardware == doctest::Approx(32));
  CHECK(t.energy == 0);
  // alpha: 2 GPUs x $2 x 1 h = 4; beta: 0.5 GPU x $2 x 2 h = 2
  auto q = b.queues();
  CHECK(q["alpha"].cost == doctest::Approx(4));
  CHECK(q["beta"].cost == doctest::Approx(2));
  CHECK(q["alpha"].gpu_seconds / 3600 == doctest::Approx(2));
  CHECK(q["beta"].gpu_seconds / 3600 == doctest::Approx(1));
  CHECK(t.allocated == doctest::Approx(6));
  CHECK(t.idle() == doctest::Approx(26));
  CHECK(t.stranded == 0);
  CHECK(t.unqueued == 0);
  // GPU energy: 8 x 100 W idle x 2 h, plus (700 - 100) W x busy (util 1.0 by default):
  // a: 2 GPUs x 600 W x 1 h = 1.2 kWh; s: 0.5 x 600 W x 2 h = 0.6 kWh; total 1.6 + 1.8 = 3.4
  CHECK(t.gpu_kwh == doctest::Approx(3.4));
}

TEST_CASE("energy is charged at price x PUE: idle power by share, busy power by demand") {
  Books b;
  const NodeId n = b.tw.node("n1").cpu("8").memory("64Gi").gpus(1, "G").add();  // $2/h
  const PodId a = b.tw.pod("a").cpu("1").memory("1Gi").gpus(1).util(0.6).queue("alpha").add();
  b.open(EnergyPricing{0.10, 1.5});
  b.bind(0, a, n, {0});
  b.unbind(kHour, a);
  b.ledger->advance(2 * kHour);
  const CostTotals& t = b.ledger->totals();
  // Hour 1: 100 + 600 x 0.6 = 460 W -> 0.46 kW x 1.5 x $0.10 = $0.069, all alpha's.
  // Hour 2: 100 W idle -> $0.015, idle.
  CHECK(t.gpu_kwh == doctest::Approx(0.56));
  CHECK(t.energy == doctest::Approx(0.084));
  CHECK(b.queues()["alpha"].cost == doctest::Approx(2.069));
  CHECK(t.idle() == doctest::Approx(2.015));
  CHECK(t.total() == doctest::Approx(4.084));
}

TEST_CASE("a down node is billed its price but charged no GPU idle energy while down") {
  // Two 1-GPU nodes at $2/h, 100 W idle, energy $0.10/kWh at PUE 1.5. n2 is down (failed or in
  // maintenance) from 1 h to 3 h of a 4 h run; n1 stays up. Nothing runs.
  //   GPU energy: n1 4 h x 0.1 kW = 0.4 kWh; n2 (4 - 2) h x 0.1 kW = 0.2 kWh: 0.6 kWh
  //   energy cost: 0.6 kWh x 1.5 x $0.10 = $0.09 (the 2 h down would have added $0.03)
  //   hardware: 2 nodes x 4 h x $2 = $16, down or not.
  Books b;
  const NodeId n1 = b.tw.node("n1").cpu("8").memory("64Gi").gpus(1, "G").add();
  const NodeId n2 = b.tw.node("n2").cpu("8").memory("64Gi").gpus(1, "G").add();
  b.open(EnergyPricing{0.10, 1.5});
  (void)n1;
  CHECK(b.cluster->totals().power_w == doctest::Approx(200));
  b.ledger->advance(kHour);
  b.cluster->set_node_down(n2, true);
  b.ledger->node_changed(n2);
  CHECK(b.cluster->totals().power_w == doctest::Approx(100));  // the samples' power too
  b.ledger->check_rates();
  b.ledger->advance(3 * kHour);
  b.cluster->set_node_down(n2, false);
  b.ledger->node_changed(n2);
  CHECK(b.cluster->totals().power_w == doctest::Approx(200));
  b.ledger->advance(4 * kHour);
  b.ledger->check_rates();
  const CostTotals& t = b.ledger->totals();
  CHECK(t.gpu_kwh == doctest::Approx(0.6));
  CHECK(t.energy == doctest::Approx(0.09));
  CHECK(t.hardware == doctest::Approx(16.0));
  CHECK(t.idle() == doctest::Approx(16.09));
}

TEST_CASE("co-located pods split a GPU's busy power by their demand") {
  Books b;
  const NodeId n = b.tw.node("n1").cpu("8").memory("64Gi").gpus(1, "G").add();
  const PodId x = b.tw.pod("x").cpu("1").memory("1Gi").gpu_milli(500).util(0.8).queue("x").add();
  const PodId y = b.tw.pod("y").cpu("1").memory("1Gi").gpu_milli(500).util(0.6).queue("y").add();
  b.open(EnergyPricing{1.0, 1.0});
  b.bind(0, x, n, {}, 0);
  b.bind(0, y, n, {}, 0);
  b.ledger->advance(kHour);
  // demand 0.5 x 0.8 + 0.5 x 0.6 = 0.7; power 100 + 600 x 0.7 = 520 W = $0.52/h at $1/kWh.
  // x: 0.5 x ($2 + $0.10 idle) + $0.42 x 0.4/0.7 = 1.05 + 0.24 = 1.29
  // y: 1.05 + $0.42 x 0.3/0.7 = 1.05 + 0.18 = 1.23
  auto q = b.queues();
  CHECK(q["x"].cost == doctest::Approx(1.29));
  CHECK(q["y"].cost == doctest::Approx(1.23));
  CHECK(b.ledger->totals().idle() == doctest::Approx(0).epsilon(1e-9));
  CHECK(b.ledger->cost_per_hour() == doctest::Approx(2.52));
}

namespace {
// A MIG-like charge: pod "p" is a 4g instance (max(4/8, 4/7) = 4/7), anything else a 3g.40gb
// (max(4/8, 3/7) = 1/2); a GPU nobody holds has a quarter stranded.
class MigLikeCharge final : public DeviceCharge {
 public:
  double charged_fraction(const PodSpec& pod, const NodeInfo&, const Holding&,
                          const GpuModelInfo*) const override {
    return pod.name == "p" ? 4.0 / 7.0 : 0.5;
  }
  double stranded_fraction(const NodeInfo& node, std::uint16_t gpu,
                           const GpuModelInfo*) const override {
    return node.gpus[gpu].holders == 0 ? 0.25 : 0.0;
  }
};
}  // namespace

TEST_CASE("charges above a whole GPU are scaled down and stranded capacity is its own bucket") {
  Books b;
  const NodeId n = b.tw.node("n1").cpu("8").memory("64Gi").gpus(2, "G").add();  // $4/h
  const PodId p = b.tw.pod("p").cpu("1").memory("1Gi").gpu_milli(500).queue("p").add();
  const PodId q = b.tw.pod("q").cpu("1").memory("1Gi").gpu_milli(500).queue("q").add();
  MigLikeCharge charge;
  b.open({}, charge);
  b.bind(0, p, n, {}, 0);
  b.bind(0, q, n, {}, 0);
  b.ledger->advance(kHour);
  // GPU 0: 4/7 + 1/2 = 15/14 > 1, scaled by 14/15: p pays 8/15 x $2, q 7/15 x $2.
  auto costs = b.queues();
  CHECK(costs["p"].cost == doctest::Approx(16.0 / 15.0));
  CHECK(costs["q"].cost == doctest::Approx(14.0 / 15.0));
  // GPU 1 is empty: a quarter stranded ($0.50), the rest idle ($1.50).
  CHECK(b.ledger->totals().stranded == doctest::Approx(0.5));
  CHECK(b.ledger->totals().idle() == doctest::Approx(1.5));
}

TEST_CASE("a node without GPUs is charged by requested CPU over allocatable CPU") {
  Books b;
  b.tw.node("cpu").cpu("16").memory("64Gi").add();
  b.tw.world().nodes[0].price_per_hour = 1.0;
  const PodId e = b.tw.pod("e").cpu("4").memory("1Gi").queue("etl").add();
  const PodId u = b.tw.pod("u").cpu("2").memory("1Gi").add();  // no queue
  b.open();
  b.bind(0, e, 0, {});
  b.bind(0, u, 0, {});
  b.ledger->advance(2 * kHour);
  // etl: 4/16 x $1 x 2 h = 0.50; the unqueued pod 2/16 x $1 x 2 h = 0.25; idle 1.25
  CHECK(b.queues()["etl"].cost == doctest::Approx(0.5));
  CHECK(b.ledger->totals().unqueued == doctest::Approx(0.25));
  CHECK(b.ledger->totals().allocated == doctest::Approx(0.75));
  CHECK(b.ledger->totals().idle() == doctest::Approx(1.25));
}

TEST_CASE("pool samples add up per pool and rates survive a recount") {
  Books b;
  const NodeId a0 = b.tw.node("a0").cpu("8").memory("64Gi").gpus(4, "G").pool("a").add();
  b.tw.node("a1").cpu("8").memory("64Gi").gpus(4, "G").pool("a").add();
  const NodeId c0 = b.tw.node("c0").cpu("8").memory("64Gi").gpus(2, "G").pool("c").add();
  const PodId x = b.tw.pod("x").cpu("1").memory("1Gi").gpus(3).util(0.5).queue("q").add();
  const PodId y = b.tw.pod("y").cpu("1").memory("1Gi").gpus(1).queue("q").add();
  b.open();
  b.bind(0, x, a0, {0, 1, 2});
  b.bind(0, y, c0, {1});
  b.ledger->check_rates();
  const std::vector<double> frag = {500, 0, 250};  // milli-GPUs per node
  auto samples = b.ledger->pool_samples(kMinute, frag);
  REQUIRE(samples.size() == 2);
  CHECK(samples[0].pool == "a");
  CHECK(samples[0].gpus_total == 8);
  CHECK(samples[0].gpus_allocated == doctest::Approx(3));
  CHECK(samples[0].gpus_busy == doctest::Approx(1.5));
  // 8 x 100 W idle + 600 W x 1.5 busy
  CHECK(samples[0].power_w == doctest::Approx(1700));
  CHECK(samples[0].fragmented_gpus == doctest::Approx(0.5));
  CHECK(samples[0].pods_running == 1);
  CHECK(samples[0].cost_per_hour == doctest::Approx(16));
  CHECK(samples[1].pool == "c");
  CHECK(samples[1].gpus_allocated == doctest::Approx(1));
  CHECK(samples[1].fragmented_gpus == doctest::Approx(0.25));
  b.unbind(kHour, x);
  b.ledger->check_rates();
  CHECK(b.ledger->pool_samples(kHour, {})[0].gpus_allocated == doctest::Approx(0));
}

TEST_CASE("a recorder that keeps no charge rows is never sent one, and the totals are the same") {
  // The first test's books (a and b share a GPU, e holds a CPU node), kept at each level: below
  // full the ledger tracks no payers and emits nothing; its totals and queue costs do not move.
  struct Kept {
    std::size_t rows = 0;
    CostTotals totals;
    std::map<std::string, QueueCost> queues;
  };
  auto run = [](RecordLevel level) {
    ChargeKeeper keep;
    keep.keeps = level;
    Books b;
    const NodeId g = b.tw.node("g").cpu("8").memory("64Gi").gpus(1, "G").add();
    const NodeId c = b.tw.node("c").cpu("16").memory("64Gi").add();
    b.tw.world().nodes[c].price_per_hour = 1.0;
    const PodId a = b.tw.pod("a").cpu("2").memory("4Gi").gpu_milli(500).util(0.6).add();
    const PodId p = b.tw.pod("b").cpu("1").memory("2Gi").gpu_milli(500).util(0.2).add();
    const PodId e = b.tw.pod("e").cpu("4").memory("8Gi").queue("etl").add();
    b.open(EnergyPricing{0.10, 1.5}, DeviceCharge::standard(), &keep);
    b.bind(0, a, g, {}, 0);
    b.bind(0, p, g, {}, 0);
    b.bind(0, e, c, {});
    b.unbind(kHour, a);
    b.unbind(2 * kHour, p);
    b.unbind(2 * kHour, e);
    b.ledger->advance(3 * kHour);
    b.ledger->finish();
    return Kept{keep.rows.size(), b.ledger->totals(), b.queues()};
  };
  const Kept full = run(RecordLevel::kFull);
  REQUIRE(full.rows > 0);
  for (RecordLevel level : {RecordLevel::kSummary, RecordLevel::kPodRows}) {
    const Kept k = run(level);
    CHECK(k.rows == 0);
    CHECK(k.totals.hardware == full.totals.hardware);
    CHECK(k.totals.energy == full.totals.energy);
    CHECK(k.totals.allocated == full.totals.allocated);
    CHECK(k.totals.stranded == full.totals.stranded);
    CHECK(k.totals.unqueued == full.totals.unqueued);
    CHECK(k.totals.gpu_kwh == full.totals.gpu_kwh);
    REQUIRE(k.queues.size() == full.queues.size());
    for (const auto& [name, q] : full.queues) {
      CHECK(k.queues.at(name).cost == q.cost);
      CHECK(k.queues.at(name).gpu_seconds == q.gpu_seconds);
    }
  }
}
