// Where the process stands between weft_init and weft_finalize, checked by every entry point.
#pragma once
#include <atomic>

#include "weft/weft.h"

namespace weft {

enum class runtime_state : int { uninitialized = 0, initialized = 1, finalized = 2 };

// Written by weft_init and weft_finalize (init/), read by every entry point.  A plain global,
// not a function-local static, so that the hot path pays no initialization guard.
extern std::atomic<runtime_state> g_runtime_state;

inline bool runtime_initialized() {
    return __builtin_expect(g_runtime_state.load(std::memory_order_acquire) == runtime_state::initialized, 1);
}

int runtime_check_slow(const char *fn);
// WEFT_SUCCESS when initialized, else WEFT_ERR_NOT_INITIALIZED/FINALIZED with a detail
// naming the entry point.
inline int runtime_check(const char *fn) {
    if (runtime_initialized()) return WEFT_SUCCESS;
    return runtime_check_slow(fn);
}

}  // namespace weft
