// A communicator over some of a parent's processes, as weft_comm_create, weft_comm_create_group
// and weft_comm_idup make it.
#pragma once
#include <memory>
#include <vector>

#include "comm/comm.hpp"

namespace weft {

// The communicator over parent's ranks `members` (in that order; this process is
// members[rank]) on context_id.  From a conventional parent: a conventional one.  From a stream
// or multiplex parent: one of the same kind in which every member keeps the endpoints it had
// there (its streams, with their indices, and its implicit endpoint where it attached none).
std::shared_ptr<comm> comm_derive(const comm &parent, const std::vector<int> &members, int rank, uint16_t context_id);
// Takes a reference on c's streams and gives c a handle; on failure releases its context id.
int comm_publish(std::shared_ptr<comm> c, weft_comm *newcomm);
// Takes a reference on each of c's streams (a communicator holds them until freed).
void comm_hold_streams(const comm &c);

}  // namespace weft
