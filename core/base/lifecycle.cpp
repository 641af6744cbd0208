#include "base/lifecycle.hpp"

#include "base/error.hpp"

namespace weft {

std::atomic<runtime_state> g_runtime_state{runtime_state::uninitialized};

int runtime_check_slow(const char *fn) {
    switch (g_runtime_state.load(std::memory_order_acquire)) {
        case runtime_state::initialized: return WEFT_SUCCESS;
        case runtime_state::uninitialized: return fail(WEFT_ERR_NOT_INITIALIZED, "%s called before weft_init", fn);
        default: return fail(WEFT_ERR_FINALIZED, "%s called after weft_finalize", fn);
    }
}

}  // namespace weft
