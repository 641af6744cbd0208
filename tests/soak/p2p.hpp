// Point-to-point exchanges: in a round, every endpoint taking part sends 0..3 messages to every
// other (itself included) and receives theirs: random sizes, datatypes and tags, receives by
// exact (source, tag), WEFT_ANY_SOURCE, WEFT_ANY_TAG (and on mc WEFT_ANY_INDEX), every receive
// posted before any send, completion by waitall, waitany, wait or test in random orders (or by
// polling), statuses, payloads and receive buffer slack checked.  p2p and conv rounds run one on
// sc_t or cc_t; mux rounds (multiplex.hpp) one on mc; collective rounds sometimes one alongside.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace soak {

struct thread_ctx;

enum recv_mode { M_EXACT, M_ANY_SOURCE, M_ANY_TAG, M_ANY_INDEX, M_ANY_BOTH };

struct ep {
    int rank, thread;  // thread: the stream index on mc, else the thread index
};

struct msg_desc {
    size_t count, cap;  // elements sent, elements the receive buffer holds
    weft_datatype type;
    size_t es;
    const char *tname;
    int tag;
    recv_mode mode;
    bool blocking;
    uint64_t key;
};

struct exchange {
    // What one exchange is: the communicator, whether it is mc, the endpoints taking part.
    thread_ctx *T = nullptr;
    weft_comm comm = WEFT_COMM_NULL;
    bool mux = false, poll = false;
    uint64_t dom = 0;
    uint32_t r = 0;
    std::string name;
    ep me{};
    std::vector<ep> peers;

    struct recv_rec {
        ep from;
        size_t k;
        msg_desc m;
        std::vector<uint8_t> buf;
    };
    struct send_rec {
        ep to;
        size_t k;
        msg_desc m;
        std::vector<uint8_t> buf;
    };
    std::vector<recv_rec> recvs;
    std::vector<send_rec> sends;
    std::vector<weft_request> reqs;  // recvs, then sends, then extra
    std::vector<weft_status> st;
    size_t nextra = 0;

    std::string msg_what(const ep &from, const ep &to, size_t k, const msg_desc &m) const;
    // Posts every receive, then every send (blocking ones too unless polling).
    void post();
    // Adds a request of the caller's (a nonblocking collective) to be completed with the rest.
    void add_extra(weft_request q);
    // Completes every request (poll: only by test calls, progressing the thread's stream too).
    void complete();
    // Checks every receive's status, payload and untouched slack, and every send's status.
    void verify();
};

// An exchange among the ranks of sc_t or cc_t (thread t everywhere).
exchange make_comm_exchange(thread_ctx &T, weft_comm comm, uint64_t dom, uint32_t r, bool poll, const char *name);

// A p2p round on sc_t, or (conv) a conv round on cc_t.
void round_p2p(thread_ctx &T, uint32_t r, bool conv);

}  // namespace soak
