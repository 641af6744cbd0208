// The derived-datatype engine against the reference model (tests/common/dtype_ref.hpp): random
// type trees (fixed seeds) of every constructor, nested, with negative strides and
// displacements, checked for size, lb, extent, true extent, pack, (partial) unpack, iovecs
// and element counts; then large types past the flat list's limit, and the misuse cases.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <random>
#include <vector>

#include "base/datatype.hpp"
#include "dtype_ref.hpp"
#include "weft/weft.h"

namespace {

using dtref::layout;
using dtref::node;

// A buffer for count elements of l whose origin lies far enough inside it.
struct arena {
    std::vector<unsigned char> bytes;
    ptrdiff_t origin = 0;
    arena(const layout &l, size_t count, uint32_t seed) {
        ptrdiff_t lo, hi;
        dtref::span(l, count, lo, hi);
        origin = 16 - std::min<ptrdiff_t>(lo, 0);
        bytes.resize(static_cast<size_t>(origin + std::max<ptrdiff_t>(hi, 0) + 16));
        uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;  // xorshift: arenas reach megabytes
        for (auto &b : bytes) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b = static_cast<unsigned char>(x);
        }
    }
    unsigned char *at() { return bytes.data() + origin; }
};

// Checks one tree's type against the model, for each count of elements.
void check_tree(const node &tree, uint32_t seed, std::vector<size_t> counts = {1, 3}) {
    SCOPED_TRACE(dtref::describe(tree));
    layout l = dtref::expand(tree);
    weft_datatype h = dtref::build(tree);
    ASSERT_NE(h, WEFT_DATATYPE_NULL);
    const weft::datatype *t = weft::datatype_get(h);
    ASSERT_NE(t, nullptr);

    size_t size = 0;
    bool homogeneous = true;
    for (const dtref::entry &e : l.map) {
        size += e.len;
        homogeneous = homogeneous && e.kind == l.map[0].kind;
    }
    size_t got_size;
    ptrdiff_t lb, extent, tlb, text;
    ASSERT_EQ(weft_type_size(h, &got_size), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_get_extent(h, &lb, &extent), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_get_true_extent(h, &tlb, &text), WEFT_SUCCESS);
    EXPECT_EQ(got_size, size);
    EXPECT_EQ(lb, l.lb);
    EXPECT_EQ(extent, l.ub - l.lb);
    if (!l.map.empty()) {
        ptrdiff_t lo, hi;
        dtref::span(l, 1, lo, hi);
        EXPECT_EQ(tlb, lo);
        EXPECT_EQ(text, hi - lo);
    }
    EXPECT_EQ(t->basic_count, l.map.size());
    if (!l.map.empty()) {
        EXPECT_EQ(t->homogeneous, homogeneous);
    }
    EXPECT_EQ(weft_type_commit(&h), WEFT_SUCCESS);
    EXPECT_TRUE(t->committed);

    for (size_t count : counts) {
        SCOPED_TRACE("count " + std::to_string(count));
        arena src(l, count, seed);
        std::vector<unsigned char> expect = dtref::pack(l, src.at(), count);
        ASSERT_EQ(expect.size(), count * size);
        std::vector<unsigned char> got(expect.size() + 1, 0xEE);
        weft::datatype_pack(*t, src.at(), count, got.data());
        EXPECT_EQ(got.back(), 0xEE) << "pack wrote past count * size";
        got.pop_back();
        ASSERT_EQ(got, expect);

        // The iovec holds the same bytes in the same order, in no more runs than the typemap.
        std::vector<weft::datatype_iov> iov(l.map.size() * count + 1);
        size_t n = weft::datatype_iovec(*t, src.at(), count, iov.data(), iov.size());
        ASSERT_LE(n, l.map.size() * count);
        std::vector<unsigned char> joined;
        for (size_t i = 0; i < n; ++i) {
            auto *b = static_cast<unsigned char *>(iov[i].base);
            EXPECT_GT(iov[i].len, 0u);
            if (i > 0) {
                EXPECT_NE(static_cast<unsigned char *>(iov[i - 1].base) + iov[i - 1].len, b) << "unmerged";
            }
            joined.insert(joined.end(), b, b + iov[i].len);
        }
        EXPECT_EQ(joined, expect);
        if (n > 1) {
            EXPECT_EQ(weft::datatype_iovec(*t, src.at(), count, iov.data(), n - 1), n);
        }

        // Unpack, whole and cut short, over the same background as the model's.
        std::mt19937 g(seed + 7);
        for (size_t bytes : {expect.size(), expect.empty() ? size_t{0} : g() % expect.size()}) {
            arena a(l, count, seed + 1), b(l, count, seed + 1);
            dtref::unpack(l, expect.data(), bytes, a.at(), count);
            weft::datatype_unpack(*t, expect.data(), bytes, b.at(), count);
            EXPECT_EQ(a.bytes, b.bytes) << "unpack of " << bytes << " bytes";
        }

        // Element counts at every byte boundary of the first element and a few later ones.
        std::vector<size_t> ends{0};
        for (size_t i = 0; i < count; ++i)
            for (const dtref::entry &e : l.map) ends.push_back(ends.back() + e.len);
        for (size_t bytes = 0; bytes <= std::min<size_t>(expect.size(), 64); ++bytes) {
            bool exact;
            size_t got_n = weft::datatype_count_basic(*t, bytes, &exact);
            auto it = std::find(ends.begin(), ends.end(), bytes);
            EXPECT_EQ(exact, it != ends.end()) << bytes << " bytes";
            if (exact && it != ends.end()) {
                EXPECT_EQ(got_n, static_cast<size_t>(it - ends.begin())) << bytes;
            }
        }
    }
    if (tree.k != dtref::kind::builtin) {
        EXPECT_EQ(weft_type_free(&h), WEFT_SUCCESS);
    }
}

