// weft-soak: a bounded stress test.  Several processes, several threads each, a random but
// reproducible mix of point-to-point, collective, multiplex and PGAS active-message traffic of
// random sizes, every payload checked byte for byte.
//
//   On demand (the long form, 2 minutes):
//     weftrun -n 4 build/bin/weft-soak --seconds 120
//     WEFT_FABRIC=ofi weftrun -n 4 build/bin/weft-soak --seconds 120
//   In CI: ctest -L soak (soak.short: --seconds 10 on 4 processes; soak.progress: the same with
//   --progress-threads; each with .ofi/.galapagos variants; see tests/soak/CMakeLists.txt).
//   To replay a failure: the same --seed (printed at start and in every FAIL line), and
//   --rounds N to stop at the same round whatever the speed.
//
// Files: soak.cpp (this overview and main: setup, run, summaries, teardown), options.* (the
// command line), schedule.* (round kinds, the agreement, a thread's loop), context.* (a
// thread's objects, waiting), p2p.*, multiplex.*, collectives.*, pgas.* (one traffic kind each),
// check.* (byte patterns), random.hpp, stats.hpp, report.* (FAIL lines), soak_watchdog.*; the
// watchdog thread and WEFT_TEST_TIME_SCALE come from tests/common/watchdog.hpp.
//
// Options (each also as --name=value):
//   --seconds S      run for about S seconds (default 120)
//   --threads T      threads per process, each with its own stream (default 2; 1..8)
//   --seed N         the shared seed (default: rank 0 picks one and broadcasts it)
//   --max-size B     largest message in bytes (default 1 MiB; sizes are skewed toward small)
//   --rounds N       also stop at the first agreement point at or after round N
//   --check-every K  rounds between stop agreements (default 8; 1..16)
//   --watchdog S     a thread stuck S seconds in one step ends the job with a report of every
//                    thread's step (default 60; scaled by WEFT_TEST_TIME_SCALE)
//   --progress-threads  start a progress thread on every stream (weft_start_progress_thread):
//                    handlers then run there, and conv/ccoll rounds use blocking calls too
//
// Objects: under WEFT_THREAD_MULTIPLE, each process creates T streams; thread t owns stream t,
// a stream communicator on it (sc_t, over WEFT_COMM_WORLD) and a conventional dup of
// WEFT_COMM_WORLD (cc_t: the locked path).  One multiplex communicator (mc) attaches all T
// streams of every process; thread t only ever uses local index t of it.  A PGAS context on mc
// gives one kernel per stream (kernel id = rank * T + t), driven by thread t.
//
// Schedule: every decision is a pure function of (seed, thread index, round, ...), so every
// rank knows what every other rank does.  Thread t of every rank runs the same sequence of
// rounds; round r is one of
//   p2p     isend/irecv (some blocking sends) on sc_t between every ordered pair of ranks (self
//           included): 0..3 messages a pair, random sizes, datatypes, tags; receives by exact
//           (source, tag), WEFT_ANY_SOURCE (tag unique), or WEFT_ANY_TAG (whole pair, in send
//           order); larger receive buffers than needed; completion by waitall, waitany, wait or
//           test in random orders; statuses checked (source, tag, error, count).
//   conv    the same on cc_t.  Completion only by polling (testall/test) interleaved with
//           weft_stream_progress on the thread's stream: a blocking call on a conventional
//           communicator does not progress the stream, so the thread's PGAS kernel would not run
//           handlers meanwhile and another thread's active messages could wait on it forever
//           (with --progress-threads the stream's progress thread runs them, and conv rounds
//           use the same completions and blocking sends as p2p rounds).
//   coll    one collective on sc_t (barrier, bcast, reduce, allreduce, gather(v), scatter(v),
//           allgather(v), alltoall(v), reduce_scatter_block, scan, exscan), blocking or not,
//           sometimes in place, random counts, roots, datatypes and operations; nonblocking ones
//           sometimes run together with a p2p exchange on the same communicator.
//   ccoll   the same on cc_t, always nonblocking and polled (see conv; with --progress-threads
//           as coll rounds).
//   mcoll   (thread 0 only) a collective on mc, which runs on local stream 0.
//   mux     multiplex exchange between all (rank, thread) pairs whose thread is in a mux round
//           too: weft_stream_isend/irecv on mc from stream t to the peer's stream t', receives
//           by exact index, WEFT_ANY_INDEX, WEFT_ANY_SOURCE, both, or WEFT_ANY_TAG; the status's
//           stream_index checked.
//   pgas    1..5 active messages from the thread's kernel to random kernels (own and same-process
//           ones included): Short (user handlers, WEFT_AM_H_INCR, WEFT_AM_H_ADD), Medium from a
//           buffer or the segment, Long from a buffer or the segment, strided Long, get; some
//           WEFT_AM_ASYNC, some answered by the handler with weft_am_reply_short.  Handlers
//           regenerate the sender's plan from (source kernel, round, index) carried in args[0]
//           and check everything: handler index, kind, args, length, offset, payload bytes;
//           each message is handled exactly once.
// Deadlock freedom: within a round every receive is posted before any send, and every wait
// progresses the thread's own stream (which also runs its kernel's handlers), so round r of
// every thread completes once every thread has reached round r.  Tags carry the round modulo 32,
// the sender rank, thread and index (scrambled by a bijection keyed by the seed): threads drift
// less than two agreement intervals apart, so a WEFT_ANY_SOURCE receive can only match its own
// message, and WEFT_ANY_TAG receives (all of one pair's in a round, posted in the sender's
// order) rely on MPI's non-overtaking rule.  WEFT_ANY_SOURCE with WEFT_ANY_TAG is not used: a
// faster peer's message of a later round could rightly match it.
// Stop: every K rounds each thread waits until its kernel handled every active message sent to
// it in earlier rounds (and its counter got every H_INCR/H_ADD), the threads of a process
// combine their "time is up" flags, and each thread agrees with its peers through an allreduce
// (MAX) on sc_t; every thread of every rank thus stops at the same round.  Long destinations
// rotate over K slots per sender, which this wait makes safe to reuse.
//
// Failure: the first wrong byte, error code or status makes the rank print a line starting with
// "weft-soak: FAIL" (rank, thread, seed, round, operation, peer, sizes, first bad byte) and exit
// with status 1; weftrun then ends the job with that status.  A hang ends with the watchdog's
// report (status 3).  Success: per-thread and per-rank summaries, world totals on rank 0, and
// the line "weft-soak: PASS".
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "context.hpp"
#include "options.hpp"
#include "pgas.hpp"
#include "random.hpp"
#include "report.hpp"
#include "schedule.hpp"
#include "soak_watchdog.hpp"
#include "stats.hpp"
#include "watchdog.hpp"
#include "weft/weft.h"
#include "weft_env.hpp"

