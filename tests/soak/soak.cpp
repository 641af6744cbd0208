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
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "weft/weft.h"

namespace {

// ================================================================== options and globals

struct options {
    double seconds = 120;
    int threads = 2;
    uint64_t seed = 0;
    bool seed_given = false;
    size_t max_size = size_t(1) << 20;
    uint64_t max_rounds = 0;
    uint32_t check_every = 8;
    double watchdog = 60;
    bool progress_threads = false;
};
options opt;
int g_rank = -1, g_size = 0;

[[noreturn]] void usage(const char *why) {
    if (g_rank <= 0)
        std::fprintf(stderr,
                     "weft-soak: %s\nusage: weftrun -n 4 weft-soak [--seconds S] [--threads T] [--seed N] "
                     "[--max-size BYTES] [--rounds N] [--check-every K] [--watchdog S] [--progress-threads]\n",
                     why);
    std::exit(2);
}

// ================================================================== failure reporting

thread_local int tl_thread = -1;            // -1: the main thread
thread_local char tl_where[256] = "setup";  // "round 12 p2p(sc_1)": prefixed to failures

[[noreturn]] void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char *fmt, ...) {
    char msg[3000];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char line[3600];
    std::snprintf(line, sizeof line, "weft-soak: FAIL rank %d thread %d seed %" PRIu64 ": %s: %s\n", g_rank, tl_thread,
                  opt.seed, tl_where, msg);
    ssize_t w = write(2, line, std::strlen(line));
    (void)w;
    std::fflush(stdout);
    _exit(1);
}

std::string weft_err(int rc) {
    char text[WEFT_MAX_ERROR_STRING] = "";
    char det[WEFT_MAX_ERROR_STRING] = "";
    size_t len = 0;
    weft_error_string(rc, text, &len);
    weft_error_detail(det, &len);
    return "code " + std::to_string(rc) + " (" + text + ")" + (det[0] ? std::string(", detail: ") + det : "");
}

#define WEFT_OK(call)                                                                  \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != WEFT_SUCCESS) fail("%s returned %s", #call, weft_err(rc_).c_str()); \
    } while (0)

// ================================================================== watchdog

// Each thread (and the main thread, last) publishes what it is doing; a step that lasts longer
// than --watchdog seconds ends the job with every thread's step.
struct activity {
    std::mutex mu;
    char what[256] = "starting";
    std::atomic<uint64_t> changes{0};
    std::atomic<bool> idle{false};
};
std::vector<std::unique_ptr<activity>> g_activity;
thread_local activity *tl_activity = nullptr;

void doing(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void doing(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(tl_where, sizeof tl_where, fmt, ap);
    va_end(ap);
    if (tl_activity) {
        std::lock_guard<std::mutex> g(tl_activity->mu);
        std::memcpy(tl_activity->what, tl_where, sizeof tl_where);
        tl_activity->changes.fetch_add(1, std::memory_order_relaxed);
    }
}

class watchdog {
  public:
    void start(double seconds) {
        limit_ = seconds;
        thread_ = std::thread([this] { loop(); });
    }
    void stop() {
        {
            std::lock_guard<std::mutex> g(mu_);
            done_ = true;
        }
        cv_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

  private:
    void loop() {
        using clock = std::chrono::steady_clock;
        std::vector<uint64_t> seen(g_activity.size(), ~uint64_t(0));
        std::vector<clock::time_point> since(g_activity.size(), clock::now());
        std::unique_lock<std::mutex> lk(mu_);
        while (!cv_.wait_for(lk, std::chrono::milliseconds(500), [this] { return done_; })) {
            auto now = clock::now();
            for (size_t i = 0; i < g_activity.size(); ++i) {
                uint64_t c = g_activity[i]->changes.load();
                if (c != seen[i] || g_activity[i]->idle.load()) {
                    seen[i] = c;
                    since[i] = now;
                    continue;
                }
                if (std::chrono::duration<double>(now - since[i]).count() > limit_) report(i);
            }
        }
    }
    [[noreturn]] void report(size_t stuck) {
        std::string out = "weft-soak: WATCHDOG rank " + std::to_string(g_rank) + " seed " + std::to_string(opt.seed) +
                          ": " +
                          (stuck + 1 == g_activity.size() ? "the main thread" : "thread " + std::to_string(stuck)) +
                          " made no progress for " + std::to_string(int(limit_)) + " s; every thread's step:\n";
        for (size_t i = 0; i < g_activity.size(); ++i) {
            std::lock_guard<std::mutex> g(g_activity[i]->mu);
            out += "  " + (i + 1 == g_activity.size() ? std::string("main") : "thread " + std::to_string(i)) + ": " +
                   g_activity[i]->what + (g_activity[i]->idle ? " (idle)" : "") + "\n";
        }
        ssize_t w = write(2, out.data(), out.size());
        (void)w;
        _exit(3);
    }
    double limit_ = 60;
    std::thread thread_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
};

// ================================================================== deterministic randomness

inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}
template <typename... A>
uint64_t hkey(A... a) {
    uint64_t h = 0x243F6A8885A308D3ull;
    ((h = mix64(h ^ (uint64_t(a) + 0x9E3779B97F4A7C15ull))), ...);
    return h;
}
struct rng {
    uint64_t s;
    explicit rng(uint64_t seed) : s(seed) {}
    uint64_t next() { return mix64(s += 0x9E3779B97F4A7C15ull); }
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }
    bool pct(unsigned p) { return below(100) < p; }
};

// Key domains (the first word of every key after the seed).
enum : uint64_t {
    D_KIND = 1,
    D_PAIR,
    D_PAYLOAD,
    D_CANARY,
    D_ORDER,
    D_COLL,
    D_CDATA,
    D_AMPLAN,
    D_AMPAY,
    D_AMARG,
    D_SRCAREA,
    D_P2P_SC,
    D_P2P_CC,
    D_P2P_MUX,
    D_P2P_INCOLL,
    D_COLL_SC,
    D_COLL_CC,
    D_COLL_MC
};

// Sizes 0..max, skewed toward small ones.
size_t pick_size(rng &g, size_t max) {
    unsigned b = unsigned(g.below(100));
    size_t cap = b < 40 ? 64 : b < 70 ? 4096 : b < 88 ? 65536 : max;
    return g.below(std::min(cap, max) + 1);
}

// ================================================================== byte patterns

inline uint64_t word_at(uint64_t key, uint64_t w) { return mix64(key ^ mix64(w + 0x632BE59BD9B4E019ull)); }
inline uint8_t byte_at(uint64_t key, uint64_t pos) { return uint8_t(word_at(key, pos >> 3) >> ((pos & 7) * 8)); }

// out[i] = byte_at(key, from + i)
void fill(uint64_t key, void *out_, size_t n, uint64_t from = 0) {
    auto *out = static_cast<uint8_t *>(out_);
    size_t i = 0;
    for (; i < n && ((from + i) & 7); ++i) out[i] = byte_at(key, from + i);
    for (; i + 8 <= n; i += 8) {
        uint64_t w = word_at(key, (from + i) >> 3);
        std::memcpy(out + i, &w, 8);
    }
    for (; i < n; ++i) out[i] = byte_at(key, from + i);
}
// Index of the first byte that differs from the pattern, or SIZE_MAX; *nbad counts all.
size_t mismatch(uint64_t key, const void *p_, size_t n, uint64_t from = 0, size_t *nbad = nullptr) {
    auto *p = static_cast<const uint8_t *>(p_);
    size_t first = SIZE_MAX, bad = 0;
    size_t i = 0;
    for (; i < n && ((from + i) & 7); ++i)
        if (p[i] != byte_at(key, from + i)) first = std::min(first, i), ++bad;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = word_at(key, (from + i) >> 3);
        if (std::memcmp(p + i, &w, 8) != 0)
            for (size_t j = 0; j < 8; ++j)
                if (p[i + j] != uint8_t(w >> (8 * j))) first = std::min(first, i + j), ++bad;
        if (first != SIZE_MAX && !nbad) return first;
    }
    for (; i < n; ++i)
        if (p[i] != byte_at(key, from + i)) first = std::min(first, i), ++bad;
    if (nbad) *nbad = bad;
    return first;
}
// Fails with a precise message when p[0, n) is not the pattern.  `what` names the data.
void check_bytes(const std::string &what, uint64_t key, const void *p, size_t n, uint64_t from = 0) {
    size_t bad = 0;
    size_t i = mismatch(key, p, n, from, &bad);
    if (i == SIZE_MAX) return;
    fail("%s: first bad byte at offset %zu of %zu: got 0x%02x, expected 0x%02x (%zu bad bytes in all)", what.c_str(), i,
         n, static_cast<const uint8_t *>(p)[i], byte_at(key, from + i), bad);
}

constexpr size_t GUARD = 16;  // canary bytes after every receive buffer

// ================================================================== tags

// round mod 32 (5 bits) | sender rank (6) | sender thread (3) | index (6), scrambled by a
// bijection of the 20-bit tag space keyed by the seed.
int make_tag(uint32_t round, int rank, int thread, int idx) {
    uint32_t x = ((round & 31u) << 15) | (uint32_t(rank) << 9) | (uint32_t(thread) << 6) | uint32_t(idx);
    const uint32_t m = 0xFFFFF;
    uint32_t k = uint32_t(mix64(opt.seed ^ 0x7A6) & m);
    x = (x * 0x9E3B5u) & m;
    x ^= x >> 7;
    x = (x ^ k) & m;
    x = (x * 0x5A4F3u) & m;
    return int(x);
}

