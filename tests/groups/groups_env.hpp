// Shared pieces of the group and communicator-creation tests.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collective_test.hpp"
#include "error_detail.hpp"
#include "watchdog.hpp"
#include "weft/weft.h"
#include "weft_env.hpp"

namespace groups_test {

using harness::err;
using harness::step;
using harness::world_rank;
using harness::world_size;

constexpr int undefined = static_cast<int>(WEFT_UNDEFINED);

// A test that every process runs in step (the expected values are written for 4 processes).
class job_test : public harness::collective_test<> {
  protected:
    void SetUp() override {
        harness::collective_test<>::SetUp();
        if (world_size() != 4) GTEST_SKIP() << "written for 4 processes";
    }
};

// The world ranks of g's members, in group order (empty on failure, with a test failure).
inline std::vector<int> members(weft_group g) {
    int n = -1;
    EXPECT_EQ(weft_group_size(g, &n), 0) << err(weft_group_size(g, &n));
    if (n < 0) return {};
    weft_group world = WEFT_GROUP_NULL;
    EXPECT_EQ(weft_comm_group(WEFT_COMM_WORLD, &world), 0);
    std::vector<int> ranks(static_cast<size_t>(n)), out(static_cast<size_t>(n), -7);
    for (int i = 0; i < n; ++i) ranks[static_cast<size_t>(i)] = i;
    int rc = weft_group_translate_ranks(g, ranks.size(), ranks.data(), world, out.data());
    EXPECT_EQ(rc, 0) << err(rc);
    weft_group_free(&world);
    return out;
}

// The group of these world ranks.
inline weft_group group_of(const std::vector<int> &world_ranks) {
    weft_group world = WEFT_GROUP_NULL, g = WEFT_GROUP_NULL;
    EXPECT_EQ(weft_comm_group(WEFT_COMM_WORLD, &world), 0);
    int rc = weft_group_incl(world, world_ranks.size(), world_ranks.data(), &g);
    EXPECT_EQ(rc, 0) << err(rc);
    weft_group_free(&world);
    return g;
}

// The world ranks of comm's processes, in comm rank order.
inline std::vector<int> comm_members(weft_comm c) {
    weft_group g = WEFT_GROUP_NULL;
    int rc = weft_comm_group(c, &g);
    EXPECT_EQ(rc, 0) << err(rc);
    std::vector<int> m = members(g);
    weft_group_free(&g);
    return m;
}

}  // namespace groups_test
