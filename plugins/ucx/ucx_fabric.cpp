/* UCX fabric plugin: the exported plugin descriptor, fabric init/finalize/query, logging. */
#include "ucx_internal.hpp"

#include <vector>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>
#include <new>

namespace {

/* "1.0 (UCX 1.13.1)": the UCX part is the library actually loaded, filled in at dlopen. */
char ucx_version_text[96] = "1.0 (UCX)";

__attribute__((constructor)) void ucx_version_fill() {
    snprintf(ucx_version_text, sizeof(ucx_version_text), "%d.%d (UCX %s)", WEFT_PLUGIN_ABI_MAJOR, WEFT_PLUGIN_ABI_MINOR,
             ucp_get_version_string());
}

/* UCX constructs the request memory once per pool element; start it in a known state. */
void ucx_request_init(void *request) { memset(request, 0, sizeof(ucx_req)); }

/* Size of a real worker address of this context: the bound ep_address can need. */
size_t ucx_measure_address(weft_fabric *fabric) {
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    ucp_worker_h worker;
    if (ucp_worker_create(fabric->context, &wp, &worker) != UCS_OK) return 0;
    ucp_address_t *addr;
    size_t len = 0;
    if (ucp_worker_get_address(worker, &addr, &len) == UCS_OK) ucp_worker_release_address(worker, addr);
    ucp_worker_destroy(worker);
    return len;
}

}  // namespace

int ucx_status_to_plugin(ucs_status_t status) {
    switch (status) {
        case UCS_OK: return WEFT_PLUGIN_OK;
        case UCS_INPROGRESS:
        case UCS_ERR_NO_RESOURCE:
        case UCS_ERR_BUSY: return WEFT_PLUGIN_ERR_AGAIN;
        case UCS_ERR_NO_MEMORY:
        case UCS_ERR_EXCEEDS_LIMIT: return WEFT_PLUGIN_ERR_NOMEM;
        case UCS_ERR_MESSAGE_TRUNCATED: return WEFT_PLUGIN_ERR_TRUNCATE;
        case UCS_ERR_CANCELED: return WEFT_PLUGIN_ERR_CANCELED;
        case UCS_ERR_UNREACHABLE:
        case UCS_ERR_INVALID_ADDR: return WEFT_PLUGIN_ERR_UNREACHABLE;
        case UCS_ERR_UNSUPPORTED: return WEFT_PLUGIN_ERR_UNSUPPORTED;
        case UCS_ERR_INVALID_PARAM: return WEFT_PLUGIN_ERR_INVALID;
        case UCS_ERR_NO_ELEM: return WEFT_PLUGIN_ERR_NOT_FOUND;
        case UCS_ERR_CONNECTION_RESET:
        case UCS_ERR_ENDPOINT_TIMEOUT:
        case UCS_ERR_REJECTED:
        case UCS_ERR_NOT_CONNECTED: return WEFT_PLUGIN_ERR_PEER_FAILED;
        default: return WEFT_PLUGIN_ERR_OTHER;
    }
}

