// Multiplex stream communicators across 2 processes with different stream counts per process:
// one process attaches 4 streams, the other 1 (and, in the CountZero suite, 0).  Different
// counts are exactly where a remote endpoint computed from the wrong rank's displacement goes
// astray (MPICH had that bug), so every (src_idx, dst_idx) pair valid for the two sides is used,
// in both directions, with the 4-stream side on rank 0 and on rank 1.
#include <algorithm>
#include <string>
#include <vector>

#include "streams_env.hpp"

using namespace streams_test;

namespace {

constexpr int many = 4;
constexpr int payload_ints = 16;

// Payload word k of message seq from (rank, src_idx) to dst_idx.
int word(int seq, int from_rank, int src_idx, int dst_idx, int k) {
    return ((seq * 8 + from_rank) * 16 + src_idx) * 16 * 64 + dst_idx * 64 + k;
}

struct message {
    std::vector<int> data = std::vector<int>(payload_ints, -1);
    void fill(int seq, int from_rank, int src_idx, int dst_idx) {
        for (int k = 0; k < payload_ints; ++k) data[k] = word(seq, from_rank, src_idx, dst_idx, k);
    }
    // Empty string when the content is what (seq, from_rank, src_idx, dst_idx) sent.
    std::string check(int seq, int from_rank, int src_idx, int dst_idx) const {
        for (int k = 0; k < payload_ints; ++k)
            if (data[k] != word(seq, from_rank, src_idx, dst_idx, k)) {
                // Decode what arrived instead, to name the wrong route.
                int v = data[0];
                return "word " + std::to_string(k) + " is " + std::to_string(data[k]) + "; expected the message (seq " +
                       std::to_string(seq) + ", rank " + std::to_string(from_rank) + ", src_idx " +
                       std::to_string(src_idx) + ", dst_idx " + std::to_string(dst_idx) +
                       "); word 0 decodes to (seq " + std::to_string(v / (16 * 16 * 64 * 8)) + ", rank " +
                       std::to_string((v / (16 * 16 * 64)) % 8) + ", src_idx " + std::to_string((v / (16 * 64)) % 16) +
                       ", dst_idx " + std::to_string((v / 64) % 16) + ")";
            }
        return "";
    }
};

// Creates the multiplex communicator with `counts[rank]` local streams.
class MultiplexBase : public collective_test {
  protected:
    std::vector<weft_stream> streams_;
    weft_comm m_ = WEFT_COMM_NULL;
    int peer_ = -1, nlocal_ = 0, nremote_ = 0;

    void create(int count0, int count1) {
        if (world_size() != 2) GTEST_SKIP() << "needs exactly 2 processes";
        peer_ = 1 - world_rank();
        nlocal_ = world_rank() == 0 ? count0 : count1;
        nremote_ = world_rank() == 0 ? count1 : count0;
        streams_.assign(nlocal_, WEFT_STREAM_NULL);
        for (auto &s : streams_) {
            int rc = weft_stream_create(WEFT_INFO_NULL, &s);
            ASSERT_EQ(rc, 0) << err(rc);
        }
        step("weft_stream_comm_create_multiplex(%d streams)", nlocal_);
        int rc = weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, nlocal_, nlocal_ ? streams_.data() : nullptr, &m_);
        ASSERT_EQ(rc, 0) << "count " << nlocal_ << ": " << err(rc);
        ASSERT_NE(m_, WEFT_COMM_NULL);
        step("test body");
    }
    void TearDown() override {
        if (m_ != WEFT_COMM_NULL) {
            EXPECT_EQ(weft_comm_free(&m_), 0) << detail();
        }
        for (auto &s : streams_)
            if (s != WEFT_STREAM_NULL) {
                EXPECT_EQ(weft_stream_free(&s), 0) << detail();
            }
        collective_test::TearDown();
    }
};

