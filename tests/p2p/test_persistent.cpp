// Persistent point-to-point requests, weft_request_free/get_status/is_complete and
// weft_waitsome/testany/testsome, on a conventional, a stream and a multiplex communicator:
// run with 2 processes (the single-process cases also run with 1).
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "error_detail.hpp"
#include "p2p_env.hpp"
#include "weft/weft.h"
#include "weft/weft.hpp"

using namespace p2p_test;
using harness::detail;
using harness::err;

namespace {

// The communicator kinds the point-to-point calls take.
enum class kind { world, stream, multiplex };

std::string kind_name(const ::testing::TestParamInfo<kind> &p) {
    return p.param == kind::world ? "world" : p.param == kind::stream ? "stream" : "multiplex";
}

// Two processes on a communicator of the parameter's kind (a dup of WEFT_COMM_WORLD for
// "world", so that freeing it can be tested); multiplex: two streams each, messages from local
// stream 1 to the peer's stream 0.
class Persistent : public collective_test, public ::testing::WithParamInterface<kind> {
  protected:
    weft_comm comm_ = WEFT_COMM_NULL;
    std::vector<weft_stream> streams_;
    int peer_ = -1;

    void SetUp() override {
        collective_test::SetUp();
        if (world_size() != 2) GTEST_SKIP() << "needs exactly 2 processes";
        peer_ = 1 - world_rank();
        int rc;
        switch (GetParam()) {
            case kind::world: rc = weft_comm_dup(WEFT_COMM_WORLD, &comm_); break;
            case kind::stream:
                streams_.resize(1);
                ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &streams_[0]), 0) << detail();
                rc = weft_stream_comm_create(WEFT_COMM_WORLD, streams_[0], &comm_);
                break;
            case kind::multiplex:
                streams_.resize(2);
                for (auto &s : streams_) ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
                rc = weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, 2, streams_.data(), &comm_);
                break;
        }
        ASSERT_EQ(rc, 0) << err(rc);
    }
    void TearDown() override {
        if (idle_recv_ != WEFT_REQUEST_NULL) {
            EXPECT_EQ(weft_cancel(&idle_recv_), 0) << detail();
            EXPECT_EQ(weft_wait(&idle_recv_, WEFT_STATUS_IGNORE), 0) << detail();
        }
        if (comm_ != WEFT_COMM_NULL) EXPECT_EQ(weft_comm_free(&comm_), 0) << detail();
        for (auto &s : streams_) EXPECT_EQ(weft_stream_free(&s), 0) << detail();
        collective_test::TearDown();
    }
    bool multiplex() const { return GetParam() == kind::multiplex; }
    // Progresses every local endpoint of the communicator once (a stream progresses only its
    // own: a loop that polls one must move the others too).
    // On the dup, a test of a receive that never matches (cancelled in TearDown) does it.
    void progress_all() {
        int flag;
        if (streams_.empty()) {
            if (idle_recv_ == WEFT_REQUEST_NULL)
                ASSERT_EQ(weft_irecv(&idle_buf_, 1, WEFT_INT, peer_, 99, comm_, &idle_recv_), 0) << detail();
            ASSERT_EQ(weft_test(&idle_recv_, &flag, WEFT_STATUS_IGNORE), 0) << detail();
        }
        for (auto s : streams_) weft_stream_progress(s);
    }
    weft_request idle_recv_ = WEFT_REQUEST_NULL;
    int idle_buf_ = 0;
    int send_init(const void *buf, size_t n, weft_datatype t, int dest, int tag, weft_request *r) {
        return multiplex() ? weft_stream_send_init(buf, n, t, dest, tag, comm_, 1, 0, r)
                           : weft_send_init(buf, n, t, dest, tag, comm_, r);
    }
    int recv_init(void *buf, size_t n, weft_datatype t, int source, int tag, weft_request *r) {
        return multiplex() ? weft_stream_recv_init(buf, n, t, source, tag, comm_, 1, 0, r)
                           : weft_recv_init(buf, n, t, source, tag, comm_, r);
    }
    int isend(const void *buf, size_t n, weft_datatype t, int dest, int tag, weft_request *r) {
        return multiplex() ? weft_stream_isend(buf, n, t, dest, tag, comm_, 1, 0, r)
                           : weft_isend(buf, n, t, dest, tag, comm_, r);
    }
    int irecv(void *buf, size_t n, weft_datatype t, int source, int tag, weft_request *r) {
        return multiplex() ? weft_stream_irecv(buf, n, t, source, tag, comm_, 1, 0, r)
                           : weft_irecv(buf, n, t, source, tag, comm_, r);
    }
    int send(const void *buf, size_t n, weft_datatype t, int dest, int tag) {
        return multiplex() ? weft_stream_send(buf, n, t, dest, tag, comm_, 1, 0)
                           : weft_send(buf, n, t, dest, tag, comm_);
    }
    int recv(void *buf, size_t n, weft_datatype t, int source, int tag) {
        return multiplex() ? weft_stream_recv(buf, n, t, source, tag, comm_, 1, 0, WEFT_STATUS_IGNORE)
                           : weft_recv(buf, n, t, source, tag, comm_, WEFT_STATUS_IGNORE);
    }
};

