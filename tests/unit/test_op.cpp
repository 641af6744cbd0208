// Reduction operations: every built-in op on representative types of every class against a
// reference, integer wrap-around, MINLOC/MAXLOC ties and padding, the combinations MPI forbids,
// and user operations (create, bind, apply, free, lifetime through a held binding).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "base/datatype.hpp"
#include "base/error.hpp"
#include "base/op.hpp"
#include "weft/weft.h"
#include "weft/weft.hpp"

using weft::op_binding;

namespace {

const char *const all_op_names[] = {"WEFT_MAX", "WEFT_MIN", "WEFT_SUM",  "WEFT_PROD", "WEFT_LAND",   "WEFT_BAND",
                                    "WEFT_LOR", "WEFT_BOR", "WEFT_LXOR", "WEFT_BXOR", "WEFT_MINLOC", "WEFT_MAXLOC"};
constexpr weft_op all_ops[] = {WEFT_MAX, WEFT_MIN, WEFT_SUM,  WEFT_PROD, WEFT_LAND,   WEFT_BAND,
                               WEFT_LOR, WEFT_BOR, WEFT_LXOR, WEFT_BXOR, WEFT_MINLOC, WEFT_MAXLOC};

const char *op_name(weft_op op) { return all_op_names[op - WEFT_MAX]; }

int bind(weft_op op, weft_datatype type, op_binding &b, const char *fn = "weft_allreduce") {
    const weft::datatype *t = weft::datatype_get(type);
    EXPECT_NE(t, nullptr) << "datatype 0x" << std::hex << type;
    if (t == nullptr) return -1;
    return weft::op_bind(fn, op, type, *t, b);
}

bool binds(weft_op op, weft_datatype type) {
    op_binding b;
    return bind(op, type, b) == WEFT_SUCCESS;
}

// Expects op on type to be refused with WEFT_ERR_OP and a message naming fn, the op and the type.
void expect_refused(weft_op op, weft_datatype type, const char *type_name) {
    op_binding b;
    int rc = bind(op, type, b, "weft_reduce");
    EXPECT_EQ(rc, WEFT_ERR_OP) << op_name(op) << " on " << type_name;
    const std::string &msg = weft::current_error_detail();
    EXPECT_NE(msg.find("weft_reduce"), std::string::npos) << msg;
    EXPECT_NE(msg.find(op_name(op)), std::string::npos) << msg;
    EXPECT_NE(msg.find(type_name), std::string::npos) << msg;
    EXPECT_EQ(b.builtin, nullptr);
}

// Applies op to typed vectors: returns in op inout.
template <class T>
std::vector<T> reduce_with(weft_op op, weft_datatype type, const std::vector<T> &in, std::vector<T> inout) {
    op_binding b;
    EXPECT_EQ(bind(op, type, b), WEFT_SUCCESS) << op_name(op) << ": " << weft::current_error_detail();
    EXPECT_NE(b.builtin, nullptr);
    EXPECT_EQ(b.elem_size, sizeof(T));
    EXPECT_TRUE(b.commutative);
    EXPECT_EQ(b.type, type);
    if (b.builtin != nullptr) weft::op_apply(b, in.data(), inout.data(), in.size());
    return inout;
}

template <class T, weft_datatype H>
struct type_case {
    using type = T;
    static constexpr weft_datatype handle = H;
};

// ---- Integer types: all twelve built-in ops but MINLOC/MAXLOC ----

template <class C>
class OpInteger : public ::testing::Test {};
using integer_cases =
    ::testing::Types<type_case<int8_t, WEFT_INT8_T>, type_case<uint8_t, WEFT_UINT8_T>, type_case<int16_t, WEFT_INT16_T>,
                     type_case<uint16_t, WEFT_UINT16_T>, type_case<int32_t, WEFT_INT32_T>,
                     type_case<uint32_t, WEFT_UINT32_T>, type_case<int64_t, WEFT_INT64_T>,
                     type_case<uint64_t, WEFT_UINT64_T>, type_case<int, WEFT_INT>, type_case<long, WEFT_LONG>,
                     type_case<unsigned, WEFT_UNSIGNED>, type_case<unsigned long, WEFT_UNSIGNED_LONG>,
                     type_case<short, WEFT_SHORT>, type_case<unsigned short, WEFT_UNSIGNED_SHORT>,
                     type_case<long long, WEFT_LONG_LONG>, type_case<unsigned long long, WEFT_UNSIGNED_LONG_LONG>,
                     type_case<signed char, WEFT_SIGNED_CHAR>, type_case<unsigned char, WEFT_UNSIGNED_CHAR>>;
TYPED_TEST_SUITE(OpInteger, integer_cases);

TYPED_TEST(OpInteger, EveryOpMatchesReference) {
    using T = typename TypeParam::type;
    constexpr weft_datatype h = TypeParam::handle;
    // Odd length and an unaligned start exercise the vector loop's head and tail.
    const size_t n = 37;
    std::vector<T> in(n + 1), inout(n + 1);
    for (size_t i = 0; i < n + 1; ++i) {
        long long a = static_cast<long long>(i % 7), b = static_cast<long long>((i * 3) % 5);
        if constexpr (std::is_signed_v<T>) {
            a -= 3;
            b -= 2;
        }
        in[i] = static_cast<T>(a);
        inout[i] = static_cast<T>(b);
    }
    auto ref = [&](auto f) {
        std::vector<T> r(n);
        for (size_t i = 0; i < n; ++i) r[i] = static_cast<T>(f(in[i + 1], inout[i + 1]));
        return r;
    };
    auto run = [&](weft_op op) {
        return reduce_with(op, h, std::vector<T>(in.begin() + 1, in.end()),
                           std::vector<T>(inout.begin() + 1, inout.end()));
    };
    using W = long long;
    EXPECT_EQ(run(WEFT_SUM), ref([](T a, T b) { return W(a) + W(b); }));
    EXPECT_EQ(run(WEFT_PROD), ref([](T a, T b) { return W(a) * W(b); }));
    EXPECT_EQ(run(WEFT_MAX), ref([](T a, T b) { return a > b ? a : b; }));
    EXPECT_EQ(run(WEFT_MIN), ref([](T a, T b) { return a < b ? a : b; }));
    EXPECT_EQ(run(WEFT_LAND), ref([](T a, T b) { return (a != 0) && (b != 0); }));
    EXPECT_EQ(run(WEFT_LOR), ref([](T a, T b) { return (a != 0) || (b != 0); }));
    EXPECT_EQ(run(WEFT_LXOR), ref([](T a, T b) { return (a != 0) != (b != 0); }));
    EXPECT_EQ(run(WEFT_BAND), ref([](T a, T b) { return a & b; }));
    EXPECT_EQ(run(WEFT_BOR), ref([](T a, T b) { return a | b; }));
    EXPECT_EQ(run(WEFT_BXOR), ref([](T a, T b) { return a ^ b; }));
}

TYPED_TEST(OpInteger, ArithmeticWrapsWithoutOverflow) {
    // Wraps modulo 2^bits (and stays clean under UBSan, e.g. unsigned short products that would
    // overflow int after promotion).
    using T = typename TypeParam::type;
    constexpr weft_datatype h = TypeParam::handle;
    using U = std::make_unsigned_t<T>;
    using W = unsigned long long;  // wide enough that the reference itself does not overflow
    const T big = std::numeric_limits<T>::max(), low = std::numeric_limits<T>::min();
    auto wrap = [](U x) { return static_cast<T>(x); };
    EXPECT_EQ(reduce_with<T>(WEFT_SUM, h, {big, low}, {T(1), T(-1)}),
              (std::vector<T>{wrap(U(U(big) + 1u)), wrap(U(U(low) - 1u))}));
    EXPECT_EQ(reduce_with<T>(WEFT_PROD, h, {big, big}, {big, T(2)}),
              (std::vector<T>{wrap(U(W(U(big)) * W(U(big)))), wrap(U(W(U(big)) * 2u))}));
}

TYPED_TEST(OpInteger, PairOpsRefused) {
    constexpr weft_datatype h = TypeParam::handle;
    EXPECT_FALSE(binds(WEFT_MINLOC, h));
    EXPECT_FALSE(binds(WEFT_MAXLOC, h));
}

// ---- Floating types: SUM, PROD, MAX, MIN ----

template <class C>
class OpFloating : public ::testing::Test {};
using floating_cases = ::testing::Types<type_case<float, WEFT_FLOAT>, type_case<double, WEFT_DOUBLE>,
                                        type_case<long double, WEFT_LONG_DOUBLE>>;
TYPED_TEST_SUITE(OpFloating, floating_cases);

TYPED_TEST(OpFloating, ArithmeticAndMinMax) {
    using T = typename TypeParam::type;
    constexpr weft_datatype h = TypeParam::handle;
    const size_t n = 1001;  // not a multiple of any vector width
    std::vector<T> in(n), inout(n);
    for (size_t i = 0; i < n; ++i) {
        in[i] = static_cast<T>(i) * T(0.5) - T(100);
        inout[i] = T(250) - static_cast<T>(i) * T(0.25);
    }
    auto ref = [&](auto f) {
        std::vector<T> r(n);
        for (size_t i = 0; i < n; ++i) r[i] = f(in[i], inout[i]);
        return r;
    };
    EXPECT_EQ(reduce_with(WEFT_SUM, h, in, inout), ref([](T a, T b) { return a + b; }));
    EXPECT_EQ(reduce_with(WEFT_PROD, h, in, inout), ref([](T a, T b) { return a * b; }));
    EXPECT_EQ(reduce_with(WEFT_MAX, h, in, inout), ref([](T a, T b) { return a > b ? a : b; }));
    EXPECT_EQ(reduce_with(WEFT_MIN, h, in, inout), ref([](T a, T b) { return a < b ? a : b; }));
}

TYPED_TEST(OpFloating, LogicalBitwiseAndPairOpsRefused) {
    constexpr weft_datatype h = TypeParam::handle;
    for (weft_op op : {WEFT_LAND, WEFT_LOR, WEFT_LXOR, WEFT_BAND, WEFT_BOR, WEFT_BXOR, WEFT_MINLOC, WEFT_MAXLOC})
        EXPECT_FALSE(binds(op, h)) << op_name(op);
}

TEST(OpFloatingHotPath, LargeDoubleSum) {
    // The allreduce hot path: 1 MiB of doubles, also from an offset start.
    const size_t n = (1u << 20) / sizeof(double);
    std::vector<double> in(n + 1), inout(n + 1);
    for (size_t i = 0; i <= n; ++i) {
        in[i] = static_cast<double>(i);
        inout[i] = 0.5 * static_cast<double>(i);
    }
    op_binding b;
    ASSERT_EQ(bind(WEFT_SUM, WEFT_DOUBLE, b), WEFT_SUCCESS);
    weft::op_apply(b, in.data() + 1, inout.data() + 1, n);
    EXPECT_EQ(inout[0], 0.0);
    for (size_t i = 1; i <= n; ++i) ASSERT_EQ(inout[i], 1.5 * static_cast<double>(i)) << i;
}

// ---- BYTE, C_BOOL, CHAR ----

TEST(OpByte, BitwiseOnly) {
    using B = unsigned char;
    std::vector<B> in{0xf0, 0x0f, 0xaa, 0xff, 0x00}, inout{0xcc, 0xcc, 0x55, 0x01, 0x80};
    EXPECT_EQ(reduce_with(WEFT_BAND, WEFT_BYTE, in, inout), (std::vector<B>{0xc0, 0x0c, 0x00, 0x01, 0x00}));
    EXPECT_EQ(reduce_with(WEFT_BOR, WEFT_BYTE, in, inout), (std::vector<B>{0xfc, 0xcf, 0xff, 0xff, 0x80}));
    EXPECT_EQ(reduce_with(WEFT_BXOR, WEFT_BYTE, in, inout), (std::vector<B>{0x3c, 0xc3, 0xff, 0xfe, 0x80}));
    for (weft_op op :
         {WEFT_MAX, WEFT_MIN, WEFT_SUM, WEFT_PROD, WEFT_LAND, WEFT_LOR, WEFT_LXOR, WEFT_MINLOC, WEFT_MAXLOC})
        expect_refused(op, WEFT_BYTE, "WEFT_BYTE");
}

TEST(OpBool, LogicalOnlyResultIsZeroOrOne) {
    // Stored as bytes: a non-zero byte other than 1 still counts as true.
    using B = unsigned char;
    std::vector<B> in{0, 0, 1, 1, 2, 0}, inout{0, 1, 0, 1, 1, 7};
    EXPECT_EQ(reduce_with(WEFT_LAND, WEFT_C_BOOL, in, inout), (std::vector<B>{0, 0, 0, 1, 1, 0}));
    EXPECT_EQ(reduce_with(WEFT_LOR, WEFT_C_BOOL, in, inout), (std::vector<B>{0, 1, 1, 1, 1, 1}));
    EXPECT_EQ(reduce_with(WEFT_LXOR, WEFT_C_BOOL, in, inout), (std::vector<B>{0, 1, 1, 0, 0, 1}));
    for (weft_op op :
         {WEFT_MAX, WEFT_MIN, WEFT_SUM, WEFT_PROD, WEFT_BAND, WEFT_BOR, WEFT_BXOR, WEFT_MINLOC, WEFT_MAXLOC})
        expect_refused(op, WEFT_C_BOOL, "WEFT_C_BOOL");
}

TEST(OpChar, NoBuiltinOp) {
    for (weft_op op : all_ops) expect_refused(op, WEFT_CHAR, "WEFT_CHAR");
}

// ---- MINLOC / MAXLOC ----

template <class T>
struct pair_t {
    T v;
    int i;
};

template <class C>
class OpPair : public ::testing::Test {};
using pair_cases =
    ::testing::Types<type_case<float, WEFT_FLOAT_INT>, type_case<double, WEFT_DOUBLE_INT>,
                     type_case<long, WEFT_LONG_INT>, type_case<int, WEFT_2INT>, type_case<short, WEFT_SHORT_INT>>;
TYPED_TEST_SUITE(OpPair, pair_cases);

TYPED_TEST(OpPair, LocTakesSmallerIndexOnTies) {
    using T = typename TypeParam::type;
    using P = pair_t<T>;
    constexpr weft_datatype h = TypeParam::handle;
    // in beats inout / inout beats in / tie with in's index smaller / tie with inout's smaller.
    const std::vector<std::pair<T, int>> in{{T(5), 3}, {T(1), 3}, {T(4), 1}, {T(4), 9}, {T(-2), 0}};
    const std::vector<std::pair<T, int>> io{{T(2), 1}, {T(3), 0}, {T(4), 7}, {T(4), 2}, {T(-2), 0}};
    const size_t n = in.size();

    // Padding bytes (DOUBLE_INT, LONG_INT, SHORT_INT) must come back untouched.
    auto fill = [&](const std::vector<std::pair<T, int>> &src, std::vector<P> &dst) {
        dst.resize(n);
        std::memset(static_cast<void *>(dst.data()), 0xa5, n * sizeof(P));
        for (size_t k = 0; k < n; ++k) {
            dst[k].v = src[k].first;
            dst[k].i = src[k].second;
        }
    };
    for (bool is_max : {true, false}) {
        std::vector<P> a, b;
        fill(in, a);
        fill(io, b);
        std::vector<P> before(n);
        std::memcpy(static_cast<void *>(before.data()), b.data(), n * sizeof(P));
        op_binding bd;
        weft_op op = is_max ? WEFT_MAXLOC : WEFT_MINLOC;
        ASSERT_EQ(bind(op, h, bd), WEFT_SUCCESS) << weft::current_error_detail();
        EXPECT_EQ(bd.elem_size, sizeof(P));
        weft::op_apply(bd, a.data(), b.data(), n);
        for (size_t k = 0; k < n; ++k) {
            T av = in[k].first, bv = io[k].first;
            int ai = in[k].second, bi = io[k].second;
            bool take = is_max ? av > bv : av < bv;
            T wv = take ? av : bv;
            int wi = take ? ai : (av == bv ? std::min(ai, bi) : bi);
            EXPECT_EQ(b[k].v, wv) << op_name(op) << " element " << k;
            EXPECT_EQ(b[k].i, wi) << op_name(op) << " element " << k;
            // Everything but the members is as before.
            P expect;
            std::memcpy(static_cast<void *>(&expect), &before[k], sizeof(P));
            expect.v = wv;
            expect.i = wi;
            EXPECT_EQ(std::memcmp(&b[k], &expect, sizeof(P)), 0) << "padding changed, element " << k;
        }
    }
}

TYPED_TEST(OpPair, OnlyLocOps) {
    constexpr weft_datatype h = TypeParam::handle;
    for (weft_op op :
         {WEFT_MAX, WEFT_MIN, WEFT_SUM, WEFT_PROD, WEFT_LAND, WEFT_LOR, WEFT_LXOR, WEFT_BAND, WEFT_BOR, WEFT_BXOR})
        EXPECT_FALSE(binds(op, h)) << op_name(op);
}

TEST(OpPairRefused, LocOnPlainTypes) {
    expect_refused(WEFT_MINLOC, WEFT_DOUBLE, "WEFT_DOUBLE");
    expect_refused(WEFT_MAXLOC, WEFT_INT, "WEFT_INT");
    expect_refused(WEFT_SUM, WEFT_2INT, "WEFT_2INT");
    expect_refused(WEFT_MAX, WEFT_DOUBLE_INT, "WEFT_DOUBLE_INT");
}

// ---- Binding rules and bad handles ----

TEST(OpBind, CoverageMatrix) {
    // Which (op, type) pairs bind, class by class.
    struct row {
        weft_datatype type;
        const char *name;
        bool arith, minmax, logical, bitwise, loc;
    };
    const row rows[] = {
        {WEFT_INT, "WEFT_INT", true, true, true, true, false},
        {WEFT_UINT8_T, "WEFT_UINT8_T", true, true, true, true, false},
        {WEFT_UNSIGNED_LONG_LONG, "WEFT_UNSIGNED_LONG_LONG", true, true, true, true, false},
        {WEFT_SIGNED_CHAR, "WEFT_SIGNED_CHAR", true, true, true, true, false},
        {WEFT_FLOAT, "WEFT_FLOAT", true, true, false, false, false},
        {WEFT_LONG_DOUBLE, "WEFT_LONG_DOUBLE", true, true, false, false, false},
        {WEFT_BYTE, "WEFT_BYTE", false, false, false, true, false},
        {WEFT_C_BOOL, "WEFT_C_BOOL", false, false, true, false, false},
        {WEFT_CHAR, "WEFT_CHAR", false, false, false, false, false},
        {WEFT_SHORT_INT, "WEFT_SHORT_INT", false, false, false, false, true},
    };
    for (const row &r : rows) {
        auto expect = [&](weft_op op, bool ok) {
            op_binding b;
            int rc = bind(op, r.type, b);
            EXPECT_EQ(rc, ok ? WEFT_SUCCESS : WEFT_ERR_OP) << op_name(op) << " on " << r.name;
            if (!ok) {
                const std::string &msg = weft::current_error_detail();
                EXPECT_NE(msg.find(op_name(op)), std::string::npos) << msg;
                EXPECT_NE(msg.find(r.name), std::string::npos) << msg;
            }
        };
        expect(WEFT_SUM, r.arith);
        expect(WEFT_PROD, r.arith);
        expect(WEFT_MAX, r.minmax);
        expect(WEFT_MIN, r.minmax);
        expect(WEFT_LAND, r.logical);
        expect(WEFT_LOR, r.logical);
        expect(WEFT_LXOR, r.logical);
        expect(WEFT_BAND, r.bitwise);
        expect(WEFT_BOR, r.bitwise);
        expect(WEFT_BXOR, r.bitwise);
        expect(WEFT_MINLOC, r.loc);
        expect(WEFT_MAXLOC, r.loc);
    }
}

TEST(OpBind, MessageNamesFunctionOpAndType) {
    op_binding b;
    ASSERT_EQ(bind(WEFT_BAND, WEFT_DOUBLE, b, "weft_allreduce"), WEFT_ERR_OP);
    EXPECT_EQ(weft::current_error_detail(), "weft_allreduce: WEFT_BAND is not defined on WEFT_DOUBLE");
}

TEST(OpBind, BuiltinOpOnDerivedTypeRefused) {
    weft_datatype t = WEFT_DATATYPE_NULL;
    ASSERT_EQ(weft_type_contiguous(4, WEFT_DOUBLE, &t), WEFT_SUCCESS);
    op_binding b;
    EXPECT_EQ(bind(WEFT_SUM, t, b, "weft_reduce"), WEFT_ERR_OP);
    const std::string &msg = weft::current_error_detail();
    EXPECT_NE(msg.find("weft_reduce"), std::string::npos) << msg;
    EXPECT_NE(msg.find("WEFT_SUM"), std::string::npos) << msg;
    EXPECT_NE(msg.find("derived"), std::string::npos) << msg;
    EXPECT_EQ(weft_type_free(&t), WEFT_SUCCESS);
}

TEST(OpBind, NullAndGarbageHandles) {
    const weft_op bad[] = {
        WEFT_OP_NULL,
        static_cast<weft_op>(0x6000000d),  // the slot after WEFT_MAXLOC
        static_cast<weft_op>(0x60000000),  // slot 0
        static_cast<weft_op>(0x61000020),  // a user-op handle never created
        static_cast<weft_op>(0x6fffffff),
        WEFT_DOUBLE,  // a handle of another kind
        WEFT_COMM_WORLD,
        -1,
        0x12345678,
    };
    for (weft_op op : bad) {
        op_binding b;
        EXPECT_EQ(bind(op, WEFT_INT, b), WEFT_ERR_OP) << std::hex << op;
        EXPECT_NE(weft::current_error_detail().find("weft_allreduce"), std::string::npos);
        EXPECT_EQ(b.builtin, nullptr);
        EXPECT_EQ(b.user, nullptr);
    }
    op_binding b;
    EXPECT_EQ(bind(WEFT_OP_NULL, WEFT_INT, b), WEFT_ERR_OP);
    EXPECT_NE(weft::current_error_detail().find("WEFT_OP_NULL"), std::string::npos);
}

TEST(OpBind, ZeroCountIsANoop) {
    op_binding b;
    ASSERT_EQ(bind(WEFT_SUM, WEFT_DOUBLE, b), WEFT_SUCCESS);
    weft::op_apply(b, nullptr, nullptr, 0);
}

// ---- User operations (need weft_init: a singleton job) ----

// weft_init once per process, on first use; finalized at exit.
class RuntimeEnv : public ::testing::Environment {
  public:
    static int ensure() {
        if (!tried) {
            tried = true;
            rc = weft_init(nullptr, nullptr);
            if (rc != WEFT_SUCCESS) message = weft::current_error_detail();
        }
        return rc;
    }
    void TearDown() override {
        if (!tried || rc != WEFT_SUCCESS) return;
        EXPECT_EQ(weft_finalize(), WEFT_SUCCESS);
        // After finalize the entry points refuse to run.
        weft_op op = WEFT_OP_NULL;
        EXPECT_EQ(weft_op_create([](void *, void *, size_t *, weft_datatype *) {}, 1, &op), WEFT_ERR_FINALIZED);
        EXPECT_EQ(weft_op_free(&op), WEFT_ERR_FINALIZED);
    }
    static inline bool tried = false;
    static inline int rc = WEFT_SUCCESS;
    static inline std::string message;
};

const auto *registered = ::testing::AddGlobalTestEnvironment(new RuntimeEnv);

#define REQUIRE_RUNTIME()                                                                            \
    do {                                                                                             \
        int init_rc = RuntimeEnv::ensure();                                                          \
        if (init_rc == WEFT_ERR_PLUGIN) GTEST_SKIP() << "no fabric plugin: " << RuntimeEnv::message; \
        ASSERT_EQ(init_rc, WEFT_SUCCESS) << RuntimeEnv::message;                                     \
    } while (0)

// What the last call of a recording user function saw.
struct seen_t {
    int calls = 0;
    size_t len = 0;
    weft_datatype type = WEFT_DATATYPE_NULL;
};
thread_local seen_t seen;

// inout = 10 * inout + in: non-commutative, so operand order shows.
void shift_add(void *in, void *inout, size_t *len, weft_datatype *type) {
    ++seen.calls;
    seen.len = *len;
    seen.type = *type;
    auto *a = static_cast<const int *>(in);
    auto *b = static_cast<int *>(inout);
    for (size_t i = 0; i < *len; ++i) b[i] = 10 * b[i] + a[i];
}

// Element-wise sum of doubles, whatever the datatype's element count (for contiguous derived types).
void add_doubles(void *in, void *inout, size_t *len, weft_datatype *type) {
    ++seen.calls;
    seen.len = *len;
    seen.type = *type;
    size_t size = 0;
    weft_type_size(*type, &size);
    size_t n = *len * size / sizeof(double);
    auto *a = static_cast<const double *>(in);
    auto *b = static_cast<double *>(inout);
    for (size_t i = 0; i < n; ++i) b[i] += a[i];
}

}  // namespace

