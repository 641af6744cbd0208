// The enqueue API: registers operations on a communicator's GPU queue.  Each call appends, in
// queue order: copies of device inputs into pinned staging, a signal at which the progress
// thread starts the operation, a wait that the thread releases once it completed, copies of
// staged outputs back to device memory, and a signal after which the staging can be freed.
#include <chrono>
#include <cstring>
#include <thread>

#include "comm/comm.hpp"
#include "enqueue/enqueue.hpp"
#include "base/error.hpp"
#include "base/handle.hpp"
#include "transport/runtime.hpp"
#include "comm/stream.hpp"

namespace weft {
namespace {

using op_ptr = std::shared_ptr<enqueue_op>;

handle_table<enqueue_op> &requests() {
    static handle_table<enqueue_op> table(handle_kind::enqueue, 1);
    return table;
}

int gpu_of(const char *fn, weft_comm handle, gpu_queue *&q) {
    if (int rc = runtime_check(fn)) return rc;
    comm *c = comm_get(handle);
    if (c == nullptr) return fail(WEFT_ERR_COMM, "%s: invalid communicator 0x%x", fn, handle);
    if (c->local_streams.size() != 1 || c->local_streams[0] == nullptr || !c->local_streams[0]->queue)
        return fail(WEFT_ERR_STREAM,
                    "%s: communicator 0x%x has no GPU queue; create it with weft_stream_comm_create on a stream made "
                    "with info \"type\" and hex \"value\" naming the queue",
                    fn, handle);
    q = c->local_streams[0]->queue.get();
    return WEFT_SUCCESS;
}

struct copy {
    void *dst;
    const void *src;
    size_t bytes;
};

// Where the host operation reads or writes buf: buf itself, or pinned staging when buf is
// device memory.  A fabric that handles device memory takes contiguous point-to-point buffers
// directly (direct); collectives always stage, since their reductions and copies run on the CPU.
// Staging is owned by op.
int plan(const char *fn, gpu_queue &q, const void *buf, size_t count, weft_datatype type, bool direct, enqueue_op &op,
         void *&host, size_t &bytes) {
    host = const_cast<void *>(buf);
    bytes = 0;
    size_t size = 0;
    if (weft_type_size(type, &size) != WEFT_SUCCESS) return fail(WEFT_ERR_TYPE, "%s: invalid datatype 0x%x", fn, type);
    if (__builtin_mul_overflow(count, size, &bytes))
        return fail(WEFT_ERR_COUNT, "%s: count %zu is too large", fn, count);
    if (buf == nullptr || buf == WEFT_IN_PLACE || bytes == 0) return WEFT_SUCCESS;
    weft_mem_kind_t kind = WEFT_MEM_HOST;
    if (int rc = q.ops->mem_kind(q.q, buf, &kind))
        return fail(WEFT_ERR_ARG, "%s: the %s runtime cannot tell what memory %p is (code %d)", fn, q.type.c_str(), buf,
                    rc);
    if (kind != WEFT_MEM_DEVICE) return WEFT_SUCCESS;
    ptrdiff_t lb = 0, extent = 0;
    weft_type_get_extent(type, &lb, &extent);
    if (lb != 0 || static_cast<size_t>(extent) != size)
        return fail(WEFT_ERR_TYPE,
                    "%s: a device buffer needs a contiguous datatype (it is staged as count x size bytes)", fn);
    if (direct && q.device_fabric) return WEFT_SUCCESS;
    q.staging_trim(size_t{256} << 20);  // here, on a user thread, where freeing may wait for the device
    void *p = q.staging_take(bytes);
    if (p == nullptr) return fail(WEFT_ERR_NO_MEM, "%s: cannot allocate %zu bytes of pinned staging memory", fn, bytes);
    op.staging.emplace_back(p, bytes);
    host = p;
    return WEFT_SUCCESS;
}

// A plugin append, retried while the queue is full (WEFT_PLUGIN_ERR_AGAIN: the plugin recycles
// resources as the queue passes points, which the progress thread helps along).
template <class F>
int append(F &&f) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int rc;
    while ((rc = f()) == WEFT_PLUGIN_ERR_AGAIN && std::chrono::steady_clock::now() < deadline) {
        enqueue_flush();
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return rc;
}

uint32_t next(uint32_t p) { return p + 1 == 0 ? 1 : p + 1; }

// Registers op and appends, in queue order: copies in, the start signal, then when blocking
// the wait, copies out and the done signal.  The op is listed with all its points before any
// append (so the progress thread never waits for an append, which can block).  When an append
// fails after others went in, what went in may still run: the op then stays registered (kept,
// with its staging) until the queue is detached, never runs if its start signal is missing,
// and its wait, if appended, is released.
int submit(const char *fn, gpu_queue &q, const op_ptr &op, const std::vector<copy> &in, const std::vector<copy> &out,
           bool blocking) {
    std::lock_guard al(q.append_mutex);
    op->queue = &q;
    uint32_t p = q.next_point;
    if (op->what != enqueue_op::kind::wait) op->start = p, p = next(p);
    if (blocking) {
        op->release = p, p = next(p);
        if (!out.empty()) op->done = p, p = next(p);
    }
    q.next_point = p;
    if (comm *c = comm_get(op->comm)) {
        c->enqueued.n.fetch_add(1);
        op->counted = c;
    }
    {
        std::lock_guard ql(q.mutex);
        q.ops_list.push_back(op);
    }
    bool appended = false, started = false, waits = false;
    const char *what = "copy";
    int rc = WEFT_PLUGIN_OK;
    auto note = [&](uint32_t point, bool signal) {
        q.last_point = point;
        q.last_is_signal = signal;
        appended = true;
    };
    for (const copy &c : in) {
        if ((rc = append([&] { return q.ops->append_copy(q.q, c.dst, c.src, c.bytes); }))) break;
        appended = true;
    }
    if (rc == WEFT_PLUGIN_OK && op->start != 0) {
        what = "signal";
        if ((rc = append([&] { return q.ops->append_signal(q.q, op->start); })) == WEFT_PLUGIN_OK) {
            note(op->start, true);
            started = true;
        }
    }
    if (rc == WEFT_PLUGIN_OK && op->release != 0) {
        what = "wait";
        if ((rc = append([&] { return q.ops->append_wait(q.q, op->release); })) == WEFT_PLUGIN_OK) {
            note(op->release, false);
            waits = true;
        }
    }
    for (const copy &c : out) {
        if (rc != WEFT_PLUGIN_OK) break;
        what = "copy";
        if ((rc = append([&] { return q.ops->append_copy(q.q, c.dst, c.src, c.bytes); })) == WEFT_PLUGIN_OK)
            appended = true;
    }
    if (rc == WEFT_PLUGIN_OK && op->done != 0) {
        what = "signal";
        if ((rc = append([&] { return q.ops->append_signal(q.q, op->done); })) == WEFT_PLUGIN_OK) note(op->done, true);
    }
    if (rc != WEFT_PLUGIN_OK) {
        std::lock_guard ql(q.mutex);
        if (!appended) {
            std::erase(q.ops_list, op);
        } else {
            op->keep = true;
            if (!started) op->completed = op->started = true;  // never runs
            if (!waits) op->release = 0;
        }
    }
    enqueue_notify();
    if (rc == WEFT_PLUGIN_OK) return WEFT_SUCCESS;
    return fail(plugin_error(rc), "%s: the %s queue refused a %s (code %d)%s", fn, q.type.c_str(), what, rc,
                !started     ? "; the operation will not run"
                    : !waits ? "; the operation runs but the queue does not wait for it"
                             : "; the operation runs, but staged data may not reach its device buffer");
}

int check_peer(const char *fn, weft_comm comm, int peer, int tag, bool recv) {
    int size = 0;
    weft_comm_size(comm, &size);
    if (peer == WEFT_PROC_NULL || (recv && peer == WEFT_ANY_SOURCE)) {
        // fine
    } else if (peer < 0 || peer >= size) {
        return fail(WEFT_ERR_RANK, "%s: rank %d is outside the communicator (size %d)", fn, peer, size);
    }
    if (!(recv && tag == WEFT_ANY_TAG) && (tag < 0 || tag > WEFT_TAG_UB))
        return fail(WEFT_ERR_TAG, "%s: tag %d is outside 0..%d", fn, tag, WEFT_TAG_UB);
    return WEFT_SUCCESS;
}

int send_common(const char *fn, const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm comm,
                weft_request *request) {
    gpu_queue *q;
    if (int rc = gpu_of(fn, comm, q)) return rc;
    if (int rc = check_peer(fn, comm, dest, tag, false)) return rc;
    if (request != nullptr) *request = WEFT_REQUEST_NULL;
    auto op = std::make_shared<enqueue_op>();
    void *host;
    size_t bytes;
    if (int rc = plan(fn, *q, buf, count, type, true, *op, host, bytes)) return rc;
    std::vector<copy> in;
    if (host != buf) in.push_back({host, buf, bytes});
    op->what = enqueue_op::kind::send;
    op->comm = comm;
    op->sbuf = host;
    op->count = count;
    op->type = type;
    op->peer = dest;
    op->tag = tag;
    int rc = submit(fn, *q, op, in, {}, request == nullptr);
    if (rc == WEFT_SUCCESS && request != nullptr) {
        *request = requests().insert(op);
        if (*request == 0) return fail(WEFT_ERR_NO_MEM, "%s: too many enqueued requests", fn);
    }
    return rc;
}

int recv_common(const char *fn, void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm comm,
                weft_status *status, weft_request *request) {
    gpu_queue *q;
    if (int rc = gpu_of(fn, comm, q)) return rc;
    if (int rc = check_peer(fn, comm, source, tag, true)) return rc;
    if (request != nullptr) *request = WEFT_REQUEST_NULL;
    auto op = std::make_shared<enqueue_op>();
    void *host;
    size_t bytes;
    if (int rc = plan(fn, *q, buf, count, type, true, *op, host, bytes)) return rc;
    std::vector<copy> out;
    if (host != buf) out.push_back({buf, host, bytes});
    op->what = enqueue_op::kind::recv;
    op->comm = comm;
    op->rbuf = host;
    op->count = count;
    op->type = type;
    op->peer = source;
    op->tag = tag;
    op->status = status;
    if (request == nullptr) return submit(fn, *q, op, {}, out, true);
    // The copy back waits for weft_wait_enqueue, which appends it after its wait.
    if (!out.empty()) {
        op->copy_out_dst = buf;
        op->copy_out_src = host;
        op->copy_out_bytes = bytes;
    }
    op->status = WEFT_STATUS_IGNORE;
    int rc = submit(fn, *q, op, {}, {}, false);
    if (rc == WEFT_SUCCESS) {
        *request = requests().insert(op);
        if (*request == 0) return fail(WEFT_ERR_NO_MEM, "%s: too many enqueued requests", fn);
    }
    return rc;
}

// The buffers of a collective with an input and an output (sendbuf may be WEFT_IN_PLACE, then
// the output's current contents are the input): where the host reads and writes them, and the
// staging copies before and after.
int plan_in_out(const char *fn, gpu_queue &q, const void *sendbuf, size_t scount, weft_datatype stype, void *recvbuf,
                size_t rcount, weft_datatype rtype, enqueue_op &op, std::vector<copy> &in, std::vector<copy> &out) {
    void *rhost, *shost;
    size_t bytes, sbytes;
    if (int rc = plan(fn, q, recvbuf, rcount, rtype, false, op, rhost, bytes)) return rc;
    if (sendbuf == WEFT_IN_PLACE) {
        shost = WEFT_IN_PLACE;
        if (rhost != recvbuf) in.push_back({rhost, recvbuf, bytes});
    } else {
        if (int rc = plan(fn, q, sendbuf, scount, stype, false, op, shost, sbytes)) return rc;
        if (shost != sendbuf) in.push_back({shost, sendbuf, sbytes});
    }
    if (rhost != recvbuf) out.push_back({recvbuf, rhost, bytes});
    op.sbuf = shost;
    op.rbuf = rhost;
    return WEFT_SUCCESS;
}

int comm_rank_size(weft_comm comm, int &rank, int &size) {
    if (int rc = weft_comm_rank(comm, &rank)) return rc;
    return weft_comm_size(comm, &size);
}

}  // namespace

void enqueue_requests_clear() { requests().clear(); }

}  // namespace weft

