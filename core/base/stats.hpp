// Process-wide counters for weft_get_stats: hostile or malformed input that was dropped
// (incremented only on the paths that drop something), and collectives that ran through a
// node's shared memory (once per blocking collective, never on the point-to-point path).
#pragma once
#include <atomic>
#include <cstdint>

namespace weft {

struct stats_counters {
    std::atomic<uint64_t> am_dropped{0};        // active messages dropped as malformed
    std::atomic<uint64_t> liveness_refused{0};  // liveness connections without a valid hello
    std::atomic<uint64_t> shm_collectives{0};   // collectives run through coll_shm (coll/coll_shm.hpp)
};
extern stats_counters g_stats;

}  // namespace weft
