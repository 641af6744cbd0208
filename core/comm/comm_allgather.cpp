#include "comm/comm_allgather.hpp"

#include <cstring>

#include "base/error.hpp"
#include "comm/p2p.hpp"

namespace weft {

int comm_internal_allgather(comm &c, const void *in, size_t bytes, void *out) {
    if (c.local.empty())
        return fail(WEFT_ERR_STREAM, "collective on a multiplex communicator to which this process attached no stream");
    for (int r = 0; r < c.size; ++r)
        if (c.remote_offset[static_cast<size_t>(r) + 1] == c.remote_offset[static_cast<size_t>(r)])
            return fail(WEFT_ERR_STREAM, "collective on a multiplex communicator to which rank %d attached no stream",
                        r);
    auto *base = static_cast<char *>(out);
    std::memmove(base + static_cast<size_t>(c.rank) * bytes, in, bytes);
    int n = c.size, next = (c.rank + 1) % n, prev = (c.rank + n - 1) % n;
    const datatype *byte = datatype_get(WEFT_BYTE);
    constexpr int tag = 1;
    for (int step = 0; step < n - 1; ++step) {
        size_t send_block = static_cast<size_t>((c.rank - step + n) % n);
        size_t recv_block = static_cast<size_t>((c.rank - step - 1 + 2 * n) % n);
        local_request rr, sr;
        rr.endpoint = sr.endpoint = c.local[0];
        p2p_buffer rb{base + recv_block * bytes, bytes, byte, bytes};
        p2p_buffer sb{base + send_block * bytes, bytes, byte, bytes};
        if (int rc = p2p_post_recv(c, 0, prev, 0, static_cast<uint16_t>(c.context_id + 1), tag, rb, rr)) return rc;
        if (int rc = p2p_post_send(c, 0, next, 0, static_cast<uint16_t>(c.context_id + 1), tag, sb, sr)) {
            p2p_wait_local(rr);  // cannot be cancelled portably; the peer's send completes it
            return rc;
        }
        p2p_wait_local(sr);
        p2p_wait_local(rr);
        int rc1 = request_finish(sr, WEFT_STATUS_IGNORE), rc2 = request_finish(rr, WEFT_STATUS_IGNORE);
        if (rc1 != WEFT_SUCCESS || rc2 != WEFT_SUCCESS) return rc1 ? rc1 : rc2;
    }
    return WEFT_SUCCESS;
}

}  // namespace weft