// ================================================================== statistics

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

// ================================================================== PGAS layout and plans

constexpr size_t SRC_SZ = 256 * 1024;  // [0, SRC_SZ): a constant pattern per kernel, only read
constexpr size_t GET_LO = SRC_SZ;      // [GET_LO, GET_LO + GET_SZ): where this kernel's gets land
constexpr size_t GET_SZ = 256 * 1024;
constexpr size_t DST_LO = GET_LO + GET_SZ;  // Long destinations: a slot per (sender, round mod K)
constexpr size_t AREA = 128 * 1024;
int g_threads = 0, g_nk = 0;  // threads per process, kernels
size_t g_max_medium = 0, g_max_long = 0, g_seg_size = 0;
const unsigned user_handlers[] = {5, 9, 16, 200, 255};
constexpr unsigned H_REPLY = 6, H_GETCHK = 7;

size_t slot_base(int sender, uint32_t round) {
    return DST_LO + (size_t(sender) * opt.check_every + round % opt.check_every) * AREA;
}
uint64_t srcarea_key(int kernel) { return hkey(opt.seed, D_SRCAREA, kernel); }

enum am_kind { A_SHORT, A_BUILTIN, A_MEDIUM, A_MEDIUM_SEG, A_LONG, A_LONG_SEG, A_STRIDED, A_GET };
const char *am_kind_name[] = {"short", "builtin short", "medium",       "medium(seg)",
                              "long",  "long(seg)",     "long strided", "get long"};

struct am_msg {
    am_kind kind = A_SHORT;
    int dst = 0;
    unsigned handler = 0, flags = 0, nargs = 0;
    bool want_reply = false;
    size_t len = 0, src_off = 0, dst_off = 0;
    weft_am_stride s{}, d{};  // strided: source (sender's segment) and destination
    uint64_t counter = 0;     // builtin: what the target's counter gains
    uint64_t args[WEFT_AM_MAX_ARGS] = {};
};

std::string describe(const am_msg &m, int src, uint32_t round, size_t idx) {
    char b[512];
    int n = std::snprintf(b, sizeof b, "AM #%zu of round %u from kernel %d: %s to kernel %d, handler %u, %u args%s%s",
                          idx, round, src, am_kind_name[m.kind], m.dst, m.handler, m.nargs,
                          (m.flags & WEFT_AM_ASYNC) ? ", ASYNC" : "", m.want_reply ? ", reply requested" : "");
    switch (m.kind) {
        case A_MEDIUM:
        case A_MEDIUM_SEG:
        case A_LONG:
        case A_LONG_SEG:
        case A_GET:
            std::snprintf(b + n, sizeof b - n, ", %zu bytes, src offset %zu, dst offset %zu", m.len, m.src_off,
                          m.dst_off);
            break;
        case A_STRIDED:
            std::snprintf(b + n, sizeof b - n,
                          ", src {off %zu stride %zu block %zu count %zu} dst {off %zu stride %zu block %zu count %zu}",
                          m.s.offset, m.s.stride, m.s.block_size, m.s.block_count, m.d.offset, m.d.stride,
                          m.d.block_size, m.d.block_count);
            break;
        default:
            break;
    }
    return b;
}

// The messages kernel `src` sends in `round` (when its thread's round is a pgas round).
std::vector<am_msg> am_plan(int src, uint32_t round) {
    rng g(hkey(opt.seed, D_AMPLAN, src, round));
    size_t n = 1 + g.below(5);
    std::vector<am_msg> v(n);
    std::vector<size_t> used(size_t(g_nk), 0);
    size_t get_used = 0;
    for (size_t i = 0; i < n; ++i) {
        am_msg &m = v[i];
        unsigned w = unsigned(g.below(100));
        m.kind = w < 18   ? A_SHORT
                 : w < 28 ? A_BUILTIN
                 : w < 42 ? A_MEDIUM
                 : w < 52 ? A_MEDIUM_SEG
                 : w < 66 ? A_LONG
                 : w < 76 ? A_LONG_SEG
                 : w < 86 ? A_STRIDED
                          : A_GET;
        m.dst = int(g.below(uint64_t(g_nk)));
        m.handler = user_handlers[g.below(5)];
        m.flags = (m.kind != A_GET && g.pct(30)) ? WEFT_AM_ASYNC : 0;
        m.want_reply = m.kind != A_BUILTIN && m.kind != A_GET && g.pct(20);
        unsigned min_args = 1;
        size_t &u = used[size_t(m.dst)];
        switch (m.kind) {
            case A_SHORT:
            case A_MEDIUM:
            case A_MEDIUM_SEG:
                if (m.kind != A_SHORT) {
                    m.len = std::min(pick_size(g, opt.max_size), g_max_medium);
                    if (m.kind == A_MEDIUM_SEG) m.src_off = g.below(SRC_SZ - m.len + 1);
                }
                break;
            case A_BUILTIN:
                if (g.pct(50)) {
                    m.handler = WEFT_AM_H_INCR;
                    m.counter = 1;
                    min_args = 0;
                } else {
                    m.handler = WEFT_AM_H_ADD;
                    m.counter = 1 + g.below(1000);
                }
                break;
            case A_LONG:
            case A_LONG_SEG: {
                size_t room = AREA > u + 8 ? AREA - u - 8 : 0;
                m.len = std::min({pick_size(g, opt.max_size), room, g_max_long});
                m.dst_off = slot_base(src, round) + u + 1 + g.below(7);  // odd offsets too
                u = m.dst_off + m.len + 1 - slot_base(src, round);
                if (m.kind == A_LONG_SEG) m.src_off = g.below(SRC_SZ - m.len + 1);
                break;
            }
            case A_STRIDED: {
                size_t block = 1 + g.below(300), count = 1 + g.below(12);
                size_t sstride = block + g.below(80), dstride = block + g.below(40);
                size_t dblock = block, dcount = count;
                if (count % 2 == 0 && g.pct(50)) dblock = block * 2, dcount = count / 2, dstride = dblock + g.below(40);
                size_t room = AREA > u + 8 ? AREA - u - 8 : 0;
                if (room == 0) {  // the slot is full: a Short instead
                    m.kind = A_SHORT;
                    break;
                }
                if ((dcount - 1) * dstride + dblock > room) {  // the slot is nearly full: one small block
                    block = dblock = std::min<size_t>(block, room);
                    count = dcount = 1;
                }
                size_t sext = (count - 1) * sstride + block;
                m.s = {g.below(SRC_SZ - sext + 1), sstride, block, count};
                m.d = {slot_base(src, round) + u + 1 + g.below(7), dstride, dblock, dcount};
                u = m.d.offset + (dcount - 1) * dstride + dblock + 1 - slot_base(src, round);
                m.len = block * count;
                break;
            }
            case A_GET:
                m.len = std::min(
                    {pick_size(g, opt.max_size), GET_SZ > get_used + 8 ? GET_SZ - get_used - 8 : 0, g_max_long});
                m.src_off = g.below(SRC_SZ - m.len + 1);
                m.dst_off = GET_LO + get_used + g.below(8);
                get_used = m.dst_off + m.len + 1 - GET_LO;
                m.handler = g.pct(50) ? WEFT_AM_H_EMPTY : H_GETCHK;
                break;
        }
        m.nargs = unsigned(min_args + g.below(WEFT_AM_MAX_ARGS - min_args + 1));
        for (unsigned j = 0; j < m.nargs; ++j) m.args[j] = hkey(opt.seed, D_AMARG, src, round, i, j);
        if (m.kind == A_BUILTIN) {
            if (m.handler == WEFT_AM_H_ADD) m.args[0] = m.counter;
        } else if (m.nargs) {
            m.args[0] =
                (uint64_t(round) << 32) | (uint64_t(i) << 16) | (uint64_t(m.want_reply) << 8) | uint64_t(m.kind);
        }
    }
    return v;
}

// ================================================================== per-thread state

struct am_round {
    uint32_t round = 0;
    std::vector<am_msg> plan;
    std::vector<int> replies, get_calls;  // handler calls seen per message
};

struct kernel_state {
    weft_pgas k = WEFT_PGAS_NULL;
    int id = -1;
    uint8_t *base = nullptr;
    size_t size = 0;
    std::atomic<uint64_t> handled{0}, handled_bytes{0}, replies{0}, get_calls{0};
    std::atomic<am_round *> cur{nullptr};  // the round this kernel is sending in (its thread's)
    std::mutex seen_mu;
    std::unordered_set<uint64_t> seen;  // (source kernel, round, index) since the last agreement
};

struct thread_ctx {
    int t = 0;
    weft_stream s = WEFT_STREAM_NULL;
    weft_comm sc = WEFT_COMM_NULL, cc = WEFT_COMM_NULL;
    kernel_state ks;
    stats st;
    uint64_t exp_handled = 0;  // user-handler requests sent to this kernel in the rounds so far
    uint64_t exp_counter = 0;  // counter increments not yet waited for
    uint32_t final_round = 0;
    double seconds = 0;
};
weft_comm g_mc = WEFT_COMM_NULL;
std::chrono::steady_clock::time_point g_start;

