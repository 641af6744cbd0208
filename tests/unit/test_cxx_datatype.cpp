// weft.hpp without a running fabric: the constructors, bounds and argument checks.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>

#include "weft/weft.hpp"

namespace {

TEST(CxxDatatype, ConstructorsOwnTheirTypes) {
    namespace t = weft::types;
    std::array<size_t, 2> bl{2, 1};
    std::array<std::ptrdiff_t, 2> d{0, 4};
    weft::Datatype idx = t::indexed(bl, d, WEFT_INT);
    EXPECT_EQ(idx.size(), 3 * sizeof(int));
    EXPECT_EQ(idx.extent().extent, 5 * static_cast<std::ptrdiff_t>(sizeof(int)));
    weft::Datatype h = t::hindexed(bl, d, WEFT_INT);
    EXPECT_EQ(h.extent().extent, 8);
    weft::Datatype hv = t::hvector(3, 1, -16, WEFT_DOUBLE);
    EXPECT_EQ(hv.extent().lb, -32);
    std::array<t::field, 2> f{{{1, 0, WEFT_DOUBLE}, {2, 8, WEFT_INT}}};
    weft::Datatype s = t::structure(f);
    EXPECT_EQ(s.size(), sizeof(double) + 2 * sizeof(int));
    weft::Datatype r = t::resized(s, 0, 32);
    EXPECT_EQ(r.extent().extent, 32);
    EXPECT_EQ(t::true_extent(r).extent, 16);
    weft::Datatype du = t::dup(r);
    EXPECT_EQ(du.extent().extent, 32);
    std::array<size_t, 2> sizes{4, 6}, subs{2, 3}, starts{1, 2};
    weft::Datatype sub = t::subarray(sizes, subs, starts, t::order::fortran, WEFT_INT);
    EXPECT_EQ(sub.size(), 6 * sizeof(int));
    weft::Datatype ib = t::indexed_block(2, d, WEFT_SHORT);
    EXPECT_EQ(ib.size(), 4 * sizeof(short));
}

TEST(CxxDatatype, MismatchedArraysAndBadArgumentsThrow) {
    namespace t = weft::types;
    std::array<size_t, 2> bl{1, 1};
    std::array<std::ptrdiff_t, 1> d{0};
    EXPECT_THROW(t::indexed(bl, d, WEFT_INT), std::invalid_argument);
    EXPECT_THROW(t::resized(WEFT_INT, 0, -1), weft::error);
    EXPECT_THROW(t::dup(WEFT_DATATYPE_NULL), weft::error);
}

}  // namespace