// First in the file (and, under ctest, in a process of its own): nothing initialized yet.
TEST(OpUser, CreateBeforeInitFails) {
    int flag = 0;
    ASSERT_EQ(weft_initialized(&flag), WEFT_SUCCESS);
    if (flag) GTEST_SKIP() << "weft already initialized in this process";
    weft_op op = WEFT_OP_NULL;
    EXPECT_EQ(weft_op_create(shift_add, 0, &op), WEFT_ERR_NOT_INITIALIZED);
    EXPECT_EQ(op, WEFT_OP_NULL);
    EXPECT_NE(weft::current_error_detail().find("weft_op_create"), std::string::npos);
    EXPECT_EQ(weft_op_free(&op), WEFT_ERR_NOT_INITIALIZED);
}

TEST(OpUser, CreateApplyFree) {
    REQUIRE_RUNTIME();
    weft_op op = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create(shift_add, 0, &op), WEFT_SUCCESS);
    EXPECT_NE(op, WEFT_OP_NULL);
    EXPECT_FALSE(op >= WEFT_MAX && op <= WEFT_MAXLOC);

    op_binding b;
    ASSERT_EQ(bind(op, WEFT_INT, b), WEFT_SUCCESS) << weft::current_error_detail();
    EXPECT_EQ(b.builtin, nullptr);
    ASSERT_NE(b.user, nullptr);
    EXPECT_FALSE(b.commutative);
    EXPECT_EQ(b.elem_size, sizeof(int));
    EXPECT_EQ(b.type, WEFT_INT);

    std::vector<int> in{1, 2, 3}, inout{4, 5, 6};
    seen = {};
    weft::op_apply(b, in.data(), inout.data(), in.size());
    EXPECT_EQ(inout, (std::vector<int>{41, 52, 63}));
    EXPECT_EQ(seen.calls, 1);
    EXPECT_EQ(seen.len, 3u);
    EXPECT_EQ(seen.type, WEFT_INT);
    weft::op_apply(b, in.data(), inout.data(), 0);  // count 0 does not call the function
    EXPECT_EQ(seen.calls, 1);

    weft_op commuting = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create(shift_add, 1, &commuting), WEFT_SUCCESS);
    EXPECT_NE(commuting, op);
    op_binding bc;
    ASSERT_EQ(bind(commuting, WEFT_INT, bc), WEFT_SUCCESS);
    EXPECT_TRUE(bc.commutative);

    weft_op copy = op;
    EXPECT_EQ(weft_op_free(&op), WEFT_SUCCESS);
    EXPECT_EQ(op, WEFT_OP_NULL);
    op_binding after;
    EXPECT_EQ(bind(copy, WEFT_INT, after), WEFT_ERR_OP);  // the freed handle is stale
    EXPECT_EQ(weft_op_free(&copy), WEFT_ERR_OP);          // double free
    EXPECT_NE(weft::current_error_detail().find("weft_op_free"), std::string::npos);
    EXPECT_EQ(weft_op_free(&commuting), WEFT_SUCCESS);
}

