// Collective algorithms: each appends the rounds of one algorithm to a schedule, from the
// arguments the entry point put in coll_args, and returns WEFT_SUCCESS or WEFT_ERR_NO_MEM
// (scratch allocation).  Each is a row of the registry (coll_registry.cpp).  Buffers are
// contiguous byte images (the entry points pack and unpack derived datatypes); reductions work
// on elements of the schedule's bound op, a.elem bytes each.  `self` in/out pointers may alias
// where the entry point allows (in-place).
#pragma once
#include "coll/coll_registry.hpp"
#include "coll/coll_sched.hpp"

namespace weft {

int coll_barrier_dissemination(coll_sched &s, const coll_args &a);

// Through the communicator's shared-memory segment (coll_alg_shm.cpp; coll_shape::shm): the
// message (bcast, reduce, allreduce), own block (allgather) or all own blocks (alltoall) fit a
// slot of coll_shm::slot_bytes.
int coll_barrier_shm(coll_sched &s, const coll_args &a);
int coll_bcast_shm(coll_sched &s, const coll_args &a);
int coll_reduce_shm(coll_sched &s, const coll_args &a);
int coll_allreduce_shm(coll_sched &s, const coll_args &a);
int coll_allgather_shm(coll_sched &s, const coll_args &a);
int coll_alltoall_shm(coll_sched &s, const coll_args &a);

// out: the buffer (a.bytes), read at root and written elsewhere.
int coll_bcast_binomial(coll_sched &s, const coll_args &a);
int coll_bcast_scatter_allgather(coll_sched &s, const coll_args &a);

// in may equal out (in place).  out is significant at root only (may be null elsewhere).
int coll_reduce_binomial(coll_sched &s, const coll_args &a);
int coll_reduce_linear(coll_sched &s, const coll_args &a);

// out holds the input already (the entry point copies in -> out).
int coll_allreduce_recursive_doubling(coll_sched &s, const coll_args &a);
int coll_allreduce_reduce_scatter_allgather(coll_sched &s, const coll_args &a);
int coll_allreduce_ring(coll_sched &s, const coll_args &a);

// Rooted data movement.  Blocks are rank-ordered in the root's buffer; binomial: a.bytes each,
// linear: a.blocks[r] bytes at a.offsets[r].  Gather: in is this process's block (at root: may
// already be in place); scatter: in is the root's buffer, out this process's block (may be null
// at root, in place).
int coll_gather_binomial(coll_sched &s, const coll_args &a);
int coll_gather_linear(coll_sched &s, const coll_args &a);
int coll_scatter_binomial(coll_sched &s, const coll_args &a);
int coll_scatter_linear(coll_sched &s, const coll_args &a);

// out: this process's block is already in place at offsets[rank]; bruck: blocks of a.bytes.
int coll_allgather_ring(coll_sched &s, const coll_args &a);
int coll_allgather_bruck(coll_sched &s, const coll_args &a);

// in: send blocks (a.send_blocks, a.send_offsets); out: receive blocks (a.blocks, a.offsets).
int coll_alltoall_pairwise(coll_sched &s, const coll_args &a);
int coll_alltoall_linear(coll_sched &s, const coll_args &a);

// in: size * count elements; out: count elements.
int coll_reduce_scatter_block_pairwise(coll_sched &s, const coll_args &a);
int coll_reduce_scatter_block_ring(coll_sched &s, const coll_args &a);

// out holds the input already (scan) / is written (exscan, a.exclusive; rank 0's is left alone).
int coll_scan_recursive_doubling(coll_sched &s, const coll_args &a);
int coll_scan_linear(coll_sched &s, const coll_args &a);

// reduce_scatter (coll_reduce_scatter.cpp).  in: a.count elements (every rank's block, rank r's
// a.blocks[r] elements from element a.offsets[r]); out: this rank's block.  in == out in place
// (out then holds the whole input).
int coll_reduce_scatter_recursive_halving(coll_sched &s, const coll_args &a);
int coll_reduce_scatter_pairwise(coll_sched &s, const coll_args &a);
int coll_reduce_scatter_reduce_scatterv(coll_sched &s, const coll_args &a);

// alltoallw (coll_alltoallw.cpp): a.send_blocks[r] bytes at a.send_at[r] go to rank r, whose
// a.blocks[r] bytes land at a.recv_at[r].
int coll_alltoallw_scattered(coll_sched &s, const coll_args &a);
int coll_alltoallw_pairwise(coll_sched &s, const coll_args &a);

}  // namespace weft
