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

// Sends from local endpoint li to rank dest's endpoint dst_idx on context ctx (the
// communicator's point-to-point context, or +1 for collectives).  r stays alive until done.
int p2p_post_send(comm &c, size_t li, int dest, int dst_idx, uint16_t ctx, int tag, const p2p_buffer &b, request &r);
// Receives on local endpoint li; source, src_idx and tag may be wildcards.
int p2p_post_recv(comm &c, size_t li, int source, int src_idx, uint16_t ctx, int tag, const p2p_buffer &b, request &r);
// The same for a non-contiguous datatype (p2p_iov.cpp): one run, an iovec, or packed.
int p2p_post_send_noncontig(comm &c, size_t li, int dest, int dst_idx, uint16_t ctx, int tag, const p2p_buffer &b,
                            request &r);
int p2p_post_recv_noncontig(comm &c, size_t li, int source, int src_idx, uint16_t ctx, int tag, const p2p_buffer &b,
                            request &r);
// Progresses until r completes.
void p2p_wait_local(request &r);

}  // namespace weft
