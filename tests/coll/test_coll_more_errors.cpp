// Misuse of weft_reduce_scatter and weft_alltoallw (every process passes the same bad
// argument: each gets the code and a detail naming the call, nothing hangs, the communicator
// still works), their unknown algorithm names, and weft_reduce_local / weft_op_commutative
// (local calls: built-in and user ops, and their misuse).  Also the C++ layer's forms.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "coll_env.hpp"
#include "weft/weft.h"
#include "weft/weft.hpp"

using namespace coll_test;

namespace {

struct outcome {
    int rc;
    std::string detail;
};
outcome O(int rc) { return {rc, rc ? detail() : std::string()}; }

class MoreErrors : public coll_fixture {
  protected:
    int n = 0, me = 0;
    weft_datatype vec_ = WEFT_DATATYPE_NULL, uncommitted_ = WEFT_DATATYPE_NULL;
    weft_op user_ = WEFT_OP_NULL;
    std::vector<int> a, b;
    std::vector<size_t> counts;
    std::vector<ptrdiff_t> displs;
    std::vector<weft_datatype> ints;

    static void add_fn(void *in, void *inout, size_t *len, weft_datatype *) {
        for (size_t i = 0; i < *len; ++i) static_cast<int *>(inout)[i] += static_cast<const int *>(in)[i];
    }
    void SetUp() override {
        coll_fixture::SetUp();
        n = world_size();
        me = world_rank();
        a.assign(4 * n, 1);
        b.assign(4 * n, 0);
        counts.assign(n, 1);
        displs.resize(n);
        for (int i = 0; i < n; ++i) displs[i] = i * static_cast<ptrdiff_t>(sizeof(int));
        ints.assign(n, WEFT_INT);
        ASSERT_EQ(weft_type_vector(2, 1, 2, WEFT_INT, &vec_), 0);
        ASSERT_EQ(weft_type_commit(&vec_), 0);
        ASSERT_EQ(weft_type_contiguous(2, WEFT_INT, &uncommitted_), 0);
        ASSERT_EQ(weft_op_create(add_fn, 1, &user_), 0);
    }
    void TearDown() override {
        EXPECT_EQ(weft_type_free(&vec_), 0);
        EXPECT_EQ(weft_type_free(&uncommitted_), 0);
        EXPECT_EQ(weft_op_free(&user_), 0);
        coll_fixture::TearDown();
    }
    void expect(const outcome &o, int want, const std::string &fn, const std::string &why,
                const char *names = nullptr) {
        if (o.rc != want) {
            COLL_FAIL(fn + " with " + why,
                      "returned code " + std::to_string(o.rc) + ", detail \"" + o.detail + "\", expected code " +
                          std::to_string(want));
            return;
        }
        if (o.detail.find(fn) == std::string::npos)
            COLL_FAIL(fn + " with " + why, "the detail does not name " + fn + ": \"" + o.detail + "\"");
        if (names != nullptr && o.detail.find(names) == std::string::npos)
            COLL_FAIL(fn + " with " + why, "the detail does not name " + std::string(names) + ": \"" + o.detail + "\"");
    }
    void still_works(const std::string &after) {
        std::vector<int> in(n, me + 1);
        int out = -1;
        std::vector<size_t> one(n, 1);
        step("reduce_scatter after " + after);
        if (COLL_RC(weft_reduce_scatter(in.data(), &out, one.data(), WEFT_INT, WEFT_SUM, WEFT_COMM_WORLD),
                    "weft_reduce_scatter after " + after) &&
            out != n * (n + 1) / 2)
            COLL_FAIL("weft_reduce_scatter after " + after, "got " + std::to_string(out));
    }
    // reduce_scatter blocking and nonblocking (the request must stay WEFT_REQUEST_NULL).
    void rs(const void *s, void *r, const size_t *c, weft_datatype t, weft_op op, weft_comm comm, int want,
            const std::string &why, const char *names = nullptr) {
        expect(O(weft_reduce_scatter(s, r, c, t, op, comm)), want, "weft_reduce_scatter", why, names);
        weft_request q = WEFT_REQUEST_NULL;
        expect(O(weft_ireduce_scatter(s, r, c, t, op, comm, &q)), want, "weft_ireduce_scatter", why, names);
        if (q != WEFT_REQUEST_NULL) COLL_FAIL("weft_ireduce_scatter with " + why, "a failed call left a request");
    }
    void a2aw(const void *s, const size_t *sc, const ptrdiff_t *sd, const weft_datatype *st, void *r, const size_t *rc,
              const ptrdiff_t *rd, const weft_datatype *rt, weft_comm comm, int want, const std::string &why,
              const char *names = nullptr) {
        expect(O(weft_alltoallw(s, sc, sd, st, r, rc, rd, rt, comm)), want, "weft_alltoallw", why, names);
        weft_request q = WEFT_REQUEST_NULL;
        expect(O(weft_ialltoallw(s, sc, sd, st, r, rc, rd, rt, comm, &q)), want, "weft_ialltoallw", why, names);
        if (q != WEFT_REQUEST_NULL) COLL_FAIL("weft_ialltoallw with " + why, "a failed call left a request");
    }
};

TEST_F(MoreErrors, ReduceScatterArguments) {
    const weft_comm w = WEFT_COMM_WORLD;
    int *s = a.data(), *r = b.data();
    const size_t *c = counts.data();
    step("reduce_scatter misuse");
    rs(s, r, nullptr, WEFT_INT, WEFT_SUM, w, WEFT_ERR_ARG, "recvcounts NULL", "recvcounts");
    rs(s, r, c, static_cast<weft_datatype>(0x12345), WEFT_SUM, w, WEFT_ERR_TYPE, "a garbage datatype");
    rs(s, r, c, uncommitted_, user_, w, WEFT_ERR_TYPE, "an uncommitted datatype", "commit");
    rs(s, r, c, WEFT_DOUBLE, WEFT_BAND, w, WEFT_ERR_OP, "BAND on DOUBLE", "WEFT_BAND");
    rs(s, r, c, WEFT_INT, WEFT_OP_NULL, w, WEFT_ERR_OP, "WEFT_OP_NULL");
    rs(s, r, c, vec_, user_, w, WEFT_ERR_OP, "a user op on a non-contiguous type", "contiguous");
    rs(s, r, c, vec_, WEFT_SUM, w, WEFT_ERR_OP, "SUM on a derived type");
    rs(nullptr, r, c, WEFT_INT, WEFT_SUM, w, WEFT_ERR_BUFFER, "sendbuf NULL", "sendbuf");
    rs(s, nullptr, c, WEFT_INT, WEFT_SUM, w, WEFT_ERR_BUFFER, "recvbuf NULL", "recvbuf");
    rs(WEFT_IN_PLACE, nullptr, c, WEFT_INT, WEFT_SUM, w, WEFT_ERR_BUFFER, "recvbuf NULL in place", "recvbuf");
    rs(s, WEFT_IN_PLACE, c, WEFT_INT, WEFT_SUM, w, WEFT_ERR_BUFFER, "recvbuf WEFT_IN_PLACE", "recvbuf");
    rs(s, r, c, WEFT_INT, WEFT_SUM, static_cast<weft_comm>(0x7777), WEFT_ERR_COMM, "a garbage communicator");
    std::vector<size_t> huge(n, 1);
    huge[0] = SIZE_MAX / 2;
    if (n >= 2) huge[n - 1] = SIZE_MAX / 2 + 2;
    rs(s, r, huge.data(), WEFT_INT, WEFT_SUM, w, WEFT_ERR_COUNT, "counts that overflow");
    expect(O(weft_ireduce_scatter(s, r, c, WEFT_INT, WEFT_SUM, w, nullptr)), WEFT_ERR_ARG, "weft_ireduce_scatter",
           "request NULL");
    // Insignificant arguments: NULL buffers where every count is 0, or where this rank's is.
    std::vector<size_t> zero(n, 0);
    step("reduce_scatter with NULL buffers and zero counts");
    COLL_RC(weft_reduce_scatter(nullptr, nullptr, zero.data(), WEFT_INT, WEFT_SUM, w), "every count 0, NULL buffers");
    std::vector<size_t> lastzero(n, 2);
    lastzero[n - 1] = 0;
    std::vector<int> in(2 * n, 1);
    COLL_RC(weft_reduce_scatter(in.data(), me == n - 1 ? nullptr : r, lastzero.data(), WEFT_INT, WEFT_SUM, w),
            "recvbuf NULL where this rank's count is 0");
    still_works("reduce_scatter misuse");
}

TEST_F(MoreErrors, AlltoallwArguments) {
    const weft_comm w = WEFT_COMM_WORLD;
    int *s = a.data(), *r = b.data();
    const size_t *c = counts.data();
    const ptrdiff_t *d = displs.data();
    const weft_datatype *t = ints.data();
    step("alltoallw misuse");
    a2aw(s, nullptr, d, t, r, c, d, t, w, WEFT_ERR_ARG, "sendcounts NULL", "sendcounts");
    a2aw(s, c, nullptr, t, r, c, d, t, w, WEFT_ERR_ARG, "sdispls NULL", "sdispls");
    a2aw(s, c, d, nullptr, r, c, d, t, w, WEFT_ERR_ARG, "sendtypes NULL", "sendtypes");
    a2aw(s, c, d, t, r, nullptr, d, t, w, WEFT_ERR_ARG, "recvcounts NULL", "recvcounts");
    a2aw(s, c, d, t, r, c, nullptr, t, w, WEFT_ERR_ARG, "rdispls NULL", "rdispls");
    a2aw(s, c, d, t, r, c, d, nullptr, w, WEFT_ERR_ARG, "recvtypes NULL", "recvtypes");
    std::vector<weft_datatype> bad = ints;
    bad[n - 1] = static_cast<weft_datatype>(0x12345);
    std::string name = "sendtypes[" + std::to_string(n - 1) + "]";
    a2aw(s, c, d, bad.data(), r, c, d, t, w, WEFT_ERR_TYPE, "a garbage send type", name.c_str());
    bad[n - 1] = uncommitted_;
    name = "recvtypes[" + std::to_string(n - 1) + "]";
    a2aw(s, c, d, t, r, c, d, bad.data(), w, WEFT_ERR_TYPE, "an uncommitted receive type", name.c_str());
    a2aw(nullptr, c, d, t, r, c, d, t, w, WEFT_ERR_BUFFER, "sendbuf NULL", "sendbuf");
    a2aw(s, c, d, t, nullptr, c, d, t, w, WEFT_ERR_BUFFER, "recvbuf NULL", "recvbuf");
    a2aw(s, c, d, t, WEFT_IN_PLACE, c, d, t, w, WEFT_ERR_BUFFER, "recvbuf WEFT_IN_PLACE");
    std::vector<size_t> two(n, 1);
    two[me] = 2;  // sends itself 2 ints, its own receive block holds 1
    a2aw(s, two.data(), d, t, r, c, d, t, w, WEFT_ERR_TRUNCATE, "a self block of another size", "signatures");
    a2aw(s, c, d, t, r, c, d, t, static_cast<weft_comm>(0x7777), WEFT_ERR_COMM, "a garbage communicator");
    expect(O(weft_ialltoallw(s, c, d, t, r, c, d, t, w, nullptr)), WEFT_ERR_ARG, "weft_ialltoallw", "request NULL");
    still_works("alltoallw misuse");
}

// Peers that disagree on a pair's size: the receivers report truncation (every receive from
// another rank is too small here), nothing hangs, and the communicator still works.
TEST_F(MoreErrors, AlltoallwSignatureMismatch) {
    if (n < 2) GTEST_SKIP() << "needs 2 processes or more";
    std::vector<size_t> scounts(n, 2), rcounts(n, 1);
    scounts[me] = 1;
    std::vector<ptrdiff_t> sd(n), rd(n);
    for (int i = 0; i < n; ++i) {
        sd[i] = 2 * i * static_cast<ptrdiff_t>(sizeof(int));
        rd[i] = i * static_cast<ptrdiff_t>(sizeof(int));
    }
    step("alltoallw with mismatched sizes");
    expect(O(weft_alltoallw(a.data(), scounts.data(), sd.data(), ints.data(), b.data(), rcounts.data(), rd.data(),
                            ints.data(), WEFT_COMM_WORLD)),
           WEFT_ERR_TRUNCATE, "collective", "mismatched sizes");
    still_works("mismatched alltoallw sizes");
}

// Run by the coll_more.*.bogus entry (unknown names in WEFT_COLL_REDUCE_SCATTER and
// WEFT_COLL_ALLTOALLW): both fail with WEFT_ERR_ARG naming the variable and the valid names.
// Elsewhere both work with whatever the run forces.
TEST_F(MoreErrors, UnknownAlgorithmName) {
    const weft_comm w = WEFT_COMM_WORLD;
    auto bogus = [](const char *var, std::initializer_list<const char *> names) {
        const char *v = std::getenv(var);
        return v && *v && std::string(v) != "auto" &&
            std::none_of(names.begin(), names.end(), [&](const char *a) { return std::string(v) == a; });
    };
    bool rs_bad = bogus("WEFT_COLL_REDUCE_SCATTER", {"recursive_halving", "pairwise", "reduce_scatterv"});
    bool aw_bad = bogus("WEFT_COLL_ALLTOALLW", {"scattered", "pairwise"});
    if (alg_set().rfind("bogus", 0) == 0) {
        ASSERT_TRUE(rs_bad && aw_bad) << "set " << alg_set() << " forces no bogus name";
    }
    step("reduce_scatter and alltoallw under the run's WEFT_COLL_* names");
    int *s = a.data(), *r = b.data();
    if (rs_bad)
        rs(s, r, counts.data(), WEFT_INT, WEFT_SUM, w, WEFT_ERR_ARG, "an unknown algorithm name",
           "WEFT_COLL_REDUCE_SCATTER");
    else
        COLL_RC(weft_reduce_scatter(s, r, counts.data(), WEFT_INT, WEFT_SUM, w), "weft_reduce_scatter");
    if (aw_bad)
        a2aw(s, counts.data(), displs.data(), ints.data(), r, counts.data(), displs.data(), ints.data(), w,
             WEFT_ERR_ARG, "an unknown algorithm name", "WEFT_COLL_ALLTOALLW");
    else
        COLL_RC(weft_alltoallw(s, counts.data(), displs.data(), ints.data(), r, counts.data(), displs.data(),
                               ints.data(), w),
                "weft_alltoallw");
    // Other collectives are not affected.
    int x = 1, sum = 0;
    COLL_RC(weft_allreduce(&x, &sum, 1, WEFT_INT, WEFT_SUM, w), "weft_allreduce");
    if (sum != n) COLL_FAIL("weft_allreduce", "got " + std::to_string(sum));
}

// ------------------------------------------------------------------ local calls

struct mat2 {
    uint32_t m[4];
};
mat2 mat_mul(const mat2 &x, const mat2 &y) {
    return {{x.m[0] * y.m[0] + x.m[1] * y.m[2], x.m[0] * y.m[1] + x.m[1] * y.m[3], x.m[2] * y.m[0] + x.m[3] * y.m[2],
             x.m[2] * y.m[1] + x.m[3] * y.m[3]}};
}
weft_datatype g_seen_type = WEFT_DATATYPE_NULL;
size_t g_seen_len = 0;
void mat_fn(void *in, void *inout, size_t *len, weft_datatype *dt) {
    g_seen_type = *dt;
    g_seen_len = *len;
    const mat2 *x = static_cast<const mat2 *>(in);
    mat2 *y = static_cast<mat2 *>(inout);
    for (size_t k = 0; k < *len; ++k) y[k] = mat_mul(x[k], y[k]);
}
void nop_fn(void *, void *, size_t *, weft_datatype *) {}

class Local : public ::testing::Test {};

TEST_F(Local, ReduceLocalBuiltins) {
    int in[5] = {1, -2, 3, 4, 5}, io[5] = {10, 20, 30, 40, 50};
    ASSERT_EQ(weft_reduce_local(in, io, 5, WEFT_INT, WEFT_SUM), 0) << detail();
    EXPECT_EQ(std::vector<int>(io, io + 5), (std::vector<int>{11, 18, 33, 44, 55}));
    double din[3] = {1.5, -2, 8}, dio[3] = {1, 1, 9};
    ASSERT_EQ(weft_reduce_local(din, dio, 3, WEFT_DOUBLE, WEFT_MAX), 0) << detail();
    EXPECT_EQ(std::vector<double>(dio, dio + 3), (std::vector<double>{1.5, 1, 9}));
    uint8_t bin[2] = {0xF0, 0x3C}, bio[2] = {0x3C, 0xFF};
    ASSERT_EQ(weft_reduce_local(bin, bio, 2, WEFT_UINT8_T, WEFT_BAND), 0) << detail();
    EXPECT_EQ(bio[0], 0x30);
    EXPECT_EQ(bio[1], 0x3C);
    struct {
        double v;
        int i;
    } lin[2] = {{1.0, 7}, {2.0, 1}}, lio[2] = {{1.0, 3}, {5.0, 9}};
    ASSERT_EQ(weft_reduce_local(lin, lio, 2, WEFT_DOUBLE_INT, WEFT_MINLOC), 0) << detail();
    EXPECT_EQ(lio[0].v, 1.0);
    EXPECT_EQ(lio[0].i, 3);  // a tie: the smaller index
    EXPECT_EQ(lio[1].v, 2.0);
    EXPECT_EQ(lio[1].i, 1);
    // Empty: NULL buffers are fine.
    EXPECT_EQ(weft_reduce_local(nullptr, nullptr, 0, WEFT_INT, WEFT_PROD), 0) << detail();
}

// A non-commutative user op on a contiguous derived type: inout = in op inout, in that order;
// the function gets the count and the datatype of the call.
TEST_F(Local, ReduceLocalUserOps) {
    weft_datatype mat = WEFT_DATATYPE_NULL;
    weft_op op = WEFT_OP_NULL;
    ASSERT_EQ(weft_type_contiguous(4, WEFT_UINT32_T, &mat), 0);
    ASSERT_EQ(weft_type_commit(&mat), 0);
    ASSERT_EQ(weft_op_create(mat_fn, 0, &op), 0);
    mat2 x[3], y[3], want[3];
    for (uint32_t k = 0; k < 3; ++k)
        for (uint32_t e = 0; e < 4; ++e) {
            x[k].m[e] = 3 * k + e + 1;
            y[k].m[e] = 7 * e + k + 2;
        }
    for (int k = 0; k < 3; ++k) {
        want[k] = mat_mul(x[k], y[k]);
        mat2 other = mat_mul(y[k], x[k]);
        ASSERT_NE(std::memcmp(&want[k], &other, sizeof other), 0) << "data does not tell the orders apart";
    }
    ASSERT_EQ(weft_reduce_local(x, y, 3, mat, op), 0) << detail();
    EXPECT_EQ(std::memcmp(y, want, sizeof want), 0) << "inout is not in op inout";
    EXPECT_EQ(g_seen_type, mat);
    EXPECT_EQ(g_seen_len, 3u);
    EXPECT_EQ(weft_op_free(&op), 0);
    EXPECT_EQ(weft_type_free(&mat), 0);
}

TEST_F(Local, ReduceLocalMisuse) {
    int in[2] = {1, 2}, io[2] = {3, 4};
    auto expect_rc = [](int rc, int want, const char *why) {
        EXPECT_EQ(rc, want) << why << ": " << detail();
        if (rc != 0) {
            EXPECT_NE(detail().find("weft_reduce_local"), std::string::npos) << why << ": " << detail();
        }
    };
    weft_datatype vec = WEFT_DATATYPE_NULL, unc = WEFT_DATATYPE_NULL;
    ASSERT_EQ(weft_type_vector(2, 1, 2, WEFT_INT, &vec), 0);
    ASSERT_EQ(weft_type_commit(&vec), 0);
    ASSERT_EQ(weft_type_contiguous(2, WEFT_INT, &unc), 0);
    weft_op user = WEFT_OP_NULL, freed = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create(nop_fn, 1, &user), 0);
    ASSERT_EQ(weft_op_create(nop_fn, 1, &freed), 0);
    weft_op stale = freed;
    ASSERT_EQ(weft_op_free(&freed), 0);
    expect_rc(weft_reduce_local(in, io, 2, static_cast<weft_datatype>(0x12345), WEFT_SUM), WEFT_ERR_TYPE, "bad type");
    expect_rc(weft_reduce_local(in, io, 1, unc, user), WEFT_ERR_TYPE, "uncommitted type");
    expect_rc(weft_reduce_local(in, io, 2, WEFT_DOUBLE, WEFT_BAND), WEFT_ERR_OP, "BAND on DOUBLE");
    expect_rc(weft_reduce_local(in, io, 2, WEFT_INT, WEFT_OP_NULL), WEFT_ERR_OP, "WEFT_OP_NULL");
    expect_rc(weft_reduce_local(in, io, 2, WEFT_INT, stale), WEFT_ERR_OP, "a freed op");
    expect_rc(weft_reduce_local(in, io, 1, vec, user), WEFT_ERR_OP, "a user op on a vector type");
    expect_rc(weft_reduce_local(nullptr, io, 2, WEFT_INT, WEFT_SUM), WEFT_ERR_BUFFER, "inbuf NULL");
    expect_rc(weft_reduce_local(in, nullptr, 2, WEFT_INT, WEFT_SUM), WEFT_ERR_BUFFER, "inoutbuf NULL");
    expect_rc(weft_reduce_local(WEFT_IN_PLACE, io, 2, WEFT_INT, WEFT_SUM), WEFT_ERR_BUFFER, "WEFT_IN_PLACE");
    expect_rc(weft_reduce_local(in, io, SIZE_MAX / 2, WEFT_INT, WEFT_SUM), WEFT_ERR_COUNT, "count overflow");
    EXPECT_EQ(io[0], 3);
    EXPECT_EQ(io[1], 4);  // nothing was applied
    EXPECT_EQ(weft_op_free(&user), 0);
    EXPECT_EQ(weft_type_free(&vec), 0);
    EXPECT_EQ(weft_type_free(&unc), 0);
}

