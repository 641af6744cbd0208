// weft_init / weft_finalize and the environment calls.
#include "transport/runtime.hpp"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "coll/coll_check.hpp"
#include "comm/comm.hpp"
#include "enqueue/enqueue.hpp"
#include "base/error.hpp"
#include "base/finalize_hooks.hpp"
#include "base/match.hpp"
#include "base/info.hpp"
#include "transport/liveness.hpp"

namespace weft {

namespace {

int copy_hints(weft_info info, std::map<std::string, std::string> &out) {
    out.clear();
    if (info == WEFT_INFO_NULL) return WEFT_SUCCESS;
    int n = 0;
    if (int rc = weft_info_get_nkeys(info, &n)) return fail(rc, "weft_init_info: invalid info handle 0x%x", info);
    for (int i = 0; i < n; ++i) {
        char key[WEFT_MAX_INFO_KEY + 1];
        if (int rc = weft_info_get_nthkey(info, i, key)) return rc;
        if (auto v = info_lookup(info, key)) out[key] = *v;
    }
    return WEFT_SUCCESS;
}

// Reads a count from the environment; a malformed or out-of-range value is an error naming
// the variable, not a silent default.
// Reads a variable that takes one of two words (unset or empty: the first); any other value is
// an error naming the variable.  is_second: it says the second.
int env_either(const char *name, const char *first, const char *second, bool &is_second) {
    const char *v = std::getenv(name);
    is_second = v != nullptr && std::strcmp(v, second) == 0;
    if (v == nullptr || *v == '\0' || is_second || std::strcmp(v, first) == 0) return WEFT_SUCCESS;
    return fail(WEFT_ERR_ARG, "%s='%s' is not one of %s|%s", name, v, first, second);
}

int env_count(const char *name, uint32_t fallback, uint32_t lo, uint32_t hi, uint32_t &out) {
    const char *v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        out = fallback;
        return WEFT_SUCCESS;
    }
    char *end = nullptr;
    errno = 0;
    unsigned long n = std::strtoul(v, &end, 10);
    if (errno != 0 || *end != '\0' || v[0] == '-' || n < lo || n > hi)
        return fail(WEFT_ERR_ARG, "%s='%s' is not a number in %u..%u", name, v, lo, hi);
    out = static_cast<uint32_t>(n);
    return WEFT_SUCCESS;
}

// Processes on this node, as the launcher tells it (weftrun, Open MPI, MPICH's Hydra, Slurm);
// 0 when unknown.
uint32_t local_processes() {
    for (const char *name : {"WEFT_LOCAL_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMIX_LOCAL_SIZE"})
        if (const char *v = std::getenv(name)) return static_cast<uint32_t>(std::strtoul(v, nullptr, 10));
    // Slurm: "4" or "4(x2),3" per node; the first node's count is this one's when uniform.
    if (const char *v = std::getenv("SLURM_STEP_TASKS_PER_NODE"))
        return static_cast<uint32_t>(std::strtoul(v, nullptr, 10));
    return 0;
}

int read_yield_config() {
    cpu_set_t set;
    uint32_t cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? static_cast<uint32_t>(CPU_COUNT(&set)) : 1;
    uint32_t procs = std::max(local_processes(), 1u);
    uint32_t polls;
    if (int rc = env_count("WEFT_POLLS_BEFORE_YIELD", procs > cpus ? 4 : 512, 1, 1u << 30, polls)) return rc;
    g_polls_before_yield = polls;
    // Each process with a GPU queue runs its own thread and Weft's enqueue thread: spin long
    // only where both have a core.
    uint32_t spin_us;
    if (int rc = env_count("WEFT_ENQUEUE_SPIN_US", 2 * procs > cpus ? 20 : 1000, 0, 1000000, spin_us)) return rc;
    g_enqueue_spin_us = spin_us;
    return WEFT_SUCCESS;
}

int read_endpoint_config(runtime &r) {
    if (int rc = read_yield_config()) return rc;
    if (int rc = env_count("WEFT_NUM_VCIS", 1, 1, 64, r.num_implicit)) return rc;
    if (int rc = env_count("WEFT_RESERVED_VCIS", 8, 0, 191, r.num_reserved)) return rc;
    uint32_t check;
    if (int rc = env_count("WEFT_COLL_CHECK", 0, 0, 1, check)) return rc;
    g_coll_check = check != 0;
    return env_either("WEFT_THREAD_CS", "global", "vci", r.lock_per_vci);
}

// Opens the implicit endpoints and publishes their addresses (the caller fences).  Explicit
// ones open when a stream first takes them.
int open_implicit_endpoints(runtime &r) {
    bool multiple = r.thread_level == WEFT_THREAD_MULTIPLE;
    // Synchronous sends: the fabric's own when it has one (every process of the job loads the
    // same fabric, so senders and receivers agree), unless WEFT_SYNC_SEND=ack asks for the
    // core's acknowledgement protocol.
    bool ack = false;
    if (int rc = env_either("WEFT_SYNC_SEND", "fabric", "ack", ack)) return rc;
    g_sync_by_fabric = r.fabric.plugin.fabric_ops.tag_send_sync != nullptr && !ack;
    g_user_recv_ignore = g_sync_by_fabric ? 0 : match_sync_bit;
    // Requests are laid out around the context space the fabric asked for (the loader's
    // answer for plugins too old to ask), before any endpoint, and so any pool, exists.
    request_space_set(r.fabric.caps.context_space);
    r.vcis.clear();
    r.vcis.resize(r.num_implicit + r.num_reserved);
    r.explicit_taken.assign(r.num_reserved, false);
    r.shared_next = 0;
    for (uint32_t i = 0; i < r.num_implicit; ++i) {
        r.vcis[i] = std::make_unique<vci>(i);
        vci &v = *r.vcis[i];
        if (!r.lock_per_vci) v.cs = &r.global_cs;
        if (int rc = vci_open(v, &r.fabric.plugin.fabric_ops, r.fabric.fabric, multiple)) return rc;
        std::string address;
        if (int rc = vci_address(v, address)) return rc;
        if (int rc = r.boot->put(vci_address_key(i), address)) return rc;
    }
    return WEFT_SUCCESS;
}

// Reads every process's implicit endpoint addresses (kept by the bootstrap), for a launcher
// connection that another library may end before weft_finalize (bootstrap::launcher_shared):
// later connections are made on demand and could no longer ask the launcher.
int read_addresses_now(runtime &r) {
    std::string address;
    for (int rank = 0; rank < r.world_size; ++rank)
        for (uint32_t i = 0; i < r.num_implicit; ++i)
            if (int rc = r.boot->get(rank, vci_address_key(i), address)) return rc;
    return WEFT_SUCCESS;
}

enum class shutdown_kind { finalize, failed_init };

// The one shutdown path, top layer down: weft_finalize, where every process of the job is here
// too, and an init that failed part way (nothing above the endpoints exists yet, and the other
// processes may never come, so there is no fence and no flush).  Returns the first error.
int shutdown(runtime &r, shutdown_kind kind) {
    const bool finalize = kind == shutdown_kind::finalize;
    int rc = WEFT_SUCCESS;
    auto keep_first = [&rc](int code) {
        if (rc == WEFT_SUCCESS) rc = code;
    };
    // Layers above the endpoints (enqueue thread, streams, GPU runtimes, PGAS contexts) finish
    // while the endpoints exist; contexts the program did not free withdraw their receives.
    finalize_hooks_run(finalize_prio_endpoints);
    if (finalize) {
        keep_first(r.boot->fence());
        // Flushing a connection needs its peer to progress the endpoint at the far end, and
        // every process is now closing all of its endpoints, in no common order.  So each
        // endpoint gets its own thread: all of them progress at once and every flush can
        // complete.  (Closing without a flush is not an option: UCX leaks forcibly closed
        // endpoints unless they use peer error handling, which excludes shared memory.)
        // Connections to dead processes first learn that they are dead, so they close at once.
        std::vector<std::thread> closers;
        for (auto &v : r.vcis)
            if (v && !v->peers.empty())
                closers.emplace_back([&v] {
                    v->enter();
                    vci_apply_failures(*v);
                    v->leave();
                    vci_disconnect_all(*v);
                });
        for (auto &t : closers) t.join();
        keep_first(r.boot->fence());
    }
    liveness_close();  // every process is past its last use of the others
    for (auto &v : r.vcis)
        if (v) vci_close(*v);
    r.vcis.clear();
    finalize_hooks_run();  // communicators and ops
    if (r.fabric.fabric != nullptr) r.fabric.plugin.fabric_ops.finalize(r.fabric.fabric);
    r.fabric = fabric_open{};
    if (r.boot) keep_first(r.boot->finalize());
    r.boot.reset();
    peer_failure_clear();
    return rc;
}

int init(int required, weft_info info, int *provided) {
    runtime &r = rt();
    switch (g_runtime_state.load()) {
        case runtime_state::initialized: return fail(WEFT_ERR_ALREADY_INITIALIZED, "weft_init called twice");
        case runtime_state::finalized:
            return fail(WEFT_ERR_FINALIZED, "weft_init called after weft_finalize (Weft cannot be re-initialized)");
        default: break;
    }
    if (required < WEFT_THREAD_SINGLE || required > WEFT_THREAD_MULTIPLE)
        return fail(WEFT_ERR_ARG, "weft_init_thread: required thread level %d is not one of WEFT_THREAD_*", required);
    if (int rc = copy_hints(info, r.hints)) return rc;
    enqueue_install();
    r.thread_level = required;

    int rc = read_endpoint_config(r);
    if (rc != WEFT_SUCCESS) {
        log(WEFT_LOG_ERROR, "weft_init: %s", current_error_detail().c_str());
        return rc;
    }
    rc = bootstrap_open(r.boot);
    if (rc != WEFT_SUCCESS) {
        log(WEFT_LOG_ERROR, "weft_init: %s", current_error_detail().c_str());
        return rc;
    }
    r.world_rank = r.boot->rank();
    r.world_size = r.boot->size();
    log_set_rank(r.world_rank);
    // Plugins may need to know who they are (a Galapagos cluster file numbers its software
    // nodes by rank); a user's hint of the same name is kept.
    r.hints.emplace("weft_rank", std::to_string(r.world_rank));
    r.hints.emplace("weft_size", std::to_string(r.world_size));

    // Fabric preference: WEFT_FABRIC, else the info hint weft_fabric, else by priority.
    std::string source, text;
    if (const char *env = std::getenv("WEFT_FABRIC"); env && *env) {
        source = "WEFT_FABRIC";
        text = env;
    } else if (auto it = r.hints.find("weft_fabric"); it != r.hints.end()) {
        source = "info key weft_fabric";
        text = it->second;
    }
    fabric_preference pref;
    std::string why;
    if (!loader_parse_preference(text, pref, why)) {
        rc = fail(WEFT_ERR_PLUGIN, "%s='%s': %s", source.c_str(), text.c_str(), why.c_str());
    } else {
        rc = loader_open_fabric(pref, source, plugin_host(), r.fabric);
    }
    if (rc == WEFT_SUCCESS) rc = open_implicit_endpoints(r);
    if (rc == WEFT_SUCCESS) {
        peer_failure_init(r.world_size);
        rc = liveness_open(*r.boot, r.world_rank, r.world_size);
    }
    if (rc == WEFT_SUCCESS) rc = r.boot->fence();
    if (rc == WEFT_SUCCESS) rc = liveness_start(*r.boot);
    if (rc == WEFT_SUCCESS && r.boot->launcher_shared()) rc = read_addresses_now(r);
    if (rc != WEFT_SUCCESS) {
        std::string detail = current_error_detail();
        log(WEFT_LOG_ERROR, "weft_init failed: %s", detail.c_str());
        shutdown(r, shutdown_kind::failed_init);
        fail(rc, "%s", detail.c_str());
        return rc;
    }
    comm_init_predefined();
    if (provided != nullptr) *provided = required;
    g_runtime_state.store(runtime_state::initialized, std::memory_order_release);
    return WEFT_SUCCESS;
}

}  // namespace

}  // namespace weft