// ================================================================== AM handlers

void request_handler(weft_pgas kernel, const weft_am_info *info, void *ud) {
    auto *ks = static_cast<kernel_state *>(ud);
    if (kernel != ks->k) fail("AM handler on kernel %d got kernel handle 0x%x, expected 0x%x", ks->id, kernel, ks->k);
    if (info->is_reply)
        fail("kernel %d: request handler %u called for a reply from kernel %d", ks->id, info->handler, info->source);
    if (info->source < 0 || info->source >= g_nk)
        fail("kernel %d: AM from kernel %d (there are %d)", ks->id, info->source, g_nk);
    if (info->nargs == 0 || info->args == nullptr)
        fail("kernel %d: AM (handler %u, kind %d) from kernel %d has no args; every soak request carries args[0]",
             ks->id, info->handler, info->kind, info->source);
    const int src = info->source;
    const uint64_t a0 = info->args[0];
    const uint32_t round = uint32_t(a0 >> 32);
    const size_t idx = size_t((a0 >> 16) & 0xffff);
    std::vector<am_msg> plan = am_plan(src, round);
    if (idx >= plan.size())
        fail("kernel %d: AM from kernel %d, handler %u: args[0] 0x%" PRIx64
             " names message #%zu of round %u, which has %zu",
             ks->id, src, info->handler, a0, idx, round, plan.size());
    const am_msg &m = plan[idx];
    std::string what = "kernel " + std::to_string(ks->id) + " handling " + describe(m, src, round, idx);
    static const int wire_kind[] = {WEFT_AM_SHORT, WEFT_AM_SHORT, WEFT_AM_MEDIUM,       WEFT_AM_MEDIUM,
                                    WEFT_AM_LONG,  WEFT_AM_LONG,  WEFT_AM_LONG_STRIDED, WEFT_AM_LONG};
    if (m.dst != ks->id || m.kind == A_BUILTIN || m.kind == A_GET)
        fail("%s: it reached the wrong kernel", what.c_str());
    if (info->handler != m.handler) fail("%s: info->handler is %u", what.c_str(), info->handler);
    if (info->kind != wire_kind[m.kind])
        fail("%s: info->kind is %d, expected %d", what.c_str(), info->kind, wire_kind[m.kind]);
    if (info->nargs != m.nargs) fail("%s: info->nargs is %u", what.c_str(), info->nargs);
    for (unsigned j = 0; j < m.nargs; ++j)
        if (info->args[j] != m.args[j])
            fail("%s: args[%u] is 0x%" PRIx64 ", expected 0x%" PRIx64, what.c_str(), j, info->args[j], m.args[j]);
    switch (m.kind) {
        case A_MEDIUM:
        case A_MEDIUM_SEG:
            if (info->length != m.len) fail("%s: info->length is %zu", what.c_str(), info->length);
            if (m.len && !info->payload) fail("%s: info->payload is NULL", what.c_str());
            if (m.kind == A_MEDIUM)
                check_bytes(what + ": payload", hkey(opt.seed, D_AMPAY, src, round, idx), info->payload, m.len);
            else
                check_bytes(what + ": payload", srcarea_key(src), info->payload, m.len, m.src_off);
            break;
        case A_LONG:
        case A_LONG_SEG:
            if (info->length != m.len) fail("%s: info->length is %zu", what.c_str(), info->length);
            if (info->offset != m.dst_off) fail("%s: info->offset is %zu", what.c_str(), info->offset);
            if (m.kind == A_LONG)
                check_bytes(what + ": data in the segment", hkey(opt.seed, D_AMPAY, src, round, idx),
                            ks->base + m.dst_off, m.len);
            else
                check_bytes(what + ": data in the segment", srcarea_key(src), ks->base + m.dst_off, m.len, m.src_off);
            break;
        case A_STRIDED: {
            if (info->length != m.len) fail("%s: info->length is %zu", what.c_str(), info->length);
            if (info->offset != m.d.offset) fail("%s: info->offset is %zu", what.c_str(), info->offset);
            const uint64_t key = srcarea_key(src);
            for (size_t p = 0; p < m.len; ++p) {
                size_t soff = m.s.offset + (p / m.s.block_size) * m.s.stride + p % m.s.block_size;
                size_t doff = m.d.offset + (p / m.d.block_size) * m.d.stride + p % m.d.block_size;
                if (ks->base[doff] != byte_at(key, soff))
                    fail("%s: byte %zu of the stream (segment offset %zu): got 0x%02x, expected 0x%02x", what.c_str(),
                         p, doff, ks->base[doff], byte_at(key, soff));
            }
            break;
        }
        default:
            break;
    }
    {
        std::lock_guard<std::mutex> g(ks->seen_mu);
        if (!ks->seen.insert(hkey(src, round, idx)).second) fail("%s: handled twice", what.c_str());
    }
    if (m.want_reply) {
        uint64_t r0 = a0;
        int rc = weft_am_reply_short(info, H_REPLY, &r0, 1);
        if (rc) fail("%s: weft_am_reply_short returned %s", what.c_str(), weft_err(rc).c_str());
    }
    ks->handled_bytes.fetch_add(m.len, std::memory_order_relaxed);
    ks->handled.fetch_add(1, std::memory_order_release);
}

// weft_am_reply_short's answer, on the sender.
void reply_handler(weft_pgas kernel, const weft_am_info *info, void *ud) {
    auto *ks = static_cast<kernel_state *>(ud);
    am_round *cur = ks->cur.load(std::memory_order_acquire);
    if (kernel != ks->k) fail("reply handler on kernel %d got kernel handle 0x%x", ks->id, kernel);
    if (!info->is_reply || info->kind != WEFT_AM_SHORT || info->nargs != 1 || !info->args)
        fail(
            "kernel %d: reply handler: is_reply %d, kind %d, nargs %u from kernel %d (expected a Short reply with 1 "
            "arg)",
            ks->id, info->is_reply, info->kind, info->nargs, info->source);
    uint64_t a0 = info->args[0];
    uint32_t round = uint32_t(a0 >> 32);
    size_t idx = size_t((a0 >> 16) & 0xffff);
    if (!cur || round != cur->round || idx >= cur->plan.size() || !cur->plan[idx].want_reply ||
        cur->plan[idx].dst != info->source)
        fail("kernel %d: unexpected reply 0x%" PRIx64 " (round %u, message #%zu) from kernel %d while in round %d",
             ks->id, a0, round, idx, info->source, cur ? int(cur->round) : -1);
    if (++cur->replies[idx] != 1)
        fail("kernel %d: %s: answered %d times", ks->id, describe(cur->plan[idx], ks->id, round, idx).c_str(),
             cur->replies[idx]);
    ks->replies.fetch_add(1, std::memory_order_release);
}

// A get's data arrived (runs on the caller).
void get_handler(weft_pgas kernel, const weft_am_info *info, void *ud) {
    auto *ks = static_cast<kernel_state *>(ud);
    am_round *cur = ks->cur.load(std::memory_order_acquire);
    if (kernel != ks->k) fail("get handler on kernel %d got kernel handle 0x%x", ks->id, kernel);
    if (!cur)
        fail("kernel %d: get handler outside a pgas round (source %d, offset %zu)", ks->id, info->source, info->offset);
    size_t idx = SIZE_MAX;
    for (size_t i = 0; i < cur->plan.size(); ++i)
        if (cur->plan[i].kind == A_GET && cur->plan[i].handler == H_GETCHK && cur->plan[i].dst_off == info->offset)
            idx = i;
    if (idx == SIZE_MAX)
        fail("kernel %d: get handler: no get of round %u lands at offset %zu (source %d, length %zu)", ks->id,
             cur->round, info->offset, info->source, info->length);
    const am_msg &m = cur->plan[idx];
    std::string what = "kernel " + std::to_string(ks->id) + ", get handler for " + describe(m, ks->id, cur->round, idx);
    if (!info->is_reply) fail("%s: is_reply is 0", what.c_str());
    if (info->source != m.dst) fail("%s: info->source is %d", what.c_str(), info->source);
    if (info->length != m.len) fail("%s: info->length is %zu", what.c_str(), info->length);
    check_bytes(what + ": data in the segment", srcarea_key(m.dst), ks->base + m.dst_off, m.len, m.src_off);
    if (++cur->get_calls[idx] != 1) fail("%s: ran %d times", what.c_str(), cur->get_calls[idx]);
    ks->get_calls.fetch_add(1, std::memory_order_release);
}

// ================================================================== round kinds

enum round_kind { R_P2P, R_CONV, R_COLL, R_CCOLL, R_MCOLL, R_MUX, R_PGAS };
const char *round_name[] = {"p2p", "conv", "coll", "ccoll", "mcoll", "mux", "pgas"};

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

// ================================================================== progress and waiting

void progress(thread_ctx &T) {
    int rc = weft_stream_progress(T.s);
    if (rc) fail("weft_stream_progress returned %s", weft_err(rc).c_str());
}

void spin_until(thread_ctx &T, const std::function<bool()> &done) {
    for (unsigned spins = 0; !done(); ++spins) {
        int rc = weft_pgas_progress(T.ks.k);
        if (rc) fail("weft_pgas_progress returned %s", weft_err(rc).c_str());
        if (spins > 64) sched_yield();
    }
}