TEST(DatatypeDerived, RandomTreesMatchTheReference) {
    int checked = 0;
    for (uint32_t seed = 1; checked < 10000; ++seed) {
        dtref::rng_chooser c(seed);
        dtref::node_ptr tree = dtref::random_tree(c, 4);
        if (dtref::elements(*tree) > 4096) continue;  // keep the model's expansion quick
        check_tree(*tree, seed);
        if (HasFatalFailure()) FAIL() << "seed " << seed;
        ++checked;
    }
}

// Types past the flat list's limit walk their parts: the same bytes.
TEST(DatatypeDerived, LargeTypesWalkTheirParts) {
    using dtref::kind;
    auto leaf = [](int b) {
        auto n = std::make_shared<node>();
        n->builtin = b;
        return n;
    };
    auto vec = [](size_t count, size_t bl, ptrdiff_t stride, dtref::node_ptr c) {
        auto n = std::make_shared<node>();
        n->k = kind::vector;
        n->count = count;
        n->blocklen = bl;
        n->stride = stride;
        n->children = {std::move(c)};
        return n;
    };
    size_t big = weft::flat_blocks_max + 100;
    std::vector<dtref::node_ptr> trees = {
        vec(big, 1, 2, leaf(1)),                     // INT, every other one
        vec(3, 2, -1, vec(big / 2, 1, 2, leaf(5))),  // DOUBLE_INT pairs, negative outer stride
        vec(big / 4, 2, 3, vec(2, 1, 2, leaf(3))),   // nested, non-dense child
    };
    auto st = std::make_shared<node>();
    st->k = kind::structure;
    st->blocklens = {1, 2};
    st->displs = {0, -16};
    st->children = {vec(big, 1, -2, leaf(2)), leaf(2)};
    trees.push_back(st);
    for (auto &tree : trees) {
        weft_datatype h = dtref::build(*tree);
        ASSERT_NE(h, WEFT_DATATYPE_NULL);
        EXPECT_FALSE(weft::datatype_get(h)->flat);
        weft_type_free(&h);
        check_tree(*tree, 99, {2});
    }
}

