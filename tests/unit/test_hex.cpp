// hex_encode / hex_decode: round trips, MPICH "[N]" zero runs, and every malformed form.
#include <gtest/gtest.h>

#include <random>

#include "base/hex.hpp"

using weft::hex_decode;
using weft::hex_encode;
using bytes = std::vector<uint8_t>;

namespace {

bytes decode_ok(std::string_view text) {
    bytes out;
    std::string why;
    EXPECT_TRUE(hex_decode(text, out, &why)) << "text \"" << text << "\": " << why;
    return out;
}

// Decoding must fail; returns the reason.
std::string decode_bad(std::string_view text) {
    bytes out{1, 2, 3};
    std::string why;
    EXPECT_FALSE(hex_decode(text, out, &why)) << "text \"" << text << "\" was accepted";
    EXPECT_TRUE(out.empty()) << "output left behind for \"" << text << "\"";
    EXPECT_FALSE(why.empty());
    return why;
}

}  // namespace

TEST(HexEncode, LowercaseInMemoryOrder) {
    const uint8_t data[] = {0x00, 0x01, 0xab, 0xcd, 0xef, 0xff, 0x10};
    EXPECT_EQ(hex_encode(data, sizeof data), "0001abcdefff10");
}

TEST(HexEncode, EmptyAndNull) {
    EXPECT_EQ(hex_encode(nullptr, 0), "");
    EXPECT_EQ(hex_encode(nullptr, 5), "");
    const uint8_t b = 7;
    EXPECT_EQ(hex_encode(&b, 0), "");
}

TEST(HexEncode, IntegerIsMemoryOrder) {
    uint32_t v = 0x11223344;
    std::string s = hex_encode(&v, sizeof v);
    const auto *p = reinterpret_cast<const uint8_t *>(&v);
    char first[3];
    snprintf(first, sizeof first, "%02x", p[0]);
    EXPECT_EQ(s.size(), 8u);
    EXPECT_EQ(s.substr(0, 2), first);
}

TEST(HexRoundTrip, RandomData) {
    std::mt19937 rng(12345);
    for (size_t size = 0; size < 300; ++size) {
        bytes in(size);
        for (auto &b : in) b = static_cast<uint8_t>(rng());
        std::string text = hex_encode(in.data(), in.size());
        ASSERT_EQ(text.size(), 2 * size);
        for (char c : text) ASSERT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << text;
        EXPECT_EQ(decode_ok(text), in) << "size " << size;
    }
}

TEST(HexRoundTrip, AllByteValues) {
    bytes in(256);
    for (int i = 0; i < 256; ++i) in[i] = static_cast<uint8_t>(i);
    EXPECT_EQ(decode_ok(hex_encode(in.data(), in.size())), in);
}

TEST(HexDecode, UpperAndMixedCase) {
    EXPECT_EQ(decode_ok("ABCDEF"), (bytes{0xab, 0xcd, 0xef}));
    EXPECT_EQ(decode_ok("aBcD"), (bytes{0xab, 0xcd}));
    EXPECT_EQ(decode_ok("Ff00"), (bytes{0xff, 0x00}));
}

TEST(HexDecode, EmptyIsZeroBytes) { EXPECT_TRUE(decode_ok("").empty()); }

TEST(HexDecode, ZeroRuns) {
    EXPECT_EQ(decode_ok("[3]"), bytes(3, 0));
    EXPECT_EQ(decode_ok("ab[3]cd"), (bytes{0xab, 0, 0, 0, 0xcd}));
    EXPECT_EQ(decode_ok("[0]"), bytes{});
    EXPECT_EQ(decode_ok("ab[0]cd"), (bytes{0xab, 0xcd}));
    EXPECT_EQ(decode_ok("[2][2]"), bytes(4, 0));
    EXPECT_EQ(decode_ok("[003]"), bytes(3, 0));
    EXPECT_EQ(decode_ok("[1]ff"), (bytes{0, 0xff}));
    EXPECT_EQ(decode_ok("ff[1]"), (bytes{0xff, 0}));
    EXPECT_EQ(decode_ok("[12]").size(), 12u);
    bytes big = decode_ok("[1000000]");
    EXPECT_EQ(big.size(), 1000000u);
    EXPECT_EQ(std::count(big.begin(), big.end(), 0), 1000000);
}

TEST(HexDecode, MpichStyleMixed) {
    // What MPICH 4.3 writes for a pointer with leading zero bytes.
    EXPECT_EQ(decode_ok("10a0[4]7f[1]"), (bytes{0x10, 0xa0, 0, 0, 0, 0, 0x7f, 0}));
}

TEST(HexDecode, OddDigitCount) {
    EXPECT_NE(decode_bad("a").find("position 0"), std::string::npos);
    EXPECT_NE(decode_bad("abc").find("position 2"), std::string::npos);
    EXPECT_NE(decode_bad("abc").find("odd"), std::string::npos);
    decode_bad("[2]a");
}

