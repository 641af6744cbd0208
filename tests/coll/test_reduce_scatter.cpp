// weft_reduce_scatter and weft_ireduce_scatter on every communicator kind: uneven and zero
// counts (a rank with an empty block, every block empty), a vector large enough for the
// long-message algorithm, in place, built-in ops, a commutative user op and a non-commutative
// one (2x2 matrix product on a contiguous derived type) whose result depends on rank order.
// The ctest entries force each algorithm (WEFT_COLL_REDUCE_SCATTER) in turn.
//
// Each process computes every rank's input locally and folds the inputs in rank order, so it
// knows the exact result.
#include <atomic>
#include <numeric>

#include "coll_env.hpp"
#include "weft/weft.h"

using namespace coll_test;

namespace {

using bytes = std::vector<unsigned char>;
constexpr unsigned char guard_byte = 0xA5;
constexpr size_t guard_bytes = 16;

inline int reduce_scatter(mode m, const void *s, void *d, const size_t *counts, weft_datatype t, weft_op op,
                          weft_comm c) {
    return invoke(
        m, [&] { return weft_reduce_scatter(s, d, counts, t, op, c); },
        [&](weft_request *r) { return weft_ireduce_scatter(s, d, counts, t, op, c, r); });
}

// One (operation, datatype) with its local model: rank r's input and inout = in op inout.
struct rs_case {
    std::string name;
    weft_datatype type = WEFT_DATATYPE_NULL;
    weft_op op = WEFT_OP_NULL;
    size_t esize = 0;
    std::function<void(int seed, int r, size_t n, void *out)> fill;
    std::function<void(const void *in, void *inout)> combine1;  // one element
    std::function<std::string(const void *got, const void *exp, size_t n)> cmp;
};

template <class T, class Gen, class F>
rs_case make(std::string name, weft_datatype t, weft_op op, Gen gen, F f) {
    rs_case c;
    c.name = std::move(name);
    c.type = t;
    c.op = op;
    c.esize = sizeof(T);
    c.fill = [gen](int seed, int r, size_t n, void *out) {
        T *p = static_cast<T *>(out);
        for (size_t i = 0; i < n; ++i) p[i] = gen(seed, r, i);
    };
    c.combine1 = [f](const void *in, void *inout) {
        T a, b;
        std::memcpy(&a, in, sizeof a);
        std::memcpy(&b, inout, sizeof b);
        b = f(a, b);
        std::memcpy(inout, &b, sizeof b);
    };
    c.cmp = [](const void *got, const void *exp, size_t n) {
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; ++i)
            if (std::memcmp(static_cast<const char *>(got) + i * sizeof(T),
                            static_cast<const char *>(exp) + i * sizeof(T), sizeof(T)) != 0 &&
                bad++ == 0)
                first = i;
        if (bad == 0) return std::string();
        return std::to_string(bad) + " of " + std::to_string(n) + " elements wrong; first at index " +
            std::to_string(first);
    };
    return c;
}

struct mat2 {
    uint32_t m[4];
};
mat2 mat_mul(const mat2 &a, const mat2 &b) {
    return {{a.m[0] * b.m[0] + a.m[1] * b.m[2], a.m[0] * b.m[1] + a.m[1] * b.m[3], a.m[2] * b.m[0] + a.m[3] * b.m[2],
             a.m[2] * b.m[1] + a.m[3] * b.m[3]}};
}
std::atomic<weft_datatype> g_mat_type{WEFT_DATATYPE_NULL};
std::atomic<int> g_wrong_type{0};
// Non-commutative: inout = in x inout.
void mat_fn(void *in, void *inout, size_t *len, weft_datatype *dt) {
    if (dt == nullptr || *dt != g_mat_type.load()) ++g_wrong_type;
    const mat2 *a = static_cast<const mat2 *>(in);
    mat2 *b = static_cast<mat2 *>(inout);
    for (size_t k = 0; k < *len; ++k) b[k] = mat_mul(a[k], b[k]);
}
// Commutative: (1 + a)(1 + b) - 1 modulo 2^32.
uint32_t comm_f(uint32_t a, uint32_t b) { return a + b + a * b; }
void comm_fn(void *in, void *inout, size_t *len, weft_datatype *dt) {
    if (dt == nullptr || *dt != WEFT_UINT32_T) ++g_wrong_type;
    const uint32_t *a = static_cast<const uint32_t *>(in);
    uint32_t *b = static_cast<uint32_t *>(inout);
    for (size_t k = 0; k < *len; ++k) b[k] = comm_f(a[k], b[k]);
}

class ReduceScatter : public comm_fixture {
  protected:
    weft_datatype mat_ = WEFT_DATATYPE_NULL;
    weft_op noncomm_ = WEFT_OP_NULL, comm_ = WEFT_OP_NULL;
    std::vector<rs_case> cases_;