TEST(DatatypeDerived, SubarrayOrders) {
    // A 2x3 block at (1, 2) of a 4x6 int array, in C and in Fortran order.
    size_t sizes[] = {4, 6}, subs[] = {2, 3}, starts[] = {1, 2};
    std::vector<int> a(24);
    for (int i = 0; i < 24; ++i) a[static_cast<size_t>(i)] = i;
    for (int order : {WEFT_ORDER_C, WEFT_ORDER_FORTRAN}) {
        weft_datatype t;
        ASSERT_EQ(weft_type_create_subarray(2, sizes, subs, starts, order, WEFT_INT, &t), WEFT_SUCCESS);
        ptrdiff_t lb, ext;
        weft_type_get_extent(t, &lb, &ext);
        EXPECT_EQ(lb, 0);
        EXPECT_EQ(ext, 24 * static_cast<ptrdiff_t>(sizeof(int)));
        std::vector<int> out(6);
        weft::datatype_pack(*weft::datatype_get(t), a.data(), 1, out.data());
        if (order == WEFT_ORDER_C)
            EXPECT_EQ(out, (std::vector<int>{8, 9, 10, 14, 15, 16}));
        else  // column-major 4x6: element (i, j) at i + 4 j; rows 1..2, columns 2..4
            EXPECT_EQ(out, (std::vector<int>{9, 10, 13, 14, 17, 18}));
        weft_type_free(&t);
    }
}

TEST(DatatypeDerived, DupAndResized) {
    weft_datatype d, v, r;
    ASSERT_EQ(weft_type_dup(WEFT_DOUBLE, &d), WEFT_SUCCESS);
    size_t size;
    weft_type_size(d, &size);
    EXPECT_EQ(size, sizeof(double));
    EXPECT_EQ(weft_type_free(&d), WEFT_SUCCESS);  // a dup of a built-in is not one

    ASSERT_EQ(weft_type_vector(2, 1, 3, WEFT_INT, &v), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_commit(&v), WEFT_SUCCESS);
    ASSERT_EQ(weft_type_dup(v, &d), WEFT_SUCCESS);
    EXPECT_TRUE(weft::datatype_get(d)->committed);  // MPI: the dup of a committed type is
    ASSERT_EQ(weft_type_create_resized(v, -4, 32, &r), WEFT_SUCCESS);
    ptrdiff_t lb, ext, tlb, text;
    weft_type_get_extent(r, &lb, &ext);
    weft_type_get_true_extent(r, &tlb, &text);
    EXPECT_EQ(lb, -4);
    EXPECT_EQ(ext, 32);
    EXPECT_EQ(tlb, 0);
    EXPECT_EQ(text, 4 * static_cast<ptrdiff_t>(sizeof(int)));
    for (weft_datatype *x : {&v, &d, &r}) EXPECT_EQ(weft_type_free(x), WEFT_SUCCESS);
}

