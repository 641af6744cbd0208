// A VCI: one fabric endpoint with its peers, request pool and critical section.
#pragma once
#include <sched.h>

#include <mutex>
#include <vector>

#include "request.hpp"
#include "weft/plugin.h"

namespace weft {

struct vci {
    uint32_t index = 0;
    weft_fabric_ep_t *ep = nullptr;
    const weft_fabric_ops_v1_t *ops = nullptr;
    std::vector<weft_fabric_peer_t *> peers;  // by world rank; connected on first send
    request_pool requests;
    // Taken around fabric calls only when the thread level is WEFT_THREAD_MULTIPLE.
    std::mutex cs;
    bool locking = false;

    explicit vci(uint32_t i) : index(i), requests(i) {}

    void enter() {
        if (locking) cs.lock();
    }
    void leave() {
        if (locking) cs.unlock();
    }
    int progress() {
        enter();
        int n = ops->ep_progress(ep);
        leave();
        return n;
    }
};

// Progresses v until done() holds.  After a run of idle polls it yields the core: with more
// processes than cores (the usual case in tests and on shared nodes) a pure spin keeps the
// peer it waits for from running.
template <class Done>
void vci_progress_until(vci &v, Done &&done) {
    unsigned idle = 0;
    while (!done()) {
        if (v.progress() > 0) {
            idle = 0;
        } else if (++idle == 512) {
            idle = 0;
            sched_yield();
        }
    }
}

// Address key of endpoint `index` in the bootstrap key-value space.
std::string vci_address_key(uint32_t index);

// Opens the endpoint and publishes its address (the caller fences).  locking: take v.cs around
// fabric calls (several threads may use the endpoint).
int vci_open(vci &v, const weft_fabric_ops_v1_t *ops, weft_fabric_t *fabric, bool locking);
// Returns the connected peer for a world rank, connecting on first use (caller holds cs).
int vci_peer(vci &v, int world_rank, weft_fabric_peer_t **peer);
// Disconnects every peer and closes the endpoint.
void vci_close(vci &v);

}  // namespace weft
