/* CUDA queue plugin: copies on the stream, what kind of memory a pointer is, pinned staging
 * memory.  Unified addressing (checked at attach) lets any pointer pass as a CUdeviceptr. */
#include "cuda_internal.hpp"

int cuda_queue_append_copy(weft_queue_t *q, void *dst, const void *src, size_t bytes)
{
    if (!q || ((!dst || !src) && bytes))
        return WEFT_PLUGIN_ERR_INVALID;
    if (bytes == 0)
        return WEFT_PLUGIN_OK;
    cuda_ctx_scope scope(q->ctx);
    CUresult r = scope.status;
    /* Pageable host memory makes the call wait for the copy (the driver stages it), which
     * could wait on a point of this stream; the core stages such buffers through host_alloc. */
    if (r == CUDA_SUCCESS)
        r = cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src),
                          bytes, q->stream);
    return r == CUDA_SUCCESS ? WEFT_PLUGIN_OK : cuda_call_failed(q, "cuMemcpyAsync", r);
}

int cuda_queue_mem_kind(weft_queue_t *q, const void *ptr, weft_mem_kind_t *kind)
{
    if (!q || !kind)
        return WEFT_PLUGIN_ERR_INVALID;
    *kind = WEFT_MEM_HOST;
    if (!ptr)
        return WEFT_PLUGIN_OK;
    /* cuPointerGetAttributes (unlike cuPointerGetAttribute, which fails with
     * CUDA_ERROR_INVALID_VALUE) reports memory CUDA does not know as type 0: plain host. */
    unsigned int type = 0;
    unsigned int managed = 0; /* "a boolean": zeroed so that any width the driver writes reads right */
    CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CU_POINTER_ATTRIBUTE_IS_MANAGED};
    void *data[2] = {&type, &managed};
    cuda_ctx_scope scope(q->ctx);
    CUresult r = scope.status;
    if (r == CUDA_SUCCESS)
        r = cuPointerGetAttributes(2, attrs, data, reinterpret_cast<CUdeviceptr>(ptr));
    if (r == CUDA_ERROR_INVALID_VALUE)
        return WEFT_PLUGIN_OK; /* not a CUDA pointer: plain host memory */
    if (r != CUDA_SUCCESS)
        return cuda_call_failed(q, "cuPointerGetAttributes", r);
    if (managed)
        *kind = WEFT_MEM_MANAGED;
    else if (type == CU_MEMORYTYPE_HOST)
        *kind = WEFT_MEM_HOST_PINNED;
    else if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_ARRAY ||
             type == CU_MEMORYTYPE_UNIFIED)
        *kind = WEFT_MEM_DEVICE;
    return WEFT_PLUGIN_OK;
}

int cuda_queue_host_alloc(weft_queue_t *q, size_t bytes, void **ptr)
{
    if (!q || !ptr || bytes == 0)
        return WEFT_PLUGIN_ERR_INVALID;
    *ptr = nullptr;
    cuda_ctx_scope scope(q->ctx);
    CUresult r = scope.status;
    /* Portable: pinned for every context, not only the stream's. */
    if (r == CUDA_SUCCESS)
        r = cuMemHostAlloc(ptr, bytes, CU_MEMHOSTALLOC_PORTABLE);
    return r == CUDA_SUCCESS ? WEFT_PLUGIN_OK : cuda_call_failed(q, "cuMemHostAlloc", r);
}

int cuda_queue_host_free(weft_queue_t *q, void *ptr)
{
    if (!q)
        return WEFT_PLUGIN_ERR_INVALID;
    if (!ptr)
        return WEFT_PLUGIN_OK;
    cuda_ctx_scope scope(q->ctx);
    CUresult r = scope.status;
    if (r == CUDA_SUCCESS)
        r = cuMemFreeHost(ptr);
    return r == CUDA_SUCCESS ? WEFT_PLUGIN_OK : cuda_call_failed(q, "cuMemFreeHost", r);
}
