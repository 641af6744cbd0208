/* ep_peer_failed (ABI minor 4): the core's liveness monitor says the process behind a peer
 * died.  Sends in flight to it fail at once with PEER_FAILED, later sends are refused, and
 * disconnecting it does not wait for it.  In one process the "dead" peer is of course alive,
 * so nothing here may need it to act, and the plugin must cope with its still being there. */
#include "fabric_harness.hpp"

#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <vector>

namespace conformance {
namespace {

constexpr uint64_t TAG = 0xfa11'0000'0000'0000ull;

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class PeerFailure : public FabricTest {
  protected:
    void SetUp() override {
        FabricTest::SetUp();
        if (!IsSkipped() && !HasFatalFailure() && !has_peer_failed())
            GTEST_SKIP() << plugin().desc->name << " (ABI " << plugin().desc->abi_major << "."
                         << plugin().desc->abi_minor << ") has no ep_peer_failed";
    }
    /* a reports b failed (a_b: a's connection to b; b_a: b's to a, both disconnected here). */
    void fail_peer(const Endpoint &a, const Endpoint &b, weft_fabric_peer_t *a_b, weft_fabric_peer_t *b_a);
    /* Send buffers outlive TearDown (members go after it): a fabric whose peer is not really
     * dead may still hold a buffer it was told to give up. */
    std::vector<uint8_t> big_, small_, late_, big_in_;
};

void PeerFailure::fail_peer(const Endpoint &a, const Endpoint &b, weft_fabric_peer_t *a_b, weft_fabric_peer_t *b_a) {
    /* Rendezvous-sized (above eager_size) and small, both with no receive at b: the big one
     * cannot finish without b.  A fabric without a rendezvous (eager_size that large) buffers
     * at the receiver: a bigger message, still on its way after a little progress. */
    big_.resize(caps_.eager_size < (4u << 20) ? 4u << 20 : 64u << 20);
    small_.resize(64);
    late_.resize(8);
    pattern_fill(big_.data(), big_.size(), 1);
    pattern_fill(small_.data(), small_.size(), 2);
    /* One message first, so that the connection is up (a fabric may hold sends back until
     * the peer answered its first contact) and the sends below are with the fabric. */
    uint64_t hello = 1, got = 0, unused = 0;
    Op &wr = new_op(), &ws = new_op();
    ASSERT_EQ(recv(b, &got, sizeof got, TAG, 0, wr), WEFT_PLUGIN_OK);
    ASSERT_EQ(send(a, a_b, &hello, sizeof hello, TAG, ws), WEFT_PLUGIN_OK);
    ASSERT_TRUE(progress_until([&] { return wr.done() && ws.done(); })) << "first message";

    Op &r = new_op(), &sb = new_op(), &ss = new_op();
    /* A receive on a, which ep_peer_failed must leave alone. */
    ASSERT_EQ(recv(a, &unused, sizeof unused, TAG | 0xa, 0, r), WEFT_PLUGIN_OK);
    ASSERT_EQ(send(a, a_b, big_.data(), big_.size(), TAG | 1, sb), WEFT_PLUGIN_OK);
    ASSERT_EQ(send(a, a_b, small_.data(), small_.size(), TAG | 2, ss), WEFT_PLUGIN_OK);
    for (int i = 0; i < 3; ++i) /* a little progress on a alone */
        progress_one(a);

    /* What completed already (an eager send, or any send where the fabric buffers) stays
     * completed; what is still in flight must fail. */
    const bool big_done = sb.done() != 0, small_done = ss.done() != 0;
    if (big_done && big_.size() > caps_.eager_size)
        printf("note: the %zu-byte send (eager_size %zu) completed with no receive posted\n", big_.size(),
               caps_.eager_size);
    RecordProperty("in_flight", (big_done ? 0 : 1) + (small_done ? 0 : 1));
    if (getenv("WEFT_CONFORMANCE_VERBOSE"))
        printf("in flight at ep_peer_failed: big %s, small %s\n", big_done ? "no" : "yes", small_done ? "no" : "yes");

    auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(peer_failed(a, a_b), WEFT_PLUGIN_OK);
    EXPECT_LT(seconds_since(t0), 1.0) << "ep_peer_failed must not wait for the peer";
    /* Only a progresses: nothing may need b (it is dead, as far as a knows). */
    EXPECT_TRUE(progress_one_until(
        a, [&] { return sb.done() && ss.done(); }, std::chrono::seconds(2)))
        << "sends in flight to the failed peer did not complete within 2 s (big " << sb.done() << ", small "
        << ss.done() << ")";
    for (auto [op, was_done, what] :
         {std::tuple<Op *, bool, const char *>{&sb, big_done, "big"}, {&ss, small_done, "small"}}) {
        if (!op->done()) continue;
        if (was_done) {
            EXPECT_EQ(op->c.status, WEFT_PLUGIN_OK) << what << " send, completed before";
        } else {
            EXPECT_EQ(op->c.status, WEFT_PLUGIN_ERR_PEER_FAILED) << what << " send in flight at ep_peer_failed";
        }
    }
    EXPECT_EQ(r.done(), 0) << "ep_peer_failed completed a receive (status " << r.c.status << ")";

    /* A later send fails at once, or posts and fails; it never hangs. */
    Op &late = new_op();
    t0 = std::chrono::steady_clock::now();
    int rc;
    do { /* not send(): that retries AGAIN for 20 s */
        rc = send_once(a, a_b, late_.data(), late_.size(), TAG | 3, late);
        if (rc == WEFT_PLUGIN_ERR_AGAIN) progress_one(a);
    } while (rc == WEFT_PLUGIN_ERR_AGAIN && seconds_since(t0) < 2.0);
    if (rc == WEFT_PLUGIN_OK) {
        EXPECT_TRUE(progress_one_until(
            a, [&] { return late.done() != 0; }, std::chrono::seconds(2)))
            << "a send posted to the failed peer did not complete within 2 s";
        if (late.done()) {
            EXPECT_EQ(late.c.status, WEFT_PLUGIN_ERR_PEER_FAILED) << "send after ep_peer_failed";
        }
    } else {
        EXPECT_EQ(rc, WEFT_PLUGIN_ERR_PEER_FAILED) << "tag_send to the failed peer";
    }

    /* Told again: harmless, and nothing completes twice. */
    EXPECT_EQ(peer_failed(a, a_b), WEFT_PLUGIN_OK) << "ep_peer_failed a second time";
    progress_one_until(
        a, [] { return false; }, std::chrono::milliseconds(50));
    EXPECT_EQ(sb.done(), 1) << "big send completed " << sb.done() << " times";
    EXPECT_EQ(ss.done(), 1) << "small send completed " << ss.done() << " times";
    EXPECT_EQ(r.done(), 0) << "ep_peer_failed completed a receive";

    /* The peer is not really dead here: let it take the big message now.  Whatever the
     * fabric makes of that (delivered, failed, never matched), the send completed once, and
     * the fabric's late report of it must be swallowed. */
    big_in_.resize(big_.size());
    Op &rb = new_op();
    ASSERT_EQ(recv(b, big_in_.data(), big_in_.size(), TAG | 1, 0, rb), WEFT_PLUGIN_OK);
    progress_until([&] { return rb.done() != 0; }, std::chrono::milliseconds(300));
    progress_for(std::chrono::milliseconds(20));
    EXPECT_EQ(sb.done(), 1) << "big send completed " << sb.done() << " times once the peer took the message";
    EXPECT_EQ(ss.done(), 1) << "small send completed " << ss.done() << " times";
    if (getenv("WEFT_CONFORMANCE_VERBOSE"))
        printf("b's late receive of the big message: %s (status %d)\n", rb.done() ? "completed" : "pending",
               rb.c.status);
    if (!rb.done()) {
        EXPECT_EQ(cancel(b, rb), WEFT_PLUGIN_OK) << "cancel of b's unmatched receive";
    }

    /* Disconnect does not flush to the dead peer. */
    std::erase(peers_, std::pair<weft_fabric_ep_t *, weft_fabric_peer_t *>{a.ep, a_b});
    t0 = std::chrono::steady_clock::now();
    rc = disconnect(a.ep, a_b);
    double secs = seconds_since(t0);
    EXPECT_TRUE(rc == WEFT_PLUGIN_OK || rc == WEFT_PLUGIN_ERR_PEER_FAILED)
        << "ep_disconnect of the failed peer: rc " << rc;
    EXPECT_LT(secs, 0.5) << "ep_disconnect of a failed peer took " << secs << " s";
    /* b's connection to a may share transport state with the one a dropped without a word
     * (UCX in error mode peer then fails b's too, as it would for a real death): b may hear
     * of it, so its disconnect may answer PEER_FAILED. */
    std::erase(peers_, std::pair<weft_fabric_ep_t *, weft_fabric_peer_t *>{b.ep, b_a});
    rc = disconnect(b.ep, b_a);
    EXPECT_TRUE(rc == WEFT_PLUGIN_OK || rc == WEFT_PLUGIN_ERR_PEER_FAILED)
        << "ep_disconnect of b's connection to a: rc " << rc;

    /* The receive still works as a receive: it cancels normally. */
    ASSERT_EQ(cancel(a, r), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r, std::chrono::seconds(5)));
    EXPECT_EQ(r.c.status, WEFT_PLUGIN_ERR_CANCELED);
}

TEST_F(PeerFailure, InFlightSendsFailAndLaterSendsAreRefused) {
    fail_peer(a_, b_, a_to_b_, b_to_a_);
    a_to_b_ = b_to_a_ = nullptr;
}

/* The same on endpoints opened shared (attr->serial 0), where the plugin takes its locks. */
TEST_F(PeerFailure, SharedEndpoints) {
    Endpoint c = open_endpoint(0), d = open_endpoint(0);
    ASSERT_NE(c.ep, nullptr);
    ASSERT_NE(d.ep, nullptr);
    weft_fabric_peer_t *c_to_d = connect(c, d), *d_to_c = connect(d, c);
    ASSERT_NE(c_to_d, nullptr);
    ASSERT_NE(d_to_c, nullptr);
    fail_peer(c, d, c_to_d, d_to_c);
}

}  // namespace
}  // namespace conformance
