#include "sim/queueing/quota_tree.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "sim/check.hpp"
#include "sim/queueing/queue_config.hpp"

using namespace capsim;
using namespace capsim::queueing;

namespace {

// A cohort `root` with ClusterQueues a (nominal 10) and b (nominal 6) over one flavor/resource.
struct Tree {
  QuotaTree t;
  QuotaNodeId a, b, root;
  FrIndex gpu;
  Tree(std::int64_t a_bl, std::int64_t a_ll, std::int64_t b_ll) {
    gpu = t.intern({0, kNvidiaGpu});
    a = t.add_node("a", false);
    b = t.add_node("b", false);
    root = t.add_node("root", true);
    t.set_parent(a, root);
    t.set_parent(b, root);
    t.set_quota(a, gpu, 10, a_bl, a_ll);
    t.set_quota(b, gpu, 6, kNoLimit, b_ll);
    t.finalize();
  }
};

}  // namespace

TEST_CASE("available and potential quota follow Kueue's resource-node formulas") {
  struct Case {
    const char* name;
    std::int64_t a_bl, a_ll, b_ll;
    std::int64_t use_a, use_b;
    std::int64_t want_avail_a, want_potential_a, want_avail_b, want_potential_b;
    std::int64_t want_root_usage;
  };
  const Case cases[] = {
      // root subtree = 10 + 6 = 16; nothing used: each may take the whole pool.
      {"no limits, idle", kNoLimit, kNoLimit, kNoLimit, 0, 0, 16, 16, 16, 16, 0},
      // b uses its 6: root usage 6, a may take 16 - 6 = 10.
      {"no limits, b busy", kNoLimit, kNoLimit, kNoLimit, 0, 6, 10, 16, 10, 16, 6},
      // a's borrowingLimit 2: at most 10 + 2 = 12, even in an idle cohort.
      {"a borrowingLimit 2", 2, kNoLimit, kNoLimit, 0, 0, 12, 12, 16, 16, 0},
      // a uses 11 (borrows 1): storedInParent 10 - usedInParent 11 + 2 = 1 more for a;
      // b: 16 - 11 = 5.
      {"a borrowingLimit 2, a uses 11", 2, kNoLimit, kNoLimit, 11, 0, 1, 12, 5, 16, 11},
      // b's lendingLimit 2 keeps 6 - 2 = 4 for b alone: the pool is 10 + 2 = 12.
      {"b lendingLimit 2", kNoLimit, kNoLimit, 2, 0, 0, 12, 12, 16, 16, 0},
      // a uses 11 of the pool of 12: b still has its 4 plus 12 - 11 = 1.
      {"b lendingLimit 2, a uses 11", kNoLimit, kNoLimit, 2, 11, 0, 1, 12, 5, 16, 11},
      // b uses 3 of its local 4: nothing reaches the pool.
      {"b lendingLimit 2, b uses 3", kNoLimit, kNoLimit, 2, 0, 3, 12, 12, 13, 16, 0},
      // b uses 5: 1 beyond its local 4 is taken from the pool.
      {"b lendingLimit 2, b uses 5", kNoLimit, kNoLimit, 2, 0, 5, 11, 12, 11, 16, 1},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Tree x(c.a_bl, c.a_ll, c.b_ll);
    x.t.add_usage(x.a, x.gpu, c.use_a);
    x.t.add_usage(x.b, x.gpu, c.use_b);
    CHECK(x.t.available(x.a, x.gpu) == c.want_avail_a);
    CHECK(x.t.potential_available(x.a, x.gpu) == c.want_potential_a);
    CHECK(x.t.available(x.b, x.gpu) == c.want_avail_b);
    CHECK(x.t.potential_available(x.b, x.gpu) == c.want_potential_b);
    CHECK(x.t.usage(x.root, x.gpu) == c.want_root_usage);
    x.t.check_invariants();
    // Removing the usage again leaves an idle tree.
    x.t.remove_usage(x.a, x.gpu, c.use_a);
    x.t.remove_usage(x.b, x.gpu, c.use_b);
    CHECK(x.t.usage(x.root, x.gpu) == 0);
  }
}

