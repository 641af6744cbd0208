// MPIX streams, stream and multiplex communicators, and GPU enqueue, under MPICH's (4.1+)
// names: MPIX_Stream is an int handle, MPIX_STREAM_NULL MPICH's value.
#include "handles.hpp"

using namespace weft_mpi;

namespace {
int count_fail(MPI_Comm comm, const char *fn) { return fail(wcomm(comm), WEFT_ERR_COUNT, "%s: negative count", fn); }
int arg_fail(MPI_Comm comm, const char *fn, const char *what) {
    return fail(wcomm(comm), WEFT_ERR_ARG, "%s: %s", fn, what);
}
}  // namespace

extern "C" int PMPIX_Stream_create(MPI_Info info, MPIX_Stream *stream) {
    if (stream == nullptr) return arg_fail(MPI_COMM_SELF, "MPIX_Stream_create", "stream is NULL");
    weft_stream s = WEFT_STREAM_NULL;
    if (int rc = weft_stream_create(winfo(info), &s)) return merr(rc);
    *stream = mstream(s);
    return MPI_SUCCESS;
}
extern "C" int PMPIX_Stream_free(MPIX_Stream *stream) {
    if (stream == nullptr) return arg_fail(MPI_COMM_SELF, "MPIX_Stream_free", "stream is NULL");
    weft_stream s = wstream(*stream);
    if (int rc = weft_stream_free(&s)) return merr(rc);
    *stream = MPIX_STREAM_NULL;
    return MPI_SUCCESS;
}
extern "C" int PMPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm *newcomm) {
    if (newcomm == nullptr) return arg_fail(comm, "MPIX_Stream_comm_create", "newcomm is NULL");
    weft_comm c = WEFT_COMM_NULL;
    if (int rc = weft_stream_comm_create(wcomm(comm), wstream(stream), &c)) return merr(rc);
    *newcomm = mcomm(c);
    return MPI_SUCCESS;
}
extern "C" int PMPIX_Stream_comm_create_multiplex(MPI_Comm comm, int count, MPIX_Stream streams[], MPI_Comm *newcomm) {
    if (count < 0) return count_fail(comm, "MPIX_Stream_comm_create_multiplex");
    if (newcomm == nullptr || (count > 0 && streams == nullptr))
        return arg_fail(comm, "MPIX_Stream_comm_create_multiplex", "streams or newcomm is NULL");
    size_t n = static_cast<size_t>(count);
    scratch<weft_stream, 16> s(n);
    for (size_t i = 0; i < n; ++i) s[i] = wstream(streams[i]);
    weft_comm c = WEFT_COMM_NULL;
    if (int rc = weft_stream_comm_create_multiplex(wcomm(comm), n, s.get(), &c)) return merr(rc);
    *newcomm = mcomm(c);
    return MPI_SUCCESS;
}
extern "C" int PMPIX_Comm_get_stream(MPI_Comm comm, int idx, MPIX_Stream *stream) {
    if (stream == nullptr) return arg_fail(comm, "MPIX_Comm_get_stream", "stream is NULL");
    weft_stream s = WEFT_STREAM_NULL;
    if (int rc = weft_comm_get_stream(wcomm(comm), idx, &s)) return merr(rc);
    *stream = mstream(s);
    return MPI_SUCCESS;
}
extern "C" int PMPIX_Stream_progress(MPIX_Stream stream) { return merr(weft_stream_progress(wstream(stream))); }
extern "C" int PMPIX_Start_progress_thread(MPIX_Stream stream) {
    return merr(weft_start_progress_thread(wstream(stream)));
}
extern "C" int PMPIX_Stop_progress_thread(MPIX_Stream stream) {
    return merr(weft_stop_progress_thread(wstream(stream)));
}

extern "C" int PMPIX_Stream_send(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                                 int src_idx, int dst_idx) {
    if (count < 0) return count_fail(comm, "MPIX_Stream_send");
    return merr(
        weft_stream_send(buf, static_cast<size_t>(count), wtype(t), wrank(dest), tag, wcomm(comm), src_idx, dst_idx));
}
extern "C" int PMPIX_Stream_isend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                                  int src_idx, int dst_idx, MPI_Request *request) {
    if (count < 0) return count_fail(comm, "MPIX_Stream_isend");
    if (request == nullptr) return arg_fail(comm, "MPIX_Stream_isend", "request is NULL");
    return merr(weft_stream_isend(buf, static_cast<size_t>(count), wtype(t), wrank(dest), tag, wcomm(comm), src_idx,
                                  dst_idx, request));
}
extern "C" int PMPIX_Stream_recv(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm, int src_idx,
                                 int dst_idx, MPI_Status *status) {
    if (count < 0) return count_fail(comm, "MPIX_Stream_recv");
    status_out s{status, {}};
    int rc = weft_stream_recv(buf, static_cast<size_t>(count), wtype(t), wrank(source), tag, wcomm(comm), src_idx,
                              dst_idx, s.arg());
    s.done();
    return merr(rc);
}
extern "C" int PMPIX_Stream_irecv(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm, int src_idx,
                                  int dst_idx, MPI_Request *request) {
    if (count < 0) return count_fail(comm, "MPIX_Stream_irecv");
    if (request == nullptr) return arg_fail(comm, "MPIX_Stream_irecv", "request is NULL");
    return merr(weft_stream_irecv(buf, static_cast<size_t>(count), wtype(t), wrank(source), tag, wcomm(comm), src_idx,
                                  dst_idx, request));
}
extern "C" int PMPIX_Stream_send_init(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                                      int src_idx, int dst_idx, MPI_Request *request) {
    if (count < 0) return count_fail(comm, "MPIX_Stream_send_init");
    if (request == nullptr) return arg_fail(comm, "MPIX_Stream_send_init", "request is NULL");
    return merr(weft_stream_send_init(buf, static_cast<size_t>(count), wtype(t), wrank(dest), tag, wcomm(comm), src_idx,
                                      dst_idx, request));
}
extern "C" int PMPIX_Stream_recv_init(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
                                      int src_idx, int dst_idx, MPI_Request *request) {
    if (count < 0) return count_fail(comm, "MPIX_Stream_recv_init");
    if (request == nullptr) return arg_fail(comm, "MPIX_Stream_recv_init", "request is NULL");
    return merr(weft_stream_recv_init(buf, static_cast<size_t>(count), wtype(t), wrank(source), tag, wcomm(comm),
                                      src_idx, dst_idx, request));
}

