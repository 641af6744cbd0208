/* Match bits, ignore masks, MPI's non-overtaking order and unexpected messages. */
#include "fabric_harness.hpp"

#include <cstring>

namespace conformance {
namespace {

/* The layout the core uses is its own business; here: source in the top 16 bits, user tag
 * below, which is how wildcard source and wildcard tag are emulated with ignore masks. */
constexpr uint64_t SRC_BITS = 0xffffull << 48;
constexpr uint64_t TAG_BITS = ~SRC_BITS;
constexpr uint64_t bits(uint64_t src, uint64_t tag) { return (src << 48) | tag; }

using Matching = FabricTest;

TEST_F(Matching, ExactMatchBitsPickTheirMessage) {
    uint64_t t1 = bits(1, 10), t2 = bits(1, 11);
    uint32_t got1 = 0, got2 = 0, v1 = 111, v2 = 222;
    Op &r1 = new_op(), &r2 = new_op(), &s1 = new_op(), &s2 = new_op();
    ASSERT_EQ(recv(b_, &got1, 4, t1, 0, r1), WEFT_PLUGIN_OK);
    ASSERT_EQ(recv(b_, &got2, 4, t2, 0, r2), WEFT_PLUGIN_OK);
    ASSERT_EQ(send(a_, a_to_b_, &v2, 4, t2, s2), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r2));
    EXPECT_EQ(r1.done(), 0) << "receive for tag 10 matched a tag-11 message";
    ASSERT_EQ(send(a_, a_to_b_, &v1, 4, t1, s1), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r1));
    EXPECT_EQ(got1, v1);
    EXPECT_EQ(got2, v2);
    EXPECT_EQ(r1.c.tag, t1);
    EXPECT_EQ(r2.c.tag, t2);
}

TEST_F(Matching, IgnoreMasksEmulateWildcards) {
    struct Case {
        uint64_t recv_tag, ignore, send_tag;
        const char *what;
    } cases[] = {
        {bits(0, 5), SRC_BITS, bits(3, 5), "any source, tag 5"},
        {bits(3, 0), TAG_BITS, bits(3, 77), "source 3, any tag"},
        {0, ~0ull, bits(9, 1234), "any source, any tag"},
        {bits(2, 0xff00), 0xffull, bits(2, 0xff42), "low byte ignored"},
    };
    for (const Case &k : cases) {
        SCOPED_TRACE(k.what);
        uint64_t got = 0, v = k.send_tag ^ 0x5555;
        Op &r = new_op(), &s = new_op();
        ASSERT_EQ(recv(b_, &got, 8, k.recv_tag, k.ignore, r), WEFT_PLUGIN_OK);
        ASSERT_EQ(send(a_, a_to_b_, &v, 8, k.send_tag, s), WEFT_PLUGIN_OK);
        ASSERT_TRUE(wait(r));
        EXPECT_EQ(r.c.status, WEFT_PLUGIN_OK);
        EXPECT_EQ(r.c.tag, k.send_tag) << "completion must carry the sender's match bits";
        EXPECT_EQ(got, v);
    }
}

TEST_F(Matching, MaskedBitsStillMustMatch) {
    /* Wildcard source but tag 5: a tag-6 message from anyone must not match. */
    uint64_t got = 0, v6 = 6, v5 = 5;
    Op &r = new_op(), &s6 = new_op(), &s5 = new_op();
    ASSERT_EQ(recv(b_, &got, 8, bits(0, 5), SRC_BITS, r), WEFT_PLUGIN_OK);
    ASSERT_EQ(send(a_, a_to_b_, &v6, 8, bits(1, 6), s6), WEFT_PLUGIN_OK);
    progress_for(std::chrono::milliseconds(50));
    EXPECT_EQ(r.done(), 0) << "tag 6 matched a receive for tag 5";
    ASSERT_EQ(send(a_, a_to_b_, &v5, 8, bits(2, 5), s5), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r));
    EXPECT_EQ(got, v5);
    /* Consume the tag-6 message so it does not linger. */
    Op &r6 = new_op();
    ASSERT_EQ(recv(b_, &got, 8, bits(1, 6), 0, r6), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r6));
    EXPECT_EQ(got, v6);
}