TEST(HexDecode, DigitSplitByRun) {
    // A byte's two digits must be adjacent.
    std::string why = decode_bad("a[3]b");
    EXPECT_NE(why.find("position 1"), std::string::npos) << why;
}

TEST(HexDecode, NonHexCharacters) {
    EXPECT_NE(decode_bad("zz").find("position 0"), std::string::npos);
    std::string why = decode_bad("abzz");
    EXPECT_NE(why.find("position 2"), std::string::npos) << why;
    EXPECT_NE(why.find("'z'"), std::string::npos) << why;
    EXPECT_NE(decode_bad("a z0").find("position 1"), std::string::npos);
    decode_bad(" ab");
    decode_bad("ab ");
    decode_bad("0x12");
    decode_bad("ag");
    decode_bad("g0");
    decode_bad("-1");
    decode_bad("ab\n");
    std::string why2 = decode_bad(std::string_view("ab\0cd", 5));
    EXPECT_NE(why2.find("0x00"), std::string::npos) << why2;
    decode_bad("\xff\xff");
}

TEST(HexDecode, MalformedRuns) {
    std::string why = decode_bad("[");
    EXPECT_NE(why.find("unterminated"), std::string::npos) << why;
    why = decode_bad("[]");
    EXPECT_NE(why.find("position 0"), std::string::npos) << why;
    EXPECT_NE(why.find("empty"), std::string::npos) << why;
    why = decode_bad("ab[x]");
    EXPECT_NE(why.find("position 3"), std::string::npos) << why;
    decode_bad("[3");
    decode_bad("ab[12");
    decode_bad("3]");
    decode_bad("]");
    decode_bad("ab]");
    decode_bad("[-1]");
    decode_bad("[+1]");
    decode_bad("[ 1]");
    decode_bad("[1 ]");
    decode_bad("[0x10]");
    decode_bad("[a]");
    decode_bad("[[1]]");
    decode_bad("[1]]");
    decode_bad("[1e3]");
}

TEST(HexDecode, HugeRunsRefusedWithoutAllocating) {
    std::string why = decode_bad("[999999999999]");
    EXPECT_NE(why.find("limit"), std::string::npos) << why;
    decode_bad("[99999999999999999999999999999999999999]");  // would overflow size_t
    decode_bad("[18446744073709551616]");
    decode_bad("[1073741825]");
    // The cap applies to the total, not only to one run.
    decode_bad("[1073741824][1]");
    decode_bad("[1073741824]00");
}

TEST(HexDecode, NullWhyIsAllowed) {
    bytes out;
    EXPECT_FALSE(hex_decode("zz", out, nullptr));
    EXPECT_TRUE(hex_decode("00", out, nullptr));
    EXPECT_EQ(out, bytes{0});
}

TEST(HexDecode, ReplacesPreviousOutput) {
    bytes out{9, 9, 9};
    ASSERT_TRUE(hex_decode("01", out, nullptr));
    EXPECT_EQ(out, bytes{1});
}

TEST(HexDecodeMax, CallerCap) {
    bytes out;
    std::string why;
    bool over = true;
    EXPECT_TRUE(weft::hex_decode_max("[4]", out, &why, 4, &over));
    EXPECT_FALSE(over);
    EXPECT_EQ(out.size(), 4u);
    EXPECT_TRUE(weft::hex_decode_max("00112233", out, &why, 4, &over));
    EXPECT_FALSE(weft::hex_decode_max("[5]", out, &why, 4, &over));
    EXPECT_TRUE(over);
    EXPECT_TRUE(out.empty());
    EXPECT_NE(why.find("limit of 4"), std::string::npos) << why;
    EXPECT_FALSE(weft::hex_decode_max("0011223344", out, &why, 4, &over));
    EXPECT_TRUE(over);
    EXPECT_FALSE(weft::hex_decode_max("00[4]", out, &why, 4, nullptr));
    EXPECT_TRUE(weft::hex_decode_max("", out, &why, 0, &over));
    EXPECT_FALSE(weft::hex_decode_max("00", out, &why, 0, &over));
    EXPECT_TRUE(over);
    EXPECT_TRUE(weft::hex_decode_max("[18446744073709551615]", out, &why, 4, &over) == false);
    EXPECT_TRUE(over);
    // Malformed text is reported as such even when it is also too long.
    EXPECT_FALSE(weft::hex_decode_max("[999999]zz", out, &why, 4, &over));
    EXPECT_FALSE(over);
    EXPECT_NE(why.find("position 8"), std::string::npos) << why;
    // The cap may be SIZE_MAX (no limit) without overflow in the size arithmetic.
    EXPECT_FALSE(weft::hex_decode_max("[18446744073709551615][1]", out, &why, SIZE_MAX - 1, &over));
    EXPECT_TRUE(over);
}
