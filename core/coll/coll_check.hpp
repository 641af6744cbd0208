// WEFT_COLL_CHECK=1: before each blocking collective the processes exchange what they passed
// (which collective, root, sizes) and all fail together, naming a process that differs, instead
// of hanging or truncating.  A debugging aid, like MPI correctness tools: one allgather of a
// few bytes per collective.
#pragma once
#include <cstdint>

#include "comm/comm.hpp"
#include "coll/coll_registry.hpp"

namespace weft {

extern bool g_coll_check;

// How the sizes a and b of the processes' records must relate.
enum class coll_check_rule : uint32_t {
    none,          // which collective and the root only (barrier, the v variants)
    equal,         // every a equal (bcast, reductions: bytes of the buffer)
    rooted_block,  // every a equal to the root's b (gather: bytes sent vs the root's block)
    equal_ab,      // every a and every b equal (alltoall: send and receive blocks)
};

struct coll_check_record {
    uint32_t kind = 0;  // coll_kind
    int32_t root = -1;  // -1: no root
    uint32_t rule = 0;  // coll_check_rule
    uint32_t pad = 0;
    uint64_t a = 0, b = 0;
};

// Exchanges mine with the other processes of c; fails (the same code and message on every
// process) when they differ.
int coll_check(comm &c, const char *fn, const coll_check_record &mine);

}  // namespace weft
