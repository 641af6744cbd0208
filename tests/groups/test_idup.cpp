// weft_comm_idup: on every parent kind, overlapped with point-to-point to a process that reaches
// its own idup only after that traffic (a blocking dup would deadlock there), several at once
// (their contexts must differ), ordered with a blocking dup and a collective, completed by test,
// and misuse.
#include <sched.h>

#include <vector>

#include "comm_check.hpp"
#include "weft/weft.hpp"

using namespace groups_test;

namespace {

class Idup : public parent_test {};

TEST_P(Idup, CompletesAndKeepsStreams) {
    weft_comm c = WEFT_COMM_NULL;
    weft_request r = WEFT_REQUEST_NULL;
    int rc = weft_comm_idup(parent.c, &c, &r);
    ASSERT_EQ(rc, 0) << err(rc);
    EXPECT_NE(c, WEFT_COMM_NULL) << "the handle is set at the call";
    ASSERT_EQ(weft_wait(&r, WEFT_STATUS_IGNORE), 0);
    EXPECT_EQ(r, WEFT_REQUEST_NULL);
    check_comm(c, {0, 1, 2, 3}, parent, "idup");
    int result = -1;
    ASSERT_EQ(weft_comm_compare(c, parent.c, &result), 0);
    EXPECT_EQ(result, WEFT_CONGRUENT);
    ASSERT_EQ(weft_comm_free(&c), 0);
}

TEST_P(Idup, OverlapsPointToPointWithALaterPeer) {
    // World rank 0 starts its idup, then sends to world rank 1 (a short and a rendezvous-sized
    // message), which calls idup only once both arrived.  Until then rank 0's idup cannot have
    // completed, and its communicator cannot be freed.
    std::vector<int> big(300000);
    weft_comm c = WEFT_COMM_NULL;
    weft_request r = WEFT_REQUEST_NULL;
    if (world_rank() == 1) {
        int small = 0;
        ASSERT_EQ(weft_recv(&small, 1, WEFT_INT, 0, 31, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
        ASSERT_EQ(weft_recv(big.data(), big.size(), WEFT_INT, 0, 32, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
        EXPECT_EQ(small, 5);
        EXPECT_EQ(big.back(), 9);
    }
    int rc = weft_comm_idup(parent.c, &c, &r);
    ASSERT_EQ(rc, 0) << err(rc);
    if (world_rank() == 0) {
        weft_comm early = c;
        EXPECT_EQ(weft_comm_free(&early), WEFT_ERR_BUSY) << "freed before its idup completed";
        int flag = 1;
        ASSERT_EQ(weft_test(&r, &flag, WEFT_STATUS_IGNORE), 0);
        EXPECT_EQ(flag, 0) << "idup completed before rank 1 called it";
        int small = 5;
        big.back() = 9;
        ASSERT_EQ(weft_send(&small, 1, WEFT_INT, 1, 31, WEFT_COMM_WORLD), 0);
        ASSERT_EQ(weft_send(big.data(), big.size(), WEFT_INT, 1, 32, WEFT_COMM_WORLD), 0);
    }
    ASSERT_EQ(weft_wait(&r, WEFT_STATUS_IGNORE), 0);
    check_comm(c, {0, 1, 2, 3}, parent, "idup overlapped with point-to-point");
    ASSERT_EQ(weft_comm_free(&c), 0);
}

TEST_P(Idup, SeveralAtOnceWithOtherCollectives) {
    // Three idups, a blocking dup and an allreduce on the parent before any idup completes; then
    // messages on every new communicator with one tag, received in the reverse order of sending:
    // a context shared by two of them would deliver the wrong value.
    constexpr int n = 3;
    weft_comm c[n + 1];
    weft_request r[n];
    for (int i = 0; i < n; ++i) {
        int rc = weft_comm_idup(parent.c, &c[i], &r[i]);
        ASSERT_EQ(rc, 0) << err(rc);
    }
    ASSERT_EQ(weft_comm_dup(parent.c, &c[n]), 0);
    int one = 1, sum = 0;
    ASSERT_EQ(weft_allreduce(&one, &sum, 1, WEFT_INT, WEFT_SUM, parent.c), 0);
    EXPECT_EQ(sum, 4);
    // Completed in reverse order, the last by a test loop.
    ASSERT_EQ(weft_wait(&r[2], WEFT_STATUS_IGNORE), 0);
    ASSERT_EQ(weft_waitall(1, &r[1], WEFT_STATUSES_IGNORE), 0);
    for (int flag = 0; !flag;) {
        ASSERT_EQ(weft_test(&r[0], &flag, WEFT_STATUS_IGNORE), 0);
        if (!flag) sched_yield();
    }
    const int next = (world_rank() + 1) % 4, prev = (world_rank() + 3) % 4;
    weft_request sends[n + 1];
    int out[n + 1], in[n + 1];
    const bool multiplex = parent.k == parent_kind::multiplex;
    for (int i = 0; i <= n; ++i) {
        out[i] = i * 10 + world_rank();
        int rc = multiplex ? weft_stream_isend(&out[i], 1, WEFT_INT, next, 8, c[i], 0, 0, &sends[i])
                           : weft_isend(&out[i], 1, WEFT_INT, next, 8, c[i], &sends[i]);
        ASSERT_EQ(rc, 0) << err(rc);
    }
    for (int i = n; i >= 0; --i) {
        int rc = multiplex ? weft_stream_recv(&in[i], 1, WEFT_INT, prev, 8, c[i], 0, 0, WEFT_STATUS_IGNORE)
                           : weft_recv(&in[i], 1, WEFT_INT, prev, 8, c[i], WEFT_STATUS_IGNORE);
        ASSERT_EQ(rc, 0) << err(rc);
        EXPECT_EQ(in[i], i * 10 + prev) << "communicator " << i << " got another's message";
    }
    ASSERT_EQ(weft_waitall(n + 1, sends, WEFT_STATUSES_IGNORE), 0);
    for (int i = 0; i <= n; ++i) ASSERT_EQ(weft_comm_free(&c[i]), 0);
}

INSTANTIATE_TEST_SUITE_P(Parents, Idup,
                         ::testing::Values(parent_kind::world, parent_kind::stream, parent_kind::multiplex),
                         kind_param_name);

class IdupMisuse : public job_test {};

TEST_F(IdupMisuse, Arguments) {
    weft_comm c = WEFT_COMM_NULL;
    weft_request r = WEFT_REQUEST_NULL;
    EXPECT_EQ(weft_comm_idup(WEFT_COMM_NULL, &c, &r), WEFT_ERR_COMM);
    EXPECT_EQ(weft_comm_idup(WEFT_COMM_WORLD, nullptr, &r), WEFT_ERR_ARG);
    EXPECT_EQ(weft_comm_idup(WEFT_COMM_WORLD, &c, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(c, WEFT_COMM_NULL);
    EXPECT_EQ(r, WEFT_REQUEST_NULL);
    // The C++ layer: the communicator is usable once the request completed.
    weft::IdupResult d = weft::idup(weft::Comm::world());
    d.request.wait();
    EXPECT_EQ(weft::compare(d.comm, weft::Comm::world()), WEFT_CONGRUENT);
    d.comm.barrier();
}

}  // namespace
