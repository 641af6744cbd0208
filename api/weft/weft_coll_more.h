/* Weft: the collectives MPI has beyond weft.h's set (issue 22, item 6): reduce_scatter with
 * per-rank counts, alltoallw with per-peer datatypes, and the local reduction helpers.
 * Same rules as weft.h: MPI names and argument order, counts size_t, every call returns an
 * error code and records a detail naming the argument (weft_error_string). */
#ifndef WEFT_WEFT_COLL_MORE_H
#define WEFT_WEFT_COLL_MORE_H

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reduces each process's sendbuf, a vector of recvcounts[0] + ... + recvcounts[size-1]
 * elements, elementwise over all processes and scatters the result: rank r receives
 * recvcounts[r] elements, block r of the reduced vector (blocks in rank order).  recvcounts
 * must be the same on every process; zero counts are allowed.  sendbuf = WEFT_IN_PLACE: the
 * input is taken from recvbuf, which then holds the whole vector, and the result lands at its
 * start.  A non-commutative op combines in rank order.  Datatypes as for weft_reduce.
 * Algorithms (WEFT_COLL_REDUCE_SCATTER=recursive_halving|pairwise|reduce_scatterv, weft-info
 * --coll): recursive halving below 512 KiB in all and pairwise from there for a commutative
 * op; a reduce to rank 0 followed by a scatterv for a non-commutative one. */
WEFT_API int weft_reduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[], weft_datatype datatype,
                                 weft_op op, weft_comm comm);
WEFT_API int weft_ireduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[], weft_datatype datatype,
                                  weft_op op, weft_comm comm, weft_request *request);
/* Persistent form (MPI-4): the schedule is built once; each weft_start replays it. */
WEFT_API int weft_reduce_scatter_init(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                                      weft_datatype datatype, weft_op op, weft_comm comm, weft_info info,
                                      weft_request *request);

/* Alltoall with a datatype per peer: sendcounts[j] elements of sendtypes[j] at sendbuf +
 * sdispls[j] go to rank j, which receives them as recvcounts[i] elements of recvtypes[i] at
 * recvbuf + rdispls[i] (i the sender).  Displacements are in BYTES (as MPI's), not elements.
 * Each pair's type signatures must match (equal byte sizes; else WEFT_ERR_TRUNCATE).  Any
 * committed datatype, derived ones included; where a count is 0 the type, displacement and
 * buffer are not looked at.  sendbuf = WEFT_IN_PLACE: sendcounts, sdispls and sendtypes are
 * ignored and each block is sent from recvbuf as described by the receive arguments, then
 * replaced.  Algorithms (WEFT_COLL_ALLTOALLW=scattered|pairwise): scattered (up to 32 peers in
 * flight at once) unless forced. */
WEFT_API int weft_alltoallw(const void *sendbuf, const size_t sendcounts[], const ptrdiff_t sdispls[],
                            const weft_datatype sendtypes[], void *recvbuf, const size_t recvcounts[],
                            const ptrdiff_t rdispls[], const weft_datatype recvtypes[], weft_comm comm);
WEFT_API int weft_ialltoallw(const void *sendbuf, const size_t sendcounts[], const ptrdiff_t sdispls[],
                             const weft_datatype sendtypes[], void *recvbuf, const size_t recvcounts[],
                             const ptrdiff_t rdispls[], const weft_datatype recvtypes[], weft_comm comm,
                             weft_request *request);
WEFT_API int weft_alltoallw_init(const void *sendbuf, const size_t sendcounts[], const ptrdiff_t sdispls[],
                                 const weft_datatype sendtypes[], void *recvbuf, const size_t recvcounts[],
                                 const ptrdiff_t rdispls[], const weft_datatype recvtypes[], weft_comm comm,
                                 weft_info info, weft_request *request);

/* inoutbuf[i] = inbuf[i] op inoutbuf[i] for count elements, locally (no communication): the
 * combination a reduction applies, with the same datatype rules (WEFT_ERR_OP for an op the
 * datatype does not take).  The buffers must not overlap; WEFT_IN_PLACE is not allowed. */
WEFT_API int weft_reduce_local(const void *inbuf, void *inoutbuf, size_t count, weft_datatype datatype, weft_op op);

/* *commute = 1 when op is commutative (every predefined op; a user op created with commute
 * != 0), else 0.  WEFT_ERR_OP for WEFT_OP_NULL or a freed or invalid handle. */
WEFT_API int weft_op_commutative(weft_op op, int *commute);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_WEFT_COLL_MORE_H */
