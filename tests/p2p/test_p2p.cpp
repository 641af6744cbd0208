// Point-to-point across processes: run with 2 and 4 processes.
#include <cstring>
#include <numeric>
#include <vector>

#include "p2p_env.hpp"

using namespace p2p_test;

namespace {

class P2P : public collective_test {};

TEST_F(P2P, RingOfEveryRank) {
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    int out = 1000 + world_rank(), in = -1;
    weft_request req;
    weft_status st;
    ASSERT_EQ(weft_irecv(&in, 1, WEFT_INT, prev, 3, WEFT_COMM_WORLD, &req), 0);
    ASSERT_EQ(weft_send(&out, 1, WEFT_INT, next, 3, WEFT_COMM_WORLD), 0);
    ASSERT_EQ(weft_wait(&req, &st), 0);
    EXPECT_EQ(req, WEFT_REQUEST_NULL);
    EXPECT_EQ(in, 1000 + prev);
    EXPECT_EQ(st.source, prev);
    EXPECT_EQ(st.tag, 3);
    EXPECT_EQ(st.error, 0);
    size_t count = 0;
    weft_get_count(&st, WEFT_INT, &count);
    EXPECT_EQ(count, 1u);
}

// Messages from one sender with one tag arrive in the order sent, even received by wildcard.
TEST_F(P2P, NonOvertakingOrder) {
    constexpr int n = 1000;
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    std::vector<weft_request> reqs(n);
    std::vector<int> got(n, -1);
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(
            weft_irecv(&got[i], 1, WEFT_INT, world_size() == 2 ? WEFT_ANY_SOURCE : prev, 9, WEFT_COMM_WORLD, &reqs[i]),
            0);
    for (int i = 0; i < n; ++i) ASSERT_EQ(weft_send(&i, 1, WEFT_INT, next, 9, WEFT_COMM_WORLD), 0);
    ASSERT_EQ(weft_waitall(n, reqs.data(), WEFT_STATUSES_IGNORE), 0);
    for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], i) << "message " << i << " out of order";
}

