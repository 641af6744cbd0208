// Which algorithm a collective runs: forced by WEFT_COLL_<NAME>=<algorithm>, else chosen by
// message size and process count (coll_*.cpp).
#pragma once
#include <cstddef>

namespace weft {

enum class coll_kind {
    barrier, bcast, reduce, allreduce, gather, gatherv, scatter, scatterv, allgather, allgatherv,
    alltoall, alltoallv, reduce_scatter_block, scan, exscan, count_
};

// Algorithm names per collective, in a fixed order: the index is what builders switch on.
struct coll_algorithms {
    const char *variable;  // WEFT_COLL_<NAME>
    const char *names[4];  // nullptr-terminated
};
const coll_algorithms &coll_algorithm_table(coll_kind k);

// The forced algorithm's index, or -1 when the variable is unset.  An unknown name fails with
// WEFT_ERR_ARG and a message naming the variable and the valid names (rc).
int coll_forced(coll_kind k, const char *fn, int &rc);

// What the choice looks at.  bytes: bcast, reduce, allreduce, scan: the message; gather,
// scatter, allgather, alltoall(v), reduce_scatter_block: this process's block.
struct coll_shape {
    size_t bytes = 0;
    size_t count = 0;          // elements (allreduce)
    int procs = 1;
    bool commutative = true;   // the bound op's
    bool dense = true;         // uniform, densely packed blocks (gather, scatter, allgather)
};

// The algorithm (an index into coll_algorithm_table(k).names) that runs for s: forced (an
// index, from coll_forced) or chosen by size and process count when forced is -1, then
// replaced where it cannot run (operand order, block layout).
int coll_choose(coll_kind k, const coll_shape &s, int forced);

}  // namespace weft