// The threads of one process meet here (each progressing its own stream meanwhile) and combine
// a flag.
struct proc_barrier {
    std::mutex mu;
    int arrived = 0;
    bool acc = false;
    bool result[2] = {false, false};
    std::atomic<uint64_t> gen{0};
    bool arrive(thread_ctx &T, bool flag) {
        uint64_t my;
        {
            std::lock_guard<std::mutex> g(mu);
            my = gen.load();
            acc = acc || flag;
            if (++arrived == g_threads) {
                result[my & 1] = acc;
                acc = false;
                arrived = 0;
                gen.store(my + 1, std::memory_order_release);
            }
        }
        spin_until(T, [&] { return gen.load(std::memory_order_acquire) != my; });
        std::lock_guard<std::mutex> g(mu);
        return result[my & 1];
    }
};
proc_barrier g_pbar;

// ================================================================== point-to-point exchanges

enum recv_mode { M_EXACT, M_ANY_SOURCE, M_ANY_TAG, M_ANY_INDEX, M_ANY_BOTH };
const char *mode_name[] = {"exact", "ANY_SOURCE", "ANY_TAG", "ANY_INDEX", "ANY_SOURCE+ANY_INDEX"};

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

// Messages from `from` to `to` in round r of exchange domain `dom`.
std::vector<msg_desc> pair_plan(uint64_t dom, uint32_t r, ep from, ep to, bool mux) {
    rng g(hkey(opt.seed, D_PAIR, dom, r, from.rank, from.thread, to.rank, to.thread));
    size_t n = g.pct(35) ? 0 : 1 + g.below(3);
    bool any_tag_pair = g.pct(15);
    std::vector<msg_desc> v(n);
    for (size_t k = 0; k < n; ++k) {
        msg_desc &m = v[k];
        unsigned ty = unsigned(g.below(100));
        if (ty < 70)
            m.type = WEFT_BYTE, m.es = 1, m.tname = "BYTE";
        else if (ty < 85)
            m.type = WEFT_UINT64_T, m.es = 8, m.tname = "UINT64_T";
        else
            m.type = WEFT_INT32_T, m.es = 4, m.tname = "INT32_T";
        m.count = pick_size(g, opt.max_size) / m.es;
        m.cap = m.count + (g.pct(50) ? 0 : 1 + g.below(16));
        m.tag = make_tag(r, from.rank, from.thread, int(k));
        unsigned md = unsigned(g.below(100));
        if (any_tag_pair)
            m.mode = M_ANY_TAG;
        else if (md < 50)
            m.mode = M_EXACT;
        else if (!mux || md < 70)
            m.mode = M_ANY_SOURCE;
        else if (md < 88)
            m.mode = M_ANY_INDEX;
        else
            m.mode = M_ANY_BOTH;
        m.blocking = g.pct(10);
        m.key = hkey(opt.seed, D_PAYLOAD, dom, r, from.rank, from.thread, to.rank, to.thread, k);
    }
    return v;
}

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

    std::string msg_what(const ep &from, const ep &to, size_t k, const msg_desc &m) const {
        char b[400];
        std::snprintf(b, sizeof b,
                      "%s: message #%zu from rank %d%s to rank %d%s, tag %d, %zu x %s (%zu bytes, receive buffer %zu "
                      "elements, recv mode %s%s)",
                      name.c_str(), k, from.rank, mux ? (" stream " + std::to_string(from.thread)).c_str() : "",
                      to.rank, mux ? (" stream " + std::to_string(to.thread)).c_str() : "", m.tag, m.count, m.tname,
                      m.count * m.es, m.cap, mode_name[m.mode], m.blocking ? ", blocking send" : "");
        return b;
    }

    void post() {
        rng g(hkey(opt.seed, D_ORDER, dom, r, me.rank, me.thread));
        const size_t np = peers.size();
        const size_t rot_r = g.below(np), rot_s = g.below(np);
        for (size_t i = 0; i < np; ++i) {
            const ep from = peers[(i + rot_r) % np];
            auto plan = pair_plan(dom, r, from, me, mux);
            for (size_t k = 0; k < plan.size(); ++k) {
                recv_rec rr{from, k, plan[k], {}};
                const msg_desc &m = rr.m;
                rr.buf.resize(m.cap * m.es + GUARD);
                fill(hkey(m.key, D_CANARY), rr.buf.data(), rr.buf.size());
                int source = (m.mode == M_ANY_SOURCE || m.mode == M_ANY_BOTH) ? WEFT_ANY_SOURCE : from.rank;
                int tag = m.mode == M_ANY_TAG ? WEFT_ANY_TAG : m.tag;
                weft_request q = WEFT_REQUEST_NULL;
                int rc;
                if (mux) {
                    int sidx = (m.mode == M_ANY_INDEX || m.mode == M_ANY_BOTH) ? WEFT_ANY_INDEX : from.thread;
                    rc = weft_stream_irecv(rr.buf.data(), m.cap, m.type, source, tag, comm, sidx, me.thread, &q);
                } else {
                    rc = weft_irecv(rr.buf.data(), m.cap, m.type, source, tag, comm, &q);
                }
                if (rc) fail("%s: posting the receive: %s", msg_what(from, me, k, m).c_str(), weft_err(rc).c_str());
                recvs.push_back(std::move(rr));
                reqs.push_back(q);
            }
        }
        for (size_t i = 0; i < np; ++i) {
            const ep to = peers[(i + rot_s) % np];
            auto plan = pair_plan(dom, r, me, to, mux);
            for (size_t k = 0; k < plan.size(); ++k) {
                send_rec sr{to, k, plan[k], {}};
                const msg_desc &m = sr.m;
                sr.buf.resize(m.count * m.es);
                fill(m.key, sr.buf.data(), sr.buf.size());
                bool blocking = m.blocking && !poll;
                weft_request q = WEFT_REQUEST_NULL;
                int rc;
                if (mux)
                    rc = blocking ? weft_stream_send(sr.buf.data(), m.count, m.type, to.rank, m.tag, comm, me.thread,
                                                     to.thread)
                                  : weft_stream_isend(sr.buf.data(), m.count, m.type, to.rank, m.tag, comm, me.thread,
                                                      to.thread, &q);
                else
                    rc = blocking ? weft_send(sr.buf.data(), m.count, m.type, to.rank, m.tag, comm)
                                  : weft_isend(sr.buf.data(), m.count, m.type, to.rank, m.tag, comm, &q);
                if (rc)
                    fail("%s: %s: %s", msg_what(me, to, k, m).c_str(), blocking ? "blocking send" : "isend",
                         weft_err(rc).c_str());
                T->st.v[S_MSGS_SENT]++;
                T->st.v[S_BYTES_SENT] += m.count * m.es;
                sends.push_back(std::move(sr));
                reqs.push_back(q);
            }
        }
    }

    void add_extra(weft_request q) {
        reqs.push_back(q);
        ++nextra;
    }

    // Completes every request (poll: only by test calls, progressing the thread's stream too).
    void complete() {
        const size_t n = reqs.size();
        st.assign(n, weft_status{});
        for (auto &s : st) s.error = -12345, s.source = -12345, s.tag = -12345;
        if (n == 0) return;
        rng g(hkey(opt.seed, D_ORDER, dom, r, me.rank, me.thread, 1));
        unsigned method = unsigned(g.below(poll ? 2 : 4));
        const char *mname = poll ? (method == 0 ? "testall+stream_progress" : "test each+stream_progress")
                                 : (method == 0   ? "waitall"
                                    : method == 1 ? "waitany"
                                    : method == 2 ? "wait each"
                                                  : "test each");
        doing("round %u %s: completing %zu requests (%s)", r, name.c_str(), n, mname);
        auto in_status = [&](int rc, const char *fn) {
            if (rc == WEFT_ERR_IN_STATUS) {
                std::string e;
                for (size_t i = 0; i < n; ++i)
                    if (st[i].error != WEFT_SUCCESS && st[i].error != -12345)
                        e += " request " + std::to_string(i) + ": " + weft_err(st[i].error) + ";";
                fail("%s: %s returned WEFT_ERR_IN_STATUS:%s", name.c_str(), fn, e.c_str());
            }
            if (rc) fail("%s: %s returned %s", name.c_str(), fn, weft_err(rc).c_str());
        };
        if (poll && method == 0) {
            int flag = 0;
            while (!flag) {
                in_status(weft_testall(n, reqs.data(), &flag, st.data()), "weft_testall");
                if (!flag) progress(*T);
            }
        } else if (method == 3 || (poll && method == 1)) {
            size_t left = 0;
            for (auto q : reqs) left += q != WEFT_REQUEST_NULL;
            while (left) {
                for (size_t i = 0; i < n; ++i) {
                    if (reqs[i] == WEFT_REQUEST_NULL) continue;
                    int flag = 0;
                    int rc = weft_test(&reqs[i], &flag, &st[i]);
                    if (rc) fail("%s: weft_test(request %zu) returned %s", name.c_str(), i, weft_err(rc).c_str());
                    if (flag) --left;
                }
                if (left && poll) progress(*T);
            }
        } else if (method == 0) {
            in_status(weft_waitall(n, reqs.data(), st.data()), "weft_waitall");
        } else if (method == 1) {
            size_t active = 0;
            for (auto q : reqs) active += q != WEFT_REQUEST_NULL;
            for (size_t done = 0;; ++done) {
                size_t idx = 0;
                weft_status s{};
                int rc = weft_waitany(n, reqs.data(), &idx, &s);
                if (rc) fail("%s: weft_waitany returned %s", name.c_str(), weft_err(rc).c_str());
                if (idx == WEFT_UNDEFINED) {
                    if (done != active)
                        fail("%s: weft_waitany reported all requests null after %zu of %zu", name.c_str(), done,
                             active);
                    break;
                }
                if (idx >= n || done >= active)
                    fail("%s: weft_waitany returned index %zu (call %zu of %zu)", name.c_str(), idx, done, n);
                st[idx] = s;
            }
        } else {
            std::vector<size_t> order(n);
            for (size_t i = 0; i < n; ++i) order[i] = i;
            for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[g.below(i)]);
            for (size_t i : order) {
                int rc = weft_wait(&reqs[i], &st[i]);
                if (rc) fail("%s: weft_wait(request %zu) returned %s", name.c_str(), i, weft_err(rc).c_str());
            }
        }
        for (size_t i = 0; i < n; ++i)
            if (reqs[i] != WEFT_REQUEST_NULL)
                fail("%s: request %zu is not null after completion (%s)", name.c_str(), i, mname);
    }

    void verify() {
        for (size_t i = 0; i < recvs.size(); ++i) {
            recv_rec &rr = recvs[i];
            const msg_desc &m = rr.m;
            const weft_status &s = st[i];
            std::string what = msg_what(rr.from, me, rr.k, m);
            if (s.error != WEFT_SUCCESS) fail("%s: status.error is %s", what.c_str(), weft_err(s.error).c_str());
            if (s.source != rr.from.rank) fail("%s: status.source is %d", what.c_str(), s.source);
            if (s.tag != m.tag) fail("%s: status.tag is %d", what.c_str(), s.tag);
            if (mux && s.stream_index != rr.from.thread)
                fail("%s: status.stream_index is %d", what.c_str(), s.stream_index);
            size_t count = SIZE_MAX - 1;
            int rc = weft_get_count(&s, m.type, &count);
            if (rc) fail("%s: weft_get_count returned %s", what.c_str(), weft_err(rc).c_str());
            if (count != m.count) fail("%s: weft_get_count gives %zu", what.c_str(), count);
            check_bytes(what + ": payload", m.key, rr.buf.data(), m.count * m.es);
            check_bytes(what + ": bytes past the message (receive buffer slack and guard) changed",
                        hkey(m.key, D_CANARY), rr.buf.data() + m.count * m.es, rr.buf.size() - m.count * m.es,
                        m.count * m.es);
            T->st.v[S_MSGS_RECV]++;
            T->st.v[S_BYTES_RECV] += m.count * m.es;
        }
        for (size_t i = 0; i < sends.size(); ++i) {
            const weft_status &s = st[recvs.size() + i];
            if (s.error != WEFT_SUCCESS && s.error != -12345)
                fail("%s: status.error of the send is %s", msg_what(me, sends[i].to, sends[i].k, sends[i].m).c_str(),
                     weft_err(s.error).c_str());
        }
    }
};

