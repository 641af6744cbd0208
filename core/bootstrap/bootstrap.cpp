// bootstrap_open: picks the bootstrap from the environment the launcher left (bootstrap.hpp).
#include "bootstrap/bootstrap.hpp"

#include <cstdlib>

#include "base/error.hpp"
#include "weft/weft.h"

namespace weft {

// Each implementation file defines its opener; they are only reached through bootstrap_open.
int bootstrap_weftrun_open(std::unique_ptr<bootstrap> &out);
int bootstrap_pmi1_open(std::unique_ptr<bootstrap> &out);
int bootstrap_singleton_open(std::unique_ptr<bootstrap> &out);
#ifdef WEFT_HAVE_PMIX
int bootstrap_pmix_open(std::unique_ptr<bootstrap> &out);
#endif

namespace {
bool env_set(const char *name) {
    const char *v = std::getenv(name);
    return v != nullptr && *v != '\0';
}
}  // namespace

int bootstrap_open(std::unique_ptr<bootstrap> &out) {
    out.reset();
    if (env_set("WEFT_KVS")) return bootstrap_weftrun_open(out);
    if (env_set("PMIX_RANK") && env_set("PMIX_NAMESPACE")) {
#ifdef WEFT_HAVE_PMIX
        return bootstrap_pmix_open(out);
#else
        return fail(WEFT_ERR_BOOTSTRAP,
                    "started by a PMIx launcher (PMIX_RANK and PMIX_NAMESPACE are set), but Weft was "
                    "built without PMIx: install libpmix-dev and rebuild Weft (WEFT_WITH_PMIX=ON), "
                    "or start the program with weftrun");
#endif
    }
    if (env_set("PMI_FD")) return bootstrap_pmi1_open(out);
    return bootstrap_singleton_open(out);
}

}  // namespace weft
