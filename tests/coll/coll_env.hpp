// Shared harness for the collective tests.  Every process of the job runs the same tests in
// the same order; each test starts and ends with a point-to-point barrier on WEFT_COMM_WORLD
// (so a broken weft_barrier cannot hide other failures) and runs under a watchdog.
//
// Results are always checked against values computed locally: each process can compute every
// other process's contribution, so it knows exactly what every collective must produce.
//
// A failure names the rank, the algorithm set (WEFT_TEST_COLL_SET, set by ctest from the
// WEFT_COLL_<NAME> variables), the communicator kind, the collective, count, root, completion
// mode, and the first mismatching index with the value found and the value expected.
#pragma once
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "collective_test.hpp"
#include "error_detail.hpp"
#include "watchdog.hpp"
#include "weft/weft.h"
#include "weft_env.hpp"

namespace coll_test {

// ---------------------------------------------------------------- job and environment

using harness::current_test_name;
using harness::detail;
using harness::p2p_barrier;
using harness::step;
using harness::watchdog;
using harness::world_rank;
using harness::world_size;

// The thread level weft_init_thread provided (set by main).
inline int &provided_level() {
    static int level = -1;
    return level;
}

// The algorithm set this run forces ("auto" when ctest set none).
inline const std::string &alg_set() {
    static const std::string s = [] {
        const char *v = std::getenv("WEFT_TEST_COLL_SET");
        return std::string(v && *v ? v : "auto");
    }();
    return s;
}

// Codes the harness itself returns from the collective wrappers below (never weft codes).
constexpr int harness_error = 1000;
inline std::string &harness_message() {
    thread_local std::string m;
    return m;
}

// "code N (text), detail: ..." for assertion messages.
inline std::string err(int code) {
    if (code == harness_error) return "harness: " + harness_message();
    return harness::err(code);
}

// ---------------------------------------------------------------- completion modes

enum class mode { blocking, wait, test };
inline const char *mode_name(mode m) {
    switch (m) {
        case mode::blocking:
            return "blocking";
        case mode::wait:
            return "nonblocking+weft_wait";
        case mode::test:
            return "nonblocking+weft_test loop";
    }
    return "?";
}
constexpr mode all_modes[] = {mode::blocking, mode::wait, mode::test};

// Completes a request by weft_wait or by a weft_test loop; checks the handle is reset.
inline int complete(mode m, weft_request *r) {
    weft_status st;
    std::memset(&st, 0, sizeof st);
    if (m == mode::wait) {
        if (int rc = weft_wait(r, &st)) return rc;
    } else {
        int flag = 0;
        for (long spins = 0; !flag; ++spins) {
            if (int rc = weft_test(r, &flag, &st)) return rc;
            if (!flag && spins > 8) sched_yield();  // 8 processes may share 2 cores
        }
    }
    if (*r != WEFT_REQUEST_NULL) {
        harness_message() = "request handle not reset to WEFT_REQUEST_NULL after completion";
        return harness_error;
    }
    return 0;
}

template <class B, class NB>
int invoke(mode m, B &&blocking, NB &&nonblocking) {
    if (m == mode::blocking) return blocking();
    weft_request req = WEFT_REQUEST_NULL;
    if (int rc = nonblocking(&req)) return rc;
    return complete(m, &req);
}

// One wrapper per collective: the blocking call, or the nonblocking one completed by mode.
inline int barrier(mode m, weft_comm c) {
    return invoke(
        m, [&] { return weft_barrier(c); }, [&](weft_request *r) { return weft_ibarrier(c, r); });
}
inline int bcast(mode m, void *b, size_t n, weft_datatype t, int root, weft_comm c) {
    return invoke(
        m, [&] { return weft_bcast(b, n, t, root, c); },
        [&](weft_request *r) { return weft_ibcast(b, n, t, root, c, r); });
}
inline int reduce(mode m, const void *s, void *d, size_t n, weft_datatype t, weft_op op, int root, weft_comm c) {
    return invoke(
        m, [&] { return weft_reduce(s, d, n, t, op, root, c); },
        [&](weft_request *r) { return weft_ireduce(s, d, n, t, op, root, c, r); });
}
inline int allreduce(mode m, const void *s, void *d, size_t n, weft_datatype t, weft_op op, weft_comm c) {
    return invoke(
        m, [&] { return weft_allreduce(s, d, n, t, op, c); },
        [&](weft_request *r) { return weft_iallreduce(s, d, n, t, op, c, r); });
}
inline int gather(mode m, const void *s, size_t sn, weft_datatype st, void *d, size_t dn, weft_datatype dt, int root,
                  weft_comm c) {
    return invoke(
        m, [&] { return weft_gather(s, sn, st, d, dn, dt, root, c); },
        [&](weft_request *r) { return weft_igather(s, sn, st, d, dn, dt, root, c, r); });
}
inline int gatherv(mode m, const void *s, size_t sn, weft_datatype st, void *d, const size_t *dn, const size_t *dd,
                   weft_datatype dt, int root, weft_comm c) {
    return invoke(
        m, [&] { return weft_gatherv(s, sn, st, d, dn, dd, dt, root, c); },
        [&](weft_request *r) { return weft_igatherv(s, sn, st, d, dn, dd, dt, root, c, r); });
}
inline int scatter(mode m, const void *s, size_t sn, weft_datatype st, void *d, size_t dn, weft_datatype dt, int root,
                   weft_comm c) {
    return invoke(
        m, [&] { return weft_scatter(s, sn, st, d, dn, dt, root, c); },
        [&](weft_request *r) { return weft_iscatter(s, sn, st, d, dn, dt, root, c, r); });
}
inline int scatterv(mode m, const void *s, const size_t *sn, const size_t *sd, weft_datatype st, void *d, size_t dn,
                    weft_datatype dt, int root, weft_comm c) {
    return invoke(
        m, [&] { return weft_scatterv(s, sn, sd, st, d, dn, dt, root, c); },
        [&](weft_request *r) { return weft_iscatterv(s, sn, sd, st, d, dn, dt, root, c, r); });
}
inline int allgather(mode m, const void *s, size_t sn, weft_datatype st, void *d, size_t dn, weft_datatype dt,
                     weft_comm c) {
    return invoke(
        m, [&] { return weft_allgather(s, sn, st, d, dn, dt, c); },
        [&](weft_request *r) { return weft_iallgather(s, sn, st, d, dn, dt, c, r); });
}
inline int allgatherv(mode m, const void *s, size_t sn, weft_datatype st, void *d, const size_t *dn, const size_t *dd,
                      weft_datatype dt, weft_comm c) {
    return invoke(
        m, [&] { return weft_allgatherv(s, sn, st, d, dn, dd, dt, c); },
        [&](weft_request *r) { return weft_iallgatherv(s, sn, st, d, dn, dd, dt, c, r); });
}
inline int alltoall(mode m, const void *s, size_t sn, weft_datatype st, void *d, size_t dn, weft_datatype dt,
                    weft_comm c) {
    return invoke(
        m, [&] { return weft_alltoall(s, sn, st, d, dn, dt, c); },
        [&](weft_request *r) { return weft_ialltoall(s, sn, st, d, dn, dt, c, r); });
}
inline int alltoallv(mode m, const void *s, const size_t *sn, const size_t *sd, weft_datatype st, void *d,
                     const size_t *dn, const size_t *dd, weft_datatype dt, weft_comm c) {
    return invoke(
        m, [&] { return weft_alltoallv(s, sn, sd, st, d, dn, dd, dt, c); },
        [&](weft_request *r) { return weft_ialltoallv(s, sn, sd, st, d, dn, dd, dt, c, r); });
}
inline int reduce_scatter_block(mode m, const void *s, void *d, size_t n, weft_datatype t, weft_op op, weft_comm c) {
    return invoke(
        m, [&] { return weft_reduce_scatter_block(s, d, n, t, op, c); },
        [&](weft_request *r) { return weft_ireduce_scatter_block(s, d, n, t, op, c, r); });
}
inline int scan(mode m, const void *s, void *d, size_t n, weft_datatype t, weft_op op, weft_comm c) {
    return invoke(
        m, [&] { return weft_scan(s, d, n, t, op, c); },
        [&](weft_request *r) { return weft_iscan(s, d, n, t, op, c, r); });
}
inline int exscan(mode m, const void *s, void *d, size_t n, weft_datatype t, weft_op op, weft_comm c) {
    return invoke(
        m, [&] { return weft_exscan(s, d, n, t, op, c); },
        [&](weft_request *r) { return weft_iexscan(s, d, n, t, op, c, r); });
}

// ---------------------------------------------------------------- values

// Data-movement payload: a non-negative int that names where it came from, so a misplaced
// block is identified in the failure message.  bits 28-30 seed, 24-27 source rank, 20-23
// destination rank (15: every rank), 0-19 element index (counts stay below 2^20).
constexpr int any_dst = 15;
inline int dval(int seed, int src, int dst, size_t i) {
    return ((seed & 7) << 28) | ((src & 15) << 24) | ((dst & 15) << 20) | static_cast<int>(i & 0xfffff);
}
constexpr int sentinel = -1;  // never a dval
inline std::string describe_dval(int v) {
    if (v == sentinel) return "sentinel (never written)";
    if (v < 0) return "negative garbage";
    std::ostringstream o;
    o << "(seed " << ((v >> 28) & 7) << ", from rank " << ((v >> 24) & 15) << ", to ";
    if (((v >> 20) & 15) == any_dst)
        o << "all";
    else
        o << "rank " << ((v >> 20) & 15);
    o << ", element " << (v & 0xfffff) << ")";
    return o.str();
}

// A 64-bit mix of (seed, rank, index) for reduction inputs.
inline uint64_t mix(uint64_t seed, uint64_t r, uint64_t i) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ (r + 1) * 0xC2B2AE3D27D4EB4Full ^ (i + 7) * 0x165667B19E3779F9ull;
    x ^= x >> 31;
    x *= 0xD6E8FEB86659FD93ull;
    x ^= x >> 29;
    x *= 0x9E3779B97F4A7C15ull;
    x ^= x >> 32;
    return x;
}

