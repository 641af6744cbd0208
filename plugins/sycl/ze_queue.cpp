/* SYCL / Level Zero queue plugin: attach/detach of a native queue, and submission of one
 * command to it (the user's immediate command list, or the plugin's own lists executed on the
 * user's command queue). */
#include "ze_internal.hpp"

#include <cstring>
#include <new>

namespace {

/* Own lists in execution at once; beyond this an append returns WEFT_PLUGIN_ERR_AGAIN (the
 * queue is stuck, most likely on a wait the host has not released yet). */
constexpr size_t ZE_LISTS_BUSY_MAX = 4096;
/* detach waits at most this long for the fences of its own lists (it is called after the last
 * point was reached, so they are done or about to be). */
constexpr uint64_t ZE_DETACH_WAIT_NS = 1000000000ull;

/* Reads info key `key` (a hex-encoded handle) into *out.  Missing and required: an error that
 * says how to set it. */
int ze_attach_read(const weft_queue_attach_args_t *args, const char *key, void *out, size_t size,
                   bool required, const char *what, char *why, size_t why_len)
{
    int rc = args->get_hex(args->get_hex_ctx, key, out, size);
    if (rc == WEFT_PLUGIN_OK) return WEFT_PLUGIN_OK;
    if (rc == WEFT_PLUGIN_ERR_NOT_FOUND && !required) return WEFT_PLUGIN_ERR_NOT_FOUND;
    if (rc == WEFT_PLUGIN_ERR_NOT_FOUND)
        ze_why(why, why_len,
               "a '%s' stream needs info key \"%s\" (the %s, %zu bytes): Level Zero 1.4 cannot "
               "tell it from the handle; set it with weft_info_set_hex",
               args->type, key, what, size);
    else
        ze_why(why, why_len, "info key \"%s\" must hold the %s as %zu hex-encoded bytes", key,
               what, size);
    return WEFT_PLUGIN_ERR_INVALID;
}

/* The device and queue ordinal of a command-queue stream: the device must answer, and the
 * ordinal must be one of its command queue groups (own lists are created with it). */
int ze_attach_check_device(ze_device_handle_t dev, uint32_t ordinal, char *why, size_t why_len)
{
    ze_device_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    ze_result_t r = zeDeviceGetProperties(dev, &props);
    if (r != ZE_RESULT_SUCCESS) {
        ze_why(why, why_len, "info \"weft_ze_device\" is not a valid device: "
               "zeDeviceGetProperties: %s (0x%x)", ze_result_name(r), (unsigned)r);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    uint32_t groups = 0;
    r = zeDeviceGetCommandQueueGroupProperties(dev, &groups, nullptr);
    if (r == ZE_RESULT_SUCCESS && ordinal >= groups) {
        ze_why(why, why_len, "info \"weft_ze_ordinal\" %u: device %s has %u command queue "
               "group(s)", (unsigned)ordinal, props.name, (unsigned)groups);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    return WEFT_PLUGIN_OK;
}

/* Command-queue mode: moves own lists whose fence is signalled back to the free list.  The
 * user's queue runs them in submission order, so the oldest finishes first. */
void ze_lists_recycle(weft_queue_t *q)
{
    while (!q->lists_busy.empty()) {
        ze_own_list l = q->lists_busy.front();
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

ze_result_t ze_lists_take(weft_queue_t *q, ze_own_list *out)
{
    ze_lists_recycle(q);
    if (!q->lists_free.empty()) {
        *out = q->lists_free.back();
        q->lists_free.pop_back();
        return ZE_RESULT_SUCCESS;
    }
    if (q->lists_busy.size() >= ZE_LISTS_BUSY_MAX) return ZE_RESULT_NOT_READY;
    try {
        /* Every list of the queue may come back to lists_free: recycling never allocates. */
        q->lists_free.reserve(q->lists_busy.size() + 1);
    } catch (...) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    ze_command_list_desc_t ld{};
    ld.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
    ld.commandQueueGroupOrdinal = q->ordinal;
    ze_own_list l{};
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

ze_result_t ze_command_record(ze_command_list_handle_t list, const ze_command &cmd)
{
    switch (cmd.kind) {
    case ze_command::SIGNAL:
        /* A barrier rather than zeCommandListAppendSignalEvent: the event is signalled only
         * once every earlier command (copies into staging) has completed, even on a list that
         * is not strictly in-order. */
        return zeCommandListAppendBarrier(list, cmd.event, 0, nullptr);
    case ze_command::WAIT: {
        /* A barrier waiting on the event holds back every later command of the list. */
        ze_event_handle_t ev = cmd.event;
        return zeCommandListAppendBarrier(list, nullptr, 1, &ev);
    }
    case ze_command::COPY:
        return zeCommandListAppendMemoryCopy(list, cmd.dst, cmd.src, cmd.bytes, nullptr, 0,
                                             nullptr);
    }
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

} // namespace

ze_result_t ze_queue_submit(weft_queue_t *q, const ze_command &cmd)
{
    if (q->mode == ZE_QUEUE_IMMEDIATE) return ze_command_record(q->list, cmd);

    /* Command-queue mode: one small regular list per command, executed at once.  Order across
     * lists relies on the user's queue executing lists in submission order (see attach). */
    ze_own_list l{};
    ze_result_t r = ze_lists_take(q, &l);
    if (r != ZE_RESULT_SUCCESS) return r;
    try {
        q->lists_busy.push_back(l);  // before executing: nothing can fail after it runs
    } catch (...) {
        q->lists_free.push_back(l);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    r = ze_command_record(l.list, cmd);
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
int ze_queue_attach(weft_queue_runtime_t *rt, const weft_queue_attach_args_t *args,
                    weft_queue_t **qp, int *sync_used, char *why, size_t why_len)
{
    if (!rt || !args || !qp || !sync_used ||
        args->struct_size < offsetof(weft_queue_attach_args_t, get_hex_ctx) + sizeof(void *) ||
        !args->type || !args->handle || !args->get_hex) {
        ze_why(why, why_len, "attach: missing arguments (type, value or info access)");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    *qp = nullptr;
    ze_queue_mode mode;
    if (strcmp(args->type, "ze_command_list_handle_t") == 0 ||
        strcmp(args->type, "sycl::queue") == 0)  // its native handle: an immediate list
        mode = ZE_QUEUE_IMMEDIATE;
    else if (strcmp(args->type, "ze_command_queue_handle_t") == 0)
        mode = ZE_QUEUE_REGULAR;
    else {
        ze_why(why, why_len, "type '%s' is not one of ze_command_list_handle_t, "
               "ze_command_queue_handle_t, sycl::queue", args->type);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    if (args->handle_size != sizeof(void *)) {
        ze_why(why, why_len, "a '%s' value is a handle of %zu bytes, got %zu bytes", args->type,
               sizeof(void *), args->handle_size);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    void *handle = nullptr;
    memcpy(&handle, args->handle, sizeof(handle));
    if (!handle) {
        ze_why(why, why_len, "the '%s' value is a null handle", args->type);
        return WEFT_PLUGIN_ERR_INVALID;
    }

    ze_context_handle_t ctx = nullptr;
    ze_device_handle_t dev = nullptr;
    uint32_t ordinal = 0;
    int rc = ze_attach_read(args, "weft_ze_context", &ctx, sizeof(ctx), true,
                            "ze_context_handle_t", why, why_len);
    if (rc != WEFT_PLUGIN_OK) return rc;
    if (mode == ZE_QUEUE_REGULAR) {
        rc = ze_attach_read(args, "weft_ze_device", &dev, sizeof(dev), true,
                            "ze_device_handle_t", why, why_len);
        if (rc != WEFT_PLUGIN_OK) return rc;
        rc = ze_attach_read(args, "weft_ze_ordinal", &ordinal, sizeof(ordinal), false,
                            "command queue group ordinal (uint32_t)", why, why_len);
        if (rc != WEFT_PLUGIN_OK && rc != WEFT_PLUGIN_ERR_NOT_FOUND) return rc;
    }
    if (!ctx || (mode == ZE_QUEUE_REGULAR && !dev)) {
        ze_why(why, why_len, "info \"%s\" is a null handle", ctx ? "weft_ze_device" : "weft_ze_context");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    ze_result_t r = zeContextGetStatus(ctx);
    if (r != ZE_RESULT_SUCCESS) {
        ze_why(why, why_len, "info \"weft_ze_context\" is not a usable context: "
               "zeContextGetStatus: %s (0x%x)", ze_result_name(r), (unsigned)r);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    if (mode == ZE_QUEUE_REGULAR) {
        rc = ze_attach_check_device(dev, ordinal, why, why_len);
        if (rc != WEFT_PLUGIN_OK) return rc;
    }

    auto *q = new (std::nothrow) weft_queue;
    if (!q) {
        ze_why(why, why_len, "attach: out of memory");
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    q->rt = rt;
    q->mode = mode;
    q->context = ctx;
    q->device = dev;
    q->list = mode == ZE_QUEUE_IMMEDIATE ? static_cast<ze_command_list_handle_t>(handle) : nullptr;
    q->cq = mode == ZE_QUEUE_REGULAR ? static_cast<ze_command_queue_handle_t>(handle) : nullptr;
    q->ordinal = ordinal;
    q->reached_value = 0;
    q->released_value = 0;
    q->released_valid = false;
    q->failed_logged = false;

    /* The first event pool now: a context that cannot make events fails here, not at the
     * first append. */
    r = ze_events_grow(q);
    if (r != ZE_RESULT_SUCCESS) {
        ze_why(why, why_len, "attach: cannot create a host-visible event pool on the context: "
               "zeEventPoolCreate/zeEventCreate: %s (0x%x)", ze_result_name(r), (unsigned)r);
        rc = ze_result_to_plugin(r);
        ze_events_destroy(q);
        delete q;
        return rc == WEFT_PLUGIN_ERR_AGAIN ? WEFT_PLUGIN_ERR_OTHER : rc;
    }

    /* Level Zero has no host callbacks: host-signalled events serve both mechanisms. */
    if (args->sync == WEFT_QUEUE_SYNC_HOSTFN)
        ze_log(rt, WEFT_LOG_INFO, "hostfn sync requested, but Level Zero has no host callbacks: "
               "using host-signalled events (memops)");
    *sync_used = WEFT_QUEUE_SYNC_MEMOPS;
    if (mode == ZE_QUEUE_IMMEDIATE)
        ze_log(rt, WEFT_LOG_INFO, "attached %s %p (immediate command list), context %p; sync: "
               "host-signalled events", args->type, handle, (void *)ctx);
    else
        ze_log(rt, WEFT_LOG_INFO, "attached ze_command_queue_handle_t %p (own command lists, "
               "ordinal %u), context %p, device %p; sync: host-signalled events", handle,
               (unsigned)ordinal, (void *)ctx, (void *)dev);
    *qp = q;
    return WEFT_PLUGIN_OK;
}

int ze_queue_detach(weft_queue_t *q)
{
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    /* Own lists: wait (bounded) for their fences.  One that does not finish may still use the
     * events, so then nothing of the queue is destroyed: kept rather than freed under the
     * device. */
    bool stuck = false;
    while (!q->lists_busy.empty()) {
        ze_own_list l = q->lists_busy.front();
        if (zeFenceHostSynchronize(l.fence, ZE_DETACH_WAIT_NS) != ZE_RESULT_SUCCESS) {
            stuck = true;
            break;
        }
        q->lists_busy.pop_front();
        zeCommandListDestroy(l.list);
        zeFenceDestroy(l.fence);
    }
    if (stuck) {
        ze_log(q->rt, WEFT_LOG_WARN, "detach: %zu command list(s) of queue %p did not finish; "
               "their lists and events are kept until the process exits",
               q->lists_busy.size(), (void *)q->cq);
        return WEFT_PLUGIN_ERR_OTHER;
    }
    for (const ze_own_list &l : q->lists_free) {
        zeCommandListDestroy(l.list);
        zeFenceDestroy(l.fence);
    }
    ze_events_destroy(q);
    delete q;
    return WEFT_PLUGIN_OK;
}