TEST(OpUser, FreedOpStaysUsableThroughHeldBinding) {
    REQUIRE_RUNTIME();
    weft_op op = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create(shift_add, 0, &op), WEFT_SUCCESS);
    op_binding b;
    ASSERT_EQ(bind(op, WEFT_INT, b), WEFT_SUCCESS);
    ASSERT_EQ(weft_op_free(&op), WEFT_SUCCESS);
    // A new op may reuse the slot; the held binding still runs the first one.
    weft_op other = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create(add_doubles, 1, &other), WEFT_SUCCESS);
    std::vector<int> in{7}, inout{2};
    weft::op_apply(b, in.data(), inout.data(), 1);
    EXPECT_EQ(inout[0], 27);
    EXPECT_EQ(weft_op_free(&other), WEFT_SUCCESS);
}

TEST(OpUser, FinalizeAllDropsOpsButNotHeldBindings) {
    REQUIRE_RUNTIME();
    weft_op op = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create(shift_add, 0, &op), WEFT_SUCCESS);
    op_binding b;
    ASSERT_EQ(bind(op, WEFT_INT, b), WEFT_SUCCESS);
    weft::op_finalize_all();
    op_binding after;
    EXPECT_EQ(bind(op, WEFT_INT, after), WEFT_ERR_OP);
    EXPECT_EQ(weft_op_free(&op), WEFT_ERR_OP);
    std::vector<int> in{3}, inout{1};
    weft::op_apply(b, in.data(), inout.data(), 1);
    EXPECT_EQ(inout[0], 13);
    // New ops still work after the table was emptied.
    weft_op again = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create(shift_add, 0, &again), WEFT_SUCCESS);
    EXPECT_NE(again, op);
    EXPECT_EQ(bind(again, WEFT_INT, after), WEFT_SUCCESS);
    EXPECT_EQ(weft_op_free(&again), WEFT_SUCCESS);
}