    void SetUp() override {
        comm_fixture::SetUp();
        if (HasFatalFailure()) return;
        ASSERT_EQ(weft_type_contiguous(4, WEFT_UINT32_T, &mat_), 0) << detail();
        ASSERT_EQ(weft_type_commit(&mat_), 0) << detail();
        g_mat_type = mat_;
        ASSERT_EQ(weft_op_create(mat_fn, 0, &noncomm_), 0) << detail();
        ASSERT_EQ(weft_op_create(comm_fn, 1, &comm_), 0) << detail();
        g_wrong_type = 0;
        cases_.push_back(make<int>(
            "SUM/INT", WEFT_INT, WEFT_SUM,
            [](int s, int r, size_t i) { return static_cast<int>(mix(s, r, i) % 2001) - 1000; },
            [](int a, int b) { return a + b; }));
        cases_.push_back(make<double>(
            "MAX/DOUBLE", WEFT_DOUBLE, WEFT_MAX,
            [](int s, int r, size_t i) { return (static_cast<double>(mix(s, r, i) % 2000001) - 1e6) / 8.0; },
            [](double a, double b) { return std::max(a, b); }));
        cases_.push_back(make<uint32_t>(
            "user commutative/UINT32_T", WEFT_UINT32_T, comm_,
            [](int s, int r, size_t i) { return static_cast<uint32_t>(mix(s, r, i)); }, comm_f));
        cases_.push_back(make<mat2>(
            "user non-commutative 2x2 matrix product", mat_, noncomm_,
            [](int s, int r, size_t i) {
                mat2 m;
                for (int k = 0; k < 4; ++k) m.m[k] = static_cast<uint32_t>(mix(s, r, i * 4 + k));
                return m;
            },
            mat_mul));
    }
    void TearDown() override {
        EXPECT_EQ(g_wrong_type.load(), 0) << "a user function was handed the wrong datatype";
        if (comm_ != WEFT_OP_NULL) {
            EXPECT_EQ(weft_op_free(&comm_), 0);
        }
        if (noncomm_ != WEFT_OP_NULL) {
            EXPECT_EQ(weft_op_free(&noncomm_), 0);
        }
        if (mat_ != WEFT_DATATYPE_NULL) {
            EXPECT_EQ(weft_type_free(&mat_), 0);
        }
        comm_fixture::TearDown();
    }

    // The reduction of every rank's elements [first, first + n), folded in rank order.
    bytes expected(const rs_case &c, int seed, size_t total, size_t first, size_t n) const {
        if (n == 0) return bytes();  // (&acc[first] would index past the end, or an empty vector)
        bytes acc(total * c.esize), x(total * c.esize);
        c.fill(seed, 0, total, acc.data());
        for (int r = 1; r < cu.size; ++r) {
            c.fill(seed, r, total, x.data());
            // acc = acc op x_r: combine1(in = acc, inout = x_r), then keep x_r.
            for (size_t i = first; i < first + n; ++i) c.combine1(&acc[i * c.esize], &x[i * c.esize]);
            std::memcpy(&acc[first * c.esize], &x[first * c.esize], n * c.esize);
        }
        return bytes(acc.begin() + static_cast<ptrdiff_t>(first * c.esize),
                     acc.begin() + static_cast<ptrdiff_t>((first + n) * c.esize));
    }

    void run(const rs_case &c, const std::vector<size_t> &counts, const std::string &pattern, mode m, bool in_place,
             int seed) {
        const int me = cu.rank;
        size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
        size_t first = std::accumulate(counts.begin(), counts.begin() + me, size_t{0});
        size_t mine = counts[static_cast<size_t>(me)];
        bytes send(total * c.esize + 1);
        c.fill(seed, me, total, send.data());
        bytes recv((in_place ? total : mine) * c.esize + guard_bytes, guard_byte);
        if (in_place) std::memcpy(recv.data(), send.data(), total * c.esize);
        std::string w = at("weft_reduce_scatter")("op", c.name)("counts", pattern)("total", total)(m)
            << (in_place ? " in place" : "");
        step(w);
        if (!COLL_RC(reduce_scatter(m, in_place ? WEFT_IN_PLACE : send.data(), recv.data(), counts.data(), c.type, c.op,
                                    cu.c),
                     w))
            return;
        bytes want = expected(c, seed, total, first, mine);
        std::string bad = c.cmp(recv.data(), want.data(), mine);
        if (!bad.empty()) COLL_FAIL(w, bad);
        if (!in_place)
            for (size_t i = mine * c.esize; i < recv.size(); ++i)
                if (recv[i] != guard_byte) {
                    COLL_FAIL(w, "wrote past this rank's block (byte " + std::to_string(i) + ")");
                    break;
                }
    }

