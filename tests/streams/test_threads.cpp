// Streams under WEFT_THREAD_MULTIPLE across 2 processes: 4 threads per process, each with its
// own stream.  Patterns from the MPIX Stream paper: all-to-all between threads through one
// multiplex communicator, N-to-1 with a polling thread and a progress thread, and one-to-one
// through one stream communicator per thread (and, for comparison, one conventional
// communicator per thread, which is what WEFT_THREAD_CS=vci and WEFT_NUM_VCIS serve).
#include <barrier>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "streams_env.hpp"

using namespace streams_test;

namespace {

constexpr int nthreads = 4;

int word(int seq, int from_rank, int src_idx, int dst_idx) {
    return ((seq * 8 + from_rank) * 16 + src_idx) * 16 + dst_idx;
}

// Failures seen by worker threads, reported by the main thread.
class thread_errors {
  public:
    void add(int thread, const std::string &what) {
        std::lock_guard<std::mutex> g(mu_);
        if (list_.size() < 20) list_.push_back("rank " + std::to_string(rank_) + " thread " + std::to_string(thread) + ": " + what);
        ++count_;
    }
    std::string report() const {
        std::string s;
        for (auto &e : list_) s += "\n  " + e;
        if (count_ > list_.size()) s += "\n  ... " + std::to_string(count_ - list_.size()) + " more";
        return s;
    }
    size_t count() const { return count_; }
    int rank_ = -1;

  private:
    std::mutex mu_;
    std::vector<std::string> list_;
    size_t count_ = 0;
};

// Runs body(t) on nthreads threads and joins them.
void run_threads(const std::function<void(int)> &body) {
    std::vector<std::thread> th;
    for (int t = 0; t < nthreads; ++t) th.emplace_back(body, t);
    for (auto &x : th) x.join();
}

class Threads : public collective_test {
  protected:
    std::vector<weft_stream> streams_ = std::vector<weft_stream>(nthreads, WEFT_STREAM_NULL);
    weft_comm m_ = WEFT_COMM_NULL;
    std::vector<weft_comm> dups_;  // dup_world_per_thread; freed by TearDown
    int peer_ = -1;
    thread_errors errors_;

    // One conventional communicator per thread: dups of world, served by the implicit pool.
    void dup_world_per_thread() {
        dups_.assign(nthreads, WEFT_COMM_NULL);
        for (auto &c : dups_) ASSERT_EQ(weft_comm_dup(WEFT_COMM_WORLD, &c), 0) << detail();
    }

