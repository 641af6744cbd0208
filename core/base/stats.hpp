// Process-wide counters of hostile or malformed input that was dropped, for weft_get_stats.
// Incremented only on the paths that drop something, never on the hot path.
#pragma once
#include <atomic>
#include <cstdint>

namespace weft {

struct stats_counters {
    std::atomic<uint64_t> am_dropped{0};        // active messages dropped as malformed
    std::atomic<uint64_t> liveness_refused{0};  // liveness connections without a valid hello
};
extern stats_counters g_stats;

}  // namespace weft
