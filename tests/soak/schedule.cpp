#include "schedule.hpp"

#include <cinttypes>
#include <string>

#include "collectives.hpp"
#include "context.hpp"
#include "multiplex.hpp"
#include "options.hpp"
#include "p2p.hpp"
#include "pgas.hpp"
#include "random.hpp"
#include "report.hpp"
#include "soak_watchdog.hpp"

namespace soak {

round_kind kind_of(int t, uint32_t r) {
    rng g(hkey(opt.seed, D_KIND, t, r));
    unsigned w = unsigned(g.below(100));
    if (w < 22) return R_P2P;
    if (w < 30) return R_CONV;
    if (w < 46) return R_COLL;
    if (w < 52) return R_CCOLL;
    if (w < 68) return R_MUX;
    if (w < 92) return R_PGAS;
    return t == 0 ? R_MCOLL : R_COLL;
}

bool agree(thread_ctx &T, uint32_t r) {
    kernel_state &ks = T.ks;
    doing("round %u agreement: waiting until kernel %d handled %" PRIu64 " AMs (now %" PRIu64 ")", r, ks.id,
          T.exp_handled, ks.handled.load());
    spin_until(T, [&] { return ks.handled.load(std::memory_order_acquire) >= T.exp_handled; });
    if (ks.handled.load() != T.exp_handled)
        fail("kernel %d handled %" PRIu64 " AMs by round %u; %" PRIu64 " were sent to it", ks.id, ks.handled.load(), r,
             T.exp_handled);
    {
        std::lock_guard<std::mutex> g(ks.seen_mu);
        ks.seen.clear();
    }
    if (T.exp_counter) {
        doing("round %u agreement: weft_pgas_wait_counter(%" PRIu64 ")", r, T.exp_counter);
        WEFT_OK(weft_pgas_wait_counter(ks.k, T.exp_counter));
        T.exp_counter = 0;
    }
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
    bool stop = elapsed >= opt.seconds || (opt.max_rounds && r >= opt.max_rounds);
    doing("round %u agreement: threads of this process", r);
    stop = g_pbar.arrive(T, stop);
    // [stop, r, ~r] with MAX: the decision, and a check that every rank is at round r.
    uint64_t in[3] = {stop ? 1u : 0u, r, ~uint64_t(r)}, out[3] = {};
    doing("round %u agreement: allreduce on sc_%d", r, T.t);
    WEFT_OK(weft_allreduce(in, out, 3, WEFT_UINT64_T, WEFT_MAX, T.sc));
    if (out[1] != r || ~out[2] != r)
        fail("ranks out of step at the agreement: round %u here, rounds %" PRIu64 "..%" PRIu64 " among the ranks", r,
             ~out[2], out[1]);
    T.st.v[S_CHECKS]++;
    return out[0] != 0;
}

void thread_main(thread_ctx &T) {
    tl_thread = T.t;
    tl_activity = g_activity[size_t(T.t)].get();
    const uint32_t K = opt.check_every;
    uint32_t r = 0;
    for (;; ++r) {
        if (r > 0 && r % K == 0 && agree(T, r)) break;
        account_incoming(T, r);
        round_kind k = kind_of(T.t, r);
        doing("round %u %s", r, round_name[k]);
        switch (k) {
            case R_P2P:
            case R_CONV:
                round_p2p(T, r, k == R_CONV);
                break;
            case R_COLL:
            case R_CCOLL:
            case R_MCOLL:
                round_coll(T, r, k);
                break;
            case R_MUX:
                round_mux(T, r);
                break;
            case R_PGAS:
                round_pgas(T, r);
                break;
        }
        T.st.v[S_ROUNDS]++;
        T.st.v[int(S_P2P) + int(k)]++;
    }
    T.final_round = r;
    T.st.v[S_AMS_HANDLED] = T.ks.handled.load();
    final_pgas_checks(T);
    doing("final: threads of this process");
    g_pbar.arrive(T, false);
    doing("final: barrier on sc_%d", T.t);
    WEFT_OK(weft_barrier(T.sc));
    T.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
    doing("finished");
    tl_activity->idle = true;
}

}  // namespace soak