void expect_empty(const weft_status &st, const char *what) {
    EXPECT_EQ(st.source, WEFT_ANY_SOURCE) << what;
    EXPECT_EQ(st.tag, WEFT_ANY_TAG) << what;
    EXPECT_EQ(st.error, WEFT_SUCCESS) << what;
    size_t n = 1;
    EXPECT_EQ(weft_get_count(&st, WEFT_BYTE, &n), 0);
    EXPECT_EQ(n, 0u) << what;
}

// Both directions at once, restarted many times: the handles never change, every run carries
// that run's data, and the status is the run's.
TEST_P(Persistent, RestartManyTimes) {
    constexpr int runs = 300;
    std::vector<int> out(64), in(64);
    weft_request reqs[2];
    ASSERT_EQ(recv_init(in.data(), in.size(), WEFT_INT, peer_, 7, &reqs[0]), 0) << detail();
    ASSERT_EQ(send_init(out.data(), out.size(), WEFT_INT, peer_, 7, &reqs[1]), 0) << detail();
    const weft_request h0 = reqs[0], h1 = reqs[1];
    ASSERT_NE(h0, WEFT_REQUEST_NULL);
    ASSERT_NE(h1, WEFT_REQUEST_NULL);
    for (int run = 0; run < runs; ++run) {
        for (size_t k = 0; k < out.size(); ++k) out[k] = run * 1000 + world_rank() * 100 + static_cast<int>(k);
        std::fill(in.begin(), in.end(), -1);
        if (run % 2 == 0) {
            ASSERT_EQ(weft_startall(2, reqs), 0) << "run " << run << ": " << detail();
        } else {
            ASSERT_EQ(weft_start(&reqs[0]), 0) << detail();
            ASSERT_EQ(weft_start(&reqs[1]), 0) << detail();
        }
        weft_status st[2];
        ASSERT_EQ(weft_waitall(2, reqs, st), 0) << "run " << run << ": " << detail();
        ASSERT_EQ(reqs[0], h0) << "a persistent handle stays";
        ASSERT_EQ(reqs[1], h1);
        EXPECT_EQ(st[0].source, peer_);
        EXPECT_EQ(st[0].tag, 7);
        size_t n = 0;
        weft_get_count(&st[0], WEFT_INT, &n);
        EXPECT_EQ(n, in.size());
        for (size_t k = 0; k < in.size(); ++k)
            ASSERT_EQ(in[k], run * 1000 + peer_ * 100 + static_cast<int>(k)) << "run " << run << " word " << k;
    }
    // Completed by wait, test, and waitany as well.
    for (int run = 0; run < 3; ++run) {
        out[0] = 5000 + run;
        ASSERT_EQ(weft_startall(2, reqs), 0) << detail();
        if (run == 0) {
            ASSERT_EQ(weft_wait(&reqs[1], WEFT_STATUS_IGNORE), 0) << detail();
            ASSERT_EQ(weft_wait(&reqs[0], WEFT_STATUS_IGNORE), 0) << detail();
        } else if (run == 1) {
            for (int flag = 0; !flag;) ASSERT_EQ(weft_test(&reqs[0], &flag, WEFT_STATUS_IGNORE), 0) << detail();
            for (int flag = 0; !flag;) ASSERT_EQ(weft_test(&reqs[1], &flag, WEFT_STATUS_IGNORE), 0) << detail();
        } else {
            size_t idx = 9;
            for (int k = 0; k < 2; ++k) ASSERT_EQ(weft_waitany(2, reqs, &idx, WEFT_STATUS_IGNORE), 0) << detail();
            ASSERT_EQ(weft_waitany(2, reqs, &idx, WEFT_STATUS_IGNORE), 0) << detail();
            EXPECT_EQ(idx, WEFT_UNDEFINED) << "both inactive: as if null";
        }
        EXPECT_EQ(in[0], 5000 + run);
        EXPECT_EQ(reqs[0], h0);
        EXPECT_EQ(reqs[1], h1);
    }
    ASSERT_EQ(weft_request_free(&reqs[0]), 0) << detail();
    ASSERT_EQ(weft_request_free(&reqs[1]), 0) << detail();
    EXPECT_EQ(reqs[0], WEFT_REQUEST_NULL);
    int flag = 0;
    EXPECT_EQ(weft_request_is_complete(h0, &flag), WEFT_ERR_REQUEST) << "a freed handle is stale";
}

