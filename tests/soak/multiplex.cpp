#include "multiplex.hpp"

#include "context.hpp"
#include "options.hpp"
#include "p2p.hpp"
#include "random.hpp"
#include "schedule.hpp"

namespace soak {

void round_mux(thread_ctx &T, uint32_t r) {
    exchange ex = make_comm_exchange(T, g_mc, D_P2P_MUX, r, false, "multiplex p2p on mc");
    ex.mux = true;
    ex.peers.clear();  // every (rank, stream) whose thread is in a mux round too
    for (int p = 0; p < g_size; ++p)
        for (int t = 0; t < g_threads; ++t)
            if (kind_of(t, r) == R_MUX) ex.peers.push_back({p, t});
    ex.post();
    ex.complete();
    ex.verify();
}

}  // namespace soak
