// Bad input to collectives: every process passes the same bad argument, every process gets the
// error code (and a detail naming the function), nothing crashes or hangs, and the
// communicator still works afterwards.  Also the arguments MPI declares insignificant (receive
// buffers at non-roots, send arguments with WEFT_IN_PLACE, buffers of empty messages) are
// really ignored, and an unknown algorithm in WEFT_COLL_<NAME> fails with WEFT_ERR_ARG.
#include <algorithm>
#include <cctype>
#include <functional>
#include <initializer_list>
#include <map>

#include "coll_env.hpp"
#include "weft/weft.h"

using namespace coll_test;

namespace {

// A call's code and the detail read right after it (the next call replaces the detail).
struct outcome {
    int rc;
    std::string detail;
};
inline outcome O(int rc) { return {rc, rc ? detail() : std::string()}; }

class Errors : public coll_fixture {
  protected:
    int n = 0, me = 0;
    std::vector<int> a = std::vector<int>(64, 1), b = std::vector<int>(64, 0);
    std::vector<size_t> counts = std::vector<size_t>(64, 1), displs = std::vector<size_t>(64, 0);
    void SetUp() override {
        coll_fixture::SetUp();
        n = world_size();
        me = world_rank();
        for (int i = 0; i < 64; ++i) displs[i] = i;
    }
    // Checks code == want and that the detail names fn.
    void expect(const outcome &o, int want, const std::string &fn, const std::string &why) {
        const std::string &d = o.detail;
        if (o.rc != want) {
            COLL_FAIL(fn + " with " + why,
                      "returned code " + std::to_string(o.rc) + ", detail \"" + d + "\", expected code " +
                          std::to_string(want));
            return;
        }
        if (d.find(fn) == std::string::npos)
            COLL_FAIL(fn + " with " + why, "the detail does not name " + fn + ": \"" + d + "\"");
    }
    // The communicator still works: an allreduce with a known result.
    void still_works(const std::string &after) {
        int x = me + 1, s = -1;
        step("allreduce after " + after);
        int rc = weft_allreduce(&x, &s, 1, WEFT_INT, WEFT_SUM, WEFT_COMM_WORLD);
        if (COLL_RC(rc, "weft_allreduce after " + after) && s != n * (n + 1) / 2)
            COLL_FAIL("weft_allreduce after " + after, "got " + std::to_string(s));
    }
};

// Every blocking and nonblocking collective with a given communicator.  Returns the
// collective's name and code for each.
std::vector<std::pair<std::string, outcome>> call_all(weft_comm c, int root, const int *s, int *r, const size_t *cnt,
                                                      const size_t *dsp, size_t count, weft_datatype t, weft_op op,
                                                      weft_request *req) {
    std::vector<std::pair<std::string, outcome>> v;
    auto add = [&](const char *name, int rc) { v.emplace_back(name, O(rc)); };
    add("weft_barrier", weft_barrier(c));
    add("weft_bcast", weft_bcast(r, count, t, root, c));
    add("weft_reduce", weft_reduce(s, r, count, t, op, root, c));
    add("weft_allreduce", weft_allreduce(s, r, count, t, op, c));
    add("weft_gather", weft_gather(s, count, t, r, count, t, root, c));
    add("weft_gatherv", weft_gatherv(s, count, t, r, cnt, dsp, t, root, c));
    add("weft_scatter", weft_scatter(s, count, t, r, count, t, root, c));
    add("weft_scatterv", weft_scatterv(s, cnt, dsp, t, r, count, t, root, c));
    add("weft_allgather", weft_allgather(s, count, t, r, count, t, c));
    add("weft_allgatherv", weft_allgatherv(s, count, t, r, cnt, dsp, t, c));
    add("weft_alltoall", weft_alltoall(s, count, t, r, count, t, c));
    add("weft_alltoallv", weft_alltoallv(s, cnt, dsp, t, r, cnt, dsp, t, c));
    add("weft_reduce_scatter_block", weft_reduce_scatter_block(s, r, count, t, op, c));
    add("weft_scan", weft_scan(s, r, count, t, op, c));
    add("weft_exscan", weft_exscan(s, r, count, t, op, c));
    add("weft_ibarrier", weft_ibarrier(c, req));
    add("weft_ibcast", weft_ibcast(r, count, t, root, c, req));
    add("weft_ireduce", weft_ireduce(s, r, count, t, op, root, c, req));
    add("weft_iallreduce", weft_iallreduce(s, r, count, t, op, c, req));
    add("weft_igather", weft_igather(s, count, t, r, count, t, root, c, req));
    add("weft_igatherv", weft_igatherv(s, count, t, r, cnt, dsp, t, root, c, req));
    add("weft_iscatter", weft_iscatter(s, count, t, r, count, t, root, c, req));
    add("weft_iscatterv", weft_iscatterv(s, cnt, dsp, t, r, count, t, root, c, req));
    add("weft_iallgather", weft_iallgather(s, count, t, r, count, t, c, req));
    add("weft_iallgatherv", weft_iallgatherv(s, count, t, r, cnt, dsp, t, c, req));
    add("weft_ialltoall", weft_ialltoall(s, count, t, r, count, t, c, req));
    add("weft_ialltoallv", weft_ialltoallv(s, cnt, dsp, t, r, cnt, dsp, t, c, req));
    add("weft_ireduce_scatter_block", weft_ireduce_scatter_block(s, r, count, t, op, c, req));
    add("weft_iscan", weft_iscan(s, r, count, t, op, c, req));
    add("weft_iexscan", weft_iexscan(s, r, count, t, op, c, req));
    return v;
}

TEST_F(Errors, InvalidCommunicator) {
    const weft_comm bad[] = {WEFT_COMM_NULL, static_cast<weft_comm>(0x10000fff), static_cast<weft_comm>(WEFT_INT), -1};
    for (weft_comm c : bad) {
        weft_request req = WEFT_REQUEST_NULL;
        step("every collective on comm " + std::to_string(c));
        for (auto &[fn, rc] :
             call_all(c, 0, a.data(), b.data(), counts.data(), displs.data(), 1, WEFT_INT, WEFT_SUM, &req))
            expect(
                rc, WEFT_ERR_COMM, fn, "communicator 0x" + [&] {
                    char h[16];
                    std::snprintf(h, sizeof h, "%x", static_cast<unsigned>(c));
                    return std::string(h);
                }());
        EXPECT_EQ(req, WEFT_REQUEST_NULL) << "a failed call left a request";
    }
    // A freed communicator.
    weft_comm d = WEFT_COMM_NULL;
    ASSERT_EQ(weft_comm_dup(WEFT_COMM_WORLD, &d), 0);
    weft_comm freed = d;
    ASSERT_EQ(weft_comm_free(&d), 0);
    expect(O(weft_allreduce(a.data(), b.data(), 1, WEFT_INT, WEFT_SUM, freed)), WEFT_ERR_COMM, "weft_allreduce",
           "a freed communicator");
    expect(O(weft_barrier(freed)), WEFT_ERR_COMM, "weft_barrier", "a freed communicator");
    still_works("invalid communicators");
}

TEST_F(Errors, RootOutOfRange) {
    for (int root : {n, n + 7, -1, WEFT_PROC_NULL}) {
        weft_request req = WEFT_REQUEST_NULL;
        const std::string why = "root " + std::to_string(root) + " of " + std::to_string(n);
        step("rooted collectives with " + why);
        auto rooted = [&](const std::string &fn) {
            for (const char *r : {"bcast", "reduce", "gather", "gatherv", "scatter", "scatterv"})
                if (fn == std::string("weft_") + r || fn == std::string("weft_i") + r) return true;
            return false;
        };
        // Only the rooted ones: call them one by one (the others would really run).
        std::vector<std::pair<std::string, outcome>> v;
        const int *s = a.data();
        int *r = b.data();
        const size_t *cn = counts.data(), *ds = displs.data();
        v.emplace_back("weft_bcast", O(weft_bcast(r, 1, WEFT_INT, root, WEFT_COMM_WORLD)));
        v.emplace_back("weft_reduce", O(weft_reduce(s, r, 1, WEFT_INT, WEFT_SUM, root, WEFT_COMM_WORLD)));
        v.emplace_back("weft_gather", O(weft_gather(s, 1, WEFT_INT, r, 1, WEFT_INT, root, WEFT_COMM_WORLD)));
        v.emplace_back("weft_gatherv", O(weft_gatherv(s, 1, WEFT_INT, r, cn, ds, WEFT_INT, root, WEFT_COMM_WORLD)));
        v.emplace_back("weft_scatter", O(weft_scatter(s, 1, WEFT_INT, r, 1, WEFT_INT, root, WEFT_COMM_WORLD)));
        v.emplace_back("weft_scatterv", O(weft_scatterv(s, cn, ds, WEFT_INT, r, 1, WEFT_INT, root, WEFT_COMM_WORLD)));
        v.emplace_back("weft_ibcast", O(weft_ibcast(r, 1, WEFT_INT, root, WEFT_COMM_WORLD, &req)));
        v.emplace_back("weft_ireduce", O(weft_ireduce(s, r, 1, WEFT_INT, WEFT_SUM, root, WEFT_COMM_WORLD, &req)));
        v.emplace_back("weft_igather", O(weft_igather(s, 1, WEFT_INT, r, 1, WEFT_INT, root, WEFT_COMM_WORLD, &req)));
        v.emplace_back("weft_igatherv",
                       O(weft_igatherv(s, 1, WEFT_INT, r, cn, ds, WEFT_INT, root, WEFT_COMM_WORLD, &req)));
        v.emplace_back("weft_iscatter", O(weft_iscatter(s, 1, WEFT_INT, r, 1, WEFT_INT, root, WEFT_COMM_WORLD, &req)));
        v.emplace_back("weft_iscatterv",
                       O(weft_iscatterv(s, cn, ds, WEFT_INT, r, 1, WEFT_INT, root, WEFT_COMM_WORLD, &req)));
        for (auto &[fn, rc] : v) {
            EXPECT_TRUE(rooted(fn));
            expect(rc, WEFT_ERR_RANK, fn, why);
        }
        EXPECT_EQ(req, WEFT_REQUEST_NULL) << "a failed call left a request";
    }
    still_works("roots out of range");
}

// A null buffer with a non-zero count, on every process, where the buffer is significant.
TEST_F(Errors, NullBufferWithCount) {
    int *s = a.data(), *r = b.data();
    const size_t *cn = counts.data(), *ds = displs.data();
    weft_request req = WEFT_REQUEST_NULL;
    const weft_comm w = WEFT_COMM_WORLD;
    struct c {
        const char *fn, *why;
        outcome rc;
    };
    step("null buffers");
    const c cases[] = {
        {"weft_bcast", "buffer NULL, count 4", O(weft_bcast(nullptr, 4, WEFT_INT, 0, w))},
        {"weft_allreduce", "sendbuf NULL", O(weft_allreduce(nullptr, r, 4, WEFT_INT, WEFT_SUM, w))},
        {"weft_allreduce", "recvbuf NULL", O(weft_allreduce(s, nullptr, 4, WEFT_INT, WEFT_SUM, w))},
        {"weft_reduce", "sendbuf NULL", O(weft_reduce(nullptr, r, 4, WEFT_INT, WEFT_SUM, 0, w))},
        {"weft_gather", "sendbuf NULL", O(weft_gather(nullptr, 2, WEFT_INT, r, 2, WEFT_INT, 0, w))},
        {"weft_gatherv", "sendbuf NULL", O(weft_gatherv(nullptr, 1, WEFT_INT, r, cn, ds, WEFT_INT, 0, w))},
        {"weft_scatter", "recvbuf NULL", O(weft_scatter(s, 2, WEFT_INT, nullptr, 2, WEFT_INT, 0, w))},
        {"weft_scatterv", "recvbuf NULL", O(weft_scatterv(s, cn, ds, WEFT_INT, nullptr, 1, WEFT_INT, 0, w))},
        {"weft_allgather", "sendbuf NULL", O(weft_allgather(nullptr, 2, WEFT_INT, r, 2, WEFT_INT, w))},
        {"weft_allgather", "recvbuf NULL", O(weft_allgather(s, 2, WEFT_INT, nullptr, 2, WEFT_INT, w))},
        {"weft_allgatherv", "recvbuf NULL", O(weft_allgatherv(s, 1, WEFT_INT, nullptr, cn, ds, WEFT_INT, w))},
        {"weft_alltoall", "sendbuf NULL", O(weft_alltoall(nullptr, 1, WEFT_INT, r, 1, WEFT_INT, w))},
        {"weft_alltoall", "recvbuf NULL", O(weft_alltoall(s, 1, WEFT_INT, nullptr, 1, WEFT_INT, w))},
        {"weft_alltoallv", "recvbuf NULL", O(weft_alltoallv(s, cn, ds, WEFT_INT, nullptr, cn, ds, WEFT_INT, w))},
        {"weft_reduce_scatter_block", "recvbuf NULL",
         O(weft_reduce_scatter_block(s, nullptr, 1, WEFT_INT, WEFT_SUM, w))},
        {"weft_scan", "sendbuf NULL", O(weft_scan(nullptr, r, 3, WEFT_INT, WEFT_SUM, w))},
        {"weft_exscan", "recvbuf NULL", O(weft_exscan(s, nullptr, 3, WEFT_INT, WEFT_SUM, w))},
        {"weft_ibcast", "buffer NULL, count 4", O(weft_ibcast(nullptr, 4, WEFT_INT, 0, w, &req))},
        {"weft_iallreduce", "sendbuf NULL", O(weft_iallreduce(nullptr, r, 4, WEFT_INT, WEFT_SUM, w, &req))},
        {"weft_iallgather", "recvbuf NULL", O(weft_iallgather(s, 2, WEFT_INT, nullptr, 2, WEFT_INT, w, &req))},
        {"weft_ialltoall", "sendbuf NULL", O(weft_ialltoall(nullptr, 1, WEFT_INT, r, 1, WEFT_INT, w, &req))},
        {"weft_iscan", "recvbuf NULL", O(weft_iscan(s, nullptr, 3, WEFT_INT, WEFT_SUM, w, &req))},
    };
    for (auto &x : cases) expect(x.rc, WEFT_ERR_BUFFER, x.fn, x.why);
    // Counts and displacement arrays are significant too.
    expect(O(weft_allgatherv(s, 1, WEFT_INT, r, nullptr, ds, WEFT_INT, w)), WEFT_ERR_ARG, "weft_allgatherv",
           "recvcounts NULL");
    expect(O(weft_alltoallv(s, cn, nullptr, WEFT_INT, r, cn, ds, WEFT_INT, w)), WEFT_ERR_ARG, "weft_alltoallv",
           "sdispls NULL");
    EXPECT_EQ(req, WEFT_REQUEST_NULL) << "a failed call left a request";
    still_works("null buffers");
}

TEST_F(Errors, NullRequest) {
    step("request NULL");
    for (auto &[fn, rc] : call_all(WEFT_COMM_WORLD, 0, a.data(), b.data(), counts.data(), displs.data(), 1, WEFT_INT,
                                   WEFT_SUM, nullptr)) {
        if (fn.rfind("weft_i", 0) != 0) {  // the blocking ones really ran: they must have worked
            if (rc.rc != 0)
                COLL_FAIL(fn + " (valid call)", "returned code " + std::to_string(rc.rc) + ": " + rc.detail);
            continue;
        }
        expect(rc, WEFT_ERR_ARG, fn, "request NULL");
    }
    still_works("request NULL");
}

// Counts that differ between processes, where the receiver can tell: a broadcast between 2
// processes by the binomial tree (one message, root to rank 1).  Rank 1 reports the sizes and
// asks about matching arguments; the root's send completes; nothing hangs.  (Algorithms with
// more rounds, or mismatched roots, leave peers waiting for messages that never come, as in
// MPI: there is nothing local to compare.)
TEST_F(Errors, BcastCountMismatchIsReported) {
    const char *alg = std::getenv("WEFT_COLL_BCAST");
    if (n != 2 || (alg != nullptr && std::string(alg) != "binomial"))
        GTEST_SKIP() << "needs 2 processes and the binomial broadcast (one message)";
    for (size_t root_count : {4, 1}) {
        size_t mine = me == 0 ? root_count : 2;
        int buf[4] = {7, 7, 7, 7};
        step("bcast: root passes " + std::to_string(root_count) + " ints, rank 1 passes 2");
        outcome o = O(weft_bcast(buf, mine, WEFT_INT, 0, WEFT_COMM_WORLD));
        if (me == 0) {
            COLL_RC(o.rc, "weft_bcast at the root");
            continue;
        }
        expect(o, WEFT_ERR_TRUNCATE, "collective", "mismatched counts");
        std::string sizes = "sent " + std::to_string(root_count * sizeof(int)) + " bytes where 8 were expected";
        if (o.detail.find(sizes) == std::string::npos || o.detail.find("matching") == std::string::npos)
            COLL_FAIL("weft_bcast with mismatched counts",
                      "detail \"" + o.detail + "\" lacks \"" + sizes + "\" or the hint");
    }
    still_works("mismatched broadcast counts");
}

// WEFT_COLL_CHECK=1: mismatched roots, counts and collectives fail on every process with
// WEFT_ERR_ARG and a detail that shows two processes' arguments; matching calls still work.
TEST_F(Errors, CheckedMismatches) {
    const char *on = std::getenv("WEFT_COLL_CHECK");
    if (on == nullptr || std::string(on) != "1") GTEST_SKIP() << "runs with WEFT_COLL_CHECK=1";
    if (n < 2) GTEST_SKIP() << "needs 2 processes or more";
    int buf[2 * 8] = {0}, out[2 * 8] = {0};
    auto mismatch = [&](const char *what, int rc, const char *fn, std::initializer_list<const char *> words) {
        outcome o{rc, rc ? detail() : std::string()};
        expect(o, WEFT_ERR_ARG, fn, what);
        for (const char *w : words)
            if (o.detail.find(w) == std::string::npos)
                COLL_FAIL(std::string(fn) + " with " + what, "detail \"" + o.detail + "\" lacks \"" + w + "\"");
    };
    step("bcast with different roots");
    mismatch("different roots", weft_bcast(buf, 1, WEFT_INT, me == 0 ? 0 : 1, WEFT_COMM_WORLD), "weft_bcast",
             {"mismatched arguments", "with root 0", "with root 1"});
    step("bcast with different counts");
    mismatch("different counts", weft_bcast(buf, me == n - 1 ? 2 : 1, WEFT_INT, 0, WEFT_COMM_WORLD), "weft_bcast",
             {"4 bytes", "8 bytes"});
    step("reduce on rank 0, bcast elsewhere");
    int rc = me == 0 ? weft_reduce(buf, out, 1, WEFT_INT, WEFT_SUM, 0, WEFT_COMM_WORLD)
                     : weft_bcast(buf, 1, WEFT_INT, 0, WEFT_COMM_WORLD);
    mismatch("different collectives", rc, me == 0 ? "weft_reduce" : "weft_bcast",
             {"called weft_reduce", "called weft_bcast"});
    step("gather with a larger contribution from the last rank");
    mismatch("different gather counts",
             weft_gather(buf, me == n - 1 ? 2 : 1, WEFT_INT, out, 1, WEFT_INT, 0, WEFT_COMM_WORLD), "weft_gather",
             {"8 bytes its own", "4 bytes per process at the root"});
    step("alltoall with larger blocks on the last rank");
    size_t k = me == n - 1 ? 2 : 1;
    mismatch("different alltoall blocks", weft_alltoall(buf, k, WEFT_INT, out, k, WEFT_INT, WEFT_COMM_WORLD),
             "weft_alltoall", {"blocks of 8 bytes", "blocks of 4 bytes"});
    still_works("checked mismatches");
}

// An operation MPI does not define for the datatype: WEFT_ERR_OP on every process, no hang.
TEST_F(Errors, OperationDatatypeMismatch) {
    double d[8] = {1, 2, 3, 4, 5, 6, 7, 8}, e[8 * 8];
    weft_datatype vt = WEFT_DATATYPE_NULL;
    ASSERT_EQ(weft_type_vector(2, 1, 2, WEFT_INT, &vt), 0);
    ASSERT_EQ(weft_type_commit(&vt), 0);
    // A predefined op on a derived type needs one basic type throughout (MPI); a vector of
    // ints has one (reduce, allreduce and scan take it: tests/p2p/test_datatypes.cpp).
    weft_datatype mixed = WEFT_DATATYPE_NULL;
    size_t mixed_bl[] = {1, 1};
    ptrdiff_t mixed_d[] = {0, 8};
    weft_datatype mixed_t[] = {WEFT_INT, WEFT_DOUBLE};
    ASSERT_EQ(weft_type_create_struct(2, mixed_bl, mixed_d, mixed_t, &mixed), 0);
    ASSERT_EQ(weft_type_commit(&mixed), 0);
    weft_op user = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create([](void *, void *, size_t *, weft_datatype *) {}, 1, &user), 0);
    weft_op freed = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create([](void *, void *, size_t *, weft_datatype *) {}, 1, &freed), 0);
    const weft_op freed_handle = freed;
    ASSERT_EQ(weft_op_free(&freed), 0);
    struct mis {
        weft_op op;
        weft_datatype t;
        const char *why;
    };
    const mis cases[] = {
        {WEFT_BAND, WEFT_DOUBLE, "WEFT_BAND on WEFT_DOUBLE"},
        {WEFT_BXOR, WEFT_DOUBLE, "WEFT_BXOR on WEFT_DOUBLE"},
        {WEFT_SUM, WEFT_DOUBLE_INT, "WEFT_SUM on WEFT_DOUBLE_INT"},
        {WEFT_MINLOC, WEFT_INT, "WEFT_MINLOC on WEFT_INT"},
        {WEFT_MAXLOC, WEFT_DOUBLE, "WEFT_MAXLOC on WEFT_DOUBLE"},
        {WEFT_OP_NULL, WEFT_INT, "WEFT_OP_NULL"},
        {static_cast<weft_op>(0x60000fff), WEFT_INT, "an unknown op handle"},
        {freed_handle, WEFT_INT, "a freed user op"},
        {static_cast<weft_op>(WEFT_INT), WEFT_INT, "a datatype handle as op"},
        {WEFT_SUM, mixed, "WEFT_SUM on a struct of an int and a double"},
        {user, vt, "a user op on a non-contiguous vector datatype"},
    };
    for (const mis &m : cases) {
        step(std::string("reductions with ") + m.why);
        weft_request req = WEFT_REQUEST_NULL;
        for (int root : {0, n - 1}) {
            expect(O(weft_reduce(d, e, 2, m.t, m.op, root, WEFT_COMM_WORLD)), WEFT_ERR_OP, "weft_reduce", m.why);
            expect(O(weft_ireduce(d, e, 2, m.t, m.op, root, WEFT_COMM_WORLD, &req)), WEFT_ERR_OP, "weft_ireduce",
                   m.why);
        }
        expect(O(weft_allreduce(d, e, 2, m.t, m.op, WEFT_COMM_WORLD)), WEFT_ERR_OP, "weft_allreduce", m.why);
        expect(O(weft_allreduce(WEFT_IN_PLACE, e, 2, m.t, m.op, WEFT_COMM_WORLD)), WEFT_ERR_OP, "weft_allreduce",
               std::string(m.why) + " in place");
        expect(O(weft_reduce_scatter_block(d, e, 1, m.t, m.op, WEFT_COMM_WORLD)), WEFT_ERR_OP,
               "weft_reduce_scatter_block", m.why);
        expect(O(weft_scan(d, e, 2, m.t, m.op, WEFT_COMM_WORLD)), WEFT_ERR_OP, "weft_scan", m.why);
        expect(O(weft_exscan(d, e, 2, m.t, m.op, WEFT_COMM_WORLD)), WEFT_ERR_OP, "weft_exscan", m.why);
        expect(O(weft_iallreduce(d, e, 2, m.t, m.op, WEFT_COMM_WORLD, &req)), WEFT_ERR_OP, "weft_iallreduce", m.why);
        expect(O(weft_ireduce_scatter_block(d, e, 1, m.t, m.op, WEFT_COMM_WORLD, &req)), WEFT_ERR_OP,
               "weft_ireduce_scatter_block", m.why);
        expect(O(weft_iscan(d, e, 2, m.t, m.op, WEFT_COMM_WORLD, &req)), WEFT_ERR_OP, "weft_iscan", m.why);
        expect(O(weft_iexscan(d, e, 2, m.t, m.op, WEFT_COMM_WORLD, &req)), WEFT_ERR_OP, "weft_iexscan", m.why);
        EXPECT_EQ(req, WEFT_REQUEST_NULL) << "a failed call left a request";
    }
    EXPECT_EQ(weft_op_free(&user), 0);
    EXPECT_EQ(weft_type_free(&vt), 0);
    EXPECT_EQ(weft_type_free(&mixed), 0);
    still_works("operation/datatype mismatches");
}

