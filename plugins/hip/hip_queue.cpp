// HIP queue plugin: attaching a user's hipStream_t and detaching from it; streams of the
// plugin's own for conformance tools (queue_create / queue_destroy).
#include "hip_internal.hpp"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <new>

namespace {

// Checks the decoded handle; on success *stream and *device are set.
int hip_stream_check(const weft_queue_attach_args_t *args, hipStream_t *stream, int *device, char *why,
                     size_t why_len) {
    if (!args->type || strcmp(args->type, "hipStream_t") != 0) {
        snprintf(why, why_len, "hip: unknown queue type \"%s\" (expected \"hipStream_t\")",
                 args->type ? args->type : "(null)");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    if (!args->handle || args->handle_size != sizeof(hipStream_t)) {
        snprintf(why, why_len, "hip: a hipStream_t value is %zu bytes, got %zu", sizeof(hipStream_t),
                 args->handle ? args->handle_size : (size_t)0);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    memcpy(stream, args->handle, sizeof(hipStream_t));
    // The null stream is whichever device is current in the calling thread, and it waits for
    // every blocking stream of that device, so a wait appended to it would stall them all.
    if (*stream == nullptr) {
        snprintf(why, why_len, "hip: the null stream cannot be attached; create one with hipStreamCreate");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    // hipStreamPerThread names a different stream in every thread that uses it.
    if (*stream == hipStreamPerThread) {
        snprintf(why, why_len, "hip: hipStreamPerThread cannot be attached; create one with hipStreamCreate");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    // HIP 5.2 has no hipStreamGetDevice; hipGetStreamDeviceId looks the handle up in the
    // runtime's set of live streams (never dereferencing it) and gives -1 when it is not one.
    *device = hipGetStreamDeviceId(*stream);
    if (*device < 0) {
        snprintf(why, why_len, "hip: %p is not a live hipStream_t of this process", static_cast<void *>(*stream));
        return WEFT_PLUGIN_ERR_INVALID;
    }
    return WEFT_PLUGIN_OK;
}

// Memops where asked for and where the device supports stream wait/write value.
int hip_sync_choose(weft_queue_t *q, int requested) {
    if (requested != WEFT_QUEUE_SYNC_MEMOPS) return WEFT_QUEUE_SYNC_HOSTFN;
    int can_wait = 0;
    if (hipDeviceGetAttribute(&can_wait, hipDeviceAttributeCanUseStreamWaitValue, q->device) != hipSuccess) {
        static_cast<void>(hipGetLastError());  // an attribute this runtime lacks: no memops
        can_wait = 0;
    }
    if (!can_wait) {
        q->fallback = "the device has no stream wait value";
        return WEFT_QUEUE_SYNC_HOSTFN;
    }
    return WEFT_QUEUE_SYNC_MEMOPS;
}

}  // namespace

int hip_queue_attach(weft_queue_runtime_t *rt, const weft_queue_attach_args_t *args, weft_queue_t **q_out,
                     int *sync_used, char *why, size_t why_len) {
    if (!rt || !args || !q_out || !sync_used ||
        args->struct_size < offsetof(weft_queue_attach_args_t, sync) + sizeof(args->sync)) {
        snprintf(why, why_len, "hip: attach with missing arguments");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    if (args->sync != WEFT_QUEUE_SYNC_MEMOPS && args->sync != WEFT_QUEUE_SYNC_HOSTFN) {
        snprintf(why, why_len, "hip: unknown synchronization mode %d", args->sync);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    hipStream_t stream = nullptr;
    int device = -1;
    int rc = hip_stream_check(args, &stream, &device, why, why_len);
    if (rc != WEFT_PLUGIN_OK) return rc;

    auto *q = new (std::nothrow) weft_queue{};
    if (!q) {
        snprintf(why, why_len, "hip: out of memory");
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    q->rt = rt;
    q->stream = stream;
    q->device = device;
    {
        hip_device_guard guard(device);
        if (guard.status() != hipSuccess) {
            char text[160];
            hip_error_text(guard.status(), text, sizeof(text));
            snprintf(why, why_len, "hip: hipSetDevice(%d): %s", device, text);
            delete q;
            return WEFT_PLUGIN_ERR_OTHER;
        }
        q->sync = hip_sync_choose(q, args->sync);
        rc = hip_sync_setup(q, why, why_len);
    }
    if (rc != WEFT_PLUGIN_OK) {
        delete q;
        return rc;
    }
    hip_log(rt, WEFT_LOG_INFO, "attached hipStream_t %p on device %d: %s%s%s", static_cast<void *>(stream), device,
            q->sync == WEFT_QUEUE_SYNC_MEMOPS ? "memops (hipStreamWaitValue32)" : "hostfn (hipStreamAddCallback)",
            q->fallback ? ", as " : "", q->fallback ? q->fallback : "");
    *sync_used = q->sync;
    *q_out = q;
    return WEFT_PLUGIN_OK;
}

int hip_queue_detach(weft_queue_t *q) {
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    bool freeable;
    {
        hip_device_guard guard(q->device);
        freeable = hip_sync_teardown(q);
    }
    if (!freeable) {
        // Freeing memory a stream or a callback may still use would corrupt the process;
        // a few bytes are kept instead.
        hip_log(q->rt, WEFT_LOG_WARN,
                "detach: hipStreamSynchronize failed; the queue's "
                "synchronization state is kept until the process exits");
        return WEFT_PLUGIN_ERR_OTHER;
    }
    delete q;
    return WEFT_PLUGIN_OK;
}

// ABI minor 3 (conformance tools; the core never calls these): a non-blocking stream on device
// 0; its handle bytes are the hipStream_t.
int hip_queue_create(weft_queue_runtime_t *rt, void *handle, size_t *size) {
    if (!rt || !handle || !size) return WEFT_PLUGIN_ERR_INVALID;
    if (*size < sizeof(hipStream_t)) {
        *size = sizeof(hipStream_t);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    hipStream_t stream = nullptr;
    hipError_t err;
    {
        hip_device_guard guard(0);
        err = guard.status();
        if (err == hipSuccess) err = hipStreamCreateWithFlags(&stream, hipStreamNonBlocking);
    }
    if (err != hipSuccess) {
        char text[160];
        hip_error_text(err, text, sizeof(text));
        static_cast<void>(hipGetLastError());
        hip_log(rt, WEFT_LOG_WARN, "queue_create: hipStreamCreateWithFlags on device 0: %s", text);
        return err == hipErrorOutOfMemory ? WEFT_PLUGIN_ERR_NOMEM : WEFT_PLUGIN_ERR_OTHER;
    }
    try {
        std::lock_guard<std::mutex> hold(rt->created_lock);
        rt->created.push_back(stream);
    } catch (...) {
        static_cast<void>(hipStreamDestroy(stream));  // nothing was appended to it
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    memcpy(handle, &stream, sizeof(stream));
    *size = sizeof(stream);
    return WEFT_PLUGIN_OK;
}

// Synchronizes and destroys a stream of queue_create (detached first); other handles are
// refused, never destroyed.
int hip_queue_destroy(weft_queue_runtime_t *rt, const void *handle, size_t size) {
    if (!rt || !handle || size != sizeof(hipStream_t)) return WEFT_PLUGIN_ERR_INVALID;
    hipStream_t stream;
    memcpy(&stream, handle, sizeof(stream));
    try {
        std::lock_guard<std::mutex> hold(rt->created_lock);
        auto it = std::find(rt->created.begin(), rt->created.end(), stream);
        if (it == rt->created.end()) return WEFT_PLUGIN_ERR_INVALID;
        rt->created.erase(it);
    } catch (...) {
        return WEFT_PLUGIN_ERR_OTHER;
    }
    int device = hipGetStreamDeviceId(stream);
    hipError_t err;
    const char *call = "hipSetDevice";
    {
        hip_device_guard guard(device >= 0 ? device : 0);
        err = guard.status();
        if (err == hipSuccess) {
            call = "hipStreamSynchronize";
            err = hipStreamSynchronize(stream);
        }
        if (err == hipSuccess) {
            call = "hipStreamDestroy";
            err = hipStreamDestroy(stream);
        }
    }
    if (err != hipSuccess) {
        char text[160];
        hip_error_text(err, text, sizeof(text));
        static_cast<void>(hipGetLastError());
        hip_log(rt, WEFT_LOG_WARN, "queue_destroy of hipStream_t %p: %s: %s", static_cast<void *>(stream), call, text);
        try {
            std::lock_guard<std::mutex> hold(rt->created_lock);
            rt->created.push_back(stream);  // still ours: a later call may try again
        } catch (...) {}
        return WEFT_PLUGIN_ERR_OTHER;
    }
    return WEFT_PLUGIN_OK;
}
