// A VCI: one fabric endpoint with its peers, request pool and critical section.
#pragma once
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

// Address key of endpoint `index` in the bootstrap key-value space.
std::string vci_address_key(uint32_t index);

// Opens the endpoint and publishes its address (the caller fences).
int vci_open(vci &v, const weft_fabric_ops_v1_t *ops, weft_fabric_t *fabric, bool serial);
// Returns the connected peer for a world rank, connecting on first use (caller holds cs).
int vci_peer(vci &v, int world_rank, weft_fabric_peer_t **peer);
// Disconnects every peer and closes the endpoint.
void vci_close(vci &v);

}  // namespace weft