// ---------------------------------------------------------------- reporting

// Failures of the current test, capped so a broken engine does not flood the log (a failure
// whose message repeats one already shown twice counts, but is not shown again); the
// collectives keep running (all processes stay in step) after a failure.
class failures {
  public:
    static failures &get() {
        static failures f;
        return f;
    }
    void reset() {
        std::lock_guard<std::mutex> g(mu_);
        n_ = shown_ = 0;
        seen_.clear();
    }
    size_t count() const { return n_.load(); }
    void add(const std::string &where, const std::string &what, const char *file, int line) {
        ++n_;
        {
            std::lock_guard<std::mutex> g(mu_);
            if (++seen_[what] > 2 || shown_ >= cap()) return;
            ++shown_;
        }
        ADD_FAILURE_AT(file, line) << "rank " << world_rank() << "/" << world_size() << ", set " << alg_set() << ", "
                                   << where << ": " << what;
    }
    void summary() {
        if (n_ > shown_)
            ADD_FAILURE() << "rank " << world_rank() << ": " << (n_ - shown_)
                          << " more failures not shown (repeats, or past the first " << cap()
                          << "; WEFT_TEST_COLL_MAX_FAILURES=N shows more)";
    }
    static size_t cap() {
        static const size_t c = [] {
            const char *v = std::getenv("WEFT_TEST_COLL_MAX_FAILURES");
            return v && std::atoi(v) > 0 ? static_cast<size_t>(std::atoi(v)) : size_t(12);
        }();
        return c;
    }

