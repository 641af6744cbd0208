// Collective algorithms: each appends the rounds of one algorithm to a schedule.  Buffers are
// contiguous byte images (the entry points pack and unpack derived datatypes); reductions work
// on elements of the schedule's bound op, elem bytes each.  `self` in/out pointers may alias
// where the entry point allows (in-place).
#pragma once
#include <cstddef>

#include "coll/coll_sched.hpp"

namespace weft {

// Returns WEFT_SUCCESS or WEFT_ERR_NO_MEM (scratch allocation).
void coll_barrier_dissemination(coll_sched &s);

void coll_bcast_binomial(coll_sched &s, char *buf, size_t bytes, int root);
int coll_bcast_scatter_allgather(coll_sched &s, char *buf, size_t bytes, int root);

// in may equal out (in place).  out is significant at root only (may be null elsewhere).
int coll_reduce_binomial(coll_sched &s, const char *in, char *out, size_t count, size_t elem, int root);
int coll_reduce_linear(coll_sched &s, const char *in, char *out, size_t count, size_t elem, int root);

// out holds the input already (the entry point copies in -> out).
int coll_allreduce_recursive_doubling(coll_sched &s, char *out, size_t count, size_t elem);
int coll_allreduce_reduce_scatter_allgather(coll_sched &s, char *out, size_t count, size_t elem);
int coll_allreduce_ring(coll_sched &s, char *out, size_t count, size_t elem);

// Rooted data movement.  Blocks are `block` bytes, rank-ordered in the root's buffer; own is
// this process's block (at root: may already be in place).
int coll_gather_binomial(coll_sched &s, const char *own, char *out, size_t block, int root);
void coll_gather_linear(coll_sched &s, const char *own, size_t own_bytes, char *out, const size_t *bytes,
                        const size_t *offsets, int root);
int coll_scatter_binomial(coll_sched &s, const char *in, char *own, size_t block, int root);
void coll_scatter_linear(coll_sched &s, const char *in, const size_t *bytes, const size_t *offsets, char *own,
                         size_t own_bytes, int root);

// out: this process's block is already in place at offsets[rank].
void coll_allgather_ring(coll_sched &s, char *out, const size_t *bytes, const size_t *offsets);
int coll_allgather_bruck(coll_sched &s, char *out, size_t block);

void coll_alltoall_pairwise(coll_sched &s, const char *in, const size_t *sbytes, const size_t *soff, char *out,
                            const size_t *rbytes, const size_t *roff);
void coll_alltoall_linear(coll_sched &s, const char *in, const size_t *sbytes, const size_t *soff, char *out,
                          const size_t *rbytes, const size_t *roff);

// in: size * count elements; out: count elements.
int coll_reduce_scatter_block_pairwise(coll_sched &s, const char *in, char *out, size_t count, size_t elem);
int coll_reduce_scatter_block_ring(coll_sched &s, const char *in, char *out, size_t count, size_t elem);

// out holds the input already (scan) / is written (exscan; rank 0's is left alone).
int coll_scan_recursive_doubling(coll_sched &s, const char *in, char *out, size_t count, size_t elem,
                                 bool exclusive);
int coll_scan_linear(coll_sched &s, const char *in, char *out, size_t count, size_t elem, bool exclusive);

}  // namespace weft
