// weft_get_stats: what this process dropped or refused, the processes it knows dead, and the
// collectives it ran through shared memory.
#include "base/stats.hpp"

#include <string>

#include "base/error.hpp"
#include "transport/peer_failure.hpp"
#include "transport/runtime.hpp"

namespace weft {
stats_counters g_stats;
}

using namespace weft;

extern "C" int weft_get_stats(weft_info *info) {
    if (int rc = runtime_check("weft_get_stats")) return rc;
    if (info == nullptr) return fail(WEFT_ERR_ARG, "weft_get_stats: info must not be NULL");
    runtime &r = rt();
    auto set = [&](const char *key, uint64_t v) { return weft_info_set(*info, key, std::to_string(v).c_str()); };
    if (int rc = weft_info_create(info)) return rc;
    set("dropped_am_packets", g_stats.am_dropped.load(std::memory_order_relaxed));
    set("refused_liveness_connections", g_stats.liveness_refused.load(std::memory_order_relaxed));
    set("shm_collectives", g_stats.shm_collectives.load(std::memory_order_relaxed));
    set("failed_processes", g_failure_epoch.load(std::memory_order_acquire));
    // The fabric's own counters, where it keeps them (ABI 1.4).
    if (r.fabric.plugin.fabric_ops.stats != nullptr) {
        weft_fabric_stats_t fs{};
        fs.struct_size = sizeof fs;
        if (r.fabric.plugin.fabric_ops.stats(r.fabric.fabric, &fs) == WEFT_PLUGIN_OK) {
            set("dropped_fabric_packets", fs.dropped_packets);
            set("refused_fabric_connections", fs.refused_connections);
        }
    }
    return WEFT_SUCCESS;
}
