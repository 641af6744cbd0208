// Datatypes: built-ins vs the C types, derived layouts (MPI lb/extent rules), pack/unpack
// against hand-computed layouts, partial unpack, lifetime and errors.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "base/datatype.hpp"
#include "weft/weft.h"

using weft::datatype;
using weft::datatype_get;
using weft::datatype_get_shared;

namespace {

template <class T>
struct pair_t {
    T v;
    int i;
};

// A derived datatype freed at scope exit.
struct owned {
    weft_datatype h = WEFT_DATATYPE_NULL;
    ~owned() {
        if (h != WEFT_DATATYPE_NULL) weft_type_free(&h);
    }
};

weft_datatype make_contig(size_t n, weft_datatype old) {
    weft_datatype t = WEFT_DATATYPE_NULL;
    EXPECT_EQ(weft_type_contiguous(n, old, &t), WEFT_SUCCESS);
    return t;
}
weft_datatype make_vector(size_t count, size_t blocklen, ptrdiff_t stride, weft_datatype old) {
    weft_datatype t = WEFT_DATATYPE_NULL;
    EXPECT_EQ(weft_type_vector(count, blocklen, stride, old, &t), WEFT_SUCCESS);
    return t;
}

std::vector<int> iota_ints(size_t n, int first = 0) {
    std::vector<int> v(n);
    std::iota(v.begin(), v.end(), first);
    return v;
}

// Packs count elements of t whose origin is base, as ints.
std::vector<int> pack_ints(weft_datatype h, const int *base, size_t count) {
    const datatype *t = datatype_get(h);
    EXPECT_NE(t, nullptr);
    std::vector<int> out(t->size * count / sizeof(int), -1);
    weft::datatype_pack(*t, base, count, out.data());
    return out;
}

struct builtin_case {
    weft_datatype h;
    size_t size;
    size_t extent;
    bool contiguous;
};

}  // namespace

// First test in the file: the built-in table must initialize safely from several threads at once.
TEST(DatatypeBuiltin, ConcurrentFirstUse) {
    std::vector<std::thread> threads;
    std::atomic<int> bad{0};
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&] {
            const datatype *d = datatype_get(WEFT_DOUBLE);
            if (d == nullptr || d->size != sizeof(double)) ++bad;
        });
    for (auto &th : threads) th.join();
    EXPECT_EQ(bad.load(), 0);
}

