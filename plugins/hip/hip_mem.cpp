// HIP queue plugin: copies, memory kinds and pinned staging memory.
#include "hip_internal.hpp"

int hip_queue_append_copy(weft_queue_t *q, void *dst, const void *src, size_t bytes)
{
    if (!q || (bytes && (!dst || !src)))
        return WEFT_PLUGIN_ERR_INVALID;
    if (bytes == 0)
        return WEFT_PLUGIN_OK;
    hip_device_guard guard(q->device);
    if (guard.status() != hipSuccess)
        return hip_call_failed(q, "append_copy: hipSetDevice", guard.status());
    // hipMemcpyDefault: the runtime tells host, pinned and device memory apart (unified VA).
    hipError_t err = hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, q->stream);
    return err == hipSuccess ? WEFT_PLUGIN_OK
                             : hip_call_failed(q, "append_copy: hipMemcpyAsync", err);
}

int hip_queue_mem_kind(weft_queue_t *q, const void *ptr, weft_mem_kind_t *kind)
{
    if (!q || !kind)
        return WEFT_PLUGIN_ERR_INVALID;
    *kind = WEFT_MEM_HOST;
    if (!ptr)
        return WEFT_PLUGIN_OK;
    hip_device_guard guard(q->device);
    if (guard.status() != hipSuccess)
        return hip_call_failed(q, "mem_kind: hipSetDevice", guard.status());
    hipPointerAttribute_t attr{};
    hipError_t err = hipPointerGetAttributes(&attr, ptr);
    if (err == hipErrorInvalidValue) {
        // Memory HIP does not know: ordinary host memory.  The failure stays as the thread's
        // last error, which the application would otherwise find later: clear it.
        static_cast<void>(hipGetLastError());
        return WEFT_PLUGIN_OK;
    }
    if (err != hipSuccess) {
        int rc = hip_call_failed(q, "mem_kind: hipPointerGetAttributes", err);
        static_cast<void>(hipGetLastError());
        return rc;
    }
    if (attr.isManaged) {
        *kind = WEFT_MEM_MANAGED;
        return WEFT_PLUGIN_OK;
    }
    switch (attr.memoryType) {
    case hipMemoryTypeHost:
        *kind = WEFT_MEM_HOST_PINNED; // hipHostMalloc or hipHostRegister
        break;
    case hipMemoryTypeDevice:
    case hipMemoryTypeArray:
        *kind = WEFT_MEM_DEVICE;
        break;
    case hipMemoryTypeUnified:
        *kind = WEFT_MEM_MANAGED;
        break;
    default:
        *kind = WEFT_MEM_DEVICE; // unknown: the host must not touch it
        break;
    }
    return WEFT_PLUGIN_OK;
}

int hip_queue_host_alloc(weft_queue_t *q, size_t bytes, void **ptr)
{
    if (!q || !ptr)
        return WEFT_PLUGIN_ERR_INVALID;
    *ptr = nullptr;
    if (bytes == 0)
        return WEFT_PLUGIN_OK;
    // On q's device: that is the device that maps it for the queue's copies.
    hip_device_guard guard(q->device);
    if (guard.status() != hipSuccess)
        return hip_call_failed(q, "host_alloc: hipSetDevice", guard.status());
    hipError_t err = hipHostMalloc(ptr, bytes, hipHostMallocDefault);
    if (err != hipSuccess) {
        *ptr = nullptr;
        return hip_call_failed(q, "host_alloc: hipHostMalloc", err);
    }
    return WEFT_PLUGIN_OK;
}

int hip_queue_host_free(weft_queue_t *q, void *ptr)
{
    if (!q)
        return WEFT_PLUGIN_ERR_INVALID;
    if (!ptr)
        return WEFT_PLUGIN_OK;
    hip_device_guard guard(q->device);
    hipError_t err = hipHostFree(ptr);
    return err == hipSuccess ? WEFT_PLUGIN_OK : hip_call_failed(q, "host_free: hipHostFree", err);
}