  private:
    std::mutex mu_;
    std::map<std::string, int> seen_;
    size_t shown_ = 0;
    std::atomic<size_t> n_{0};
};
#define COLL_FAIL(where, what) ::coll_test::failures::get().add((where), (what), __FILE__, __LINE__)
// Checks a return code (evaluated once); true when it is WEFT_SUCCESS.
inline bool check_rc(int rc, const std::string &where, const char *file, int line) {
    if (rc == 0) return true;
    failures::get().add(where, "returned " + err(rc), file, line);
    return false;
}
#define COLL_RC(rc, where) ::coll_test::check_rc((rc), (where), __FILE__, __LINE__)

// Empty when got == expected over n elements; otherwise the first mismatching index, the value
// found and the value expected, and how many elements differ.
template <class T, class Eq, class Show>
std::string compare(const T *got, const T *expected, size_t n, Eq eq, Show show, size_t offset = 0) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (!eq(got[i], expected[i])) {
            if (bad++ == 0) first = i;
        }
    if (bad == 0) return "";
    std::ostringstream o;
    o << bad << " of " << n << " elements wrong; first at index " << (first + offset) << ": got " << show(got[first])
      << ", expected " << show(expected[first]);
    return o.str();
}
inline std::string compare_dvals(const int *got, const int *expected, size_t n, size_t offset = 0) {
    return compare(
        got, expected, n, [](int a, int b) { return a == b; },
        [](int v) { return std::to_string(v) + " " + describe_dval(v); }, offset);
}
inline std::string compare_ints(const int *got, const int *expected, size_t n, size_t offset = 0) {
    return compare(
        got, expected, n, [](int a, int b) { return a == b; }, [](int v) { return std::to_string(v); }, offset);
}