TEST_F(Matching, ThousandMessagesKeepTheirOrder) {
    constexpr int N = 1000;
    const uint64_t tag = bits(1, 42);
    std::vector<uint32_t> out(N), in(N, UINT32_MAX);
    std::vector<Op *> rs(N), ss(N);
    /* Half the receives are posted before the sends (expected path), half after
     * (unexpected path); both must match in send order. */
    for (int i = 0; i < N / 2; ++i) {
        rs[i] = &new_op();
        ASSERT_EQ(recv(b_, &in[i], 4, tag, 0, *rs[i]), WEFT_PLUGIN_OK);
    }
    for (int i = 0; i < N; ++i) {
        out[i] = static_cast<uint32_t>(i);
        ss[i] = &new_op();
        ASSERT_EQ(send(a_, a_to_b_, &out[i], 4, tag, *ss[i]), WEFT_PLUGIN_OK);
        if (i % 64 == 0) progress_all();
    }
    for (int i = N / 2; i < N; ++i) {
        rs[i] = &new_op();
        ASSERT_EQ(recv(b_, &in[i], 4, tag, 0, *rs[i]), WEFT_PLUGIN_OK);
    }
    ASSERT_TRUE(progress_until([&] { return rs[N - 1]->done() && ss[N - 1]->done(); }));
    ASSERT_TRUE(progress_until([&] {
        for (Op *r : rs)
            if (!r->done()) return false;
        return true;
    }));
    for (int i = 0; i < N; ++i) ASSERT_EQ(in[i], static_cast<uint32_t>(i)) << "message " << in[i] << " overtook";
}

TEST_F(Matching, MixedProtocolsKeepTheirOrder) {
    /* Small (eager) and large (rendezvous) messages with one tag: still send order. */
    constexpr int N = 16;
    const uint64_t tag = bits(1, 43);
    const size_t big = 512 << 10;
    std::vector<std::vector<uint8_t>> out(N), in(N);
    std::vector<Op *> rs(N);
    for (int i = 0; i < N; ++i) {
        size_t n = (i % 2) ? big : 8;
        out[i].resize(n);
        in[i].assign(big, 0);
        pattern_fill(out[i].data(), n, 1000 + i);
        Op &s = new_op();
        ASSERT_EQ(send(a_, a_to_b_, out[i].data(), n, tag, s), WEFT_PLUGIN_OK);
    }
    for (int i = 0; i < N; ++i) {
        rs[i] = &new_op();
        ASSERT_EQ(recv(b_, in[i].data(), big, tag, 0, *rs[i]), WEFT_PLUGIN_OK);
    }
    for (int i = 0; i < N; ++i) {
        ASSERT_TRUE(wait(*rs[i])) << "receive " << i;
        size_t n = (i % 2) ? big : 8;
        EXPECT_EQ(rs[i]->c.length, n) << "receive " << i << " got another message";
        EXPECT_EQ(pattern_check(in[i].data(), n, 1000 + i), n) << "receive " << i;
    }
}

TEST_F(Matching, UnexpectedMessagesWaitForTheirReceive) {
    const uint64_t tag = bits(4, 4);
    const size_t sizes[] = {8, 64 << 10, 4 << 20};
    std::vector<std::vector<uint8_t>> out(3), in(3);
    Op *ss[3];
    for (int i = 0; i < 3; ++i) {
        out[i].resize(sizes[i]);
        pattern_fill(out[i].data(), sizes[i], 50 + i);
        ss[i] = &new_op();
        ASSERT_EQ(send(a_, a_to_b_, out[i].data(), sizes[i], tag + i, *ss[i]), WEFT_PLUGIN_OK);
    }
    progress_for(std::chrono::milliseconds(100)); /* messages arrive with no receive posted */
    for (int i = 2; i >= 0; --i) {                /* reverse order: each must find its own tag */
        in[i].assign(sizes[i], 0);
        Op &r = new_op();
        ASSERT_EQ(recv(b_, in[i].data(), sizes[i], tag + i, 0, r), WEFT_PLUGIN_OK);
        ASSERT_TRUE(wait(r));
        EXPECT_EQ(r.c.status, WEFT_PLUGIN_OK);
        EXPECT_EQ(r.c.length, sizes[i]);
        EXPECT_EQ(pattern_check(in[i].data(), sizes[i], 50 + i), sizes[i]);
    }
    for (Op *s : ss) EXPECT_TRUE(wait(*s));
}

}  // namespace
}  // namespace conformance