TEST_F(Errors, InvalidDatatype) {
    weft_datatype unc = WEFT_DATATYPE_NULL;
    ASSERT_EQ(weft_type_vector(2, 1, 2, WEFT_INT, &unc), 0);  // not committed
    for (weft_datatype t : {WEFT_DATATYPE_NULL, static_cast<weft_datatype>(0x50000fff), unc}) {
        const std::string why = t == unc ? "an uncommitted datatype" : "datatype " + std::to_string(t);
        step("collectives with " + why);
        weft_request req = WEFT_REQUEST_NULL;
        expect(O(weft_bcast(b.data(), 2, t, 0, WEFT_COMM_WORLD)), WEFT_ERR_TYPE, "weft_bcast", why);
        expect(O(weft_allgather(a.data(), 2, t, b.data(), 2, t, WEFT_COMM_WORLD)), WEFT_ERR_TYPE, "weft_allgather",
               why);
        expect(O(weft_alltoall(a.data(), 1, t, b.data(), 1, t, WEFT_COMM_WORLD)), WEFT_ERR_TYPE, "weft_alltoall", why);
        expect(O(weft_gather(a.data(), 1, t, b.data(), 1, t, 0, WEFT_COMM_WORLD)), WEFT_ERR_TYPE, "weft_gather", why);
        expect(O(weft_iscatter(a.data(), 1, t, b.data(), 1, t, 0, WEFT_COMM_WORLD, &req)), WEFT_ERR_TYPE,
               "weft_iscatter", why);
        if (t != unc)
            expect(O(weft_allreduce(a.data(), b.data(), 1, t, WEFT_SUM, WEFT_COMM_WORLD)), WEFT_ERR_TYPE,
                   "weft_allreduce", why);
        EXPECT_EQ(req, WEFT_REQUEST_NULL) << "a failed call left a request";
    }
    EXPECT_EQ(weft_type_free(&unc), 0);
    still_works("invalid datatypes");
}

