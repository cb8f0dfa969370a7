#include "sim/boxed.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/pod.hpp"

namespace capsim {
namespace {

struct Rules {
  std::vector<std::string> terms;
  int weight = 7;
};

TEST_CASE("a default Boxed reads as a default value and allocates nothing") {
  const Boxed<Rules> b;
  CHECK_FALSE(b.set());
  CHECK(b->terms.empty());
  CHECK((*b).weight == 7);
  CHECK(sizeof(b) == sizeof(void*));
}

TEST_CASE("mut() makes the value once and changes it in place") {
  Boxed<Rules> b;
  b.mut().terms.push_back("zone");
  CHECK(b.set());
  b.mut().weight = 3;
  CHECK(b->terms == std::vector<std::string>{"zone"});
  CHECK(b->weight == 3);
  b = Rules{{"a", "b"}, 1};
  CHECK(b->terms.size() == 2);
  CHECK(b->weight == 1);
}

TEST_CASE("assigning a default value keeps nothing when the type compares") {
  Boxed<std::string> s;
  s = std::string("DaemonSet");
  CHECK(s.set());
  CHECK(*s == "DaemonSet");
  s = std::string();  // what a loader assigns when the input names none
  CHECK_FALSE(s.set());
  CHECK(s->empty());
  Boxed<Rules> r;  // Rules has no ==: an assigned value is always kept
  r = Rules{};
  CHECK(r.set());
  PodSpec p;
  p.affinity = NodeAffinity{};
  p.topology = TopologyRequest{};
  CHECK_FALSE(p.affinity.set());
  CHECK_FALSE(p.topology.set());
  p.affinity = NodeAffinity{std::vector<NodeSelectorTerm>{}, {}};  // required, matching no node
  CHECK(p.affinity.set());
  CHECK(p.affinity->required.has_value());
}

TEST_CASE("copies of a Boxed are independent values; a moved-from one reads as default") {
  Boxed<Rules> a;
  a.mut().terms = {"x"};
  Boxed<Rules> b = a;
  b.mut().terms.push_back("y");
  CHECK(a->terms.size() == 1);
  CHECK(b->terms.size() == 2);
  Boxed<Rules> c;
  c = b;
  c.mut().weight = 0;
  CHECK(b->weight == 7);
  Boxed<Rules> d = std::move(c);
  CHECK(d->weight == 0);
  Boxed<Rules> empty;
  d = empty;  // copying a default one clears
  CHECK_FALSE(d.set());
  CHECK(d->terms.empty());
}

TEST_CASE("a PodSpec keeps its rarely set rules out of line") {
  // The pods of a fleet-scale run are mostly without spread constraints, pod or node affinity, a
  // TAS request, a priority class, a controller or spec.nodeName: those take a pointer each in
  // PodSpec (see docs/scheduling.md, Performance).
  PodSpec a;
  CHECK_FALSE(a.pod_rules.set());
  CHECK_FALSE(a.topology.set());
  CHECK_FALSE(a.affinity.set());
  CHECK_FALSE(a.node_name.set());
  CHECK(a.node_name->empty());
  CHECK_FALSE(a.affinity->required.has_value());
  CHECK(a.pod_rules->spread.empty());
  CHECK(a.topology->mode == TopologyMode::kNone);
  a.topology.mut().slice_level = "rack";
  const PodSpec b = a;
  a.topology.mut().slice_level = "block";
  CHECK(b.topology->slice_level == "rack");
  CHECK(b.topology->explicit_request());
}

}  // namespace
}  // namespace capsim
