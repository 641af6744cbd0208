// The schedule: which kind of round thread t runs in round r (the same on every rank), the
// agreement every --check-every rounds, and a thread's loop.
#pragma once
#include <cstdint>

namespace soak {

struct thread_ctx;

enum round_kind { R_P2P, R_CONV, R_COLL, R_CCOLL, R_MCOLL, R_MUX, R_PGAS };
inline const char *const round_name[] = {"p2p", "conv", "coll", "ccoll", "mcoll", "mux", "pgas"};

round_kind kind_of(int t, uint32_t r);

// At round r (a multiple of K): settles the active messages of earlier rounds, then decides
// with every thread of every rank whether to stop.
bool agree(thread_ctx &T, uint32_t r);

// Runs thread T's rounds until the agreement says stop, then the final checks.
void thread_main(thread_ctx &T);

}  // namespace soak
