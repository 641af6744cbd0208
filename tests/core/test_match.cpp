#include <gtest/gtest.h>

#include "base/match.hpp"

TEST(Match, FieldsRoundTrip) {
    uint64_t b = weft::match_bits(0xBEEF, 7, 0xABCDE, 0x12345);
    EXPECT_EQ(weft::match_source(b), 0xABCDE);
    EXPECT_EQ(weft::match_tag(b), 0x12345);
    EXPECT_EQ(weft::match_index(b), 7);
    EXPECT_EQ(b >> 48, 0xBEEFu);
}

TEST(Match, WildcardsIgnoreOnlyTheirField) {
    uint64_t posted = weft::match_bits(4, 0, 0, 0), ignore = weft::match_ignore(true, true, true);
    uint64_t msg = weft::match_bits(4, 3, 17, 99);
    EXPECT_EQ(posted & ~ignore, msg & ~ignore);
    uint64_t other_ctx = weft::match_bits(5, 3, 17, 99);
    EXPECT_NE(posted & ~ignore, other_ctx & ~ignore);
    uint64_t src_only = weft::match_ignore(true, false, false);
    EXPECT_NE(weft::match_bits(4, 0, 0, 1) & ~src_only, weft::match_bits(4, 0, 9, 2) & ~src_only);
    EXPECT_EQ(weft::match_bits(4, 0, 0, 2) & ~src_only, weft::match_bits(4, 0, 9, 2) & ~src_only);
}
