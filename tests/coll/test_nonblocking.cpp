// Nonblocking collectives outstanding together: every kind at once on one communicator
// (completed in reverse order by weft_wait, by weft_waitall, by a weft_testall loop and by
// weft_waitany), on several communicators and endpoints at once mixed with point-to-point
// traffic, the same collective posted many times, blocking collectives issued while
// nonblocking ones are pending, and an operation and a datatype freed while a collective that
// uses them is pending.
#include <algorithm>
#include <memory>

#include "coll_env.hpp"

using namespace coll_test;

namespace {

int sval(int seed, int r, size_t i) { return static_cast<int>(mix(seed, r, i) % 2001) - 1000; }

// A buffer's address, never NULL (zero counts with NULL buffers are tested on their own, in
// Errors.ZeroCountsWithNullBuffers).
int *nz(std::vector<int> &v) {
    static int dummy[1];
    return v.empty() ? dummy : v.data();
}

// One posted collective, its buffers and how to check its result.
struct pending {
    std::string what;
    weft_request req = WEFT_REQUEST_NULL;
    std::vector<int> send, recv, expected;
    std::vector<size_t> c1, d1, c2, d2;
    size_t check_from = 0, check_len = 0;  // the part of recv compared with expected
    bool check = true;
};

// A set of nonblocking collectives posted on one communicator.
class batch {
  public:
    batch(const comm_under_test &cu, const std::string &tag) : cu_(cu), tag_(tag) {}
    std::vector<std::unique_ptr<pending>> items;

    // All fifteen kinds (plus repeats of a few), with rotating roots.
    void post_all(int seed, size_t count) {
        int k = 0;
        auto root = [&] { return (k++ * 3 + seed) % cu_.size; };
        ibarrier();
        iallreduce(seed + 1, count);
        ibcast(seed + 2, count, root());
        ireduce(seed + 3, count, root());
        igather(seed + 4, count, root());
        igatherv(seed + 5, count, root());
        iscatter(seed + 6, count, root());
        iscatterv(seed + 7, count, root());
        iallgather(seed + 8, count);
        iallgatherv(seed + 9, count);
        ialltoall(seed + 10, count);
        ialltoallv(seed + 11, count);
        ireduce_scatter_block(seed + 12, count);
        iscan(seed + 13, count, false);
        iscan(seed + 14, count, true);
        iallreduce(seed + 15, count + 3);
        ibcast(seed + 16, count + 1, root());
        ibarrier();
        iallreduce(seed + 17, 1);
    }

    pending &add(const std::string &what) {
        items.push_back(std::make_unique<pending>());
        items.back()->what = what + " on " + cu_.name + " (" + tag_ + ")";
        return *items.back();
    }
    void posted(pending &p, int rc) {
        if (rc) {
            COLL_FAIL(p.what, "posting returned " + err(rc));
            p.check = false;
            p.req = WEFT_REQUEST_NULL;
        }
    }

