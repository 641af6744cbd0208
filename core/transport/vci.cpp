#include "transport/vci.hpp"

#include <vector>

#include "base/error.hpp"
#include "base/match.hpp"
#include "transport/runtime.hpp"

namespace weft {

std::string vci_address_key(uint32_t index) { return "weft.ep." + std::to_string(index); }

int vci_open(vci &v, const weft_fabric_ops_v1_t *ops, weft_fabric_t *fabric, bool locking) {
    runtime &r = rt();
    v.ops = ops;
    v.locking = locking;
    weft_fabric_ep_attr_t attr{};
    attr.struct_size = sizeof attr;
    // The core serializes every use of an endpoint (the caller's thread level, a stream's
    // serial context, or v.cs), so the fabric never needs locks of its own.
    attr.serial = 1;
    attr.complete = request_on_complete;
    // Every context the core posts is a request's (request_context), with this much before it.
    attr.context_space = g_request_space;
    int rc = ops->ep_open(fabric, &attr, &v.ep);
    if (rc != WEFT_PLUGIN_OK)
        return fail(plugin_error(rc), "fabric %s: opening endpoint %u failed (code %d)", r.fabric.plugin.name.c_str(),
                    v.index, rc);
    return WEFT_SUCCESS;
}

int vci_address(vci &v, std::string &address) {
    runtime &r = rt();
    size_t cap = r.fabric.caps.max_address_size ? r.fabric.caps.max_address_size : 4096;
    address.resize(cap);
    size_t len = cap;
    int rc = v.ops->ep_address(v.ep, address.data(), &len);
    if (rc != WEFT_PLUGIN_OK)
        return fail(plugin_error(rc), "fabric %s: reading the address of endpoint %u failed (code %d)",
                    r.fabric.plugin.name.c_str(), v.index, rc);
    address.resize(len);
    return WEFT_SUCCESS;
}

int vci_peer(vci &v, const remote_ep &remote, weft_fabric_peer_t **peer) {
    uint64_t key = (uint64_t(uint32_t(remote.world_rank)) << 32) | remote.vci_index;
    if (auto it = v.peers.find(key); it != v.peers.end()) {
        *peer = it->second;
        return WEFT_SUCCESS;
    }
    runtime &r = rt();
    std::string fetched;
    const std::string *address = &remote.address;
    if (address->empty()) {
        if (int rc = r.boot->get(remote.world_rank, vci_address_key(remote.vci_index), fetched)) return rc;
        address = &fetched;
    }
    weft_fabric_peer_t *p = nullptr;
    int rc = v.ops->ep_connect(v.ep, address->data(), address->size(), &p);
    if (rc != WEFT_PLUGIN_OK)
        return fail(plugin_error(rc), "fabric %s: connecting endpoint %u to endpoint %u of rank %d failed (code %d)",
                    r.fabric.plugin.name.c_str(), v.index, remote.vci_index, remote.world_rank, rc);
    v.peers.emplace(key, p);
    *peer = p;
    return WEFT_SUCCESS;
}

unsigned g_polls_before_yield = 512;
bool g_sync_by_fabric = false;
uint64_t g_user_recv_ignore = match_sync_bit;

int vci_run_hooks(vci &v) {
    int n = 0;
    // Downwards, so that a hook removed (swapped with the last) or added (appended) while the
    // hooks run is neither run twice nor skipped past its own turn.
    for (unsigned i = v.nhooks; i-- > 0;) {
        n += v.hooks[i].progress(v, v.hooks[i]);
        if (i < v.nhooks && v.hooks[i].state == nullptr) v.hooks[i] = v.hooks[--v.nhooks];
    }
    return n;
}

vci_hook *vci_hook_find(vci &v, int (*progress)(vci &, vci_hook &)) {
    for (unsigned i = 0; i < v.nhooks; ++i)
        if (v.hooks[i].progress == progress) return &v.hooks[i];
    return nullptr;
}

vci_hook *vci_hook_add(vci &v, const vci_hook &hook) {
    if (v.nhooks == vci_max_hooks) return nullptr;
    v.hooks[v.nhooks] = hook;
    return &v.hooks[v.nhooks++];
}

void vci_progress_others(vci &self) {
    runtime &r = rt();
    for (uint32_t i = 0; i < r.num_implicit; ++i) {
        vci &v = *r.vcis[i];
        if (&v == &self) continue;
        if (!v.locking) {
            v.progress_held();
        } else if (v.cs->try_lock()) {
            v.progress_held();
            v.cs->unlock();
        }
    }
}

void vci_disconnect_all(vci &v) {
    if (v.ep == nullptr) return;
    for (auto &[key, p] : v.peers) v.ops->ep_disconnect(v.ep, p);
    v.peers.clear();
}

void vci_close(vci &v) {
    if (v.ep == nullptr) return;
    v.peers.clear();
    v.ops->ep_close(v.ep);  // completes whatever the fabric still held, orphans included
    v.ep = nullptr;
    v.orphans.clear();
}

}  // namespace weft
