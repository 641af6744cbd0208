// GPU queues: the queue plugins (libweft-queue-<name>.so) and a native queue attached to a
// stream through its info "type"/"value".
#pragma once
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "loader/loader.hpp"
#include "weft/plugin.h"

namespace weft {

// A loaded queue plugin and its runtime (opened on first use, kept until finalize).
struct queue_plugin {
    plugin_loaded plugin;
    const weft_queue_ops_v1_t *ops = nullptr;
    weft_queue_runtime_t *runtime = nullptr;
};

struct enqueue_op;

// A native queue attached to a stream.  Appends to it come from the stream's user thread; the
// enqueue progress thread polls reached() and calls release().
struct gpu_queue {
    queue_plugin *plugin = nullptr;
    const weft_queue_ops_v1_t *ops = nullptr;
    weft_queue_t *q = nullptr;
    std::string type;
    int sync = WEFT_QUEUE_SYNC_MEMOPS;  // what the plugin uses
    bool device_fabric = false;         // the fabric reads and writes device memory itself
    // The user side: reserving point numbers (see plugin.h) and appending to the queue, which
    // may block in the runtime (a full launch queue).  The progress thread never takes it.
    std::mutex append_mutex;
    uint32_t next_point = 1;
    uint32_t last_point = 0;     // the last point appended
    bool last_is_signal = true;  // ... and whether it was a signal (reached() shows it passed)
    // The enqueued operations, in queue order.  An operation is listed (with its points) before
    // its points are appended, so the progress thread never waits for an append; under mutex
    // it only calls reached() and release(), which never block.
    std::mutex mutex;
    std::deque<std::shared_ptr<enqueue_op>> ops_list;
    // Pinned staging buffers kept for reuse, by size.  Freeing page-locked memory can wait for
    // the device, which must never happen on the progress thread (it alone lets the queues'
    // waits go), so buffers come back here and only user threads free them.
    std::mutex staging_mutex;
    std::multimap<size_t, void *> staging_free;
    size_t staging_free_bytes = 0;
    // Set at finalize when the queue never passed Weft's last point: its plugin state and
    // staging are then leaked rather than freed under the device's feet.
    bool leaked = false;
    ~gpu_queue();

    // Pinned memory of at least `bytes` (user thread; nullptr when the runtime has none).
    void *staging_take(size_t bytes);
    // Back to the pool (any thread, no runtime call).
    void staging_give(void *p, size_t bytes);
    // Frees pooled buffers beyond `keep` bytes (user thread only).
    void staging_trim(size_t keep);
};

// Attaches the queue described by a stream's hints ("type", "value" and any plugin keys such
// as "weft_ze_context"): finds the plugin whose types include `type`, opens it on first use,
// decodes the hex value and attaches.  Errors name the plugin, the file and the reason.
int queue_attach(const std::map<std::string, std::string> &hints, std::unique_ptr<gpu_queue> &out);

// WEFT_ENQUEUE=memops|hostfn (default memops): the mechanism asked of queue plugins.
int queue_sync_requested(int &sync);

// Closes every opened queue plugin runtime (weft_finalize, after the queues were detached).
void queue_plugins_finalize();

}  // namespace weft