TEST(OpUser, ContiguousDerivedTypesOnly) {
    REQUIRE_RUNTIME();
    weft_op op = WEFT_OP_NULL;
    ASSERT_EQ(weft_op_create(add_doubles, 1, &op), WEFT_SUCCESS);

    weft_datatype triple = WEFT_DATATYPE_NULL, strided = WEFT_DATATYPE_NULL;
    ASSERT_EQ(weft_type_contiguous(3, WEFT_DOUBLE, &triple), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_commit(&triple), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_vector(2, 1, 2, WEFT_DOUBLE, &strided), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_commit(&strided), WEFT_SUCCESS);

    op_binding b;
    ASSERT_EQ(bind(op, triple, b), WEFT_SUCCESS) << weft::current_error_detail();
    EXPECT_EQ(b.elem_size, 3 * sizeof(double));
    EXPECT_EQ(b.type, triple);
    std::vector<double> in{1, 2, 3, 4, 5, 6}, inout{10, 20, 30, 40, 50, 60};
    seen = {};
    weft::op_apply(b, in.data(), inout.data(), 2);
    EXPECT_EQ(inout, (std::vector<double>{11, 22, 33, 44, 55, 66}));
    EXPECT_EQ(seen.len, 2u);
    EXPECT_EQ(seen.type, triple);

    op_binding bad;
    EXPECT_EQ(bind(op, strided, bad, "weft_scan"), WEFT_ERR_OP);
    const std::string &msg = weft::current_error_detail();
    EXPECT_NE(msg.find("weft_scan"), std::string::npos) << msg;
    EXPECT_NE(msg.find("contiguous"), std::string::npos) << msg;
    EXPECT_EQ(bad.user, nullptr);

    // Built-in types bind whatever their layout, padded pairs included (stride = extent).
    op_binding pair;
    EXPECT_EQ(bind(op, WEFT_DOUBLE_INT, pair), WEFT_SUCCESS) << weft::current_error_detail();
    EXPECT_EQ(pair.elem_size, 16u);
    EXPECT_EQ(bind(op, WEFT_CHAR, pair), WEFT_SUCCESS);

    EXPECT_EQ(weft_type_free(&triple), WEFT_SUCCESS);
    EXPECT_EQ(weft_type_free(&strided), WEFT_SUCCESS);
    EXPECT_EQ(weft_op_free(&op), WEFT_SUCCESS);
}