using namespace weft;

namespace {
int send_enqueue_impl(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm comm) {
    return send_common("weft_send_enqueue", buf, count, type, dest, tag, comm, nullptr);
}
}  // namespace

extern "C" int weft_send_enqueue(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm comm) {
    return comm_entry(comm, "weft_send_enqueue", [&] { return send_enqueue_impl(buf, count, type, dest, tag, comm); });
}

namespace {
int isend_enqueue_impl(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm comm,
                       weft_request *request) {
    if (request == nullptr) return fail(WEFT_ERR_ARG, "weft_isend_enqueue: request must not be NULL");
    return send_common("weft_isend_enqueue", buf, count, type, dest, tag, comm, request);
}
}  // namespace

extern "C" int weft_isend_enqueue(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm comm,
                                  weft_request *request) {
    return comm_entry(comm, "weft_isend_enqueue",
                      [&] { return isend_enqueue_impl(buf, count, type, dest, tag, comm, request); });
}

namespace {
int recv_enqueue_impl(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm comm,
                      weft_status *status) {
    return recv_common("weft_recv_enqueue", buf, count, type, source, tag, comm, status, nullptr);
}
}  // namespace

extern "C" int weft_recv_enqueue(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm comm,
                                 weft_status *status) {
    return comm_entry(comm, "weft_recv_enqueue",
                      [&] { return recv_enqueue_impl(buf, count, type, source, tag, comm, status); });
}

