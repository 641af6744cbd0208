// Process-wide state between weft_init and weft_finalize.
#pragma once
#include <atomic>
#include <bitset>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap.hpp"
#include "loader.hpp"
#include "vci.hpp"

namespace weft {

enum class runtime_state : int { uninitialized = 0, initialized = 1, finalized = 2 };

// Context ids come in pairs (2k: point-to-point, 2k+1: collectives); pair 0 is
// WEFT_COMM_WORLD, pair 1 WEFT_COMM_SELF.
constexpr size_t context_pairs = 4096;

struct runtime {
    std::atomic<runtime_state> state{runtime_state::uninitialized};
    int thread_level = WEFT_THREAD_SINGLE;
    std::unique_ptr<bootstrap> boot;
    fabric_open fabric;
    std::map<std::string, std::string> hints;  // info given to weft_init_info
    int world_rank = 0, world_size = 1;

    // Endpoints: [0, num_implicit) implicit, then num_reserved explicit ones, opened when a
    // stream first takes them and kept open for reuse (their addresses stay valid for peers).
    // The vector is sized once at init and never resized, so lookups need no lock.
    std::vector<std::unique_ptr<vci>> vcis;
    uint32_t num_implicit = 1, num_reserved = 8;
    std::mutex global_cs;  // WEFT_THREAD_CS=global: shared by every implicit endpoint
    std::mutex pool_mutex;  // explicit endpoint ownership, shared round-robin
    std::vector<bool> explicit_taken;
    uint32_t shared_next = 0;

    std::mutex context_mutex;
    std::bitset<context_pairs> context_used;
};

// One per process; a plain global rather than a function-local static so that the hot path
// pays no initialization guard.
extern runtime g_runtime;
inline runtime &rt() { return g_runtime; }

int runtime_check_slow(const char *fn);
// WEFT_SUCCESS when initialized, else WEFT_ERR_NOT_INITIALIZED/FINALIZED with a detail
// naming the entry point.
inline int runtime_check(const char *fn) {
    if (__builtin_expect(g_runtime.state.load(std::memory_order_acquire) == runtime_state::initialized, 1))
        return WEFT_SUCCESS;
    return runtime_check_slow(fn);
}

// Maps a plugin return code to a WEFT_ERR_* code.
int plugin_error(int plugin_code);

// Services given to plugins (log, init hints).
const weft_plugin_host_t *plugin_host();

}  // namespace weft