TEST_F(Local, OpCommutative) {
    const weft_op builtins[] = {WEFT_MAX, WEFT_MIN, WEFT_SUM,  WEFT_PROD, WEFT_LAND,   WEFT_BAND,
                                WEFT_LOR, WEFT_BOR, WEFT_LXOR, WEFT_BXOR, WEFT_MINLOC, WEFT_MAXLOC};
    for (weft_op op : builtins) {
        int c = -1;
        ASSERT_EQ(weft_op_commutative(op, &c), 0) << detail();
        EXPECT_EQ(c, 1) << "op 0x" << std::hex << op;
    }
    weft_op yes = WEFT_OP_NULL, no = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create(nop_fn, 1, &yes), 0);
    ASSERT_EQ(weft_op_create(nop_fn, 0, &no), 0);
    int c = -1;
    ASSERT_EQ(weft_op_commutative(yes, &c), 0) << detail();
    EXPECT_EQ(c, 1);
    ASSERT_EQ(weft_op_commutative(no, &c), 0) << detail();
    EXPECT_EQ(c, 0);
    EXPECT_EQ(weft_op_commutative(yes, nullptr), WEFT_ERR_ARG);
    weft_op stale = no;
    ASSERT_EQ(weft_op_free(&no), 0);
    c = -1;
    EXPECT_EQ(weft_op_commutative(stale, &c), WEFT_ERR_OP);
    EXPECT_NE(detail().find("weft_op_commutative"), std::string::npos) << detail();
    EXPECT_EQ(c, -1) << "written on failure";
    EXPECT_EQ(weft_op_commutative(WEFT_OP_NULL, &c), WEFT_ERR_OP);
    EXPECT_EQ(weft_op_commutative(static_cast<weft_op>(0x12345), &c), WEFT_ERR_OP);
    EXPECT_EQ(weft_op_free(&yes), 0);
}