TEST(OpUser, FreeAndCreateErrors) {
    REQUIRE_RUNTIME();
    for (weft_op predefined : all_ops) {
        weft_op op = predefined;
        EXPECT_EQ(weft_op_free(&op), WEFT_ERR_OP) << op_name(predefined);
        EXPECT_EQ(op, predefined);  // unchanged
        const std::string &msg = weft::current_error_detail();
        EXPECT_NE(msg.find(op_name(predefined)), std::string::npos) << msg;
        EXPECT_NE(msg.find("predefined"), std::string::npos) << msg;
        // Still usable.
        EXPECT_TRUE(binds(predefined, WEFT_INT) || predefined == WEFT_MINLOC || predefined == WEFT_MAXLOC);
    }
    for (weft_op garbage : {WEFT_OP_NULL, static_cast<weft_op>(0x6000000d), static_cast<weft_op>(0x61000020),
                            static_cast<weft_op>(WEFT_INT), static_cast<weft_op>(WEFT_COMM_WORLD), -1, 0x7fffffff}) {
        weft_op op = garbage;
        EXPECT_EQ(weft_op_free(&op), WEFT_ERR_OP) << std::hex << garbage;
        EXPECT_EQ(op, garbage);
    }
    EXPECT_EQ(weft_op_free(nullptr), WEFT_ERR_ARG);
    weft_op op = WEFT_OP_NULL;
    EXPECT_EQ(weft_op_create(nullptr, 1, &op), WEFT_ERR_ARG);
    EXPECT_EQ(op, WEFT_OP_NULL);
    EXPECT_EQ(weft_op_create(shift_add, 1, nullptr), WEFT_ERR_ARG);
}

