// The collective registry (coll_registry.cpp): every algorithm of every collective is one row
// (collective, name, the function that builds it, when it applies), and whatever picks an
// algorithm reads the rows: the automatic choice by size, process count and commutativity,
// WEFT_COLL_<NAME>=<name>, and weft_query_collectives (weft-info --coll).  A new algorithm is
// one function (coll_algorithms.hpp) and one row.
#pragma once
#include <cstddef>
#include <span>

#include "coll/coll_sched.hpp"

namespace weft {

enum class coll_kind {
    barrier,
    bcast,
    reduce,
    allreduce,
    gather,
    gatherv,
    scatter,
    scatterv,
    allgather,
    allgatherv,
    alltoall,
    alltoallv,
    reduce_scatter_block,
    scan,
    exscan,
    reduce_scatter,  // coll_reduce_scatter.cpp
    alltoallw,       // coll_alltoallw.cpp
    count_
};

// The thresholds of the automatic choice: coll_shape::bytes unless said.
namespace coll_threshold {
inline constexpr size_t bcast_large = 16384;         // bcast: scatter_allgather from here ...
inline constexpr int bcast_large_procs = 3;          // ... with this many processes or more
inline constexpr size_t allreduce_large = 8192;      // allreduce: reduce_scatter_allgather above
inline constexpr size_t rooted_large = 65536;        // gather, scatter: linear from here (block)
inline constexpr size_t allgather_large = 81920;     // allgather: ring from here (block x processes)
inline constexpr size_t alltoall_large = 32768;      // alltoall: pairwise from here (block)
inline constexpr size_t reduce_scatter_large = 512;  // reduce_scatter_block: ring from here (block)

// Through shared memory up to these (with coll_shape::shm): bcast, reduce, allreduce: the
// message; allgather: the block; alltoall: block x processes (the slot's size).  Allreduce
// chooses it up to shm_allreduce: at 8 KiB recursive doubling was as fast (bench/README.md).
inline constexpr size_t shm_bytes = 8192;
inline constexpr size_t shm_allreduce = 4096;

// reduce_scatter: pairwise from here (the whole vector; MPICH's REDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE)
inline constexpr size_t reduce_scatter_long = 524288;
}  // namespace coll_threshold

// What the choice looks at, per call.  bytes: bcast, reduce, allreduce, scan: the message;
// gather, scatter, allgather, alltoall(v), reduce_scatter_block: this process's block;
// reduce_scatter: the whole vector (every rank's block); alltoallw: this process's receive bytes.
struct coll_shape {
    size_t bytes = 0;
    size_t count = 0;  // elements (reductions)
    int procs = 1;
    bool commutative = true;  // the bound op's
    bool dense = true;        // uniform, densely packed blocks (gather, scatter, allgather)
    // The communicator's shared-memory segment can serve this call: a blocking call, every
    // member on this node (coll_shm.hpp).
    bool shm = false;
};

// What an algorithm builds from: the entry point's byte images (see coll_algorithms.hpp).
struct coll_args {
    const char *in = nullptr;    // input image (gather: own block; scatter: the root's blocks)
    char *out = nullptr;         // output image (bcast: the buffer; scatter: own block)
    size_t bytes = 0;            // bcast: the message; gather, scatter, allgather: own block
    size_t count = 0, elem = 0;  // reductions: elements and element bytes
    int root = 0;
    bool exclusive = false;                                        // exscan
    const size_t *blocks = nullptr, *offsets = nullptr;            // per rank (alltoall: receive)
    const size_t *send_blocks = nullptr, *send_offsets = nullptr;  // alltoall(v): send side
    // alltoallw: each peer's block has its own address (the user's buffer or a packed image).
    const char *const *send_at = nullptr;
    char *const *recv_at = nullptr;
};

using coll_build_fn = int (*)(coll_sched &s, const coll_args &a);  // WEFT_SUCCESS or an error
using coll_when_fn = bool (*)(const coll_shape &s);

// One algorithm.  A collective's rows stand together, collectives in coll_kind order; within a
// collective the automatic choice tries them in row order, and messages list them so.
struct coll_algorithm {
    coll_kind kind;
    const char *name;  // what WEFT_COLL_<NAME> forces it with
    coll_build_fn build;
    coll_when_fn chosen;       // auto takes the first row where this holds; nullptr: only when forced
    coll_when_fn needs;        // nullptr: any shape; else where it fails (forced or not) the
                               // collective's first row that runs replaces this one
    const char *when;          // chosen and needs in words (weft_query_collectives)
    bool through_shm = false;  // runs through the communicator's shared-memory segment
};

// The rows of collective k, in order.
std::span<const coll_algorithm> coll_rows(coll_kind k);
// "allreduce", and "WEFT_COLL_ALLREDUCE".
const char *coll_kind_name(coll_kind k);
const char *coll_variable(coll_kind k);

// The algorithm that runs for s: forced (a row of k), or when forced is null the first row
// whose `chosen` holds; then, where its `needs` fails, the first row of k that runs.
const coll_algorithm &coll_choose(coll_kind k, const coll_shape &s, const coll_algorithm *forced);

// Per call: coll_choose with what WEFT_COLL_<NAME> forces (read once, at the first call).  A
// name that is no algorithm of k gives nullptr and rc = WEFT_ERR_ARG with a message naming the
// variable and the valid names; else rc = WEFT_SUCCESS.  No allocation, no string compare.
const coll_algorithm *coll_select(coll_kind k, const coll_shape &s, const char *fn, int &rc);

}  // namespace weft