    void ibarrier() {
        pending &p = add("weft_ibarrier");
        p.check = false;
        posted(p, weft_ibarrier(cu_.c, &p.req));
    }
    void ibcast(int seed, size_t n, int root) {
        pending &p = add("weft_ibcast count " + std::to_string(n) + " root " + std::to_string(root));
        p.recv.assign(n, sentinel);
        for (size_t i = 0; i < n; ++i) p.expected.push_back(dval(seed, root, any_dst, i));
        if (cu_.rank == root) p.recv = p.expected;
        p.check_len = n;
        posted(p, weft_ibcast(nz(p.recv), n, WEFT_INT, root, cu_.c, &p.req));
    }
    void sum_inputs(pending &p, int seed, size_t n) {
        p.send.resize(n);
        for (size_t i = 0; i < n; ++i) p.send[i] = sval(seed, cu_.rank, i);
    }
    std::vector<int> sum_upto(int seed, int upto, size_t n, size_t offset = 0) const {
        std::vector<int> e(n, 0);
        for (int r = 0; r <= upto; ++r)
            for (size_t i = 0; i < n; ++i) e[i] += sval(seed, r, offset + i);
        return e;
    }
    void iallreduce(int seed, size_t n) {
        pending &p = add("weft_iallreduce SUM count " + std::to_string(n));
        sum_inputs(p, seed, n);
        p.recv.assign(n, sentinel);
        p.expected = sum_upto(seed, cu_.size - 1, n);
        p.check_len = n;
        posted(p, weft_iallreduce(nz(p.send), nz(p.recv), n, WEFT_INT, WEFT_SUM, cu_.c, &p.req));
    }
    void ireduce(int seed, size_t n, int root) {
        pending &p = add("weft_ireduce SUM count " + std::to_string(n) + " root " + std::to_string(root));
        sum_inputs(p, seed, n);
        p.recv.assign(n, sentinel);
        p.expected = sum_upto(seed, cu_.size - 1, n);
        p.check_len = n;
        p.check = cu_.rank == root;
        posted(p, weft_ireduce(nz(p.send), nz(p.recv), n, WEFT_INT, WEFT_SUM, root, cu_.c, &p.req));
    }
    void iscan(int seed, size_t n, bool exclusive) {
        pending &p = add(std::string(exclusive ? "weft_iexscan" : "weft_iscan") + " SUM count " + std::to_string(n));
        sum_inputs(p, seed, n);
        p.recv.assign(n, sentinel);
        int upto = exclusive ? cu_.rank - 1 : cu_.rank;
        p.check = upto >= 0;
        if (p.check) p.expected = sum_upto(seed, upto, n);
        p.check_len = n;
        posted(p,
               exclusive ? weft_iexscan(nz(p.send), nz(p.recv), n, WEFT_INT, WEFT_SUM, cu_.c, &p.req)
                         : weft_iscan(nz(p.send), nz(p.recv), n, WEFT_INT, WEFT_SUM, cu_.c, &p.req));
    }
    void ireduce_scatter_block(int seed, size_t n) {
        pending &p = add("weft_ireduce_scatter_block SUM recvcount " + std::to_string(n));
        sum_inputs(p, seed, n * cu_.size);
        p.recv.assign(n, sentinel);
        p.expected = sum_upto(seed, cu_.size - 1, n, n * cu_.rank);
        p.check_len = n;
        posted(p, weft_ireduce_scatter_block(nz(p.send), nz(p.recv), n, WEFT_INT, WEFT_SUM, cu_.c, &p.req));
    }
    void igather(int seed, size_t n, int root) {
        pending &p = add("weft_igather count " + std::to_string(n) + " root " + std::to_string(root));
        for (size_t i = 0; i < n; ++i) p.send.push_back(dval(seed, cu_.rank, root, i));
        p.recv.assign(n * cu_.size, sentinel);
        for (int r = 0; r < cu_.size; ++r)
            for (size_t i = 0; i < n; ++i) p.expected.push_back(dval(seed, r, root, i));
        p.check_len = n * cu_.size;
        p.check = cu_.rank == root;
        posted(p, weft_igather(nz(p.send), n, WEFT_INT, nz(p.recv), n, WEFT_INT, root, cu_.c, &p.req));
    }
    // v-variant layout: rank r has r % 3 == 1 ? 0 : n + r elements, blocks in reverse order.
    void vlayout(size_t n, std::vector<size_t> &counts, std::vector<size_t> &displs, size_t &len) const {
        counts.assign(cu_.size, 0);
        displs.assign(cu_.size, 0);
        for (int r = 0; r < cu_.size; ++r) counts[r] = (n == 0 || r % 3 == 1) ? 0 : n + r;
        len = 0;
        for (int r = cu_.size; r-- > 0;) {
            len += 1;
            displs[r] = len;
            len += counts[r];
        }
    }
    void igatherv(int seed, size_t n, int root) {
        pending &p = add("weft_igatherv base " + std::to_string(n) + " root " + std::to_string(root));
        size_t len;
        vlayout(n, p.c1, p.d1, len);
        for (size_t i = 0; i < p.c1[cu_.rank]; ++i) p.send.push_back(dval(seed, cu_.rank, root, i));
        p.recv.assign(len, sentinel);
        p.expected.assign(len, sentinel);
        for (int r = 0; r < cu_.size; ++r)
            for (size_t i = 0; i < p.c1[r]; ++i) p.expected[p.d1[r] + i] = dval(seed, r, root, i);
        p.check_len = len;
        p.check = cu_.rank == root;
        posted(p,
               weft_igatherv(nz(p.send), p.c1[cu_.rank], WEFT_INT, nz(p.recv), p.c1.data(), p.d1.data(), WEFT_INT, root,
                             cu_.c, &p.req));
    }
    void iscatter(int seed, size_t n, int root) {
        pending &p = add("weft_iscatter count " + std::to_string(n) + " root " + std::to_string(root));
        for (int r = 0; r < cu_.size; ++r)
            for (size_t i = 0; i < n; ++i) p.send.push_back(dval(seed, root, r, i));
        p.recv.assign(n, sentinel);
        for (size_t i = 0; i < n; ++i) p.expected.push_back(dval(seed, root, cu_.rank, i));
        p.check_len = n;
        posted(p, weft_iscatter(nz(p.send), n, WEFT_INT, nz(p.recv), n, WEFT_INT, root, cu_.c, &p.req));
    }
    void iscatterv(int seed, size_t n, int root) {
        pending &p = add("weft_iscatterv base " + std::to_string(n) + " root " + std::to_string(root));
        size_t len;
        vlayout(n, p.c1, p.d1, len);
        p.send.assign(len, sentinel);
        for (int r = 0; r < cu_.size; ++r)
            for (size_t i = 0; i < p.c1[r]; ++i) p.send[p.d1[r] + i] = dval(seed, root, r, i);
        size_t mine = p.c1[cu_.rank];
        p.recv.assign(mine, sentinel);
        for (size_t i = 0; i < mine; ++i) p.expected.push_back(dval(seed, root, cu_.rank, i));
        p.check_len = mine;
        posted(p,
               weft_iscatterv(nz(p.send), p.c1.data(), p.d1.data(), WEFT_INT, nz(p.recv), mine, WEFT_INT, root, cu_.c,
                              &p.req));
    }
    void iallgather(int seed, size_t n) {
        pending &p = add("weft_iallgather count " + std::to_string(n));
        for (size_t i = 0; i < n; ++i) p.send.push_back(dval(seed, cu_.rank, any_dst, i));
        p.recv.assign(n * cu_.size, sentinel);
        for (int r = 0; r < cu_.size; ++r)
            for (size_t i = 0; i < n; ++i) p.expected.push_back(dval(seed, r, any_dst, i));
        p.check_len = n * cu_.size;
        posted(p, weft_iallgather(nz(p.send), n, WEFT_INT, nz(p.recv), n, WEFT_INT, cu_.c, &p.req));
    }
    void iallgatherv(int seed, size_t n) {
        pending &p = add("weft_iallgatherv base " + std::to_string(n));
        size_t len;
        vlayout(n, p.c1, p.d1, len);
        for (size_t i = 0; i < p.c1[cu_.rank]; ++i) p.send.push_back(dval(seed, cu_.rank, any_dst, i));
        p.recv.assign(len, sentinel);
        p.expected.assign(len, sentinel);
        for (int r = 0; r < cu_.size; ++r)
            for (size_t i = 0; i < p.c1[r]; ++i) p.expected[p.d1[r] + i] = dval(seed, r, any_dst, i);
        p.check_len = len;
        posted(p,
               weft_iallgatherv(nz(p.send), p.c1[cu_.rank], WEFT_INT, nz(p.recv), p.c1.data(), p.d1.data(), WEFT_INT,
                                cu_.c, &p.req));
    }
    void ialltoall(int seed, size_t n) {
        pending &p = add("weft_ialltoall count " + std::to_string(n));
        for (int d = 0; d < cu_.size; ++d)
            for (size_t i = 0; i < n; ++i) p.send.push_back(dval(seed, cu_.rank, d, i));
        p.recv.assign(n * cu_.size, sentinel);
        for (int s = 0; s < cu_.size; ++s)
            for (size_t i = 0; i < n; ++i) p.expected.push_back(dval(seed, s, cu_.rank, i));
        p.check_len = n * cu_.size;
        posted(p, weft_ialltoall(nz(p.send), n, WEFT_INT, nz(p.recv), n, WEFT_INT, cu_.c, &p.req));
    }
    void ialltoallv(int seed, size_t n) {
        pending &p = add("weft_ialltoallv base " + std::to_string(n));
        const int np = cu_.size, me = cu_.rank;
        auto cnt = [n](int i, int j) -> size_t { return n == 0 || (i + 2 * j) % 4 == 1 ? 0 : n + (3 * i + j) % 5; };
        p.c1.resize(np), p.d1.resize(np), p.c2.resize(np), p.d2.resize(np);
        size_t slen = 0, rlen = 0;
        for (int j = 0; j < np; ++j) {
            p.c1[j] = cnt(me, j), p.d1[j] = slen, slen += p.c1[j];
            p.c2[j] = cnt(j, me), p.d2[j] = rlen + 1, rlen += p.c2[j] + 1;
        }
        p.send.resize(slen);
        for (int j = 0; j < np; ++j)
            for (size_t i = 0; i < p.c1[j]; ++i) p.send[p.d1[j] + i] = dval(seed, me, j, i);
        p.recv.assign(rlen, sentinel);
        p.expected.assign(rlen, sentinel);
        for (int s = 0; s < np; ++s)
            for (size_t i = 0; i < p.c2[s]; ++i) p.expected[p.d2[s] + i] = dval(seed, s, me, i);
        p.check_len = rlen;
        posted(p,
               weft_ialltoallv(nz(p.send), p.c1.data(), p.d1.data(), WEFT_INT, nz(p.recv), p.c2.data(), p.d2.data(),
                               WEFT_INT, cu_.c, &p.req));
    }