// ------------------------------------------------------------------ WEFT_COLL_<NAME>

// The variables and their algorithms (must match the registry, core/coll/coll_registry.cpp; see
// tests/coll/CMakeLists.txt).
const std::map<std::string, std::vector<std::string>> &algorithms() {
    static const std::map<std::string, std::vector<std::string>> m = {
        {"BARRIER", {"dissemination", "shm"}},
        {"BCAST", {"binomial", "scatter_allgather", "shm"}},
        {"REDUCE", {"binomial", "linear", "shm"}},
        {"ALLREDUCE", {"recursive_doubling", "reduce_scatter_allgather", "ring", "shm"}},
        {"GATHER", {"binomial", "linear"}},
        {"GATHERV", {"linear"}},
        {"SCATTER", {"binomial", "linear"}},
        {"SCATTERV", {"linear"}},
        {"ALLGATHER", {"ring", "bruck", "shm"}},
        {"ALLGATHERV", {"ring"}},
        {"ALLTOALL", {"pairwise", "linear", "shm"}},
        {"ALLTOALLV", {"pairwise", "linear"}},
        {"REDUCE_SCATTER_BLOCK", {"pairwise", "ring"}},
        {"SCAN", {"recursive_doubling", "linear"}},
        {"EXSCAN", {"recursive_doubling", "linear"}},
    };
    return m;
}