// An inactive persistent request: every completion call returns at once with an empty status
// and keeps the handle; start on it twice is refused while active.
TEST_P(Persistent, InactiveAndActiveRules) {
    int v = 0, got = -1;
    weft_request r, s;
    ASSERT_EQ(recv_init(&got, 1, WEFT_INT, peer_, 3, &r), 0) << detail();
    ASSERT_EQ(send_init(&v, 1, WEFT_INT, peer_, 3, &s), 0) << detail();
    const weft_request h = r;
    weft_status st;
    st.source = 99;
    ASSERT_EQ(weft_wait(&r, &st), 0) << detail();
    EXPECT_EQ(r, h);
    expect_empty(st, "wait on inactive");
    int flag = 0;
    st.source = 99;
    ASSERT_EQ(weft_test(&r, &flag, &st), 0);
    EXPECT_EQ(flag, 1);
    expect_empty(st, "test on inactive");
    st.source = 99;
    ASSERT_EQ(weft_request_get_status(r, &flag, &st), 0);
    EXPECT_EQ(flag, 1);
    expect_empty(st, "get_status on inactive");
    ASSERT_EQ(weft_request_is_complete(r, &flag), 0);
    EXPECT_EQ(flag, 1);
    weft_status sts[2];
    weft_request both[2] = {r, s};
    ASSERT_EQ(weft_waitall(2, both, sts), 0);
    EXPECT_EQ(both[0], r);
    EXPECT_EQ(both[1], s);
    expect_empty(sts[0], "waitall on inactive");
    size_t idx = 0, outcount = 0, indices[2];
    ASSERT_EQ(weft_testany(2, both, &idx, &flag, &st), 0);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(idx, WEFT_UNDEFINED);
    ASSERT_EQ(weft_waitsome(2, both, &outcount, indices, sts), 0);
    EXPECT_EQ(outcount, WEFT_UNDEFINED);
    ASSERT_EQ(weft_testsome(2, both, &outcount, indices, sts), 0);
    EXPECT_EQ(outcount, WEFT_UNDEFINED);

    // Active: a second start is refused, the request untouched, and it completes normally.
    ASSERT_EQ(weft_start(&r), 0) << detail();
    EXPECT_EQ(weft_start(&r), WEFT_ERR_REQUEST);
    EXPECT_NE(detail().find("active"), std::string::npos) << detail();
    weft_request twice[2] = {s, s};
    EXPECT_EQ(weft_startall(2, twice), WEFT_ERR_REQUEST) << "the same request twice";
    weft_request with_active[2] = {s, r};
    EXPECT_EQ(weft_startall(2, with_active), WEFT_ERR_REQUEST) << "an active one";
    ASSERT_EQ(weft_request_is_complete(s, &flag), 0);
    EXPECT_EQ(flag, 1) << "startall checks all before starting any";
    std::vector<weft_request> many(100);
    for (auto &m : many) ASSERT_EQ(send_init(&v, 1, WEFT_INT, peer_, 4, &m), 0) << detail();
    std::vector<weft_request> with_dup(many);
    with_dup[70] = with_dup[3];
    EXPECT_EQ(weft_startall(with_dup.size(), with_dup.data()), WEFT_ERR_REQUEST);
    EXPECT_NE(detail().find("requests[3] and requests[70]"), std::string::npos) << detail();
    for (auto &m : many) ASSERT_EQ(weft_request_free(&m), 0) << "none was started";
    v = 42 + world_rank();
    ASSERT_EQ(weft_start(&s), 0) << detail();
    ASSERT_EQ(weft_wait(&r, &st), 0) << detail();
    EXPECT_EQ(got, 42 + peer_);
    EXPECT_EQ(st.source, peer_);
    ASSERT_EQ(weft_wait(&s, WEFT_STATUS_IGNORE), 0) << detail();
    ASSERT_EQ(weft_request_free(&r), 0);
    ASSERT_EQ(weft_request_free(&s), 0);
}