// Parameter: the rank that attaches 4 streams; the other attaches 1.
class Multiplex : public MultiplexBase, public ::testing::WithParamInterface<int> {
  protected:
    void SetUp() override {
        collective_test::SetUp();
        if (GetParam() == 0)
            create(many, 1);
        else
            create(1, many);
    }
};

std::string many_name(const ::testing::TestParamInfo<int> &p) {
    return p.param == 0 ? "FourOnRank0OneOnRank1" : "OneOnRank0FourOnRank1";
}

TEST_P(Multiplex, GetStreamReturnsEachIndex) {
    for (int i = 0; i < nlocal_; ++i) {
        weft_stream got = WEFT_STREAM_NULL;
        ASSERT_EQ(weft_comm_get_stream(m_, i, &got), 0) << "index " << i << ": " << detail();
        EXPECT_EQ(got, streams_[i]) << "index " << i;
    }
    weft_stream got = 123;
    EXPECT_NE(weft_comm_get_stream(m_, nlocal_, &got), 0) << "index " << nlocal_ << " of " << nlocal_;
    EXPECT_NE(weft_comm_get_stream(m_, -2, &got), 0) << "index -2";
    for (auto s : streams_) {
        weft_stream h = s;
        EXPECT_EQ(weft_stream_free(&h), WEFT_ERR_BUSY) << "stream used by a multiplex communicator";
    }
    weft_comm d = WEFT_COMM_NULL;
    ASSERT_EQ(weft_comm_dup(m_, &d), 0) << detail();
    for (int i = 0; i < nlocal_; ++i) {
        got = WEFT_STREAM_NULL;
        ASSERT_EQ(weft_comm_get_stream(d, i, &got), 0) << detail();
        EXPECT_EQ(got, streams_[i]) << "dup keeps index " << i;
    }
    ASSERT_EQ(weft_comm_free(&d), 0) << detail();
}

// Every valid (src_idx, dst_idx) pair in both directions at once, several rounds; receives
// are posted in the reverse order of the sends and all on one tag, so only the indices tell
// the messages apart.
TEST_P(Multiplex, EveryIndexPair) {
    constexpr int rounds = 30, tag = 1;
    for (int seq = 0; seq < rounds; ++seq) {
        step("round %d", seq);
        // Sends: every local src to every remote dst.
        std::vector<message> out(nlocal_ * nremote_), in(nremote_ * nlocal_);
        std::vector<weft_request> reqs;
        struct expect_t {
            int src, dst;
        };
        std::vector<expect_t> expect;
        // Receives first half of the rounds (expected path), after the sends otherwise.
        auto post_recvs = [&] {
            for (int r = nremote_ * nlocal_ - 1; r >= 0; --r) {
                int src = r / nlocal_, dst = r % nlocal_;
                weft_request q;
                int rc = weft_stream_irecv(in[r].data.data(), payload_ints, WEFT_INT, peer_, tag, m_, src, dst, &q);
                ASSERT_EQ(rc, 0) << "irecv src_idx " << src << " dst_idx " << dst << ": " << err(rc);
                reqs.push_back(q);
                expect.push_back({src, dst});
            }
        };
        if (seq % 2 == 0) post_recvs();
        if (HasFatalFailure()) return;
        std::vector<weft_request> sends;
        for (int src = 0; src < nlocal_; ++src)
            for (int dst = 0; dst < nremote_; ++dst) {
                message &m = out[src * nremote_ + dst];
                m.fill(seq, world_rank(), src, dst);
                weft_request q;
                int rc = weft_stream_isend(m.data.data(), payload_ints, WEFT_INT, peer_, tag, m_, src, dst, &q);
                ASSERT_EQ(rc, 0) << "isend src_idx " << src << " dst_idx " << dst << ": " << err(rc);
                sends.push_back(q);
            }
        if (seq % 2 == 1) post_recvs();
        if (HasFatalFailure()) return;
        std::vector<weft_status> st(reqs.size());
        int rc = weft_waitall(reqs.size(), reqs.data(), st.data());
        ASSERT_EQ(rc, 0) << "waitall of receives: " << err(rc);
        rc = weft_waitall(sends.size(), sends.data(), WEFT_STATUSES_IGNORE);
        ASSERT_EQ(rc, 0) << "waitall of sends: " << err(rc);
        // After a failing round keep communicating (the peer is in the same loop) but stop checking.
        for (size_t k = 0; k < reqs.size() && !HasFailure(); ++k) {
            int src = expect[k].src, dst = expect[k].dst;
            std::string what = "rank " + std::to_string(world_rank()) + " round " + std::to_string(seq) +
                               " receive at dst_idx " + std::to_string(dst) + " from (rank " + std::to_string(peer_) +
                               ", src_idx " + std::to_string(src) + "): ";
            EXPECT_EQ(st[k].source, peer_) << what;
            EXPECT_EQ(st[k].tag, tag) << what;
            EXPECT_EQ(st[k].stream_index, src) << what << "status.stream_index";
            std::string bad = in[src * nlocal_ + dst].check(seq, peer_, src, dst);
            EXPECT_EQ(bad, "") << what;
        }
    }
}