using namespace weft;

extern "C" int weft_init(int *, char ***) { return init(WEFT_THREAD_SINGLE, WEFT_INFO_NULL, nullptr); }

extern "C" int weft_init_thread(int *, char ***, int required, int *provided) {
    if (provided == nullptr) return fail(WEFT_ERR_ARG, "weft_init_thread: provided must not be NULL");
    return init(required, WEFT_INFO_NULL, provided);
}

extern "C" int weft_init_info(int *, char ***, int required, weft_info info, int *provided) {
    return init(required, info, provided);
}

extern "C" int weft_finalize(void) {
    if (int rc = runtime_check("weft_finalize")) return rc;
    int rc = shutdown(rt(), shutdown_kind::finalize);
    g_runtime_state.store(runtime_state::finalized, std::memory_order_release);
    return rc;
}

extern "C" int weft_initialized(int *flag) {
    if (flag == nullptr) return fail(WEFT_ERR_ARG, "weft_initialized: flag must not be NULL");
    *flag = g_runtime_state.load() != runtime_state::uninitialized;
    return WEFT_SUCCESS;
}

extern "C" int weft_finalized(int *flag) {
    if (flag == nullptr) return fail(WEFT_ERR_ARG, "weft_finalized: flag must not be NULL");
    *flag = g_runtime_state.load() == runtime_state::finalized;
    return WEFT_SUCCESS;
}