// Freeing an active persistent receive and an active ordinary receive and send: the
// operations still complete (the data arrives), the requests are released by progress alone,
// and the communicator and streams can be freed.
TEST_P(Persistent, FreeActiveRequests) {
    constexpr size_t big = 1 << 18;  // rendezvous-sized on every fabric
    std::vector<char> large(big), large_in(big, 0);
    int a = -1, b = -1, token = 0;
    if (world_rank() == 0) {
        weft_request pr, rr, sr;
        ASSERT_EQ(recv_init(&a, 1, WEFT_INT, peer_, 11, &pr), 0) << detail();
        ASSERT_EQ(weft_start(&pr), 0) << detail();
        ASSERT_EQ(irecv(&b, 1, WEFT_INT, peer_, 12, &rr), 0) << detail();
        std::iota(large.begin(), large.end(), 0);
        ASSERT_EQ(isend(large.data(), big, WEFT_CHAR, peer_, 13, &sr), 0) << detail();
        const weft_request copies[3] = {pr, rr, sr};
        ASSERT_EQ(weft_request_free(&pr), 0) << detail();
        ASSERT_EQ(weft_request_free(&rr), 0) << detail();
        ASSERT_EQ(weft_request_free(&sr), 0) << detail();
        EXPECT_EQ(pr, WEFT_REQUEST_NULL);
        EXPECT_EQ(rr, WEFT_REQUEST_NULL);
        EXPECT_EQ(sr, WEFT_REQUEST_NULL);
        ASSERT_EQ(send(&token, 1, WEFT_INT, peer_, 14), 0) << detail();  // the peer sends now
        // A message sent after the ones the freed receives take: once it is in, they are.  (The
        // freed large send needs its endpoint progressed too: on a multiplex communicator it is
        // another stream's.)
        weft_request last;
        ASSERT_EQ(irecv(&token, 1, WEFT_INT, peer_, 15, &last), 0) << detail();
        for (int flag = 0; !flag; progress_all()) ASSERT_EQ(weft_test(&last, &flag, WEFT_STATUS_IGNORE), 0);
        EXPECT_EQ(a, 111);
        EXPECT_EQ(b, 222);
        // Released by the endpoint's progress, without a wait: their handles go stale.
        for (int i = 0; i < 3; ++i) {
            int flag = 0, rc = 0;
            for (int polls = 0; polls < 100000 && (rc = weft_request_is_complete(copies[i], &flag)) == 0; ++polls)
                progress_all();
            EXPECT_EQ(rc, WEFT_ERR_REQUEST) << "freed request " << i << " was never released";
        }
        ASSERT_EQ(send(&token, 1, WEFT_INT, peer_, 16), 0) << detail();
    } else {
        ASSERT_EQ(recv(&token, 1, WEFT_INT, peer_, 14), 0) << detail();
        a = 111;
        b = 222;
        ASSERT_EQ(send(&a, 1, WEFT_INT, peer_, 11), 0) << detail();
        ASSERT_EQ(send(&b, 1, WEFT_INT, peer_, 12), 0) << detail();
        ASSERT_EQ(recv(large_in.data(), big, WEFT_CHAR, peer_, 13), 0) << detail();
        for (size_t k = 0; k < big; k += 4099) ASSERT_EQ(large_in[k], static_cast<char>(k)) << "byte " << k;
        ASSERT_EQ(send(&token, 1, WEFT_INT, peer_, 15), 0) << detail();
        ASSERT_EQ(recv(&token, 1, WEFT_INT, peer_, 16), 0) << detail();
    }
    // TearDown frees the communicator and the streams: nothing may count as pending.
}

// A persistent request counts as pending on its communicator until it is freed.
TEST_P(Persistent, CommFreeWaitsForPersistentRequests) {
    int v = 0;
    weft_request r;
    ASSERT_EQ(send_init(&v, 1, WEFT_INT, peer_, 1, &r), 0) << detail();
    weft_comm c = comm_;
    EXPECT_EQ(weft_comm_free(&c), WEFT_ERR_BUSY) << "an inactive persistent request uses it";
    ASSERT_EQ(weft_request_free(&r), 0) << detail();
}

