// The few collectives the core itself needs to create communicators, built on point-to-point
// over a communicator's collective context and local endpoint 0.
#pragma once
#include <cstddef>

#include "comm/comm.hpp"

namespace weft {

// Ring allgather of `bytes` bytes per process: out receives size * bytes, rank-ordered.
int comm_internal_allgather(comm &c, const void *in, size_t bytes, void *out);

}  // namespace weft