    void SetUp() override {
        collective_test::SetUp();
        if (provided_level() != WEFT_THREAD_MULTIPLE)
            GTEST_SKIP() << "WEFT_THREAD_MULTIPLE not provided (got " << provided_level() << ")";
        if (world_size() != 2) GTEST_SKIP() << "needs exactly 2 processes";
        peer_ = 1 - world_rank();
        errors_.rank_ = world_rank();
        for (auto &s : streams_) {
            int rc = weft_stream_create(WEFT_INFO_NULL, &s);
            ASSERT_EQ(rc, 0) << err(rc);
        }
        int rc = weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, nthreads, streams_.data(), &m_);
        ASSERT_EQ(rc, 0) << err(rc);
    }
    void TearDown() override {
        for (auto &c : dups_)
            if (c != WEFT_COMM_NULL) {
                EXPECT_EQ(weft_comm_free(&c), 0) << detail();
            }
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

// Every thread sends to every thread of the other process and receives from all of them:
// 16 (src_idx, dst_idx) pairs per direction, all at once, for several rounds.
TEST_F(Threads, AllToAllThroughOneMultiplexComm) {
    constexpr int rounds = 100, tag = 1;
    step("all-to-all threads running");
    run_threads([&](int t) {
        std::vector<int> in(nthreads), out(nthreads);
        std::vector<weft_request> reqs(2 * nthreads);
        std::vector<weft_status> st(2 * nthreads);
        for (int r = 0; r < rounds; ++r) {
            for (int u = 0; u < nthreads; ++u) {
                in[u] = -1;
                int rc = weft_stream_irecv(&in[u], 1, WEFT_INT, peer_, tag, m_, u, t, &reqs[u]);
                if (rc) return errors_.add(t, "irecv from src_idx " + std::to_string(u) + ": " + err(rc));
            }
            for (int u = 0; u < nthreads; ++u) {
                out[u] = word(r, world_rank(), t, u);
                int rc = weft_stream_isend(&out[u], 1, WEFT_INT, peer_, tag, m_, t, u, &reqs[nthreads + u]);
                if (rc) return errors_.add(t, "isend to dst_idx " + std::to_string(u) + ": " + err(rc));
            }
            int rc = weft_waitall(reqs.size(), reqs.data(), st.data());
            if (rc) return errors_.add(t, "waitall round " + std::to_string(r) + ": " + err(rc));
            for (int u = 0; u < nthreads; ++u) {
                if (in[u] != word(r, peer_, u, t))
                    errors_.add(t, "round " + std::to_string(r) + " from src_idx " + std::to_string(u) + ": got " +
                                       std::to_string(in[u]) + ", expected " + std::to_string(word(r, peer_, u, t)));
                if (st[u].stream_index != u)
                    errors_.add(t, "status.stream_index " + std::to_string(st[u].stream_index) + ", expected " +
                                       std::to_string(u));
                if (st[u].source != peer_) errors_.add(t, "status.source " + std::to_string(st[u].source));
            }
        }
    });
    EXPECT_EQ(errors_.count(), 0u) << errors_.report();
}

// N-to-1: threads 1..3 of each process send to thread 0 of both processes (local and remote);
// thread 0 receives everything with WEFT_ANY_SOURCE and WEFT_ANY_INDEX while a progress thread
// runs on its stream, then stops it.
TEST_F(Threads, NToOneWithProgressThread) {
    constexpr int per_dest = 50, tag = 2;
    std::barrier<> started(nthreads);
    step("N-to-1 threads running");
    run_threads([&](int t) {
        if (t == 0) {
            int rc = weft_start_progress_thread(streams_[0]);
            if (rc) errors_.add(t, "weft_start_progress_thread: " + err(rc));
            started.arrive_and_wait();
            if (rc) return;
            // next[source][src_idx]: the sequence number expected next.
            int next[2][nthreads] = {};
            const int total = 2 * (nthreads - 1) * per_dest;
            for (int k = 0; k < total; ++k) {
                int v = -1;
                weft_status st;
                rc = weft_stream_recv(&v, 1, WEFT_INT, WEFT_ANY_SOURCE, tag, m_, WEFT_ANY_INDEX, 0, &st);
                if (rc) {
                    errors_.add(t, "weft_stream_recv(ANY_SOURCE, ANY_INDEX) number " + std::to_string(k) + ": " + err(rc));
                    break;
                }
                if (st.source < 0 || st.source > 1 || st.stream_index < 1 || st.stream_index >= nthreads) {
                    errors_.add(t, "status (source " + std::to_string(st.source) + ", stream_index " +
                                       std::to_string(st.stream_index) + ") is not a sender");
                    continue;
                }
                int &n = next[st.source][st.stream_index];
                if (v != word(n, st.source, st.stream_index, 0))
                    errors_.add(t, "from (rank " + std::to_string(st.source) + ", src_idx " + std::to_string(st.stream_index) +
                                       "): got " + std::to_string(v) + ", expected message " + std::to_string(n));
                ++n;
            }
            for (int s = 0; s < 2; ++s)
                for (int i = 1; i < nthreads; ++i)
                    if (next[s][i] != per_dest)
                        errors_.add(t, "from (rank " + std::to_string(s) + ", src_idx " + std::to_string(i) + ") got " +
                                           std::to_string(next[s][i]) + " messages");
            rc = weft_stop_progress_thread(streams_[0]);
            if (rc) errors_.add(t, "weft_stop_progress_thread: " + err(rc));
            return;
        }
        started.arrive_and_wait();
        for (int n = 0; n < per_dest; ++n)
            for (int dest : {world_rank(), peer_}) {
                int v = word(n, world_rank(), t, 0);
                int rc = weft_stream_send(&v, 1, WEFT_INT, dest, tag, m_, t, 0);
                if (rc) return errors_.add(t, "weft_stream_send to rank " + std::to_string(dest) + ": " + err(rc));
            }
    });
    EXPECT_EQ(errors_.count(), 0u) << errors_.report();
    // Stopped means stopped: a second stop is an error, and the stream works without it.
    EXPECT_NE(weft_stop_progress_thread(streams_[0]), 0) << "second stop of the progress thread";
    int v = 9, w = -1;
    weft_request q;
    ASSERT_EQ(weft_stream_irecv(&w, 1, WEFT_INT, peer_, 3, m_, 0, 0, &q), 0) << detail();
    ASSERT_EQ(weft_stream_send(&v, 1, WEFT_INT, peer_, 3, m_, 0, 0), 0) << detail();
    ASSERT_EQ(weft_wait(&q, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(w, 9);
}

// While a progress thread runs on a stream, the stream cannot be freed.
TEST_F(Threads, ProgressThreadHoldsItsStream) {
    weft_stream s = WEFT_STREAM_NULL;
    ASSERT_EQ(weft_stream_create(WEFT_INFO_NULL, &s), 0) << detail();
    ASSERT_EQ(weft_start_progress_thread(s), 0) << detail();
    EXPECT_NE(weft_start_progress_thread(s), 0) << "second progress thread on one stream";
    int rc = weft_stream_free(&s);
    EXPECT_EQ(rc, WEFT_ERR_BUSY) << "free with a running progress thread: " << err(rc);
    ASSERT_EQ(weft_stop_progress_thread(s), 0) << detail();
    ASSERT_EQ(weft_stream_free(&s), 0) << detail();
    EXPECT_EQ(weft_start_progress_thread(WEFT_STREAM_NULL), WEFT_ERR_STREAM);
    EXPECT_EQ(weft_stop_progress_thread(WEFT_STREAM_NULL), WEFT_ERR_STREAM);
}

// One-to-one: thread t of each process talks only to thread t of the other, each pair through
// its own stream communicator with conventional calls.
TEST_F(Threads, OneToOneThroughStreamComms) {
    constexpr int rounds = 300;
    // The multiplex communicator of the fixture is not used here, but it holds the streams;
    // a stream may be attached to several communicators.
    std::vector<weft_comm> comms(nthreads, WEFT_COMM_NULL);
    for (int t = 0; t < nthreads; ++t) {
        int rc = weft_stream_comm_create(WEFT_COMM_WORLD, streams_[t], &comms[t]);
        ASSERT_EQ(rc, 0) << "stream comm " << t << ": " << err(rc);
    }
    step("one-to-one threads running");
    run_threads([&](int t) {
        for (int r = 0; r < rounds; ++r) {
            int out = word(r, world_rank(), t, t), in = -1;
            weft_status st;
            int rc;
            if (world_rank() == 0) {
                if ((rc = weft_send(&out, 1, WEFT_INT, peer_, 0, comms[t]))) return errors_.add(t, "send: " + err(rc));
                if ((rc = weft_recv(&in, 1, WEFT_INT, peer_, 0, comms[t], &st))) return errors_.add(t, "recv: " + err(rc));
            } else {
                if ((rc = weft_recv(&in, 1, WEFT_INT, peer_, 0, comms[t], &st))) return errors_.add(t, "recv: " + err(rc));
                if ((rc = weft_send(&out, 1, WEFT_INT, peer_, 0, comms[t]))) return errors_.add(t, "send: " + err(rc));
            }
            if (in != word(r, peer_, t, t))
                errors_.add(t, "round " + std::to_string(r) + ": got " + std::to_string(in) + " (a message of another pair?)");
        }
    });
    EXPECT_EQ(errors_.count(), 0u) << errors_.report();
    for (auto &c : comms) EXPECT_EQ(weft_comm_free(&c), 0) << detail();
}

// The same pattern through conventional communicators (dups of world): the implicit pool and
// WEFT_THREAD_CS serve this case.
TEST_F(Threads, OneToOneThroughConventionalComms) {
    constexpr int rounds = 300;
    ASSERT_NO_FATAL_FAILURE(dup_world_per_thread());
    const std::vector<weft_comm> &comms = dups_;
    step("conventional one-to-one threads running");
    run_threads([&](int t) {
        std::vector<weft_request> reqs(2);
        for (int r = 0; r < rounds; ++r) {
            int out = word(r, world_rank(), t, t), in = -1;
            int rc = weft_irecv(&in, 1, WEFT_INT, peer_, 0, comms[t], &reqs[0]);
            if (rc) return errors_.add(t, "irecv: " + err(rc));
            if ((rc = weft_isend(&out, 1, WEFT_INT, peer_, 0, comms[t], &reqs[1]))) return errors_.add(t, "isend: " + err(rc));
            if ((rc = weft_waitall(2, reqs.data(), WEFT_STATUSES_IGNORE))) return errors_.add(t, "waitall: " + err(rc));
            if (in != word(r, peer_, t, t)) errors_.add(t, "round " + std::to_string(r) + ": got " + std::to_string(in));
        }
    });
    EXPECT_EQ(errors_.count(), 0u) << errors_.report();
}

// Small sends on a shared endpoint that finish inside weft_isend share one lightweight request
// (request_pool::done_send_handle), which several threads then complete at once, here with
// statuses (request_finish): no thread may write it.  Run under ThreadSanitizer in CI.
TEST_F(Threads, SendsSharingOneRequestCompleteWithStatuses) {
    constexpr int rounds = 300;
    ASSERT_NO_FATAL_FAILURE(dup_world_per_thread());
    const std::vector<weft_comm> &comms = dups_;
    step("threads completing shared send requests");
    run_threads([&](int t) {
        for (int r = 0; r < rounds; ++r) {
            int out = word(r, world_rank(), t, t), in = -1;
            weft_request rreq, sreq;
            weft_status st;
            int rc = weft_irecv(&in, 1, WEFT_INT, peer_, 0, comms[t], &rreq);
            if (rc) return errors_.add(t, "irecv: " + err(rc));
            if ((rc = weft_isend(&out, 1, WEFT_INT, peer_, 0, comms[t], &sreq))) return errors_.add(t, "isend: " + err(rc));
            if ((rc = weft_wait(&sreq, &st)) || st.error != 0) return errors_.add(t, "wait send: " + err(rc));
            if ((rc = weft_wait(&rreq, &st))) return errors_.add(t, "wait recv: " + err(rc));
            if (in != word(r, peer_, t, t) || st.source != peer_)
                errors_.add(t, "round " + std::to_string(r) + ": got " + std::to_string(in));
        }
    });
    EXPECT_EQ(errors_.count(), 0u) << errors_.report();
}

}  // namespace

STREAMS_TEST_MAIN("weft-test-streams-threads", WEFT_THREAD_MULTIPLE)