// waitsome/testany/testsome over persistent, ordinary and nonblocking collective requests.
TEST_P(Persistent, SomeAndAnyMixed) {
    int pin = -1, rin = -1, pout = 0, rout = 0;
    std::vector<weft_request> reqs(5, WEFT_REQUEST_NULL);  // [0] null, [4] inactive persistent
    ASSERT_EQ(recv_init(&pin, 1, WEFT_INT, peer_, 21, &reqs[1]), 0) << detail();
    ASSERT_EQ(irecv(&rin, 1, WEFT_INT, peer_, 22, &reqs[2]), 0) << detail();
    ASSERT_EQ(weft_send_init(&pout, 1, WEFT_INT, peer_, 1, WEFT_COMM_WORLD, &reqs[4]), 0) << detail();
    const weft_request persistent = reqs[1], idle = reqs[4];
    ASSERT_EQ(weft_start(&reqs[1]), 0) << detail();
    // Nothing was sent yet: testany and testsome find nothing.
    size_t idx = 7, outcount = 7, indices[5];
    weft_status sts[5];
    int flag = 1;
    ASSERT_EQ(weft_testany(5, reqs.data(), &idx, &flag, &sts[0]), 0) << detail();
    EXPECT_EQ(flag, 0);
    EXPECT_EQ(idx, WEFT_UNDEFINED);
    ASSERT_EQ(weft_testsome(5, reqs.data(), &outcount, indices, sts), 0) << detail();
    EXPECT_EQ(outcount, 0u);
    p2p_barrier();  // the peer sends only now
    ASSERT_EQ(weft_ibarrier(WEFT_COMM_WORLD, &reqs[3]), 0) << detail();
    pout = 300 + world_rank();
    rout = 400 + world_rank();
    ASSERT_EQ(send(&pout, 1, WEFT_INT, peer_, 21), 0) << detail();
    ASSERT_EQ(send(&rout, 1, WEFT_INT, peer_, 22), 0) << detail();
    std::vector<int> seen(5, 0);
    for (int rounds = 0;; ++rounds) {
        ASSERT_LT(rounds, 1000000);
        if (rounds % 2 == 0) {
            ASSERT_EQ(weft_waitsome(5, reqs.data(), &outcount, indices, sts), 0) << detail();
        } else {
            ASSERT_EQ(weft_testsome(5, reqs.data(), &outcount, indices, sts), 0) << detail();
        }
        if (outcount == WEFT_UNDEFINED) break;
        for (size_t k = 0; k < outcount; ++k) {
            ASSERT_LT(indices[k], 5u);
            ++seen[indices[k]];
            if (indices[k] == 1) {
                EXPECT_EQ(sts[k].source, peer_);
                EXPECT_EQ(sts[k].tag, 21);
            }
        }
    }
    EXPECT_EQ(seen, (std::vector<int>{0, 1, 1, 1, 0})) << "each active request reported once";
    EXPECT_EQ(pin, 300 + peer_);
    EXPECT_EQ(rin, 400 + peer_);
    EXPECT_EQ(reqs[1], persistent) << "persistent: inactive again, handle kept";
    EXPECT_EQ(reqs[2], WEFT_REQUEST_NULL);
    EXPECT_EQ(reqs[3], WEFT_REQUEST_NULL);
    EXPECT_EQ(reqs[4], idle);
    // testany completes one at a time, then reports none active.
    ASSERT_EQ(weft_start(&reqs[1]), 0) << detail();
    ASSERT_EQ(send(&pout, 1, WEFT_INT, peer_, 21), 0) << detail();
    flag = 0;
    while (!flag) ASSERT_EQ(weft_testany(5, reqs.data(), &idx, &flag, &sts[0]), 0) << detail();
    EXPECT_EQ(idx, 1u);
    EXPECT_EQ(sts[0].source, peer_);
    ASSERT_EQ(weft_testany(5, reqs.data(), &idx, &flag, &sts[0]), 0) << detail();
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(idx, WEFT_UNDEFINED);
    expect_empty(sts[0], "testany with none active");
    ASSERT_EQ(weft_request_free(&reqs[1]), 0);
    ASSERT_EQ(weft_request_free(&reqs[4]), 0);
}