namespace {
int irecv_enqueue_impl(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm comm,
                       weft_request *request) {
    if (request == nullptr) return fail(WEFT_ERR_ARG, "weft_irecv_enqueue: request must not be NULL");
    return recv_common("weft_irecv_enqueue", buf, count, type, source, tag, comm, WEFT_STATUS_IGNORE, request);
}
}  // namespace

extern "C" int weft_irecv_enqueue(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm comm,
                                  weft_request *request) {
    return comm_entry(comm, "weft_irecv_enqueue",
                      [&] { return irecv_enqueue_impl(buf, count, type, source, tag, comm, request); });
}

namespace {
int waitall_enqueue_impl(size_t count, weft_request reqs[], weft_status statuses[]) {
    const char *fn = "weft_waitall_enqueue";
    if (int rc = runtime_check(fn)) return rc;
    if (count != 0 && reqs == nullptr) return fail(WEFT_ERR_ARG, "%s: requests must not be NULL", fn);
    auto wait = std::make_shared<enqueue_op>();
    wait->what = enqueue_op::kind::wait;
    gpu_queue *q = nullptr;
    std::vector<copy> out;
    for (size_t i = 0; i < count; ++i) {
        if (reqs[i] == WEFT_REQUEST_NULL) {
            // Kept in place so that statuses[i] lines up: an empty, completed dependency.
            auto none = std::make_shared<enqueue_op>();
            none->completed = true;
            none->result.source = WEFT_ANY_SOURCE;
            none->result.tag = WEFT_ANY_TAG;
            wait->deps.push_back(none);
            continue;
        }
        auto op = requests().get_shared(reqs[i]);
        if (!op)
            return fail(WEFT_ERR_REQUEST,
                        "%s: requests[%zu] = 0x%x is not a request of weft_isend_enqueue or "
                        "weft_irecv_enqueue (host requests complete with weft_wait)",
                        fn, i, reqs[i]);
        if (q != nullptr && op->queue != q)
            return fail(WEFT_ERR_REQUEST,
                        "%s: requests[%zu] was enqueued on another GPU queue than requests[0]; "
                        "all requests of one call must share a queue",
                        fn, i);
        q = op->queue;
        if (op->copy_out_bytes != 0) out.push_back({op->copy_out_dst, op->copy_out_src, op->copy_out_bytes});
        wait->deps.push_back(op);
    }
    if (q == nullptr) {
        for (size_t i = 0; statuses != WEFT_STATUSES_IGNORE && i < count; ++i) statuses[i] = wait->deps[i]->result;
        return WEFT_SUCCESS;  // nothing to wait for
    }
    wait->statuses = statuses;
    wait->status = WEFT_STATUS_IGNORE;
    int rc = submit(fn, *q, wait, {}, out, true);
    for (size_t i = 0; i < count; ++i) {
        if (reqs[i] == WEFT_REQUEST_NULL) continue;
        requests().erase(reqs[i]);
        reqs[i] = WEFT_REQUEST_NULL;
    }
    return rc;
}
}  // namespace