// Unexpected messages (sent before the receive exists) also keep their order.
TEST_F(P2P, UnexpectedMessagesKeepOrder) {
    constexpr int n = 200;
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    std::vector<weft_request> sends(n);
    std::vector<int> vals(n);
    std::iota(vals.begin(), vals.end(), 0);
    for (int i = 0; i < n; ++i) ASSERT_EQ(weft_isend(&vals[i], 1, WEFT_INT, next, 4, WEFT_COMM_WORLD, &sends[i]), 0);
    p2p_barrier();  // every message is now unexpected at its receiver
    for (int i = 0; i < n; ++i) {
        int v = -1;
        ASSERT_EQ(weft_recv(&v, 1, WEFT_INT, prev, 4, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
        ASSERT_EQ(v, i);
    }
    ASSERT_EQ(weft_waitall(n, sends.data(), WEFT_STATUSES_IGNORE), 0);
}

TEST_F(P2P, AnySourceAnyTag) {
    if (world_rank() == 0) {
        std::vector<int> seen(world_size(), 0);
        for (int i = 1; i < world_size(); ++i) {
            int v = -1;
            weft_status st;
            ASSERT_EQ(weft_recv(&v, 1, WEFT_INT, WEFT_ANY_SOURCE, WEFT_ANY_TAG, WEFT_COMM_WORLD, &st), 0);
            EXPECT_EQ(st.tag, 100 + st.source);
            EXPECT_EQ(v, st.source * 7);
            ASSERT_GT(st.source, 0);
            ASSERT_LT(st.source, world_size());
            seen[st.source]++;
        }
        for (int i = 1; i < world_size(); ++i) EXPECT_EQ(seen[i], 1) << "rank " << i;
        // Release the senders only now: their barrier messages must not meet the wildcard.
        for (int i = 1; i < world_size(); ++i) ASSERT_EQ(weft_send(nullptr, 0, WEFT_INT, i, 101, WEFT_COMM_WORLD), 0);
    } else {
        int v = world_rank() * 7;
        ASSERT_EQ(weft_send(&v, 1, WEFT_INT, 0, 100 + world_rank(), WEFT_COMM_WORLD), 0);
        ASSERT_EQ(weft_recv(nullptr, 0, WEFT_INT, 0, 101, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
    }
}

// A tag-specific receive skips a message with another tag from the same sender.
TEST_F(P2P, TagSelectsMessage) {
    if (world_size() < 2) GTEST_SKIP() << "needs 2 processes";
    if (world_rank() == 1) {
        int a = 1, b = 2;
        ASSERT_EQ(weft_send(&a, 1, WEFT_INT, 0, 11, WEFT_COMM_WORLD), 0);
        ASSERT_EQ(weft_send(&b, 1, WEFT_INT, 0, 12, WEFT_COMM_WORLD), 0);
    } else if (world_rank() == 0) {
        int v = 0;
        ASSERT_EQ(weft_recv(&v, 1, WEFT_INT, 1, 12, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
        EXPECT_EQ(v, 2);
        ASSERT_EQ(weft_recv(&v, 1, WEFT_INT, 1, 11, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
        EXPECT_EQ(v, 1);
    }
}

TEST_F(P2P, TruncationIsReported) {
    if (world_size() < 2) GTEST_SKIP() << "needs 2 processes";
    if (world_rank() == 1) {
        std::vector<char> big(100, 'x');
        ASSERT_EQ(weft_send(big.data(), big.size(), WEFT_CHAR, 0, 5, WEFT_COMM_WORLD), 0);
        int after = 42;
        ASSERT_EQ(weft_send(&after, 1, WEFT_INT, 0, 6, WEFT_COMM_WORLD), 0);
    } else if (world_rank() == 0) {
        char small[10];
        weft_status st;
        EXPECT_EQ(weft_recv(small, sizeof small, WEFT_CHAR, 1, 5, WEFT_COMM_WORLD, &st), WEFT_ERR_TRUNCATE);
        EXPECT_EQ(st.error, WEFT_ERR_TRUNCATE);
        // Later traffic is unaffected.
        int after = 0;
        ASSERT_EQ(weft_recv(&after, 1, WEFT_INT, 1, 6, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
        EXPECT_EQ(after, 42);
    }
}

TEST_F(P2P, ZeroByteMessage) {
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    weft_request req;
    weft_status st;
    ASSERT_EQ(weft_irecv(nullptr, 0, WEFT_BYTE, prev, 8, WEFT_COMM_WORLD, &req), 0);
    ASSERT_EQ(weft_send(nullptr, 0, WEFT_BYTE, next, 8, WEFT_COMM_WORLD), 0);
    ASSERT_EQ(weft_wait(&req, &st), 0);
    size_t count = 99;
    weft_get_count(&st, WEFT_BYTE, &count);
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(st.source, prev);
}

TEST_F(P2P, LargeMessage64MiB) {
    const size_t n = (64u << 20) / sizeof(uint32_t) + 3;  // just over 64 MiB
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    std::vector<uint32_t> out(n), in(n, 0);
    for (size_t i = 0; i < n; ++i)
        out[i] = static_cast<uint32_t>(i * 2654435761u) ^ static_cast<uint32_t>(world_rank());
    weft_request req;
    weft_status st;
    ASSERT_EQ(weft_irecv(in.data(), n, WEFT_UINT32_T, prev, 2, WEFT_COMM_WORLD, &req), 0);
    ASSERT_EQ(weft_send(out.data(), n, WEFT_UINT32_T, next, 2, WEFT_COMM_WORLD), 0);
    ASSERT_EQ(weft_wait(&req, &st), 0);
    size_t count = 0;
    weft_get_count(&st, WEFT_UINT32_T, &count);
    EXPECT_EQ(count, n);
    for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(in[i], static_cast<uint32_t>(i * 2654435761u) ^ static_cast<uint32_t>(prev)) << "at " << i;
}

TEST_F(P2P, ManySmallMessagesWithWindow) {
    constexpr int total = 20000, window = 64;
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    std::vector<int64_t> in(window), out(window);
    std::vector<weft_request> reqs(2 * window);
    for (int base = 0; base < total; base += window) {
        for (int i = 0; i < window; ++i) {
            out[i] = base + i;
            ASSERT_EQ(weft_irecv(&in[i], 1, WEFT_INT64_T, prev, 1, WEFT_COMM_WORLD, &reqs[i]), 0);
        }
        for (int i = 0; i < window; ++i)
            ASSERT_EQ(weft_isend(&out[i], 1, WEFT_INT64_T, next, 1, WEFT_COMM_WORLD, &reqs[window + i]), 0);
        ASSERT_EQ(weft_waitall(reqs.size(), reqs.data(), WEFT_STATUSES_IGNORE), 0);
        for (int i = 0; i < window; ++i) ASSERT_EQ(in[i], base + i);
    }
}

// Small sends that the fabric finishes inside weft_isend share one request that is complete
// from the start (MPICH's lightweight requests): every call that completes a send must accept
// it, give a send's status, and set the handle to WEFT_REQUEST_NULL, while the receives on the
// same endpoint keep requests of their own.
TEST_F(P2P, SendsFinishedAtOnceCompleteThroughEveryCall) {
    constexpr int n = 200;
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    std::vector<int> in(n, -1), out(n);
    std::vector<weft_request> rreq(n), sreq(n);
    for (int i = 0; i < n; ++i) ASSERT_EQ(weft_irecv(&in[i], 1, WEFT_INT, prev, 21, WEFT_COMM_WORLD, &rreq[i]), 0);
    for (int i = 0; i < n; ++i) {
        out[i] = i * 7 + world_rank();
        ASSERT_EQ(weft_isend(&out[i], 1, WEFT_INT, next, 21, WEFT_COMM_WORLD, &sreq[i]), 0);
        ASSERT_NE(sreq[i], WEFT_REQUEST_NULL);
    }
    EXPECT_EQ(weft_cancel(&sreq[0]), WEFT_ERR_UNSUPPORTED);  // as for any send
    weft_status st;
    for (int i = 0; i < n / 4; ++i) {
        ASSERT_EQ(weft_wait(&sreq[i], &st), 0);
        EXPECT_EQ(st.error, 0);
        size_t count = 1;
        EXPECT_EQ(weft_get_count(&st, WEFT_BYTE, &count), 0);
        EXPECT_EQ(count, 0u);  // a send's status carries no received bytes
        EXPECT_EQ(sreq[i], WEFT_REQUEST_NULL);
    }
    for (int i = n / 4; i < n / 2; ++i) {
        int flag = 0;
        while (!flag) ASSERT_EQ(weft_test(&sreq[i], &flag, WEFT_STATUS_IGNORE), 0);
        EXPECT_EQ(sreq[i], WEFT_REQUEST_NULL);
    }
    std::vector<weft_status> sts(n / 2);
    ASSERT_EQ(weft_waitall(n / 2, &sreq[n / 2], sts.data()), 0);
    for (int i = n / 2; i < n; ++i) {
        EXPECT_EQ(sreq[i], WEFT_REQUEST_NULL);
        EXPECT_EQ(sts[i - n / 2].error, 0);
    }
    ASSERT_EQ(weft_waitall(n, rreq.data(), WEFT_STATUSES_IGNORE), 0);
    for (int i = 0; i < n; ++i) ASSERT_EQ(in[i], i * 7 + prev) << "message " << i;
}

TEST_F(P2P, ProbeThenReceive) {
    if (world_size() < 2) GTEST_SKIP() << "needs 2 processes";
    if (world_rank() == 1) {
        std::vector<char> msg(1234, 'p');
        ASSERT_EQ(weft_send(msg.data(), msg.size(), WEFT_CHAR, 0, 7, WEFT_COMM_WORLD), 0);
    } else if (world_rank() == 0) {
        weft_status st;
        ASSERT_EQ(weft_probe(WEFT_ANY_SOURCE, 7, WEFT_COMM_WORLD, &st), 0);
        EXPECT_EQ(st.source, 1);
        EXPECT_EQ(st.tag, 7);
        size_t count = 0;
        weft_get_count(&st, WEFT_CHAR, &count);
        ASSERT_EQ(count, 1234u);
        // The probe did not consume it.
        std::vector<char> buf(count);
        ASSERT_EQ(weft_recv(buf.data(), count, WEFT_CHAR, st.source, st.tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
        EXPECT_EQ(buf[1233], 'p');
        int flag = 1;
        ASSERT_EQ(weft_iprobe(1, 7, WEFT_COMM_WORLD, &flag, WEFT_STATUS_IGNORE), 0);
        EXPECT_EQ(flag, 0);
    }
}

TEST_F(P2P, VectorDatatype) {
    // Send every other int of 20 as a vector; receive them contiguous.
    weft_datatype every_other;
    ASSERT_EQ(weft_type_vector(10, 1, 2, WEFT_INT, &every_other), 0);
    ASSERT_EQ(weft_type_commit(&every_other), 0);
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    std::vector<int> src(20), dst(10, -1);
    std::iota(src.begin(), src.end(), world_rank() * 100);
    weft_request req;
    ASSERT_EQ(weft_irecv(dst.data(), 10, WEFT_INT, prev, 13, WEFT_COMM_WORLD, &req), 0);
    ASSERT_EQ(weft_send(src.data(), 1, every_other, next, 13, WEFT_COMM_WORLD), 0);
    ASSERT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), 0);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(dst[i], prev * 100 + 2 * i);
    // And the other way: contiguous in, strided out.
    std::vector<int> strided(20, -1);
    ASSERT_EQ(weft_irecv(strided.data(), 1, every_other, prev, 14, WEFT_COMM_WORLD, &req), 0);
    ASSERT_EQ(weft_type_free(&every_other), 0);  // the pending receive keeps it alive
    ASSERT_EQ(weft_send(dst.data(), 10, WEFT_INT, next, 14, WEFT_COMM_WORLD), 0);
    ASSERT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), 0);
    int prev2 = (prev + world_size() - 1) % world_size();  // dst came from prev; prev's dst from prev2
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(strided[2 * i], prev2 * 100 + 2 * i);
        EXPECT_EQ(strided[2 * i + 1], -1);
    }
}

TEST_F(P2P, WaitanyAndTestall) {
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    int a = -1, b = -1;
    weft_request reqs[3] = {WEFT_REQUEST_NULL, WEFT_REQUEST_NULL, WEFT_REQUEST_NULL};
    ASSERT_EQ(weft_irecv(&a, 1, WEFT_INT, prev, 21, WEFT_COMM_WORLD, &reqs[0]), 0);
    ASSERT_EQ(weft_irecv(&b, 1, WEFT_INT, prev, 22, WEFT_COMM_WORLD, &reqs[2]), 0);
    int flag = 1;
    ASSERT_EQ(weft_testall(3, reqs, &flag, WEFT_STATUSES_IGNORE), 0);
    EXPECT_EQ(flag, 0);
    int v = 5;
    ASSERT_EQ(weft_send(&v, 1, WEFT_INT, next, 22, WEFT_COMM_WORLD), 0);
    size_t index = 0;
    weft_status st;
    ASSERT_EQ(weft_waitany(3, reqs, &index, &st), 0);
    EXPECT_EQ(index, 2u);
    EXPECT_EQ(b, 5);
    EXPECT_EQ(st.tag, 22);
    p2p_barrier();  // nobody sends tag 21 before every rank has seen waitany pick tag 22
    ASSERT_EQ(weft_send(&v, 1, WEFT_INT, next, 21, WEFT_COMM_WORLD), 0);
    do {
        ASSERT_EQ(weft_testall(3, reqs, &flag, WEFT_STATUSES_IGNORE), 0);
    } while (!flag);
    EXPECT_EQ(a, 5);
    ASSERT_EQ(weft_waitany(3, reqs, &index, &st), 0);
    EXPECT_EQ(index, WEFT_UNDEFINED);
}

TEST_F(P2P, SendToSelfAndCommSelf) {
    int v = 77, w = 0;
    weft_request req;
    ASSERT_EQ(weft_irecv(&w, 1, WEFT_INT, world_rank(), 30, WEFT_COMM_WORLD, &req), 0);
    ASSERT_EQ(weft_send(&v, 1, WEFT_INT, world_rank(), 30, WEFT_COMM_WORLD), 0);
    ASSERT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), 0);
    EXPECT_EQ(w, 77);
    ASSERT_EQ(weft_isend(&v, 1, WEFT_INT, 0, 31, WEFT_COMM_SELF, &req), 0);
    weft_status st;
    ASSERT_EQ(weft_recv(&w, 1, WEFT_INT, 0, 31, WEFT_COMM_SELF, &st), 0);
    EXPECT_EQ(st.source, 0);
    ASSERT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), 0);
}

TEST_F(P2P, ProcNull) {
    int v = 1;
    weft_status st;
    ASSERT_EQ(weft_send(&v, 1, WEFT_INT, WEFT_PROC_NULL, 0, WEFT_COMM_WORLD), 0);
    ASSERT_EQ(weft_recv(&v, 1, WEFT_INT, WEFT_PROC_NULL, 0, WEFT_COMM_WORLD, &st), 0);
    EXPECT_EQ(st.source, WEFT_PROC_NULL);
    size_t count = 9;
    weft_get_count(&st, WEFT_INT, &count);
    EXPECT_EQ(count, 0u);
}

TEST_F(P2P, CancelUnmatchedReceive) {
    int v = 0;
    weft_request req;
    weft_status st;
    ASSERT_EQ(weft_irecv(&v, 1, WEFT_INT, WEFT_ANY_SOURCE, 999, WEFT_COMM_WORLD, &req), 0);
    ASSERT_EQ(weft_cancel(&req), 0);
    ASSERT_EQ(weft_wait(&req, &st), 0);
    int cancelled = 0;
    weft_test_cancelled(&st, &cancelled);
    EXPECT_EQ(cancelled, 1);
}

}  // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    ::testing::AddGlobalTestEnvironment(new p2p_test::environment);
    return RUN_ALL_TESTS();
}