// An exchange among the ranks of sc_t or cc_t (thread t everywhere).
exchange make_comm_exchange(thread_ctx &T, weft_comm comm, uint64_t dom, uint32_t r, bool poll, const char *name) {
    exchange ex;
    ex.T = &T;
    ex.comm = comm;
    ex.dom = dom;
    ex.r = r;
    ex.poll = poll;
    ex.name = std::string(name);
    ex.me = {g_rank, T.t};
    for (int p = 0; p < g_size; ++p) ex.peers.push_back({p, T.t});
    return ex;
}

void round_p2p(thread_ctx &T, uint32_t r, bool conv) {
    exchange ex = make_comm_exchange(
        T, conv ? T.cc : T.sc, conv ? D_P2P_CC : D_P2P_SC, r, conv && !opt.progress_threads,
        conv ? ("conv p2p on cc_" + std::to_string(T.t)).c_str() : ("p2p on sc_" + std::to_string(T.t)).c_str());
    ex.post();
    ex.complete();
    ex.verify();
}

void round_mux(thread_ctx &T, uint32_t r) {
    exchange ex;
    ex.T = &T;
    ex.comm = g_mc;
    ex.mux = true;
    ex.dom = D_P2P_MUX;
    ex.r = r;
    ex.name = "multiplex p2p on mc";
    ex.me = {g_rank, T.t};
    for (int p = 0; p < g_size; ++p)
        for (int t = 0; t < g_threads; ++t)
            if (kind_of(t, r) == R_MUX) ex.peers.push_back({p, t});
    ex.post();
    ex.complete();
    ex.verify();
}

// ================================================================== collectives

enum coll_op {
    C_BARRIER,
    C_BCAST,
    C_REDUCE,
    C_ALLREDUCE,
    C_GATHER,
    C_GATHERV,
    C_SCATTER,
    C_SCATTERV,
    C_ALLGATHER,
    C_ALLGATHERV,
    C_ALLTOALL,
    C_ALLTOALLV,
    C_RSB,
    C_SCAN,
    C_EXSCAN,
    C_NOPS
};
const char *coll_name[] = {"barrier",
                           "bcast",
                           "reduce",
                           "allreduce",
                           "gather",
                           "gatherv",
                           "scatter",
                           "scatterv",
                           "allgather",
                           "allgatherv",
                           "alltoall",
                           "alltoallv",
                           "reduce_scatter_block",
                           "scan",
                           "exscan"};

enum red_type { RT_U64, RT_I32, RT_DBL, RT_U8 };

template <typename V>
V red_value(uint64_t key, size_t i) {
    uint64_t w = word_at(key, i);
    if constexpr (std::is_same_v<V, uint64_t>) return w;
    if constexpr (std::is_same_v<V, uint8_t>) return uint8_t(w);
    if constexpr (std::is_same_v<V, int32_t>) return int32_t(w % 2001) - 1000;
    if constexpr (std::is_same_v<V, double>) return double(int64_t(w % 2001) - 1000);
}
template <typename V>
V red_apply(weft_op op, V a, V b) {
    if (op == WEFT_SUM) return V(a + b);
    if (op == WEFT_MAX) return std::max(a, b);
    if (op == WEFT_MIN) return std::min(a, b);
    if constexpr (std::is_integral_v<V>) {
        if (op == WEFT_PROD) return V(a * b);
        if (op == WEFT_BXOR) return V(a ^ b);
        if (op == WEFT_BOR) return V(a | b);
        if (op == WEFT_BAND) return V(a & b);
    }
    fail("internal: unexpected reduction op 0x%x", op);
}

struct coll_round {
    thread_ctx *T;
    weft_comm comm;
    uint64_t dom;
    uint32_t r;
    bool poll;  // nonblocking only, completed by polling (conventional communicator)
    std::string cname;
    int n = 0, me = 0;

    std::string what;
    uint64_t bkey(int from, int to) const { return hkey(opt.seed, D_CDATA, dom, T->t, r, from, to); }

    void wait(weft_request &q) {
        if (poll) {
            int flag = 0;
            while (!flag) {
                WEFT_OK(weft_test(&q, &flag, WEFT_STATUS_IGNORE));
                if (!flag) progress(*T);
            }
        } else {
            WEFT_OK(weft_wait(&q, WEFT_STATUS_IGNORE));
        }
        if (q != WEFT_REQUEST_NULL) fail("%s: request not null after completion", what.c_str());
    }

    template <typename V>
    void check_red(const V *got, size_t count, const std::vector<int> &contrib, weft_op op, size_t elem_from,
                   const char *which) {
        for (size_t i = 0; i < count; ++i) {
            V e{};
            bool first = true;
            for (int p : contrib) {
                V x = red_value<V>(bkey(p, -1), elem_from + i);
                e = first ? x : red_apply(op, e, x);
                first = false;
            }
            if (std::memcmp(&e, &got[i], sizeof(V)) != 0) {
                uint64_t ge = 0, ee = 0;
                std::memcpy(&ge, &got[i], sizeof(V));
                std::memcpy(&ee, &e, sizeof(V));
                fail("%s: %s element %zu of %zu: got 0x%" PRIx64 ", expected 0x%" PRIx64, what.c_str(), which, i, count,
                     ge, ee);
            }
        }
    }