// Run by the coll.*.bogus* ctest entries, which set some WEFT_COLL_<NAME> to names no
// algorithm has: those collectives (blocking and nonblocking) fail with WEFT_ERR_ARG and a
// detail naming the variable; the others still work.  Without such a variable it checks the
// algorithms this run forces are all known names.
TEST_F(Errors, UnknownAlgorithmName) {
    std::map<std::string, bool> bogus;
    for (auto &[name, algs] : algorithms()) {
        const char *v = std::getenv(("WEFT_COLL_" + name).c_str());
        bool bad = v && *v && std::find(algs.begin(), algs.end(), std::string(v)) == algs.end();
        bogus[name] = bad;
    }
    // The coll.*.bogus_* entries must really have set an unknown name (else this proves nothing).
    if (alg_set().rfind("bogus", 0) == 0) {
        ASSERT_TRUE(std::any_of(bogus.begin(), bogus.end(), [](auto &b) { return b.second; }))
            << "set " << alg_set() << " but no WEFT_COLL_<NAME> holds an unknown algorithm name";
    }
    int *s = a.data(), *r = b.data();
    const size_t *cn = counts.data(), *ds = displs.data();
    const weft_comm w = WEFT_COMM_WORLD;
    for (int nb = 0; nb < 2; ++nb) {
        std::vector<std::pair<std::string, std::function<int(weft_request *)>>> calls = {
            {"BARRIER", [&](weft_request *q) { return q ? weft_ibarrier(w, q) : weft_barrier(w); }},
            {"BCAST",
             [&](weft_request *q) {
                 return q ? weft_ibcast(r, 4, WEFT_INT, 0, w, q) : weft_bcast(r, 4, WEFT_INT, 0, w);
             }},
            {"REDUCE",
             [&](weft_request *q) {
                 return q ? weft_ireduce(s, r, 4, WEFT_INT, WEFT_SUM, 0, w, q)
                          : weft_reduce(s, r, 4, WEFT_INT, WEFT_SUM, 0, w);
             }},
            {"ALLREDUCE",
             [&](weft_request *q) {
                 return q ? weft_iallreduce(s, r, 4, WEFT_INT, WEFT_SUM, w, q)
                          : weft_allreduce(s, r, 4, WEFT_INT, WEFT_SUM, w);
             }},
            {"GATHER",
             [&](weft_request *q) {
                 return q ? weft_igather(s, 1, WEFT_INT, r, 1, WEFT_INT, 0, w, q)
                          : weft_gather(s, 1, WEFT_INT, r, 1, WEFT_INT, 0, w);
             }},
            {"GATHERV",
             [&](weft_request *q) {
                 return q ? weft_igatherv(s, 1, WEFT_INT, r, cn, ds, WEFT_INT, 0, w, q)
                          : weft_gatherv(s, 1, WEFT_INT, r, cn, ds, WEFT_INT, 0, w);
             }},
            {"SCATTER",
             [&](weft_request *q) {
                 return q ? weft_iscatter(s, 1, WEFT_INT, r, 1, WEFT_INT, 0, w, q)
                          : weft_scatter(s, 1, WEFT_INT, r, 1, WEFT_INT, 0, w);
             }},
            {"SCATTERV",
             [&](weft_request *q) {
                 return q ? weft_iscatterv(s, cn, ds, WEFT_INT, r, 1, WEFT_INT, 0, w, q)
                          : weft_scatterv(s, cn, ds, WEFT_INT, r, 1, WEFT_INT, 0, w);
             }},
            {"ALLGATHER",
             [&](weft_request *q) {
                 return q ? weft_iallgather(s, 1, WEFT_INT, r, 1, WEFT_INT, w, q)
                          : weft_allgather(s, 1, WEFT_INT, r, 1, WEFT_INT, w);
             }},
            {"ALLGATHERV",
             [&](weft_request *q) {
                 return q ? weft_iallgatherv(s, 1, WEFT_INT, r, cn, ds, WEFT_INT, w, q)
                          : weft_allgatherv(s, 1, WEFT_INT, r, cn, ds, WEFT_INT, w);
             }},
            {"ALLTOALL",
             [&](weft_request *q) {
                 return q ? weft_ialltoall(s, 1, WEFT_INT, r, 1, WEFT_INT, w, q)
                          : weft_alltoall(s, 1, WEFT_INT, r, 1, WEFT_INT, w);
             }},
            {"ALLTOALLV",
             [&](weft_request *q) {
                 return q ? weft_ialltoallv(s, cn, ds, WEFT_INT, r, cn, ds, WEFT_INT, w, q)
                          : weft_alltoallv(s, cn, ds, WEFT_INT, r, cn, ds, WEFT_INT, w);
             }},
            {"REDUCE_SCATTER_BLOCK",
             [&](weft_request *q) {
                 return q ? weft_ireduce_scatter_block(s, r, 1, WEFT_INT, WEFT_SUM, w, q)
                          : weft_reduce_scatter_block(s, r, 1, WEFT_INT, WEFT_SUM, w);
             }},
            {"SCAN",
             [&](weft_request *q) {
                 return q ? weft_iscan(s, r, 4, WEFT_INT, WEFT_SUM, w, q) : weft_scan(s, r, 4, WEFT_INT, WEFT_SUM, w);
             }},
            {"EXSCAN",
             [&](weft_request *q) {
                 return q ? weft_iexscan(s, r, 4, WEFT_INT, WEFT_SUM, w, q)
                          : weft_exscan(s, r, 4, WEFT_INT, WEFT_SUM, w);
             }},
        };
        for (auto &[name, call] : calls) {
            std::string lower = name;
            for (auto &ch : lower) ch = static_cast<char>(std::tolower(ch));
            const std::string fn = std::string(nb ? "weft_i" : "weft_") + lower, var = "WEFT_COLL_" + name;
            step(fn + (bogus[name] ? " with an unknown algorithm" : ""));
            weft_request req = WEFT_REQUEST_NULL;
            int rc = call(nb ? &req : nullptr);
            if (rc == 0 && nb) rc = weft_wait(&req, WEFT_STATUS_IGNORE);  // may fail at completion
            if (!bogus[name]) {
                COLL_RC(rc, fn + " (" + var + " not set to an unknown name)");
                continue;
            }
            const char *val = std::getenv(var.c_str());
            if (rc != WEFT_ERR_ARG) {
                COLL_FAIL(fn + " with " + var + "=" + val, "returned " + err(rc) + ", expected WEFT_ERR_ARG");
            } else if (detail().find(var) == std::string::npos) {
                COLL_FAIL(fn + " with " + var + "=" + val,
                          "the detail does not name " + var + ": \"" + detail() + "\"");
            }
        }
    }
    if (!bogus["ALLREDUCE"]) still_works("unknown algorithm names");
}