extern "C" int weft_query_thread(int *provided) {
    if (int rc = runtime_check("weft_query_thread")) return rc;
    if (provided == nullptr) return fail(WEFT_ERR_ARG, "weft_query_thread: provided must not be NULL");
    *provided = rt().thread_level;
    return WEFT_SUCCESS;
}

extern "C" int weft_abort(weft_comm comm, int errorcode) {
    runtime &r = rt();
    log(WEFT_LOG_ERROR, "weft_abort(comm 0x%x, %d) called", comm, errorcode);
    if (g_runtime_state.load() == runtime_state::initialized && r.boot)
        r.boot->abort(errorcode, "weft_abort called by rank " + std::to_string(r.world_rank));
    _exit(errorcode > 0 && errorcode < 256 ? errorcode : 1);
}

extern "C" double weft_wtime(void) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

extern "C" double weft_wtick(void) {
    timespec ts{};
    clock_getres(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

extern "C" int weft_get_processor_name(char *name, size_t *resultlen) {
    if (name == nullptr || resultlen == nullptr)
        return fail(WEFT_ERR_ARG, "weft_get_processor_name: name and resultlen must not be NULL");
    if (gethostname(name, WEFT_MAX_PROCESSOR_NAME) != 0) std::strcpy(name, "unknown");
    name[WEFT_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = std::strlen(name);
    return WEFT_SUCCESS;
}

extern "C" int weft_get_runtime_info(weft_info *info) {
    if (int rc = runtime_check("weft_get_runtime_info")) return rc;
    if (info == nullptr) return fail(WEFT_ERR_ARG, "weft_get_runtime_info: info must not be NULL");
    runtime &r = rt();
    static const char *const levels[] = {"single", "funneled", "serialized", "multiple"};
    if (int rc = weft_info_create(info)) return rc;
    const char *version = r.fabric.plugin.desc->version ? r.fabric.plugin.desc->version : "";
    weft_info_set(*info, "fabric", r.fabric.plugin.name.c_str());
    weft_info_set(*info, "fabric_version", version);
    weft_info_set(*info, "bootstrap", r.boot->name());
    weft_info_set(*info, "thread_level", levels[r.thread_level]);
    if (std::string a = liveness_address(); !a.empty()) weft_info_set(*info, "liveness_address", a.c_str());
    return WEFT_SUCCESS;
}
