// Collectives from two threads at once under WEFT_THREAD_MULTIPLE (run with --thread=multiple;
// skipped otherwise): each thread has its own stream and stream communicator (the MPIX Stream
// way: no shared endpoint, no lock), or its own conventional dup of WEFT_COMM_WORLD, and runs
// allreduce, bcast and allgather loops, plus nonblocking ones, concurrently with the other.
#include <thread>

#include "coll_env.hpp"

using namespace coll_test;

namespace {

constexpr int nthreads = 2;

int sval(int seed, int r, size_t i) { return static_cast<int>(mix(seed, r, i) % 2001) - 1000; }

class Threads : public coll_fixture {
  protected:
    void SetUp() override {
        coll_fixture::SetUp();
        if (provided_level() != WEFT_THREAD_MULTIPLE)
            GTEST_SKIP() << "needs WEFT_THREAD_MULTIPLE (run with --thread=multiple); provided " << provided_level();
    }
    double limit_s() const override { return 60; }

    // Thread t's loop on communicator c (rank me of n).
    static void loop(int t, weft_comm c, const std::string &name, int iters) {
        int me = -1, n = -1;
        weft_comm_rank(c, &me);
        weft_comm_size(c, &n);
        const std::string who = "thread " + std::to_string(t) + " on " + name;
        for (int it = 0; it < iters; ++it) {
            const int seed = t * 100000 + it * 10;
            // allreduce, 16 ints (every 10th iteration: 1000)
            {
                const size_t cnt = it % 10 == 9 ? 1000 : 16;
                std::vector<int> x(cnt), y(cnt, sentinel), e(cnt, 0);
                for (size_t i = 0; i < cnt; ++i) x[i] = sval(seed, me, i);
                for (int r = 0; r < n; ++r)
                    for (size_t i = 0; i < cnt; ++i) e[i] += sval(seed, r, i);
                const std::string w =
                    who + ": weft_allreduce SUM count " + std::to_string(cnt) + " iteration " + std::to_string(it);
                if (COLL_RC(weft_allreduce(x.data(), y.data(), cnt, WEFT_INT, WEFT_SUM, c), w)) {
                    std::string bad = compare_ints(y.data(), e.data(), cnt);
                    if (!bad.empty()) COLL_FAIL(w, bad);
                }
            }
            // bcast from a rotating root
            {
                const int root = it % n;
                std::vector<int> b(100, sentinel), e(100);
                for (size_t i = 0; i < 100; ++i) e[i] = dval(seed + 1, root, any_dst, i);
                if (me == root) b = e;
                const std::string w =
                    who + ": weft_bcast count 100 root " + std::to_string(root) + " iteration " + std::to_string(it);
                if (COLL_RC(weft_bcast(b.data(), 100, WEFT_INT, root, c), w)) {
                    std::string bad = compare_dvals(b.data(), e.data(), 100);
                    if (!bad.empty()) COLL_FAIL(w, bad);
                }
            }
            // allgather, 5 ints each
            {
                std::vector<int> s(5), g(5 * n, sentinel), e(5 * n);
                for (size_t i = 0; i < 5; ++i) s[i] = dval(seed + 2, me, any_dst, i);
                for (int r = 0; r < n; ++r)
                    for (size_t i = 0; i < 5; ++i) e[5 * r + i] = dval(seed + 2, r, any_dst, i);
                const std::string w = who + ": weft_allgather count 5 iteration " + std::to_string(it);
                if (COLL_RC(weft_allgather(s.data(), 5, WEFT_INT, g.data(), 5, WEFT_INT, c), w)) {
                    std::string bad = compare_dvals(g.data(), e.data(), 5 * n);
                    if (!bad.empty()) COLL_FAIL(w, bad);
                }
            }
            // every 4th iteration: nonblocking allreduce and bcast outstanding together
            if (it % 4 == 3) {
                int x = me + t + it, y = -1;
                std::vector<int> b(7, sentinel), e(7);
                const int root = (it / 4) % n;
                for (size_t i = 0; i < 7; ++i) e[i] = dval(seed + 3, root, any_dst, i);
                if (me == root) b = e;
                weft_request rq[2] = {WEFT_REQUEST_NULL, WEFT_REQUEST_NULL};
                const std::string w = who + ": weft_iallreduce + weft_ibcast iteration " + std::to_string(it);
                int rc = weft_iallreduce(&x, &y, 1, WEFT_INT, WEFT_SUM, c, &rq[0]);
                if (rc == 0) rc = weft_ibcast(b.data(), 7, WEFT_INT, root, c, &rq[1]);
                if (rc == 0) rc = weft_waitall(2, rq, WEFT_STATUSES_IGNORE);
                if (COLL_RC(rc, w)) {
                    const int want = n * (n - 1) / 2 + n * (t + it);
                    if (y != want)
                        COLL_FAIL(w, "allreduce got " + std::to_string(y) + ", expected " + std::to_string(want));
                    std::string bad = compare_dvals(b.data(), e.data(), 7);
                    if (!bad.empty()) COLL_FAIL(w, "bcast: " + bad);
                }
            }
        }
    }
    void run(const weft_comm (&comms)[nthreads], const std::string &kind) {
        // Oversubscribed runs (8 processes x 2 threads on 2 cores) get fewer iterations.
        const int iters = world_size() > 4 ? 100 : 200;
        step("two threads running collective loops on " + kind);
        std::vector<std::thread> th;
        for (int t = 0; t < nthreads; ++t)
            th.emplace_back([&, t] { loop(t, comms[t], kind + " " + std::to_string(t), iters); });
        for (auto &x : th) x.join();
    }
};

TEST_F(Threads, StreamCommPerThread) {
    weft_stream s[nthreads] = {};
    weft_comm c[nthreads] = {};
    for (int t = 0; t < nthreads; ++t) {
        int rc = weft_stream_create(WEFT_INFO_NULL, &s[t]);
        ASSERT_EQ(rc, 0) << err(rc);
        rc = weft_stream_comm_create(WEFT_COMM_WORLD, s[t], &c[t]);
        ASSERT_EQ(rc, 0) << err(rc);
    }
    run(c, "stream comm");
    for (int t = 0; t < nthreads; ++t) {
        EXPECT_EQ(weft_comm_free(&c[t]), 0) << detail();
        EXPECT_EQ(weft_stream_free(&s[t]), 0) << detail();
    }
}

TEST_F(Threads, DupCommPerThread) {
    weft_comm c[nthreads] = {};
    for (int t = 0; t < nthreads; ++t) {
        int rc = weft_comm_dup(WEFT_COMM_WORLD, &c[t]);
        ASSERT_EQ(rc, 0) << err(rc);
    }
    run(c, "dup of world");
    for (int t = 0; t < nthreads; ++t) EXPECT_EQ(weft_comm_free(&c[t]), 0) << detail();
}

}  // namespace