int ucx_fabric_init(const weft_plugin_host_t *host, weft_fabric_t **fabric_out, char *why, size_t why_len) {
    /* A host too old to hold log is dropped: the plugin runs without logging. */
    int rc = weft_kit_fabric_init_begin(UCX_PLUGIN_NAME, fabric_out, &host, why, why_len);
    if (rc != WEFT_PLUGIN_OK) return rc;

    auto *fabric = new (std::nothrow) weft_fabric();
    if (!fabric) return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_NOMEM, "ucx: out of memory");
    fabric->host = host;
    weft_kit_list_init(&fabric->eps);

    ucp_config_t *config;
    ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
    if (status != UCS_OK) {
        delete fabric;
        return weft_kit_whyf(why, why_len, ucx_status_to_plugin(status),
                             "ucp_config_read: %s (check the UCX_* environment variables)", ucs_status_string(status));
    }
    /* Hint weft_ucx_tls overrides UCX_TLS for this process only. */
    const char *tls = weft_kit_host_hint(host, "weft_ucx_tls");
    if (tls && *tls) {
        status = ucp_config_modify(config, "TLS", tls);
        if (status != UCS_OK) {
            ucp_config_release(config);
            delete fabric;
            return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_INVALID, "ucx: hint weft_ucx_tls='%s' rejected: %s", tls,
                                 ucs_status_string(status));
        }
    }

    /* Error-handling mode of the UCP endpoints: env WEFT_UCX_ERROR_MODE, or hint
     * weft_ucx_error_mode (the hint wins), "none" (default) or "peer".
     *   none: UCX picks the fastest transports, shared memory (posix/sysv/cma) between
     *         processes of one node.  A peer that dies may leave operations on it pending;
     *         ep_disconnect/ep_close still return in bounded time.
     *   peer: UCX detects a failed peer (keepalive) and fails its operations with
     *         PEER_FAILED; useful over tcp/ib for failure detection.  UCX 1.13 has no peer
     *         failure support on its shared-memory transports, so this mode EXCLUDES them:
     *         processes of one node then talk over tcp (several times slower), and
     *         UCX_TLS=shm,self cannot connect at all. */
    const char *mode = weft_kit_host_hint(host, "weft_ucx_error_mode");
    const char *mode_from = mode ? "hint weft_ucx_error_mode (WEFT_UCX_ERROR_MODE)" : "WEFT_UCX_ERROR_MODE";
    if (!mode) mode = getenv("WEFT_UCX_ERROR_MODE");
    if (!mode || !*mode || strcasecmp(mode, "none") == 0) {
        fabric->err_mode = UCP_ERR_HANDLING_MODE_NONE;
    } else if (strcasecmp(mode, "peer") == 0) {
        fabric->err_mode = UCP_ERR_HANDLING_MODE_PEER;
    } else {
        ucp_config_release(config);
        delete fabric;
        return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_INVALID,
                             "ucx: %s='%s' is not valid: use 'none' (default, shared memory) "
                             "or 'peer' (peer failure detection; excludes shared memory in UCX "
                             "1.13)",
                             mode_from, mode);
    }

    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_REQUEST_SIZE | UCP_PARAM_FIELD_REQUEST_INIT |
        UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
    params.request_size = sizeof(ucx_req);
    params.request_init = ucx_request_init;
    /* Workers (endpoints) live on different threads and share the context's caches. */
    params.mt_workers_shared = 1;
    status = ucp_init(&params, config, &fabric->context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        delete fabric;
        return weft_kit_whyf(why, why_len, ucx_status_to_plugin(status),
                             "ucp_init: %s (no usable UCX transport: check `ucx_info -d`, set "
                             "UCX_TLS, e.g. UCX_TLS=tcp,shm,self)",
                             ucs_status_string(status));
    }

    fabric->flags = WEFT_FABRIC_CAP_WAIT_FD | WEFT_FABRIC_CAP_THREAD_SAFE;
    ucp_context_attr_t attr{};
    attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES | UCP_ATTR_FIELD_REQUEST_SIZE;
    if (ucp_context_query(fabric->context, &attr) == UCS_OK) {
        if ((attr.memory_types & ~UCS_BIT(UCS_MEMORY_TYPE_HOST)) != 0) fabric->flags |= WEFT_FABRIC_CAP_DEVICE_MEMORY;
        fabric->request_size = attr.request_size;
    }

    ucx_log(fabric, WEFT_LOG_INFO, "UCX %s opened%s, error mode %s", ucp_get_version_string(),
            (fabric->flags & WEFT_FABRIC_CAP_DEVICE_MEMORY) ? " (device memory)" : "",
            fabric->err_mode == UCP_ERR_HANDLING_MODE_PEER ? "peer" : "none");
    *fabric_out = fabric;
    return WEFT_PLUGIN_OK;
}

