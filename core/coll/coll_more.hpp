// Schedule builders of reduce_scatter and alltoallw (weft.h).  Each checks the
// arguments of its call (failing with a detail naming fn and the argument), binds the op,
// holds the derived datatypes, picks the algorithm from the registry and appends every round
// to s, whose communicator, endpoint and context coll.cpp's begin() has set.  The blocking,
// nonblocking (and persistent) entry points differ only in how they launch the schedule.
//
// The schedule reads the user's buffers only when it runs (copies and packs are steps, never
// done at the call), so a schedule built once may be started again after the buffers change.
#pragma once
#include <cstddef>

#include "coll/coll_sched.hpp"
#include "weft/weft.h"

namespace weft {

// weft_reduce_scatter's arguments; bytes: the whole vector's size (what WEFT_COLL_CHECK compares).
int coll_reduce_scatter_build(coll_sched &s, const char *fn, const void *sendbuf, void *recvbuf,
                              const size_t *recvcounts, weft_datatype type, weft_op op, size_t &bytes);

// weft_alltoallw's arguments.
int coll_alltoallw_build(coll_sched &s, const char *fn, const void *sendbuf, const size_t *sendcounts,
                         const ptrdiff_t *sdispls, const weft_datatype *sendtypes, void *recvbuf,
                         const size_t *recvcounts, const ptrdiff_t *rdispls, const weft_datatype *recvtypes);

}  // namespace weft
