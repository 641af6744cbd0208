// Synchronous sends, sendrecv and matched probe (weft.h), with 2 processes, under
// WEFT_THREAD_MULTIPLE (the matched probe's test runs two threads).  Rank 0 and rank 1 talk;
// tests that need a second channel that is not the one under test use `ctl_`, a dup of
// WEFT_COMM_WORLD.
#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include "collective_test.hpp"
#include "error_detail.hpp"
#include "weft/weft.h"
#include "weft/weft.hpp"

using harness::detail;
using harness::err;
using harness::world_rank;
using harness::world_size;

namespace {

class environment : public ::testing::Environment {
  public:
    void SetUp() override {
        int provided = 0;
        ASSERT_EQ(weft_init_thread(nullptr, nullptr, WEFT_THREAD_MULTIPLE, &provided), WEFT_SUCCESS);
        ASSERT_EQ(provided, WEFT_THREAD_MULTIPLE);
    }
    void TearDown() override { ASSERT_EQ(weft_finalize(), WEFT_SUCCESS); }
};

class Sync : public harness::collective_test<> {
  protected:
    weft_comm ctl_ = WEFT_COMM_NULL;
    int peer_ = -1;
    void SetUp() override {
        harness::collective_test<>::SetUp();
        if (world_size() != 2) GTEST_SKIP() << "needs exactly 2 processes";
        peer_ = 1 - world_rank();
        ASSERT_EQ(weft_comm_dup(WEFT_COMM_WORLD, &ctl_), 0) << detail();
    }
    void TearDown() override {
        if (ctl_ != WEFT_COMM_NULL) {
            EXPECT_EQ(weft_comm_free(&ctl_), 0) << detail();
        }
        harness::collective_test<>::TearDown();
    }
    // One byte on ctl_ (a different context from anything under test).
    void signal(int tag) {
        char b = 0;
        ASSERT_EQ(weft_send(&b, 1, WEFT_CHAR, peer_, tag, ctl_), 0) << detail();
    }
    void await(int tag) {
        char b = 0;
        ASSERT_EQ(weft_recv(&b, 1, WEFT_CHAR, peer_, tag, ctl_, WEFT_STATUS_IGNORE), 0) << detail();
    }
};

// The receiver has the message (probed) but has not posted a receive: the issend stays
// incomplete however often it is tested; once the receive is posted it completes.  Small
// (eager: the send itself finishes at once) and large (rendezvous) messages.
TEST_F(Sync, IssendWaitsForTheReceive) {
    for (size_t n : {size_t{1}, size_t{1} << 18}) {
        std::vector<int> buf(n);
        if (world_rank() == 0) {
            std::iota(buf.begin(), buf.end(), 7);
            weft_request req = WEFT_REQUEST_NULL;
            ASSERT_EQ(weft_issend(buf.data(), n, WEFT_INT, 1, 5, WEFT_COMM_WORLD, &req), 0) << detail();
            await(1);  // the receiver has probed the message and posts nothing until signalled
            for (int i = 0; i < 200; ++i) {
                int flag = 1;
                ASSERT_EQ(weft_test(&req, &flag, WEFT_STATUS_IGNORE), 0) << detail();
                ASSERT_EQ(flag, 0) << "issend of " << n << " ints completed before the receive was posted (test " << i
                                   << ")";
                if (i % 20 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            signal(2);
            ASSERT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), 0) << detail();
            EXPECT_EQ(req, WEFT_REQUEST_NULL);
        } else {
            weft_status st;
            ASSERT_EQ(weft_probe(0, 5, WEFT_COMM_WORLD, &st), 0) << detail();
            // A synchronous message probes like any other.
            EXPECT_EQ(st.source, 0);
            EXPECT_EQ(st.tag, 5);
            size_t count = 0;
            ASSERT_EQ(weft_get_count(&st, WEFT_INT, &count), 0);
            EXPECT_EQ(count, n);
            signal(1);
            await(2);
            ASSERT_EQ(weft_recv(buf.data(), n, WEFT_INT, 0, 5, WEFT_COMM_WORLD, &st), 0) << detail();
            EXPECT_EQ(st.source, 0);
            EXPECT_EQ(buf[0], 7);
            EXPECT_EQ(buf[n - 1], static_cast<int>(7 + n - 1));
        }
    }
}

// weft_ssend_init: each run is synchronous (incomplete while the receiver has probed but not
// posted), and the handle survives every run.
TEST_F(Sync, PersistentSsendEachRunWaitsForTheReceive) {
    int v = 0;
    if (world_rank() == 0) {
        weft_request req = WEFT_REQUEST_NULL;
        ASSERT_EQ(weft_ssend_init(&v, 1, WEFT_INT, 1, 8, WEFT_COMM_WORLD, &req), 0) << detail();
        const weft_request handle = req;
        for (int run = 0; run < 5; ++run) {
            v = 100 + run;
            ASSERT_EQ(weft_start(&req), 0) << detail();
            await(1);  // probed, not received
            for (int i = 0; i < 50; ++i) {
                int flag = 1;
                ASSERT_EQ(weft_test(&req, &flag, WEFT_STATUS_IGNORE), 0) << detail();
                ASSERT_EQ(flag, 0) << "run " << run << " completed before the receive was posted";
            }
            signal(2);
            ASSERT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), 0) << detail();
            ASSERT_EQ(req, handle);
        }
        ASSERT_EQ(weft_request_free(&req), 0) << detail();
        EXPECT_EQ(req, WEFT_REQUEST_NULL);
    } else {
        for (int run = 0; run < 5; ++run) {
            ASSERT_EQ(weft_probe(0, 8, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0) << detail();
            signal(1);
            await(2);
            ASSERT_EQ(weft_recv(&v, 1, WEFT_INT, 0, 8, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0) << detail();
            EXPECT_EQ(v, 100 + run);
        }
    }
}

// The receive matched, but its owner has not waited for it yet (it is blocked elsewhere): the
// acknowledgement still goes out, from the receiving endpoint's progress.
TEST_F(Sync, SsendCompletesBeforeTheReceiverWaits) {
    int v = 0;
    if (world_rank() == 0) {
        await(1);  // the receive is posted
        v = 42;
        ASSERT_EQ(weft_ssend(&v, 1, WEFT_INT, 1, 6, WEFT_COMM_WORLD), 0) << detail();
        signal(2);  // only now does the receiver wait for its receive
    } else {
        weft_request req;
        ASSERT_EQ(weft_irecv(&v, 1, WEFT_INT, 0, 6, WEFT_COMM_WORLD, &req), 0) << detail();
        signal(1);
        await(2);
        weft_status st;
        ASSERT_EQ(weft_wait(&req, &st), 0) << detail();
        EXPECT_EQ(v, 42);
        EXPECT_EQ(st.tag, 6);
    }
}

// Many synchronous messages with one tag, received in order, some by wildcard: each send's
// completion pairs with an acknowledgement (the FIFO argument in p2p_sync.cpp).
TEST_F(Sync, ManyIssendsOneTag) {
    constexpr int n = 64;
    std::vector<int> vals(n), got(n, -1);
    std::iota(vals.begin(), vals.end(), 0);
    std::vector<weft_request> reqs(n);
    if (world_rank() == 0) {
        for (int i = 0; i < n; ++i) ASSERT_EQ(weft_issend(&vals[i], 1, WEFT_INT, 1, 9, WEFT_COMM_WORLD, &reqs[i]), 0);
        ASSERT_EQ(weft_waitall(n, reqs.data(), WEFT_STATUSES_IGNORE), 0) << detail();
    } else {
        for (int i = 0; i < n; ++i)
            ASSERT_EQ(weft_recv(&got[i], 1, WEFT_INT, i % 2 ? WEFT_ANY_SOURCE : 0, i % 3 ? 9 : WEFT_ANY_TAG,
                                WEFT_COMM_WORLD, WEFT_STATUS_IGNORE),
                      0);
        for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], i);
    }
}