    template <typename V>
    void reduction(coll_op op_kind, rng &g, weft_datatype type, weft_op op, bool nb, exchange *ex) {
        const size_t es = sizeof(V);
        const int root = int(g.below(uint64_t(n)));
        const bool rsb = op_kind == C_RSB;
        size_t count = pick_size(g, rsb ? opt.max_size / size_t(n) : opt.max_size) / es;
        const bool ip = g.pct(25);
        const bool in_place = (op_kind == C_ALLREDUCE || (op_kind == C_REDUCE && me == root)) && ip;
        what += ", " + std::to_string(count) + " elements" + (rsb ? " a block" : "") + (in_place ? ", in place" : "");
        if (op_kind == C_REDUCE) what += ", root " + std::to_string(root);
        T->st.v[S_COLL_BYTES] += count * es * (rsb ? size_t(n) : 1);
        const size_t scount = rsb ? count * size_t(n) : count;
        std::vector<V> send(scount), recv(scount + GUARD / es + 1);
        for (size_t i = 0; i < scount; ++i) send[i] = red_value<V>(bkey(me, -1), i);
        fill(bkey(me, -2), recv.data(), recv.size() * es);
        if (in_place && scount) std::memcpy(recv.data(), send.data(), scount * es);
        const void *sb = in_place ? WEFT_IN_PLACE : send.data();
        void *rb = recv.data();
        weft_request q = WEFT_REQUEST_NULL;
        int rc = 0;
        switch (op_kind) {
            case C_REDUCE:
                rc = nb ? weft_ireduce(sb, rb, count, type, op, root, comm, &q)
                        : weft_reduce(sb, rb, count, type, op, root, comm);
                break;
            case C_ALLREDUCE:
                rc = nb ? weft_iallreduce(sb, rb, count, type, op, comm, &q)
                        : weft_allreduce(sb, rb, count, type, op, comm);
                break;
            case C_RSB:
                rc = nb ? weft_ireduce_scatter_block(sb, rb, count, type, op, comm, &q)
                        : weft_reduce_scatter_block(sb, rb, count, type, op, comm);
                break;
            case C_SCAN:
                rc = nb ? weft_iscan(sb, rb, count, type, op, comm, &q) : weft_scan(sb, rb, count, type, op, comm);
                break;
            case C_EXSCAN:
                rc = nb ? weft_iexscan(sb, rb, count, type, op, comm, &q) : weft_exscan(sb, rb, count, type, op, comm);
                break;
            default:
                break;
        }
        if (rc) fail("%s: the call returned %s", what.c_str(), weft_err(rc).c_str());
        finish(nb, q, ex);
        std::vector<int> all, upto, below;
        for (int p = 0; p < n; ++p) {
            all.push_back(p);
            if (p <= me) upto.push_back(p);
            if (p < me) below.push_back(p);
        }
        switch (op_kind) {
            case C_REDUCE:
                if (me == root) check_red<V>(recv.data(), count, all, op, 0, "result");
                break;
            case C_ALLREDUCE:
                check_red<V>(recv.data(), count, all, op, 0, "result");
                break;
            case C_RSB:
                check_red<V>(recv.data(), count, all, op, size_t(me) * count, "result");
                break;
            case C_SCAN:
                check_red<V>(recv.data(), count, upto, op, 0, "result");
                break;
            case C_EXSCAN:
                if (me > 0) check_red<V>(recv.data(), count, below, op, 0, "result");  // undefined at rank 0
                break;
            default:
                break;
        }
        // A non-root's receive buffer of reduce is not significant: it must stay untouched.
        const size_t from = (op_kind == C_REDUCE && me != root) ? 0 : count * es;
        check_bytes(what + ": bytes past the result changed", bkey(me, -2),
                    reinterpret_cast<uint8_t *>(recv.data()) + from, recv.size() * es - from, from);
    }

    // Completion: alone, or together with a p2p exchange on the same communicator.
    void finish(bool nb, weft_request &q, exchange *ex) {
        if (!nb) return;
        if (ex) {
            ex->add_extra(q);
            q = WEFT_REQUEST_NULL;
            ex->complete();
            ex->verify();
        } else {
            wait(q);
        }
    }

    void run(thread_ctx &T_) {
        T = &T_;
        WEFT_OK(weft_comm_size(comm, &n));
        WEFT_OK(weft_comm_rank(comm, &me));
        rng g(hkey(opt.seed, D_COLL, dom, T->t, r));
        const coll_op op = coll_op(g.below(C_NOPS));
        const bool nb = poll || g.pct(40);
        const bool with_p2p = nb && g.pct(30);
        what = "round " + std::to_string(r) + " " + (nb ? "i" : "") + coll_name[op] + " on " + cname +
               (with_p2p ? " (with a concurrent p2p exchange)" : "");
        doing("round %u collective on %s", r, cname.c_str());
        T->st.v[S_COLLECTIVES]++;
        std::unique_ptr<exchange> ex;
        if (with_p2p) {
            ex = std::make_unique<exchange>(
                make_comm_exchange(*T, comm, D_P2P_INCOLL + dom * 16, r, poll, ("p2p alongside " + what).c_str()));
            // On mc only thread 0's stream (index 0) takes part: peers are thread 0 of each rank.
            if (dom == D_COLL_MC) {
                ex->mux = true;
                ex->me = {g_rank, 0};
                for (auto &p : ex->peers) p.thread = 0;
            }
            ex->post();
        }
        exchange *exp = ex.get();
        if (op == C_BARRIER) {
            weft_request q = WEFT_REQUEST_NULL;
            int rc = nb ? weft_ibarrier(comm, &q) : weft_barrier(comm);
            if (rc) fail("%s: the call returned %s", what.c_str(), weft_err(rc).c_str());
            finish(nb, q, exp);
            return;
        }
        if (op == C_REDUCE || op == C_ALLREDUCE || op == C_RSB || op == C_SCAN || op == C_EXSCAN) {
            red_type rt = red_type(g.below(4));
            static const weft_op int_ops[] = {WEFT_SUM, WEFT_PROD, WEFT_BXOR, WEFT_MAX, WEFT_MIN, WEFT_BOR, WEFT_BAND};
            static const weft_op small_ops[] = {WEFT_SUM, WEFT_MAX, WEFT_MIN};
            static const char *opn[] = {"SUM", "PROD", "BXOR", "MAX", "MIN", "BOR", "BAND"};
            switch (rt) {
                case RT_U64: {
                    unsigned o = unsigned(g.below(7));
                    what += std::string(", UINT64_T ") + opn[o];
                    reduction<uint64_t>(op, g, WEFT_UINT64_T, int_ops[o], nb, exp);
                    break;
                }
                case RT_U8: {
                    unsigned o = unsigned(g.below(7));
                    what += std::string(", UINT8_T ") + opn[o];
                    reduction<uint8_t>(op, g, WEFT_UINT8_T, int_ops[o], nb, exp);
                    break;
                }
                case RT_I32: {
                    unsigned o = unsigned(g.below(3));
                    what += std::string(", INT32_T ") + (o == 0 ? "SUM" : o == 1 ? "MAX" : "MIN");
                    reduction<int32_t>(op, g, WEFT_INT32_T, small_ops[o], nb, exp);
                    break;
                }
                case RT_DBL: {
                    unsigned o = unsigned(g.below(3));
                    what += std::string(", DOUBLE ") + (o == 0 ? "SUM" : o == 1 ? "MAX" : "MIN");
                    reduction<double>(op, g, WEFT_DOUBLE, small_ops[o], nb, exp);
                    break;
                }
            }
            return;
        }
        movement(op, g, nb, exp);
    }

