// GPU queues: the queue plugins (libweft-queue-<name>.so) and a native queue attached to a
// stream through its info "type"/"value".
#pragma once
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "loader.hpp"
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
    // The enqueued operations, in queue order, and the point numbers (see plugin.h), all under
    // mutex: the user thread appends, the progress thread starts, completes and retires.
    std::mutex mutex;
    std::deque<std::shared_ptr<enqueue_op>> ops_list;
    uint32_t next_point = 1;
    uint32_t last_point = 0;  // the last point appended
    bool last_is_signal = true;  // ... and whether it was a signal (reached() shows it passed)
    ~gpu_queue();
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