TEST_CASE("the borrowing level is the height of the smallest subtree that fits") {
  Tree x(kNoLimit, kNoLimit, kNoLimit);
  // 5 fits a's nominal 10: no borrowing, and quota could be reclaimed in the cohort.
  CHECK(x.t.lowest_subtree_that_fits(x.a, x.gpu, 5) == std::pair<std::int32_t, bool>{0, true});
  // 12 needs the cohort (height 1), the whole tree: nothing above to reclaim from.
  CHECK(x.t.lowest_subtree_that_fits(x.a, x.gpu, 12) == std::pair<std::int32_t, bool>{1, false});
}

TEST_CASE("the dominant resource share is borrowed x 1000 / lendable, divided by the weight") {
  Tree x(kNoLimit, kNoLimit, kNoLimit);
  x.t.add_usage(x.a, x.gpu, 13);
  // a borrows 13 - 10 = 3 of a lendable 16: 3 x 1000 / 16 = 187.5.
  const Drs d = x.t.drs(x.a);
  CHECK(d.borrowing);
  CHECK(d.ratio == doctest::Approx(187.5));
  CHECK(d.rounded() == 188);
  // With 2 more it would borrow 5: 312.5; b borrows nothing.
  CHECK(x.t.drs(x.a, {{x.gpu, 2}}).ratio == doctest::Approx(312.5));
  CHECK(!x.t.drs(x.b).borrowing);
  // A weight of 2 halves the share; weight 0 while borrowing is infinite.
  Drs w2 = d;
  w2.weight = 2;
  CHECK(w2.weighted() == doctest::Approx(93.75));
  Drs w0 = d;
  w0.weight = 0;
  CHECK(std::isinf(w0.weighted()));
  CHECK(compare_drs(w2, d) < 0);
  CHECK(compare_drs(w0, d) > 0);
}

TEST_CASE("usage above nominal plus borrowing limit is an invariant violation") {
  Tree x(2, kNoLimit, kNoLimit);
  x.t.add_usage(x.a, x.gpu, 13);  // 10 + 2 allowed
  CHECK_THROWS_AS(x.t.check_invariants(), InvariantError);
}

TEST_CASE("a cohort's lending limit keeps quota inside its subtree of a hierarchy") {
  // org (root) <- x (a Cohort with lendingLimit 2) <- a (nominal 6); org <- b (nominal 4).
  // x keeps 6 - 2 = 4 for its subtree; org's pool = 2 (lent by x) + 4 (b) = 6.
  QuotaTree t;
  const FrIndex gpu = t.intern({0, kNvidiaGpu});
  const QuotaNodeId a = t.add_node("a", false);
  const QuotaNodeId b = t.add_node("b", false);
  const QuotaNodeId x = t.add_node("x", true);
  const QuotaNodeId org = t.add_node("org", true);
  t.set_parent(a, x);
  t.set_parent(x, org);
  t.set_parent(b, org);
  t.set_quota(a, gpu, 6, kNoLimit, kNoLimit);
  t.set_quota(x, gpu, 0, kNoLimit, 2);
  t.set_quota(b, gpu, 4, kNoLimit, kNoLimit);
  t.finalize();
  CHECK(t.subtree_quota(x, gpu) == 6);
  CHECK(t.local_quota(x, gpu) == 4);
  CHECK(t.subtree_quota(org, gpu) == 6);
  // a: x's local 4 + org's pool 6 = 10 (its own 6 and b's 4); b: its 4 + the 2 x lends = 6.
  CHECK(t.potential_available(a, gpu) == 10);
  CHECK(t.potential_available(b, gpu) == 6);
  // b takes all 6 it can: a still has the 4 x keeps back.
  t.add_usage(b, gpu, 6);
  CHECK(t.available(a, gpu) == 4);
  CHECK(t.usage(org, gpu) == 6);
  t.check_invariants();
  // Borrowing from the far side of the tree is height 2 (x, then org).
  t.remove_usage(b, gpu, 6);
  CHECK(t.lowest_subtree_that_fits(a, gpu, 8).first == 2);
  CHECK(t.lowest_subtree_that_fits(a, gpu, 6).first == 0);
}

TEST_CASE("a pool overdrawn past a lending limit is an invariant violation") {
  // b lends at most 2 of its 6: the pool is 10 + 2 = 12. Usage of 13 by a would eat into the
  // 4 b keeps for itself.
  Tree x(kNoLimit, kNoLimit, 2);
  x.t.add_usage(x.a, x.gpu, 12);
  x.t.check_invariants();  // exactly the pool: fine
  x.t.add_usage(x.a, x.gpu, 1);
  CHECK_THROWS_AS(x.t.check_invariants(), InvariantError);
}