int ucx_fabric_finalize(weft_fabric_t *fabric) {
    if (!fabric) return WEFT_PLUGIN_ERR_INVALID;
    for (;;) {
        weft_kit_link_t *first;
        {
            std::lock_guard<std::mutex> g(fabric->lock);
            first = weft_kit_list_first(&fabric->eps);
        }
        if (!first) break;
        weft_fabric_ep *ep = WEFT_KIT_CONTAINER_OF(first, weft_fabric_ep, link);
        ucx_log(fabric, WEFT_LOG_WARN, "finalize: closing an endpoint the core left open");
        ucx_ep_close(ep);
    }
    if (fabric->kept_workers == 0) {
        ucp_cleanup(fabric->context);
    } else {
        /* Workers kept by ep_close (sends in flight) still use the context; it stays
         * referenced here, deliberately kept rather than leaked. */
        static auto *kept_contexts = new std::vector<ucp_context_h>;  // never destroyed
        kept_contexts->push_back(fabric->context);
        ucx_log(fabric, WEFT_LOG_WARN,
                "finalize: %zu UCX worker(s) still hold sends in flight; the UCX context is "
                "kept until the process exits",
                fabric->kept_workers);
    }
    delete fabric;
    return WEFT_PLUGIN_OK;
}

int ucx_fabric_query(weft_fabric_t *fabric, weft_fabric_caps_t *caps) {
    if (!fabric || !caps || caps->struct_size < sizeof(uint32_t) * 2) return WEFT_PLUGIN_ERR_INVALID;
    {
        std::lock_guard<std::mutex> g(fabric->lock);
        if (fabric->address_size == 0) {
            size_t measured = ucx_measure_address(fabric);
            /* Workers of one context pack the same transports; double it for headroom
             * (devices that come up later, differing thread modes) and add our header. */
            fabric->address_size = (measured ? 2 * measured : 4096) + WEFT_KIT_ADDR_HEADER_SIZE;
        }
    }
    weft_fabric_caps_t c{};
    c.flags = fabric->flags;
    c.max_message_size = SIZE_MAX;
    /* UCX gives no guarantee that a send completes at once (it usually does for eager
     * messages, and tag_send then completes inline), so promise nothing. */
    c.inject_size = 0;
    /* UCX_RNDV_THRESH=auto resolves per transport; 8 KiB is its shared-memory choice. */
    c.eager_size = 8192;
    c.max_address_size = fabric->address_size;
    /* Room for a receive's UCX request and our state after it, in the core's context
     * (ucx_ep_open checks what it got the same way). */
    c.context_space = ucx_context_space_wanted(fabric);
    c.iov_limit = 0; /* UCX's IOV datatype takes any number of entries */
    return weft_kit_caps_write(caps, &c);
}

namespace {
/* Every operation by name, in the order of weft_fabric_ops_v1_t; NULL: not supported. */
const weft_fabric_ops_v1_t ucx_ops = {
    .init = ucx_fabric_init,
    .finalize = ucx_fabric_finalize,
    .query = ucx_fabric_query,
    .ep_open = ucx_ep_open,
    .ep_close = ucx_ep_close,
    .ep_address = ucx_ep_address,
    .ep_connect = ucx_ep_connect,
    .ep_disconnect = ucx_ep_disconnect,
    .tag_send = ucx_tag_send,
    .tag_recv = ucx_tag_recv,
    .tag_probe = ucx_tag_probe,
    .cancel = ucx_tag_cancel,
    .ep_progress = ucx_ep_progress,
    .ep_wait_fd = ucx_ep_wait_fd,
    .ep_arm = ucx_ep_arm,
    .kernel_table = nullptr, /* no global kernels */
    .kernel_bind = nullptr,
    .kernel_unbind = nullptr,
    .kernel_send = nullptr,
    .ep_peer_failed = ucx_ep_peer_failed,
    .stats = nullptr, /* not kept */
    .tag_send_now = ucx_tag_send_now,
    .tag_sendv = ucx_tag_sendv,
    .tag_recvv = ucx_tag_recvv,
    .tag_send_sync = ucx_tag_send_sync,
};
}  // namespace

WEFT_KIT_PLUGIN_DEFINE(WEFT_PLUGIN_KIND_FABRIC, UCX_PLUGIN_NAME, ucx_version_text, 100, &ucx_ops);