extern "C" int weft_waitall_enqueue(size_t count, weft_request reqs[], weft_status statuses[]) {
    return self_entry("weft_waitall_enqueue", [&] { return waitall_enqueue_impl(count, reqs, statuses); });
}

namespace {
int wait_enqueue_impl(weft_request *request, weft_status *status) {
    if (request == nullptr) return fail(WEFT_ERR_ARG, "weft_wait_enqueue: request must not be NULL");
    if (status == WEFT_STATUS_IGNORE) return weft_waitall_enqueue(1, request, WEFT_STATUSES_IGNORE);
    return weft_waitall_enqueue(1, request, status);
}
}  // namespace

extern "C" int weft_wait_enqueue(weft_request *request, weft_status *status) {
    return self_entry("weft_wait_enqueue", [&] { return wait_enqueue_impl(request, status); });
}

namespace {
int allreduce_enqueue_impl(const void *sendbuf, void *recvbuf, size_t count, weft_datatype type, weft_op op_,
                           weft_comm comm) {
    const char *fn = "weft_allreduce_enqueue";
    gpu_queue *q;
    if (int rc = gpu_of(fn, comm, q)) return rc;
    auto op = std::make_shared<enqueue_op>();
    std::vector<copy> in, out;
    if (int rc = plan_in_out(fn, *q, sendbuf, count, type, recvbuf, count, type, *op, in, out)) return rc;
    op->what = enqueue_op::kind::allreduce;
    op->comm = comm;
    op->count = count;
    op->type = type;
    op->op = op_;
    return submit(fn, *q, op, in, out, true);
}
}  // namespace