// WEFT_ANY_INDEX: every message for a local index arrives, in order per (source, src_idx),
// and status.stream_index names the sender's index; a wildcard on one local index never takes
// a message meant for another.
TEST_P(Multiplex, AnyIndexReceive) {
    constexpr int per_pair = 20, tag = 2;
    // Each local src sends per_pair numbered messages to each remote dst.
    std::vector<weft_request> sends;
    std::vector<std::vector<int>> out(nlocal_ * nremote_, std::vector<int>(per_pair));
    for (int n = 0; n < per_pair; ++n)
        for (int src = 0; src < nlocal_; ++src)
            for (int dst = 0; dst < nremote_; ++dst) {
                int &v = out[src * nremote_ + dst][n];
                v = word(n, world_rank(), src, dst, 0);
                weft_request q;
                int rc = weft_stream_isend(&v, 1, WEFT_INT, peer_, tag, m_, src, dst, &q);
                ASSERT_EQ(rc, 0) << "isend " << src << "->" << dst << ": " << err(rc);
                sends.push_back(q);
            }
    // Receive on each local dst, highest index first, with WEFT_ANY_INDEX.
    for (int dst = nlocal_ - 1; dst >= 0; --dst) {
        std::vector<int> next(nremote_, 0);
        for (int k = 0; k < per_pair * nremote_; ++k) {
            step("any-index receive %d at dst_idx %d", k, dst);
            int v = -1;
            weft_status st;
            int source = (k % 2) ? WEFT_ANY_SOURCE : peer_;
            int rc = weft_stream_recv(&v, 1, WEFT_INT, source, tag, m_, WEFT_ANY_INDEX, dst, &st);
            ASSERT_EQ(rc, 0) << "stream_recv(ANY_INDEX, dst_idx " << dst << "): " << err(rc);
            ASSERT_EQ(st.source, peer_);
            ASSERT_GE(st.stream_index, 0) << "dst_idx " << dst;
            ASSERT_LT(st.stream_index, nremote_) << "dst_idx " << dst;
            int src = st.stream_index;
            EXPECT_EQ(v, word(next[src], peer_, src, dst, 0))
                << "rank " << world_rank() << " dst_idx " << dst << ": message from src_idx " << src << " number "
                << next[src] << " wrong or out of order";
            ++next[src];
        }
        for (int src = 0; src < nremote_; ++src) EXPECT_EQ(next[src], per_pair) << "from src_idx " << src;
    }
    int rc = weft_waitall(sends.size(), sends.data(), WEFT_STATUSES_IGNORE);
    ASSERT_EQ(rc, 0) << err(rc);
}

