// HIP queue plugin: runtime open/close, shared helpers and the exported descriptor.
#include "hip_internal.hpp"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>

#define HIP_STR2(x) #x
#define HIP_STR(x) HIP_STR2(x)

namespace {
// The headers the plugin was built against; libamdhip64's soname pins the same major.
const char hip_version_text[] = "1.0 (HIP " HIP_STR(HIP_VERSION_MAJOR) "." HIP_STR(
    HIP_VERSION_MINOR) "." HIP_STR(HIP_VERSION_PATCH) ")";
} // namespace

hip_device_guard::hip_device_guard(int device)
{
    status_ = hipGetDevice(&previous_);
    if (status_ != hipSuccess) {
        previous_ = -1;
        return;
    }
    if (previous_ == device) {
        previous_ = -1; // nothing to restore
        return;
    }
    status_ = hipSetDevice(device);
    if (status_ != hipSuccess)
        previous_ = -1;
}

hip_device_guard::~hip_device_guard()
{
    if (previous_ >= 0)
        static_cast<void>(hipSetDevice(previous_));
}

void hip_error_text(hipError_t err, char *buf, size_t len)
{
    const char *name = hipGetErrorName(err);
    const char *text = hipGetErrorString(err);
    if (!name)
        name = "hipError?";
    // HIP 5.2 often gives the name as the description too: print it once then.
    if (!text || strcmp(text, name) == 0)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "%s (%s)", name, text);
}

int hip_call_failed(const weft_queue_t *q, const char *call, hipError_t err)
{
    char text[160];
    hip_error_text(err, text, sizeof(text));
    hip_log(q ? q->rt : nullptr, WEFT_LOG_WARN, "%s: %s", call, text);
    return err == hipErrorOutOfMemory ? WEFT_PLUGIN_ERR_NOMEM : WEFT_PLUGIN_ERR_OTHER;
}

namespace {

int hip_runtime_init(const weft_plugin_host_t *host, weft_queue_runtime_t **rt_out, char *why,
                     size_t why_len)
{
    if (!rt_out) {
        snprintf(why, why_len, "hip: init without a runtime pointer");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    *rt_out = nullptr;
    // Without a device HIP 5.2's hipInit says hipErrorInvalidDevice and the count says
    // hipErrorNoDevice, the clearer of the two: report the count, and hipInit's error too.
    char init_text[160] = "";
    hipError_t init_err = hipInit(0);
    if (init_err != hipSuccess)
        hip_error_text(init_err, init_text, sizeof(init_text));
    char text[160];
    int count = 0;
    hipError_t err = hipGetDeviceCount(&count);
    if (err != hipSuccess || count <= 0 || init_err != hipSuccess) {
        if (err != hipSuccess)
            hip_error_text(err, text, sizeof(text));
        else
            snprintf(text, sizeof(text), "%d devices", count);
        // The failures stay as the thread's last error, which the application would find.
        static_cast<void>(hipGetLastError());
        if (init_err != hipSuccess)
            snprintf(why, why_len, "no HIP device: hipGetDeviceCount: %s; hipInit: %s", text,
                     init_text);
        else
            snprintf(why, why_len, "no HIP device: hipGetDeviceCount: %s", text);
        return WEFT_PLUGIN_ERR_NO_DEVICE;
    }
    auto *rt = new (std::nothrow) weft_queue_runtime{};
    if (!rt) {
        snprintf(why, why_len, "hip: out of memory");
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    // Only log is used; an older, shorter host struct still has it.
    rt->host = host && host->struct_size >= offsetof(weft_plugin_host_t, log) + sizeof(host->log)
                   ? host
                   : nullptr;
    rt->device_count = count;
    int runtime_version = 0;
    if (hipRuntimeGetVersion(&runtime_version) != hipSuccess)
        runtime_version = 0;
    hip_log(rt, WEFT_LOG_DEBUG, "HIP runtime %d, %d device(s)", runtime_version, count);
    *rt_out = rt;
    return WEFT_PLUGIN_OK;
}

int hip_runtime_finalize(weft_queue_runtime_t *rt)
{
    if (!rt)
        return WEFT_PLUGIN_ERR_INVALID;
    // Streams of queue_create left over (the tool's leak) stay.
    for (hipStream_t s : rt->created)
        hip_log(rt, WEFT_LOG_WARN, "finalize: hipStream_t %p of queue_create was not destroyed",
                static_cast<void *>(s));
    // No hipDeviceReset: the devices and their streams belong to the application.
    delete rt;
    return WEFT_PLUGIN_OK;
}

const char *const hip_types[] = {"hipStream_t", nullptr};

const weft_queue_ops_v1_t hip_ops = {
    .types = hip_types,
    .init = hip_runtime_init,
    .finalize = hip_runtime_finalize,
    .attach = hip_queue_attach,
    .detach = hip_queue_detach,
    .append_signal = hip_queue_append_signal,
    .append_wait = hip_queue_append_wait,
    .append_copy = hip_queue_append_copy,
    .reached = hip_queue_reached,
    .release = hip_queue_release,
    .mem_kind = hip_queue_mem_kind,
    .host_alloc = hip_queue_host_alloc,
    .host_free = hip_queue_host_free,
    .queue_create = hip_queue_create,
    .queue_destroy = hip_queue_destroy,
};
} // namespace

extern "C" {
__attribute__((visibility("default"))) extern const weft_plugin_v1_t weft_plugin_v1;
const weft_plugin_v1_t weft_plugin_v1 = {
    WEFT_PLUGIN_ABI_MAJOR, WEFT_PLUGIN_ABI_MINOR, WEFT_PLUGIN_KIND_QUEUE, HIP_PLUGIN_NAME,
    hip_version_text,      0,                     &hip_ops,
};
}
