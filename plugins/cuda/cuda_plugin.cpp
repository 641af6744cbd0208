/* CUDA queue plugin: the exported descriptor, runtime init/finalize, messages and error text. */
#include "cuda_internal.hpp"

#include <cstdio>
#include <new>

namespace {

/* "1.0 (CUDA driver API 13.0)": the API version of the headers the plugin was built with. */
char cuda_version_text[64] = "1.0 (CUDA driver API)";

__attribute__((constructor)) void cuda_version_fill()
{
    snprintf(cuda_version_text, sizeof(cuda_version_text), "1.0 (CUDA driver API %d.%d)",
             CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
}

int cuda_runtime_init(const weft_plugin_host_t *host, weft_queue_runtime_t **rt_out, char *why,
                      size_t why_len)
{
    if (!rt_out)
        return WEFT_PLUGIN_ERR_INVALID;
    *rt_out = nullptr;
    char err[160];
    CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS) {
        cuda_why(why, why_len, "no CUDA device: cuInit: %s", cuda_error_text(r, err, sizeof(err)));
        return WEFT_PLUGIN_ERR_NO_DEVICE;
    }
    int count = 0;
    r = cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS) {
        cuda_why(why, why_len, "no CUDA device: cuDeviceGetCount: %s",
                 cuda_error_text(r, err, sizeof(err)));
        return WEFT_PLUGIN_ERR_NO_DEVICE;
    }
    if (count <= 0) {
        cuda_why(why, why_len, "no CUDA device: cuDeviceGetCount found no device");
        return WEFT_PLUGIN_ERR_NO_DEVICE;
    }
    auto *rt = new (std::nothrow) weft_queue_runtime{};
    if (!rt) {
        cuda_why(why, why_len, "out of memory");
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    rt->host = host;
    rt->device_count = count;
    cuDriverGetVersion(&rt->driver_version);
    pthread_mutex_init(&rt->lock, nullptr);
    rt->graveyard = nullptr;
    rt->created = nullptr;
    cuda_log(rt, WEFT_LOG_DEBUG, "CUDA driver %d.%d, %d device(s)", rt->driver_version / 1000,
             (rt->driver_version % 1000) / 10, count);
    *rt_out = rt;
    return WEFT_PLUGIN_OK;
}

int cuda_runtime_finalize(weft_queue_runtime_t *rt)
{
    if (!rt)
        return WEFT_PLUGIN_ERR_INVALID;
    /* Words still possibly read by a stream at finalize are left to the process's end rather
     * than freed under the device (or waited for, which could hang on a stalled stream). */
    cuda_graveyard_sweep(rt);
    if (rt->graveyard)
        cuda_log(rt, WEFT_LOG_WARN,
                 "finalize: a detached stream has not reached its last wait; its two words of "
                 "pinned memory are kept");
    /* Streams of queue_create left over (the tool's leak) stay, with their contexts. */
    for (cuda_created_stream *c = rt->created; c;) {
        cuda_created_stream *next = c->next;
        cuda_log(rt, WEFT_LOG_WARN, "finalize: CUstream %p of queue_create was not destroyed",
                 static_cast<void *>(c->stream));
        delete c;
        c = next;
    }
    pthread_mutex_destroy(&rt->lock);
    delete rt;
    return WEFT_PLUGIN_OK;
}

const char *const cuda_types[] = {"cudaStream_t", "CUstream", nullptr};

const weft_queue_ops_v1_t cuda_ops = {
    .types = cuda_types,
    .init = cuda_runtime_init,
    .finalize = cuda_runtime_finalize,
    .attach = cuda_queue_attach,
    .detach = cuda_queue_detach,
    .append_signal = cuda_queue_append_signal,
    .append_wait = cuda_queue_append_wait,
    .append_copy = cuda_queue_append_copy,
    .reached = cuda_queue_reached,
    .release = cuda_queue_release,
    .mem_kind = cuda_queue_mem_kind,
    .host_alloc = cuda_queue_host_alloc,
    .host_free = cuda_queue_host_free,
    .queue_create = cuda_queue_create,
    .queue_destroy = cuda_queue_destroy,
};

} // namespace

const char *cuda_error_text(CUresult r, char *buf, size_t len)
{
    const char *name = nullptr;
    const char *text = nullptr;
    /* Both fail (and leave NULL) for codes this driver does not know. */
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = nullptr;
    if (cuGetErrorString(r, &text) != CUDA_SUCCESS)
        text = nullptr;
    if (name && text)
        snprintf(buf, len, "%s (%s)", name, text);
    else if (name)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "CUDA error %d", static_cast<int>(r));
    return buf;
}

int cuda_result_to_plugin(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS:
        return WEFT_PLUGIN_OK;
    case CUDA_ERROR_OUT_OF_MEMORY:
        return WEFT_PLUGIN_ERR_NOMEM;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        return WEFT_PLUGIN_ERR_INVALID;
    case CUDA_ERROR_NOT_SUPPORTED:
        return WEFT_PLUGIN_ERR_UNSUPPORTED;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
        return WEFT_PLUGIN_ERR_NO_DEVICE;
    default:
        return WEFT_PLUGIN_ERR_OTHER;
    }
}

int cuda_call_failed(const weft_queue *q, const char *call, CUresult r)
{
    char err[160];
    cuda_log(q->rt, WEFT_LOG_WARN, "%s: %s: %s", q->name, call,
             cuda_error_text(r, err, sizeof(err)));
    return cuda_result_to_plugin(r);
}

extern "C" {
__attribute__((visibility("default"))) extern const weft_plugin_v1_t weft_plugin_v1;
const weft_plugin_v1_t weft_plugin_v1 = {
    WEFT_PLUGIN_ABI_MAJOR, WEFT_PLUGIN_ABI_MINOR, WEFT_PLUGIN_KIND_QUEUE, CUDA_PLUGIN_NAME,
    cuda_version_text,     0,                     &cuda_ops,
};
}
