// The process's transport state between weft_init and weft_finalize: bootstrap, fabric and
// endpoints.
#pragma once
#include <atomic>
#include <bitset>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/lifecycle.hpp"
#include "bootstrap/bootstrap.hpp"
#include "loader/loader.hpp"
#include "loader/plugin_host.hpp"
#include "transport/vci.hpp"

namespace weft {

// Context ids come in blocks of four (base/match.hpp: point-to-point, collectives, synchronous
// sends, their acks), one per communicator, counted here; block 0 is WEFT_COMM_WORLD, block 1
// WEFT_COMM_SELF.  (The name is older than the blocks.)
constexpr size_t context_pairs = 4096;

struct runtime {
    int thread_level = WEFT_THREAD_SINGLE;
    std::unique_ptr<bootstrap> boot;
    fabric_open fabric;
    std::map<std::string, std::string> &hints = plugin_hints();  // info given to weft_init_info
    int world_rank = 0, world_size = 1;

    // Endpoints: [0, num_implicit) implicit, then num_reserved explicit ones, opened when a
    // stream first takes them and kept open for reuse (their addresses stay valid for peers).
    // The vector is sized once at init and never resized, so lookups need no lock.
    std::vector<std::unique_ptr<vci>> vcis;
    uint32_t num_implicit = 1, num_reserved = 8;
    bool lock_per_vci = false;  // WEFT_THREAD_CS=vci
    std::mutex global_cs;       // WEFT_THREAD_CS=global: shared by every implicit endpoint
    std::mutex pool_mutex;      // explicit endpoint ownership, shared round-robin
    std::vector<bool> explicit_taken;
    uint32_t shared_next = 0;

    std::mutex context_mutex;
    std::bitset<context_pairs> context_used;
};

// One per process; a plain global rather than a function-local static so that the hot path
// pays no initialization guard.
extern runtime g_runtime;
inline runtime &rt() { return g_runtime; }

}  // namespace weft
