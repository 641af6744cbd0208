// Communicators.
#pragma once
#include <cstdint>
#include <vector>

#include "weft/weft.h"

namespace weft {

struct vci;

struct comm {
    uint16_t context_id = 0;  // point-to-point context; +1 is the collective context
    int rank = 0;
    int size = 0;
    std::vector<int> world_ranks;  // rank in comm -> world rank
    vci *endpoint = nullptr;
};

// nullptr for an invalid, freed or null handle.
comm *comm_get(weft_comm handle);
// Creates WEFT_COMM_WORLD and WEFT_COMM_SELF (at init) and drops every communicator (finalize).
void comm_init_predefined(int world_rank, int world_size, vci *endpoint);
void comm_finalize_all();

}  // namespace weft
