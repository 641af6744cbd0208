// A VCI: one fabric endpoint with its connections, request pool and critical section.
// Implicit VCIs (WEFT_NUM_VCIS) serve conventional communicators; explicit ones
// (WEFT_RESERVED_VCIS) are each owned by one stream.
#pragma once
#include <sched.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "transport/peer_failure.hpp"
#include "transport/request.hpp"
#include "weft/plugin.h"

namespace weft {

// A remote endpoint: process and its VCI number there.  address is empty for implicit VCIs
// (published through the bootstrap at init) and holds the bytes for explicit ones
// (exchanged when a stream communicator is created).
struct remote_ep {
    int world_rank = 0;
    uint32_t vci_index = 0;
    std::string address;
};

// Work a layer above attaches to an endpoint, as MPICH registers progress hooks: collectives
// in flight, PGAS kernels.  The endpoint runs `progress` on each of its progresses and
// `peer_failed` when it applies new process failures (caller holds the endpoint in both);
// `state` is the layer's own (its list of work on this endpoint).  A hook whose state is null
// after its progress ran is removed, so an endpoint with nothing attached pays one branch.
struct vci_hook {
    int (*progress)(vci &v, vci_hook &self) = nullptr;
    void (*peer_failed)(vci &v, vci_hook &self) = nullptr;
    void *state = nullptr;
};
constexpr unsigned vci_max_hooks = 8;

// Runs v's hooks once (caller holds v); returns how many made progress.
int vci_run_hooks(vci &v);

struct vci {
    uint32_t index = 0;
    weft_fabric_ep_t *ep = nullptr;
    const weft_fabric_ops_v1_t *ops = nullptr;
    // (world rank, remote VCI) -> connection; shared by every communicator on this endpoint.
    std::unordered_map<uint64_t, weft_fabric_peer_t *> peers;
    request_pool requests;
    // Taken around fabric calls only when `locking`: conventional traffic under
    // WEFT_THREAD_MULTIPLE (cs is the global or this VCI's own mutex, per WEFT_THREAD_CS),
    // a shared stream endpoint, or a stream with a progress thread.
    std::mutex own_cs;
    std::mutex *cs = &own_cs;
    bool locking = false;
    // Hooks of the layers above (vci_hook), hooks[0, nhooks).
    unsigned nhooks = 0;
    vci_hook hooks[vci_max_hooks];
    // Sends abandoned after a process failed (a collective's, by coll_sched_abort) that the
    // fabric may still hold, with the scratch memory they read: kept until the endpoint closes.
    struct orphan {
        std::unique_ptr<local_request[]> reqs;
        std::vector<std::unique_ptr<char[]>> data;
    };
    std::vector<orphan> orphans;

    explicit vci(uint32_t i) : index(i), requests(i, this) {}

    void enter() {
        if (locking) cs->lock();
    }
    void leave() {
        if (locking) cs->unlock();
    }
    // The peer-failure epoch this endpoint has applied (peer_failure.hpp).
    uint32_t failure_epoch_seen = 0;

    // Caller holds the endpoint.
    int progress_held() {
        if (__builtin_expect(g_failure_epoch.load(std::memory_order_acquire) != failure_epoch_seen, 0))
            vci_apply_failures(*this);
        int n = ops->ep_progress(ep);
        if (__builtin_expect(nhooks != 0, 0)) n += vci_run_hooks(*this);
        return n;
    }
    int progress() {
        enter();
        int n = progress_held();
        leave();
        return n;
    }
};

// Returns r to its endpoint's pool and decrements its communicator's pending counter (caller
// holds the endpoint).
inline void request_release(request &r) {
    if (__builtin_expect(r.lightweight, 0)) return;  // shared, and never taken from the pool
    if (r.comm_pending != nullptr) --*r.comm_pending;
    r.comm_pending = nullptr;
    r.endpoint->requests.release(&r);
}

// The hook of v whose progress function is `progress`, or nullptr.
vci_hook *vci_hook_find(vci &v, int (*progress)(vci &, vci_hook &));
// Attaches a hook to v (caller holds v); nullptr when v already has vci_max_hooks.
vci_hook *vci_hook_add(vci &v, const vci_hook &hook);

// Progresses the implicit endpoints other than `self` once, skipping any another thread holds.
// A process blocked on one endpoint must still answer peers on the others: a connection's
// setup (UCX wireup over tcp, for one) needs both ends to progress.  Streams' endpoints are
// never touched: they belong to their stream's serial context.
void vci_progress_others(vci &self);

// Idle polls after which a waiting thread progresses other endpoints and yields its core:
// 512 normally; 4 (best measured with 4 ranks on 2 cores) when the node runs more processes
// than this process has cores, where a spinning waiter keeps the peer it waits for off the
// CPU (Open MPI yields then too).
// WEFT_POLLS_BEFORE_YIELD overrides.  Set at init.
extern unsigned g_polls_before_yield;

// Whether the fabric sends synchronous messages itself (tag_send_sync: set at init when it
// offers one and WEFT_SYNC_SEND does not say "ack"), and so the bits user receives and probes
// ignore besides their wildcards: match_sync_bit when the core acknowledges synchronous
// messages itself (they travel on context + 2), 0 when the fabric does, so that a receive with
// no wildcard has exact bits (UCX then matches it in its hashed expected queue, not by a
// search of every wildcard receive).
extern bool g_sync_by_fabric;
extern uint64_t g_user_recv_ignore;

// Progresses v until done() holds.  After a run of idle polls it progresses the other implicit
// endpoints and yields the core: with more processes than cores (the usual case in tests and
// on shared nodes) a pure spin keeps the peer it waits for from running.
template <class Done>
void vci_progress_until(vci &v, Done &&done) {
    unsigned idle = 0;
    while (!done()) {
        if (v.progress() > 0) {
            idle = 0;
        } else if (++idle >= g_polls_before_yield) {
            idle = 0;
            vci_progress_others(v);
            sched_yield();
        }
    }
}

// Address key of implicit endpoint `index` in the bootstrap key-value space.
std::string vci_address_key(uint32_t index);

// Opens the endpoint (locking: see vci::locking).
int vci_open(vci &v, const weft_fabric_ops_v1_t *ops, weft_fabric_t *fabric, bool locking);
// The endpoint's own address.
int vci_address(vci &v, std::string &address);
// The connection to a remote endpoint, made on first use (caller holds the endpoint).
int vci_peer(vci &v, const remote_ep &remote, weft_fabric_peer_t **peer);
// Disconnects every peer, flushing what was sent.
void vci_disconnect_all(vci &v);
// Closes the endpoint; connections still open are closed without a flush.
void vci_close(vci &v);

}  // namespace weft
