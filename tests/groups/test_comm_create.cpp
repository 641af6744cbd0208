// weft_comm_create (one group, disjoint groups, the whole group, the empty group),
// weft_comm_create_group (a subset while the others do something else, disjoint and overlapping
// groups), from conventional, stream and multiplex parents; weft_comm_compare; names; misuse.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "comm_check.hpp"
#include "weft/weft.hpp"

using namespace groups_test;
using V = std::vector<int>;

namespace {

class Create : public parent_test {};

TEST_P(Create, OneGroup) {
    weft_group g = group_of({3, 1, 0});
    weft_comm c = WEFT_COMM_NULL;
    int rc = weft_comm_create(parent.c, g, &c);
    ASSERT_EQ(rc, 0) << err(rc);
    if (world_rank() == 2) {
        EXPECT_EQ(c, WEFT_COMM_NULL);
    } else {
        check_comm(c, {3, 1, 0}, parent, "create {3, 1, 0}");
        int result = -1;
        ASSERT_EQ(weft_comm_compare(c, parent.c, &result), 0);
        EXPECT_EQ(result, WEFT_UNEQUAL);
        ASSERT_EQ(weft_comm_free(&c), 0);
    }
    weft_group_free(&g);
}

TEST_P(Create, DisjointGroups) {
    V mine = world_rank() % 2 == 0 ? V{0, 2} : V{3, 1};
    weft_group g = group_of(mine);
    weft_comm c = WEFT_COMM_NULL;
    int rc = weft_comm_create(parent.c, g, &c);
    ASSERT_EQ(rc, 0) << err(rc);
    check_comm(c, mine, parent, world_rank() % 2 == 0 ? "create {0, 2}" : "create {3, 1}");
    ASSERT_EQ(weft_comm_free(&c), 0);
    weft_group_free(&g);
}

TEST_P(Create, WholeAndEmptyGroup) {
    weft_group g = WEFT_GROUP_NULL;
    ASSERT_EQ(weft_comm_group(parent.c, &g), 0);
    weft_comm c = WEFT_COMM_NULL;
    ASSERT_EQ(weft_comm_create(parent.c, g, &c), 0);
    check_comm(c, {0, 1, 2, 3}, parent, "create of the parent's group");
    int result = -1;
    ASSERT_EQ(weft_comm_compare(c, parent.c, &result), 0);
    EXPECT_EQ(result, WEFT_CONGRUENT);
    // A communicator made from the new one still keeps the streams.
    weft_comm d = WEFT_COMM_NULL;
    weft_group g2 = group_of({1, 2, 3});
    ASSERT_EQ(weft_comm_create(c, g2, &d), 0);
    if (world_rank() != 0) {
        check_comm(d, {1, 2, 3}, parent, "create {1, 2, 3} from the created communicator");
        ASSERT_EQ(weft_comm_free(&d), 0);
    }
    ASSERT_EQ(weft_comm_free(&c), 0);
    ASSERT_EQ(weft_comm_create(parent.c, WEFT_GROUP_EMPTY, &c), 0);
    EXPECT_EQ(c, WEFT_COMM_NULL);
    weft_group_free(&g);
    weft_group_free(&g2);
}

TEST_P(Create, CreateGroupBySubset) {
    // World ranks 3, 0, 1 make a communicator (rank order 3, 0, 1); world rank 2 meanwhile sends
    // to world rank 0, which receives only after its creation returned, and makes a
    // communicator of its own.
    constexpr int tag = 5;
    const V members = {3, 0, 1};
    weft_group g = group_of(members);
    weft_comm c = WEFT_COMM_NULL;
    if (world_rank() == 2) {
        int msg = 42;
        ASSERT_EQ(weft_send(&msg, 1, WEFT_INT, 0, 21, WEFT_COMM_WORLD), 0);
        // Not a member: no communicator, at once (as in MPICH), nothing sent.
        c = WEFT_COMM_WORLD;
        EXPECT_EQ(weft_comm_create_group(parent.c, g, tag, &c), 0);
        EXPECT_EQ(c, WEFT_COMM_NULL);
        c = WEFT_COMM_WORLD;
        EXPECT_EQ(weft_comm_create_group(parent.c, WEFT_GROUP_EMPTY, tag, &c), 0);
        EXPECT_EQ(c, WEFT_COMM_NULL);
        weft_group alone = group_of({2});
        int rc = weft_comm_create_group(parent.c, alone, tag, &c);
        ASSERT_EQ(rc, 0) << err(rc);
        check_comm(c, {2}, parent, "create_group {2}");
        weft_group_free(&alone);
    } else {
        int rc = weft_comm_create_group(parent.c, g, tag, &c);
        ASSERT_EQ(rc, 0) << err(rc);
        if (world_rank() == 0) {
            int msg = 0;
            ASSERT_EQ(weft_recv(&msg, 1, WEFT_INT, 2, 21, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
            EXPECT_EQ(msg, 42);
        }
        check_comm(c, members, parent, "create_group {3, 0, 1}");
    }
    ASSERT_EQ(weft_comm_free(&c), 0);
    weft_group_free(&g);
}

TEST_P(Create, CreateGroupDisjointAndOverlapping) {
    // Two disjoint groups at once, with the same tag.
    V mine = world_rank() == 0 || world_rank() == 3 ? V{0, 3} : V{2, 1};
    weft_group g = group_of(mine);
    weft_comm c = WEFT_COMM_NULL;
    int rc = weft_comm_create_group(parent.c, g, 9, &c);
    ASSERT_EQ(rc, 0) << err(rc);
    check_comm(c, mine, parent, "create_group of a disjoint pair");
    ASSERT_EQ(weft_comm_free(&c), 0);
    weft_group_free(&g);
    // Overlapping groups one after the other, with one tag: world rank 3 starts the second while
    // 1 and 2 may still be in the first, whose messages must not take its own.
    const V first = {0, 1, 2}, second = {1, 2, 3};
    for (const V *m : {&first, &second}) {
        bool in = std::find(m->begin(), m->end(), world_rank()) != m->end();
        if (!in) continue;
        weft_group gm = group_of(*m);
        rc = weft_comm_create_group(parent.c, gm, 3, &c);
        ASSERT_EQ(rc, 0) << err(rc);
        check_comm(c, *m, parent, m == &first ? "create_group {0, 1, 2}" : "create_group {1, 2, 3}");
        ASSERT_EQ(weft_comm_free(&c), 0);
        weft_group_free(&gm);
    }
}

INSTANTIATE_TEST_SUITE_P(Parents, Create,
                         ::testing::Values(parent_kind::world, parent_kind::stream, parent_kind::multiplex),
                         kind_param_name);

class Comms : public job_test {};

int compare(weft_comm a, weft_comm b) {
    int r = -1;
    int rc = weft_comm_compare(a, b, &r);
    EXPECT_EQ(rc, 0) << err(rc);
    return r;
}

TEST_F(Comms, Compare) {
    EXPECT_EQ(compare(WEFT_COMM_WORLD, WEFT_COMM_WORLD), WEFT_IDENT);
    EXPECT_EQ(compare(WEFT_COMM_SELF, WEFT_COMM_SELF), WEFT_IDENT);
    EXPECT_EQ(compare(WEFT_COMM_WORLD, WEFT_COMM_SELF), WEFT_UNEQUAL);
    weft_comm dup = WEFT_COMM_NULL, rev = WEFT_COMM_NULL, half = WEFT_COMM_NULL, stream_comm = WEFT_COMM_NULL;
    ASSERT_EQ(weft_comm_dup(WEFT_COMM_WORLD, &dup), 0);
    EXPECT_EQ(compare(dup, WEFT_COMM_WORLD), WEFT_CONGRUENT);
    EXPECT_EQ(compare(dup, dup), WEFT_IDENT);
    ASSERT_EQ(weft_comm_split(WEFT_COMM_WORLD, 0, 4 - world_rank(), &rev), 0);
    EXPECT_EQ(compare(rev, WEFT_COMM_WORLD), WEFT_SIMILAR);
    ASSERT_EQ(weft_comm_split(WEFT_COMM_WORLD, world_rank() / 2, 0, &half), 0);
    EXPECT_EQ(compare(half, WEFT_COMM_WORLD), WEFT_UNEQUAL);
    weft_stream s = WEFT_STREAM_NULL;
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0);
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s, &stream_comm), 0);
    EXPECT_EQ(compare(stream_comm, WEFT_COMM_WORLD), WEFT_CONGRUENT);
    int r = -1;
    EXPECT_EQ(weft_comm_compare(WEFT_COMM_NULL, WEFT_COMM_WORLD, &r), WEFT_ERR_COMM);
    EXPECT_EQ(weft_comm_compare(WEFT_COMM_WORLD, WEFT_GROUP_EMPTY, &r), WEFT_ERR_COMM);
    EXPECT_EQ(weft_comm_compare(WEFT_COMM_WORLD, WEFT_COMM_WORLD, nullptr), WEFT_ERR_ARG);
    weft_comm stale = dup;
    ASSERT_EQ(weft_comm_free(&dup), 0);
    EXPECT_EQ(weft_comm_compare(stale, WEFT_COMM_WORLD, &r), WEFT_ERR_COMM);
    ASSERT_EQ(weft_comm_free(&rev), 0);
    ASSERT_EQ(weft_comm_free(&half), 0);
    ASSERT_EQ(weft_comm_free(&stream_comm), 0);
    ASSERT_EQ(weft_stream_free(&s), 0);
}

