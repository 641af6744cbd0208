// Stream communicators across 2 processes: each process attaches its own stream or
// WEFT_STREAM_NULL (streams need not agree between processes), and ordinary point-to-point
// on the stream communicator works whatever the mix.  Run with 2 processes.
#include <string>
#include <vector>

#include "streams_env.hpp"

using namespace streams_test;

namespace {

// Which processes attach a real stream.
enum class attach { rank0_only, rank1_only, both, neither };

std::string attach_name(const ::testing::TestParamInfo<attach> &p) {
    switch (p.param) {
        case attach::rank0_only: return "Rank0StreamRank1Null";
        case attach::rank1_only: return "Rank0NullRank1Stream";
        case attach::both: return "BothStreams";
        case attach::neither: return "BothNull";
    }
    return "?";
}

class PingPong : public collective_test, public ::testing::WithParamInterface<attach> {
  protected:
    weft_stream s_ = WEFT_STREAM_NULL;
    weft_comm c_ = WEFT_COMM_NULL;
    int peer_ = -1;

    bool mine_attached() const {
        switch (GetParam()) {
            case attach::rank0_only: return world_rank() == 0;
            case attach::rank1_only: return world_rank() == 1;
            case attach::both: return true;
            case attach::neither: return false;
        }
        return false;
    }
    void SetUp() override {
        collective_test::SetUp();
        if (world_size() != 2) GTEST_SKIP() << "needs exactly 2 processes";
        peer_ = 1 - world_rank();
        if (mine_attached()) {
            int rc = weft_stream_create(WEFT_INFO_NULL, &s_);
            ASSERT_EQ(rc, 0) << err(rc);
        }
        step("weft_stream_comm_create");
        int rc = weft_stream_comm_create(WEFT_COMM_WORLD, s_, &c_);
        ASSERT_EQ(rc, 0) << err(rc);
        ASSERT_NE(c_, WEFT_COMM_NULL);
        int r = -1, n = -1;
        ASSERT_EQ(weft_comm_rank(c_, &r), 0);
        ASSERT_EQ(weft_comm_size(c_, &n), 0);
        EXPECT_EQ(r, world_rank());
        EXPECT_EQ(n, 2);
        weft_stream got = 123;
        ASSERT_EQ(weft_comm_get_stream(c_, 0, &got), 0) << detail();
        EXPECT_EQ(got, s_);
        step("test body");
    }
    void TearDown() override {
        if (c_ != WEFT_COMM_NULL) {
            EXPECT_EQ(weft_comm_free(&c_), 0) << detail();
        }
        if (s_ != WEFT_STREAM_NULL) {
            EXPECT_EQ(weft_stream_free(&s_), 0) << detail();
        }
        collective_test::TearDown();
    }