using namespace soak;

int main(int argc, char **argv) {
    int provided = -1;
    int rc = weft_init_thread(&argc, &argv, WEFT_THREAD_MULTIPLE, &provided);
    if (rc) {
        std::fprintf(stderr, "weft-soak: weft_init_thread failed: %s\n", weft_err(rc).c_str());
        return 1;
    }
    WEFT_OK(weft_comm_rank(WEFT_COMM_WORLD, &g_rank));
    WEFT_OK(weft_comm_size(WEFT_COMM_WORLD, &g_size));
    parse_args(argc, argv);
    if (provided != WEFT_THREAD_MULTIPLE)
        fail("weft_init_thread provided thread level %d, not WEFT_THREAD_MULTIPLE", provided);
    if (g_size > 64) fail("at most 64 processes (tags carry the rank in 6 bits)");
    g_threads = opt.threads;

    // The shared seed.
    if (!opt.seed_given) {
        uint64_t s = uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) ^ (uint64_t(getpid()) << 32);
        s = mix64(s) % 1000000007ull;
        WEFT_OK(weft_bcast(&s, 1, WEFT_UINT64_T, 0, WEFT_COMM_WORLD));
        opt.seed = s;
    }
    g_activity.clear();
    for (int i = 0; i <= g_threads; ++i) g_activity.push_back(std::make_unique<activity>());
    tl_activity = g_activity.back().get();
    watchdog wd;
    wd.start(opt.watchdog * harness::time_scale());

    harness::runtime rt;
    harness::runtime_info(rt);
    const std::string &fabric = rt.fabric;
    if (g_rank == 0)
        std::printf("weft-soak: %d processes x %d threads, fabric %s, seed %" PRIu64
                    ", %.1f s, max size %zu, agreement every %u "
                    "rounds%s%s\n",
                    g_size, g_threads, fabric.c_str(), opt.seed, opt.seconds, opt.max_size, opt.check_every,
                    opt.max_rounds ? (", at most round " + std::to_string(opt.max_rounds)).c_str() : "",
                    opt.progress_threads ? ", progress threads" : "");
    std::fflush(stdout);

    // Streams, communicators, the PGAS context.
    doing("setup: streams and communicators");
    std::vector<std::unique_ptr<thread_ctx>> th;
    std::vector<weft_stream> streams;
    for (int t = 0; t < g_threads; ++t) {
        th.push_back(std::make_unique<thread_ctx>());
        th.back()->t = t;
        WEFT_OK(weft_stream_create(WEFT_INFO_NULL, &th.back()->s));
        streams.push_back(th.back()->s);
    }
    for (auto &T : th) WEFT_OK(weft_stream_comm_create(WEFT_COMM_WORLD, T->s, &T->sc));
    for (auto &T : th) WEFT_OK(weft_comm_dup(WEFT_COMM_WORLD, &T->cc));
    WEFT_OK(weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, streams.size(), streams.data(), &g_mc));
    g_nk = g_size * g_threads;
    g_seg_size = DST_LO + size_t(g_nk) * opt.check_every * AREA + 64;
    doing("setup: weft_pgas_create on mc (%zu-byte segments)", g_seg_size);
    weft_pgas pgas = WEFT_PGAS_NULL;
    WEFT_OK(weft_pgas_create(g_mc, g_seg_size, WEFT_INFO_NULL, &pgas));
    int nk = 0;
    WEFT_OK(weft_pgas_num_kernels(pgas, &nk));
    if (nk != g_nk) fail("weft_pgas_num_kernels gives %d, expected %d", nk, g_nk);
    WEFT_OK(weft_am_max_medium(pgas, &g_max_medium));
    WEFT_OK(weft_am_max_long(pgas, &g_max_long));
    for (auto &T : th) attach_kernel(pgas, *T);
    doing("setup: barrier");
    WEFT_OK(weft_barrier(WEFT_COMM_WORLD));  // every segment's source area is written

    // The run.
    g_start = std::chrono::steady_clock::now();
    doing("joining the threads");
    tl_activity->idle = true;
    if (opt.progress_threads)
        for (auto &T : th) WEFT_OK(weft_start_progress_thread(T->s));
    std::vector<std::thread> threads;
    for (auto &T : th) threads.emplace_back([&T] { thread_main(*T); });
    for (auto &t : threads) t.join();
    tl_activity->idle = false;
    if (opt.progress_threads) {
        doing("stopping the progress threads");
        for (auto &T : th) WEFT_OK(weft_stop_progress_thread(T->s));
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();

    // Summaries.
    doing("summary");
    stats rank_total;
    for (auto &T : th) {
        for (int i = 0; i < S_NSTATS; ++i) rank_total.v[i] += T->st.v[i];
        const uint64_t *v = T->st.v;
        std::printf("weft-soak: rank %d thread %d: %" PRIu64 " rounds (p2p %" PRIu64 ", conv %" PRIu64 ", coll %" PRIu64
                    ", ccoll %" PRIu64 ", mcoll %" PRIu64 ", mux %" PRIu64 ", pgas %" PRIu64 "), messages %" PRIu64
                    " sent / %" PRIu64 " received, %" PRIu64 " / %" PRIu64 " bytes, %" PRIu64 " collectives (%" PRIu64
                    " bytes), %" PRIu64 " AMs sent (%" PRIu64 " gets, %" PRIu64 " bytes), %" PRIu64
                    " handled, %.1f s\n",
                    g_rank, T->t, v[S_ROUNDS], v[S_P2P], v[S_CONV], v[S_COLL], v[S_CCOLL], v[S_MCOLL], v[S_MUX],
                    v[S_PGAS], v[S_MSGS_SENT], v[S_MSGS_RECV], v[S_BYTES_SENT], v[S_BYTES_RECV], v[S_COLLECTIVES],
                    v[S_COLL_BYTES], v[S_AMS_SENT], v[S_GETS], v[S_AM_BYTES], v[S_AMS_HANDLED], T->seconds);
    }
    {
        const uint64_t *v = rank_total.v;
        std::printf("weft-soak: rank %d total: %" PRIu64 " rounds, %" PRIu64 " messages, %" PRIu64 " bytes, %" PRIu64
                    " collectives, %" PRIu64 " AMs sent, %" PRIu64 " handled\n",
                    g_rank, v[S_ROUNDS], v[S_MSGS_SENT], v[S_BYTES_SENT], v[S_COLLECTIVES], v[S_AMS_SENT],
                    v[S_AMS_HANDLED]);
    }
    std::fflush(stdout);
    stats world;
    WEFT_OK(weft_allreduce(rank_total.v, world.v, S_NSTATS, WEFT_UINT64_T, WEFT_SUM, WEFT_COMM_WORLD));
    double wall_max = 0;
    WEFT_OK(weft_allreduce(&wall, &wall_max, 1, WEFT_DOUBLE, WEFT_MAX, WEFT_COMM_WORLD));
    if (world.v[S_MSGS_SENT] != world.v[S_MSGS_RECV] || world.v[S_BYTES_SENT] != world.v[S_BYTES_RECV])
        fail("world totals differ: %" PRIu64 " messages (%" PRIu64 " bytes) sent, %" PRIu64 " (%" PRIu64 ") received",
             world.v[S_MSGS_SENT], world.v[S_BYTES_SENT], world.v[S_MSGS_RECV], world.v[S_BYTES_RECV]);
    const uint64_t user_ams = world.v[S_AMS_HANDLED];
    if (g_rank == 0) {
        const uint64_t *v = world.v;
        std::printf("weft-soak: world: %d x %d threads, %u rounds each, %" PRIu64 " thread-rounds (p2p %" PRIu64
                    ", conv %" PRIu64 ", coll %" PRIu64 ", ccoll %" PRIu64 ", mcoll %" PRIu64 ", mux %" PRIu64
                    ", pgas %" PRIu64 "), %" PRIu64 " messages, %" PRIu64 " bytes, %" PRIu64
                    " collective calls (%" PRIu64 " bytes), %" PRIu64 " AMs (%" PRIu64 " gets, %" PRIu64
                    " bytes, %" PRIu64 " user handler calls), %" PRIu64 " agreement points, %.1f s\n",
                    g_size, g_threads, th[0]->final_round, v[S_ROUNDS], v[S_P2P], v[S_CONV], v[S_COLL], v[S_CCOLL],
                    v[S_MCOLL], v[S_MUX], v[S_PGAS], v[S_MSGS_SENT], v[S_BYTES_SENT], v[S_COLLECTIVES], v[S_COLL_BYTES],
                    v[S_AMS_SENT], v[S_GETS], v[S_AM_BYTES], user_ams, v[S_CHECKS] / uint64_t(g_size * g_threads),
                    wall_max);
        std::fflush(stdout);
    }

    // Teardown.
    doing("teardown: weft_pgas_free");
    WEFT_OK(weft_pgas_free(&pgas));
    doing("teardown: freeing communicators and streams");
    WEFT_OK(weft_comm_free(&g_mc));
    for (auto &T : th) {
        WEFT_OK(weft_comm_free(&T->sc));
        WEFT_OK(weft_comm_free(&T->cc));
    }
    for (auto &T : th) WEFT_OK(weft_stream_free(&T->s));
    doing("teardown: weft_finalize");
    wd.stop();
    rc = weft_finalize();
    if (rc) {
        std::fprintf(stderr, "weft-soak: FAIL rank %d: weft_finalize returned %d\n", g_rank, rc);
        return 1;
    }
    if (g_rank == 0) std::printf("weft-soak: PASS\n");
    return 0;
}
