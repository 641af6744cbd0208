/* Weft public C API: persistent requests, persistent collectives, and the request calls that
 * go with them (MPI 4.0 sections 3.9, 3.7.5, 6.13).  Included by weft.h's users directly until
 * it is folded into weft.h.
 *
 * A persistent request is made inactive by its *_init call and keeps its handle until
 * weft_request_free: weft_start makes it active, and a wait or test that completes it makes it
 * inactive again (the handle stays).  A wait or test on an inactive persistent request returns
 * at once with an empty status (source WEFT_ANY_SOURCE, tag WEFT_ANY_TAG, error WEFT_SUCCESS,
 * count 0); weft_waitany, weft_testany, weft_waitsome and weft_testsome skip them as they skip
 * WEFT_REQUEST_NULL.  While it exists, a persistent request counts as pending on its
 * communicator and stream (weft_comm_free, weft_stream_free: WEFT_ERR_BUSY until it is freed). */
#ifndef WEFT_WEFT_PERSIST_H
#define WEFT_WEFT_PERSIST_H

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Persistent point-to-point ----
 * The arguments of weft_isend/weft_irecv, checked once, here: a bad argument fails the init
 * (with its code and detail), never a start.  Each start sends (receives) buf as it is then. */
WEFT_API int weft_send_init(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm,
                            weft_request *request);
WEFT_API int weft_recv_init(void *buf, size_t count, weft_datatype datatype, int source, int tag, weft_comm comm,
                            weft_request *request);
/* Multiplex and stream communicators: the src_idx/dst_idx of weft_stream_isend/irecv. */
WEFT_API int weft_stream_send_init(const void *buf, size_t count, weft_datatype datatype, int dest, int tag,
                                   weft_comm comm, int src_idx, int dst_idx, weft_request *request);
WEFT_API int weft_stream_recv_init(void *buf, size_t count, weft_datatype datatype, int source, int tag, weft_comm comm,
                                   int src_idx, int dst_idx, weft_request *request);

/* Starts an inactive persistent request.  WEFT_ERR_REQUEST (request unchanged) for
 * WEFT_REQUEST_NULL, an invalid handle, a request that is not persistent, or one that is
 * active (started and not yet completed by a wait or test). */
WEFT_API int weft_start(weft_request *request);
/* Checks every request as weft_start does before starting any, then starts them in order. */
WEFT_API int weft_startall(size_t count, weft_request requests[]);

/* Frees the request and sets the handle to WEFT_REQUEST_NULL.  An active point-to-point
 * request (persistent or not) is not cancelled: its operation completes, and its resources are
 * released when its endpoint next progresses, without anyone waiting (use another way to learn
 * that the buffer is free again).  It stops counting as pending on its communicator and stream
 * at once.  WEFT_ERR_REQUEST for WEFT_REQUEST_NULL, an invalid handle, and an active collective
 * (nonblocking or persistent: erroneous in MPI; complete it first). */
WEFT_API int weft_request_free(weft_request *request);
/* MPI_Request_get_status: *flag = whether the request has completed (a test that frees
 * nothing: the request and its handle stay as they are, to be completed by a wait or test);
 * then status as a wait would fill it, and the operation's error is returned.  Progresses the
 * request's endpoint once.  WEFT_REQUEST_NULL and inactive persistent requests: flag 1 and an
 * empty status. */
WEFT_API int weft_request_get_status(weft_request request, int *flag, weft_status *status);
/* MPIX_Request_is_complete: *flag = whether the request has completed, with no progress at all
 * (a cheap check for a thread that leaves progress to others).  1 for WEFT_REQUEST_NULL and an
 * inactive persistent request. */
WEFT_API int weft_request_is_complete(weft_request request, int *flag);

/* ---- Completion of some of many (MPI rules) ----
 * Inactive persistent requests count as WEFT_REQUEST_NULL.  When every request is null or
 * inactive: weft_testany sets *flag 1, *index WEFT_UNDEFINED and an empty status;
 * weft_waitsome and weft_testsome set *outcount WEFT_UNDEFINED.  Completed requests are freed
 * (handle WEFT_REQUEST_NULL) or, persistent ones, made inactive.  weft_testany with none
 * complete: *flag 0, *index WEFT_UNDEFINED.  weft_waitsome/testsome write the indices of the
 * completed requests to indices[0, *outcount) and their statuses to statuses[0, *outcount)
 * (indices and statuses hold incount entries); when any completed one failed they return
 * WEFT_ERR_IN_STATUS and each status's error field says which (with WEFT_STATUSES_IGNORE: the
 * first failure's code). */
WEFT_API int weft_waitsome(size_t incount, weft_request requests[], size_t *outcount, size_t indices[],
                           weft_status statuses[]);
WEFT_API int weft_testany(size_t count, weft_request requests[], size_t *index, int *flag, weft_status *status);
WEFT_API int weft_testsome(size_t incount, weft_request requests[], size_t *outcount, size_t indices[],
                           weft_status statuses[]);

/* ---- Persistent collectives (MPI 4.0) ----
 * The arguments of the blocking collective, then info (WEFT_INFO_NULL, or an info whose keys
 * are ignored) and the request.  Collective: every process of comm calls it, in the same order
 * as its other collectives.  The schedule is built here, once, and each weft_start replays it
 * (all processes start their persistent collectives on a communicator in the same order,
 * relative to each other and to its other collectives).  Buffers are read at each start.  An
 * active persistent collective cannot be freed (WEFT_ERR_REQUEST); an inactive one can. */
WEFT_API int weft_barrier_init(weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_bcast_init(void *buffer, size_t count, weft_datatype datatype, int root, weft_comm comm,
                             weft_info info, weft_request *request);
WEFT_API int weft_reduce_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                              int root, weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_allreduce_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                                 weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_gather_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                              size_t recvcount, weft_datatype recvtype, int root, weft_comm comm, weft_info info,
                              weft_request *request);
WEFT_API int weft_gatherv_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                               const size_t recvcounts[], const size_t displs[], weft_datatype recvtype, int root,
                               weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_scatter_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                               size_t recvcount, weft_datatype recvtype, int root, weft_comm comm, weft_info info,
                               weft_request *request);
WEFT_API int weft_scatterv_init(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                                weft_datatype sendtype, void *recvbuf, size_t recvcount, weft_datatype recvtype,
                                int root, weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_allgather_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                 size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_info info,
                                 weft_request *request);
WEFT_API int weft_allgatherv_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                  const size_t recvcounts[], const size_t displs[], weft_datatype recvtype,
                                  weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_alltoall_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_info info,
                                weft_request *request);
WEFT_API int weft_alltoallv_init(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                                 weft_datatype sendtype, void *recvbuf, const size_t recvcounts[],
                                 const size_t rdispls[], weft_datatype recvtype, weft_comm comm, weft_info info,
                                 weft_request *request);
WEFT_API int weft_reduce_scatter_block_init(const void *sendbuf, void *recvbuf, size_t recvcount,
                                            weft_datatype datatype, weft_op op, weft_comm comm, weft_info info,
                                            weft_request *request);
WEFT_API int weft_scan_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                            weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_exscan_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                              weft_comm comm, weft_info info, weft_request *request);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_WEFT_PERSIST_H */