    // One round trip of n bytes on tag; rank 0 starts.  Error codes stop the test (the pair is
    // out of step then); wrong content or status is counted in bad_ and the first one kept in
    // first_bad_, so both processes still run every round and stay in step.
    int bad_ = 0;
    std::string first_bad_;
    void note_bad(const std::string &what) {
        if (bad_++ == 0) first_bad_ = what;
    }
    void round_trip(int i, size_t n, int tag, std::vector<unsigned char> &out, std::vector<unsigned char> &in) {
        out.resize(n);
        in.assign(n, 0);
        for (size_t k = 0; k < n; ++k) out[k] = pattern(world_rank(), 0, i, k);
        weft_status st;
        int rc;
        if (world_rank() == 0) {
            rc = weft_send(out.data(), n, WEFT_BYTE, peer_, tag, c_);
            ASSERT_EQ(rc, 0) << "send, round " << i << ": " << err(rc);
            rc = weft_recv(in.data(), n, WEFT_BYTE, peer_, tag, c_, &st);
            ASSERT_EQ(rc, 0) << "recv, round " << i << ": " << err(rc);
        } else {
            rc = weft_recv(in.data(), n, WEFT_BYTE, peer_, tag, c_, &st);
            ASSERT_EQ(rc, 0) << "recv, round " << i << ": " << err(rc);
            rc = weft_send(out.data(), n, WEFT_BYTE, peer_, tag, c_);
            ASSERT_EQ(rc, 0) << "send, round " << i << ": " << err(rc);
        }
        std::string where = "rank " + std::to_string(world_rank()) + ", round " + std::to_string(i) + ": ";
        if (st.source != peer_) note_bad(where + "status.source " + std::to_string(st.source));
        if (st.tag != tag) note_bad(where + "status.tag " + std::to_string(st.tag));
        if (st.error != 0) note_bad(where + "status.error " + std::to_string(st.error));
        if (st.stream_index != 0)
            note_bad(where + "status.stream_index " + std::to_string(st.stream_index) + " (stream comms report 0)");
        size_t count = 0;
        weft_get_count(&st, WEFT_BYTE, &count);
        if (count != n) note_bad(where + "count " + std::to_string(count) + " != " + std::to_string(n));
        for (size_t k = 0; k < n; ++k)
            if (in[k] != pattern(peer_, 0, i, k)) {
                note_bad(where + "byte " + std::to_string(k) + " of " + std::to_string(n) + " is " +
                         std::to_string(in[k]) + ", expected " + std::to_string(pattern(peer_, 0, i, k)));
                break;
            }
    }
};

TEST_P(PingPong, ThousandRoundTrips) {
    std::vector<unsigned char> out, in;
    for (int i = 0; i < 1000; ++i) {
        step("round trip %d", i);
        size_t n = (i % 100 == 99) ? 65536 + i : 1 + (i * 37) % 512;  // mostly small, some large
        round_trip(i, n, i % 7, out, in);
        if (HasFatalFailure()) return;
    }
    EXPECT_EQ(bad_, 0) << "first: " << first_bad_;
}

TEST_P(PingPong, LargeMessages) {
    std::vector<unsigned char> out, in;
    const size_t sizes[] = {1u << 20, (4u << 20) + 5, 0, 1};
    for (int i = 0; i < 12; ++i) {
        step("large round trip %d", i);
        round_trip(i, sizes[i % 4], 3, out, in);
        if (HasFatalFailure()) return;
    }
    EXPECT_EQ(bad_, 0) << "first: " << first_bad_;
}

// A window of nonblocking operations in both directions at once.
TEST_P(PingPong, NonblockingWindow) {
    constexpr int window = 64, rounds = 50;
    std::vector<int64_t> in(window), out(window);
    std::vector<weft_request> reqs(2 * window, WEFT_REQUEST_NULL);
    for (int r = 0; r < rounds; ++r) {
        step("window %d", r);
        for (int i = 0; i < window; ++i) {
            in[i] = -1;
            out[i] = (int64_t(world_rank()) << 32) | (r * window + i);
            ASSERT_EQ(weft_irecv(&in[i], 1, WEFT_INT64_T, peer_, 2, c_, &reqs[i]), 0) << detail();
        }
        for (int i = 0; i < window; ++i)
            ASSERT_EQ(weft_isend(&out[i], 1, WEFT_INT64_T, peer_, 2, c_, &reqs[window + i]), 0) << detail();
        int rc = weft_waitall(reqs.size(), reqs.data(), WEFT_STATUSES_IGNORE);
        ASSERT_EQ(rc, 0) << err(rc);
        for (int i = 0; i < window; ++i)
            if (in[i] != ((int64_t(peer_) << 32) | (r * window + i)))
                note_bad("window " + std::to_string(r) + " message " + std::to_string(i) + ": " + std::to_string(in[i]));
    }
    EXPECT_EQ(bad_, 0) << "first: " << first_bad_;
}

// The stream communicator is its own context: messages with the same source and tag on world
// and on a dup of the stream communicator are not confused.
TEST_P(PingPong, ContextsAreSeparate) {
    weft_comm d = WEFT_COMM_NULL;
    step("weft_comm_dup of the stream communicator");
    ASSERT_EQ(weft_comm_dup(c_, &d), 0) << detail();
    weft_stream got = 123;
    ASSERT_EQ(weft_comm_get_stream(d, 0, &got), 0) << detail();
    EXPECT_EQ(got, s_) << "dup keeps the stream";
    step("messages on world, the stream comm and its dup");
    if (world_rank() == 0) {
        int a = 1, b = 2, c = 3;
        ASSERT_EQ(weft_send(&a, 1, WEFT_INT, 1, 5, WEFT_COMM_WORLD), 0) << detail();
        ASSERT_EQ(weft_send(&b, 1, WEFT_INT, 1, 5, c_), 0) << detail();
        ASSERT_EQ(weft_send(&c, 1, WEFT_INT, 1, 5, d), 0) << detail();
    } else {
        int x = 0;
        // Receive in the reverse order of sending.
        step("recv on the dup (ANY_SOURCE)");
        ASSERT_EQ(weft_recv(&x, 1, WEFT_INT, WEFT_ANY_SOURCE, 5, d, WEFT_STATUS_IGNORE), 0) << detail();
        EXPECT_EQ(x, 3);
        step("recv on the stream comm (ANY_TAG)");
        ASSERT_EQ(weft_recv(&x, 1, WEFT_INT, 0, WEFT_ANY_TAG, c_, WEFT_STATUS_IGNORE), 0) << detail();
        EXPECT_EQ(x, 2);
        step("recv on world");
        ASSERT_EQ(weft_recv(&x, 1, WEFT_INT, 0, 5, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0) << detail();
        EXPECT_EQ(x, 1);
    }
    step("barrier in the test");
    p2p_barrier();
    step("weft_comm_free of the dup");
    ASSERT_EQ(weft_comm_free(&d), 0) << detail();
}

// The stream cannot be freed while the communicator uses it, on either side.
TEST_P(PingPong, StreamFreeIsBusyWhileCommLives) {
    if (s_ == WEFT_STREAM_NULL) GTEST_SKIP() << "this process attached WEFT_STREAM_NULL";
    weft_stream h = s_;
    EXPECT_EQ(weft_stream_free(&h), WEFT_ERR_BUSY) << detail();
    EXPECT_EQ(h, s_);
}

INSTANTIATE_TEST_SUITE_P(Attach, PingPong,
                         ::testing::Values(attach::rank0_only, attach::rank1_only, attach::both, attach::neither),
                         attach_name);

class Split : public collective_test {};

// Split across processes: by parity (each alone), by one color with keys reversing the order,
// and with WEFT_UNDEFINED on one side.
TEST_F(Split, ParityReverseAndUndefined) {
    if (world_size() != 2) GTEST_SKIP() << "needs exactly 2 processes";
    weft_comm c = WEFT_COMM_NULL;
    ASSERT_EQ(weft_comm_split(WEFT_COMM_WORLD, world_rank() % 2, 0, &c), 0) << detail();
    int r = -1, n = -1;
    ASSERT_EQ(weft_comm_rank(c, &r), 0);
    ASSERT_EQ(weft_comm_size(c, &n), 0);
    EXPECT_EQ(r, 0);
    EXPECT_EQ(n, 1);
    ASSERT_EQ(weft_comm_free(&c), 0) << detail();

    ASSERT_EQ(weft_comm_split(WEFT_COMM_WORLD, 7, -world_rank(), &c), 0) << detail();
    ASSERT_EQ(weft_comm_rank(c, &r), 0);
    ASSERT_EQ(weft_comm_size(c, &n), 0);
    EXPECT_EQ(n, 2);
    EXPECT_EQ(r, 1 - world_rank()) << "keys reverse the order";
    // Ranks in the new communicator address the right processes.
    int out = 1000 + world_rank(), in = -1;
    weft_request req;
    weft_status st;
    ASSERT_EQ(weft_irecv(&in, 1, WEFT_INT, 1 - r, 1, c, &req), 0) << detail();
    ASSERT_EQ(weft_send(&out, 1, WEFT_INT, 1 - r, 1, c), 0) << detail();
    ASSERT_EQ(weft_wait(&req, &st), 0) << detail();
    EXPECT_EQ(in, 1000 + (1 - world_rank()));
    EXPECT_EQ(st.source, 1 - r);
    ASSERT_EQ(weft_comm_free(&c), 0) << detail();

    // Rank 1 opts out.
    c = 123;
    ASSERT_EQ(weft_comm_split(WEFT_COMM_WORLD, world_rank() == 1 ? static_cast<int>(WEFT_UNDEFINED) : 0, 0, &c), 0)
        << detail();
    if (world_rank() == 1) {
        EXPECT_EQ(c, WEFT_COMM_NULL);
    } else {
        ASSERT_NE(c, WEFT_COMM_NULL);
        ASSERT_EQ(weft_comm_size(c, &n), 0);
        EXPECT_EQ(n, 1);
        ASSERT_EQ(weft_comm_free(&c), 0) << detail();
    }
}

// Split of a stream communicator where only rank 0 has a stream.
TEST_F(Split, OfAStreamCommunicator) {
    if (world_size() != 2) GTEST_SKIP() << "needs exactly 2 processes";
    weft_stream s = WEFT_STREAM_NULL;
    if (world_rank() == 0) {
        ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
    }
    weft_comm sc = WEFT_COMM_NULL, c = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s, &sc), 0) << detail();
    ASSERT_EQ(weft_comm_split(sc, 0, world_rank(), &c), 0) << detail();
    int v = 42 + world_rank(), w = -1;
    weft_request req;
    ASSERT_EQ(weft_irecv(&w, 1, WEFT_INT, 1 - world_rank(), 2, c, &req), 0) << detail();
    ASSERT_EQ(weft_send(&v, 1, WEFT_INT, 1 - world_rank(), 2, c), 0) << detail();
    ASSERT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(w, 42 + 1 - world_rank());
    ASSERT_EQ(weft_comm_free(&c), 0) << detail();
    ASSERT_EQ(weft_comm_free(&sc), 0) << detail();
    if (s != WEFT_STREAM_NULL) {
        ASSERT_EQ(weft_stream_free(&s), 0) << detail();
    }
}

}  // namespace

STREAMS_TEST_MAIN("weft-test-streams-pingpong", WEFT_THREAD_SINGLE)
