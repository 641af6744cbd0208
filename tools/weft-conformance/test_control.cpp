/* Truncation, probe, cancel and the wake-up file descriptor. */
#include "fabric_harness.hpp"

#include <poll.h>

#include <cstring>

namespace conformance {
namespace {

using Control = FabricTest;

TEST_F(Control, TruncationReportsErrTruncate)
{
    struct Case {
        size_t sent, buffer;
        bool recv_first;
    } cases[] = {{64, 16, true}, {64, 16, false}, {1 << 20, 1024, true}, {1 << 20, 1024, false}};
    uint64_t tag = 900;
    for (const Case &k : cases) {
        SCOPED_TRACE(testing::Message() << k.sent << " bytes into " << k.buffer << ", recv "
                                        << (k.recv_first ? "first" : "after"));
        std::vector<uint8_t> out(k.sent), in(k.buffer + 64, 0xee);
        pattern_fill(out.data(), k.sent, static_cast<uint32_t>(tag));
        Op &s = new_op(), &r = new_op();
        if (k.recv_first) {
            ASSERT_EQ(recv(b_, in.data(), k.buffer, tag, 0, r), WEFT_PLUGIN_OK);
        }
        ASSERT_EQ(send(a_, a_to_b_, out.data(), k.sent, tag, s), WEFT_PLUGIN_OK);
        if (!k.recv_first) {
            progress_for(std::chrono::milliseconds(20));
            ASSERT_EQ(recv(b_, in.data(), k.buffer, tag, 0, r), WEFT_PLUGIN_OK);
        }
        ASSERT_TRUE(wait(r));
        EXPECT_EQ(r.c.status, WEFT_PLUGIN_ERR_TRUNCATE);
        /* plugin.h: a truncated receive reports the sent length, not the bytes delivered. */
        EXPECT_EQ(r.c.length, k.sent)
            << "a truncated receive must report the sent length (" << k.sent << " bytes), not "
            << (r.c.length == k.buffer ? "the bytes delivered" : "another length");
        for (size_t i = k.buffer; i < in.size(); ++i)
            ASSERT_EQ(in[i], 0xee) << "truncated receive wrote past its buffer at " << i;
        ASSERT_TRUE(wait(s)) << "the truncated message's send never completed";
        ++tag;
    }
}

TEST_F(Control, ProbeFindsUnexpectedWithoutConsuming)
{
    const uint64_t tag = 0xabc0001;
    std::vector<uint8_t> out(100), in(100);
    pattern_fill(out.data(), out.size(), 3);
    int found = 0;
    uint64_t mt = 0;
    size_t ml = 0;
    ASSERT_EQ(probe(b_, tag, 0, &found, &mt, &ml), WEFT_PLUGIN_OK);
    EXPECT_EQ(found, 0) << "probe found a message nobody sent";

    Op &s = new_op();
    ASSERT_EQ(send(a_, a_to_b_, out.data(), out.size(), tag, s), WEFT_PLUGIN_OK);
    ASSERT_TRUE(progress_until([&] {
        EXPECT_EQ(probe(b_, tag, 0, &found, &mt, &ml), WEFT_PLUGIN_OK);
        return found != 0;
    })) << "probe never saw the message";
    EXPECT_EQ(mt, tag);
    EXPECT_EQ(ml, out.size());
    /* A probe for other bits misses; the same probe again still finds it. */
    ASSERT_EQ(probe(b_, tag + 1, 0, &found, &mt, &ml), WEFT_PLUGIN_OK);
    EXPECT_EQ(found, 0);
    ASSERT_EQ(probe(b_, tag & ~0xfull, 0xf, &found, &mt, &ml), WEFT_PLUGIN_OK);
    EXPECT_EQ(found, 1) << "probe ignores the ignore mask";
    EXPECT_EQ(mt, tag);
    ASSERT_EQ(probe(b_, tag, 0, &found, &mt, &ml), WEFT_PLUGIN_OK);
    EXPECT_EQ(found, 1) << "probe consumed the message";

    Op &r = new_op();
    ASSERT_EQ(recv(b_, in.data(), in.size(), tag, 0, r), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r));
    EXPECT_EQ(pattern_check(in.data(), in.size(), 3), in.size());
    ASSERT_EQ(probe(b_, tag, 0, &found, &mt, &ml), WEFT_PLUGIN_OK);
    EXPECT_EQ(found, 0) << "probe still finds a received message";
}

TEST_F(Control, CancelPostedReceive)
{
    const uint64_t tag = 0xca11;
    uint64_t buf = 0;
    Op &r = new_op();
    ASSERT_EQ(recv(b_, &buf, 8, tag, 0, r), WEFT_PLUGIN_OK);
    progress_for(std::chrono::milliseconds(5));
    ASSERT_EQ(cancel(b_, r), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r));
    EXPECT_EQ(r.c.status, WEFT_PLUGIN_ERR_CANCELED);