// ------------------------------------------------------------------ what MPI ignores

// Run on WEFT_COMM_WORLD and on the split (other rank order).  These communicate, so they
// come after the purely local error checks: a process that wrongly fails here leaves the others
// waiting (the watchdog then ends the job).
class Ignored : public comm_fixture {
  protected:
    int n = 0, me = 0;
    void SetUp() override {
        comm_fixture::SetUp();
        n = cu.size;
        me = cu.rank;
    }
    void still_works(const std::string &after) {
        int x = me + 1, s = -1;
        step("allreduce after " + after);
        int rc = weft_allreduce(&x, &s, 1, WEFT_INT, WEFT_SUM, cu.c);
        if (COLL_RC(rc, at("weft_allreduce after ") << after) && s != n * (n + 1) / 2)
            COLL_FAIL(at("weft_allreduce after ") << after, "got " + std::to_string(s));
    }
};

// Receive arguments at non-roots, send arguments at non-roots of scatter(v), and the send
// count and type given with WEFT_IN_PLACE are not significant: NULL and WEFT_DATATYPE_NULL
// there must work.  So must NULL buffers with zero counts.
TEST_P(Ignored, InsignificantArguments) {
    const std::string on = " on " + cu.name;
    for (int root = 0; root < n; ++root) {
        const bool at_root = me == root;
        const std::string rs = " root " + std::to_string(root) + " on " + cu.name;
        std::vector<int> send(3), recv(3 * n, sentinel);
        for (int i = 0; i < 3; ++i) send[i] = dval(1, me, root, i);
        std::vector<size_t> cnt(n, 3), dsp(n);
        for (int r = 0; r < n; ++r) dsp[r] = 3 * r;
        step("gather with NULL receive arguments at non-roots" + rs);
        if (COLL_RC(weft_gather(send.data(), 3, WEFT_INT, at_root ? recv.data() : nullptr, at_root ? 3 : 0,
                                at_root ? WEFT_INT : WEFT_DATATYPE_NULL, root, cu.c),
                    "weft_gather with recvbuf NULL, recvcount 0, recvtype NULL at non-roots" + rs) &&
            at_root)
            for (int r = 0; r < n; ++r)
                if (recv[3 * r + 2] != dval(1, r, root, 2)) {
                    COLL_FAIL("weft_gather (non-root NULLs)" + rs, "block " + std::to_string(r) + " wrong");
                    break;
                }
        step("gatherv with NULL counts/displs at non-roots" + rs);
        std::fill(recv.begin(), recv.end(), sentinel);
        if (COLL_RC(weft_gatherv(send.data(), 3, WEFT_INT, at_root ? recv.data() : nullptr,
                                 at_root ? cnt.data() : nullptr, at_root ? dsp.data() : nullptr, WEFT_INT, root, cu.c),
                    "weft_gatherv with recvbuf/recvcounts/displs NULL at non-roots" + rs) &&
            at_root && recv[3 * n - 1] != dval(1, n - 1, root, 2))
            COLL_FAIL("weft_gatherv (non-root NULLs)" + rs, "last block wrong");
        step("scatter with NULL send arguments at non-roots" + rs);
        std::vector<int> ssrc(3 * n), sdst(3, sentinel);
        for (int r = 0; r < n; ++r)
            for (int i = 0; i < 3; ++i) ssrc[3 * r + i] = dval(2, root, r, i);
        if (COLL_RC(weft_scatter(at_root ? ssrc.data() : nullptr, at_root ? 3 : 0,
                                 at_root ? WEFT_INT : WEFT_DATATYPE_NULL, sdst.data(), 3, WEFT_INT, root, cu.c),
                    "weft_scatter with sendbuf NULL, sendcount 0, sendtype NULL at non-roots" + rs) &&
            sdst[2] != dval(2, root, me, 2))
            COLL_FAIL("weft_scatter (non-root NULLs)" + rs, "got " + describe_dval(sdst[2]));
        step("scatterv with NULL send arguments at non-roots" + rs);
        std::fill(sdst.begin(), sdst.end(), sentinel);
        if (COLL_RC(weft_scatterv(at_root ? ssrc.data() : nullptr, at_root ? cnt.data() : nullptr,
                                  at_root ? dsp.data() : nullptr, WEFT_INT, sdst.data(), 3, WEFT_INT, root, cu.c),
                    "weft_scatterv with sendbuf/sendcounts/displs NULL at non-roots" + rs) &&
            sdst[2] != dval(2, root, me, 2))
            COLL_FAIL("weft_scatterv (non-root NULLs)" + rs, "got " + describe_dval(sdst[2]));
        step("reduce with NULL recvbuf at non-roots" + rs);
        int x = me + 1, s = -1;
        if (COLL_RC(weft_reduce(&x, at_root ? &s : nullptr, 1, WEFT_INT, WEFT_SUM, root, cu.c),
                    "weft_reduce with recvbuf NULL at non-roots" + rs) &&
            at_root && s != n * (n + 1) / 2)
            COLL_FAIL("weft_reduce (non-root NULL)" + rs, "got " + std::to_string(s));
        step("gather in place with sendcount 0 and sendtype NULL at the root" + rs);
        std::fill(recv.begin(), recv.end(), sentinel);
        if (at_root) std::copy(send.begin(), send.end(), recv.begin() + 3 * me);
        if (COLL_RC(weft_gather(at_root ? WEFT_IN_PLACE : send.data(), at_root ? 0 : 3,
                                at_root ? WEFT_DATATYPE_NULL : WEFT_INT, recv.data(), 3, WEFT_INT, root, cu.c),
                    "weft_gather WEFT_IN_PLACE with sendcount 0, sendtype NULL at the root" + rs) &&
            at_root)
            for (int r = 0; r < n; ++r)
                if (recv[3 * r] != dval(1, r, root, 0)) {
                    COLL_FAIL("weft_gather in place (ignored send args)" + rs,
                              "block " + std::to_string(r) + ": " + describe_dval(recv[3 * r]));
                    break;
                }
    }
    // WEFT_IN_PLACE with sendcount 0 / WEFT_DATATYPE_NULL in allgather and alltoall.
    {
        std::vector<int> recv(2 * n, sentinel);
        recv[2 * me] = dval(3, me, any_dst, 0), recv[2 * me + 1] = dval(3, me, any_dst, 1);
        step("allgather in place, sendtype NULL");
        if (COLL_RC(weft_allgather(WEFT_IN_PLACE, 0, WEFT_DATATYPE_NULL, recv.data(), 2, WEFT_INT, cu.c),
                    "weft_allgather WEFT_IN_PLACE with sendcount 0, sendtype NULL" + on))
            for (int r = 0; r < n; ++r)
                if (recv[2 * r + 1] != dval(3, r, any_dst, 1)) {
                    COLL_FAIL("weft_allgather in place (ignored send args)" + on,
                              "block " + std::to_string(r) + ": " + describe_dval(recv[2 * r + 1]));
                    break;
                }
        for (int r = 0; r < n; ++r) recv[2 * r] = dval(4, me, r, 0), recv[2 * r + 1] = dval(4, me, r, 1);
        step("alltoall in place, sendtype NULL");
        if (COLL_RC(weft_alltoall(WEFT_IN_PLACE, 0, WEFT_DATATYPE_NULL, recv.data(), 2, WEFT_INT, cu.c),
                    "weft_alltoall WEFT_IN_PLACE with sendcount 0, sendtype NULL" + on))
            for (int r = 0; r < n; ++r)
                if (recv[2 * r + 1] != dval(4, r, me, 1)) {
                    COLL_FAIL("weft_alltoall in place (ignored send args)" + on,
                              "block " + std::to_string(r) + ": " + describe_dval(recv[2 * r + 1]));
                    break;
                }
    }
    still_works("insignificant arguments");
}

