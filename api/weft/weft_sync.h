/* Weft public C API, issue 22 point-to-point additions: synchronous sends, sendrecv and matched
 * probe (folded into weft.h when merged).  Same rules as weft.h: MPI names with the prefix
 * `weft_`, MPI's argument order, size_t counts, an error code from every call. */
#ifndef WEFT_WEFT_SYNC_H
#define WEFT_WEFT_SYNC_H

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Synchronous sends ----
 * Complete only once the matching receive has matched the message (on every fabric: the
 * receiver acknowledges it), so a completed synchronous send also tells that the receiver got
 * there.  Any receive, probe or matched probe matches a synchronous message like any other;
 * the receiver's endpoint sends the acknowledgement when the receive completes there, at its
 * next progress (any call that progresses it: a wait, test, probe or blocking call).  Sends to
 * WEFT_PROC_NULL complete at once.  As on other sends, weft_cancel of a pending weft_issend
 * request is refused (WEFT_ERR_UNSUPPORTED); so is that of a pending weft_isendrecv or
 * weft_imrecv request (a matched message cannot be unmatched). */
WEFT_API int weft_ssend(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm);
WEFT_API int weft_issend(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm,
                         weft_request *request);
/* Multiplex forms: from the local stream src_idx to the peer's stream dst_idx (as
 * weft_stream_send). */
WEFT_API int weft_stream_ssend(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm,
                               int src_idx, int dst_idx);
WEFT_API int weft_stream_issend(const void *buf, size_t count, weft_datatype datatype, int dest, int tag,
                                weft_comm comm, int src_idx, int dst_idx, weft_request *request);
/* Persistent synchronous sends (weft_start starts one run; see weft_send_init). */
WEFT_API int weft_ssend_init(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm,
                             weft_request *request);
WEFT_API int weft_stream_ssend_init(const void *buf, size_t count, weft_datatype datatype, int dest, int tag,
                                    weft_comm comm, int src_idx, int dst_idx, weft_request *request);

/* ---- Send and receive in one call ----
 * The receive is posted before the send, so a ring of sendrecv calls never deadlocks.  The
 * status is the receive's.  The nonblocking forms return one request that completes when both
 * parts have.  The _replace forms send buf's contents and receive into buf, through a
 * temporary buffer of count elements (packed) that lives until the operation completes. */
WEFT_API int weft_sendrecv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, int dest, int sendtag,
                           void *recvbuf, size_t recvcount, weft_datatype recvtype, int source, int recvtag,
                           weft_comm comm, weft_status *status);
WEFT_API int weft_sendrecv_replace(void *buf, size_t count, weft_datatype datatype, int dest, int sendtag, int source,
                                   int recvtag, weft_comm comm, weft_status *status);
WEFT_API int weft_isendrecv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, int dest, int sendtag,
                            void *recvbuf, size_t recvcount, weft_datatype recvtype, int source, int recvtag,
                            weft_comm comm, weft_request *request);
WEFT_API int weft_isendrecv_replace(void *buf, size_t count, weft_datatype datatype, int dest, int sendtag, int source,
                                    int recvtag, weft_comm comm, weft_request *request);

/* ---- Matched probe ----
 * weft_mprobe / weft_improbe find a message as weft_probe does and remove it from matching at
 * once: no other receive or probe can match it, so threads that probe then receive never take
 * each other's messages.  The message is received (only) with weft_mrecv / weft_imrecv on the
 * handle, which is then set to WEFT_MESSAGE_NULL.  A probe of WEFT_PROC_NULL returns
 * WEFT_MESSAGE_NO_PROC, whose receive completes at once with a WEFT_PROC_NULL status.
 * The message is received into a buffer the handle owns as soon as it is probed, and copied
 * (unpacked) into the receive's buffer by mrecv / at imrecv's completion; a message larger
 * than that buffer is truncated there (WEFT_ERR_TRUNCATE, as weft_recv).  A pending message
 * keeps its communicator busy (weft_comm_free refuses it). */
typedef int weft_message;
#define WEFT_MESSAGE_NULL ((weft_message)0)
#define WEFT_MESSAGE_NO_PROC ((weft_message)0xB0000001)
WEFT_API int weft_mprobe(int source, int tag, weft_comm comm, weft_message *message, weft_status *status);
/* *flag = 0 and *message untouched when no message is there. */
WEFT_API int weft_improbe(int source, int tag, weft_comm comm, int *flag, weft_message *message, weft_status *status);
WEFT_API int weft_mrecv(void *buf, size_t count, weft_datatype datatype, weft_message *message, weft_status *status);
WEFT_API int weft_imrecv(void *buf, size_t count, weft_datatype datatype, weft_message *message, weft_request *request);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_WEFT_SYNC_H */
