// The shared-memory segment of a communicator whose members share a node: its blocking
// barrier, bcast, reduce, allreduce, allgather and alltoall run through it for small messages
// (coll_alg_shm.cpp), with flags instead of messages, as MPICH's release-gather and Open MPI's
// sm collectives do.
//
// Layout: one 64-byte line per rank holding its flag and the sizes it wrote into its slots,
// then two sets (by collective parity) of one slot per rank:
//   [flag 0, size 0, size 1]..[flag n-1, ..] | [slot 0,0]..[slot 0,n-1] [slot 1,0]..
// Collectives through the segment are numbered 1, 2, ... in the order every member calls
// them.  Rank r sets its flag to k once it has finished every read of collective k-1 and has
// written its slot of collective k: readers of a slot wait for its writer's flag, and a writer
// waits for every flag to reach k-1 before it overwrites the slot of collective k-2.  Readers
// check the size beside the flag, so that mismatched counts fail as a receive would.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "comm/comm.hpp"

namespace weft {

struct coll_shm {
    static constexpr size_t line = 64;
    static constexpr size_t slot_bytes = 8192;
    static constexpr int max_procs = 256;

    char *base = nullptr;
    size_t bytes = 0;
    int procs = 0;
    uint64_t seq = 0;  // the number of the last collective run through it

    uint64_t *flag(int rank) const { return reinterpret_cast<uint64_t *>(base + static_cast<size_t>(rank) * line); }
    // The bytes rank wrote into its slot of collective k.
    uint64_t *size(uint64_t k, int rank) const { return flag(rank) + 1 + (k & 1); }
    char *slot(uint64_t k, int rank) const {
        return base + static_cast<size_t>(procs) * line +
            ((k & 1) * static_cast<size_t>(procs) + static_cast<size_t>(rank)) * slot_bytes;
    }
    static size_t size_for(int procs) { return static_cast<size_t>(procs) * (line + 2 * slot_bytes); }
    ~coll_shm();
};

// The segment of c's blocking collectives, set up at the first call that asks (every member
// asks at the same collective, so they agree): rank 0 creates a private POSIX shared-memory
// object, the others map it when they share its node, and it is unlinked as soon as all have
// mapped it (an object left by a process killed in between is removed by the next setup on
// the node).  nullptr where it cannot serve: one process, members on different nodes, no
// shared memory; then never asked again.  Errors only when a member failed.
int coll_shm_get(comm &c, const char *fn, coll_shm *&seg);

}  // namespace weft
