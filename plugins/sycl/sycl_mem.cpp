/* SYCL / Level Zero queue plugin: copies on the queue, memory kinds, staging allocations. */
#include "sycl_internal.hpp"

int sycl_queue_append_copy(weft_queue_t *q, void *dst, const void *src, size_t bytes)
{
    if (!q || ((!dst || !src) && bytes != 0)) return WEFT_PLUGIN_ERR_INVALID;
    if (bytes == 0) return WEFT_PLUGIN_OK;
    ze_result_t r = sycl_submit(q, sycl_command{sycl_command::COPY, nullptr, dst, src, bytes});
    if (r == ZE_RESULT_SUCCESS) return WEFT_PLUGIN_OK;
    int rc = sycl_result_to_plugin(r);
    if (rc != WEFT_PLUGIN_ERR_AGAIN)
        sycl_log(q->rt, WEFT_LOG_ERROR, "append_copy %p <- %p (%zu bytes): %s (0x%x)", dst, src,
                 bytes, sycl_result_name(r), (unsigned)r);
    return rc;
}

int sycl_queue_mem_kind(weft_queue_t *q, const void *ptr, weft_mem_kind_t *kind)
{
    if (!q || !kind) return WEFT_PLUGIN_ERR_INVALID;
    if (!ptr) {
        *kind = WEFT_MEM_HOST;
        return WEFT_PLUGIN_OK;
    }
    ze_memory_allocation_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
    ze_result_t r = zeMemGetAllocProperties(q->context, ptr, &props, nullptr);
    if (r != ZE_RESULT_SUCCESS) {
        sycl_log(q->rt, WEFT_LOG_ERROR, "mem_kind %p: zeMemGetAllocProperties: %s (0x%x)", ptr,
                 sycl_result_name(r), (unsigned)r);
        return sycl_result_to_plugin(r);
    }
    switch (props.type) {
    case ZE_MEMORY_TYPE_DEVICE: *kind = WEFT_MEM_DEVICE; break;
    case ZE_MEMORY_TYPE_SHARED: *kind = WEFT_MEM_MANAGED; break;
    case ZE_MEMORY_TYPE_HOST: *kind = WEFT_MEM_HOST_PINNED; break;
    default: *kind = WEFT_MEM_HOST; break;  // ZE_MEMORY_TYPE_UNKNOWN: not the context's
    }
    return WEFT_PLUGIN_OK;
}

int sycl_queue_host_alloc(weft_queue_t *q, size_t bytes, void **ptr)
{
    if (!q || !ptr) return WEFT_PLUGIN_ERR_INVALID;
    *ptr = nullptr;
    ze_host_mem_alloc_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
    /* 64: a cache line, enough for any copy engine; zeMemAllocHost wants a power of two. */
    ze_result_t r = zeMemAllocHost(q->context, &desc, bytes ? bytes : 1, 64, ptr);
    if (r != ZE_RESULT_SUCCESS) {
        sycl_log(q->rt, WEFT_LOG_WARN, "host_alloc %zu bytes: zeMemAllocHost: %s (0x%x)", bytes,
                 sycl_result_name(r), (unsigned)r);
        *ptr = nullptr;
        return sycl_result_to_plugin(r);
    }
    return WEFT_PLUGIN_OK;
}

int sycl_queue_host_free(weft_queue_t *q, void *ptr)
{
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    if (!ptr) return WEFT_PLUGIN_OK;
    ze_result_t r = zeMemFree(q->context, ptr);
    return sycl_result_to_plugin(r);
}