    void verify(const std::string &how) {
        for (auto &p : items) {
            if (p->req != WEFT_REQUEST_NULL) COLL_FAIL(p->what + " completed by " + how, "request not reset");
            if (!p->check) continue;
            std::string bad = compare_dvals(p->recv.data() + p->check_from, p->expected.data(), p->check_len);
            if (!bad.empty()) COLL_FAIL(p->what + " completed by " + how, bad);
        }
    }
    std::vector<weft_request *> requests() {
        std::vector<weft_request *> v;
        for (auto &p : items) v.push_back(&p->req);
        return v;
    }

  private:
    const comm_under_test &cu_;
    std::string tag_;
};

// Completes requests by one of four methods.
enum class completion { reverse_wait, waitall, testall, waitany };
const char *completion_name(completion c) {
    switch (c) {
        case completion::reverse_wait: return "weft_wait in reverse order";
        case completion::waitall: return "weft_waitall";
        case completion::testall: return "a weft_testall loop";
        case completion::waitany: return "weft_waitany";
    }
    return "?";
}
int complete_all(completion how, std::vector<weft_request *> reqs) {
    std::vector<weft_request> arr;
    for (auto *r : reqs) arr.push_back(*r);
    int rc = 0;
    switch (how) {
        case completion::reverse_wait:
            for (size_t i = arr.size(); i-- > 0;)
                if ((rc = weft_wait(&arr[i], WEFT_STATUS_IGNORE))) break;
            break;
        case completion::waitall: rc = weft_waitall(arr.size(), arr.data(), WEFT_STATUSES_IGNORE); break;
        case completion::testall: {
            int flag = 0;
            for (long spins = 0; !flag && rc == 0; ++spins) {
                rc = weft_testall(arr.size(), arr.data(), &flag, WEFT_STATUSES_IGNORE);
                if (!flag && spins > 8) sched_yield();
            }
            break;
        }
        case completion::waitany: {
            size_t active = 0;  // a failed post left a null request
            for (weft_request h : arr) active += h != WEFT_REQUEST_NULL;
            for (size_t done = 0; done < active && rc == 0; ++done) {
                size_t idx = WEFT_UNDEFINED;
                rc = weft_waitany(arr.size(), arr.data(), &idx, WEFT_STATUS_IGNORE);
                if (rc == 0 && idx == WEFT_UNDEFINED) {
                    harness_message() = "weft_waitany returned WEFT_UNDEFINED with requests pending";
                    rc = harness_error;
                }
            }
            break;
        }
    }
    for (size_t i = 0; i < reqs.size(); ++i) *reqs[i] = arr[i];
    return rc;
}

class Nonblocking : public comm_fixture {};

// Every nonblocking collective outstanding at once on one communicator, four times, each time
// completed another way.
TEST_P(Nonblocking, AllKindsOutstandingOnOneComm) {
    const completion hows[] = {completion::reverse_wait, completion::waitall, completion::testall, completion::waitany};
    const size_t counts[] = {7, 1000, 1, 0};
    for (int round = 0; round < 4; ++round) {
        batch b(cu, std::string("round ") + std::to_string(round));
        step(at("posting every nonblocking collective")("round", round));
        b.post_all(round * 20, counts[round]);
        step(at("completing")("round", round)("by", completion_name(hows[round])));
        int rc = complete_all(hows[round], b.requests());
        if (COLL_RC(rc, at("completing")("by", completion_name(hows[round]))("round", round)))
            b.verify(completion_name(hows[round]));
    }
}

// The same collective posted many times before any completes: each result must belong to its
// own call (matching by sequence, not by arrival).
TEST_P(Nonblocking, SameCollectiveManyTimes) {
    batch b(cu, "16 of each");
    for (int i = 0; i < 16; ++i) {
        b.iallreduce(100 + i, 1 + i % 5);
        b.ibcast(200 + i, 3 + i, i % cu.size);
        b.ialltoall(300 + i, 1 + i % 3);
    }
    step(at("completing 48 collectives in reverse order"));
    if (COLL_RC(complete_all(completion::reverse_wait, b.requests()), at("weft_wait in reverse order")))
        b.verify("weft_wait in reverse order");
}

// Blocking collectives issued while nonblocking ones on the same communicator are pending.
TEST_P(Nonblocking, BlockingWhileNonblockingPending) {
    batch b(cu, "pending");
    b.ialltoall(1, 100);
    b.iallreduce(2, 1000);
    b.ibcast(3, 50, cu.size - 1);
    std::vector<int> x(10), y(10);
    for (int i = 0; i < 10; ++i) x[i] = sval(4, cu.rank, i);
    step(at("weft_allreduce while 3 are pending"));
    if (COLL_RC(weft_allreduce(x.data(), y.data(), 10, WEFT_INT, WEFT_SUM, cu.c), at("weft_allreduce"))) {
        std::vector<int> e = b.sum_upto(4, cu.size - 1, 10);
        std::string bad = compare_ints(y.data(), e.data(), 10);
        if (!bad.empty()) COLL_FAIL(at("blocking weft_allreduce while nonblocking ones pending"), bad);
    }
    step(at("weft_barrier while 3 are pending"));
    COLL_RC(weft_barrier(cu.c), at("weft_barrier while nonblocking ones pending"));
    step(at("completing"));
    if (COLL_RC(complete_all(completion::waitall, b.requests()), at("weft_waitall"))) b.verify("weft_waitall");
}

// A user operation and a derived datatype freed right after posting: the collective keeps
// them alive until it completes.
TEST_P(Nonblocking, OpAndDatatypeFreedWhilePending) {
    // a (+) b = a + b + 1: commutative and associative; n ones reduce to 2n - 1.
    weft_op op = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create(
                  [](void *in, void *inout, size_t *len, weft_datatype *) {
                      for (size_t i = 0; i < *len; ++i) static_cast<int *>(inout)[i] += static_cast<int *>(in)[i] + 1;
                  },
                  1, &op),
              0);
    weft_datatype vt = WEFT_DATATYPE_NULL;
    ASSERT_EQ(weft_type_vector(3, 1, 2, WEFT_INT, &vt), 0);
    ASSERT_EQ(weft_type_commit(&vt), 0);
    std::vector<int> buf(5 * 4, sentinel);
    const int root = cu.size - 1;
    if (cu.rank == root)
        for (size_t i = 0; i < buf.size(); ++i) buf[i] = dval(7, root, any_dst, i);
    int one = 1, res = -1;
    weft_request reqs[2] = {WEFT_REQUEST_NULL, WEFT_REQUEST_NULL};
    step(at("posting with op and type freed"));
    ASSERT_EQ(weft_iallreduce(&one, &res, 1, WEFT_INT, op, cu.c, &reqs[0]), 0) << detail();
    ASSERT_EQ(weft_ibcast(buf.data(), 4, vt, root, cu.c, &reqs[1]), 0) << detail();
    EXPECT_EQ(weft_op_free(&op), 0) << "weft_op_free while in use: " << detail();
    EXPECT_EQ(weft_type_free(&vt), 0) << "weft_type_free while in use: " << detail();
    step(at("waiting with op and type freed"));
    int rc = weft_waitall(2, reqs, WEFT_STATUSES_IGNORE);
    if (!COLL_RC(rc, at("weft_waitall after freeing the op and the type"))) return;
    if (res != 2 * cu.size - 1)
        COLL_FAIL(at("weft_iallreduce with freed user op"),
                  "got " + std::to_string(res) + ", expected " + std::to_string(2 * cu.size - 1));
    for (size_t e = 0; e < 4; ++e)
        for (size_t i = 0; i < 5; ++i) {
            size_t pos = e * 5 + i;  // extent of vector(3,1,2) is 5 ints
            int want =
                (i % 2 == 0) ? dval(7, root, any_dst, pos) : (cu.rank == root ? dval(7, root, any_dst, pos) : sentinel);
            if (buf[pos] != want) {
                COLL_FAIL(at("weft_ibcast with freed vector type"),
                          "index " + std::to_string(pos) + ": got " + describe_dval(buf[pos]) + ", expected " +
                              describe_dval(want));
                e = 4;
                break;
            }
        }
}

