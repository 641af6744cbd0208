/* tag_sendv / tag_recvv (ABI minor 8, optional): a message gathered from a list of buffers is
 * their bytes in order, and a scattered receive fills its buffers in order, whatever posted
 * the other side; a receive shorter than the message is truncated. */
#include <algorithm>
#include <cstring>
#include <vector>

#include "fabric_harness.hpp"

namespace conformance {
namespace {

constexpr uint64_t TAG = 0x5e4e'0000'0000'0000ull;

class Gather : public FabricTest {
  protected:
    void SetUp() override {
        FabricTest::SetUp();
        if (HasFatalFailure()) return;
        /* A table of an older minor ends before the fields: they must not be read. */
        if (!has_iov()) GTEST_SKIP() << "the plugin has no tag_sendv/tag_recvv (optional, ABI 1.8)";
        limit_ = caps_.iov_limit == 0 ? 3 : std::min<size_t>(caps_.iov_limit, 3);
    }
    /* Up to limit_ pieces of buf (total bytes, split unevenly), with a gap of 7 bytes between. */
    std::vector<weft_fabric_iov_t> pieces(uint8_t *buf, size_t total) {
        std::vector<weft_fabric_iov_t> v;
        size_t left = total, at = 0;
        for (size_t i = 0; i < limit_ && left > 0; ++i) {
            size_t n = i + 1 == limit_ ? left : std::max<size_t>(1, left / (i + 2));
            v.push_back({buf + at, n});
            at += n + 7;
            left -= n;
        }
        return v;
    }
    size_t limit_ = 3;
};

TEST_F(Gather, GatheredSendArrivesAsOneMessage) {
    for (size_t total : {size_t{40}, size_t{64} << 10, size_t{1} << 20}) {
        SCOPED_TRACE(std::to_string(total) + " bytes");
        std::vector<uint8_t> src(total + 64), expect, in(total);
        pattern_fill(src.data(), src.size(), 21);
        auto iov = pieces(src.data(), total);
        for (const auto &p : iov)
            expect.insert(expect.end(), static_cast<uint8_t *>(p.base), static_cast<uint8_t *>(p.base) + p.len);
        Op &r = new_op(), &s = new_op();
        ASSERT_EQ(recv(b_, in.data(), in.size(), TAG, 0, r), WEFT_PLUGIN_OK);
        ASSERT_EQ(sendv(a_, a_to_b_, iov.data(), iov.size(), TAG, s), WEFT_PLUGIN_OK);
        ASSERT_TRUE(wait(r));
        ASSERT_TRUE(wait(s));
        EXPECT_EQ(s.c.status, WEFT_PLUGIN_OK);
        EXPECT_EQ(r.c.status, WEFT_PLUGIN_OK);
        EXPECT_EQ(r.c.length, total);
        EXPECT_TRUE(in == expect) << "the gathered bytes differ";
    }
    EXPECT_EQ(completion_violations(), 0);
}

TEST_F(Gather, ScatteredReceiveFillsItsBuffersInOrder) {
    for (size_t total : {size_t{40}, size_t{64} << 10, size_t{1} << 20}) {
        SCOPED_TRACE(std::to_string(total) + " bytes");
        std::vector<uint8_t> out(total), in(total + 64, 0xA5), expect(in);
        pattern_fill(out.data(), out.size(), 22);
        auto iov = pieces(in.data(), total);
        size_t at = 0;
        for (const auto &p : iov) {
            std::memcpy(expect.data() + (static_cast<uint8_t *>(p.base) - in.data()), out.data() + at, p.len);
            at += p.len;
        }
        Op &r = new_op(), &s = new_op();
        ASSERT_EQ(recvv(b_, iov.data(), iov.size(), TAG + 1, 0, r), WEFT_PLUGIN_OK);
        ASSERT_EQ(send(a_, a_to_b_, out.data(), out.size(), TAG + 1, s), WEFT_PLUGIN_OK);
        ASSERT_TRUE(wait(r));
        ASSERT_TRUE(wait(s));
        EXPECT_EQ(r.c.status, WEFT_PLUGIN_OK);
        EXPECT_EQ(r.c.length, total);
        EXPECT_TRUE(in == expect) << "scattered bytes differ, or the gaps were written";
    }
    EXPECT_EQ(completion_violations(), 0);
}

TEST_F(Gather, LongerMessageTruncatesAScatteredReceive) {
    std::vector<uint8_t> out(100), in(100);
    pattern_fill(out.data(), out.size(), 23);
    auto iov = pieces(in.data(), 50);
    Op &r = new_op(), &s = new_op();
    ASSERT_EQ(recvv(b_, iov.data(), iov.size(), TAG + 2, 0, r), WEFT_PLUGIN_OK);
    ASSERT_EQ(send(a_, a_to_b_, out.data(), out.size(), TAG + 2, s), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r));
    ASSERT_TRUE(wait(s));
    EXPECT_EQ(r.c.status, WEFT_PLUGIN_ERR_TRUNCATE);
}

}  // namespace
}  // namespace conformance
