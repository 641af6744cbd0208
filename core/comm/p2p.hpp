// Posting sends and receives on a communicator: shared by point-to-point, the stream and
// multiplex variants, and internal collectives.
#pragma once
#include <cstddef>

#include "comm/comm.hpp"
#include "base/datatype.hpp"
#include "transport/request.hpp"

namespace weft {

struct p2p_buffer {
    const void *buf;
    size_t count;
    const datatype *type;
    size_t bytes;  // count * type->size, checked for overflow
};

struct stream;

// What every point-to-point entry point validates, resolved.
struct p2p_op {
    comm *c;
    size_t li;     // local endpoint index
    int peer_idx;  // the peer's endpoint index (send: dst_idx; recv: src_idx or ANY_INDEX)
    stream *s;
    p2p_buffer b;
};

// Validates the arguments of a point-to-point call named fn into op (local_idx, peer_idx: the
// stream indexes; src_idx/dst_idx < 0 but not WEFT_ANY_INDEX means index 0 both sides).
int check_p2p(const char *fn, const void *buf, size_t count, weft_datatype type, int peer, bool is_recv, int tag,
              weft_comm handle, int local_idx, int peer_idx, p2p_op &op);

// Sends from local endpoint li to rank dest's endpoint dst_idx on context ctx (the
// communicator's point-to-point context, or +1 for collectives).  r stays alive until done.
int p2p_post_send(comm &c, size_t li, int dest, int dst_idx, uint16_t ctx, int tag, const p2p_buffer &b, request &r);
// Receives on local endpoint li; source, src_idx and tag may be wildcards.
int p2p_post_recv(comm &c, size_t li, int source, int src_idx, uint16_t ctx, int tag, const p2p_buffer &b, request &r);
// The same for a non-contiguous datatype (p2p_iov.cpp): one run, an iovec, or packed.
int p2p_post_send_noncontig(comm &c, size_t li, int dest, int dst_idx, uint16_t ctx, int tag, const p2p_buffer &b,
                            request &r);
// also_ignore: match bits the receive ignores besides its wildcards (g_user_recv_ignore for a
// user's receive, so that it matches synchronous messages too).
int p2p_post_recv_noncontig(comm &c, size_t li, int source, int src_idx, uint16_t ctx, int tag, const p2p_buffer &b,
                            request &r, uint64_t also_ignore);
// Progresses until r completes.
void p2p_wait_local(request &r);
// Fails a local receive r whose peer has died (caller progresses r's endpoint meanwhile).
void p2p_fail_if_peer_dead(request &r);

}  // namespace weft
