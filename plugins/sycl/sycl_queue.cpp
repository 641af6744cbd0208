/* SYCL / Level Zero queue plugin: attach/detach of a native queue, submission of one command to
 * it (the user's immediate command list, or the plugin's own lists executed on the user's
 * command queue), and immediate lists of the plugin's own for conformance tools
 * (queue_create / queue_destroy). */
#include "sycl_internal.hpp"

#include <algorithm>
#include <cstring>
#include <new>

namespace {

/* Own lists in execution at once; beyond this an append returns WEFT_PLUGIN_ERR_AGAIN (the
 * queue is stuck, most likely on a wait the host has not released yet). */
constexpr size_t SYCL_LISTS_BUSY_MAX = 4096;
/* detach waits at most this long for the fences of its own lists (it is called after the last
 * point was reached, so they are done or about to be). */
constexpr uint64_t SYCL_DETACH_WAIT_NS = 1000000000ull;

/* Reads info key `key` (a hex-encoded handle) into *out.  Missing and required: an error that
 * says how to set it. */
int sycl_attach_read(const weft_queue_attach_args_t *args, const char *key, void *out, size_t size,
                     bool required, const char *what, char *why, size_t why_len)
{
    int rc = args->get_hex(args->get_hex_ctx, key, out, size);
    if (rc == WEFT_PLUGIN_OK) return WEFT_PLUGIN_OK;
    if (rc == WEFT_PLUGIN_ERR_NOT_FOUND && !required) return WEFT_PLUGIN_ERR_NOT_FOUND;
    if (rc == WEFT_PLUGIN_ERR_NOT_FOUND)
        sycl_why(why, why_len,
                 "a '%s' stream needs info key \"%s\" (the %s, %zu bytes): Level Zero 1.4 cannot "
                 "tell it from the handle; set it with weft_info_set_hex",
                 args->type, key, what, size);
    else
        sycl_why(why, why_len, "info key \"%s\" must hold the %s as %zu hex-encoded bytes", key,
                 what, size);
    return WEFT_PLUGIN_ERR_INVALID;
}

/* The device and queue ordinal of a command-queue stream: the device must answer, and the
 * ordinal must be one of its command queue groups (own lists are created with it). */
int sycl_attach_check_device(ze_device_handle_t dev, uint32_t ordinal, char *why, size_t why_len)
{
    ze_device_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    ze_result_t r = zeDeviceGetProperties(dev, &props);
    if (r != ZE_RESULT_SUCCESS) {
        sycl_why(why, why_len, "info \"weft_ze_device\" is not a valid device: "
                 "zeDeviceGetProperties: %s (0x%x)", sycl_result_name(r), (unsigned)r);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    uint32_t groups = 0;
    r = zeDeviceGetCommandQueueGroupProperties(dev, &groups, nullptr);
    if (r == ZE_RESULT_SUCCESS && ordinal >= groups) {
        sycl_why(why, why_len, "info \"weft_ze_ordinal\" %u: device %s has %u command queue "
                 "group(s)", (unsigned)ordinal, props.name, (unsigned)groups);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    return WEFT_PLUGIN_OK;
}

/* Command-queue mode: moves own lists whose fence is signalled back to the free list.  The
 * user's queue runs them in submission order, so the oldest finishes first. */
void sycl_lists_recycle(weft_queue_t *q)
{
    while (!q->lists_busy.empty()) {
        sycl_own_list l = q->lists_busy.front();
        if (zeFenceQueryStatus(l.fence) != ZE_RESULT_SUCCESS) break;
        q->lists_busy.pop_front();
        if (zeCommandListReset(l.list) != ZE_RESULT_SUCCESS ||
            zeFenceReset(l.fence) != ZE_RESULT_SUCCESS) {
            zeCommandListDestroy(l.list);  // unusable: drop it
            zeFenceDestroy(l.fence);
            continue;
        }
        q->lists_free.push_back(l);  // capacity reserved when the list was created
    }
}

ze_result_t sycl_lists_take(weft_queue_t *q, sycl_own_list *out)
{
    sycl_lists_recycle(q);
    if (!q->lists_free.empty()) {
        *out = q->lists_free.back();
        q->lists_free.pop_back();
        return ZE_RESULT_SUCCESS;
    }
    if (q->lists_busy.size() >= SYCL_LISTS_BUSY_MAX) return ZE_RESULT_NOT_READY;
    try {
        /* Every list of the queue may come back to lists_free: recycling never allocates. */
        q->lists_free.reserve(q->lists_busy.size() + 1);
    } catch (...) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    ze_command_list_desc_t ld{};
    ld.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
    ld.commandQueueGroupOrdinal = q->ordinal;
    sycl_own_list l{};
    ze_result_t r = zeCommandListCreate(q->context, q->device, &ld, &l.list);
    if (r != ZE_RESULT_SUCCESS) return r;
    ze_fence_desc_t fd{};
    fd.stype = ZE_STRUCTURE_TYPE_FENCE_DESC;
    r = zeFenceCreate(q->cq, &fd, &l.fence);
    if (r != ZE_RESULT_SUCCESS) {
        zeCommandListDestroy(l.list);
        return r;
    }
    *out = l;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sycl_command_record(ze_command_list_handle_t list, const sycl_command &cmd)
{
    switch (cmd.kind) {
    case sycl_command::SIGNAL:
        /* A barrier rather than zeCommandListAppendSignalEvent: the event is signalled only
         * once every earlier command (copies into staging) has completed, even on a list that
         * is not strictly in-order. */
        return zeCommandListAppendBarrier(list, cmd.event, 0, nullptr);
    case sycl_command::WAIT: {
        /* A barrier waiting on the event holds back every later command of the list. */
        ze_event_handle_t ev = cmd.event;
        return zeCommandListAppendBarrier(list, nullptr, 1, &ev);
    }
    case sycl_command::COPY:
        return zeCommandListAppendMemoryCopy(list, cmd.dst, cmd.src, cmd.bytes, nullptr, 0,
                                             nullptr);
    }
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

/* The context of an immediate list made by queue_create: true and *ctx when list is one. */
bool sycl_created_context(weft_queue_runtime *rt, const void *list, ze_context_handle_t *ctx)
{
    std::lock_guard<std::mutex> g(rt->created_lock);
    for (ze_command_list_handle_t l : rt->created) {
        if (static_cast<const void *>(l) != list) continue;
        *ctx = rt->context;
        return true;
    }
    return false;
}

/* Caller holds rt->created_lock: the first GPU device, a compute queue group ordinal of it,
 * and a context of the runtime's own on its driver, made once. */
ze_result_t sycl_own_context(weft_queue_runtime *rt)
{
    if (rt->context) return ZE_RESULT_SUCCESS;
    uint32_t ndrivers = 0;
    ze_result_t r = zeDriverGet(&ndrivers, nullptr);
    if (r != ZE_RESULT_SUCCESS) return r;
    std::vector<ze_driver_handle_t> drivers(ndrivers);
    r = zeDriverGet(&ndrivers, drivers.data());
    if (r != ZE_RESULT_SUCCESS) return r;
    ze_driver_handle_t driver = nullptr;
    ze_device_handle_t device = nullptr;
    for (uint32_t i = 0; i < ndrivers && !device; ++i) {
        uint32_t n = 0;
        if (zeDeviceGet(drivers[i], &n, nullptr) != ZE_RESULT_SUCCESS || n == 0) continue;
        std::vector<ze_device_handle_t> devices(n);
        if (zeDeviceGet(drivers[i], &n, devices.data()) != ZE_RESULT_SUCCESS) continue;
        for (uint32_t j = 0; j < n && !device; ++j) {
            ze_device_properties_t props{};
            props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
            if (zeDeviceGetProperties(devices[j], &props) == ZE_RESULT_SUCCESS &&
                props.type == ZE_DEVICE_TYPE_GPU) {
                driver = drivers[i];
                device = devices[j];
            }
        }
    }
    if (!device) return ZE_RESULT_ERROR_UNINITIALIZED; /* no GPU: init would have said so */
    /* Group 0 is the compute group on current Intel GPUs; look for one to be sure. */
    uint32_t ordinal = 0, ngroups = 0;
    if (zeDeviceGetCommandQueueGroupProperties(device, &ngroups, nullptr) == ZE_RESULT_SUCCESS &&
        ngroups > 0) {
        std::vector<ze_command_queue_group_properties_t> groups(ngroups);
        for (auto &g : groups) g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
        if (zeDeviceGetCommandQueueGroupProperties(device, &ngroups, groups.data()) ==
            ZE_RESULT_SUCCESS) {
            for (uint32_t i = 0; i < ngroups; ++i) {
                if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
                    ordinal = i;
                    break;
                }
            }
        }
    }
    ze_context_desc_t cd{};
    cd.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
    ze_context_handle_t context = nullptr;
    r = zeContextCreate(driver, &cd, &context);
    if (r != ZE_RESULT_SUCCESS) return r;
    rt->device = device;
    rt->context = context;
    rt->ordinal = ordinal;
    return ZE_RESULT_SUCCESS;
}

/* ZE_COMMAND_QUEUE_FLAG_IN_ORDER of Level Zero 1.7 (not in the 1.4 headers): copies one after
 * the other, as attach requires of an immediate list. */
constexpr ze_command_queue_flags_t SYCL_IN_ORDER_FLAG_1_7 = 1u << 1;

} // namespace

ze_result_t sycl_submit(weft_queue_t *q, const sycl_command &cmd)
{
    if (q->mode == SYCL_QUEUE_IMMEDIATE) return sycl_command_record(q->list, cmd);

    /* Command-queue mode: one small regular list per command, executed at once.  Order across
     * lists relies on the user's queue executing lists in submission order (see attach). */
    sycl_own_list l{};
    ze_result_t r = sycl_lists_take(q, &l);
    if (r != ZE_RESULT_SUCCESS) return r;
    try {
        q->lists_busy.push_back(l);  // before executing: nothing can fail after it runs
    } catch (...) {
        q->lists_free.push_back(l);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    r = sycl_command_record(l.list, cmd);
    if (r == ZE_RESULT_SUCCESS) r = zeCommandListClose(l.list);
    if (r == ZE_RESULT_SUCCESS) r = zeCommandQueueExecuteCommandLists(q->cq, 1, &l.list, l.fence);
    if (r != ZE_RESULT_SUCCESS) {
        q->lists_busy.pop_back();
        if (zeCommandListReset(l.list) == ZE_RESULT_SUCCESS)
            q->lists_free.push_back(l);
        else {
            zeCommandListDestroy(l.list);
            zeFenceDestroy(l.fence);
        }
    }
    return r;
}

/* Attach a native queue.  Info keys besides "value" (Level Zero 1.4 cannot query a list's or
 * queue's context or device):
 *   weft_ze_context  ze_context_handle_t, all types;
 *   weft_ze_device   ze_device_handle_t, ze_command_queue_handle_t only;
 *   weft_ze_ordinal  uint32_t, optional (default 0): the command queue group ordinal the
 *                    queue was created with, which the plugin's own lists must share.
 * A ze_command_list_handle_t (and "sycl::queue") must be an immediate, in-order list: appends
 * run as they are appended.  A ze_command_queue_handle_t must execute lists in submission
 * order, one after the other: create it in-order (ZE_COMMAND_QUEUE_MODE_DEFAULT or
 * _ASYNCHRONOUS on one engine, which in practice runs lists serially) or
 * ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS (then every append blocks until it has executed, waits
 * included, until the progress thread releases them). */
int sycl_queue_attach(weft_queue_runtime_t *rt, const weft_queue_attach_args_t *args,
                      weft_queue_t **qp, int *sync_used, char *why, size_t why_len)
{
    if (!rt || !args || !qp || !sync_used ||
        args->struct_size < offsetof(weft_queue_attach_args_t, get_hex_ctx) + sizeof(void *) ||
        !args->type || !args->handle || !args->get_hex) {
        sycl_why(why, why_len, "attach: missing arguments (type, value or info access)");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    *qp = nullptr;
    sycl_queue_mode mode;
    if (strcmp(args->type, "ze_command_list_handle_t") == 0 ||
        strcmp(args->type, "sycl::queue") == 0)  // its native handle: an immediate list
        mode = SYCL_QUEUE_IMMEDIATE;
    else if (strcmp(args->type, "ze_command_queue_handle_t") == 0)
        mode = SYCL_QUEUE_REGULAR;
    else {
        sycl_why(why, why_len, "type '%s' is not one of ze_command_list_handle_t, "
                 "ze_command_queue_handle_t, sycl::queue", args->type);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    if (args->handle_size != sizeof(void *)) {
        sycl_why(why, why_len, "a '%s' value is a handle of %zu bytes, got %zu bytes", args->type,
                 sizeof(void *), args->handle_size);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    void *handle = nullptr;
    memcpy(&handle, args->handle, sizeof(handle));
    if (!handle) {
        sycl_why(why, why_len, "the '%s' value is a null handle", args->type);
        return WEFT_PLUGIN_ERR_INVALID;
    }

    ze_context_handle_t ctx = nullptr;
    ze_device_handle_t dev = nullptr;
    uint32_t ordinal = 0;
    int rc;
    if (mode == SYCL_QUEUE_IMMEDIATE && sycl_created_context(rt, handle, &ctx)) {
        /* A list of queue_create's: its context is the runtime's own, weft_ze_context is
         * optional (and must name that context when given). */
        ze_context_handle_t given = nullptr;
        rc = sycl_attach_read(args, "weft_ze_context", &given, sizeof(given), false,
                              "ze_context_handle_t", why, why_len);
        if (rc == WEFT_PLUGIN_ERR_NOT_FOUND) {
            rc = WEFT_PLUGIN_OK;
        } else if (rc == WEFT_PLUGIN_OK && given != ctx) {
            sycl_why(why, why_len, "info \"weft_ze_context\" is not the context of this list "
                     "(a list of the plugin's own queue_create)");
            rc = WEFT_PLUGIN_ERR_INVALID;
        }
    } else {
        rc = sycl_attach_read(args, "weft_ze_context", &ctx, sizeof(ctx), true,
                              "ze_context_handle_t", why, why_len);
    }
    if (rc != WEFT_PLUGIN_OK) return rc;
    if (mode == SYCL_QUEUE_REGULAR) {
        rc = sycl_attach_read(args, "weft_ze_device", &dev, sizeof(dev), true,
                              "ze_device_handle_t", why, why_len);
        if (rc != WEFT_PLUGIN_OK) return rc;
        rc = sycl_attach_read(args, "weft_ze_ordinal", &ordinal, sizeof(ordinal), false,
                              "command queue group ordinal (uint32_t)", why, why_len);
        if (rc != WEFT_PLUGIN_OK && rc != WEFT_PLUGIN_ERR_NOT_FOUND) return rc;
    }
    if (!ctx || (mode == SYCL_QUEUE_REGULAR && !dev)) {
        sycl_why(why, why_len, "info \"%s\" is a null handle",
                 ctx ? "weft_ze_device" : "weft_ze_context");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    ze_result_t r = zeContextGetStatus(ctx);
    if (r != ZE_RESULT_SUCCESS) {
        sycl_why(why, why_len, "info \"weft_ze_context\" is not a usable context: "
                 "zeContextGetStatus: %s (0x%x)", sycl_result_name(r), (unsigned)r);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    if (mode == SYCL_QUEUE_REGULAR) {
        rc = sycl_attach_check_device(dev, ordinal, why, why_len);
        if (rc != WEFT_PLUGIN_OK) return rc;
    }

    auto *q = new (std::nothrow) weft_queue;
    if (!q) {
        sycl_why(why, why_len, "attach: out of memory");
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    q->rt = rt;
    q->mode = mode;
    q->context = ctx;
    q->device = dev;
    q->list =
        mode == SYCL_QUEUE_IMMEDIATE ? static_cast<ze_command_list_handle_t>(handle) : nullptr;
    q->cq = mode == SYCL_QUEUE_REGULAR ? static_cast<ze_command_queue_handle_t>(handle) : nullptr;
    q->ordinal = ordinal;
    q->reached_value = 0;
    q->released_value = 0;
    q->released_valid = false;
    q->failed_logged = false;

    /* The first event pool now: a context that cannot make events fails here, not at the
     * first append. */
    r = sycl_events_grow(q);
    if (r != ZE_RESULT_SUCCESS) {
        sycl_why(why, why_len, "attach: cannot create a host-visible event pool on the context: "
                 "zeEventPoolCreate/zeEventCreate: %s (0x%x)", sycl_result_name(r), (unsigned)r);
        rc = sycl_result_to_plugin(r);
        sycl_events_destroy(q);
        delete q;
        return rc == WEFT_PLUGIN_ERR_AGAIN ? WEFT_PLUGIN_ERR_OTHER : rc;
    }

    /* Level Zero has no host callbacks: host-signalled events serve both mechanisms. */
    if (args->sync == WEFT_QUEUE_SYNC_HOSTFN)
        sycl_log(rt, WEFT_LOG_INFO, "hostfn sync requested, but Level Zero has no host callbacks: "
                 "using host-signalled events (memops)");
    *sync_used = WEFT_QUEUE_SYNC_MEMOPS;
    if (mode == SYCL_QUEUE_IMMEDIATE)
        sycl_log(rt, WEFT_LOG_INFO, "attached %s %p (immediate command list), context %p; sync: "
                 "host-signalled events", args->type, handle, (void *)ctx);
    else
        sycl_log(rt, WEFT_LOG_INFO, "attached ze_command_queue_handle_t %p (own command lists, "
                 "ordinal %u), context %p, device %p; sync: host-signalled events", handle,
                 (unsigned)ordinal, (void *)ctx, (void *)dev);
    *qp = q;
    return WEFT_PLUGIN_OK;
}

int sycl_queue_detach(weft_queue_t *q)
{
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    /* Own lists: wait (bounded) for their fences.  One that does not finish may still use the
     * events, so then nothing of the queue is destroyed: kept rather than freed under the
     * device. */
    bool stuck = false;
    while (!q->lists_busy.empty()) {
        sycl_own_list l = q->lists_busy.front();
        if (zeFenceHostSynchronize(l.fence, SYCL_DETACH_WAIT_NS) != ZE_RESULT_SUCCESS) {
            stuck = true;
            break;
        }
        q->lists_busy.pop_front();
        zeCommandListDestroy(l.list);
        zeFenceDestroy(l.fence);
    }
    if (stuck) {
        sycl_log(q->rt, WEFT_LOG_WARN, "detach: %zu command list(s) of queue %p did not finish; "
                 "their lists and events are kept until the process exits",
                 q->lists_busy.size(), (void *)q->cq);
        return WEFT_PLUGIN_ERR_OTHER;
    }
    for (const sycl_own_list &l : q->lists_free) {
        zeCommandListDestroy(l.list);
        zeFenceDestroy(l.fence);
    }
    sycl_events_destroy(q);
    delete q;
    return WEFT_PLUGIN_OK;
}

/* ABI minor 3 (conformance tools; the core never calls these): an immediate, in-order command
 * list on the first GPU device, in a context of the runtime's own; the handle bytes are the
 * ze_command_list_handle_t. */
int sycl_queue_create(weft_queue_runtime_t *rt, void *handle, size_t *size)
{
    if (!rt || !handle || !size) return WEFT_PLUGIN_ERR_INVALID;
    if (*size < sizeof(ze_command_list_handle_t)) {
        *size = sizeof(ze_command_list_handle_t);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    try {
        std::lock_guard<std::mutex> g(rt->created_lock);
        ze_result_t r = sycl_own_context(rt);
        if (r != ZE_RESULT_SUCCESS) {
            sycl_log(rt, WEFT_LOG_WARN, "queue_create: no context on a GPU device: %s (0x%x)",
                     sycl_result_name(r), (unsigned)r);
            return r == ZE_RESULT_ERROR_UNINITIALIZED ? WEFT_PLUGIN_ERR_NO_DEVICE
                                                      : sycl_result_to_plugin(r);
        }
        rt->created.reserve(rt->created.size() + 1);
        ze_command_queue_desc_t qd{};
        qd.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
        qd.ordinal = rt->ordinal;
        qd.index = 0;
        qd.flags = SYCL_IN_ORDER_FLAG_1_7;
        qd.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
        qd.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
        ze_command_list_handle_t list = nullptr;
        r = zeCommandListCreateImmediate(rt->context, rt->device, &qd, &list);
        if (r == ZE_RESULT_ERROR_INVALID_ENUMERATION ||
            r == ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION) {
            /* A driver older than Level Zero 1.7: no in-order flag.  Its immediate lists keep
             * the order of barriers (points); copies back to back may overlap. */
            sycl_log(rt, WEFT_LOG_INFO, "queue_create: the driver refuses the in-order flag (%s); "
                     "creating the immediate list without it", sycl_result_name(r));
            qd.flags = 0;
            r = zeCommandListCreateImmediate(rt->context, rt->device, &qd, &list);
        }
        if (r != ZE_RESULT_SUCCESS) {
            sycl_log(rt, WEFT_LOG_WARN, "queue_create: zeCommandListCreateImmediate: %s (0x%x)",
                     sycl_result_name(r), (unsigned)r);
            return sycl_result_to_plugin(r) == WEFT_PLUGIN_ERR_AGAIN ? WEFT_PLUGIN_ERR_OTHER
                                                                   : sycl_result_to_plugin(r);
        }
        rt->created.push_back(list); /* reserved: cannot throw */
        memcpy(handle, &list, sizeof(list));
        *size = sizeof(list);
        return WEFT_PLUGIN_OK;
    } catch (...) {
        return WEFT_PLUGIN_ERR_NOMEM;
    }
}

/* Waits for everything appended to a list of queue_create (detached first: a barrier that
 * signals an event of its own, waited for on the host) and destroys it.  Other handles are
 * refused, never destroyed. */
int sycl_queue_destroy(weft_queue_runtime_t *rt, const void *handle, size_t size)
{
    if (!rt || !handle || size != sizeof(ze_command_list_handle_t)) return WEFT_PLUGIN_ERR_INVALID;
    ze_command_list_handle_t list;
    memcpy(&list, handle, sizeof(list));
    ze_context_handle_t ctx = nullptr;
    try {
        /* Taken off the record first, so that no other call destroys it at the same time. */
        std::lock_guard<std::mutex> g(rt->created_lock);
        auto it = std::find(rt->created.begin(), rt->created.end(), list);
        if (it == rt->created.end()) return WEFT_PLUGIN_ERR_INVALID;
        rt->created.erase(it);
        ctx = rt->context;
    } catch (...) {
        return WEFT_PLUGIN_ERR_OTHER;
    }
    ze_event_pool_desc_t pd{};
    pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
    pd.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
    pd.count = 1;
    ze_event_pool_handle_t pool = nullptr;
    ze_event_handle_t ev = nullptr;
    const char *call = "zeEventPoolCreate";
    ze_result_t r = zeEventPoolCreate(ctx, &pd, 0, nullptr, &pool);
    if (r == ZE_RESULT_SUCCESS) {
        ze_event_desc_t ed{};
        ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
        ed.index = 0;
        ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
        ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
        call = "zeEventCreate";
        r = zeEventCreate(pool, &ed, &ev);
    }
    if (r == ZE_RESULT_SUCCESS) {
        call = "zeCommandListAppendBarrier";
        r = zeCommandListAppendBarrier(list, ev, 0, nullptr);
    }
    if (r == ZE_RESULT_SUCCESS) {
        call = "zeEventHostSynchronize";
        r = zeEventHostSynchronize(ev, UINT64_MAX);
    }
    if (ev) zeEventDestroy(ev);
    if (pool) zeEventPoolDestroy(pool);
    if (r == ZE_RESULT_SUCCESS) {
        call = "zeCommandListDestroy";
        r = zeCommandListDestroy(list);
    }
    if (r != ZE_RESULT_SUCCESS) {
        sycl_log(rt, WEFT_LOG_WARN, "queue_destroy of list %p: %s: %s (0x%x)", (void *)list, call,
                 sycl_result_name(r), (unsigned)r);
        try {
            std::lock_guard<std::mutex> g(rt->created_lock);
            rt->created.push_back(list); /* still ours: a later call may try again */
        } catch (...) {
        }
        int rc = sycl_result_to_plugin(r);
        return rc == WEFT_PLUGIN_ERR_AGAIN ? WEFT_PLUGIN_ERR_OTHER : rc;
    }
    return WEFT_PLUGIN_OK;
}

void sycl_created_release(weft_queue_runtime_t *rt)
{
    if (!rt->created.empty()) {
        sycl_log(rt, WEFT_LOG_WARN, "finalize: %zu command list(s) of queue_create were not "
                 "destroyed; they and the plugin's context are kept", rt->created.size());
        return;
    }
    if (rt->context) zeContextDestroy(rt->context);
    rt->context = nullptr;
}
