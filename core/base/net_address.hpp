// The address a process's own TCP listeners (peer liveness, the bootstrap's fence channel) bind
// to and publish: the job's interface.
#pragma once
#include <netinet/in.h>

#include <cstdint>
#include <string>

namespace weft {

// WEFT_PEER_ADDR, else this node's address on the route to weftrun's key-value server
// (loopback when it listens there; the namespace's own address when ranks run in network
// namespaces), else the first non-loopback IPv4 interface that is up, else loopback.
// WEFT_ERR_ARG (with the detail) when WEFT_PEER_ADDR is malformed.
int net_pick_address(in_addr &out);

// A listening TCP socket (non-blocking, close-on-exec) on net_pick_address and a port the
// kernel picks, with a random 64-bit token for its clients to present.  Returns WEFT_SUCCESS
// with the socket and "<IPv4> <port> <token>" (what the owner publishes), or an error whose
// detail starts with `who` and ends with `advice`.
int net_listen(const char *who, const char *advice, int &fd, uint64_t &token, std::string &published);
}  // namespace weft