// ------------------------------------------------------------------ C++ layer

class Cxx : public coll_fixture {};

TEST_F(Cxx, Forms) {
    weft::Comm world = weft::Comm::world();
    const int n = world.size(), me = world.rank();
    std::vector<size_t> counts(n);
    for (int r = 0; r < n; ++r) counts[r] = static_cast<size_t>(r % 2 + 1);
    size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
    std::vector<int> in(total);
    for (size_t i = 0; i < total; ++i) in[i] = me + static_cast<int>(i);
    std::vector<int> out(counts[me]);
    size_t first = std::accumulate(counts.begin(), counts.begin() + me, size_t{0});
    step("weft::reduce_scatter (spans)");
    weft::reduce_scatter(world, std::span<const int>(in), std::span<int>(out), std::span<const size_t>(counts),
                         WEFT_SUM);
    for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], n * (n - 1) / 2 + n * static_cast<int>(first + i));
    step("weft::reduce_scatter (in place)");
    std::vector<int> inout = in;
    weft::reduce_scatter(world, std::span<int>(inout), std::span<const size_t>(counts), WEFT_SUM);
    for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(inout[i], out[i]);
    step("weft::ireduce_scatter (spans)");
    std::vector<int> out2(counts[me], -1);
    weft::Request q = weft::ireduce_scatter(world, std::span<const int>(in), std::span<int>(out2),
                                            std::span<const size_t>(counts), WEFT_SUM);
    q.wait();
    EXPECT_EQ(out2, out);
    // Lengths are checked before any communication.
    std::vector<int> wrong(out.size() + 1);
    EXPECT_THROW(weft::reduce_scatter(world, std::span<const int>(in), std::span<int>(wrong),
                                      std::span<const size_t>(counts), WEFT_SUM),
                 std::invalid_argument);
    step("weft::alltoallw");
    std::vector<size_t> one(n, 1);
    std::vector<std::ptrdiff_t> d(n);
    for (int r = 0; r < n; ++r) d[r] = r * static_cast<std::ptrdiff_t>(sizeof(int));
    std::vector<weft_datatype> t(n, WEFT_INT);
    std::vector<int> sb(n), rb(n, -1);
    for (int r = 0; r < n; ++r) sb[r] = me * 10 + r;
    weft::alltoallw(world, sb.data(), one.data(), d.data(), t.data(), rb.data(), one.data(), d.data(), t.data());
    for (int r = 0; r < n; ++r) EXPECT_EQ(rb[r], r * 10 + me);
    weft::ialltoallw(world, WEFT_IN_PLACE, nullptr, nullptr, nullptr, rb.data(), one.data(), d.data(), t.data()).wait();
    EXPECT_EQ(rb, sb);
    // Local calls.
    std::vector<int> x{1, 2}, y{3, 4};
    weft::reduce_local(std::span<const int>(x), std::span<int>(y), WEFT_PROD);
    EXPECT_EQ(y, (std::vector<int>{3, 8}));
    EXPECT_TRUE(weft::op_commutative(WEFT_SUM));
    weft::Op noncomm(nop_fn, false);
    EXPECT_FALSE(weft::op_commutative(noncomm));
    try {
        weft::reduce_local(x.data(), y.data(), 2, WEFT_DOUBLE, WEFT_BAND);
        ADD_FAILURE() << "no exception";
    } catch (const weft::error &e) {
        EXPECT_EQ(e.code(), WEFT_ERR_OP);
    }
}

}  // namespace