// ---- weft.hpp: weft::Op and the typed collectives' argument checks ----

TEST(OpCxx, RaiiAndTypedUserOp) {
    REQUIRE_RUNTIME();
    weft_op h = WEFT_OP_NULL;
    {
        // inout = in * inout + 1, on doubles; also through a contiguous type of 2 doubles.
        auto op = weft::Op::create<double>([](const double &a, const double &b) { return a * b + 1; }, false);
        h = op.handle();
        ASSERT_NE(h, WEFT_OP_NULL);
        op_binding b;
        ASSERT_EQ(bind(op, WEFT_DOUBLE, b), WEFT_SUCCESS);  // Op converts to its handle
        EXPECT_FALSE(b.commutative);
        std::vector<double> in{2, 3, 4}, inout{5, 6, 7};
        weft::op_apply(b, in.data(), inout.data(), 3);
        EXPECT_EQ(inout, (std::vector<double>{11, 19, 29}));

        auto pair = weft::Datatype::contiguous(2, WEFT_DOUBLE);
        pair.commit();
        op_binding b2;
        ASSERT_EQ(bind(op, pair, b2), WEFT_SUCCESS);
        std::vector<double> in2{1, 2, 3, 4}, inout2{1, 1, 1, 1};
        weft::op_apply(b2, in2.data(), inout2.data(), 2);  // 2 elements of 2 doubles
        EXPECT_EQ(inout2, (std::vector<double>{2, 3, 4, 5}));

        weft::Op moved(std::move(op));
        EXPECT_EQ(op.handle(), WEFT_OP_NULL);
        EXPECT_EQ(moved.handle(), h);
        weft::Op assigned;
        assigned = std::move(moved);
        EXPECT_EQ(assigned.handle(), h);
        // The binding keeps the operation; the destructor frees the handle.
    }
    op_binding after;
    EXPECT_EQ(bind(h, WEFT_DOUBLE, after), WEFT_ERR_OP);

    weft::Op plain(shift_add, true);
    op_binding b;
    ASSERT_EQ(bind(plain, WEFT_INT, b), WEFT_SUCCESS);
    EXPECT_TRUE(b.commutative);
    weft_op raw = plain.release();
    EXPECT_EQ(plain.handle(), WEFT_OP_NULL);
    EXPECT_EQ(weft_op_free(&raw), WEFT_SUCCESS);

    try {
        weft::Op bad(nullptr);
        FAIL() << "no exception";
    } catch (const weft::error &e) {
        EXPECT_EQ(e.code(), WEFT_ERR_ARG);
    }
}