// A truncated receive among others: waitsome returns WEFT_ERR_IN_STATUS and marks it.
TEST_P(Persistent, SomeReportsErrorsInStatus) {
    int small = 0, ok = 0;
    long long big[2] = {1, 2};
    weft_request reqs[2];
    ASSERT_EQ(recv_init(&small, 1, WEFT_INT, peer_, 31, &reqs[0]), 0) << detail();
    ASSERT_EQ(irecv(&ok, 1, WEFT_INT, peer_, 32, &reqs[1]), 0) << detail();
    ASSERT_EQ(weft_start(&reqs[0]), 0) << detail();
    ASSERT_EQ(send(big, 2, WEFT_LONG_LONG, peer_, 31), 0) << detail();
    ASSERT_EQ(send(&ok, 1, WEFT_INT, peer_, 32), 0) << detail();
    size_t outcount = 0, indices[2], done = 0;
    weft_status sts[2];
    bool truncated = false;
    while (done < 2) {
        int rc = weft_waitsome(2, reqs, &outcount, indices, sts);
        ASSERT_NE(outcount, WEFT_UNDEFINED);
        for (size_t k = 0; k < outcount; ++k) {
            if (indices[k] == 0) {
                EXPECT_EQ(rc, WEFT_ERR_IN_STATUS);
                EXPECT_EQ(sts[k].error, WEFT_ERR_TRUNCATE);
                truncated = true;
            } else {
                EXPECT_EQ(sts[k].error, WEFT_SUCCESS);
            }
        }
        done += outcount;
    }
    EXPECT_TRUE(truncated);
    ASSERT_EQ(weft_request_free(&reqs[0]), 0);
}

// get_status completes nothing: the handle stays, and a wait afterwards reports the same.
TEST_P(Persistent, GetStatusLeavesTheRequest) {
    int in = -1, out = 77 + world_rank();
    weft_request r;
    ASSERT_EQ(irecv(&in, 1, WEFT_INT, peer_, 41, &r), 0) << detail();
    const weft_request h = r;
    int flag = 1;
    ASSERT_EQ(weft_request_is_complete(r, &flag), 0);
    EXPECT_EQ(flag, 0) << "nothing was sent";
    p2p_barrier();
    ASSERT_EQ(send(&out, 1, WEFT_INT, peer_, 41), 0) << detail();
    weft_status st;
    flag = 0;
    while (!flag) ASSERT_EQ(weft_request_get_status(r, &flag, &st), 0) << detail();
    EXPECT_EQ(r, h);
    EXPECT_EQ(st.source, peer_);
    EXPECT_EQ(st.tag, 41);
    EXPECT_EQ(in, 77 + peer_);
    ASSERT_EQ(weft_request_is_complete(r, &flag), 0);
    EXPECT_EQ(flag, 1);
    weft_status again;
    ASSERT_EQ(weft_wait(&r, &again), 0) << detail();
    EXPECT_EQ(r, WEFT_REQUEST_NULL);
    EXPECT_EQ(again.source, peer_);
    ASSERT_EQ(weft_request_get_status(WEFT_REQUEST_NULL, &flag, &st), 0);
    EXPECT_EQ(flag, 1);
}

// A derived (strided) datatype and WEFT_PROC_NULL, restarted: the packed send and the
// unpacked receive each run, and get_status makes the data visible before the wait.
TEST_P(Persistent, DerivedTypeAndProcNull) {
    weft_datatype vec;
    ASSERT_EQ(weft_type_vector(4, 1, 3, WEFT_INT, &vec), 0);
    ASSERT_EQ(weft_type_commit(&vec), 0);
    std::vector<int> out(12), in(12);
    weft_request reqs[4];
    ASSERT_EQ(recv_init(in.data(), 1, vec, peer_, 51, &reqs[0]), 0) << detail();
    ASSERT_EQ(send_init(out.data(), 1, vec, peer_, 51, &reqs[1]), 0) << detail();
    ASSERT_EQ(weft_type_free(&vec), 0) << "the requests hold the type";
    int dummy = 0;
    ASSERT_EQ(send_init(&dummy, 1, WEFT_INT, WEFT_PROC_NULL, 0, &reqs[2]), 0) << detail();
    ASSERT_EQ(recv_init(&dummy, 1, WEFT_INT, WEFT_PROC_NULL, 0, &reqs[3]), 0) << detail();
    for (int run = 0; run < 20; ++run) {
        for (int k = 0; k < 12; ++k) out[k] = run * 100 + k + world_rank() * 10000;
        std::fill(in.begin(), in.end(), -1);
        ASSERT_EQ(weft_startall(4, reqs), 0) << detail();
        int flag = 0;
        weft_status st;
        for (; !flag; progress_all()) ASSERT_EQ(weft_request_get_status(reqs[0], &flag, &st), 0) << detail();
        for (int k = 0; k < 12; ++k)
            ASSERT_EQ(in[k], k % 3 == 0 ? run * 100 + k + peer_ * 10000 : -1) << "run " << run << " int " << k;
        weft_status sts[4];
        ASSERT_EQ(weft_waitall(4, reqs, sts), 0) << detail();
        EXPECT_EQ(sts[0].source, peer_);
        EXPECT_EQ(sts[3].source, WEFT_PROC_NULL);
        EXPECT_EQ(sts[3].tag, WEFT_ANY_TAG);
    }
    for (auto &r : reqs) ASSERT_EQ(weft_request_free(&r), 0);
}