TEST(DatatypeDerived, Misuse) {
    weft_datatype t = WEFT_DOUBLE, out = WEFT_DATATYPE_NULL;
    EXPECT_EQ(weft_type_free(&t), WEFT_ERR_TYPE);  // a predefined type
    size_t bl[] = {1, SIZE_MAX};
    ptrdiff_t disp[] = {0, 8};
    weft_datatype types[] = {WEFT_INT, WEFT_DOUBLE};
    // A block length that was negative (or too large): the size overflows.
    EXPECT_EQ(weft_type_create_struct(2, bl, disp, types, &out), WEFT_ERR_COUNT);
    EXPECT_EQ(weft_type_indexed(2, bl, disp, WEFT_INT, &out), WEFT_ERR_COUNT);
    EXPECT_EQ(weft_type_vector(SIZE_MAX / 2, 4, 1, WEFT_INT, &out), WEFT_ERR_COUNT);
    EXPECT_EQ(weft_type_create_hvector(2, 1, PTRDIFF_MAX, WEFT_INT, &out), WEFT_ERR_COUNT);
    ptrdiff_t far[] = {PTRDIFF_MAX / 2};
    size_t one[] = {1};
    EXPECT_EQ(weft_type_indexed(1, one, far, WEFT_DOUBLE, &out), WEFT_ERR_COUNT);
    EXPECT_EQ(out, WEFT_DATATYPE_NULL);
    EXPECT_EQ(weft_type_create_resized(WEFT_INT, 0, -4, &out), WEFT_ERR_ARG);  // negative extent
    EXPECT_EQ(weft_type_create_resized(WEFT_INT, PTRDIFF_MAX, 8, &out), WEFT_ERR_COUNT);
    EXPECT_EQ(weft_type_create_struct(2, nullptr, disp, types, &out), WEFT_ERR_ARG);
    weft_datatype bad[] = {WEFT_INT, 12345};
    size_t ones[] = {1, 1};
    EXPECT_EQ(weft_type_create_struct(2, ones, disp, bad, &out), WEFT_ERR_TYPE);
    EXPECT_EQ(weft_type_indexed(1, one, nullptr, WEFT_INT, &out), WEFT_ERR_ARG);
    EXPECT_EQ(weft_type_dup(WEFT_DATATYPE_NULL, &out), WEFT_ERR_TYPE);
    EXPECT_EQ(weft_type_dup(WEFT_INT, nullptr), WEFT_ERR_ARG);
    size_t sizes[] = {4}, subs[] = {3}, starts[] = {2};
    EXPECT_EQ(weft_type_create_subarray(1, sizes, subs, starts, WEFT_ORDER_C, WEFT_INT, &out), WEFT_ERR_ARG);
    starts[0] = 1;
    EXPECT_EQ(weft_type_create_subarray(1, sizes, subs, starts, 3, WEFT_INT, &out), WEFT_ERR_ARG);
    EXPECT_EQ(weft_type_create_subarray(0, sizes, subs, starts, WEFT_ORDER_C, WEFT_INT, &out), WEFT_ERR_ARG);
    ptrdiff_t lb, ext;
    EXPECT_EQ(weft_type_get_true_extent(WEFT_INT, nullptr, &ext), WEFT_ERR_ARG);
    EXPECT_EQ(weft_type_get_true_extent(WEFT_INT, &lb, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_type_get_true_extent(77, &lb, &ext), WEFT_ERR_TYPE);
    EXPECT_EQ(out, WEFT_DATATYPE_NULL);
}

TEST(DatatypeDerived, GetElementsOfPairsAndVectors) {
    weft_status st{};
    size_t n;
    st.weft_bytes_ = 2 * (sizeof(double) + sizeof(int));
    ASSERT_EQ(weft_get_elements(&st, WEFT_DOUBLE_INT, &n), WEFT_SUCCESS);
    EXPECT_EQ(n, 4u);
    st.weft_bytes_ = sizeof(double);
    ASSERT_EQ(weft_get_elements(&st, WEFT_DOUBLE_INT, &n), WEFT_SUCCESS);
    EXPECT_EQ(n, 1u);
    st.weft_bytes_ = 3;
    ASSERT_EQ(weft_get_elements(&st, WEFT_INT, &n), WEFT_SUCCESS);
    EXPECT_EQ(n, WEFT_UNDEFINED);
    weft_datatype v;
    ASSERT_EQ(weft_type_vector(3, 2, 4, WEFT_SHORT, &v), WEFT_SUCCESS);
    st.weft_bytes_ = 7 * sizeof(short);  // one whole vector and one more short
    ASSERT_EQ(weft_get_elements(&st, v, &n), WEFT_SUCCESS);
    EXPECT_EQ(n, 7u);
    EXPECT_EQ(weft_get_elements(nullptr, v, &n), WEFT_ERR_ARG);
    EXPECT_EQ(weft_get_elements(&st, 99, &n), WEFT_ERR_TYPE);
    weft_type_free(&v);
}

}  // namespace