    // Per-rank count patterns, named for messages.
    std::vector<std::pair<std::string, std::vector<size_t>>> patterns(bool large) const {
        size_t n = static_cast<size_t>(cu.size);
        std::vector<std::pair<std::string, std::vector<size_t>>> v;
        std::vector<size_t> c(n);
        for (size_t r = 0; r < n; ++r) c[r] = r % 3 == 1 ? 0 : 2 * r + 3;
        v.emplace_back("uneven (rank 1 empty)", c);
        v.emplace_back("all zero", std::vector<size_t>(n, 0));
        v.emplace_back("one each", std::vector<size_t>(n, 1));
        if (large) {
            // Past 512 KiB in all (ints) with 2 processes or more: the long-message algorithm.
            for (size_t r = 0; r < n; ++r) c[r] = 70000 + 1000 * r + (r == 1 ? 3 : 0);
            v.emplace_back("large uneven", c);
        }
        return v;
    }
};

// SUM on ints: every count pattern, every completion mode, in place or not.
TEST_P(ReduceScatter, SumCountPatterns) {
    int seed = 1;
    size_t k = 0;
    for (auto &[name, counts] : patterns(!lite())) {  // the large vector on world and split only
        bool large = counts[0] >= 70000;              // one mode each: 1.1 MB per process
        for (bool in_place : {false, true})
            for (mode m : large ? std::vector<mode>{all_modes[k++ % 3]} : modes_all(k++))
                run(cases_[0], counts, name, m, in_place, seed++);
    }
}

// Every op (built-in, user commutative, user non-commutative on a derived type) on uneven
// counts; the matrix product checks rank order.
TEST_P(ReduceScatter, EveryOperation) {
    int seed = 11;
    size_t k = 0;
    auto pats = patterns(false);
    for (const rs_case &c : cases_)
        for (bool in_place : {false, true}) {
            run(c, pats[0].second, pats[0].first, all_modes[k % 3], in_place, seed++);
            run(c, pats[2].second, pats[2].first, all_modes[(k + 1) % 3], in_place, seed++);
            ++k;
        }
}

// The non-commutative product with a block per rank of several elements: a reduction that
// combines operands out of rank order gets a different matrix (checked: the data is order
// sensitive for this seed).
TEST_P(ReduceScatter, NonCommutativeRankOrder) {
    const rs_case &c = cases_[3];
    if (cu.size >= 2) {
        mat2 x0, x1;
        c.fill(5, 0, 1, &x0);
        c.fill(5, 1, 1, &x1);
        mat2 a = mat_mul(x0, x1), b = mat_mul(x1, x0);
        ASSERT_NE(std::memcmp(&a, &b, sizeof a), 0) << "test data does not tell the orders apart";
    }
    std::vector<size_t> counts(static_cast<size_t>(cu.size));
    for (size_t r = 0; r < counts.size(); ++r) counts[r] = 3 + r;
    size_t k = 0;
    for (bool in_place : {false, true})
        for (mode m : modes_all(k++)) run(c, counts, "3 + rank", m, in_place, 5);
}

// Two reduce_scatters in flight at once on the communicator, completed in reverse order.
TEST_P(ReduceScatter, Overlapping) {
    const int me = cu.rank, n = cu.size;
    std::vector<size_t> counts(static_cast<size_t>(n));
    for (size_t r = 0; r < counts.size(); ++r) counts[r] = 1 + (r % 2) * 4;
    size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
    size_t first = std::accumulate(counts.begin(), counts.begin() + me, size_t{0}), mine = counts[me];
    const rs_case &sum = cases_[0], &mat = cases_[3];
    bytes s1(total * sum.esize), s2(total * mat.esize), r1(mine * sum.esize + 1), r2(mine * mat.esize + 1);
    sum.fill(21, me, total, s1.data());
    mat.fill(22, me, total, s2.data());
    weft_request q[2] = {WEFT_REQUEST_NULL, WEFT_REQUEST_NULL};
    std::string w = at("two weft_ireduce_scatter in flight");
    step(w);
    if (!COLL_RC(weft_ireduce_scatter(s1.data(), r1.data(), counts.data(), sum.type, sum.op, cu.c, &q[0]), w)) return;
    if (!COLL_RC(weft_ireduce_scatter(s2.data(), r2.data(), counts.data(), mat.type, mat.op, cu.c, &q[1]), w)) {
        weft_wait(&q[0], WEFT_STATUS_IGNORE);
        return;
    }
    COLL_RC(weft_wait(&q[1], WEFT_STATUS_IGNORE), w + " (second)");
    COLL_RC(weft_wait(&q[0], WEFT_STATUS_IGNORE), w + " (first)");
    std::string bad = sum.cmp(r1.data(), expected(sum, 21, total, first, mine).data(), mine);
    if (!bad.empty()) COLL_FAIL(w + ": SUM", bad);
    bad = mat.cmp(r2.data(), expected(mat, 22, total, first, mine).data(), mine);
    if (!bad.empty()) COLL_FAIL(w + ": matrix product", bad);
}

INSTANTIATE_TEST_SUITE_P(Comm, ReduceScatter, ::testing::ValuesIn(all_kinds), kind_param_name);

}  // namespace