// ---- GPU enqueue: on a stream communicator whose stream has a GPU (or hostq) queue ----
extern "C" int PMPIX_Send_enqueue(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
    if (count < 0) return count_fail(comm, "MPIX_Send_enqueue");
    return merr(weft_send_enqueue(buf, static_cast<size_t>(count), wtype(t), wrank(dest), tag, wcomm(comm)));
}
// The queue completes the operation after the call returned and writes the status then, in
// Weft's layout, which is not MPI_Status's: so the enqueue calls take MPI_STATUS(ES)_IGNORE
// only, and refuse a status pointer (MPI_ERR_ARG) rather than leave it unwritten.
extern "C" int PMPIX_Recv_enqueue(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
                                  MPI_Status *status) {
    if (count < 0) return count_fail(comm, "MPIX_Recv_enqueue");
    if (!ignored(status))
        return arg_fail(
            comm, "MPIX_Recv_enqueue",
            "status must be MPI_STATUS_IGNORE (the front end cannot convert a status the queue writes later)");
    return merr(weft_recv_enqueue(buf, static_cast<size_t>(count), wtype(t), wrank(source), tag, wcomm(comm),
                                  WEFT_STATUS_IGNORE));
}
extern "C" int PMPIX_Isend_enqueue(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                                   MPI_Request *request) {
    if (count < 0) return count_fail(comm, "MPIX_Isend_enqueue");
    if (request == nullptr) return arg_fail(comm, "MPIX_Isend_enqueue", "request is NULL");
    return merr(weft_isend_enqueue(buf, static_cast<size_t>(count), wtype(t), wrank(dest), tag, wcomm(comm), request));
}
extern "C" int PMPIX_Irecv_enqueue(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
                                   MPI_Request *request) {
    if (count < 0) return count_fail(comm, "MPIX_Irecv_enqueue");
    if (request == nullptr) return arg_fail(comm, "MPIX_Irecv_enqueue", "request is NULL");
    return merr(
        weft_irecv_enqueue(buf, static_cast<size_t>(count), wtype(t), wrank(source), tag, wcomm(comm), request));
}
extern "C" int PMPIX_Wait_enqueue(MPI_Request *request, MPI_Status *status) {
    if (request == nullptr) return arg_fail(MPI_COMM_SELF, "MPIX_Wait_enqueue", "request is NULL");
    if (!ignored(status))
        return arg_fail(
            MPI_COMM_SELF, "MPIX_Wait_enqueue",
            "status must be MPI_STATUS_IGNORE (the front end cannot convert a status the queue writes later)");
    weft_request r = wreq(*request);
    if (int rc = weft_wait_enqueue(&r, WEFT_STATUS_IGNORE)) return merr(rc);
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}
extern "C" int PMPIX_Waitall_enqueue(int count, MPI_Request reqs[], MPI_Status statuses[]) {
    if (count < 0 || (count > 0 && reqs == nullptr))
        return arg_fail(MPI_COMM_SELF, "MPIX_Waitall_enqueue", "bad count or requests");
    if (!ignored(statuses))
        return arg_fail(
            MPI_COMM_SELF, "MPIX_Waitall_enqueue",
            "statuses must be MPI_STATUSES_IGNORE (the front end cannot convert statuses the queue writes later)");
    size_t n = static_cast<size_t>(count);
    for (size_t i = 0; i < n; ++i) reqs[i] = wreq(reqs[i]);
    int rc = weft_waitall_enqueue(n, reqs, WEFT_STATUSES_IGNORE);
    for (size_t i = 0; i < n; ++i) reqs[i] = mreq(reqs[i]);
    return merr(rc);
}
extern "C" int PMPIX_Allreduce_enqueue(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    if (count < 0) return count_fail(comm, "MPIX_Allreduce_enqueue");
    return merr(weft_allreduce_enqueue(sb, rb, static_cast<size_t>(count), wtype(t), wop(op), wcomm(comm)));
}
extern "C" int PMPIX_Bcast_enqueue(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
    if (count < 0) return count_fail(comm, "MPIX_Bcast_enqueue");
    return merr(weft_bcast_enqueue(buf, static_cast<size_t>(count), wtype(t), root, wcomm(comm)));
}
extern "C" int PMPIX_Barrier_enqueue(MPI_Comm comm) { return merr(weft_barrier_enqueue(wcomm(comm))); }
extern "C" int PMPIX_Allgather_enqueue(const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt,
                                       MPI_Comm comm) {
    if (sc < 0 || rc_ < 0) return count_fail(comm, "MPIX_Allgather_enqueue");
    return merr(weft_allgather_enqueue(sb, static_cast<size_t>(sc), wtype(st), rb, static_cast<size_t>(rc_), wtype(rt),
                                       wcomm(comm)));
}

#define WEFT_MPI_FAMILY_stream 1
#include "alias.hpp"
