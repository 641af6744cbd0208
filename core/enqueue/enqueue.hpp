// The enqueue engine: operations registered on GPU queues, started and completed by one
// progress thread that serves every GPU stream.
#pragma once
#include <memory>
#include <vector>

#include "loader/queue.hpp"
#include "weft/weft.h"

namespace weft {

struct comm;
struct stream;

// Serial-number order of points (plugin.h): a is at or after b.
inline bool point_reached(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) >= 0; }

// One operation registered on a queue.  Points are 0 when absent: the host starts the
// operation once the queue reached `start`, releases `release` once it completed (and every
// earlier release was given), and frees the staging buffers once the queue reached `done`.
struct enqueue_op {
    enum class kind { send, recv, allreduce, bcast, barrier, allgather, wait };
    kind what = kind::send;
    gpu_queue *queue = nullptr;
    uint32_t start = 0, release = 0, done = 0;
    // The host operation, on buffers the host can touch (the user's or staging).
    weft_comm comm = WEFT_COMM_NULL;
    const void *sbuf = nullptr;
    void *rbuf = nullptr;
    size_t count = 0, rcount = 0;
    weft_datatype type = WEFT_DATATYPE_NULL, rtype = WEFT_DATATYPE_NULL;
    weft_op op = WEFT_OP_NULL;
    int peer = 0, tag = 0;
    // Completion: the status goes to *status (recv, wait), or statuses[i] for waitall's deps.
    weft_status *status = nullptr;
    weft_status *statuses = nullptr;
    std::vector<std::shared_ptr<enqueue_op>> deps;  // wait: the requests it completes
    // Copies back to device memory that a later wait appends (irecv with staging).
    void *copy_out_dst = nullptr;
    const void *copy_out_src = nullptr;
    size_t copy_out_bytes = 0;
    std::vector<std::pair<void *, size_t>> staging;  // pinned buffers, back to the queue's pool with the op
    struct comm *counted = nullptr;                  // its communicator's `enqueued` counts it until the op is freed
    weft_request req = WEFT_REQUEST_NULL;
    bool started = false, completed = false, released = false;
    // An append failed after others succeeded: the queue may still run what was appended, so
    // the op (and its staging) stays until the queue is detached.
    bool keep = false;
    weft_status result{};
    ~enqueue_op();
};

// How long the enqueue progress thread polls after the last movement before it naps, in
// microseconds (WEFT_ENQUEUE_SPIN_US, read at init).
extern unsigned g_enqueue_spin_us;

// Installs the hooks through which streams and communicators reach this layer
// (stream_queue_hooks); weft_init calls it.
void enqueue_install();
// Makes the stream's queue known to the progress thread (started on first use).
int enqueue_register(stream &s);
// Forgets it: WEFT_ERR_BUSY while operations on it are still registered.
int enqueue_unregister(stream &s);
// Retires, now, every operation whose queue has passed it (so that a communicator can be freed
// right after the program synchronized its queue, without waiting for the thread's next pass).
void enqueue_flush();
// Wakes the progress thread after operations were added to a queue.
void enqueue_notify();
// weft_finalize: lets registered operations finish (bounded wait), stops the thread, and lets
// every queue past Weft's points before the queues are detached.
void enqueue_finalize();
// Drops the isend/irecv_enqueue requests never passed to a wait (weft_finalize).
void enqueue_requests_clear();

}  // namespace weft
