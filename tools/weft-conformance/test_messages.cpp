/* Message sizes across protocols (inline, eager, rendezvous) with content checks. */
#include "fabric_harness.hpp"

namespace conformance {
namespace {

constexpr uint64_t TAG = 0x1234'5678'9abc'def0ull;

/* Sends n bytes with the receive posted first or after, and checks every byte. */
class MessageFixture : public FabricTest {
  public:
    void roundtrip(const Endpoint &from, weft_fabric_peer_t *peer, const Endpoint &to, size_t n, uint32_t seed,
                   bool recv_first) {
        std::vector<uint8_t> out(n), in(n + 8, 0xee);
        pattern_fill(out.data(), n, seed);
        Op &s = new_op(), &r = new_op();
        if (recv_first) {
            ASSERT_EQ(recv(to, in.data(), n, TAG + seed, 0, r), WEFT_PLUGIN_OK);
        }
        ASSERT_EQ(send(from, peer, out.data(), n, TAG + seed, s), WEFT_PLUGIN_OK);
        if (!recv_first) {
            ASSERT_EQ(recv(to, in.data(), n, TAG + seed, 0, r), WEFT_PLUGIN_OK);
        }
        ASSERT_TRUE(wait(r)) << n << "-byte receive did not complete";
        ASSERT_TRUE(wait(s)) << n << "-byte send did not complete";
        EXPECT_EQ(s.c.status, WEFT_PLUGIN_OK);
        EXPECT_EQ(r.c.status, WEFT_PLUGIN_OK);
        EXPECT_EQ(r.c.tag, TAG + seed);
        EXPECT_EQ(r.c.length, n);
        EXPECT_EQ(pattern_check(in.data(), n, seed), n) << "payload differs";
        for (size_t i = n; i < n + 8; ++i) ASSERT_EQ(in[i], 0xee) << "receive wrote past its " << n << "-byte buffer";
    }
};

using MessageSizes = MessageFixture;

TEST_F(MessageSizes, ZeroEightSixtyFourKiBSixtyFourMiB) {
    uint32_t seed = 1;
    for (size_t n : {size_t{0}, size_t{8}, size_t{64} << 10, size_t{64} << 20}) {
        for (bool recv_first : {true, false}) {
            SCOPED_TRACE(testing::Message() << n << " bytes, recv " << (recv_first ? "first" : "after"));
            roundtrip(a_, a_to_b_, b_, n, seed++, recv_first);
            roundtrip(b_, b_to_a_, a_, n, seed++, recv_first);
            if (HasFatalFailure()) return;
        }
    }
}

TEST_F(MessageSizes, OddSizesAcrossThresholds) {
    uint32_t seed = 100;
    for (size_t n : {1ul, 7ul, 255ul, 4097ul, 8191ul, 8193ul, 65537ul, 1048575ul}) {
        roundtrip(a_, a_to_b_, b_, n, seed, seed % 2);
        ++seed;
    }
}

TEST_F(MessageSizes, SendToSelf) {
    weft_fabric_peer_t *self = connect(a_, a_);
    ASSERT_NE(self, nullptr);
    roundtrip(a_, self, a_, 8, 7, true);
    roundtrip(a_, self, a_, 1 << 20, 8, false);
}

}  // namespace
}  // namespace conformance