std::string name_of(weft_comm c) {
    char buf[WEFT_MAX_OBJECT_NAME];
    std::memset(buf, 'x', sizeof buf);
    size_t len = 12345;
    int rc = weft_comm_get_name(c, buf, &len);
    EXPECT_EQ(rc, 0) << err(rc);
    EXPECT_EQ(len, std::strlen(buf));
    return buf;
}

TEST_F(Comms, Names) {
    EXPECT_EQ(name_of(WEFT_COMM_WORLD), "WEFT_COMM_WORLD");
    EXPECT_EQ(name_of(WEFT_COMM_SELF), "WEFT_COMM_SELF");
    weft_comm dup = WEFT_COMM_NULL, dup2 = WEFT_COMM_NULL;
    ASSERT_EQ(weft_comm_dup(WEFT_COMM_WORLD, &dup), 0);
    EXPECT_EQ(name_of(dup), "");
    ASSERT_EQ(weft_comm_set_name(dup, "solver rows"), 0);
    EXPECT_EQ(name_of(dup), "solver rows");
    // Names are not copied by dup.
    ASSERT_EQ(weft_comm_dup(dup, &dup2), 0);
    EXPECT_EQ(name_of(dup2), "");
    // Nor by the copy a dup of a stream communicator starts from.
    weft_stream s = WEFT_STREAM_NULL;
    weft_comm sc = WEFT_COMM_NULL, sc2 = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0);
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s, &sc), 0);
    ASSERT_EQ(weft_comm_set_name(sc, "stream comm"), 0);
    ASSERT_EQ(weft_comm_dup(sc, &sc2), 0);
    EXPECT_EQ(name_of(sc2), "");
    EXPECT_EQ(name_of(sc), "stream comm");
    // Too long: cut to WEFT_MAX_OBJECT_NAME - 1 characters.
    std::string longname(300, 'n');
    ASSERT_EQ(weft_comm_set_name(dup, longname.c_str()), 0);
    EXPECT_EQ(name_of(dup), std::string(WEFT_MAX_OBJECT_NAME - 1, 'n'));
    // World can be renamed, and renamed back.
    ASSERT_EQ(weft_comm_set_name(WEFT_COMM_WORLD, "everyone"), 0);
    EXPECT_EQ(name_of(WEFT_COMM_WORLD), "everyone");
    ASSERT_EQ(weft_comm_set_name(WEFT_COMM_WORLD, "WEFT_COMM_WORLD"), 0);
    ASSERT_EQ(weft_comm_set_name(dup, ""), 0);
    EXPECT_EQ(name_of(dup), "");
    char buf[WEFT_MAX_OBJECT_NAME];
    size_t len = 0;
    EXPECT_EQ(weft_comm_set_name(dup, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_comm_get_name(dup, nullptr, &len), WEFT_ERR_ARG);
    EXPECT_EQ(weft_comm_get_name(dup, buf, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_comm_get_name(WEFT_COMM_NULL, buf, &len), WEFT_ERR_COMM);
    EXPECT_EQ(weft_comm_set_name(WEFT_COMM_NULL, "x"), WEFT_ERR_COMM);
    ASSERT_EQ(weft_comm_free(&dup), 0);
    ASSERT_EQ(weft_comm_free(&dup2), 0);
    ASSERT_EQ(weft_comm_free(&sc), 0);
    ASSERT_EQ(weft_comm_free(&sc2), 0);
    ASSERT_EQ(weft_stream_free(&s), 0);
}

TEST_F(Comms, Misuse) {
    weft_comm c = WEFT_COMM_NULL, half = WEFT_COMM_NULL;
    weft_group world = WEFT_GROUP_NULL;
    ASSERT_EQ(weft_comm_group(WEFT_COMM_WORLD, &world), 0);
    // Every process passes a group that is not a subset of the communicator's: all refuse it
    // before communicating.
    ASSERT_EQ(weft_comm_split(WEFT_COMM_WORLD, world_rank() % 2, 0, &half), 0);
    EXPECT_EQ(weft_comm_create(half, world, &c), WEFT_ERR_GROUP);
    EXPECT_NE(harness::detail().find("subset"), std::string::npos) << harness::detail();
    EXPECT_EQ(weft_comm_create_group(half, world, 0, &c), WEFT_ERR_GROUP);
    EXPECT_EQ(c, WEFT_COMM_NULL);
    EXPECT_EQ(weft_comm_create(WEFT_COMM_WORLD, WEFT_GROUP_NULL, &c), WEFT_ERR_GROUP);
    EXPECT_EQ(weft_comm_create(WEFT_COMM_NULL, world, &c), WEFT_ERR_COMM);
    EXPECT_EQ(weft_comm_create(WEFT_COMM_WORLD, world, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_comm_create_group(WEFT_COMM_WORLD, world, -1, &c), WEFT_ERR_TAG);
    EXPECT_EQ(weft_comm_create_group(WEFT_COMM_WORLD, world, WEFT_TAG_UB + 1, &c), WEFT_ERR_TAG);
    weft_group stale = world;
    ASSERT_EQ(weft_group_free(&world), 0);
    EXPECT_EQ(weft_comm_create(WEFT_COMM_WORLD, stale, &c), WEFT_ERR_GROUP);
    EXPECT_EQ(weft_comm_create_group(WEFT_COMM_WORLD, stale, 0, &c), WEFT_ERR_GROUP);
    EXPECT_EQ(c, WEFT_COMM_NULL);
    ASSERT_EQ(weft_comm_free(&half), 0);
}

TEST_F(Comms, CxxLayer) {
    weft::Group w = weft::Group::of(weft::Comm::world());
    int keep[] = {0, 1, 2};
    weft::Group g = w.incl(keep);
    weft::UniqueComm c = weft::create(weft::Comm::world(), g);
    EXPECT_EQ(static_cast<bool>(c), world_rank() != 3);
    if (c) {
        EXPECT_EQ(c.size(), 3);
        EXPECT_EQ(weft::compare(c, weft::Comm::world()), WEFT_UNEQUAL);
        weft::set_name(c, "three");
        EXPECT_EQ(weft::get_name(c), "three");
        weft::UniqueComm d = weft::create_group(c, g, 4);
        EXPECT_EQ(weft::compare(c, d), WEFT_CONGRUENT);
    }
    EXPECT_EQ(weft::get_name(weft::Comm::self()), "WEFT_COMM_SELF");
}

}  // namespace