extern "C" int weft_allreduce_enqueue(const void *sendbuf, void *recvbuf, size_t count, weft_datatype type, weft_op op_,
                                      weft_comm comm) {
    return comm_entry(comm, "weft_allreduce_enqueue",
                      [&] { return allreduce_enqueue_impl(sendbuf, recvbuf, count, type, op_, comm); });
}

namespace {
int bcast_enqueue_impl(void *buffer, size_t count, weft_datatype type, int root, weft_comm comm) {
    const char *fn = "weft_bcast_enqueue";
    gpu_queue *q;
    if (int rc = gpu_of(fn, comm, q)) return rc;
    int rank = 0, size = 0;
    if (int rc = comm_rank_size(comm, rank, size)) return rc;
    if (root < 0 || root >= size)
        return fail(WEFT_ERR_RANK, "%s: root %d is outside the communicator (size %d)", fn, root, size);
    auto op = std::make_shared<enqueue_op>();
    void *host;
    size_t bytes;
    if (int rc = plan(fn, *q, buffer, count, type, false, *op, host, bytes)) return rc;
    std::vector<copy> in, out;
    if (host != buffer)
        (rank == root ? in : out).push_back(rank == root ? copy{host, buffer, bytes} : copy{buffer, host, bytes});
    op->what = enqueue_op::kind::bcast;
    op->comm = comm;
    op->rbuf = host;
    op->count = count;
    op->type = type;
    op->peer = root;
    return submit(fn, *q, op, in, out, true);
}
}  // namespace

extern "C" int weft_bcast_enqueue(void *buffer, size_t count, weft_datatype type, int root, weft_comm comm) {
    return comm_entry(comm, "weft_bcast_enqueue", [&] { return bcast_enqueue_impl(buffer, count, type, root, comm); });
}

namespace {
int barrier_enqueue_impl(weft_comm comm) {
    const char *fn = "weft_barrier_enqueue";
    gpu_queue *q;
    if (int rc = gpu_of(fn, comm, q)) return rc;
    auto op = std::make_shared<enqueue_op>();
    op->what = enqueue_op::kind::barrier;
    op->comm = comm;
    return submit(fn, *q, op, {}, {}, true);
}
}  // namespace

extern "C" int weft_barrier_enqueue(weft_comm comm) {
    return comm_entry(comm, "weft_barrier_enqueue", [&] { return barrier_enqueue_impl(comm); });
}

namespace {
int allgather_enqueue_impl(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                           size_t recvcount, weft_datatype recvtype, weft_comm comm) {
    const char *fn = "weft_allgather_enqueue";
    gpu_queue *q;
    if (int rc = gpu_of(fn, comm, q)) return rc;
    int rank = 0, size = 0;
    if (int rc = comm_rank_size(comm, rank, size)) return rc;
    size_t total;
    if (__builtin_mul_overflow(recvcount, static_cast<size_t>(size), &total))
        return fail(WEFT_ERR_COUNT, "%s: recvcount %zu is too large", fn, recvcount);
    auto op = std::make_shared<enqueue_op>();
    std::vector<copy> in, out;
    if (int rc = plan_in_out(fn, *q, sendbuf, sendcount, sendtype, recvbuf, total, recvtype, *op, in, out)) return rc;
    op->what = enqueue_op::kind::allgather;
    op->comm = comm;
    op->count = sendcount;
    op->type = sendtype;
    op->rcount = recvcount;
    op->rtype = recvtype;
    return submit(fn, *q, op, in, out, true);
}
}  // namespace

extern "C" int weft_allgather_enqueue(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                      size_t recvcount, weft_datatype recvtype, weft_comm comm) {
    return comm_entry(comm, "weft_allgather_enqueue", [&] {
        return allgather_enqueue_impl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    });
}
