// Streams: serial execution contexts, each normally owning one explicit endpoint.
#pragma once
#include <atomic>
#include <map>
#include <string>
#include <thread>

#include "loader/queue.hpp"
#include "transport/vci.hpp"
#include "weft/weft.h"

namespace weft {

struct stream {
    vci *endpoint = nullptr;
    bool exclusive = true;  // owns an explicit endpoint (else shares an implicit one)
    // Communicators attached to it.  weft_stream_free counts no pending operations of its own:
    // each one a user holds is counted on a communicator attached to the stream
    // (comm::pending), which weft_comm_free refuses to free while any is, so none is left once
    // this is 0.  A separate counter cost every operation two writes to one more cache line.
    std::atomic<int> comm_refs{0};
    std::map<std::string, std::string> hints;  // the info's keys ("type"/"value": a GPU queue)
    std::unique_ptr<gpu_queue> queue;          // the attached GPU queue, if any
    // Progress thread (weft_start_progress_thread).
    std::thread progress_thread;
    std::atomic<bool> progress_stop{false};
    int wake_fd = -1;  // eventfd that interrupts the thread's sleep
#ifdef WEFT_STREAM_CHECKS
    std::atomic<int> users{0};  // detects two threads inside one stream at once
#endif
};

stream *stream_get(weft_stream handle);
void stream_finalize_all();

// The enqueue layer serves the streams that carry a GPU queue and the operations registered on
// communicators; it installs these at weft_init (enqueue_install), so that this layer names
// nothing above it.
struct stream_queue_hooks {
    int (*attach)(stream &s) = nullptr;  // the stream's queue is served from now on
    int (*detach)(stream &s) = nullptr;  // WEFT_ERR_BUSY while operations on it are registered
    void (*retire)() = nullptr;          // retires, now, every operation its queue has passed
};
extern stream_queue_hooks g_stream_queue_hooks;

// Debug builds (WEFT_STREAM_CHECKS) verify that no two threads use one stream at once; the
// check is compiled out otherwise, keeping the stream path free of atomic read-modify-writes.
class stream_use {
  public:
#ifdef WEFT_STREAM_CHECKS
    explicit stream_use(stream *s) : s_(s) {
        if (s_ != nullptr && s_->exclusive && !s_->endpoint->locking && s_->users.fetch_add(1) != 0) {
            s_->users.fetch_sub(1);
            s_ = nullptr;
            conflict_ = true;
        }
    }
    ~stream_use() {
        if (s_ != nullptr && s_->exclusive && !s_->endpoint->locking) s_->users.fetch_sub(1);
    }
    bool conflict() const { return conflict_; }

  private:
    stream *s_;
    bool conflict_ = false;
#else
    explicit stream_use(stream *) {}
    static constexpr bool conflict() { return false; }
#endif
};

}  // namespace weft
