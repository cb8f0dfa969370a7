#include "tools/loaders/scaling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <any>
#include <functional>
#include <map>
#include <tuple>

#include "tools/loaders/k8s_manifests.hpp"

namespace capsim {

namespace {

constexpr std::int64_t kMaxReplicas = 100000;
// Soft limit (docs/cli.md#limits) on the replicas all steps up create together, checked before
// each step's pods are made: a trace swinging between 0 and 100,000 replicas every minute would
// otherwise fill memory with pods.
constexpr std::int64_t kSoftMaxScaledReplicas = 2000000;
const std::vector<std::string> kKinds = {"Deployment", "ReplicaSet", "StatefulSet"};

struct StepIn {
  std::string kind, namespace_ = "default", name;
  SimTime at = 0;
  std::int64_t replicas = 0;
  InputLocation where;    // the step (its `at` or its trace row)
  InputLocation name_at;  // where the controller is named
  InputLocation kind_at;
};

[[noreturn]] void fail_at(const InputLocation& where, const std::string& message) {
  throw InputError(InputErrorKind::kInvalid, where, message);
}

void check_kind(const std::string& kind, const InputLocation& where) {
  if (std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end()) {
    fail_at(where, fmt::format("'{}' is not a controller capsim scales{}; use Deployment, "
                               "ReplicaSet or StatefulSet",
                               kind, did_you_mean(kind, kKinds)));
  }
}

void read_trace(const CsvFile& csv, std::vector<StepIn>& out) {
  const std::vector<std::string> columns = {"time", "kind", "namespace", "name", "replicas"};
  for (const std::string& h : csv.header()) {
    if (std::find(columns.begin(), columns.end(), h) == columns.end()) {
      csv.fail_header(fmt::format("unknown column '{}'{}", h, did_you_mean(h, columns)));
    }
  }
  for (const char* need : {"time", "kind", "name", "replicas"}) {
    if (!csv.has_column(need)) csv.fail_header(fmt::format("the column '{}' is missing", need));
  }
  for (const CsvRow& row : csv.rows()) {
    StepIn s;
    auto d = parse_duration(csv.field(row, "time"));
    if (!d.ok()) csv.fail(row, "time", d.error());
    if (d.value() < 0) csv.fail(row, "time", "must not be negative");
    s.at = d.value();
    s.kind = csv.field(row, "kind");
    s.kind_at = csv.where(row, "kind");
    check_kind(s.kind, s.kind_at);
    s.namespace_ = csv.field_or(row, "namespace", "default");
    if (s.namespace_.empty()) s.namespace_ = "default";
    s.name = csv.field(row, "name");
    s.name_at = csv.where(row, "name");
    const std::string& r = csv.field(row, "replicas");
    std::size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(r, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != r.size() || r.empty() || v < 0 || v > kMaxReplicas) {
      csv.fail(row, "replicas",
               fmt::format("'{}' is not a replica count (a whole number from 0 to {})", r,
                           kMaxReplicas));
    }
    s.replicas = v;
    s.where = csv.where(row, "time");
    out.push_back(std::move(s));
  }
}

}  // namespace

void apply_scaling(const YamlNode& section, WorldBuilder& b, FileSource& files,
                   const std::function<std::string(const YamlNode&)>& resolve, SimTime horizon,
                   bool force, std::vector<std::string>* warnings) {
  std::vector<StepIn> steps;
  std::int64_t made_by_steps = 0;
  for (const YamlNode& item : section.seq()) {
    MapReader m = item.map();
    if (auto t = m.opt("trace")) {
      m.finish();
      read_trace(files.csv(resolve(*t), CsvOptions{'#', true}), steps);
      continue;
    }
    StepIn s;
    const YamlNode kind = m.req("kind");
    s.kind = kind.str();
    s.kind_at = kind.where();
    check_kind(s.kind, s.kind_at);
    const YamlNode name = m.req("name");
    s.name = name.str();
    s.name_at = name.where();
    s.namespace_ = m.str_or("namespace", "default");
    const YamlNode at = m.req("at");
    s.at = at.duration();
    if (s.at < 0) at.fail("the time must not be negative");
    s.where = at.where();
    s.replicas = m.req("replicas").integer(0, kMaxReplicas);
    m.finish();
    steps.push_back(std::move(s));
  }

  World& w = b.world();
  // Per controller, in the order first named; its steps by time.
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t, std::less<>> index;
  std::vector<std::vector<StepIn>> by_controller;
  for (StepIn& s : steps) {
    auto [it, added] =
        index.emplace(std::tuple{s.kind, s.namespace_, s.name}, by_controller.size());
    if (added) by_controller.emplace_back();
    by_controller[it->second].push_back(std::move(s));
  }
  // What the steps up create, over all controllers, before any pod is made (the soft limit).
  for (std::vector<StepIn>& list : by_controller) {
    std::stable_sort(list.begin(), list.end(),
                     [](const StepIn& a, const StepIn& c) { return a.at < c.at; });
    const std::any* kept =
        b.kept(replica_template_key(list.front().kind, list.front().namespace_, list.front().name));
    std::int64_t current =
        kept == nullptr ? 0 : std::any_cast<const ReplicaTemplate&>(*kept).replicas;
    for (const StepIn& s : list) {
      if (s.at >= horizon) continue;
      if (s.replicas > current) made_by_steps += s.replicas - current;
      current = s.replicas;
      if (!force && made_by_steps > kSoftMaxScaledReplicas) {
        fail_at(s.where, fmt::format("the scaling steps up to here create {} replicas, above the "
                                     "limit of {} (docs/cli.md#limits); pass --force to run it "
                                     "anyway",
                                     made_by_steps, kSoftMaxScaledReplicas));
      }
    }
  }
  // The pods each scaled controller made, found in one pass over the pods (a dump holds many).
  std::vector<std::vector<PodId>> made_pods(by_controller.size());
  for (PodId p = 0; p < w.pods.size(); ++p) {
    const PodSpec& ps = w.pods[p];
    if (ps.controller_kind->empty()) continue;
    auto it = index.find(std::tie(*ps.controller_kind, ps.namespace_, ps.job_name));
    if (it != index.end()) made_pods[it->second].push_back(p);
  }
  for (std::size_t k = 0; k < by_controller.size(); ++k) {
    const std::vector<StepIn>& list = by_controller[k];
    const StepIn& first = list.front();
    const std::string key = replica_template_key(first.kind, first.namespace_, first.name);
    const std::any* kept = b.kept(key);
    if (kept == nullptr) {
      fail_at(first.name_at, fmt::format("no {} '{}' in namespace {} is read from the manifests",
                                         first.kind, first.name, first.namespace_));
    }
    const auto& t = std::any_cast<const ReplicaTemplate&>(*kept);
    ScaledController c;
    c.kind = t.kind;
    c.namespace_ = t.pod.namespace_;
    c.name = t.name;
    c.pods = std::move(made_pods[k]);
    if (static_cast<std::int64_t>(c.pods.size()) != t.replicas) {
      // A dump's ReplicaSet whose Deployment is read too: the Deployment makes the pods.
      fail_at(first.name_at, fmt::format("{} '{}' is made by a controller that is read too; scale "
                                         "that controller instead",
                                         c.kind, c.name));
    }
    for (const queueing::LocalQueueSpec& lq : w.queues.local_queues) {
      if (!t.pod.queue.empty() && lq.name == t.pod.queue && lq.namespace_ == c.namespace_) {
        fail_at(first.name_at, fmt::format("{} '{}' has its pods admitted by Kueue (LocalQueue "
                                           "{}); scaling such a controller is not modelled",
                                           c.kind, c.name, lq.name));
      }
    }
    std::int64_t current = t.replicas;  // replicas before each step
    std::int64_t made = t.replicas;     // replicas ever made (a StatefulSet's next ordinal)
    SimTime last = -1;
    for (const StepIn& s : list) {
      if (s.at == last) {
        fail_at(s.where, fmt::format("{} '{}' has two scaling steps at {}", c.kind, c.name,
                                     format_duration(s.at)));
      }
      last = s.at;
      if (s.at < t.pod.arrival) {
        fail_at(s.where,
                fmt::format("the step at {} comes before {} '{}' exists (it arrives at "
                            "{})",
                            format_duration(s.at), c.kind, c.name, format_duration(t.pod.arrival)));
      }
      if (s.at >= horizon) {
        if (warnings != nullptr) {
          warnings->push_back(
              fmt::format("{}: the step at {} is at or after the horizon: it never "
                          "happens",
                          s.where.to_string(), format_duration(s.at)));
        }
        continue;
      }
      if (s.replicas > current) {
        if (c.stateful() && current < made) {
          fail_at(s.where,
                  fmt::format("StatefulSet '{}' would make pod {}-{} again after deleting it; "
                              "capsim gives each pod one life, so a StatefulSet may only grow "
                              "past the most replicas it has had",
                              c.name, c.name, t.first_ordinal + current));
        }
        const std::int64_t from = c.stateful() ? current : made;
        const std::int64_t count = s.replicas - current;
        for (std::int64_t i = from; i < from + count; ++i) {
          PodSpec p = make_replica(t, i, b);
          p.arrival = s.at;
          // As finalize() did for the controller's first pods.
          b.resolve_priority(p, t.where);
          b.check_node_name(p, t.where);
          c.pods.push_back(b.add_pod(std::move(p), s.where));
        }
        made = from + count;
      }
      current = s.replicas;
      c.steps.push_back({s.at, static_cast<std::int32_t>(s.replicas), short_location(s.where)});
    }
    if (!c.steps.empty()) w.scaled_controllers.push_back(std::move(c));
  }
}

}  // namespace capsim