TEST(DatatypeBuiltin, SizesAndExtentsMatchCTypes) {
    const builtin_case cases[] = {
        {WEFT_BYTE, 1, 1, true},
        {WEFT_CHAR, sizeof(char), sizeof(char), true},
        {WEFT_INT8_T, 1, 1, true},
        {WEFT_UINT8_T, 1, 1, true},
        {WEFT_INT16_T, 2, 2, true},
        {WEFT_UINT16_T, 2, 2, true},
        {WEFT_INT32_T, 4, 4, true},
        {WEFT_UINT32_T, 4, 4, true},
        {WEFT_INT64_T, 8, 8, true},
        {WEFT_UINT64_T, 8, 8, true},
        {WEFT_INT, sizeof(int), sizeof(int), true},
        {WEFT_LONG, sizeof(long), sizeof(long), true},
        {WEFT_FLOAT, sizeof(float), sizeof(float), true},
        {WEFT_DOUBLE, sizeof(double), sizeof(double), true},
        {WEFT_UNSIGNED, sizeof(unsigned), sizeof(unsigned), true},
        {WEFT_UNSIGNED_LONG, sizeof(unsigned long), sizeof(unsigned long), true},
        {WEFT_SHORT, sizeof(short), sizeof(short), true},
        {WEFT_UNSIGNED_SHORT, sizeof(unsigned short), sizeof(unsigned short), true},
        {WEFT_LONG_LONG, sizeof(long long), sizeof(long long), true},
        {WEFT_UNSIGNED_LONG_LONG, sizeof(unsigned long long), sizeof(unsigned long long), true},
        {WEFT_SIGNED_CHAR, 1, 1, true},
        {WEFT_UNSIGNED_CHAR, 1, 1, true},
        {WEFT_C_BOOL, sizeof(bool), sizeof(bool), true},
        {WEFT_LONG_DOUBLE, sizeof(long double), sizeof(long double), true},
        {WEFT_FLOAT_INT, sizeof(float) + sizeof(int), sizeof(pair_t<float>),
         sizeof(float) + sizeof(int) == sizeof(pair_t<float>)},
        {WEFT_DOUBLE_INT, sizeof(double) + sizeof(int), sizeof(pair_t<double>),
         sizeof(double) + sizeof(int) == sizeof(pair_t<double>)},
        {WEFT_LONG_INT, sizeof(long) + sizeof(int), sizeof(pair_t<long>),
         sizeof(long) + sizeof(int) == sizeof(pair_t<long>)},
        {WEFT_2INT, 2 * sizeof(int), sizeof(pair_t<int>), true},
        {WEFT_SHORT_INT, sizeof(short) + sizeof(int), sizeof(pair_t<short>),
         sizeof(short) + sizeof(int) == sizeof(pair_t<short>)},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(testing::Message() << std::hex << c.h);
        size_t size = 0;
        ptrdiff_t lb = -1, extent = -1;
        ASSERT_EQ(weft_type_size(c.h, &size), WEFT_SUCCESS);
        ASSERT_EQ(weft_type_get_extent(c.h, &lb, &extent), WEFT_SUCCESS);
        EXPECT_EQ(size, c.size);
        EXPECT_EQ(lb, 0);
        EXPECT_EQ(extent, static_cast<ptrdiff_t>(c.extent));
        const datatype *d = datatype_get(c.h);
        ASSERT_NE(d, nullptr);
        EXPECT_TRUE(d->builtin);
        EXPECT_TRUE(d->committed);
        EXPECT_EQ(d->contiguous, c.contiguous);
        EXPECT_EQ(datatype_get_shared(c.h).get(), d);
    }
    // On x86-64 these pairs have padding; pack must skip it.
    EXPECT_FALSE(datatype_get(WEFT_DOUBLE_INT)->contiguous);
    EXPECT_FALSE(datatype_get(WEFT_SHORT_INT)->contiguous);
    EXPECT_TRUE(datatype_get(WEFT_2INT)->contiguous);
    EXPECT_EQ(datatype_get(WEFT_DOUBLE)->basic, weft::basic_kind::double_);
    EXPECT_EQ(datatype_get(WEFT_SHORT_INT)->basic, weft::basic_kind::short_int);
}

TEST(DatatypeBuiltin, CannotBeFreedCommitIsNoop) {
    weft_datatype h = WEFT_INT;
    EXPECT_EQ(weft_type_free(&h), WEFT_ERR_TYPE);
    EXPECT_EQ(h, WEFT_INT);
    EXPECT_EQ(weft_type_commit(&h), WEFT_SUCCESS);
    EXPECT_EQ(h, WEFT_INT);
    EXPECT_NE(datatype_get(WEFT_INT), nullptr);
}

TEST(DatatypeBuiltin, InvalidHandles) {
    for (weft_datatype bad :
         {WEFT_DATATYPE_NULL, static_cast<weft_datatype>(WEFT_COMM_WORLD), static_cast<weft_datatype>(WEFT_SUM),
          0x5000001e, 0x50000000, 0x500fffff, 0x51000001, -1, 42}) {
        SCOPED_TRACE(bad);
        size_t size;
        ptrdiff_t lb, extent;
        weft_datatype out, copy = bad;
        EXPECT_EQ(datatype_get(bad), nullptr);
        EXPECT_EQ(datatype_get_shared(bad), nullptr);
        EXPECT_EQ(weft_type_size(bad, &size), WEFT_ERR_TYPE);
        EXPECT_EQ(weft_type_get_extent(bad, &lb, &extent), WEFT_ERR_TYPE);
        EXPECT_EQ(weft_type_contiguous(2, bad, &out), WEFT_ERR_TYPE);
        EXPECT_EQ(weft_type_vector(2, 1, 2, bad, &out), WEFT_ERR_TYPE);
        EXPECT_EQ(weft_type_commit(&copy), WEFT_ERR_TYPE);
        EXPECT_EQ(weft_type_free(&copy), WEFT_ERR_TYPE);
        EXPECT_EQ(copy, bad);
    }
}

