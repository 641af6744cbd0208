/* Harness of the fabric conformance suite: loads a plugin by path and drives two (or more)
 * endpoints of one fabric in this process, recording every completion. */
#ifndef WEFT_CONFORMANCE_FABRIC_HARNESS_HPP
#define WEFT_CONFORMANCE_FABRIC_HARNESS_HPP

#include <weft/plugin.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace conformance {

struct LoadedPlugin {
    std::string path;
    std::string error; /* why loading failed; empty when loaded */
    const weft_plugin_v1_t *desc = nullptr;
    const weft_fabric_ops_v1_t *ops = nullptr;
};

/* Loads the plugin named on the command line (or WEFT_CONFORMANCE_PLUGIN) once. */
void plugin_select(const std::string &path);
const LoadedPlugin &plugin();
const weft_plugin_host_t *host();

/* Every context the harness posts is an Op, which starts with the space that
 * weft_fabric_ep_attr_t::context_space promises (context_space_offered() of it is offered). */
inline constexpr size_t kOpContextSpace = WEFT_FABRIC_CONTEXT_SPACE_MAX;
/* --context-space N, or kContextSpaceAsked (the default): what the plugin asks for. */
inline constexpr size_t kContextSpaceAsked = SIZE_MAX;
extern size_t g_context_space;
/* The context space the plugin asks for as the Weft core reads it: caps.context_space (ABI
 * minor 7) up to WEFT_FABRIC_CONTEXT_SPACE_MAX; 336 for minor 6 (what 1.6 cores gave); 0 before. */
size_t context_space_asked(const weft_fabric_caps_t &caps);

/* One posted operation.  complete() fills it; calls counts deliveries (must end at 1). */
struct Op {
    alignas(64) unsigned char fabric_space[kOpContextSpace];
    std::atomic<int> calls{0};
    weft_fabric_completion_t c{};
    int done() const { return calls.load(std::memory_order_acquire); }
};

/* Which plugin call the current thread is inside, so that complete() can check it was
 * called from ep_progress (or ep_disconnect/ep_close), or from the call posting that op. */
enum class Inside { nothing, progress, post, disconnect, close, peer_failed, other };

void complete_record(void *context, const weft_fabric_completion_t *c);
int completion_violations(); /* completions from a place the contract forbids */
void completion_violations_reset();

struct Endpoint {
    weft_fabric_ep_t *ep = nullptr;
    std::vector<uint8_t> address;
};

/* A fabric with two connected endpoints a and b (a_to_b: peer of a for b, and so on). */
class FabricTest : public ::testing::Test {
  protected:
    void SetUp() override;
    void TearDown() override;

    const weft_fabric_ops_v1_t &ops() const { return *plugin().ops; }

    Endpoint open_endpoint(int serial = 1);
    weft_fabric_peer_t *connect(const Endpoint &from, const Endpoint &to);
    void close_endpoint(Endpoint &e);
    /* ep_disconnect on a helper thread while this one progresses the other endpoints (and
     * `also`): a flush may need the peer to answer, as it would in another process. */
    int disconnect(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, std::vector<weft_fabric_ep_t *> also = {});

    Op &new_op();
    /* One post (inside the post scope), retried while the plugin says AGAIN, for up to 20 s,
     * progressing meanwhile; the result is the final return code. */
    int post_retrying(Op &op, const std::function<int()> &post);
    /* Post, retrying while the plugin says AGAIN; the result is the final return code. */
    int send(const Endpoint &from, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag, Op &op);
    /* tag_send_sync (ABI minor 9), retried while AGAIN. */
    int send_sync(const Endpoint &from, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag, Op &op);
    /* One tag_send, no retry (AGAIN comes back to the caller). */
    int send_once(const Endpoint &from, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag, Op &op);
    int recv(const Endpoint &on, void *buf, size_t len, uint64_t tag, uint64_t ignore, Op &op);
    /* tag_sendv / tag_recvv (ABI minor 8), retried while AGAIN; has_iov: the plugin has both. */
    bool has_iov() const;
    int sendv(const Endpoint &from, weft_fabric_peer_t *peer, const weft_fabric_iov_t *iov, size_t count, uint64_t tag,
              Op &op);
    int recvv(const Endpoint &on, const weft_fabric_iov_t *iov, size_t count, uint64_t tag, uint64_t ignore, Op &op);
    int cancel(const Endpoint &on, Op &op);
    int probe(const Endpoint &on, uint64_t tag, uint64_t ignore, int *found, uint64_t *msg_tag, size_t *msg_len);
    /* ep_peer_failed (ABI minor 4), which may complete the peer's sends itself.  has_peer_failed:
     * false where the plugin's table lacks it (NULL, or a minor before 4, whose table is too
     * short to read the field from). */
    bool has_peer_failed() const;
    int peer_failed(const Endpoint &on, weft_fabric_peer_t *peer);

    /* Progress every open endpoint once; returns completions delivered. */
    int progress_all();
    int progress_one(const Endpoint &e);
    /* Progress only e until pred() holds; false on timeout. */
    bool progress_one_until(const Endpoint &e, const std::function<bool()> &pred, std::chrono::milliseconds timeout);
    /* Progress until pred() holds; false on timeout. */
    bool progress_until(const std::function<bool()> &pred,
                        std::chrono::milliseconds timeout = std::chrono::seconds(20));
    bool wait(const Op &op, std::chrono::milliseconds timeout = std::chrono::seconds(20));
    void progress_for(std::chrono::milliseconds d);

    weft_fabric_t *fabric_ = nullptr;
    weft_fabric_caps_t caps_{};
    /* What every endpoint is offered: g_context_space, or exactly what the plugin asks. */
    size_t context_space_ = 0;
    Endpoint a_, b_;
    weft_fabric_peer_t *a_to_b_ = nullptr, *b_to_a_ = nullptr;
    std::vector<weft_fabric_ep_t *> open_; /* endpoints progress_all drives */
    std::deque<Op> ops_;                   /* every op posted (stable addresses) */
    std::vector<Op *> posted_;             /* ops whose post returned OK */
    std::vector<std::pair<weft_fabric_ep_t *, weft_fabric_peer_t *>> peers_;
};

/* Byte pattern that differs per message (seed) and per position. */
void pattern_fill(uint8_t *p, size_t n, uint32_t seed);
/* Index of the first wrong byte, or n when all are right. */
size_t pattern_check(const uint8_t *p, size_t n, uint32_t seed);

}  // namespace conformance

#endif