// Builds "weft_x count N root R [mode] on COMM" descriptions.
struct where {
    std::string s;
    explicit where(std::string what) : s(std::move(what)) {}
    template <class T>
    where &operator()(const char *k, const T &v) {
        std::ostringstream o;
        o << " " << k << " " << v;
        s += o.str();
        return *this;
    }
    where &operator()(mode m) {
        s += std::string(" [") + mode_name(m) + "]";
        return *this;
    }
    where &operator<<(const std::string &t) {
        s += t;
        return *this;
    }
    operator std::string() const { return s; }
};

// ---------------------------------------------------------------- counts

// Element counts every collective is tried with: empty, one, non-powers of two, and a large
// one that takes the large-message algorithms.  Large counts run only a few times each.
constexpr size_t large_count = 300000;  // ints: 1.2 MB
inline std::vector<size_t> counts_with_large() { return {0, 1, 7, 1000, large_count}; }

// ---------------------------------------------------------------- communicators under test

enum class kind { world, dup, split, stream, multiplex };
inline const char *kind_name(kind k) {
    switch (k) {
        case kind::world:
            return "world";
        case kind::dup:
            return "dup";
        case kind::split:
            return "split";
        case kind::stream:
            return "stream";
        case kind::multiplex:
            return "multiplex";
    }
    return "?";
}
constexpr kind all_kinds[] = {kind::world, kind::dup, kind::split, kind::stream, kind::multiplex};

// A communicator of one kind: WEFT_COMM_WORLD itself, a dup of it, a split into odd and even
// world ranks (keys reversed, so comm rank order differs from world order), a stream
// communicator, or a multiplex communicator with one stream per process.
struct comm_under_test {
    kind k = kind::world;
    weft_comm c = WEFT_COMM_NULL;
    weft_stream s = WEFT_STREAM_NULL;
    int rank = -1, size = -1;
    std::string name;

    int create(kind kk) {
        k = kk;
        name = kind_name(kk);
        int rc = 0;
        switch (kk) {
            case kind::world:
                c = WEFT_COMM_WORLD;
                break;
            case kind::dup:
                rc = weft_comm_dup(WEFT_COMM_WORLD, &c);
                break;
            case kind::split:
                rc = weft_comm_split(WEFT_COMM_WORLD, world_rank() % 2, world_size() - world_rank(), &c);
                name += world_rank() % 2 ? "(odd)" : "(even)";
                break;
            case kind::stream:
                if ((rc = weft_stream_create(WEFT_INFO_NULL, &s))) break;
                rc = weft_stream_comm_create(WEFT_COMM_WORLD, s, &c);
                break;
            case kind::multiplex:
                if ((rc = weft_stream_create(WEFT_INFO_NULL, &s))) break;
                rc = weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, 1, &s, &c);
                break;
        }
        if (rc) return rc;
        if ((rc = weft_comm_rank(c, &rank))) return rc;
        return weft_comm_size(c, &size);
    }
    int destroy() {
        int rc = 0;
        if (c != WEFT_COMM_NULL && c != WEFT_COMM_WORLD) rc = weft_comm_free(&c);
        c = WEFT_COMM_NULL;
        if (s != WEFT_STREAM_NULL) {
            int rc2 = weft_stream_free(&s);
            if (rc == 0) rc = rc2;
        }
        return rc;
    }
};