// A point-to-point receive for any source and any tag, posted before a run of collectives on
// the same communicator, is matched by none of their traffic, only by the message meant for it.
TEST_P(Nonblocking, WildcardReceiveIgnoresCollectiveTraffic) {
    if (cu.k == kind::multiplex) GTEST_SKIP() << "multiplex point-to-point is weft_stream_send";
    const int n = cu.size, me = cu.rank, right = (me + 1) % n, left = (me + n - 1) % n;
    int got[4] = {-5, -5, -5, -5};
    weft_request rreq = WEFT_REQUEST_NULL;
    ASSERT_EQ(weft_irecv(got, 4, WEFT_INT, WEFT_ANY_SOURCE, WEFT_ANY_TAG, cu.c, &rreq), 0) << detail();
    // Every collective, blocking, with payloads of 1 and 4 ints (the size of the receive).
    for (size_t count : {size_t(1), size_t(4)}) {
        batch b(cu, "blocking run");
        step(at("collectives under a wildcard receive")("count", count));
        b.post_all(40 + static_cast<int>(count), count);
        COLL_RC(complete_all(completion::waitall, b.requests()), at("weft_waitall"));
        b.verify("weft_waitall");
        int v = 1, s = 0;
        COLL_RC(weft_allreduce(&v, &s, 1, WEFT_INT, WEFT_SUM, cu.c), at("weft_allreduce"));
        COLL_RC(weft_bcast(&v, 1, WEFT_INT, 0, cu.c), at("weft_bcast"));
        COLL_RC(weft_barrier(cu.c), at("weft_barrier"));
    }
    int flag = 1;
    weft_status st;
    ASSERT_EQ(weft_test(&rreq, &flag, &st), 0) << detail();
    if (flag) {
        COLL_FAIL(at("weft_irecv(ANY_SOURCE, ANY_TAG)"),
                  "matched collective traffic: source " + std::to_string(st.source) + " tag " + std::to_string(st.tag) +
                      " data " + std::to_string(got[0]));
        return;
    }
    // Every rank has checked before any sends.  (Not the harness's point-to-point barrier: on
    // WEFT_COMM_WORLD the wildcard receive would take its message.)
    step(at("weft_barrier before the point-to-point message"));
    if (!COLL_RC(weft_barrier(cu.c), at("weft_barrier"))) {
        weft_cancel(&rreq);
        weft_wait(&rreq, WEFT_STATUS_IGNORE);
        return;
    }
    int msg[4] = {me, 11, 22, 33};
    step(at("the point-to-point message for the wildcard receive"));
    ASSERT_EQ(weft_send(msg, 4, WEFT_INT, right, 17, cu.c), 0) << detail();
    ASSERT_EQ(weft_wait(&rreq, &st), 0) << detail();
    // Nobody leaves (the harness's barrier is point to point on WEFT_COMM_WORLD) before every
    // wildcard receive has its message.
    step(at("weft_barrier after the point-to-point message"));
    COLL_RC(weft_barrier(cu.c), at("weft_barrier after the wildcard receive completed"));
    EXPECT_EQ(st.source, left) << "rank " << me;
    EXPECT_EQ(st.tag, 17) << "rank " << me;
    EXPECT_EQ(got[0], left) << "rank " << me;
    EXPECT_EQ(got[3], 33) << "rank " << me;
}

