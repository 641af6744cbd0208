#include "vci.hpp"

#include <string>
#include <vector>

#include "error.hpp"
#include "runtime.hpp"

namespace weft {

std::string vci_address_key(uint32_t index) { return "weft.ep." + std::to_string(index); }

int vci_open(vci &v, const weft_fabric_ops_v1_t *ops, weft_fabric_t *fabric, bool locking) {
    runtime &r = rt();
    v.ops = ops;
    v.locking = locking;
    weft_fabric_ep_attr_t attr{};
    attr.struct_size = sizeof attr;
    // The core serializes every use of an endpoint (the caller's thread level, or v.cs), so
    // the fabric never needs locks of its own.
    attr.serial = 1;
    attr.complete = request_on_complete;
    int rc = ops->ep_open(fabric, &attr, &v.ep);
    if (rc != WEFT_PLUGIN_OK)
        return fail(plugin_error(rc), "fabric %s: opening endpoint %u failed (code %d)",
                    r.fabric.plugin.name.c_str(), v.index, rc);
    size_t cap = r.fabric.caps.max_address_size ? r.fabric.caps.max_address_size : 4096;
    std::vector<char> address(cap);
    size_t len = cap;
    rc = ops->ep_address(v.ep, address.data(), &len);
    if (rc != WEFT_PLUGIN_OK)
        return fail(plugin_error(rc), "fabric %s: reading the address of endpoint %u failed (code %d)",
                    r.fabric.plugin.name.c_str(), v.index, rc);
    v.peers.assign(static_cast<size_t>(r.world_size), nullptr);
    return r.boot->put(vci_address_key(v.index), std::string_view(address.data(), len));
}

int vci_peer(vci &v, int world_rank, weft_fabric_peer_t **peer) {
    weft_fabric_peer_t *p = v.peers[static_cast<size_t>(world_rank)];
    if (p != nullptr) {
        *peer = p;
        return WEFT_SUCCESS;
    }
    runtime &r = rt();
    std::string address;
    int rc = r.boot->get(world_rank, vci_address_key(v.index), address);
    if (rc != WEFT_SUCCESS) return rc;
    rc = v.ops->ep_connect(v.ep, address.data(), address.size(), &p);
    if (rc != WEFT_PLUGIN_OK)
        return fail(plugin_error(rc), "fabric %s: connecting endpoint %u to rank %d failed (code %d)",
                    r.fabric.plugin.name.c_str(), v.index, world_rank, rc);
    v.peers[static_cast<size_t>(world_rank)] = p;
    *peer = p;
    return WEFT_SUCCESS;
}

void vci_close(vci &v) {
    if (v.ep == nullptr) return;
    for (auto &p : v.peers) {
        if (p != nullptr) v.ops->ep_disconnect(v.ep, p);
        p = nullptr;
    }
    v.ops->ep_close(v.ep);
    v.ep = nullptr;
}

}  // namespace weft