    // Data-movement collectives: bytes of datatype BYTE, UINT32_T or UINT64_T.
    void movement(coll_op op, rng &g, bool nb, exchange *ex) {
        static const weft_datatype types[] = {WEFT_BYTE, WEFT_UINT32_T, WEFT_UINT64_T};
        static const size_t sizes[] = {1, 4, 8};
        static const char *tnames[] = {"BYTE", "UINT32_T", "UINT64_T"};
        const unsigned ti = unsigned(g.below(3));
        const weft_datatype type = types[ti];
        const size_t es = sizes[ti];
        const int root = int(g.below(uint64_t(n)));
        const size_t N = size_t(n);
        const bool per_block = op != C_BCAST;
        const size_t cmax = (per_block ? opt.max_size / N : opt.max_size) / es;
        const size_t count = pick_size(g, cmax * es) / es;
        // v variants: per-rank (or per-pair) counts and displacements with gaps.
        std::vector<size_t> counts(N), displs(N);
        std::vector<std::vector<size_t>> pc(N, std::vector<size_t>(N));  // alltoallv: pc[from][to]
        auto layout = [&](const std::vector<size_t> &c, std::vector<size_t> &d) {
            size_t at = 0;
            for (size_t p = 0; p < N; ++p) {
                at += g.below(4);
                d[p] = at;
                at += c[p];
            }
            return at + g.below(4);
        };
        for (size_t p = 0; p < N; ++p) counts[p] = pick_size(g, cmax * es) / es;
        for (size_t p = 0; p < N; ++p)
            for (size_t q = 0; q < N; ++q) pc[p][q] = pick_size(g, (opt.max_size / N / N / es) * es) / es;
        const bool in_place = (op == C_ALLGATHER || op == C_ALLGATHERV) && g.pct(25);
        char b[200];
        std::snprintf(b, sizeof b, ", %s, count %zu, root %d%s", tnames[ti], count, root, in_place ? ", in place" : "");
        what += b;
        const size_t me_ = size_t(me);
        auto bytes_of = [&](size_t elems) { return elems * es; };
        std::vector<uint8_t> sbuf, rbuf;
        size_t rsize = 0;  // elements of rbuf that the collective may write
        const void *sb = nullptr;
        void *rb = nullptr;
        weft_request q = WEFT_REQUEST_NULL;
        int rc = 0;
        // Expected contents: a list of (offset in rbuf elements, elements, key, key offset).
        struct piece {
            size_t at, elems;
            uint64_t key;
            const char *from;
            int peer;
        };
        std::vector<piece> expect;
        auto alloc_recv = [&](size_t elems) {
            rsize = elems;
            rbuf.resize(bytes_of(elems) + GUARD);
            fill(bkey(me, -2), rbuf.data(), rbuf.size());
            rb = rbuf.data();
        };
        switch (op) {
            case C_BCAST: {
                alloc_recv(count);
                if (me == root) fill(bkey(root, -1), rbuf.data(), bytes_of(count));
                rc = nb ? weft_ibcast(rb, count, type, root, comm, &q) : weft_bcast(rb, count, type, root, comm);
                expect.push_back({0, count, bkey(root, -1), "root", root});
                T->st.v[S_COLL_BYTES] += bytes_of(count);
                break;
            }
            case C_GATHER:
            case C_ALLGATHER: {
                const bool all = op == C_ALLGATHER;
                sbuf.resize(bytes_of(count));
                fill(bkey(me, -1), sbuf.data(), sbuf.size());
                sb = sbuf.data();
                if (all || me == root) {
                    alloc_recv(N * count);
                    for (size_t p = 0; p < N; ++p)
                        expect.push_back({p * count, count, bkey(int(p), -1), "rank", int(p)});
                }
                if (in_place) {
                    if (!sbuf.empty()) std::memcpy(rbuf.data() + bytes_of(me_ * count), sbuf.data(), sbuf.size());
                    sb = WEFT_IN_PLACE;
                }
                if (all)
                    rc = nb ? weft_iallgather(sb, count, type, rb, count, type, comm, &q)
                            : weft_allgather(sb, count, type, rb, count, type, comm);
                else
                    rc = nb ? weft_igather(sb, count, type, rb, count, type, root, comm, &q)
                            : weft_gather(sb, count, type, rb, count, type, root, comm);
                T->st.v[S_COLL_BYTES] += bytes_of(count);
                break;
            }
            case C_GATHERV:
            case C_ALLGATHERV: {
                const bool all = op == C_ALLGATHERV;
                size_t total = layout(counts, displs);
                sbuf.resize(bytes_of(counts[me_]));
                fill(bkey(me, -1), sbuf.data(), sbuf.size());
                sb = sbuf.data();
                if (all || me == root) {
                    alloc_recv(total);
                    for (size_t p = 0; p < N; ++p)
                        expect.push_back({displs[p], counts[p], bkey(int(p), -1), "rank", int(p)});
                }
                if (in_place) {
                    if (!sbuf.empty()) std::memcpy(rbuf.data() + bytes_of(displs[me_]), sbuf.data(), sbuf.size());
                    sb = WEFT_IN_PLACE;
                }
                if (all)
                    rc = nb ? weft_iallgatherv(sb, counts[me_], type, rb, counts.data(), displs.data(), type, comm, &q)
                            : weft_allgatherv(sb, counts[me_], type, rb, counts.data(), displs.data(), type, comm);
                else
                    rc = nb ? weft_igatherv(sb, counts[me_], type, rb, counts.data(), displs.data(), type, root, comm,
                                            &q)
                            : weft_gatherv(sb, counts[me_], type, rb, counts.data(), displs.data(), type, root, comm);
                what += ", counts";
                for (size_t c : counts) what += " " + std::to_string(c);
                T->st.v[S_COLL_BYTES] += bytes_of(counts[me_]);
                break;
            }
            case C_SCATTER: {
                if (me == root) {
                    sbuf.resize(bytes_of(N * count));
                    for (size_t p = 0; p < N; ++p)
                        fill(bkey(root, int(p)), sbuf.data() + bytes_of(p * count), bytes_of(count));
                    sb = sbuf.data();
                }
                alloc_recv(count);
                expect.push_back({0, count, bkey(root, me), "root", root});
                rc = nb ? weft_iscatter(sb, count, type, rb, count, type, root, comm, &q)
                        : weft_scatter(sb, count, type, rb, count, type, root, comm);
                T->st.v[S_COLL_BYTES] += bytes_of(count);
                break;
            }
            case C_SCATTERV: {
                size_t total = layout(counts, displs);
                if (me == root) {
                    sbuf.resize(bytes_of(total));
                    for (size_t p = 0; p < N; ++p)
                        fill(bkey(root, int(p)), sbuf.data() + bytes_of(displs[p]), bytes_of(counts[p]));
                    sb = sbuf.data();
                }
                alloc_recv(counts[me_]);
                expect.push_back({0, counts[me_], bkey(root, me), "root", root});
                rc = nb ? weft_iscatterv(sb, counts.data(), displs.data(), type, rb, counts[me_], type, root, comm, &q)
                        : weft_scatterv(sb, counts.data(), displs.data(), type, rb, counts[me_], type, root, comm);
                what += ", counts";
                for (size_t c : counts) what += " " + std::to_string(c);
                T->st.v[S_COLL_BYTES] += bytes_of(counts[me_]);
                break;
            }
            case C_ALLTOALL: {
                const size_t c = count / N;
                sbuf.resize(bytes_of(N * c));
                for (size_t p = 0; p < N; ++p) fill(bkey(me, int(p)), sbuf.data() + bytes_of(p * c), bytes_of(c));
                sb = sbuf.data();
                alloc_recv(N * c);
                for (size_t p = 0; p < N; ++p) expect.push_back({p * c, c, bkey(int(p), me), "rank", int(p)});
                rc = nb ? weft_ialltoall(sb, c, type, rb, c, type, comm, &q)
                        : weft_alltoall(sb, c, type, rb, c, type, comm);
                what += ", block " + std::to_string(c);
                T->st.v[S_COLL_BYTES] += bytes_of(N * c);
                break;
            }
            case C_ALLTOALLV: {
                std::vector<size_t> sc(N), sd(N), rc_(N), rd(N);
                for (size_t p = 0; p < N; ++p) sc[p] = pc[me_][p], rc_[p] = pc[p][me_];
                size_t stotal = layout(sc, sd), rtotal = layout(rc_, rd);
                sbuf.resize(bytes_of(stotal));
                for (size_t p = 0; p < N; ++p) fill(bkey(me, int(p)), sbuf.data() + bytes_of(sd[p]), bytes_of(sc[p]));
                sb = sbuf.data();
                alloc_recv(rtotal);
                for (size_t p = 0; p < N; ++p) expect.push_back({rd[p], rc_[p], bkey(int(p), me), "rank", int(p)});
                rc = nb ? weft_ialltoallv(sb, sc.data(), sd.data(), type, rb, rc_.data(), rd.data(), type, comm, &q)
                        : weft_alltoallv(sb, sc.data(), sd.data(), type, rb, rc_.data(), rd.data(), type, comm);
                for (size_t p = 0; p < N; ++p) T->st.v[S_COLL_BYTES] += bytes_of(sc[p]);
                break;
            }
            default:
                fail("internal: collective %d", op);
        }
        if (rc) fail("%s: the call returned %s", what.c_str(), weft_err(rc).c_str());
        finish(nb, q, ex);
        if (rb == nullptr) return;
        // Every expected piece, then every byte nobody should have written (gaps and guard).
        std::vector<uint8_t> covered(rsize, 0);
        for (auto &p : expect) {
            check_bytes(what + ": block from " + p.from + " " + std::to_string(p.peer) + " at element " +
                            std::to_string(p.at) + " (" + std::to_string(p.elems) + " elements)",
                        p.key, rbuf.data() + bytes_of(p.at), bytes_of(p.elems));
            std::fill(covered.begin() + long(p.at), covered.begin() + long(p.at + p.elems), 1);
        }
        for (size_t i = 0; i <= rsize; ++i) {
            size_t j = i;
            while (j < rsize && !covered[j]) ++j;
            if (j == rsize) {  // the tail: uncovered elements and the guard
                check_bytes(what + ": bytes past the last block changed", bkey(me, -2), rbuf.data() + bytes_of(i),
                            rbuf.size() - bytes_of(i), bytes_of(i));
                break;
            }
            if (j > i)
                check_bytes(what + ": gap at elements [" + std::to_string(i) + ", " + std::to_string(j) + ") changed",
                            bkey(me, -2), rbuf.data() + bytes_of(i), bytes_of(j - i), bytes_of(i));
            i = j;
            while (i < rsize && covered[i]) ++i;
            --i;
        }
    }
};

void round_coll(thread_ctx &T, uint32_t r, round_kind k) {
    coll_round c;
    c.T = &T;
    c.r = r;
    switch (k) {
        case R_COLL:
            c.comm = T.sc, c.dom = D_COLL_SC, c.poll = false, c.cname = "sc_" + std::to_string(T.t);
            break;
        case R_CCOLL:
            c.comm = T.cc, c.dom = D_COLL_CC, c.poll = !opt.progress_threads, c.cname = "cc_" + std::to_string(T.t);
            break;
        default:
            c.comm = g_mc, c.dom = D_COLL_MC, c.poll = false, c.cname = "mc (stream 0)";
            break;
    }
    c.run(T);
}

// ================================================================== PGAS rounds