// Base of every test: all processes in step, watchdog armed (collective_test), failure cap reset.
template <class Base>
class coll_fixture_t : public harness::collective_test<Base> {
  protected:
    // Per-test limit (seconds, times WEFT_TEST_TIME_SCALE); the whole program takes ~10 s.
    double limit_s() const override { return 45; }
    void SetUp() override {
        failures::get().reset();
        harness::collective_test<Base>::SetUp();
    }
    void TearDown() override {
        failures::get().summary();
        harness::collective_test<Base>::TearDown();
    }
};
using coll_fixture = coll_fixture_t<::testing::Test>;

// A test run once per communicator kind.
class comm_fixture : public coll_fixture_t<::testing::TestWithParam<kind>> {
  protected:
    comm_under_test cu;
    void SetUp() override {
        coll_fixture_t::SetUp();
        step(std::string("creating the ") + kind_name(GetParam()) + " communicator");
        int rc = cu.create(GetParam());
        ASSERT_EQ(rc, 0) << "rank " << world_rank() << ": creating the " << kind_name(GetParam())
                         << " communicator: " << err(rc);
        step("test body");
    }
    void TearDown() override {
        step("freeing the communicator");
        int rc = cu.destroy();
        EXPECT_EQ(rc, 0) << "rank " << world_rank() << ": freeing the " << cu.name << " communicator: " << err(rc);
        coll_fixture_t::TearDown();
    }
    // WEFT_COMM_WORLD and the split (whose rank order differs from the world's) get the full
    // sweeps; the other kinds run the same algorithms on other endpoints and context ids, and
    // get a lighter sweep to keep the job short.
    bool lite() const { return cu.k != kind::world && cu.k != kind::split; }
    std::vector<size_t> counts() const {
        std::vector<size_t> v = counts_with_large();
        if (lite()) v.erase(std::remove_if(v.begin(), v.end(), [](size_t c) { return c == 1 || c == 1000; }), v.end());
        return v;
    }
    // Modes for combination k of a sweep with many combinations (rooted ones): all three with 1
    // or 2 processes, else one, rotating, so each mode meets every count and, over the
    // counts, every root.
    std::vector<mode> modes_for(size_t k) const {
        if (!lite() && cu.size <= 2) return {std::begin(all_modes), std::end(all_modes)};
        return {all_modes[k % 3]};
    }
    // Modes for combination k of a sweep with few combinations (non-rooted ones).
    std::vector<mode> modes_all(size_t k) const {
        if (lite()) return {all_modes[k % 3]};
        return {std::begin(all_modes), std::end(all_modes)};
    }
    // Every rank as root (lite: the first and the last); the large count only from those two.
    std::vector<int> roots_for(size_t count) const {
        const int n = cu.size;
        if (n <= 2 || (!lite() && count < large_count / 8)) {
            std::vector<int> r;
            for (int i = 0; i < n; ++i) r.push_back(i);
            return r;
        }
        return {0, n - 1};
    }

    // "weft_x on COMM(rank r of n)"
    where at(const char *coll) const {
        return where(std::string(coll) + " on " + cu.name + " (comm rank " + std::to_string(cu.rank) + " of " +
                     std::to_string(cu.size) + ")");
    }
};

inline std::string kind_param_name(const ::testing::TestParamInfo<kind> &info) { return kind_name(info.param); }

}  // namespace coll_test
