// Reductions (reduce, allreduce, reduce_scatter_block, scan, exscan) on every communicator
// kind: every built-in operation on the types MPI defines it for, MINLOC/MAXLOC on pair types,
// a commutative user operation, and a non-commutative one (2x2 matrix product) whose result
// depends on the rank order, so a reduction that combines operands out of order fails.
//
// Each process computes every rank's input locally, so it knows the exact result: integer
// arithmetic, and doubles whose sums are exact in any order.
#include <algorithm>
#include <atomic>
#include <map>
#include <tuple>

#include "coll_env.hpp"

using namespace coll_test;

namespace {

using bytes = std::vector<unsigned char>;
constexpr size_t guard_bytes = 16;
constexpr unsigned char guard_byte = 0xA5;

// One (operation, datatype) pair with its local model.
struct op_case {
    std::string name;
    weft_datatype type = WEFT_DATATYPE_NULL;
    weft_op op = WEFT_OP_NULL;
    size_t esize = 0;
    bool commutative = true;
    std::function<void(int seed, int r, size_t n, void *out)> fill;              // rank r's input
    std::function<void(const void *in, void *inout, size_t n)> combine;          // inout = in op inout
    std::function<std::string(const void *got, const void *exp, size_t n)> cmp;  // "" when equal
};

template <class T, class Gen, class F, class Eq, class Show>
op_case make_case(std::string name, weft_datatype t, weft_op op, Gen gen, F f, Eq eq, Show show,
                  bool commutative = true) {
    op_case c;
    c.name = std::move(name);
    c.type = t;
    c.op = op;
    c.esize = sizeof(T);
    c.commutative = commutative;
    c.fill = [gen](int seed, int r, size_t n, void *out) {
        T *p = static_cast<T *>(out);
        for (size_t i = 0; i < n; ++i) p[i] = gen(seed, r, i);
    };
    c.combine = [f](const void *in, void *inout, size_t n) {
        const T *a = static_cast<const T *>(in);
        T *b = static_cast<T *>(inout);
        for (size_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
    };
    c.cmp = [eq, show](const void *got, const void *exp, size_t n) {
        return compare(static_cast<const T *>(got), static_cast<const T *>(exp), n, eq, show);
    };
    return c;
}

template <class T>
std::string show_num(T v) {
    std::ostringstream o;
    o << v;
    return o.str();
}
template <class T>
bool eq_num(T a, T b) {
    return a == b;
}

struct double_int {
    double v;
    int i;
};
struct int_int {
    int v;
    int i;
};
struct mat2 {
    uint32_t m[4];  // row-major [m0 m1; m2 m3], arithmetic modulo 2^32
};
inline mat2 mat_mul(const mat2 &a, const mat2 &b) {
    return {{a.m[0] * b.m[0] + a.m[1] * b.m[2], a.m[0] * b.m[1] + a.m[1] * b.m[3], a.m[2] * b.m[0] + a.m[3] * b.m[2],
             a.m[2] * b.m[1] + a.m[3] * b.m[3]}};
}

// User operations.  They check they are handed the datatype of the call.
std::atomic<int> g_wrong_type{0};
std::atomic<weft_datatype> g_mat_type{WEFT_DATATYPE_NULL};

// Non-commutative: inout = in x inout (in holds the lower ranks' operand).
void mat_fn(void *in, void *inout, size_t *len, weft_datatype *dt) {
    if (dt == nullptr || *dt != g_mat_type.load()) ++g_wrong_type;
    const mat2 *a = static_cast<const mat2 *>(in);
    mat2 *b = static_cast<mat2 *>(inout);
    for (size_t k = 0; k < *len; ++k) b[k] = mat_mul(a[k], b[k]);
}
// Commutative: (1 + a)(1 + b) - 1 modulo 2^32.
inline uint32_t comm_f(uint32_t a, uint32_t b) { return a + b + a * b; }
void comm_fn(void *in, void *inout, size_t *len, weft_datatype *dt) {
    if (dt == nullptr || *dt != WEFT_INT) ++g_wrong_type;
    const uint32_t *a = static_cast<const uint32_t *>(in);
    uint32_t *b = static_cast<uint32_t *>(inout);
    for (size_t k = 0; k < *len; ++k) b[k] = comm_f(a[k], b[k]);
}

// ----------------------------------------------------------------------- the op cases

op_case sum_int() {
    return make_case<int>(
        "SUM/INT", WEFT_INT, WEFT_SUM,
        [](int s, int r, size_t i) { return static_cast<int>(mix(s, r, i) % 2001) - 1000; },
        [](int a, int b) { return a + b; }, eq_num<int>, show_num<int>);
}

op_case matrix_case(weft_op op, weft_datatype t) {
    return make_case<mat2>(
        "user non-commutative 2x2 matrix product", t, op,
        [](int s, int r, size_t i) {
            mat2 m;
            for (int k = 0; k < 4; ++k) m.m[k] = static_cast<uint32_t>(mix(s, r, i * 4 + k));
            return m;
        },
        mat_mul, [](const mat2 &a, const mat2 &b) { return std::memcmp(&a, &b, sizeof a) == 0; },
        [](const mat2 &a) {
            std::ostringstream o;
            o << "[" << a.m[0] << " " << a.m[1] << "; " << a.m[2] << " " << a.m[3] << "]";
            return o.str();
        },
        false);
}

std::vector<op_case> all_cases(weft_op user_comm, weft_op user_noncomm, weft_datatype mat) {
    std::vector<op_case> v;
    auto ii = [](const char *n, weft_op op, auto gen, auto f) {
        return make_case<int>(std::string(n) + "/INT", WEFT_INT, op, gen, f, eq_num<int>, show_num<int>);
    };
    v.push_back(sum_int());
    v.push_back(ii(
        "PROD", WEFT_PROD,
        [](int s, int r, size_t i) {
            static const int t[16] = {0, -1, -1, -1, 2, 2, -2, 1, 1, 1, 1, 1, 1, 1, 1, 3};
            return t[mix(s, r, i) % 16];
        },
        [](int a, int b) { return a * b; }));
    auto wide = [](int s, int r, size_t i) { return static_cast<int>(mix(s, r, i) % 2000001) - 1000000; };
    v.push_back(ii("MIN", WEFT_MIN, wide, [](int a, int b) { return std::min(a, b); }));
    v.push_back(ii("MAX", WEFT_MAX, wide, [](int a, int b) { return std::max(a, b); }));
    auto logical = [](int s, int r, size_t i) {
        static const int t[8] = {0, 0, 1, 7, -3, 1, 2, 1};
        return t[mix(s, r, i) % 8];
    };
    v.push_back(ii("LAND", WEFT_LAND, logical, [](int a, int b) { return (a && b) ? 1 : 0; }));
    v.push_back(ii("LOR", WEFT_LOR, logical, [](int a, int b) { return (a || b) ? 1 : 0; }));
    v.push_back(ii("LXOR", WEFT_LXOR, logical, [](int a, int b) { return (!a != !b) ? 1 : 0; }));
    v.push_back(ii(
        "BAND", WEFT_BAND,
        [](int s, int r, size_t i) {
            uint64_t x = mix(s, r, i);
            return static_cast<int>(x | (x >> 7) | (x >> 17));
        },
        [](int a, int b) { return a & b; }));
    v.push_back(ii(
        "BOR", WEFT_BOR,
        [](int s, int r, size_t i) {
            uint64_t x = mix(s, r, i);
            return static_cast<int>(x & (x >> 5) & (x >> 13));
        },
        [](int a, int b) { return a | b; }));
    v.push_back(ii(
        "BXOR", WEFT_BXOR, [](int s, int r, size_t i) { return static_cast<int>(mix(s, r, i)); },
        [](int a, int b) { return a ^ b; }));
    v.push_back(make_case<double>(
        "SUM/DOUBLE", WEFT_DOUBLE, WEFT_SUM,
        [](int s, int r, size_t i) { return (static_cast<double>(mix(s, r, i) % 4001) - 2000.0) * 0.25; },
        [](double a, double b) { return a + b; }, eq_num<double>, show_num<double>));
    v.push_back(make_case<double>(
        "MAX/DOUBLE", WEFT_DOUBLE, WEFT_MAX,
        [](int s, int r, size_t i) { return (static_cast<double>(mix(s, r, i) % 2000001) - 1e6) / 8.0; },
        [](double a, double b) { return std::max(a, b); }, eq_num<double>, show_num<double>));
    v.push_back(make_case<int64_t>(
        "SUM/INT64_T", WEFT_INT64_T, WEFT_SUM,
        [](int s, int r, size_t i) {
            return (static_cast<int64_t>(mix(s, r, i) % 2000001) - 1000000) * 1000003 * 1000;
        },
        [](int64_t a, int64_t b) { return a + b; }, eq_num<int64_t>, show_num<int64_t>));
    v.push_back(make_case<int64_t>(
        "MAX/INT64_T", WEFT_INT64_T, WEFT_MAX,
        [](int s, int r, size_t i) { return static_cast<int64_t>(mix(s, r, i)); },
        [](int64_t a, int64_t b) { return std::max(a, b); }, eq_num<int64_t>, show_num<int64_t>));
    // MINLOC/MAXLOC: few distinct values (ties are common); on a tie the smaller index wins.
    auto show_di = [](const double_int &a) { return "(" + show_num(a.v) + ", " + std::to_string(a.i) + ")"; };
    auto eq_di = [](const double_int &a, const double_int &b) { return a.v == b.v && a.i == b.i; };
    auto gen_di = [](int s, int r, size_t i) {
        uint64_t x = mix(s, r, i);
        return double_int{static_cast<double>(x % 5) * 0.5, static_cast<int>((x >> 20) % 50)};
    };
    v.push_back(make_case<double_int>(
        "MINLOC/DOUBLE_INT", WEFT_DOUBLE_INT, WEFT_MINLOC, gen_di,
        [](const double_int &a, const double_int &b) {
            if (a.v != b.v) return a.v < b.v ? a : b;
            return double_int{a.v, std::min(a.i, b.i)};
        },
        eq_di, show_di));
    v.push_back(make_case<double_int>(
        "MAXLOC/DOUBLE_INT", WEFT_DOUBLE_INT, WEFT_MAXLOC, gen_di,
        [](const double_int &a, const double_int &b) {
            if (a.v != b.v) return a.v > b.v ? a : b;
            return double_int{a.v, std::min(a.i, b.i)};
        },
        eq_di, show_di));
    auto show_ii = [](const int_int &a) { return "(" + std::to_string(a.v) + ", " + std::to_string(a.i) + ")"; };
    auto eq_ii = [](const int_int &a, const int_int &b) { return a.v == b.v && a.i == b.i; };
    auto gen_ii = [](int s, int r, size_t i) {
        uint64_t x = mix(s, r, i);
        return int_int{static_cast<int>(x % 5) - 2, static_cast<int>((x >> 20) % 50)};
    };
    v.push_back(make_case<int_int>(
        "MINLOC/2INT", WEFT_2INT, WEFT_MINLOC, gen_ii,
        [](const int_int &a, const int_int &b) {
            if (a.v != b.v) return a.v < b.v ? a : b;
            return int_int{a.v, std::min(a.i, b.i)};
        },
        eq_ii, show_ii));
    v.push_back(make_case<int_int>(
        "MAXLOC/2INT", WEFT_2INT, WEFT_MAXLOC, gen_ii,
        [](const int_int &a, const int_int &b) {
            if (a.v != b.v) return a.v > b.v ? a : b;
            return int_int{a.v, std::min(a.i, b.i)};
        },
        eq_ii, show_ii));
    v.push_back(make_case<uint32_t>(
        "user commutative (1+a)(1+b)-1 on INT", WEFT_INT, user_comm,
        [](int s, int r, size_t i) { return static_cast<uint32_t>(mix(s, r, i)); }, comm_f, eq_num<uint32_t>,
        show_num<uint32_t>));
    v.push_back(matrix_case(user_noncomm, mat));
    return v;
}

// ------------------------------------------------------------------------------ fixture

class Reductions : public comm_fixture {
  protected:
    weft_op user_comm_ = WEFT_OP_NULL, user_noncomm_ = WEFT_OP_NULL;
    weft_datatype mat_ = WEFT_DATATYPE_NULL;
    std::vector<op_case> cases_;

    void SetUp() override {
        comm_fixture::SetUp();
        if (HasFatalFailure()) return;
        ASSERT_EQ(weft_type_contiguous(4, WEFT_INT, &mat_), 0) << detail();
        ASSERT_EQ(weft_type_commit(&mat_), 0) << detail();
        g_mat_type = mat_;
        g_wrong_type = 0;
        ASSERT_EQ(weft_op_create(comm_fn, 1, &user_comm_), 0) << detail();
        ASSERT_EQ(weft_op_create(mat_fn, 0, &user_noncomm_), 0) << detail();
        cases_ = all_cases(user_comm_, user_noncomm_, mat_);
    }
    void TearDown() override {
        EXPECT_EQ(g_wrong_type.load(), 0)
            << "rank " << world_rank() << ": a user function was handed a datatype other than the call's";
        if (user_comm_ != WEFT_OP_NULL) {
            EXPECT_EQ(weft_op_free(&user_comm_), 0) << detail();
        }
        if (user_noncomm_ != WEFT_OP_NULL) {
            EXPECT_EQ(weft_op_free(&user_noncomm_), 0) << detail();
        }
        if (mat_ != WEFT_DATATYPE_NULL) {
            EXPECT_EQ(weft_type_free(&mat_), 0) << detail();
        }
        comm_fixture::TearDown();
    }
    const op_case &find(const std::string &prefix) const {
        for (auto &c : cases_)
            if (c.name.rfind(prefix, 0) == 0) return c;
        return cases_.front();
    }

    // Rank 0's input combined with ranks 1..upto's, in rank order.  Large results are kept for
    // the whole program: every test and communicator kind reuses the same large inputs (8
    // processes each computing 8 ranks' 1.2 MB inputs on 2 cores, several times per test,
    // would otherwise dominate the run).  The reference is valid until the next call.
    using cache_key = std::tuple<std::string, int, int, size_t>;
    static std::map<cache_key, bytes> &large_cache() {
        static std::map<cache_key, bytes> m;
        return m;
    }
    mutable bytes small_;
    const bytes &prefix(const op_case &c, int seed, int upto, size_t n) const {
        if (n * c.esize < large_count) return small_ = compute_prefix(c, seed, upto, n);
        auto &m = large_cache();
        cache_key key{c.name, seed, upto, n};
        auto it = m.find(key);
        if (it != m.end()) return it->second;
        if (m.size() >= 16) m.clear();
        return m[key] = compute_prefix(c, seed, upto, n);
    }
    // The seed of a sweep's call: a fixed one for the large count (see prefix), else a new one.
    static int sweep_seed(const op_case &c, size_t count, int &seed) {
        return count * c.esize >= large_count / 4 ? 7000 : ++seed;
    }
    bytes compute_prefix(const op_case &c, int seed, int upto, size_t n) const {
        bytes acc(n * c.esize + 1), v(n * c.esize + 1);
        c.fill(seed, 0, n, acc.data());
        for (int r = 1; r <= upto; ++r) {
            c.fill(seed, r, n, v.data());
            c.combine(acc.data(), v.data(), n);
            std::swap(acc, v);
        }
        return acc;
    }
    // Compares n elements and the guard bytes after them.
    void check(const where &w, const op_case &c, const unsigned char *got, const unsigned char *exp, size_t n) {
        std::string bad = c.cmp(got, exp, n);
        if (!bad.empty()) return COLL_FAIL(w, bad);
        for (size_t b = 0; b < guard_bytes; ++b)
            if (got[n * c.esize + b] != guard_byte)
                return COLL_FAIL(w, "wrote past the end of the receive buffer (byte " + std::to_string(b) + " after)");
    }
    where label(const char *coll, const op_case &c, size_t n, mode m, bool in_place, int root = -1) const {
        where w = at(coll);
        w("op", c.name)("count", n);
        if (root >= 0) w("root", root);
        w(m);
        if (in_place) w << " WEFT_IN_PLACE";
        return w;
    }

    void do_reduce(const op_case &c, size_t n, int root, mode m, bool in_place, int seed) {
        const int me = cu.rank;
        bytes send(n * c.esize + 1), recv(n * c.esize + guard_bytes, guard_byte);
        c.fill(seed, me, n, send.data());
        const void *sbuf = send.data();
        if (in_place && me == root) {
            std::memcpy(recv.data(), send.data(), n * c.esize);
            sbuf = WEFT_IN_PLACE;
        }
        where w = label("weft_reduce", c, n, m, in_place, root);
        step(w);
        if (COLL_RC(reduce(m, sbuf, recv.data(), n, c.type, c.op, root, cu.c), w) && me == root)
            check(w, c, recv.data(), prefix(c, seed, cu.size - 1, n).data(), n);
    }
    void do_allreduce(const op_case &c, size_t n, mode m, bool in_place, int seed) {
        bytes send(n * c.esize + 1), recv(n * c.esize + guard_bytes, guard_byte);
        c.fill(seed, cu.rank, n, send.data());
        if (in_place) std::memcpy(recv.data(), send.data(), n * c.esize);
        where w = label("weft_allreduce", c, n, m, in_place);
        step(w);
        if (COLL_RC(allreduce(m, in_place ? WEFT_IN_PLACE : send.data(), recv.data(), n, c.type, c.op, cu.c), w))
            check(w, c, recv.data(), prefix(c, seed, cu.size - 1, n).data(), n);
    }
    void do_scan(const op_case &c, size_t n, mode m, bool in_place, int seed, bool exclusive) {
        const int me = cu.rank;
        bytes send(n * c.esize + 1), recv(n * c.esize + guard_bytes, guard_byte);
        c.fill(seed, me, n, send.data());
        if (in_place) std::memcpy(recv.data(), send.data(), n * c.esize);
        const void *sbuf = in_place ? WEFT_IN_PLACE : send.data();
        where w = label(exclusive ? "weft_exscan" : "weft_scan", c, n, m, in_place);
        step(w);
        int rc = exclusive ? exscan(m, sbuf, recv.data(), n, c.type, c.op, cu.c)
                           : scan(m, sbuf, recv.data(), n, c.type, c.op, cu.c);
        if (!COLL_RC(rc, w)) return;
        if (!exclusive)
            check(w, c, recv.data(), prefix(c, seed, me, n).data(), n);
        else if (me > 0)  // rank 0's exscan result is undefined
            check(w, c, recv.data(), prefix(c, seed, me - 1, n).data(), n);
    }
    void do_rsb(const op_case &c, size_t n, mode m, bool in_place, int seed) {
        const int me = cu.rank, np = cu.size;
        bytes send(n * np * c.esize + 1), recv((in_place ? n * np : n) * c.esize + guard_bytes, guard_byte);
        c.fill(seed, me, n * np, send.data());
        if (in_place) std::memcpy(recv.data(), send.data(), n * np * c.esize);
        where w = label("weft_reduce_scatter_block", c, n, m, in_place);
        step(w);
        if (!COLL_RC(
                reduce_scatter_block(m, in_place ? WEFT_IN_PLACE : send.data(), recv.data(), n, c.type, c.op, cu.c), w))
            return;
        bytes full = prefix(c, seed, np - 1, n * np);
        if (in_place) {  // the result is in the first n elements; the rest is undefined
            std::string bad = c.cmp(recv.data(), full.data() + me * n * c.esize, n);
            if (!bad.empty()) COLL_FAIL(w, bad);
        } else {
            check(w, c, recv.data(), full.data() + me * n * c.esize, n);
        }
    }
    // Counts for the count sweeps: the large count is in elements of 4 bytes' worth.
    // The counts of a sweep; the large count is 1.2 MB of elements.  The lighter kinds run
    // the large count with SUM only.
    std::vector<size_t> sweep_counts(const op_case &c) const {
        std::vector<size_t> v = counts();
        v.back() = large_count * sizeof(int) / c.esize;
        if (lite() && !c.commutative) v.pop_back();
        return v;
    }
};

// ------------------------------------------------------------------------------ tests

// Counts 0, 1, 7, 1000 and large; every root; in place at the root; SUM on ints and the
// non-commutative matrix product.
TEST_P(Reductions, Reduce) {
    int seed = 0;
    size_t k = 0;
    for (const char *name : {"SUM/INT", "user non-commutative"}) {
        const op_case &c = find(name);
        for (size_t count : sweep_counts(c)) {
            for (int root : roots_for(count * c.esize / sizeof(int)))
                for (bool in_place : {false, true})
                    for (mode m : modes_for(k++)) do_reduce(c, count, root, m, in_place, sweep_seed(c, count, seed));
        }
    }
}

TEST_P(Reductions, Allreduce) {
    const int n = cu.size;
    int seed = 0;
    size_t k = 0;
    for (const char *name : {"SUM/INT", "user non-commutative"}) {
        const op_case &c = find(name);
        for (size_t count : sweep_counts(c))
            for (bool in_place : {false, true})
                for (mode m : modes_all(k++)) {
                    if (count * c.esize >= large_count && m == mode::test && n > 2) continue;
                    do_allreduce(c, count, m, in_place, sweep_seed(c, count, seed));
                }
    }
}

TEST_P(Reductions, ReduceScatterBlock) {
    const int n = cu.size;
    int seed = 0;
    size_t k = 0;
    for (const char *name : {"SUM/INT", "user non-commutative"}) {
        const op_case &c = find(name);
        for (size_t count : sweep_counts(c)) {
            if (count * c.esize >= large_count) count = count / n + 1;  // per rank: large in total
            for (bool in_place : {false, true})
                for (mode m : modes_all(k++)) {
                    if (count * n * c.esize >= large_count && m == mode::test && n > 2) continue;
                    do_rsb(c, count, m, in_place, sweep_seed(c, count * n, seed));
                }
        }
    }
}

TEST_P(Reductions, Scan) {
    const int n = cu.size;
    int seed = 0;
    size_t k = 0;
    for (const char *name : {"SUM/INT", "user non-commutative"}) {
        const op_case &c = find(name);
        for (size_t count : sweep_counts(c))
            for (bool in_place : {false, true})
                for (mode m : modes_all(k++)) {
                    if (count * c.esize >= large_count && m == mode::test && n > 2) continue;
                    do_scan(c, count, m, in_place, sweep_seed(c, count, seed), false);
                }
    }
}

TEST_P(Reductions, Exscan) {
    const int n = cu.size;
    int seed = 0;
    size_t k = 0;
    for (const char *name : {"SUM/INT", "user non-commutative"}) {
        const op_case &c = find(name);
        for (size_t count : sweep_counts(c))
            for (bool in_place : {false, true})
                for (mode m : modes_all(k++)) {
                    if (count * c.esize >= large_count && m == mode::test && n > 2) continue;
                    do_scan(c, count, m, in_place, sweep_seed(c, count, seed), true);
                }
    }
}

// Every operation case through every reduction, counts 1, 7 and 1000 (the lighter kinds: 7);
// the root and the completion mode rotate.
TEST_P(Reductions, EveryOperation) {
    const int n = cu.size;
    int seed = 0;
    size_t k = 0;
    for (const op_case &c : cases_)
        for (size_t count : lite() ? std::vector<size_t>{7} : std::vector<size_t>{1, 7, 1000}) {
            mode m = all_modes[k % 3];
            int root = static_cast<int>(k % n);
            ++k;
            do_allreduce(c, count, m, false, ++seed);
            do_reduce(c, count, root, m, false, ++seed);
            do_scan(c, count, m, false, ++seed, false);
            do_scan(c, count, m, false, ++seed, true);
            do_rsb(c, count, m, false, ++seed);
        }
}

// The non-commutative data really is order sensitive (else the tests above could not see a
// reduction that combines out of order): the reversed product differs.
TEST_P(Reductions, MatrixDataIsOrderSensitive) {
    const int n = cu.size;
    if (n < 2) GTEST_SKIP() << "one process: no order";
    const op_case &c = find("user non-commutative");
    const size_t count = 7;
    bytes fwd = prefix(c, 99, n - 1, count), rev(count * c.esize), v(count * c.esize);
    c.fill(99, n - 1, count, rev.data());
    for (int r = n - 2; r >= 0; --r) {
        c.fill(99, r, count, v.data());
        c.combine(rev.data(), v.data(), count);  // v = rev x v: reversed order
        std::swap(rev, v);
    }
    size_t same = 0;
    for (size_t i = 0; i < count; ++i) same += std::memcmp(fwd.data() + i * 16, rev.data() + i * 16, 16) == 0;
    EXPECT_EQ(same, 0u) << "matrices that commute make a weak test";
}

INSTANTIATE_TEST_SUITE_P(Comm, Reductions, ::testing::ValuesIn(all_kinds), kind_param_name);

}  // namespace
