// Requests made of parts, which the endpoint's progress completes (a vci_hook): a synchronous
// send and its acknowledgement, isendrecv's send and receive, a matched message's receive; and
// the acknowledgements this process owes for the synchronous messages it received.
#pragma once
#include <cstdint>

#include "comm/p2p.hpp"

namespace weft {

struct compound {
    enum class kind : uint8_t {
        ssend,     // parts: the send, the acknowledgement's receive (none: the fabric's sync send)
        sendrecv,  // parts: the send, the receive (either may be absent: WEFT_PROC_NULL)
        mrecv,     // parts: the matched message's receive, into scratch
        cleanup    // no user request: the parts only need releasing once the fabric is done
    };
    kind what = kind::cleanup;
    // The user's request, completed once every part has; nullptr when nobody waits for it (an
    // acknowledgement's send, or the parts left in flight by a post that failed half way).
    request *parent = nullptr;
    request *parts[2] = {nullptr, nullptr};  // pool requests of the parent's endpoint
    void *scratch = nullptr;                 // freed at completion, or handed to the parent (mrecv)
    compound *next = nullptr;
};

// Queues x on v's hook, which completes it at one of v's progresses once its parts completed
// (caller holds v).  false (x not queued) when v has no hook left.
bool compound_queue(vci &v, compound *x);

// A new request of v's pool for the user (counted as pending on the communicator at local index
// li), or an internal part (counted nowhere) when c is null.  Caller holds v.
request *p2p_request_alloc(vci &v, comm *c, size_t li, weft_request *handle);

// Posts, on endpoint v = c.local[li] that the caller holds: a send of bytes at data with these
// match bits to rank dest's endpoint dst_idx (synchronous: with the fabric's tag_send_sync), and
// a receive.  r becomes the operation's request.
int p2p_send_held(comm &c, size_t li, int dest, int dst_idx, uint64_t bits, const void *data, size_t bytes, request &r,
                  bool synchronous = false);
int p2p_recv_held(comm &c, size_t li, int source, uint64_t bits, uint64_t ignore, void *data, size_t bytes, request &r);

// The error of a call that found its stream in use by another thread.
int p2p_stream_conflict(const char *fn);
// A send's data: a contiguous buffer as it is, a derived datatype packed into r.staging (which
// the caller frees once the send completed).
int p2p_pack_send(request &r, const p2p_buffer &b, const void *&data);

}  // namespace weft