INSTANTIATE_TEST_SUITE_P(Comm, Nonblocking, ::testing::ValuesIn(all_kinds), kind_param_name);

// Several communicators (world, a dup, a stream communicator with its own endpoint) with
// collectives outstanding on all of them and point-to-point traffic on the same communicators,
// completed together by weft_waitall and by a weft_testall loop.
class MixedComms : public coll_fixture {};

TEST_F(MixedComms, OutstandingOnThreeCommsWithPointToPoint) {
    comm_under_test world, dup, str;
    ASSERT_EQ(world.create(kind::world), 0);
    ASSERT_EQ(dup.create(kind::dup), 0) << detail();
    ASSERT_EQ(str.create(kind::stream), 0) << detail();
    const int n = world.size, me = world.rank, right = (me + 1) % n, left = (me + n - 1) % n;
    for (completion how : {completion::waitall, completion::testall}) {
        batch bw(world, "world"), bd(dup, "dup"), bs(str, "stream comm");
        // Point-to-point on the same communicators, posted first.
        int pin[3] = {-1, -1, -1}, pout[3] = {me * 10 + 1, me * 10 + 2, me * 10 + 3};
        weft_request preq[6];
        const weft_comm pc[3] = {world.c, dup.c, str.c};
        for (int i = 0; i < 3; ++i) ASSERT_EQ(weft_irecv(&pin[i], 1, WEFT_INT, left, 30 + i, pc[i], &preq[i]), 0);
        step("posting on three communicators");
        bw.iallreduce(1, 100);
        bd.ibcast(2, 1000, 0);
        bs.iallgather(3, 7);
        bw.ialltoall(4, 3);
        bd.ibarrier();
        bs.iscan(5, 20, false);
        bw.ireduce(6, 9, n - 1);
        bs.ibcast(7, 5, n / 2);
        bd.ialltoallv(8, 4);
        for (int i = 0; i < 3; ++i) ASSERT_EQ(weft_isend(&pout[i], 1, WEFT_INT, right, 30 + i, pc[i], &preq[3 + i]), 0);
        // A blocking collective on the dup meanwhile.
        int x = me + 1, s = 0;
        step("blocking weft_allreduce on the dup while others pend");
        if (COLL_RC(weft_allreduce(&x, &s, 1, WEFT_INT, WEFT_SUM, dup.c), "weft_allreduce on dup") &&
            s != n * (n + 1) / 2)
            COLL_FAIL("blocking weft_allreduce on dup while others pend", "got " + std::to_string(s));
        std::vector<weft_request *> all;
        for (auto *b : {&bw, &bd, &bs})
            for (auto *r : b->requests()) all.push_back(r);
        for (auto &r : preq) all.push_back(&r);
        step(std::string("completing by ") + completion_name(how));
        if (COLL_RC(complete_all(how, all), std::string("completing everything by ") + completion_name(how))) {
            bw.verify(completion_name(how));
            bd.verify(completion_name(how));
            bs.verify(completion_name(how));
            for (int i = 0; i < 3; ++i)
                if (pin[i] != left * 10 + i + 1)
                    COLL_FAIL(std::string("point-to-point on ") +
                                  (i == 0       ? "world"
                                       : i == 1 ? "dup"
                                                : "stream comm"),
                              "got " + std::to_string(pin[i]) + ", expected " + std::to_string(left * 10 + i + 1));
        }
    }
    EXPECT_EQ(str.destroy(), 0) << detail();
    EXPECT_EQ(dup.destroy(), 0) << detail();
}

}  // namespace