TEST(DatatypeErrors, NullPointers) {
    size_t size;
    ptrdiff_t lb;
    EXPECT_EQ(weft_type_contiguous(2, WEFT_INT, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_type_vector(2, 1, 2, WEFT_INT, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_type_commit(nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_type_free(nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_type_size(WEFT_INT, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_type_get_extent(WEFT_INT, nullptr, &lb), WEFT_ERR_ARG);
    EXPECT_EQ(weft_type_get_extent(WEFT_INT, &lb, nullptr), WEFT_ERR_ARG);
    (void)size;
}

TEST(DatatypeErrors, CountOverflow) {
    weft_datatype t = WEFT_DATATYPE_NULL;
    EXPECT_EQ(weft_type_contiguous(SIZE_MAX / 2, WEFT_INT, &t), WEFT_ERR_COUNT);
    EXPECT_EQ(weft_type_contiguous(SIZE_MAX, WEFT_DOUBLE, &t), WEFT_ERR_COUNT);
    EXPECT_EQ(weft_type_vector(SIZE_MAX / 4, 8, 8, WEFT_BYTE, &t), WEFT_ERR_COUNT);
    EXPECT_EQ(weft_type_vector(2, 1, PTRDIFF_MAX, WEFT_INT, &t), WEFT_ERR_COUNT);
    EXPECT_EQ(weft_type_vector(2, 1, PTRDIFF_MIN, WEFT_INT, &t), WEFT_ERR_COUNT);
    EXPECT_EQ(weft_type_vector(3, 1, PTRDIFF_MAX / 4, WEFT_INT, &t), WEFT_ERR_COUNT);
    EXPECT_EQ(t, WEFT_DATATYPE_NULL);
    // Nested: each level fits, the product does not.
    owned big;
    big.h = make_contig(size_t{1} << 40, WEFT_BYTE);
    EXPECT_EQ(weft_type_contiguous(size_t{1} << 30, big.h, &t), WEFT_ERR_COUNT);
}

TEST(DatatypeDerived, Contiguous) {
    owned t;
    t.h = make_contig(5, WEFT_INT);
    size_t size;
    ptrdiff_t lb, extent;
    ASSERT_EQ(weft_type_size(t.h, &size), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_get_extent(t.h, &lb, &extent), WEFT_SUCCESS);
    EXPECT_EQ(size, 20u);
    EXPECT_EQ(lb, 0);
    EXPECT_EQ(extent, 20);
    const datatype *d = datatype_get(t.h);
    EXPECT_TRUE(d->contiguous);
    EXPECT_FALSE(d->builtin);
    EXPECT_FALSE(d->committed);
    EXPECT_EQ(d->basic, weft::basic_kind::int_);
    weft_datatype h = t.h;
    ASSERT_EQ(weft_type_commit(&h), WEFT_SUCCESS);
    EXPECT_EQ(h, t.h);
    EXPECT_TRUE(datatype_get(t.h)->committed);

    auto src = iota_ints(10);
    EXPECT_EQ(pack_ints(t.h, src.data(), 2), src);
}

TEST(DatatypeDerived, VectorLayout) {
    owned t;
    t.h = make_vector(3, 2, 4, WEFT_INT);  // ints 0,1, 4,5, 8,9
    size_t size;
    ptrdiff_t lb, extent;
    ASSERT_EQ(weft_type_size(t.h, &size), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_get_extent(t.h, &lb, &extent), WEFT_SUCCESS);
    EXPECT_EQ(size, 6 * sizeof(int));
    EXPECT_EQ(lb, 0);
    EXPECT_EQ(extent, static_cast<ptrdiff_t>(10 * sizeof(int)));
    EXPECT_FALSE(datatype_get(t.h)->contiguous);

    auto src = iota_ints(40);
    EXPECT_EQ(pack_ints(t.h, src.data(), 1), (std::vector<int>{0, 1, 4, 5, 8, 9}));
    // Elements follow each other extent (10 ints) apart.
    EXPECT_EQ(pack_ints(t.h, src.data(), 2), (std::vector<int>{0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19}));

    std::vector<int> dst(40, -1);
    std::vector<int> packed{100, 101, 104, 105, 108, 109, 110, 111, 114, 115, 118, 119};
    weft::datatype_unpack(*datatype_get(t.h), packed.data(), packed.size() * sizeof(int), dst.data(), 2);
    for (int i = 0; i < 40; ++i) {
        int r = i % 10;
        bool covered = i < 20 && (r == 0 || r == 1 || r == 4 || r == 5 || r == 8 || r == 9);
        EXPECT_EQ(dst[i], covered ? 100 + i : -1) << i;
    }
}

TEST(DatatypeDerived, VectorDenseIsContiguous) {
    owned t;
    t.h = make_vector(4, 3, 3, WEFT_DOUBLE);
    EXPECT_TRUE(datatype_get(t.h)->contiguous);
    owned one;
    one.h = make_vector(1, 3, 99, WEFT_DOUBLE);  // a single block: stride does not matter
    EXPECT_TRUE(datatype_get(one.h)->contiguous);
    ptrdiff_t lb, extent;
    ASSERT_EQ(weft_type_get_extent(one.h, &lb, &extent), WEFT_SUCCESS);
    EXPECT_EQ(extent, static_cast<ptrdiff_t>(3 * sizeof(double)));
}

TEST(DatatypeDerived, NegativeStride) {
    owned t;
    t.h = make_vector(3, 2, -4, WEFT_INT);  // blocks at ints 0, -4, -8 relative to the origin
    size_t size;
    ptrdiff_t lb, extent;
    ASSERT_EQ(weft_type_size(t.h, &size), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_get_extent(t.h, &lb, &extent), WEFT_SUCCESS);
    EXPECT_EQ(size, 6 * sizeof(int));
    EXPECT_EQ(lb, -8 * static_cast<ptrdiff_t>(sizeof(int)));
    EXPECT_EQ(extent, 10 * static_cast<ptrdiff_t>(sizeof(int)));

    auto src = iota_ints(12);
    EXPECT_EQ(pack_ints(t.h, src.data() + 8, 1), (std::vector<int>{8, 9, 4, 5, 0, 1}));

    std::vector<int> dst(12, -1);
    std::vector<int> packed{80, 90, 40, 50, 0, 10};
    weft::datatype_unpack(*datatype_get(t.h), packed.data(), 24, dst.data() + 8, 1);
    EXPECT_EQ(dst, (std::vector<int>{0, 10, -1, -1, 40, 50, -1, -1, 80, 90, -1, -1}));
}

TEST(DatatypeDerived, ZeroStrideRepeats) {
    owned t;
    t.h = make_vector(3, 1, 0, WEFT_INT);
    size_t size;
    ptrdiff_t lb, extent;
    ASSERT_EQ(weft_type_size(t.h, &size), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_get_extent(t.h, &lb, &extent), WEFT_SUCCESS);
    EXPECT_EQ(size, 12u);
    EXPECT_EQ(extent, 4);
    EXPECT_FALSE(datatype_get(t.h)->contiguous);
    int v = 7;
    EXPECT_EQ(pack_ints(t.h, &v, 1), (std::vector<int>{7, 7, 7}));
}

TEST(DatatypeDerived, EmptyTypes) {
    for (weft_datatype h : {make_contig(0, WEFT_INT), make_vector(0, 3, 5, WEFT_INT), make_vector(3, 0, 5, WEFT_INT)}) {
        size_t size = 1;
        ptrdiff_t lb = 1, extent = 1;
        ASSERT_EQ(weft_type_size(h, &size), WEFT_SUCCESS);
        ASSERT_EQ(weft_type_get_extent(h, &lb, &extent), WEFT_SUCCESS);
        EXPECT_EQ(size, 0u);
        EXPECT_EQ(lb, 0);
        EXPECT_EQ(extent, 0);
        int dummy = 5;
        weft::datatype_pack(*datatype_get(h), &dummy, 4, &dummy);
        weft::datatype_unpack(*datatype_get(h), &dummy, 4, &dummy, 4);
        EXPECT_EQ(dummy, 5);
        EXPECT_EQ(weft_type_free(&h), WEFT_SUCCESS);
    }
}

TEST(DatatypeNested, VectorOfVector) {
    owned inner, outer;
    inner.h = make_vector(2, 1, 2, WEFT_INT);  // ints 0, 2; extent 3 ints
    outer.h = make_vector(3, 1, 2, inner.h);   // inner elements 6 ints apart
    size_t size;
    ptrdiff_t lb, extent;
    ASSERT_EQ(weft_type_size(outer.h, &size), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_get_extent(outer.h, &lb, &extent), WEFT_SUCCESS);
    EXPECT_EQ(size, 6 * sizeof(int));
    EXPECT_EQ(lb, 0);
    EXPECT_EQ(extent, static_cast<ptrdiff_t>(15 * sizeof(int)));  // (2*2 + 1) * 3 ints
    EXPECT_EQ(datatype_get(outer.h)->basic, weft::basic_kind::int_);

    auto src = iota_ints(40);
    EXPECT_EQ(pack_ints(outer.h, src.data(), 1), (std::vector<int>{0, 2, 6, 8, 12, 14}));
    EXPECT_EQ(pack_ints(outer.h, src.data(), 2), (std::vector<int>{0, 2, 6, 8, 12, 14, 15, 17, 21, 23, 27, 29}));
}

TEST(DatatypeNested, ContiguousOfVectorAndBack) {
    owned vec, con, vec2;
    vec.h = make_vector(2, 1, 3, WEFT_INT);  // ints 0, 3; extent 4 ints
    con.h = make_contig(3, vec.h);           // at 0,3 / 4,7 / 8,11
    auto src = iota_ints(20);
    EXPECT_EQ(pack_ints(con.h, src.data(), 1), (std::vector<int>{0, 3, 4, 7, 8, 11}));
    EXPECT_FALSE(datatype_get(con.h)->contiguous);

    // Vector of a contiguous child: blocks are copied as runs.
    owned c2;
    c2.h = make_contig(2, WEFT_INT);
    vec2.h = make_vector(3, 2, -3, c2.h);  // blocks of 4 ints at int 0, -6, -12
    ptrdiff_t lb, extent;
    ASSERT_EQ(weft_type_get_extent(vec2.h, &lb, &extent), WEFT_SUCCESS);
    EXPECT_EQ(lb, -12 * static_cast<ptrdiff_t>(sizeof(int)));
    EXPECT_EQ(extent, 16 * static_cast<ptrdiff_t>(sizeof(int)));
    EXPECT_EQ(pack_ints(vec2.h, src.data() + 12, 1), (std::vector<int>{12, 13, 14, 15, 6, 7, 8, 9, 0, 1, 2, 3}));
}

TEST(DatatypeNested, NegativeInnerLbPropagates) {
    owned inner, outer;
    inner.h = make_vector(2, 1, -1, WEFT_INT);  // ints 0, -1: lb -1 int, extent 2 ints
    outer.h = make_contig(2, inner.h);          // elements at 0 and +2 ints
    ptrdiff_t lb, extent;
    ASSERT_EQ(weft_type_get_extent(outer.h, &lb, &extent), WEFT_SUCCESS);
    EXPECT_EQ(lb, -static_cast<ptrdiff_t>(sizeof(int)));
    EXPECT_EQ(extent, 4 * static_cast<ptrdiff_t>(sizeof(int)));
    auto src = iota_ints(8);
    EXPECT_EQ(pack_ints(outer.h, src.data() + 1, 1), (std::vector<int>{1, 0, 3, 2}));
}

TEST(DatatypePairs, PackSkipsPadding) {
    pair_t<double> in[3] = {{1.5, 10}, {2.5, 20}, {3.5, 30}};
    const datatype &t = *datatype_get(WEFT_DOUBLE_INT);
    std::vector<unsigned char> packed(3 * t.size);
    weft::datatype_pack(t, in, 3, packed.data());
    for (int k = 0; k < 3; ++k) {
        double v;
        int i;
        memcpy(&v, packed.data() + k * t.size, sizeof v);
        memcpy(&i, packed.data() + k * t.size + sizeof(double), sizeof i);
        EXPECT_EQ(v, in[k].v);
        EXPECT_EQ(i, in[k].i);
    }
    // Unpack writes the members and leaves the padding alone.
    pair_t<double> out[3];
    memset(out, 0xee, sizeof out);
    weft::datatype_unpack(t, packed.data(), packed.size(), out, 3);
    for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(out[k].v, in[k].v);
        EXPECT_EQ(out[k].i, in[k].i);
        const auto *raw = reinterpret_cast<const unsigned char *>(&out[k]);
        for (size_t b = sizeof(double) + sizeof(int); b < sizeof(pair_t<double>); ++b) EXPECT_EQ(raw[b], 0xee);
    }
}

TEST(DatatypePairs, ShortIntInVector) {
    pair_t<short> in[6];
    for (int k = 0; k < 6; ++k) in[k] = {static_cast<short>(k), 100 + k};
    owned t;
    t.h = make_vector(2, 2, 3, WEFT_SHORT_INT);  // pairs 0,1 and 3,4
    const datatype &d = *datatype_get(t.h);
    ASSERT_EQ(d.size, 4 * (sizeof(short) + sizeof(int)));
    std::vector<unsigned char> packed(d.size);
    weft::datatype_pack(d, in, 1, packed.data());
    pair_t<short> out[6];
    memset(out, 0, sizeof out);
    weft::datatype_unpack(d, packed.data(), packed.size(), out, 1);
    for (int k : {0, 1, 3, 4}) {
        EXPECT_EQ(out[k].v, k);
        EXPECT_EQ(out[k].i, 100 + k);
    }
    EXPECT_EQ(out[2].i, 0);
    EXPECT_EQ(out[5].i, 0);
}

TEST(DatatypeUnpack, PartialBytes) {
    owned t;
    t.h = make_vector(3, 2, 4, WEFT_INT);
    const datatype &d = *datatype_get(t.h);
    std::vector<int> packed{10, 11, 12, 13, 14, 15};
    std::vector<int> dst(12, -1);
    // Two whole ints and half of the third.
    weft::datatype_unpack(d, packed.data(), 2 * sizeof(int) + 2, dst.data(), 1);
    EXPECT_EQ(dst[0], 10);
    EXPECT_EQ(dst[1], 11);
    int expect_partial = -1;
    memcpy(&expect_partial, &packed[2], 2);
    EXPECT_EQ(dst[4], expect_partial);
    for (int i : {2, 3, 5, 6, 7, 8, 9, 10, 11}) EXPECT_EQ(dst[i], -1) << i;

    // Contiguous: stops after the given bytes.
    std::vector<int> c(6, -1);
    weft::datatype_unpack(*datatype_get(WEFT_INT), packed.data(), 3 * sizeof(int), c.data(), 6);
    EXPECT_EQ(c, (std::vector<int>{10, 11, 12, -1, -1, -1}));

    // More bytes than count elements hold: only count elements are written.
    std::vector<int> e(6, -1);
    weft::datatype_unpack(*datatype_get(WEFT_INT), packed.data(), 6 * sizeof(int), e.data(), 2);
    EXPECT_EQ(e, (std::vector<int>{10, 11, -1, -1, -1, -1}));
    std::vector<int> f(12, -1);
    weft::datatype_unpack(d, packed.data(), 6 * sizeof(int), f.data(), 0);
    EXPECT_EQ(f, std::vector<int>(12, -1));

    // Partial in a padded pair: value only.
    pair_t<double> p;
    p.v = 0;
    p.i = -1;
    double v = 4.25;
    unsigned char buf[12] = {};
    memcpy(buf, &v, sizeof v);
    weft::datatype_unpack(*datatype_get(WEFT_DOUBLE_INT), buf, sizeof(double), &p, 1);
    EXPECT_EQ(p.v, 4.25);
    EXPECT_EQ(p.i, -1);
}

TEST(DatatypeRoundTrip, RandomVectors) {
    std::mt19937 rng(7);
    for (int iter = 0; iter < 200; ++iter) {
        size_t count = rng() % 5, blocklen = rng() % 4;
        ptrdiff_t stride = static_cast<ptrdiff_t>(rng() % 9) - 4;
        size_t nelem = 1 + rng() % 3;
        owned t;
        t.h = make_vector(count, blocklen, stride, WEFT_INT);
        const datatype &d = *datatype_get(t.h);
        // A buffer large enough around the origin, with the origin at -lb.
        ptrdiff_t span = d.extent * static_cast<ptrdiff_t>(nelem) + 64;
        std::vector<int> src(static_cast<size_t>(span) / sizeof(int) * 2 + 64);
        std::iota(src.begin(), src.end(), 0);
        ptrdiff_t origin = src.size() / 2;
        std::vector<unsigned char> packed(d.size * nelem);
        weft::datatype_pack(d, src.data() + origin, nelem, packed.data());
        // Expected: walk the typemap by hand.
        std::vector<int> expect;
        for (size_t e = 0; e < nelem; ++e)
            for (size_t b = 0; b < count; ++b)
                for (size_t j = 0; j < blocklen; ++j)
                    expect.push_back(src[origin + static_cast<ptrdiff_t>(e) * d.extent / 4 +
                                         static_cast<ptrdiff_t>(b) * stride + static_cast<ptrdiff_t>(j)]);
        std::vector<int> got(expect.size());
        if (!got.empty()) memcpy(got.data(), packed.data(), packed.size());
        ASSERT_EQ(got, expect) << count << "x" << blocklen << " stride " << stride << " n " << nelem;
        // Unpack into a fresh buffer, then pack again: the same bytes (when blocks don't overlap).
        if (stride != 0 && std::abs(stride) >= static_cast<ptrdiff_t>(blocklen)) {
            std::vector<int> dst(src.size(), -1);
            weft::datatype_unpack(d, packed.data(), packed.size(), dst.data() + origin, nelem);
            std::vector<unsigned char> again(packed.size());
            weft::datatype_pack(d, dst.data() + origin, nelem, again.data());
            EXPECT_EQ(again, packed);
        }
    }
}

TEST(DatatypeLifetime, FreeSetsNullAndKeepsSharedUsers) {
    weft_datatype h = make_vector(2, 1, 2, WEFT_DOUBLE);
    weft_datatype commit = h;
    ASSERT_EQ(weft_type_commit(&commit), WEFT_SUCCESS);
    auto held = weft::datatype_get_shared(h);
    ASSERT_NE(held, nullptr);
    weft_datatype stale = h;
    ASSERT_EQ(weft_type_free(&h), WEFT_SUCCESS);
    EXPECT_EQ(h, WEFT_DATATYPE_NULL);
    EXPECT_EQ(datatype_get(stale), nullptr);
    size_t size;
    EXPECT_EQ(weft_type_size(stale, &size), WEFT_ERR_TYPE);
    EXPECT_EQ(weft_type_free(&stale), WEFT_ERR_TYPE);
    EXPECT_EQ(weft_type_free(&h), WEFT_ERR_TYPE);  // WEFT_DATATYPE_NULL
    // A pending operation's reference still works.
    EXPECT_EQ(held->size, 2 * sizeof(double));
    double src[3] = {1, 2, 3}, dst[2];
    weft::datatype_pack(*held, src, 1, dst);
    EXPECT_EQ(dst[0], 1);
    EXPECT_EQ(dst[1], 3);
}

TEST(DatatypeLifetime, ChildOutlivesItsHandle) {
    weft_datatype inner = make_vector(2, 1, 2, WEFT_INT);
    owned outer;
    outer.h = make_contig(2, inner);
    ASSERT_EQ(weft_type_free(&inner), WEFT_SUCCESS);
    auto src = iota_ints(8);
    EXPECT_EQ(pack_ints(outer.h, src.data(), 1), (std::vector<int>{0, 2, 3, 5}));
}

TEST(DatatypeLifetime, ManyCreateFree) {
    std::vector<weft_datatype> hs;
    for (int i = 0; i < 5000; ++i) hs.push_back(make_contig(static_cast<size_t>(i), WEFT_BYTE));
    for (size_t i = 0; i < hs.size(); ++i) {
        size_t size = 0;
        ASSERT_EQ(weft_type_size(hs[i], &size), WEFT_SUCCESS);
        ASSERT_EQ(size, i);
    }
    for (auto &h : hs) ASSERT_EQ(weft_type_free(&h), WEFT_SUCCESS);
    // Slots are reused with new generations.
    for (int round = 0; round < 300; ++round) {
        weft_datatype h = make_contig(1, WEFT_INT);
        ASSERT_NE(h, WEFT_DATATYPE_NULL);
        ASSERT_EQ(weft_type_free(&h), WEFT_SUCCESS);
    }
}
