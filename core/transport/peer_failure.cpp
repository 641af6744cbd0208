#include "transport/peer_failure.hpp"

#include <memory>
#include <mutex>
#include <vector>

#include "base/error.hpp"
#include "transport/vci.hpp"

namespace weft {

std::atomic<uint32_t> g_failure_epoch{0};

namespace {

std::mutex g_reasons_mutex;
std::vector<std::string> g_reasons;  // per world rank; empty while alive
std::unique_ptr<std::atomic<uint8_t>[]> g_failed;
int g_size = 0;

}  // namespace

void peer_failure_init(int world_size) {
    g_failed.reset(new std::atomic<uint8_t>[static_cast<size_t>(world_size)]);
    for (int i = 0; i < world_size; ++i) g_failed[i].store(0, std::memory_order_relaxed);
    {
        std::lock_guard g(g_reasons_mutex);
        g_reasons.assign(static_cast<size_t>(world_size), std::string());
    }
    g_size = world_size;
    g_failure_epoch.store(0, std::memory_order_release);
}

void peer_failure_clear() {
    g_failure_epoch.store(0, std::memory_order_release);
    g_size = 0;
    g_failed.reset();
    std::lock_guard g(g_reasons_mutex);
    g_reasons.clear();
}

void peer_failure_record(int world_rank, const std::string &why) {
    if (world_rank < 0 || world_rank >= g_size) return;
    {
        std::lock_guard g(g_reasons_mutex);
        if (!g_reasons[static_cast<size_t>(world_rank)].empty()) return;
        g_reasons[static_cast<size_t>(world_rank)] = why;
    }
    log(WEFT_LOG_WARN, "rank %d failed: %s", world_rank, why.c_str());
    g_failed[world_rank].store(1, std::memory_order_release);
    // One writer (the monitor thread), so a load and a store suffice.
    g_failure_epoch.store(g_failure_epoch.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

bool peer_failed_slow(int world_rank) {
    return world_rank >= 0 && world_rank < g_size && g_failed[world_rank].load(std::memory_order_acquire) != 0;
}

int group_first_failed(const peer_group &g) {
    if (g_failure_epoch.load(std::memory_order_acquire) == 0) return -1;
    for (size_t i = 0; i < g.world_ranks.size(); ++i)
        if (peer_failed_slow(g.world_ranks[i])) return static_cast<int>(i);
    return -1;
}

bool group_has_failed(const peer_group &g) { return group_first_failed(g) >= 0; }

int fail_proc(const char *what, int comm_rank, int world_rank) {
    std::string why;
    {
        std::lock_guard g(g_reasons_mutex);
        if (world_rank >= 0 && static_cast<size_t>(world_rank) < g_reasons.size())
            why = g_reasons[static_cast<size_t>(world_rank)];
    }
    if (comm_rank == world_rank)
        return fail(WEFT_ERR_PROC_FAILED, "%s: rank %d has failed (%s)", what, comm_rank, why.c_str());
    return fail(WEFT_ERR_PROC_FAILED, "%s: rank %d (world rank %d) has failed (%s)", what, comm_rank, world_rank,
                why.c_str());
}

void vci_drain(vci &v) {
    for (int i = 0; i < 64 && v.ops->ep_progress(v.ep) > 0; ++i) {}
}

void vci_apply_failures(vci &v) {
    v.failure_epoch_seen = g_failure_epoch.load(std::memory_order_acquire);
    // Sends: the fabric completes those in flight to the dead and refuses new ones.
    if (v.ops->ep_peer_failed != nullptr)
        for (auto &[key, peer] : v.peers)
            if (peer_failed_slow(static_cast<int>(key >> 32))) v.ops->ep_peer_failed(v.ep, peer);
    // Receives waiting for the dead: first deliver what it sent before it died (it may sit
    // in this process's queues), then cancel the rest.  A cancel that comes too late (the
    // message matched) lets the receive complete as it would have.
    vci_drain(v);
    v.requests.for_each_in_use([&](request &r) {
        if (r.op != request::kind::recv || r.failing || r.group == nullptr ||
            r.complete.load(std::memory_order_acquire))
            return;
        const peer_group &g = *r.group;
        bool hit = r.peer == WEFT_ANY_SOURCE ? group_has_failed(g)
                                             : peer_failed_slow(g.world_ranks[static_cast<size_t>(r.peer)]);
        if (!hit) return;
        r.failing = true;
        if (v.ops->cancel(v.ep, request_context(r)) != WEFT_PLUGIN_OK) r.failing = false;
    });
    for (unsigned i = 0; i < v.nhooks; ++i)
        if (v.hooks[i].peer_failed != nullptr) v.hooks[i].peer_failed(v, v.hooks[i]);
}

}  // namespace weft
