// Under WEFT_THREAD_MULTIPLE (groups.threads.np4): two threads per process create communicators
// at once from the same parent over the same group, told apart only by their tags
// (weft_comm_create_group: the agreements' messages travel between the same processes on the
// same context), or from two parents (weft_comm_idup).
#include <thread>
#include <vector>

#include "comm_check.hpp"

using namespace groups_test;
using V = std::vector<int>;

namespace {

// Enough rounds that agreements from the two threads interleave at every process.
constexpr int rounds = 30;

class Threads : public job_test {
  protected:
    void SetUp() override {
        job_test::SetUp();
        if (IsSkipped()) return;
        int provided = -1;
        weft_query_thread(&provided);
        if (provided < WEFT_THREAD_MULTIPLE) GTEST_SKIP() << "needs WEFT_THREAD_MULTIPLE (run with --thread=multiple)";
    }
};

TEST_F(Threads, CreateGroupOnOneGroupWithTwoTags) {
    const V forward = {0, 1, 2, 3}, backward = {3, 2, 1, 0};
    parent_comm world;  // WEFT_COMM_WORLD
    auto run = [&](const V &m, int tag) {
        for (int round = 0; round < 3; ++round) {
            weft_group g = group_of(m);
            weft_comm c = WEFT_COMM_NULL;
            int rc = weft_comm_create_group(WEFT_COMM_WORLD, g, tag, &c);
            ASSERT_EQ(rc, 0) << err(rc);
            check_comm(c, m, world, "create_group with tag " + std::to_string(tag));
            ASSERT_EQ(weft_comm_free(&c), 0);
            weft_group_free(&g);
        }
    };
    std::thread a(run, forward, 100), b(run, forward, 200);
    a.join();
    b.join();
    // And over the same processes in two orders.
    a = std::thread(run, forward, 300);
    b = std::thread(run, backward, 400);
    a.join();
    b.join();
}

TEST_F(Threads, IdupsOnTwoParents) {
    weft_comm parents[2];
    for (weft_comm &p : parents) ASSERT_EQ(weft_comm_dup(WEFT_COMM_WORLD, &p), 0);
    parent_comm view;
    auto run = [&](weft_comm parent) {
        for (int round = 0; round < rounds; ++round) {
            weft_comm c = WEFT_COMM_NULL;
            weft_request r = WEFT_REQUEST_NULL;
            int rc = weft_comm_idup(parent, &c, &r);
            ASSERT_EQ(rc, 0) << err(rc);
            rc = weft_wait(&r, WEFT_STATUS_IGNORE);
            ASSERT_EQ(rc, 0) << err(rc);
            check_comm(c, {0, 1, 2, 3}, view, "idup from a thread");
            ASSERT_EQ(weft_comm_free(&c), 0);
        }
    };
    std::thread a(run, parents[0]), b(run, parents[1]);
    a.join();
    b.join();
    for (weft_comm &p : parents) ASSERT_EQ(weft_comm_free(&p), 0);
}

}  // namespace