TEST(OpCxx, CollectiveSpanSizesChecked) {
    // Mismatched spans throw before any communication (the world is one process here).
    REQUIRE_RUNTIME();
    weft::Comm world;
    ASSERT_EQ(world.size(), 1);
    std::vector<double> in(4, 1.0), out3(3), out5(5);
    std::span<const double> cin(in);
    EXPECT_THROW(world.allreduce(cin, std::span(out3), WEFT_SUM), std::invalid_argument);
    EXPECT_THROW(world.iallreduce(cin, std::span(out5), WEFT_SUM), std::invalid_argument);
    EXPECT_THROW(world.reduce(cin, std::span(out3), WEFT_SUM, 0), std::invalid_argument);
    EXPECT_THROW(world.scan(cin, std::span(out3), WEFT_SUM), std::invalid_argument);
    EXPECT_THROW(world.exscan(cin, std::span(out5), WEFT_SUM), std::invalid_argument);
    EXPECT_THROW(world.allgather(cin, std::span(out3)), std::invalid_argument);
    EXPECT_THROW(world.gather(cin, std::span(out5), 0), std::invalid_argument);
    EXPECT_THROW(world.scatter(cin, std::span(out3), 0), std::invalid_argument);
    EXPECT_THROW(world.alltoall(cin, std::span(out5)), std::invalid_argument);
    EXPECT_THROW(world.reduce_scatter_block(cin, std::span(out3), WEFT_SUM), std::invalid_argument);
    try {
        world.allgather(cin, std::span(out3));
    } catch (const std::invalid_argument &e) {
        std::string what = e.what();
        EXPECT_NE(what.find("allgather"), std::string::npos) << what;
        EXPECT_NE(what.find('3'), std::string::npos) << what;
        EXPECT_NE(what.find('4'), std::string::npos) << what;
    }
}