TEST_F(Sync, SsendToSelfAndProcNull) {
    int out = 11, in = 0;
    weft_request s, r;
    // issend to self, received after: completes only then.
    ASSERT_EQ(weft_issend(&out, 1, WEFT_INT, world_rank(), 3, WEFT_COMM_WORLD, &s), 0) << detail();
    int flag = 1;
    ASSERT_EQ(weft_test(&s, &flag, WEFT_STATUS_IGNORE), 0);
    EXPECT_EQ(flag, 0);
    ASSERT_EQ(weft_recv(&in, 1, WEFT_INT, world_rank(), 3, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0) << detail();
    ASSERT_EQ(weft_wait(&s, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(in, 11);
    // Blocking ssend to self with the receive posted first, on WEFT_COMM_SELF.
    ASSERT_EQ(weft_irecv(&in, 1, WEFT_INT, 0, 4, WEFT_COMM_SELF, &r), 0);
    out = 12;
    ASSERT_EQ(weft_ssend(&out, 1, WEFT_INT, 0, 4, WEFT_COMM_SELF), 0) << detail();
    ASSERT_EQ(weft_wait(&r, WEFT_STATUS_IGNORE), 0);
    EXPECT_EQ(in, 12);
    // WEFT_PROC_NULL: complete at once.
    ASSERT_EQ(weft_ssend(&out, 1, WEFT_INT, WEFT_PROC_NULL, 4, WEFT_COMM_WORLD), 0) << detail();
    ASSERT_EQ(weft_issend(&out, 1, WEFT_INT, WEFT_PROC_NULL, 4, WEFT_COMM_WORLD, &s), 0) << detail();
    ASSERT_EQ(weft_test(&s, &flag, WEFT_STATUS_IGNORE), 0);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(s, WEFT_REQUEST_NULL);
}

TEST_F(Sync, SsendDerivedDatatypeAndCxx) {
    weft_datatype vec;
    ASSERT_EQ(weft_type_vector(4, 1, 2, WEFT_INT, &vec), 0);
    ASSERT_EQ(weft_type_commit(&vec), 0);
    int a[8];
    for (int i = 0; i < 8; ++i) a[i] = world_rank() == 0 ? i * 10 : -1;
    if (world_rank() == 0) {
        ASSERT_EQ(weft_ssend(a, 1, vec, 1, 2, WEFT_COMM_WORLD), 0) << detail();
        int x[3] = {1, 2, 3};
        weft::ssend(weft::Comm::world(), std::span<int>(x), 1, 3);
        weft::Request q = weft::issend(weft::Comm::world(), std::span<int>(x), 1, 4);
        q.wait();
    } else {
        ASSERT_EQ(weft_recv(a, 1, vec, 0, 2, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0) << detail();
        for (int i = 0; i < 8; ++i) EXPECT_EQ(a[i], i % 2 ? -1 : i * 10) << i;
        int x[3] = {};
        weft::Comm::world().recv(std::span<int>(x), 0, 3);
        EXPECT_EQ(x[2], 3);
        weft::Comm::world().recv(std::span<int>(x), 0, 4);
        EXPECT_EQ(x[0], 1);
    }
    ASSERT_EQ(weft_type_free(&vec), 0);
}

// A stream progresses only its own endpoint (weft.h), and an acknowledgement leaves from the
// endpoint that received: the receiver waits on all its streams at once (waitall), and keeps
// progressing them until the sender is done.
TEST_F(Sync, SsendOnStreamAndMultiplexCommunicators) {
    weft_stream s[2] = {WEFT_STREAM_NULL, WEFT_STREAM_NULL};
    for (auto &h : s) {
        int rc = weft_stream_create(WEFT_INFO_NULL, &h);
        if (rc == WEFT_ERR_NO_ENDPOINT) GTEST_SKIP() << "no explicit endpoint left: " << detail();
        ASSERT_EQ(rc, 0) << detail();
    }
    weft_comm sc, mc;
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s[0], &sc), 0) << detail();
    ASSERT_EQ(weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, 2, s, &mc), 0) << detail();
    int v = 0;
    if (world_rank() == 0) {
        v = 1;
        ASSERT_EQ(weft_ssend(&v, 1, WEFT_INT, 1, 1, sc), 0) << detail();
        weft_request r;
        v = 2;
        ASSERT_EQ(weft_issend(&v, 1, WEFT_INT, 1, 2, sc, &r), 0) << detail();
        ASSERT_EQ(weft_wait(&r, WEFT_STATUS_IGNORE), 0) << detail();
        // Every (src_idx, dst_idx) pair, one tag: acks must pair with the right endpoint's send.
        int vals[4] = {10, 11, 12, 13};
        weft_request rs[4];
        for (int i = 0; i < 4; ++i)
            ASSERT_EQ(weft_stream_issend(&vals[i], 1, WEFT_INT, 1, 7, mc, i / 2, i % 2, &rs[i]), 0) << detail();
        ASSERT_EQ(weft_waitall(4, rs, WEFT_STATUSES_IGNORE), 0) << detail();
        v = 20;
        ASSERT_EQ(weft_stream_ssend(&v, 1, WEFT_INT, 1, 8, mc, 1, 0), 0) << detail();
        signal(3);
    } else {
        weft_status st;
        ASSERT_EQ(weft_recv(&v, 1, WEFT_INT, 0, 1, sc, &st), 0) << detail();
        EXPECT_EQ(v, 1);
        ASSERT_EQ(weft_recv(&v, 1, WEFT_INT, 0, 2, sc, &st), 0) << detail();
        EXPECT_EQ(v, 2);
        // Destination stream 1 first, then 0: the order differs from the sends'.
        int got[5] = {-1, -1, -1, -1, -1};
        weft_request rs[5];
        int k = 0;
        for (int dst : {1, 0})
            for (int src : {0, 1}) {
                ASSERT_EQ(weft_stream_irecv(&got[k], 1, WEFT_INT, 0, 7, mc, src, dst, &rs[k]), 0) << detail();
                ++k;
            }
        ASSERT_EQ(weft_stream_irecv(&got[4], 1, WEFT_INT, 0, 8, mc, WEFT_ANY_INDEX, 0, &rs[4]), 0) << detail();
        weft_status sts[5];
        ASSERT_EQ(weft_waitall(5, rs, sts), 0) << detail();
        EXPECT_EQ(got[0], 11);
        EXPECT_EQ(got[1], 13);
        EXPECT_EQ(got[2], 10);
        EXPECT_EQ(got[3], 12);
        EXPECT_EQ(got[4], 20);
        EXPECT_EQ(sts[4].stream_index, 1);
        for (int flag = 0; !flag;) {
            for (auto h : s) ASSERT_EQ(weft_stream_progress(h), 0) << detail();
            ASSERT_EQ(weft_iprobe(0, 3, ctl_, &flag, WEFT_STATUS_IGNORE), 0);
        }
        await(3);
    }
    // Misuse: stream indexes out of range.
    EXPECT_EQ(weft_stream_ssend(&v, 1, WEFT_INT, peer_, 1, mc, 2, 0), WEFT_ERR_STREAM);
    weft_request r;
    EXPECT_EQ(weft_stream_issend(&v, 1, WEFT_INT, peer_, 1, mc, 0, 5, &r), WEFT_ERR_STREAM);
    ASSERT_EQ(weft_barrier(WEFT_COMM_WORLD), 0);
    ASSERT_EQ(weft_comm_free(&mc), 0) << detail();
    ASSERT_EQ(weft_comm_free(&sc), 0) << detail();
    for (auto &h : s) ASSERT_EQ(weft_stream_free(&h), 0) << detail();
}

TEST_F(Sync, SsendMisuse) {
    int v = 0;
    weft_request r = 123;
    EXPECT_EQ(weft_ssend(&v, 1, WEFT_INT, 2, 0, WEFT_COMM_WORLD), WEFT_ERR_RANK);
    EXPECT_EQ(weft_ssend(&v, 1, WEFT_INT, 0, -3, WEFT_COMM_WORLD), WEFT_ERR_TAG);
    EXPECT_EQ(weft_ssend(&v, 1, WEFT_INT, 0, 0, 0x12345), WEFT_ERR_COMM);
    EXPECT_EQ(weft_ssend(nullptr, 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD), WEFT_ERR_BUFFER);
    EXPECT_EQ(weft_issend(&v, 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_issend(&v, 1, 0x777, 0, 0, WEFT_COMM_WORLD, &r), WEFT_ERR_TYPE);
    EXPECT_EQ(weft_issend(&v, 1, WEFT_INT, WEFT_ANY_SOURCE, 0, WEFT_COMM_WORLD, &r), WEFT_ERR_RANK);
}

TEST_F(Sync, SendrecvRing) {
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    std::vector<double> out(1000, world_rank() + 0.5), in(1000, -1);
    weft_status st;
    ASSERT_EQ(weft_sendrecv(out.data(), out.size(), WEFT_DOUBLE, next, 3, in.data(), in.size(), WEFT_DOUBLE, prev, 3,
                            WEFT_COMM_WORLD, &st),
              0)
        << detail();
    EXPECT_EQ(in[999], prev + 0.5);
    EXPECT_EQ(st.source, prev);
    EXPECT_EQ(st.tag, 3);
    size_t count = 0;
    weft_get_count(&st, WEFT_DOUBLE, &count);
    EXPECT_EQ(count, 1000u);
    // Wildcards, and a receive larger than the message.
    int a = world_rank() * 3, b[2] = {-1, -1};
    ASSERT_EQ(weft_sendrecv(&a, 1, WEFT_INT, next, 4, b, 2, WEFT_INT, WEFT_ANY_SOURCE, WEFT_ANY_TAG, ctl_, &st), 0);
    EXPECT_EQ(b[0], prev * 3);
    EXPECT_EQ(st.tag, 4);
    weft_get_count(&st, WEFT_INT, &count);
    EXPECT_EQ(count, 1u);
    // Truncation is the receive's error.
    int big[4] = {1, 2, 3, 4}, small = 0;
    EXPECT_EQ(weft_sendrecv(big, 4, WEFT_INT, next, 5, &small, 1, WEFT_INT, prev, 5, WEFT_COMM_WORLD, &st),
              WEFT_ERR_TRUNCATE);
    EXPECT_EQ(st.error, WEFT_ERR_TRUNCATE);
    // WEFT_PROC_NULL on either side.
    a = 5;
    ASSERT_EQ(
        weft_sendrecv(&a, 1, WEFT_INT, WEFT_PROC_NULL, 0, b, 1, WEFT_INT, WEFT_PROC_NULL, 0, WEFT_COMM_WORLD, &st), 0);
    EXPECT_EQ(st.source, WEFT_PROC_NULL);
    EXPECT_EQ(st.tag, WEFT_ANY_TAG);
    // Self.
    ASSERT_EQ(weft_sendrecv(&a, 1, WEFT_INT, 0, 1, b, 1, WEFT_INT, 0, 1, WEFT_COMM_SELF, &st), 0) << detail();
    EXPECT_EQ(b[0], 5);
    // Misuse: each side's arguments are checked.
    EXPECT_EQ(weft_sendrecv(&a, 1, WEFT_INT, 7, 0, b, 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD, &st), WEFT_ERR_RANK);
    EXPECT_EQ(weft_sendrecv(&a, 1, WEFT_INT, 0, WEFT_ANY_TAG, b, 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD, &st),
              WEFT_ERR_TAG);
    EXPECT_EQ(weft_sendrecv(&a, 1, WEFT_INT, 0, 0, nullptr, 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD, &st), WEFT_ERR_BUFFER);
}

TEST_F(Sync, SendrecvReplace) {
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    std::vector<int> buf(300000);
    std::iota(buf.begin(), buf.end(), world_rank() * 1000000);
    weft_status st;
    ASSERT_EQ(weft_sendrecv_replace(buf.data(), buf.size(), WEFT_INT, next, 2, prev, 2, WEFT_COMM_WORLD, &st), 0)
        << detail();
    EXPECT_EQ(buf[0], prev * 1000000);
    EXPECT_EQ(buf[299999], prev * 1000000 + 299999);
    // A derived datatype: only its elements move; the gaps stay.
    weft_datatype vec;
    ASSERT_EQ(weft_type_vector(3, 1, 2, WEFT_INT, &vec), 0);
    ASSERT_EQ(weft_type_commit(&vec), 0);
    int v[5] = {world_rank(), -7, world_rank() + 10, -7, world_rank() + 20};
    ASSERT_EQ(weft_sendrecv_replace(v, 1, vec, next, 3, prev, 3, WEFT_COMM_WORLD, &st), 0) << detail();
    EXPECT_EQ(v[0], prev);
    EXPECT_EQ(v[2], prev + 10);
    EXPECT_EQ(v[4], prev + 20);
    EXPECT_EQ(v[1], -7);
    // Nonblocking: the copy lives until completion; buf may be touched only after.
    weft_request r;
    ASSERT_EQ(weft_isendrecv_replace(v, 1, vec, next, 4, prev, 4, WEFT_COMM_WORLD, &r), 0) << detail();
    ASSERT_EQ(weft_type_free(&vec), 0);  // the request holds it
    ASSERT_EQ(weft_wait(&r, &st), 0) << detail();
    EXPECT_EQ(v[0], world_rank());  // twice round a ring of 2: back home
    EXPECT_EQ(st.source, prev);
    EXPECT_EQ(st.tag, 4);
    // C++.
    std::vector<long> w(4, world_rank());
    weft::Status s = weft::sendrecv_replace(weft::Comm::world(), std::span<long>(w), next, 5, prev, 5);
    EXPECT_EQ(w[3], prev);
    EXPECT_EQ(s.count<long>(), 4u);
}

TEST_F(Sync, IsendrecvOneRequest) {
    int next = (world_rank() + 1) % world_size(), prev = (world_rank() + world_size() - 1) % world_size();
    std::vector<int> out(200000, world_rank() + 1), in(200000, 0);
    weft_request r;
    ASSERT_EQ(weft_isendrecv(out.data(), out.size(), WEFT_INT, next, 6, in.data(), in.size(), WEFT_INT, prev, 6,
                             WEFT_COMM_WORLD, &r),
              0)
        << detail();
    weft_status st;
    ASSERT_EQ(weft_wait(&r, &st), 0) << detail();
    EXPECT_EQ(r, WEFT_REQUEST_NULL);
    EXPECT_EQ(in[199999], prev + 1);
    EXPECT_EQ(st.source, prev);
    size_t count = 0;
    weft_get_count(&st, WEFT_INT, &count);
    EXPECT_EQ(count, 200000u);
    // The request is incomplete while its receive is: rank 1's receive waits for rank 0's
    // signal on ctl_, so rank 0's isendrecv cannot complete before it.
    int a = 1, b = 0;
    if (world_rank() == 0) {
        ASSERT_EQ(weft_isendrecv(&a, 1, WEFT_INT, 1, 7, &b, 1, WEFT_INT, 1, 8, WEFT_COMM_WORLD, &r), 0) << detail();
        for (int i = 0; i < 50; ++i) {
            int flag = 1;
            ASSERT_EQ(weft_test(&r, &flag, WEFT_STATUS_IGNORE), 0);
            ASSERT_EQ(flag, 0);
        }
        EXPECT_EQ(weft_cancel(&r), WEFT_ERR_UNSUPPORTED);  // as weft.h says
        signal(1);
        ASSERT_EQ(weft_wait(&r, &st), 0) << detail();
        EXPECT_EQ(b, 9);
        EXPECT_EQ(st.tag, 8);
    } else {
        await(1);
        b = 9;
        ASSERT_EQ(weft_sendrecv(&b, 1, WEFT_INT, 0, 8, &a, 1, WEFT_INT, 0, 7, WEFT_COMM_WORLD, &st), 0) << detail();
        EXPECT_EQ(a, 1);
    }
    // PROC_NULL receive: the status says so; PROC_NULL both: complete at once.
    ASSERT_EQ(
        weft_isendrecv(&a, 1, WEFT_INT, WEFT_PROC_NULL, 0, &b, 1, WEFT_INT, WEFT_PROC_NULL, 0, WEFT_COMM_WORLD, &r), 0);
    ASSERT_EQ(weft_wait(&r, &st), 0);
    EXPECT_EQ(st.source, WEFT_PROC_NULL);
    ASSERT_EQ(weft_isendrecv(&a, 1, WEFT_INT, peer_, 9, &b, 1, WEFT_INT, WEFT_PROC_NULL, 0, WEFT_COMM_WORLD, &r), 0);
    ASSERT_EQ(weft_wait(&r, &st), 0) << detail();
    EXPECT_EQ(st.source, WEFT_PROC_NULL);
    ASSERT_EQ(weft_recv(&b, 1, WEFT_INT, peer_, 9, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
    EXPECT_EQ(weft_isendrecv(&a, 1, WEFT_INT, 0, 0, &b, 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD, nullptr), WEFT_ERR_ARG);
    // A pending isendrecv keeps its communicator busy.
    weft_comm d;
    ASSERT_EQ(weft_comm_dup(WEFT_COMM_WORLD, &d), 0);
    ASSERT_EQ(weft_isendrecv(&a, 1, WEFT_INT, peer_, 1, &b, 1, WEFT_INT, peer_, 1, d, &r), 0) << detail();
    ASSERT_EQ(weft_wait(&r, WEFT_STATUS_IGNORE), 0) << detail();
    ASSERT_EQ(weft_comm_free(&d), 0) << detail();
}

TEST_F(Sync, SendrecvOnMultiplexCommunicator) {
    weft_stream s = WEFT_STREAM_NULL;
    int rc = weft_stream_create(WEFT_INFO_NULL, &s);
    if (rc == WEFT_ERR_NO_ENDPOINT) GTEST_SKIP() << "no explicit endpoint left";
    ASSERT_EQ(rc, 0) << detail();
    weft_comm mc;
    ASSERT_EQ(weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, 1, &s, &mc), 0) << detail();
    int a = world_rank() + 100, b = 0;
    weft_status st;
    ASSERT_EQ(weft_sendrecv(&a, 1, WEFT_INT, peer_, 1, &b, 1, WEFT_INT, peer_, 1, mc, &st), 0) << detail();
    EXPECT_EQ(b, peer_ + 100);
    weft_request r;
    ASSERT_EQ(weft_isendrecv_replace(&a, 1, WEFT_INT, peer_, 2, peer_, 2, mc, &r), 0) << detail();
    ASSERT_EQ(weft_wait(&r, &st), 0) << detail();
    EXPECT_EQ(a, peer_ + 100);
    ASSERT_EQ(weft_comm_free(&mc), 0) << detail();
    ASSERT_EQ(weft_stream_free(&s), 0) << detail();
}

// Two threads of rank 1 probe-then-receive the same stream of messages at once: each message
// is received exactly once, with the size its probe reported.  Two sentinels (value n) end it:
// each thread stops at the first it receives.
TEST_F(Sync, MprobeFromTwoThreads) {
    constexpr int n = 400;
    if (world_rank() == 0) {
        for (int i = 0; i < n + 2; ++i) {
            int v = i < n ? i : n;
            std::vector<int> msg(1 + v % 7, v);
            ASSERT_EQ(weft_send(msg.data(), msg.size(), WEFT_INT, 1, 1, WEFT_COMM_WORLD), 0) << detail();
        }
    } else {
        std::atomic<int> failures{0};
        std::vector<std::atomic<int>> seen(n + 1);
        auto worker = [&](bool blocking) {
            for (;;) {
                weft_message m = WEFT_MESSAGE_NULL;
                weft_status st;
                int flag = 1;
                int rc = blocking ? weft_mprobe(0, 1, WEFT_COMM_WORLD, &m, &st)
                                  : weft_improbe(WEFT_ANY_SOURCE, 1, WEFT_COMM_WORLD, &flag, &m, &st);
                if (rc != 0) {
                    ++failures;
                    return;
                }
                if (!flag) continue;
                size_t count = 0;
                weft_get_count(&st, WEFT_INT, &count);
                std::vector<int> buf(count + 1, -1);
                weft_status rs;
                if (weft_mrecv(buf.data(), count + 1, WEFT_INT, &m, &rs) != 0 || m != WEFT_MESSAGE_NULL) {
                    ++failures;
                    return;
                }
                size_t got = 0;
                weft_get_count(&rs, WEFT_INT, &got);
                int v = buf[0];
                if (v < 0 || v > n || count != static_cast<size_t>(1 + v % 7) || got != count || rs.source != 0 ||
                    rs.tag != 1 || buf[count - 1] != v)
                    ++failures;
                else
                    seen[v].fetch_add(1);
                if (v == n) return;
            }
        };
        std::thread t1(worker, true), t2(worker, false);
        t1.join();
        t2.join();
        EXPECT_EQ(failures.load(), 0) << detail();
        for (int i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << "message " << i;
        EXPECT_EQ(seen[n].load(), 2);
    }
}

TEST_F(Sync, MrecvTruncationAndImrecv) {
    int v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    if (world_rank() == 0) {
        ASSERT_EQ(weft_send(v, 8, WEFT_INT, 1, 2, WEFT_COMM_WORLD), 0);
        ASSERT_EQ(weft_send(v, 8, WEFT_INT, 1, 3, WEFT_COMM_WORLD), 0);
        ASSERT_EQ(weft_ssend(v, 8, WEFT_INT, 1, 4, WEFT_COMM_WORLD), 0) << detail();
        std::vector<int> big(500000, 3);
        ASSERT_EQ(weft_send(big.data(), big.size(), WEFT_INT, 1, 5, WEFT_COMM_WORLD), 0);
    } else {
        weft_message m;
        weft_status st;
        int small[4] = {};
        ASSERT_EQ(weft_mprobe(0, 2, WEFT_COMM_WORLD, &m, &st), 0) << detail();
        EXPECT_NE(m, WEFT_MESSAGE_NULL);
        EXPECT_EQ(weft_mrecv(small, 4, WEFT_INT, &m, &st), WEFT_ERR_TRUNCATE);
        EXPECT_EQ(m, WEFT_MESSAGE_NULL);
        EXPECT_EQ(st.error, WEFT_ERR_TRUNCATE);
        EXPECT_EQ(small[3], 4);
        size_t count = 0;
        weft_get_count(&st, WEFT_INT, &count);
        EXPECT_EQ(count, 4u);
        // imrecv, truncated too.
        int flag = 0;
        while (!flag) ASSERT_EQ(weft_improbe(0, 3, WEFT_COMM_WORLD, &flag, &m, &st), 0) << detail();
        weft_request r;
        ASSERT_EQ(weft_imrecv(small, 2, WEFT_INT, &m, &r), 0) << detail();
        EXPECT_EQ(m, WEFT_MESSAGE_NULL);
        EXPECT_EQ(weft_wait(&r, &st), WEFT_ERR_TRUNCATE);
        EXPECT_EQ(small[1], 2);
        // A synchronous message through a matched probe: the sender completes (the ack).
        int got[8] = {};
        ASSERT_EQ(weft_mprobe(0, 4, WEFT_COMM_WORLD, &m, &st), 0) << detail();
        ASSERT_EQ(weft_imrecv(got, 8, WEFT_INT, &m, &r), 0) << detail();
        ASSERT_EQ(weft_wait(&r, &st), 0) << detail();
        EXPECT_EQ(got[7], 8);
        EXPECT_EQ(st.tag, 4);
        // A large (rendezvous) message into a derived datatype, through C++.
        auto [msg, pst] = weft::mprobe(weft::Comm::world(), 0, 5);
        EXPECT_EQ(pst.count<int>(), 500000u);
        std::vector<int> big(500000, 0);
        weft::Request q = msg.irecv(std::span<int>(big));
        q.wait();
        EXPECT_EQ(big[499999], 3);
        EXPECT_FALSE(msg.pending());
    }
}

TEST_F(Sync, MprobeProcNullAndMisuse) {
    weft_message m = 77;
    weft_status st;
    ASSERT_EQ(weft_mprobe(WEFT_PROC_NULL, 0, WEFT_COMM_WORLD, &m, &st), 0);
    EXPECT_EQ(m, WEFT_MESSAGE_NO_PROC);
    EXPECT_EQ(st.source, WEFT_PROC_NULL);
    int x = 5;
    ASSERT_EQ(weft_mrecv(&x, 1, WEFT_INT, &m, &st), 0);
    EXPECT_EQ(m, WEFT_MESSAGE_NULL);
    EXPECT_EQ(st.source, WEFT_PROC_NULL);
    EXPECT_EQ(x, 5);
    int flag = 0;
    ASSERT_EQ(weft_improbe(WEFT_PROC_NULL, 0, WEFT_COMM_WORLD, &flag, &m, &st), 0);
    EXPECT_EQ(flag, 1);
    weft_request r;
    ASSERT_EQ(weft_imrecv(&x, 1, WEFT_INT, &m, &r), 0);
    ASSERT_EQ(weft_wait(&r, &st), 0);
    EXPECT_EQ(st.source, WEFT_PROC_NULL);

    // Bad handles: null, garbage, another kind, stale.
    m = WEFT_MESSAGE_NULL;
    EXPECT_EQ(weft_mrecv(&x, 1, WEFT_INT, &m, &st), WEFT_ERR_REQUEST);
    EXPECT_NE(detail().find("weft_mrecv"), std::string::npos) << detail();
    m = 0x12345;
    EXPECT_EQ(weft_mrecv(&x, 1, WEFT_INT, &m, &st), WEFT_ERR_REQUEST);
    m = WEFT_COMM_WORLD;
    EXPECT_EQ(weft_imrecv(&x, 1, WEFT_INT, &m, &r), WEFT_ERR_REQUEST);
    EXPECT_EQ(weft_mrecv(&x, 1, WEFT_INT, nullptr, &st), WEFT_ERR_ARG);
    EXPECT_EQ(weft_mprobe(0, 0, WEFT_COMM_WORLD, nullptr, &st), WEFT_ERR_ARG);
    EXPECT_EQ(weft_improbe(0, 0, WEFT_COMM_WORLD, nullptr, &m, &st), WEFT_ERR_ARG);
    EXPECT_EQ(weft_mprobe(9, 0, WEFT_COMM_WORLD, &m, &st), WEFT_ERR_RANK);
    EXPECT_EQ(weft_mprobe(0, 0, 0x4242, &m, &st), WEFT_ERR_COMM);

    if (world_rank() == 0) {
        ASSERT_EQ(weft_send(&x, 1, WEFT_INT, 1, 6, WEFT_COMM_WORLD), 0);
    } else {
        ASSERT_EQ(weft_mprobe(0, 6, WEFT_COMM_WORLD, &m, &st), 0) << detail();
        weft_message copy = m;
        // Refused arguments leave the message in place.
        EXPECT_EQ(weft_mrecv(&x, 1, 0x999, &m, &st), WEFT_ERR_TYPE);
        EXPECT_EQ(weft_mrecv(nullptr, 1, WEFT_INT, &m, &st), WEFT_ERR_BUFFER);
        EXPECT_EQ(m, copy);
        // A probed message is off matching: a probe does not see it any more.
        ASSERT_EQ(weft_iprobe(0, 6, WEFT_COMM_WORLD, &flag, &st), 0);
        EXPECT_EQ(flag, 0);
        ASSERT_EQ(weft_mrecv(&x, 1, WEFT_INT, &m, &st), 0) << detail();
        EXPECT_EQ(x, 5);
        EXPECT_EQ(weft_mrecv(&x, 1, WEFT_INT, &copy, &st), WEFT_ERR_REQUEST) << "a stale handle must be refused";
    }
}

// A pending matched message keeps its communicator busy; the C++ Message receives a dropped one.
TEST_F(Sync, PendingMessageKeepsCommunicatorBusy) {
    weft_comm d;
    ASSERT_EQ(weft_comm_dup(WEFT_COMM_WORLD, &d), 0);
    int x = 1;
    if (world_rank() == 0) {
        ASSERT_EQ(weft_send(&x, 1, WEFT_INT, 1, 1, d), 0);
    } else {
        {
            auto [msg, st] = weft::mprobe(weft::Comm(d), 0, 1);
            EXPECT_TRUE(msg.pending());
            EXPECT_EQ(weft_comm_free(&d), WEFT_ERR_BUSY);
        }  // dropped: received into nothing
    }
    ASSERT_EQ(weft_comm_free(&d), 0) << detail();
}

}  // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    ::testing::AddGlobalTestEnvironment(new environment);
    return RUN_ALL_TESTS();
}
