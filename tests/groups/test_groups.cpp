// Every group operation against hand-computed results (4 processes: world ranks 0..3), and
// the misuse cases: each returns its code, none aborts.
#include <array>
#include <string>
#include <vector>

#include "groups_env.hpp"
#include "weft/weft.hpp"

using namespace groups_test;
using V = std::vector<int>;

namespace {

class Groups : public job_test {
  protected:
    weft_group world = WEFT_GROUP_NULL;
    std::vector<weft_group> made;
    void SetUp() override {
        job_test::SetUp();
        if (IsSkipped()) return;
        ASSERT_EQ(weft_comm_group(WEFT_COMM_WORLD, &world), 0);
    }
    void TearDown() override {
        for (weft_group &g : made)
            if (g != WEFT_GROUP_NULL) {
                int rc = weft_group_free(&g);
                EXPECT_EQ(rc, 0) << err(rc);
            }
        if (world != WEFT_GROUP_NULL) {
            EXPECT_EQ(weft_group_free(&world), 0);
        }
        job_test::TearDown();
    }
    // Keeps g to be freed at the end.
    weft_group keep(weft_group g) {
        made.push_back(g);
        return g;
    }
    weft_group incl(weft_group g, V ranks) {
        weft_group n = WEFT_GROUP_NULL;
        int rc = weft_group_incl(g, ranks.size(), ranks.data(), &n);
        EXPECT_EQ(rc, 0) << err(rc);
        return keep(n);
    }
    weft_group excl(weft_group g, V ranks) {
        weft_group n = WEFT_GROUP_NULL;
        int rc = weft_group_excl(g, ranks.size(), ranks.data(), &n);
        EXPECT_EQ(rc, 0) << err(rc);
        return keep(n);
    }
    weft_group range_incl(weft_group g, std::vector<std::array<int, 3>> r) {
        weft_group n = WEFT_GROUP_NULL;
        int rc = weft_group_range_incl(g, r.size(), reinterpret_cast<int(*)[3]>(r.data()), &n);
        EXPECT_EQ(rc, 0) << err(rc);
        return keep(n);
    }
    weft_group range_excl(weft_group g, std::vector<std::array<int, 3>> r) {
        weft_group n = WEFT_GROUP_NULL;
        int rc = weft_group_range_excl(g, r.size(), reinterpret_cast<int(*)[3]>(r.data()), &n);
        EXPECT_EQ(rc, 0) << err(rc);
        return keep(n);
    }
    int range_incl_rc(weft_group g, std::vector<std::array<int, 3>> r) {
        weft_group n = WEFT_GROUP_NULL;
        int rc = weft_group_range_incl(g, r.size(), reinterpret_cast<int(*)[3]>(r.data()), &n);
        EXPECT_EQ(n, WEFT_GROUP_NULL) << "newgroup written on failure";
        if (rc == 0) keep(n);
        return rc;
    }
    int compare(weft_group a, weft_group b) {
        int r = -1;
        int rc = weft_group_compare(a, b, &r);
        EXPECT_EQ(rc, 0) << err(rc);
        return r;
    }
    int rank_in(weft_group g) {
        int r = -5;
        int rc = weft_group_rank(g, &r);
        EXPECT_EQ(rc, 0) << err(rc);
        return r;
    }
};

TEST_F(Groups, WorldGroup) {
    int n = 0;
    ASSERT_EQ(weft_group_size(world, &n), 0);
    EXPECT_EQ(n, 4);
    EXPECT_EQ(rank_in(world), world_rank());
    EXPECT_EQ(members(world), (V{0, 1, 2, 3}));
    weft_group self = WEFT_GROUP_NULL;
    ASSERT_EQ(weft_comm_group(WEFT_COMM_SELF, &self), 0);
    keep(self);
    EXPECT_EQ(members(self), (V{world_rank()}));
    EXPECT_EQ(rank_in(self), 0);
}

TEST_F(Groups, InclAndRank) {
    weft_group g = incl(world, {3, 1});
    EXPECT_EQ(members(g), (V{3, 1}));
    int expected[] = {undefined, 1, undefined, 0};
    EXPECT_EQ(rank_in(g), expected[world_rank()]);
    // A non-member's rank compares equal to WEFT_UNDEFINED, as MPI_UNDEFINED does in MPI.
    if (world_rank() % 2 == 0) {
        EXPECT_TRUE(static_cast<size_t>(rank_in(g)) == WEFT_UNDEFINED);
    }
    EXPECT_EQ(members(incl(g, {1})), (V{1}));
    EXPECT_EQ(members(incl(world, {0, 1, 2, 3})), (V{0, 1, 2, 3}));
    EXPECT_EQ(compare(incl(world, {0, 1, 2, 3}), world), WEFT_IDENT);
}

TEST_F(Groups, EmptyGroups) {
    int n = -1;
    ASSERT_EQ(weft_group_size(WEFT_GROUP_EMPTY, &n), 0);
    EXPECT_EQ(n, 0);
    EXPECT_EQ(rank_in(WEFT_GROUP_EMPTY), undefined);
    weft_group e = incl(world, {});
    EXPECT_NE(e, WEFT_GROUP_NULL);
    EXPECT_EQ(members(e), V{});
    EXPECT_EQ(compare(e, WEFT_GROUP_EMPTY), WEFT_IDENT);
    EXPECT_EQ(compare(WEFT_GROUP_EMPTY, WEFT_GROUP_EMPTY), WEFT_IDENT);
    EXPECT_EQ(compare(world, WEFT_GROUP_EMPTY), WEFT_UNEQUAL);
    EXPECT_EQ(members(excl(world, {0, 1, 2, 3})), V{});
    EXPECT_EQ(members(range_incl(world, {})), V{});
    EXPECT_EQ(members(excl(world, {})), (V{0, 1, 2, 3}));
    // Operations on empty groups.
    EXPECT_EQ(members(excl(WEFT_GROUP_EMPTY, {})), V{});
    weft_group u = WEFT_GROUP_NULL, i = WEFT_GROUP_NULL, d = WEFT_GROUP_NULL;
    ASSERT_EQ(weft_group_union(WEFT_GROUP_EMPTY, world, &u), 0);
    ASSERT_EQ(weft_group_intersection(world, WEFT_GROUP_EMPTY, &i), 0);
    ASSERT_EQ(weft_group_difference(WEFT_GROUP_EMPTY, world, &d), 0);
    keep(u);
    keep(i);
    keep(d);
    EXPECT_EQ(members(u), (V{0, 1, 2, 3}));
    EXPECT_EQ(compare(i, WEFT_GROUP_EMPTY), WEFT_IDENT);
    EXPECT_EQ(compare(d, WEFT_GROUP_EMPTY), WEFT_IDENT);
}

TEST_F(Groups, Excl) {
    EXPECT_EQ(members(excl(world, {0, 2})), (V{1, 3}));
    EXPECT_EQ(members(excl(world, {3})), (V{0, 1, 2}));
    weft_group g = incl(world, {3, 0, 2});
    EXPECT_EQ(members(excl(g, {1})), (V{3, 2}));  // rank 1 of g is world rank 0
}

TEST_F(Groups, RangeInclAndExcl) {
    EXPECT_EQ(members(range_incl(world, {{0, 3, 2}})), (V{0, 2}));
    EXPECT_EQ(members(range_incl(world, {{3, 0, -1}})), (V{3, 2, 1, 0}));
    EXPECT_EQ(members(range_incl(world, {{3, 0, -2}})), (V{3, 1}));
    EXPECT_EQ(members(range_incl(world, {{2, 2, 1}})), (V{2}));
    EXPECT_EQ(members(range_incl(world, {{2, 2, -3}})), (V{2}));
    EXPECT_EQ(members(range_incl(world, {{0, 0, 1}, {3, 2, -1}})), (V{0, 3, 2}));
    EXPECT_EQ(members(range_incl(world, {{1, 3, 5}})), (V{1}));  // the stride passes last at once
    EXPECT_EQ(members(range_excl(world, {{3, 0, -2}})), (V{0, 2}));
    EXPECT_EQ(members(range_excl(world, {{0, 1, 1}, {3, 3, 1}})), (V{2}));
    EXPECT_EQ(members(range_excl(world, {{0, 3, 1}})), V{});
    weft_group rev = range_incl(world, {{3, 0, -1}});
    EXPECT_EQ(members(range_incl(rev, {{0, 2, 2}})), (V{3, 1}));  // ranks of rev, not world
}

TEST_F(Groups, SetOperations) {
    weft_group a = incl(world, {3, 1}), b = incl(world, {0, 1, 2});
    auto op = [&](int (*f)(weft_group, weft_group, weft_group *), weft_group x, weft_group y) {
        weft_group n = WEFT_GROUP_NULL;
        int rc = f(x, y, &n);
        EXPECT_EQ(rc, 0) << err(rc);
        return members(keep(n));
    };
    EXPECT_EQ(op(weft_group_union, a, b), (V{3, 1, 0, 2}));
    EXPECT_EQ(op(weft_group_union, b, a), (V{0, 1, 2, 3}));
    EXPECT_EQ(op(weft_group_union, a, a), (V{3, 1}));
    EXPECT_EQ(op(weft_group_intersection, a, b), (V{1}));
    EXPECT_EQ(op(weft_group_intersection, b, a), (V{1}));
    EXPECT_EQ(op(weft_group_intersection, a, world), (V{3, 1}));
    EXPECT_EQ(op(weft_group_difference, b, a), (V{0, 2}));
    EXPECT_EQ(op(weft_group_difference, a, b), (V{3}));
    EXPECT_EQ(op(weft_group_difference, a, a), V{});
}

TEST_F(Groups, Compare) {
    weft_group a = incl(world, {3, 1}), b = incl(world, {1, 3}), c = incl(world, {3, 1}), d = incl(world, {0, 1, 2});
    EXPECT_EQ(compare(a, a), WEFT_IDENT);
    EXPECT_EQ(compare(a, c), WEFT_IDENT);
    EXPECT_EQ(compare(a, b), WEFT_SIMILAR);
    EXPECT_EQ(compare(a, d), WEFT_UNEQUAL);
    EXPECT_EQ(compare(world, range_incl(world, {{3, 0, -1}})), WEFT_SIMILAR);
    EXPECT_EQ(compare(world, incl(world, {0, 1, 2})), WEFT_UNEQUAL);
}

TEST_F(Groups, TranslateRanks) {
    weft_group g = incl(world, {3, 1});
    int in[] = {0, 1, 2, 3, WEFT_PROC_NULL};
    int out[5] = {-7, -7, -7, -7, -7};
    ASSERT_EQ(weft_group_translate_ranks(world, 5, in, g, out), 0);
    EXPECT_EQ(V(out, out + 5), (V{undefined, 1, undefined, 0, WEFT_PROC_NULL}));
    int back_in[] = {0, 1};
    int back[2] = {-7, -7};
    ASSERT_EQ(weft_group_translate_ranks(g, 2, back_in, world, back), 0);
    EXPECT_EQ(V(back, back + 2), (V{3, 1}));
    ASSERT_EQ(weft_group_translate_ranks(g, 0, nullptr, world, nullptr), 0);
    // Into the empty group: nobody is there.
    ASSERT_EQ(weft_group_translate_ranks(g, 2, back_in, WEFT_GROUP_EMPTY, back), 0);
    EXPECT_EQ(V(back, back + 2), (V{undefined, undefined}));
}

TEST_F(Groups, Misuse) {
    weft_group n = WEFT_GROUP_NULL;
    int dup[] = {1, 1}, high[] = {4}, neg[] = {-1}, five[] = {0, 1, 2, 3, 0};
    EXPECT_EQ(weft_group_incl(world, 2, dup, &n), WEFT_ERR_RANK);
    EXPECT_NE(harness::detail().find("twice"), std::string::npos) << harness::detail();
    EXPECT_EQ(weft_group_incl(world, 1, high, &n), WEFT_ERR_RANK);
    EXPECT_EQ(weft_group_incl(world, 1, neg, &n), WEFT_ERR_RANK);
    EXPECT_EQ(weft_group_incl(world, 5, five, &n), WEFT_ERR_RANK);
    EXPECT_EQ(weft_group_incl(world, 1, nullptr, &n), WEFT_ERR_ARG);
    EXPECT_EQ(weft_group_incl(world, 1, high, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_group_excl(world, 2, dup, &n), WEFT_ERR_RANK);
    EXPECT_EQ(weft_group_excl(world, 1, high, &n), WEFT_ERR_RANK);
    EXPECT_EQ(n, WEFT_GROUP_NULL);
    EXPECT_EQ(range_incl_rc(world, {{0, 3, 0}}), WEFT_ERR_ARG);   // stride 0
    EXPECT_EQ(range_incl_rc(world, {{0, 3, -1}}), WEFT_ERR_ARG);  // runs away from last
    EXPECT_EQ(range_incl_rc(world, {{3, 0, 1}}), WEFT_ERR_ARG);
    EXPECT_EQ(range_incl_rc(world, {{0, 4, 1}}), WEFT_ERR_RANK);
    EXPECT_EQ(range_incl_rc(world, {{-1, 2, 1}}), WEFT_ERR_RANK);
    EXPECT_EQ(range_incl_rc(world, {{0, 2, 1}, {2, 3, 1}}), WEFT_ERR_RANK);  // 2 twice
    int triplet[1][3] = {{0, 3, 0}};
    EXPECT_EQ(weft_group_range_excl(world, 1, triplet, &n), WEFT_ERR_ARG);
    int bad[] = {4};
    int out[1];
    EXPECT_EQ(weft_group_translate_ranks(world, 1, bad, world, out), WEFT_ERR_RANK);
    EXPECT_EQ(weft_group_translate_ranks(world, 1, nullptr, world, out), WEFT_ERR_ARG);

    // Predefined, null, freed and foreign handles.
    weft_group empty = WEFT_GROUP_EMPTY;
    EXPECT_EQ(weft_group_free(&empty), WEFT_ERR_GROUP);
    EXPECT_EQ(empty, WEFT_GROUP_EMPTY);
    EXPECT_NE(harness::detail().find("WEFT_GROUP_EMPTY"), std::string::npos) << harness::detail();
    int size = 0;
    EXPECT_EQ(weft_group_size(WEFT_GROUP_EMPTY, &size), 0) << "WEFT_GROUP_EMPTY must survive a refused free";
    weft_group null_group = WEFT_GROUP_NULL;
    EXPECT_EQ(weft_group_free(&null_group), WEFT_ERR_GROUP);
    EXPECT_EQ(weft_group_free(nullptr), WEFT_ERR_ARG);
    weft_group g = WEFT_GROUP_NULL;
    int one[] = {1};
    ASSERT_EQ(weft_group_incl(world, 1, one, &g), 0);
    weft_group copy = g;
    ASSERT_EQ(weft_group_free(&g), 0);
    EXPECT_EQ(g, WEFT_GROUP_NULL);
    EXPECT_EQ(weft_group_size(copy, &size), WEFT_ERR_GROUP);
    EXPECT_EQ(weft_group_free(&copy), WEFT_ERR_GROUP);
    int r = 0;
    EXPECT_EQ(weft_group_rank(WEFT_COMM_WORLD, &r), WEFT_ERR_GROUP);  // a communicator, not a group
    EXPECT_EQ(weft_group_compare(world, copy, &r), WEFT_ERR_GROUP);
    EXPECT_EQ(weft_group_union(world, WEFT_GROUP_NULL, &n), WEFT_ERR_GROUP);
    EXPECT_EQ(weft_comm_group(WEFT_COMM_NULL, &n), WEFT_ERR_COMM);
    EXPECT_EQ(weft_comm_group(WEFT_COMM_WORLD, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(harness::error_string(WEFT_ERR_GROUP), "invalid group");
}

TEST_F(Groups, CxxLayer) {
    weft::Group w = weft::Group::of(weft::Comm::world());
    EXPECT_EQ(w.size(), 4);
    EXPECT_EQ(w.rank(), world_rank());
    int ranks[] = {3, 1};
    weft::Group a = w.incl(ranks);
    EXPECT_EQ(a.contains_me(), world_rank() % 2 == 1);
    std::array<int, 3> tri[] = {{3, 0, -1}};
    weft::Group r = w.range_incl(tri);
    EXPECT_EQ(r.compare(w), WEFT_SIMILAR);
    weft::Group u = set_union(a, w);
    EXPECT_EQ(members(u), (V{3, 1, 0, 2}));
    EXPECT_EQ(a.translate(std::vector<int>{0, 1}, w), (V{3, 1}));
    EXPECT_EQ(set_difference(a, a).compare(weft::Group::empty()), WEFT_IDENT);
    try {
        int bad[] = {9};
        (void)w.incl(bad);
        ADD_FAILURE() << "incl of rank 9 did not throw";
    } catch (const weft::error &e) {
        EXPECT_EQ(e.code(), WEFT_ERR_RANK);
    }
}

}  // namespace