// Bad arguments fail the init with the nonblocking call's code; misuse of the request calls
// fails with WEFT_ERR_REQUEST or WEFT_ERR_ARG and a detail.
TEST_P(Persistent, Misuse) {
    int v = 0;
    weft_request r = WEFT_REQUEST_NULL;
    EXPECT_EQ(send_init(&v, 1, WEFT_INT, 5, 0, &r), WEFT_ERR_RANK);
    EXPECT_EQ(send_init(&v, 1, WEFT_INT, peer_, -3, &r), WEFT_ERR_TAG);
    EXPECT_EQ(recv_init(&v, 1, WEFT_DATATYPE_NULL, peer_, 0, &r), WEFT_ERR_TYPE);
    EXPECT_EQ(send_init(nullptr, 1, WEFT_INT, peer_, 0, &r), WEFT_ERR_BUFFER);
    EXPECT_EQ(send_init(&v, 1, WEFT_INT, peer_, 0, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_send_init(&v, 1, WEFT_INT, peer_, 0, 0x12345, &r), WEFT_ERR_COMM);
    if (multiplex()) {
        EXPECT_EQ(weft_stream_send_init(&v, 1, WEFT_INT, peer_, 0, comm_, 2, 0, &r), WEFT_ERR_STREAM);
        EXPECT_EQ(weft_stream_recv_init(&v, 1, WEFT_INT, peer_, 0, comm_, 0, 5, &r), WEFT_ERR_STREAM);
    }
    EXPECT_EQ(r, WEFT_REQUEST_NULL);
    EXPECT_EQ(weft_start(nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_start(&r), WEFT_ERR_REQUEST) << "WEFT_REQUEST_NULL";
    EXPECT_NE(detail().find("WEFT_REQUEST_NULL"), std::string::npos) << detail();
    weft_request garbage = 0x4abcdef1;
    EXPECT_EQ(weft_start(&garbage), WEFT_ERR_REQUEST);
    EXPECT_EQ(weft_request_free(&garbage), WEFT_ERR_REQUEST);
    EXPECT_EQ(weft_request_free(&r), WEFT_ERR_REQUEST) << "WEFT_REQUEST_NULL";
    EXPECT_EQ(weft_request_free(nullptr), WEFT_ERR_ARG);
    int flag;
    EXPECT_EQ(weft_request_get_status(garbage, &flag, WEFT_STATUS_IGNORE), WEFT_ERR_REQUEST);
    EXPECT_EQ(weft_request_get_status(WEFT_REQUEST_NULL, nullptr, WEFT_STATUS_IGNORE), WEFT_ERR_ARG);
    EXPECT_EQ(weft_request_is_complete(garbage, &flag), WEFT_ERR_REQUEST);
    EXPECT_EQ(weft_startall(1, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_startall(0, nullptr), 0);
    size_t idx, outcount, indices[1];
    EXPECT_EQ(weft_testany(1, &garbage, &idx, &flag, WEFT_STATUS_IGNORE), WEFT_ERR_REQUEST);
    EXPECT_EQ(weft_waitsome(1, &garbage, &outcount, indices, WEFT_STATUSES_IGNORE), WEFT_ERR_REQUEST);
    EXPECT_EQ(weft_testsome(1, &r, nullptr, indices, WEFT_STATUSES_IGNORE), WEFT_ERR_ARG);
    EXPECT_EQ(weft_waitsome(0, nullptr, &outcount, nullptr, WEFT_STATUSES_IGNORE), 0);
    EXPECT_EQ(outcount, WEFT_UNDEFINED) << "no requests at all";

    // Start on a request that is not persistent: refused, and it still completes normally.
    int in = -1;
    weft_request ordinary;
    ASSERT_EQ(irecv(&in, 1, WEFT_INT, peer_, 61, &ordinary), 0) << detail();
    EXPECT_EQ(weft_start(&ordinary), WEFT_ERR_REQUEST);
    EXPECT_NE(detail().find("not a persistent request"), std::string::npos) << detail();
    v = 61;
    ASSERT_EQ(send(&v, 1, WEFT_INT, peer_, 61), 0) << detail();
    ASSERT_EQ(weft_wait(&ordinary, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(in, 61);
    // A stale copy of a freed persistent handle.
    ASSERT_EQ(send_init(&v, 1, WEFT_INT, peer_, 0, &r), 0) << detail();
    weft_request stale = r;
    ASSERT_EQ(weft_request_free(&r), 0);
    EXPECT_EQ(weft_start(&stale), WEFT_ERR_REQUEST);
}

// The C++ layer (weft.hpp): the same exchange through PersistentRequest.
TEST_P(Persistent, CxxLayer) {
    std::vector<int> out(8), in(8);
    weft::Comm c(comm_);
    weft::PersistentRequest reqs[2];
    if (multiplex()) {
        reqs[0] = weft::stream_recv_init(c, in.data(), in.size(), WEFT_INT, peer_, 71, 1, 0);
        reqs[1] = weft::stream_send_init(c, out.data(), out.size(), WEFT_INT, peer_, 71, 1, 0);
    } else {
        reqs[0] = weft::recv_init(c, std::span<int>(in), peer_, 71);
        reqs[1] = weft::send_init(c, std::span<const int>(out), peer_, 71);
    }
    for (int run = 0; run < 5; ++run) {
        std::fill(out.begin(), out.end(), run + 10 * world_rank());
        weft::start_all(reqs);
        weft::Status st = reqs[0].wait();
        reqs[1].wait();
        EXPECT_EQ(st.source(), peer_);
        EXPECT_EQ(in[7], run + 10 * peer_);
        EXPECT_TRUE(reqs[0].is_complete()) << "inactive";
    }
    int sum = 0, one = 1;
    weft::PersistentRequest ar = weft::allreduce_init(c, &one, &sum, 1, WEFT_INT, WEFT_SUM);
    for (int run = 0; run < 3; ++run) {
        sum = 0;
        ar.start();
        ar.wait();
        EXPECT_EQ(sum, world_size());
    }
    reqs[0].start();  // left active: the destructor cancels the receive and frees it
    try {
        reqs[0].start();
        ADD_FAILURE() << "a second start must throw";
    } catch (const weft::error &e) {
        EXPECT_EQ(e.code(), WEFT_ERR_REQUEST);
    }
}

INSTANTIATE_TEST_SUITE_P(Comm, Persistent, ::testing::Values(kind::world, kind::stream, kind::multiplex), kind_name);

// Active collective requests cannot be freed (MPI: erroneous); completed they can.
class Requests : public collective_test {};

TEST_F(Requests, FreeOfActiveCollectiveRefused) {
    weft_request r;
    ASSERT_EQ(weft_ibarrier(WEFT_COMM_WORLD, &r), 0) << detail();
    int rc = weft_request_free(&r);
    if (rc == WEFT_SUCCESS) {
        // It may have completed already (one process): then it is freed.
        EXPECT_EQ(r, WEFT_REQUEST_NULL);
        return;
    }
    EXPECT_EQ(rc, WEFT_ERR_REQUEST);
    EXPECT_NE(detail().find("active collective"), std::string::npos) << detail();
    ASSERT_NE(r, WEFT_REQUEST_NULL);
    ASSERT_EQ(weft_wait(&r, WEFT_STATUS_IGNORE), 0) << detail();
}

TEST_F(Requests, NullOnlyLists) {
    weft_request reqs[3] = {WEFT_REQUEST_NULL, WEFT_REQUEST_NULL, WEFT_REQUEST_NULL};
    size_t idx = 0, outcount = 0, indices[3];
    int flag = 0;
    weft_status st;
    ASSERT_EQ(weft_testany(3, reqs, &idx, &flag, &st), 0);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(idx, WEFT_UNDEFINED);
    ASSERT_EQ(weft_waitsome(3, reqs, &outcount, indices, &st), 0);
    EXPECT_EQ(outcount, WEFT_UNDEFINED);
    ASSERT_EQ(weft_testsome(3, reqs, &outcount, indices, &st), 0);
    EXPECT_EQ(outcount, WEFT_UNDEFINED);
}

}  // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    ::testing::AddGlobalTestEnvironment(new p2p_test::environment);
    return RUN_ALL_TESTS();
}
