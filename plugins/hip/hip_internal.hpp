// Internal declarations of the HIP queue plugin (libweft-queue-hip.so).
#ifndef WEFT_HIP_INTERNAL_HPP
#define WEFT_HIP_INTERNAL_HPP

#include <weft/plugin.h>

#include <hip/hip_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

constexpr const char *HIP_PLUGIN_NAME = "hip";

struct weft_queue_runtime {
    const weft_plugin_host_t *host;
    int device_count;
    // queue_create's streams (ABI minor 3, conformance tools) not yet destroyed: queue_destroy
    // destroys only these.
    std::mutex created_lock;
    std::vector<hipStream_t> created;
};

struct weft_queue {
    weft_queue_runtime_t *rt;
    hipStream_t stream;   // the user's stream: never destroyed here
    int device;           // the stream's device, made current around our HIP calls
    int sync;             // WEFT_QUEUE_SYNC_MEMOPS or WEFT_QUEUE_SYNC_HOSTFN
    const char *fallback = nullptr; // why memops were asked for and hostfn is used

    // Memops: host-mapped words 'reached' (the stream writes) and 'released' (the host
    // writes, the stream waits on it); see hip_sync.cpp.  words is the host view, dev_words
    // the stream's view of the same memory.
    uint32_t *words = nullptr;
    uint32_t *dev_words = nullptr;

    // Hostfn: values kept by the callbacks and the host.
    std::atomic<uint32_t> hostfn_reached{0};
    std::mutex lock;                 // guards hostfn_released and closing
    std::condition_variable cond;    // wait callbacks sleep here until released
    uint32_t hostfn_released = 0;
    bool closing = false;            // detach: let every wait go on
    // Callbacks appended and not yet returned; each one decrements it as its last access to
    // the queue, so detach frees the queue only after all of them.
    std::atomic<uint32_t> callbacks_pending{0};
};

// Makes the queue's device current for the scope of a call from any thread, and restores
// the caller's device (the core's threads and the user's thread may have others current).
class hip_device_guard {
public:
    explicit hip_device_guard(int device);
    ~hip_device_guard();
    hip_device_guard(const hip_device_guard &) = delete;
    hip_device_guard &operator=(const hip_device_guard &) = delete;
    hipError_t status() const { return status_; }

private:
    int previous_ = -1;
    hipError_t status_ = hipSuccess;
};

// Serial-number order of points (they wrap): a at or after b.
inline bool hip_serial_ge(uint32_t a, uint32_t b)
{
    return static_cast<int32_t>(a - b) >= 0;
}

// Messages to Weft's log through plugin.h's weft_plugin_logf (rt may be NULL).
#define hip_log(rt, level, ...) \
    weft_plugin_logf((rt) ? (rt)->host : nullptr, (level), HIP_PLUGIN_NAME, __VA_ARGS__)

// hip_plugin.cpp
// "hipErrorNoDevice (no ROCm-capable device is detected)"
void hip_error_text(hipError_t err, char *buf, size_t len);
// Maps a failed HIP call to a plugin code and logs a warning naming the call.
int hip_call_failed(const weft_queue_t *q, const char *call, hipError_t err);

// hip_queue.cpp
int hip_queue_attach(weft_queue_runtime_t *rt, const weft_queue_attach_args_t *args,
                     weft_queue_t **q, int *sync_used, char *why, size_t why_len);
int hip_queue_detach(weft_queue_t *q);
int hip_queue_create(weft_queue_runtime_t *rt, void *handle, size_t *size);
int hip_queue_destroy(weft_queue_runtime_t *rt, const void *handle, size_t size);

// hip_sync.cpp
int hip_sync_setup(weft_queue_t *q, char *why, size_t why_len);
bool hip_sync_teardown(weft_queue_t *q);
int hip_queue_append_signal(weft_queue_t *q, uint32_t value);
int hip_queue_append_wait(weft_queue_t *q, uint32_t value);
uint32_t hip_queue_reached(weft_queue_t *q);
int hip_queue_release(weft_queue_t *q, uint32_t value);

// hip_mem.cpp
int hip_queue_append_copy(weft_queue_t *q, void *dst, const void *src, size_t bytes);
int hip_queue_mem_kind(weft_queue_t *q, const void *ptr, weft_mem_kind_t *kind);
int hip_queue_host_alloc(weft_queue_t *q, size_t bytes, void **ptr);
int hip_queue_host_free(weft_queue_t *q, void *ptr);

#endif // WEFT_HIP_INTERNAL_HPP
