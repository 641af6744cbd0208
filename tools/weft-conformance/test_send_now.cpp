/* tag_send_now (ABI minor 5, optional): a send finished before the call returns, with no
 * completion, or AGAIN having sent nothing. */
#include <chrono>
#include <cstring>

#include "fabric_harness.hpp"

namespace conformance {
namespace {

constexpr uint64_t TAG = 0x5e4d'0000'0000'0000ull;

class SendNow : public FabricTest {
  protected:
    void SetUp() override {
        FabricTest::SetUp();
        if (HasFatalFailure()) return;
        /* A table of an older minor ends before the field: it must not be read. */
        if (plugin().desc->abi_minor < 5 || ops().tag_send_now == nullptr)
            GTEST_SKIP() << "the plugin has no tag_send_now (optional, ABI 1.5)";
    }

    /* tag_send_now, retried while it says AGAIN (for up to 10 s), progressing meanwhile: a
     * full queue drains, and a connection (ofi_rxm's, for one) is made on first use. */
    int send_now(const Endpoint &from, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag) {
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        int rc;
        while ((rc = ops().tag_send_now(from.ep, peer, buf, len, tag)) == WEFT_PLUGIN_ERR_AGAIN &&
               std::chrono::steady_clock::now() < until)
            progress_all();
        return rc;
    }
};

TEST_F(SendNow, SmallMessageArrivesAndTheBufferIsFreeAtOnce) {
    for (bool recv_first : {true, false}) {
        SCOPED_TRACE(recv_first ? "receive posted first" : "receive posted after");
        uint8_t out[8], in[8] = {};
        pattern_fill(out, sizeof out, 11);
        Op &r = new_op();
        if (recv_first) {
            ASSERT_EQ(recv(b_, in, sizeof in, TAG, 0, r), WEFT_PLUGIN_OK);
        }
        ASSERT_EQ(send_now(a_, a_to_b_, out, sizeof out, TAG), WEFT_PLUGIN_OK)
            << "an 8-byte tag_send_now never finished";
        std::memset(out, 0, sizeof out); /* the plugin must not read it any more */
        if (!recv_first) {
            ASSERT_EQ(recv(b_, in, sizeof in, TAG, 0, r), WEFT_PLUGIN_OK);
        }
        ASSERT_TRUE(wait(r));
        EXPECT_EQ(r.c.status, WEFT_PLUGIN_OK);
        EXPECT_EQ(r.c.tag, TAG);
        EXPECT_EQ(r.c.length, sizeof in);
        EXPECT_EQ(pattern_check(in, sizeof in, 11), sizeof in) << "payload differs";
    }
    EXPECT_EQ(completion_violations(), 0) << "a completion came for a send that has none";
}

TEST_F(SendNow, KeepsOrderWithTagSend) {
    /* Same tag: the receives must match in the order the sends were made. */
    uint64_t first = 1, second = 2, third = 3, got[3] = {};
    Op &s2 = new_op();
    ASSERT_EQ(send_now(a_, a_to_b_, &first, sizeof first, TAG + 1), WEFT_PLUGIN_OK);
    ASSERT_EQ(send(a_, a_to_b_, &second, sizeof second, TAG + 1, s2), WEFT_PLUGIN_OK);
    ASSERT_EQ(send_now(a_, a_to_b_, &third, sizeof third, TAG + 1), WEFT_PLUGIN_OK);
    for (uint64_t &g : got) {
        Op &r = new_op();
        ASSERT_EQ(recv(b_, &g, sizeof g, TAG + 1, 0, r), WEFT_PLUGIN_OK);
        ASSERT_TRUE(wait(r));
    }
    ASSERT_TRUE(wait(s2));
    EXPECT_EQ(got[0], first);
    EXPECT_EQ(got[1], second);
    EXPECT_EQ(got[2], third);
}

TEST_F(SendNow, AgainSendsNothing) {
    /* 64 MiB cannot be finished inside one call on a fabric that copies through a
     * rendezvous; where a plugin does finish it, it must arrive whole. */
    const size_t n = size_t{64} << 20;
    std::vector<uint8_t> out(n), in(n);
    pattern_fill(out.data(), n, 21);
    int rc = ops().tag_send_now(a_.ep, a_to_b_, out.data(), n, TAG + 2);
    Op &r = new_op();
    ASSERT_EQ(recv(b_, in.data(), n, TAG + 2, 0, r), WEFT_PLUGIN_OK);
    if (rc == WEFT_PLUGIN_OK) {
        ASSERT_TRUE(wait(r));
        EXPECT_EQ(pattern_check(in.data(), n, 21), n);
        return;
    }
    ASSERT_EQ(rc, WEFT_PLUGIN_ERR_AGAIN);
    progress_for(std::chrono::milliseconds(200));
    EXPECT_EQ(r.done(), 0) << "tag_send_now said AGAIN but the message arrived";
    ASSERT_EQ(cancel(b_, r), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r));
}

TEST_F(SendNow, NullHandlesAreRefused) {
    uint8_t b = 0;
    EXPECT_EQ(ops().tag_send_now(nullptr, a_to_b_, &b, 1, TAG), WEFT_PLUGIN_ERR_INVALID);
    EXPECT_EQ(ops().tag_send_now(a_.ep, nullptr, &b, 1, TAG), WEFT_PLUGIN_ERR_INVALID);
}

}  // namespace
}  // namespace conformance
