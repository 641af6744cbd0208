/* tag_send_sync (ABI minor 9, optional): a send that completes only once a receive at the peer
 * matched it, and that matches receives as tag_send's messages do. */
#include <chrono>
#include <cstring>
#include <vector>

#include "fabric_harness.hpp"

namespace conformance {
namespace {

constexpr uint64_t TAG = 0x5e5c'0000'0000'0000ull;

class SendSync : public FabricTest {
  protected:
    void SetUp() override {
        FabricTest::SetUp();
        if (HasFatalFailure()) return;
        /* A table of an older minor ends before the field: it must not be read. */
        if (plugin().desc->abi_minor < 9 || ops().tag_send_sync == nullptr)
            GTEST_SKIP() << "the plugin has no tag_send_sync (optional, ABI 1.9)";
    }
};

TEST_F(SendSync, CompletesOnlyOnceMatched) {
    for (size_t n : {size_t{8}, size_t{64} << 10}) {
        SCOPED_TRACE(n);
        std::vector<uint8_t> out(n), in(n);
        pattern_fill(out.data(), n, 21);
        Op &s = new_op();
        ASSERT_EQ(send_sync(a_, a_to_b_, out.data(), n, TAG + n, s), WEFT_PLUGIN_OK);
        /* Both sides progress for a while with no receive posted: the send must wait. */
        progress_for(std::chrono::milliseconds(200));
        EXPECT_EQ(s.done(), 0) << "a synchronous send completed before any receive matched it";
        Op &r = new_op();
        ASSERT_EQ(recv(b_, in.data(), n, TAG + n, 0, r), WEFT_PLUGIN_OK);
        ASSERT_TRUE(wait(r));
        ASSERT_TRUE(wait(s));
        EXPECT_EQ(s.c.status, WEFT_PLUGIN_OK);
        EXPECT_EQ(r.c.status, WEFT_PLUGIN_OK);
        EXPECT_EQ(r.c.tag, TAG + n);
        EXPECT_EQ(pattern_check(in.data(), n, 21), n) << "payload differs";
    }
}

TEST_F(SendSync, MatchesLikeTagSendAndKeepsOrder) {
    /* Same tag, a plain send between two synchronous ones: received in the order sent, by
     * receives that name the exact tag. */
    uint64_t first = 1, second = 2, third = 3, got[3] = {};
    Op &s1 = new_op(), &s2 = new_op(), &s3 = new_op();
    ASSERT_EQ(send_sync(a_, a_to_b_, &first, sizeof first, TAG + 1, s1), WEFT_PLUGIN_OK);
    ASSERT_EQ(send(a_, a_to_b_, &second, sizeof second, TAG + 1, s2), WEFT_PLUGIN_OK);
    ASSERT_EQ(send_sync(a_, a_to_b_, &third, sizeof third, TAG + 1, s3), WEFT_PLUGIN_OK);
    for (uint64_t &g : got) {
        Op &r = new_op();
        ASSERT_EQ(recv(b_, &g, sizeof g, TAG + 1, 0, r), WEFT_PLUGIN_OK);
        ASSERT_TRUE(wait(r));
    }
    ASSERT_TRUE(wait(s1));
    ASSERT_TRUE(wait(s2));
    ASSERT_TRUE(wait(s3));
    EXPECT_EQ(got[0], first);
    EXPECT_EQ(got[1], second);
    EXPECT_EQ(got[2], third);
}

}  // namespace
}  // namespace conformance