// Out-of-range indices are errors, not crashes, and nothing is sent or posted.
TEST_P(Multiplex, OutOfRangeIndicesAreErrors) {
    constexpr int tag = 3;
    int v = 7;
    // Local index out of range on the sending side, remote index out of range on the other.
    const int bad_src[] = {nlocal_, nlocal_ + 5, -2, WEFT_ANY_INDEX, 1 << 20};
    const int bad_dst[] = {nremote_, nremote_ + 5, -2, WEFT_ANY_INDEX, 1 << 20};
    for (int s : bad_src) {
        int rc = weft_stream_send(&v, 1, WEFT_INT, peer_, tag, m_, s, 0);
        EXPECT_NE(rc, 0) << "rank " << world_rank() << " weft_stream_send src_idx " << s << " of " << nlocal_
                         << " local streams";
        weft_request q = WEFT_REQUEST_NULL;
        rc = weft_stream_isend(&v, 1, WEFT_INT, peer_, tag, m_, s, 0, &q);
        EXPECT_NE(rc, 0) << "weft_stream_isend src_idx " << s;
        if (rc == 0) weft_wait(&q, WEFT_STATUS_IGNORE);
    }
    for (int d : bad_dst) {
        int rc = weft_stream_send(&v, 1, WEFT_INT, peer_, tag, m_, 0, d);
        EXPECT_NE(rc, 0) << "rank " << world_rank() << " weft_stream_send dst_idx " << d << " of the peer's "
                         << nremote_ << " streams";
    }
    // Receives: the local index is dst_idx, the peer's is src_idx (WEFT_ANY_INDEX is valid there).
    auto bad_recv = [&](int src, int dst, const char *what) {
        weft_request q = WEFT_REQUEST_NULL;
        int w = 0;
        int rc = weft_stream_irecv(&w, 1, WEFT_INT, peer_, tag, m_, src, dst, &q);
        EXPECT_NE(rc, 0) << "rank " << world_rank() << " weft_stream_irecv src_idx " << src << " dst_idx " << dst
                         << ": " << what;
        if (rc == 0 && q != WEFT_REQUEST_NULL) {
            weft_cancel(&q);
            weft_wait(&q, WEFT_STATUS_IGNORE);
        }
    };
    for (int d : bad_src) bad_recv(0, d, "local dst_idx out of range");
    for (int s : {nremote_, nremote_ + 5, -2, 1 << 20}) bad_recv(s, 0, "peer's src_idx out of range");
    // A bad rank is still a bad rank.
    EXPECT_EQ(weft_stream_send(&v, 1, WEFT_INT, 2, tag, m_, 0, 0), WEFT_ERR_RANK);
    // And the communicator still works after all that: one message each way on index 0.
    int w = -1;
    weft_request q;
    ASSERT_EQ(weft_stream_irecv(&w, 1, WEFT_INT, peer_, tag, m_, 0, 0, &q), 0) << detail();
    ASSERT_EQ(weft_stream_send(&v, 1, WEFT_INT, peer_, tag, m_, 0, 0), 0) << detail();
    ASSERT_EQ(weft_wait(&q, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(w, 7);
    // Nothing stray arrived from the refused sends.
    p2p_barrier();
    int flag = 1;
    ASSERT_EQ(weft_iprobe(WEFT_ANY_SOURCE, tag, m_, &flag, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(flag, 0) << "a refused send delivered a message";
}

// Plain weft_send/weft_recv on a multiplex communicator use index 0 on both sides.
TEST_P(Multiplex, PlainSendAndRecvUseIndexZero) {
    constexpr int tag = 4;
    int v = 100 + world_rank(), w = -1;
    weft_status st;
    // weft_send lands at the peer's index 0, from local index 0.
    weft_request other = WEFT_REQUEST_NULL;
    int decoy = -1;
    if (nlocal_ > 1) {
        // A receive posted first on index 1 must not take it.
        ASSERT_EQ(weft_stream_irecv(&decoy, 1, WEFT_INT, peer_, tag, m_, WEFT_ANY_INDEX, 1, &other), 0) << detail();
    }
    ASSERT_EQ(weft_send(&v, 1, WEFT_INT, peer_, tag, m_), 0) << detail();
    ASSERT_EQ(weft_stream_recv(&w, 1, WEFT_INT, peer_, tag, m_, WEFT_ANY_INDEX, 0, &st), 0) << detail();
    EXPECT_EQ(w, 100 + peer_);
    EXPECT_EQ(st.stream_index, 0) << "weft_send sends from index 0";
    if (other != WEFT_REQUEST_NULL) {
        int flag = 1;
        ASSERT_EQ(weft_test(&other, &flag, WEFT_STATUS_IGNORE), 0);
        EXPECT_EQ(flag, 0) << "the receive on index 1 took a weft_send message (value " << decoy << ")";
        if (!flag) {
            weft_status cst;
            ASSERT_EQ(weft_cancel(&other), 0) << detail();
            ASSERT_EQ(weft_wait(&other, &cst), 0) << detail();
        }
    }
    p2p_barrier();
    // weft_recv receives at index 0 what the peer's index 0 sent there.
    w = -1;
    ASSERT_EQ(weft_stream_send(&v, 1, WEFT_INT, peer_, tag + 1, m_, 0, 0), 0) << detail();
    ASSERT_EQ(weft_recv(&w, 1, WEFT_INT, peer_, tag + 1, m_, &st), 0) << detail();
    EXPECT_EQ(w, 100 + peer_);
    EXPECT_EQ(st.stream_index, 0);
    // A message to another index is not taken by weft_recv.
    if (nremote_ > 1) {
        ASSERT_EQ(weft_stream_send(&v, 1, WEFT_INT, peer_, tag + 2, m_, 0, 1), 0) << detail();
        int zero = 0;
        ASSERT_EQ(weft_stream_send(&zero, 1, WEFT_INT, peer_, tag + 2, m_, 0, 0), 0) << detail();
    }
    if (nlocal_ > 1) {
        ASSERT_EQ(weft_recv(&w, 1, WEFT_INT, peer_, tag + 2, m_, &st), 0) << detail();
        EXPECT_EQ(w, 0) << "weft_recv took the message sent to index 1";
        ASSERT_EQ(weft_stream_recv(&w, 1, WEFT_INT, peer_, tag + 2, m_, 0, 1, &st), 0) << detail();
        EXPECT_EQ(w, 100 + peer_);
    }
}

INSTANTIATE_TEST_SUITE_P(Counts, Multiplex, ::testing::Values(0, 1), many_name);

// One process attaches no stream at all (count 0).  Parameter: the rank with count 0; the
// other attaches 4.  The process with streams still reaches all of its own indices, and
// nothing addresses an index the count-0 process does not have.
class CountZero : public MultiplexBase, public ::testing::WithParamInterface<int> {
  protected:
    void SetUp() override {
        collective_test::SetUp();
        if (GetParam() == 0)
            create(0, many);
        else
            create(many, 0);
    }
};

std::string zero_name(const ::testing::TestParamInfo<int> &p) {
    return p.param == 0 ? "NoneOnRank0FourOnRank1" : "FourOnRank0NoneOnRank1";
}

TEST_P(CountZero, CreateAndGetStream) {
    int r = -1, n = -1;
    ASSERT_EQ(weft_comm_rank(m_, &r), 0);
    ASSERT_EQ(weft_comm_size(m_, &n), 0);
    EXPECT_EQ(r, world_rank());
    EXPECT_EQ(n, 2);
    weft_stream got = 123;
    int rc = weft_comm_get_stream(m_, 0, &got);
    if (nlocal_ == 0)
        EXPECT_TRUE(rc != 0 || got == WEFT_STREAM_NULL) << "index 0 of no streams gave stream " << got;
    else
        EXPECT_EQ(got, streams_[0]);
}

// Nothing can address the count-0 process's streams, nor send from its (absent) index 0.
TEST_P(CountZero, NoIndexOnTheEmptySide) {
    constexpr int tag = 6;
    int v = 1;
    if (nlocal_ == 0) {
        int rc = weft_stream_send(&v, 1, WEFT_INT, peer_, tag, m_, 0, 0);
        EXPECT_NE(rc, 0) << "weft_stream_send from src_idx 0 of a process with no stream";
        weft_request q = WEFT_REQUEST_NULL;
        rc = weft_stream_irecv(&v, 1, WEFT_INT, peer_, tag, m_, 0, 0, &q);
        EXPECT_NE(rc, 0) << "weft_stream_irecv at dst_idx 0 of a process with no stream";
        if (rc == 0 && q != WEFT_REQUEST_NULL) {
            weft_cancel(&q);
            weft_wait(&q, WEFT_STATUS_IGNORE);
        }
    } else {
        for (int dst : {0, 1}) {
            int rc = weft_stream_send(&v, 1, WEFT_INT, peer_, tag, m_, 0, dst);
            EXPECT_NE(rc, 0) << "weft_stream_send to dst_idx " << dst << " of a process with no stream";
        }
        weft_request q = WEFT_REQUEST_NULL;
        int rc = weft_stream_irecv(&v, 1, WEFT_INT, peer_, tag, m_, 0, 0, &q);
        EXPECT_NE(rc, 0) << "weft_stream_irecv from src_idx 0 of a process with no stream";
        if (rc == 0 && q != WEFT_REQUEST_NULL) {
            weft_cancel(&q);
            weft_wait(&q, WEFT_STATUS_IGNORE);
        }
    }
    p2p_barrier();
    if (nlocal_ > 0) {  // (a process with no stream has no index to probe)
        int flag = 1;
        ASSERT_EQ(weft_iprobe(WEFT_ANY_SOURCE, tag, m_, &flag, WEFT_STATUS_IGNORE), 0) << detail();
        EXPECT_EQ(flag, 0) << "a refused send delivered a message";
    }
}

INSTANTIATE_TEST_SUITE_P(Counts, CountZero, ::testing::Values(0, 1), zero_name);


// Run last (a hang here hides no other result): the process with 4 streams while the other
// has none sends between all of its own indices; both operations complete in one waitall.
class CountZeroSelf : public CountZero {};

// The 4-stream process sends between all of its own indices (displacement of its own rank).
TEST_P(CountZeroSelf, MessagesOverEveryLocalPair) {
    if (nlocal_ == 0) GTEST_SKIP() << "this process attached no stream";
    constexpr int tag = 5;
    for (int src = 0; src < nlocal_; ++src)
        for (int dst = 0; dst < nlocal_; ++dst) {
            message out, in;
            out.fill(1, world_rank(), src, dst);
            weft_request q[2];
            weft_status st[2];
            step("self message %d->%d: waitall(irecv, isend)", src, dst);
            int rc = weft_stream_irecv(in.data.data(), payload_ints, WEFT_INT, world_rank(), tag, m_, src, dst, &q[0]);
            ASSERT_EQ(rc, 0) << "irecv " << src << "->" << dst << ": " << err(rc);
            rc = weft_stream_isend(out.data.data(), payload_ints, WEFT_INT, world_rank(), tag, m_, src, dst, &q[1]);
            ASSERT_EQ(rc, 0) << "isend " << src << "->" << dst << ": " << err(rc);
            rc = weft_waitall(2, q, st);
            ASSERT_EQ(rc, 0) << err(rc);
            EXPECT_EQ(in.check(1, world_rank(), src, dst), "") << "self message " << src << "->" << dst;
            EXPECT_EQ(st[0].stream_index, src);
            EXPECT_EQ(st[0].source, world_rank());
        }
}

INSTANTIATE_TEST_SUITE_P(Counts, CountZeroSelf, ::testing::Values(0, 1), zero_name);

}  // namespace

STREAMS_TEST_MAIN("weft-test-streams-multiplex", WEFT_THREAD_SINGLE)