// Empty messages with NULL buffers everywhere (MPI allows any pointer with a zero count).
TEST_P(Ignored, ZeroCountsWithNullBuffers) {
    const std::string on = " on " + cu.name;
    step("zero counts with NULL buffers");
    std::vector<size_t> zeros(n, 0);
    COLL_RC(weft_bcast(nullptr, 0, WEFT_INT, 0, cu.c), "weft_bcast(NULL, 0)" + on);
    COLL_RC(weft_allreduce(nullptr, nullptr, 0, WEFT_INT, WEFT_SUM, cu.c), "weft_allreduce(NULL, NULL, 0)" + on);
    COLL_RC(weft_reduce(nullptr, nullptr, 0, WEFT_INT, WEFT_SUM, 0, cu.c), "weft_reduce(NULL, NULL, 0)" + on);
    COLL_RC(weft_allgather(nullptr, 0, WEFT_INT, nullptr, 0, WEFT_INT, cu.c), "weft_allgather count 0 NULL" + on);
    COLL_RC(weft_alltoall(nullptr, 0, WEFT_INT, nullptr, 0, WEFT_INT, cu.c), "weft_alltoall count 0 NULL" + on);
    COLL_RC(weft_alltoallv(nullptr, zeros.data(), zeros.data(), WEFT_INT, nullptr, zeros.data(), zeros.data(), WEFT_INT,
                           cu.c),
            "weft_alltoallv all counts 0, NULL buffers" + on);
    COLL_RC(weft_scan(nullptr, nullptr, 0, WEFT_INT, WEFT_SUM, cu.c), "weft_scan(NULL, NULL, 0)" + on);
    weft_request req = WEFT_REQUEST_NULL;
    if (COLL_RC(weft_iallreduce(nullptr, nullptr, 0, WEFT_INT, WEFT_SUM, cu.c, &req),
                "weft_iallreduce(NULL, NULL, 0)" + on))
        COLL_RC(weft_wait(&req, WEFT_STATUS_IGNORE), "weft_wait for weft_iallreduce(NULL, NULL, 0)" + on);
    still_works("zero counts with NULL buffers");
}

INSTANTIATE_TEST_SUITE_P(Comm, Ignored, ::testing::Values(kind::world, kind::split), kind_param_name);

}  // namespace
