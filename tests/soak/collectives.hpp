// Collective rounds: one collective (barrier, bcast, reduce, allreduce, gather(v), scatter(v),
// allgather(v), alltoall(v), reduce_scatter_block, scan, exscan) on sc_t (coll), on cc_t
// (ccoll: nonblocking and polled unless --progress-threads) or on mc (mcoll, thread 0 only),
// blocking or not, sometimes in place, random counts, roots, datatypes and operations; a
// nonblocking one sometimes runs together with a p2p exchange on the same communicator.  Every
// process computes what every other contributed, so each result is checked exactly, and bytes
// past it must stay untouched.
#pragma once
#include <cstdint>

#include "schedule.hpp"

namespace soak {

struct thread_ctx;

// k: R_COLL, R_CCOLL or R_MCOLL.
void round_coll(thread_ctx &T, uint32_t r, round_kind k);

}  // namespace soak
