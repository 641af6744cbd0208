// Persistent point-to-point requests (weft_send_init, weft_recv_init and their stream forms):
// the arguments are checked once, at init, and each start posts them again through a post
// function.  Another kind (a synchronous send) is a post function and an entry point:
//
//   int post_ssend(const persistent_p2p &p, request &r) {
//       return p2p_post_ssend(*p.op.c, p.op.li, p.peer, p.op.peer_idx, p.op.c->context_id, p.tag, p.op.b, r);
//   }
//   extern "C" int weft_ssend_init(const void *buf, size_t count, weft_datatype type, int dest, int tag,
//                                  weft_comm comm, weft_request *request) {
//       return p2p_persistent_init("weft_ssend_init", false, buf, count, type, dest, tag, comm, 0, 0, post_ssend,
//                                  request);
//   }
#pragma once
#include <memory>

#include "comm/p2p.hpp"
#include "transport/persistent.hpp"

namespace weft {

struct persistent_p2p : persistent_op {
    // Posts one run of p into r (not called for WEFT_PROC_NULL, which completes at start).
    using post_fn = int (*)(const persistent_p2p &p, request &r);
    p2p_op op;  // resolved at init: communicator, endpoints, buffer, element type
    int peer = WEFT_PROC_NULL;
    int tag = 0;
    std::shared_ptr<const datatype> type_hold;  // a derived type, for the request's life
    post_fn post = nullptr;

    int start(request &r) override;
};

// Checks the arguments as the nonblocking call (fn names it in errors; local_idx and peer_idx
// as check_p2p takes them) and makes the persistent request whose starts call post.
int p2p_persistent_init(const char *fn, bool is_recv, const void *buf, size_t count, weft_datatype type, int peer,
                        int tag, weft_comm comm, int local_idx, int peer_idx, persistent_p2p::post_fn post,
                        weft_request *request);

// The post functions of weft_send_init and weft_recv_init.
int p2p_persistent_post_send(const persistent_p2p &p, request &r);
int p2p_persistent_post_recv(const persistent_p2p &p, request &r);

}  // namespace weft