void round_pgas(thread_ctx &T, uint32_t r) {
    kernel_state &ks = T.ks;
    am_round ar;
    ar.round = r;
    ar.plan = am_plan(ks.id, r);
    ar.replies.assign(ar.plan.size(), 0);
    ar.get_calls.assign(ar.plan.size(), 0);
    const uint64_t replies0 = ks.replies.load(), gets0 = ks.get_calls.load();
    ks.cur.store(&ar, std::memory_order_release);
    size_t sync = 0, want_replies = 0, want_gets = 0;
    for (size_t i = 0; i < ar.plan.size(); ++i) {
        const am_msg &m = ar.plan[i];
        std::string what = describe(m, ks.id, r, i);
        doing("round %u pgas: sending %s", r, what.c_str());
        std::vector<uint8_t> buf;
        int rc = 0;
        switch (m.kind) {
            case A_SHORT:
            case A_BUILTIN:
                rc = weft_am_short(ks.k, m.dst, m.handler, m.args, m.nargs, m.flags);
                break;
            case A_MEDIUM:
            case A_LONG:
                buf.resize(m.len);
                fill(hkey(opt.seed, D_AMPAY, ks.id, r, i), buf.data(), m.len);
                rc = m.kind == A_MEDIUM
                         ? weft_am_medium(ks.k, m.dst, m.handler, m.args, m.nargs, buf.data(), m.len, m.flags)
                         : weft_am_long(ks.k, m.dst, m.handler, m.args, m.nargs, buf.data(), m.len, m.dst_off, m.flags);
                // The call promises the buffer may be reused once it returns.
                if (!buf.empty()) std::memset(buf.data(), 0xA5, buf.size());
                break;
            case A_MEDIUM_SEG:
                rc = weft_am_medium_seg(ks.k, m.dst, m.handler, m.args, m.nargs, m.src_off, m.len, m.flags);
                break;
            case A_LONG_SEG:
                rc = weft_am_long_seg(ks.k, m.dst, m.handler, m.args, m.nargs, m.src_off, m.len, m.dst_off, m.flags);
                break;
            case A_STRIDED:
                rc = weft_am_long_strided(ks.k, m.dst, m.handler, m.args, m.nargs, &m.s, &m.d, m.flags);
                break;
            case A_GET:
                fill(hkey(opt.seed, D_CANARY, ks.id, r, i), ks.base + m.dst_off, m.len);
                rc = weft_am_get_long(ks.k, m.dst, m.handler, m.args, m.nargs, m.src_off, m.len, m.dst_off, 0);
                break;
        }
        if (rc) fail("%s: %s", what.c_str(), weft_err(rc).c_str());
        if (!(m.flags & WEFT_AM_ASYNC)) ++sync;
        if (m.want_reply) ++want_replies;
        if (m.kind == A_GET && m.handler == H_GETCHK) ++want_gets;
        T.st.v[S_AMS_SENT]++;
        T.st.v[S_AM_BYTES] += m.len;
        if (m.kind == A_GET) T.st.v[S_GETS]++;
    }
    doing("round %u pgas: weft_am_wait_replies(%zu)", r, sync);
    WEFT_OK(weft_am_wait_replies(ks.k, sync));
    doing("round %u pgas: waiting for %zu handler replies and %zu get handler calls", r, want_replies, want_gets);
    spin_until(T, [&] {
        return ks.replies.load(std::memory_order_acquire) - replies0 >= want_replies &&
               ks.get_calls.load(std::memory_order_acquire) - gets0 >= want_gets;
    });
    for (size_t i = 0; i < ar.plan.size(); ++i) {
        const am_msg &m = ar.plan[i];
        if (m.want_reply && ar.replies[i] != 1)
            fail("%s: answered %d times", describe(m, ks.id, r, i).c_str(), ar.replies[i]);
        if (m.kind == A_GET) {
            if (m.handler == H_GETCHK && ar.get_calls[i] != 1)
                fail("%s: its handler ran %d times", describe(m, ks.id, r, i).c_str(), ar.get_calls[i]);
            check_bytes(describe(m, ks.id, r, i) + ": data after weft_am_wait_replies", srcarea_key(m.dst),
                        ks.base + m.dst_off, m.len, m.src_off);
        }
    }
    ks.cur.store(nullptr, std::memory_order_release);
}

// Counts what the kernels in pgas rounds send to this thread's kernel in round r.
void account_incoming(thread_ctx &T, uint32_t r) {
    for (int t = 0; t < g_threads; ++t) {
        if (kind_of(t, r) != R_PGAS) continue;
        for (int p = 0; p < g_size; ++p)
            for (const am_msg &m : am_plan(p * g_threads + t, r)) {
                if (m.dst != T.ks.id) continue;
                if (m.kind == A_BUILTIN)
                    T.exp_counter += m.counter;
                else if (m.kind != A_GET)
                    T.exp_handled++;
            }
    }
}

// ================================================================== the agreement and the thread

// At round r (a multiple of K): settles the active messages of earlier rounds, then decides
// with every thread of every rank whether to stop.
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
    // Nothing is in flight any more (the agreement settled every AM); the segment's source area
    // must be as it was written at the start, and no packet may have been dropped.
    doing("final: checks");
    check_bytes("kernel " + std::to_string(T.ks.id) + ": source area of the segment (nothing writes there)",
                srcarea_key(T.ks.id), T.ks.base, SRC_SZ);
    uint64_t bad = 0;
    WEFT_OK(weft_pgas_bad_packets(T.ks.k, &bad));
    if (bad) fail("kernel %d dropped %" PRIu64 " bad packets", T.ks.id, bad);
    doing("final: threads of this process");
    g_pbar.arrive(T, false);
    doing("final: barrier on sc_%d", T.t);
    WEFT_OK(weft_barrier(T.sc));
    T.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
    doing("finished");
    tl_activity->idle = true;
}

// ================================================================== main

uint64_t parse_u64(const char *name, const char *v) {
    char *end = nullptr;
    errno = 0;
    unsigned long long x = std::strtoull(v, &end, 0);
    if (errno || !end || *end || !*v) usage((std::string("bad value for ") + name + ": " + v).c_str());
    return x;
}

void parse_args(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i], val;
        bool has_val = false;
        size_t eq = a.find('=');
        if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
            val = a.substr(eq + 1);
            a = a.substr(0, eq);
            has_val = true;
        }
        auto value = [&]() -> std::string {
            if (has_val) return val;
            if (i + 1 >= argc) usage((a + " needs a value").c_str());
            return argv[++i];
        };
        if (a == "--seconds") {
            std::string v = value();
            char *end = nullptr;
            opt.seconds = std::strtod(v.c_str(), &end);
            if (!end || *end || opt.seconds < 0) usage(("bad value for --seconds: " + v).c_str());
        } else if (a == "--threads") {
            opt.threads = int(parse_u64("--threads", value().c_str()));
            if (opt.threads < 1 || opt.threads > 8) usage("--threads must be 1..8");
        } else if (a == "--seed") {
            opt.seed = parse_u64("--seed", value().c_str());
            opt.seed_given = true;
        } else if (a == "--max-size") {
            opt.max_size = size_t(parse_u64("--max-size", value().c_str()));
        } else if (a == "--rounds") {
            opt.max_rounds = parse_u64("--rounds", value().c_str());
        } else if (a == "--check-every") {
            opt.check_every = uint32_t(parse_u64("--check-every", value().c_str()));
            if (opt.check_every < 1 || opt.check_every > 16)
                usage("--check-every must be 1..16 (tags keep the round modulo 32)");
        } else if (a == "--watchdog") {
            std::string v = value();
            opt.watchdog = std::atof(v.c_str());
            if (opt.watchdog <= 0) usage(("bad value for --watchdog: " + v).c_str());
        } else if (a == "--progress-threads") {
            opt.progress_threads = true;
        } else if (a == "-h" || a == "--help") {
            usage("a bounded stress test");
        } else {
            usage(("unknown argument " + a).c_str());
        }
    }
}

}  // namespace

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
    const double scale = [] {
        const char *v = std::getenv("WEFT_TEST_TIME_SCALE");
        double f = v ? std::atof(v) : 1.0;
        return f >= 1.0 ? f : 1.0;
    }();

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
    wd.start(opt.watchdog * scale);

    std::string fabric = "?";
    {
        weft_info info = WEFT_INFO_NULL;
        if (weft_get_runtime_info(&info) == WEFT_SUCCESS) {
            char v[256] = "";
            int flag = 0;
            if (weft_info_get(info, "fabric", sizeof v - 1, v, &flag) == WEFT_SUCCESS && flag) fabric = v;
            weft_info_free(&info);
        }
    }
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
    for (auto &T : th) {
        kernel_state &ks = T->ks;
        WEFT_OK(weft_pgas_get_kernel(pgas, T->t, &ks.k));
        WEFT_OK(weft_pgas_kernel_id(ks.k, &ks.id));
        if (ks.id != g_rank * g_threads + T->t)
            fail("local kernel %d has id %d, expected %d", T->t, ks.id, g_rank * g_threads + T->t);
        void *base = nullptr;
        WEFT_OK(weft_pgas_segment(ks.k, &base, &ks.size));
        if (!base || ks.size != g_seg_size)
            fail("weft_pgas_segment: base %p, size %zu (asked %zu)", base, ks.size, g_seg_size);
        ks.base = static_cast<uint8_t *>(base);
        fill(srcarea_key(ks.id), ks.base, SRC_SZ);
        for (unsigned h : user_handlers) WEFT_OK(weft_am_register(ks.k, h, request_handler, &ks));
        WEFT_OK(weft_am_register(ks.k, H_REPLY, reply_handler, &ks));
        WEFT_OK(weft_am_register(ks.k, H_GETCHK, get_handler, &ks));
    }
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
