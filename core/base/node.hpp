// Which node this process runs on, as far as shared memory goes: two processes with the same
// identity can map the same POSIX shared-memory object.
#pragma once
#include <string>

namespace weft {

// Host name, kernel boot id, and the network and mount namespaces (a namespace made to stand
// for a node is one; /dev/shm belongs to the mount namespace).  Computed once.
const std::string &node_identity();

}  // namespace weft
