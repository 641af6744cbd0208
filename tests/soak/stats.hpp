// What each thread counts: rounds of each kind, messages, bytes, collectives, active messages;
// summed per rank and over the job at the end.
#pragma once
#include <cstdint>

namespace soak {

enum stat_id {
    S_ROUNDS,
    S_P2P,
    S_CONV,
    S_COLL,
    S_CCOLL,
    S_MCOLL,
    S_MUX,
    S_PGAS,
    S_MSGS_SENT,
    S_MSGS_RECV,
    S_BYTES_SENT,
    S_BYTES_RECV,
    S_COLLECTIVES,
    S_COLL_BYTES,
    S_AMS_SENT,
    S_AMS_HANDLED,
    S_GETS,
    S_AM_BYTES,
    S_CHECKS,
    S_NSTATS
};
struct stats {
    uint64_t v[S_NSTATS] = {};
};

}  // namespace soak