    /* Canceled and delivered: nothing left to cancel; an op never posted is not found. */
    EXPECT_EQ(cancel(b_, r), WEFT_PLUGIN_ERR_NOT_FOUND);
    Op &never = new_op();
    EXPECT_EQ(cancel(b_, never), WEFT_PLUGIN_ERR_NOT_FOUND);

    /* The canceled receive must not swallow a later message with its tag. */
    uint64_t v = 77, got = 0;
    Op &s = new_op(), &r2 = new_op();
    ASSERT_EQ(send(a_, a_to_b_, &v, 8, tag, s), WEFT_PLUGIN_OK);
    ASSERT_EQ(recv(b_, &got, 8, tag, 0, r2), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r2));
    EXPECT_EQ(got, v);
    EXPECT_EQ(buf, 0u) << "canceled receive buffer was written";
}

TEST_F(Control, CancelAfterMatchCompletesNormally)
{
    uint64_t v = 5, got = 0;
    Op &r = new_op(), &s = new_op();
    ASSERT_EQ(recv(b_, &got, 8, 0xc2, 0, r), WEFT_PLUGIN_OK);
    ASSERT_EQ(send(a_, a_to_b_, &v, 8, 0xc2, s), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r));
    EXPECT_EQ(cancel(b_, r), WEFT_PLUGIN_ERR_NOT_FOUND);
    EXPECT_EQ(r.c.status, WEFT_PLUGIN_OK);
    EXPECT_EQ(got, v);
}

TEST_F(Control, WaitFdWakesOnArrival)
{
    if (!(caps_.flags & WEFT_FABRIC_CAP_WAIT_FD))
        GTEST_SKIP() << plugin().desc->name << " has no WEFT_FABRIC_CAP_WAIT_FD";
    int fd = -1;
    ASSERT_EQ(ops().ep_wait_fd(b_.ep, &fd), WEFT_PLUGIN_OK);
    ASSERT_GE(fd, 0);
    /* Arm until the endpoint has nothing left to do. */
    ASSERT_TRUE(progress_until([&] {
        int rc = ops().ep_arm(b_.ep);
        EXPECT_TRUE(rc == WEFT_PLUGIN_OK || rc == WEFT_PLUGIN_ERR_AGAIN) << "ep_arm rc " << rc;
        return rc == WEFT_PLUGIN_OK;
    }));
    uint64_t v = 9, got = 0;
    Op &s = new_op();
    ASSERT_EQ(send(a_, a_to_b_, &v, 8, 0xfd, s), WEFT_PLUGIN_OK);
    /* Only a progresses here: b must be woken through its descriptor. */
    pollfd p{fd, POLLIN, 0};
    int n = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (n == 0 && std::chrono::steady_clock::now() < deadline) {
        progress_one(a_);
        n = poll(&p, 1, 1);
    }
    EXPECT_EQ(n, 1) << "wait fd did not become readable after a message arrived";
    Op &r = new_op();
    ASSERT_EQ(recv(b_, &got, 8, 0xfd, 0, r), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r));
    EXPECT_EQ(got, v);
}

} // namespace
} // namespace conformance
