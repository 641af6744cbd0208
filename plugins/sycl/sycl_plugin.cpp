/* SYCL / Level Zero queue plugin: the exported descriptor, runtime init/finalize, logging and
 * Level Zero result names. */
#include "sycl_internal.hpp"

#include <cstdio>
#include <new>

namespace {

/* "1.0 (Level Zero loader API 1.4)": the API version of the headers built against (the 1.4
 * headers cannot ask the loader for its own version). */
char sycl_version_text[64] = "1.0 (Level Zero)";

__attribute__((constructor)) void sycl_version_fill()
{
    snprintf(sycl_version_text, sizeof(sycl_version_text), "1.0 (Level Zero loader API %u.%u)",
             (unsigned)ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT),
             (unsigned)ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT));
}

int sycl_runtime_init(const weft_plugin_host_t *host, weft_queue_runtime_t **rt, char *why,
                      size_t why_len)
{
    if (!rt) {
        sycl_why(why, why_len, "init: rt is NULL");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    *rt = nullptr;
    ze_result_t r = zeInit(ZE_INIT_FLAG_GPU_ONLY);
    if (r != ZE_RESULT_SUCCESS) {
        sycl_why(why, why_len, "no Level Zero GPU driver: zeInit: %s (0x%x)",
                 sycl_result_name(r), (unsigned)r);
        return WEFT_PLUGIN_ERR_NO_DEVICE;
    }
    uint32_t drivers = 0;
    r = zeDriverGet(&drivers, nullptr);
    if (r != ZE_RESULT_SUCCESS || drivers == 0) {
        if (r != ZE_RESULT_SUCCESS)
            sycl_why(why, why_len, "no Level Zero GPU driver: zeDriverGet: %s (0x%x)",
                     sycl_result_name(r), (unsigned)r);
        else
            sycl_why(why, why_len, "no Level Zero GPU driver: zeDriverGet found none");
        return WEFT_PLUGIN_ERR_NO_DEVICE;
    }
    /* A driver without devices is as good as none. */
    std::vector<ze_driver_handle_t> handles;
    uint32_t devices = 0;
    try {
        handles.resize(drivers);
    } catch (...) {
        sycl_why(why, why_len, "init: out of memory");
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    if (zeDriverGet(&drivers, handles.data()) == ZE_RESULT_SUCCESS) {
        for (uint32_t i = 0; i < drivers && i < handles.size(); ++i) {
            uint32_t n = 0;
            if (zeDeviceGet(handles[i], &n, nullptr) == ZE_RESULT_SUCCESS) devices += n;
        }
    }
    if (devices == 0) {
        sycl_why(why, why_len, "no Level Zero GPU device: %u driver(s) report none",
                 (unsigned)drivers);
        return WEFT_PLUGIN_ERR_NO_DEVICE;
    }
    auto *runtime = new (std::nothrow) weft_queue_runtime;
    if (!runtime) {
        sycl_why(why, why_len, "init: out of memory");
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    runtime->host = host;
    *rt = runtime;
    return WEFT_PLUGIN_OK;
}

int sycl_runtime_finalize(weft_queue_runtime_t *rt)
{
    if (!rt) return WEFT_PLUGIN_ERR_INVALID;
    /* Level Zero has no zeFini: the driver stays loaded until the process exits. */
    sycl_created_release(rt);
    delete rt;
    return WEFT_PLUGIN_OK;
}

/* "sycl::queue" is the Level Zero native handle of an in-order SYCL queue; with current
 * oneAPI (immediate command lists, the default) that is a ze_command_list_handle_t of an
 * immediate list, and it is treated exactly as one. */
const char *const sycl_types[] = {"ze_command_list_handle_t", "ze_command_queue_handle_t",
                                  "sycl::queue", nullptr};

const weft_queue_ops_v1_t sycl_ops = {
    .types = sycl_types,
    .init = sycl_runtime_init,
    .finalize = sycl_runtime_finalize,
    .attach = sycl_queue_attach,
    .detach = sycl_queue_detach,
    .append_signal = sycl_queue_append_signal,
    .append_wait = sycl_queue_append_wait,
    .append_copy = sycl_queue_append_copy,
    .reached = sycl_queue_reached,
    .release = sycl_queue_release,
    .mem_kind = sycl_queue_mem_kind,
    .host_alloc = sycl_queue_host_alloc,
    .host_free = sycl_queue_host_free,
    .queue_create = sycl_queue_create,
    .queue_destroy = sycl_queue_destroy,
};

} // namespace

const char *sycl_result_name(ze_result_t r)
{
    switch (r) {
    case ZE_RESULT_SUCCESS: return "ZE_RESULT_SUCCESS";
    case ZE_RESULT_NOT_READY: return "ZE_RESULT_NOT_READY";
    case ZE_RESULT_ERROR_DEVICE_LOST: return "ZE_RESULT_ERROR_DEVICE_LOST";
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: return "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY";
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY";
    case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET: return "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET";
    case ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE:
        return "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE";
    case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS: return "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS";
    case ZE_RESULT_ERROR_NOT_AVAILABLE: return "ZE_RESULT_ERROR_NOT_AVAILABLE";
    case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE: return "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE";
    case ZE_RESULT_ERROR_UNINITIALIZED: return "ZE_RESULT_ERROR_UNINITIALIZED";
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION: return "ZE_RESULT_ERROR_UNSUPPORTED_VERSION";
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: return "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE";
    case ZE_RESULT_ERROR_INVALID_ARGUMENT: return "ZE_RESULT_ERROR_INVALID_ARGUMENT";
    case ZE_RESULT_ERROR_INVALID_NULL_HANDLE: return "ZE_RESULT_ERROR_INVALID_NULL_HANDLE";
    case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE: return "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE";
    case ZE_RESULT_ERROR_INVALID_NULL_POINTER: return "ZE_RESULT_ERROR_INVALID_NULL_POINTER";
    case ZE_RESULT_ERROR_INVALID_SIZE: return "ZE_RESULT_ERROR_INVALID_SIZE";
    case ZE_RESULT_ERROR_UNSUPPORTED_SIZE: return "ZE_RESULT_ERROR_UNSUPPORTED_SIZE";
    case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT: return "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT";
    case ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT:
        return "ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT";
    case ZE_RESULT_ERROR_INVALID_ENUMERATION: return "ZE_RESULT_ERROR_INVALID_ENUMERATION";
    case ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION: return "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION";
    case ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE:
        return "ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE";
    case ZE_RESULT_ERROR_OVERLAPPING_REGIONS: return "ZE_RESULT_ERROR_OVERLAPPING_REGIONS";
    case ZE_RESULT_ERROR_UNKNOWN: return "ZE_RESULT_ERROR_UNKNOWN";
    default: return "ZE_RESULT_(other)";
    }
}

int sycl_result_to_plugin(ze_result_t r)
{
    switch (r) {
    case ZE_RESULT_SUCCESS: return WEFT_PLUGIN_OK;
    case ZE_RESULT_NOT_READY: return WEFT_PLUGIN_ERR_AGAIN;
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return WEFT_PLUGIN_ERR_NOMEM;
    case ZE_RESULT_ERROR_INVALID_ARGUMENT:
    case ZE_RESULT_ERROR_INVALID_NULL_HANDLE:
    case ZE_RESULT_ERROR_INVALID_NULL_POINTER:
    case ZE_RESULT_ERROR_INVALID_SIZE:
    case ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT:
    case ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE:
    case ZE_RESULT_ERROR_OVERLAPPING_REGIONS: return WEFT_PLUGIN_ERR_INVALID;
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION: return WEFT_PLUGIN_ERR_UNSUPPORTED;
    default: return WEFT_PLUGIN_ERR_OTHER;
    }
}

extern "C" {
__attribute__((visibility("default"))) extern const weft_plugin_v1_t weft_plugin_v1;
const weft_plugin_v1_t weft_plugin_v1 = {
    WEFT_PLUGIN_ABI_MAJOR, WEFT_PLUGIN_ABI_MINOR, WEFT_PLUGIN_KIND_QUEUE, SYCL_PLUGIN_NAME,
    sycl_version_text,     0,                     &sycl_ops,
};
}
