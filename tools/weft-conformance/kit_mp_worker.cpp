/* The fabric's multi-process part: `weftrun -n NP weft-conformance --mp-worker` with the plugin
 * under test selected (WEFT_FABRIC, WEFT_PLUGIN_PATH).  The workers use only the public C API
 * (weft/weft.h); rank 0 prints one machine-readable line per check on stdout:
 *
 *   MP BEGIN <name>            before the check starts
 *   MP PASS <name>
 *   MP SKIP <name>: <reason>
 *   MP FAIL <name>: <reason>
 *
 * and the parent (mp_run, kit_mp_launch.cpp) turns them into the kit's PASS/SKIP/FAIL lines.  A check that does not
 * end is bounded twice: each wait of a worker has a deadline (the rank then reports and leaves,
 * which ends the job), and weftrun --timeout ends the whole job (the parent names the check that
 * was running). */
#include "fabric_harness.hpp" /* pattern_fill, pattern_check */
#include "kit.hpp"

#include <weft/weft.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace kit {
namespace {

using steady = std::chrono::steady_clock;

const char *const k_checks[] = {
    "Multiprocess.FabricInUse",     "Multiprocess.PingPongSizes", "Multiprocess.NonOvertaking",
    "Multiprocess.AnySourceAnyTag", "Multiprocess.Truncation",    "Multiprocess.ProbeSizeSource",
    "Multiprocess.Barrier",         "Multiprocess.Allreduce",
};
constexpr const char *k_init = "Multiprocess.Init";
constexpr const char *k_finalize = "Multiprocess.Finalize";

}  // namespace

std::vector<std::string> mp_check_names() { return std::vector<std::string>(std::begin(k_checks), std::end(k_checks)); }

// =============================================================== worker (--mp-worker) =====

namespace {

/* One line on stdout in a single write, so that lines of several ranks never interleave. */
void out_line(std::string s) {
    for (char &c : s)
        if (c == '\n' || c == '\r') c = ' ';
    if (s.size() > 1000) s.resize(1000);
    s += '\n';
    ssize_t ignored = write(STDOUT_FILENO, s.data(), s.size());
    (void)ignored;
}

std::string errtext(int rc) {
    char text[WEFT_MAX_ERROR_STRING] = "";
    size_t len = sizeof(text);
    std::string out = "error " + std::to_string(rc);
    if (weft_error_string(rc, text, &len) == WEFT_SUCCESS && text[0]) out += " (" + std::string(text) + ")";
    char detail[WEFT_MAX_ERROR_STRING] = "";
    len = sizeof(detail);
    if (weft_error_detail(detail, &len) == WEFT_SUCCESS && detail[0]) out += ": " + std::string(detail);
    return out;
}

int64_t monotonic_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/* Tags of the checks (WEFT_COMM_WORLD); results travel on a communicator of their own. */
enum : int {
    tag_ping = 10,
    tag_pong = 11,
    tag_order = 20,
    tag_go = 29,
    tag_any = 1000,
    tag_any_source = 3000,
    tag_some_tag = 4000,
    tag_trunc = 40,
    tag_trunc_after = 41,
    tag_probe = 50,
    tag_probe_none = 51,
    tag_barrier = 60,
};

struct Worker {
    int rank = 0, size = 1;
    weft_comm results = WEFT_COMM_NULL;
    int check_timeout_s = 30;
    steady::time_point deadline;
    bool timed_out = false;
    std::string why; /* this rank's first failure in the current check */

    void fail(const std::string &w) {
        if (why.empty()) why = w;
    }
    bool ok() const { return why.empty(); }

    /* Completes every request before the deadline.  Returns the completion's code, or -1 on
     * a timeout (recorded as this rank's failure). */
    int complete(std::vector<weft_request> &reqs, std::vector<weft_status> *st, const std::string &what) {
        return poll_until_done(what, [&](int *flag) {
            return weft_testall(reqs.size(), reqs.data(), flag, st ? st->data() : WEFT_STATUSES_IGNORE);
        });
    }
    /* One request (weft_test: its own error code, not WEFT_ERR_IN_STATUS). */
    int complete1(weft_request &req, weft_status *st, const std::string &what) {
        return poll_until_done(what, [&](int *flag) { return weft_test(&req, flag, st ? st : WEFT_STATUS_IGNORE); });
    }
    /* Calls test(&flag) until it fails or sets flag; -1 (failure recorded) past the deadline. */
    template <class Test>
    int poll_until_done(const std::string &what, Test &&test) {
        unsigned spins = 0;
        for (;;) {
            int flag = 0;
            int rc = test(&flag);
            if (rc != WEFT_SUCCESS || flag) return rc;
            if (steady::now() > deadline) {
                timed_out = true;
                fail("timed out after " + std::to_string(check_timeout_s) + " s waiting for " + what);
                return -1;
            }
            if (++spins % 16 == 0) sched_yield();
        }
    }
    /* Posts and completes; false (failure recorded) when either step fails. */
    bool recv(void *buf, size_t n, int src, int tag, weft_comm comm, weft_status *st, const std::string &what) {
        weft_request req;
        int rc = weft_irecv(buf, n, WEFT_BYTE, src, tag, comm, &req);
        return posted("weft_irecv", rc, req, st, what);
    }
    bool send(const void *buf, size_t n, int dst, int tag, weft_comm comm, const std::string &what) {
        weft_request req;
        int rc = weft_isend(buf, n, WEFT_BYTE, dst, tag, comm, &req);
        return posted("weft_isend", rc, req, nullptr, what);
    }
    /* The rest of recv and send: the post's code rc, then completion. */
    bool posted(const char *call, int rc, weft_request &req, weft_status *st, const std::string &what) {
        if (rc != WEFT_SUCCESS) {
            fail(std::string(call) + " for " + what + ": " + errtext(rc));
            return false;
        }
        rc = complete1(req, st, what);
        if (rc > 0) fail(what + ": " + errtext(rc));
        return rc == WEFT_SUCCESS;
    }
};

size_t status_bytes(const weft_status &st) {
    size_t n = 0;
    if (weft_get_count(&st, WEFT_BYTE, &n) != WEFT_SUCCESS) return SIZE_MAX;
    return n;
}

// ---- the checks ----

void check_fabric_in_use(Worker &w) {
    const char *want = getenv("WEFT_FABRIC");
    weft_info info = WEFT_INFO_NULL;
    int rc = weft_get_runtime_info(&info);
    if (rc != WEFT_SUCCESS) {
        w.fail("weft_get_runtime_info: " + errtext(rc));
        return;
    }
    std::vector<char> value(WEFT_MAX_INFO_VAL + 1, '\0');
    int flag = 0;
    rc = weft_info_get(info, "fabric", WEFT_MAX_INFO_VAL, value.data(), &flag);
    std::string fabric = (rc == WEFT_SUCCESS && flag) ? value.data() : "";
    std::fill(value.begin(), value.end(), '\0');
    flag = 0;
    rc = weft_info_get(info, "fabric_version", WEFT_MAX_INFO_VAL, value.data(), &flag);
    std::string version = (rc == WEFT_SUCCESS && flag) ? value.data() : "";
    weft_info_free(&info);
    if (want && fabric != want)
        w.fail(std::string("the fabric in use is \"") + fabric + "\", not the requested \"" + want + "\"");
    const char *want_version = getenv(mp_env_version);
    if (want_version && w.ok() && version != want_version)
        w.fail("the fabric in use reports version \"" + version + "\", the plugin under test \"" + want_version +
               "\": another libweft-" + fabric + ".so was loaded");
}

void check_ping_pong(Worker &w) {
    const size_t sizes[] = {0, 1, 8, 1024, 64 * 1024, 1 << 20, 4 << 20};
    std::vector<uint8_t> out((4 << 20) + 1), in((4 << 20) + 1);
    for (int peer = 1; peer < w.size; ++peer) {
        for (size_t k = 0; k < std::size(sizes); ++k) {
            const size_t n = sizes[k];
            const uint32_t seed = static_cast<uint32_t>(peer * 16 + k);
            const std::string what = std::to_string(n) + "-byte ";
            if (w.rank == 0) {
                conformance::pattern_fill(out.data(), n, seed);
                std::fill_n(in.begin(), n, 0);
                std::vector<weft_request> reqs(2);
                std::vector<weft_status> st(2);
                int rc = weft_irecv(in.data(), n, WEFT_BYTE, peer, tag_pong, WEFT_COMM_WORLD, &reqs[0]);
                if (rc == WEFT_SUCCESS)
                    rc = weft_isend(out.data(), n, WEFT_BYTE, peer, tag_ping, WEFT_COMM_WORLD, &reqs[1]);
                if (rc != WEFT_SUCCESS) {
                    w.fail("posting the " + what + "ping-pong with rank " + std::to_string(peer) + ": " + errtext(rc));
                    return;
                }
                rc = w.complete(reqs, &st, what + "ping-pong with rank " + std::to_string(peer));
                if (rc < 0) return;
                if (rc != WEFT_SUCCESS) {
                    w.fail(what + "ping-pong with rank " + std::to_string(peer) + ": " + errtext(rc) +
                           " (receive status " + std::to_string(st[0].error) + ", send status " +
                           std::to_string(st[1].error) + ")");
                    continue;
                }
                size_t got = status_bytes(st[0]);
                size_t bad = conformance::pattern_check(in.data(), n, seed + 1000);
                if (got != n)
                    w.fail(what + "reply from rank " + std::to_string(peer) + ": status says " + std::to_string(got) +
                           " bytes");
                else if (st[0].source != peer || st[0].tag != tag_pong)
                    w.fail(what + "reply from rank " + std::to_string(peer) + ": status source " +
                           std::to_string(st[0].source) + " tag " + std::to_string(st[0].tag));
                else if (bad != n)
                    w.fail(what + "reply from rank " + std::to_string(peer) + " differs at byte " +
                           std::to_string(bad));
            } else if (w.rank == peer) {
                weft_status st{};
                if (!w.recv(in.data(), n, 0, tag_ping, WEFT_COMM_WORLD, &st, what + "ping from rank 0")) {
                    if (w.timed_out) return;
                } else {
                    size_t got = status_bytes(st);
                    size_t bad = conformance::pattern_check(in.data(), n, seed);
                    if (got != n)
                        w.fail(what + "ping: status says " + std::to_string(got) + " bytes");
                    else if (bad != n)
                        w.fail(what + "ping from rank 0 differs at byte " + std::to_string(bad));
                }
                /* The pong goes back whatever came, so that rank 0 does not wait for nothing. */
                conformance::pattern_fill(out.data(), n, seed + 1000);
                if (!w.send(out.data(), n, 0, tag_pong, WEFT_COMM_WORLD, what + "pong to rank 0") && w.timed_out)
                    return;
            }
        }
    }
}

constexpr int k_order_msgs = 1000;
/* Mostly small messages, every 100th one large: eager and rendezvous protocols interleave. */
size_t order_size(int i) { return i % 100 == 99 ? 256 * 1024 : 4 + (i * 7) % 60; }

void check_non_overtaking(Worker &w) {
    if (w.rank != 0) {
        std::vector<std::vector<uint8_t>> bufs(k_order_msgs);
        std::vector<weft_request> reqs(k_order_msgs);
        for (int i = 0; i < k_order_msgs; ++i) {
            auto &b = bufs[i];
            b.resize(order_size(i));
            uint32_t seq = static_cast<uint32_t>(i);
            memcpy(b.data(), &seq, 4);
            conformance::pattern_fill(b.data() + 4, b.size() - 4, seq + 7u * w.rank);
            int rc = weft_isend(b.data(), b.size(), WEFT_BYTE, 0, tag_order, WEFT_COMM_WORLD, &reqs[i]);
            if (rc != WEFT_SUCCESS) {
                w.fail("weft_isend of message " + std::to_string(i) + ": " + errtext(rc));
                reqs.resize(i);
                break;
            }
        }
        int rc = w.complete(reqs, nullptr, "the sends of 1000 messages to rank 0");
        if (rc > 0) w.fail("completing 1000 sends: " + errtext(rc));
        return;
    }
    std::vector<uint8_t> in(256 * 1024);
    for (int src = 1; src < w.size; ++src) {
        bool reported = false;
        for (int i = 0; i < k_order_msgs; ++i) {
            weft_status st{};
            std::string what = "message " + std::to_string(i) + " of 1000 from rank " + std::to_string(src);
            if (!w.recv(in.data(), in.size(), src, tag_order, WEFT_COMM_WORLD, &st, what)) {
                if (w.timed_out) return;
                continue;
            }
            if (reported) continue;
            uint32_t seq = UINT32_MAX;
            size_t got = status_bytes(st);
            if (got >= 4) memcpy(&seq, in.data(), 4);
            if (seq != static_cast<uint32_t>(i)) {
                w.fail("receive " + std::to_string(i) + " from rank " + std::to_string(src) + " got message number " +
                       (seq == UINT32_MAX ? std::string("?") : std::to_string(seq)) +
                       ": messages of one sender and tag overtook each other");
                reported = true;
            } else if (got != order_size(i) ||
                       conformance::pattern_check(in.data() + 4, got - 4, seq + 7u * src) != got - 4) {
                w.fail(what + ": wrong length or payload (" + std::to_string(got) + " bytes, sent " +
                       std::to_string(order_size(i)) + ")");
                reported = true;
            }
        }
    }
}

void check_any_source_any_tag(Worker &w) {
    struct Msg {
        int32_t rank, tag;
    };
    if (w.rank != 0) {
        /* 1: ANY_SOURCE + ANY_TAG; then, after rank 0's go: 2: this source + ANY_TAG, 3:
         * ANY_SOURCE + one tag. */
        Msg m{w.rank, tag_any + w.rank};
        if (!w.send(&m, sizeof(m), 0, m.tag, WEFT_COMM_WORLD, "the ANY_SOURCE/ANY_TAG message")) return;
        char go = 0;
        if (!w.recv(&go, 1, 0, tag_go, WEFT_COMM_WORLD, nullptr, "rank 0's go")) return;
        Msg m2{w.rank, tag_some_tag + w.rank}, m3{w.rank, tag_any_source};
        std::vector<weft_request> reqs(2);
        int rc = weft_isend(&m2, sizeof(m2), WEFT_BYTE, 0, m2.tag, WEFT_COMM_WORLD, &reqs[0]);
        if (rc == WEFT_SUCCESS) rc = weft_isend(&m3, sizeof(m3), WEFT_BYTE, 0, m3.tag, WEFT_COMM_WORLD, &reqs[1]);
        if (rc != WEFT_SUCCESS) {
            w.fail("weft_isend: " + errtext(rc));
            return;
        }
        rc = w.complete(reqs, nullptr, "two sends to rank 0");
        if (rc > 0) w.fail("two sends to rank 0: " + errtext(rc));
        return;
    }
    auto check_status = [&](const weft_status &st, const Msg &m, const char *how) {
        if (status_bytes(st) != sizeof(Msg))
            w.fail(std::string(how) + ": status says " + std::to_string(status_bytes(st)) + " bytes, " +
                   std::to_string(sizeof(Msg)) + " were sent");
        else if (st.source != m.rank)
            w.fail(std::string(how) + ": status.source is " + std::to_string(st.source) +
                   ", the message came from rank " + std::to_string(m.rank));
        else if (st.tag != m.tag)
            w.fail(std::string(how) + ": status.tag is " + std::to_string(st.tag) + ", the message was sent with tag " +
                   std::to_string(m.tag));
    };
    std::vector<int> seen(w.size, 0);
    for (int k = 1; k < w.size; ++k) {
        Msg m{-1, -1};
        weft_status st{};
        if (!w.recv(&m, sizeof(m), WEFT_ANY_SOURCE, WEFT_ANY_TAG, WEFT_COMM_WORLD, &st,
                    "a receive with ANY_SOURCE and ANY_TAG"))
            return;
        check_status(st, m, "ANY_SOURCE/ANY_TAG receive");
        if (m.rank > 0 && m.rank < w.size && seen[m.rank]++)
            w.fail("ANY_SOURCE/ANY_TAG: rank " + std::to_string(m.rank) + "'s message arrived twice");
    }
    char go = 1;
    for (int r = 1; r < w.size; ++r)
        if (!w.send(&go, 1, r, tag_go, WEFT_COMM_WORLD, "the go to rank " + std::to_string(r))) return;
    for (int r = 1; r < w.size; ++r) {
        Msg m{-1, -1};
        weft_status st{};
        if (!w.recv(&m, sizeof(m), r, WEFT_ANY_TAG, WEFT_COMM_WORLD, &st,
                    "a receive from rank " + std::to_string(r) + " with ANY_TAG"))
            return;
        check_status(st, m, "receive from one source with ANY_TAG");
    }
    std::fill(seen.begin(), seen.end(), 0);
    for (int k = 1; k < w.size; ++k) {
        Msg m{-1, -1};
        weft_status st{};
        if (!w.recv(&m, sizeof(m), WEFT_ANY_SOURCE, tag_any_source, WEFT_COMM_WORLD, &st,
                    "a receive with ANY_SOURCE and one tag"))
            return;
        check_status(st, m, "ANY_SOURCE receive with one tag");
        if (m.rank > 0 && m.rank < w.size && seen[m.rank]++)
            w.fail("ANY_SOURCE: rank " + std::to_string(m.rank) + "'s message arrived twice");
    }
}

void check_truncation(Worker &w) {
    constexpr size_t sent = 1024, room = 16;
    if (w.rank == 1) {
        std::vector<uint8_t> out(sent);
        conformance::pattern_fill(out.data(), sent, 77);
        weft_request req;
        int rc = weft_isend(out.data(), sent, WEFT_BYTE, 0, tag_trunc, WEFT_COMM_WORLD, &req);
        if (rc != WEFT_SUCCESS) {
            w.fail("weft_isend: " + errtext(rc));
            return;
        }
        /* The sender's own outcome is not judged: only that its send completes. */
        if (w.complete1(req, nullptr, "the send of the message rank 0 truncates") < 0) return;
        w.send(out.data(), room, 0, tag_trunc_after, WEFT_COMM_WORLD, "the message after it");
        return;
    }
    if (w.rank != 0) return;
    std::vector<uint8_t> in(room + 64, 0xee);
    weft_request req;
    int rc = weft_irecv(in.data(), room, WEFT_BYTE, 1, tag_trunc, WEFT_COMM_WORLD, &req);
    if (rc != WEFT_SUCCESS) {
        w.fail("weft_irecv: " + errtext(rc));
        return;
    }
    weft_status st{};
    st.error = -1;
    rc = w.complete1(req, &st, "a 1024-byte message into a 16-byte buffer");
    if (rc < 0) return;
    if (rc != WEFT_ERR_TRUNCATE)
        w.fail("a 1024-byte message into a 16-byte buffer completed with " +
               (rc == WEFT_SUCCESS ? std::string("success") : errtext(rc)) + ", not WEFT_ERR_TRUNCATE (" +
               std::to_string(WEFT_ERR_TRUNCATE) + ")");
    else if (st.error != WEFT_ERR_TRUNCATE)
        w.fail("truncated receive: status.error is " + std::to_string(st.error) + ", not WEFT_ERR_TRUNCATE");
    for (size_t i = room; i < in.size() && w.ok(); ++i)
        if (in[i] != 0xee)
            w.fail("the truncated receive wrote past its 16-byte buffer (byte " + std::to_string(i) + ")");
    /* The fabric goes on working after a truncation. */
    std::fill(in.begin(), in.end(), 0);
    if (!w.recv(in.data(), room, 1, tag_trunc_after, WEFT_COMM_WORLD, &st, "the message sent after the truncated one"))
        return;
    if (conformance::pattern_check(in.data(), room, 77) != room)
        w.fail("the message sent after the truncated one arrived damaged");
}

size_t probe_size(int rank) { return 1000 + 7 * static_cast<size_t>(rank); }

void check_probe(Worker &w) {
    if (w.rank != 0) {
        std::vector<uint8_t> out(probe_size(w.rank));
        conformance::pattern_fill(out.data(), out.size(), 300u + w.rank);
        w.send(out.data(), out.size(), 0, tag_probe, WEFT_COMM_WORLD, "the probed message");
        return;
    }
    int flag = 1;
    int rc = weft_iprobe(WEFT_ANY_SOURCE, tag_probe_none, WEFT_COMM_WORLD, &flag, WEFT_STATUS_IGNORE);
    if (rc != WEFT_SUCCESS) {
        w.fail("weft_iprobe: " + errtext(rc));
        return;
    }
    if (flag) w.fail("weft_iprobe found a message for a tag nobody sent");
    std::vector<int> seen(w.size, 0);
    for (int k = 1; k < w.size; ++k) {
        weft_status st{};
        flag = 0;
        unsigned spins = 0;
        while (!flag) {
            rc = weft_iprobe(WEFT_ANY_SOURCE, tag_probe, WEFT_COMM_WORLD, &flag, &st);
            if (rc != WEFT_SUCCESS) {
                w.fail("weft_iprobe: " + errtext(rc));
                return;
            }
            if (!flag && steady::now() > w.deadline) {
                w.timed_out = true;
                w.fail("timed out after " + std::to_string(w.check_timeout_s) +
                       " s: weft_iprobe never found the message");
                return;
            }
            if (++spins % 16 == 0) sched_yield();
        }
        int src = st.source;
        if (src < 1 || src >= w.size || seen[src]++) {
            w.fail("weft_iprobe: status.source " + std::to_string(src) + " is no rank that sent");
            return;
        }
        if (st.tag != tag_probe)
            w.fail("weft_iprobe: status.tag " + std::to_string(st.tag) + ", the message has tag " +
                   std::to_string(tag_probe));
        if (status_bytes(st) != probe_size(src))
            w.fail("weft_iprobe: the message from rank " + std::to_string(src) + " has " +
                   std::to_string(probe_size(src)) + " bytes, the status says " + std::to_string(status_bytes(st)));
        /* The message is there: a blocking probe returns at once and agrees. */
        weft_status st2{};
        rc = weft_probe(src, tag_probe, WEFT_COMM_WORLD, &st2);
        if (rc != WEFT_SUCCESS)
            w.fail("weft_probe: " + errtext(rc));
        else if (st2.source != src || status_bytes(st2) != probe_size(src))
            w.fail("weft_probe after weft_iprobe: source " + std::to_string(st2.source) + ", " +
                   std::to_string(status_bytes(st2)) + " bytes (iprobe said rank " + std::to_string(src) + ", " +
                   std::to_string(probe_size(src)) + " bytes)");
        /* Probing did not consume it: the receive sized by the probe gets it whole. */
        std::vector<uint8_t> in(status_bytes(st) == SIZE_MAX ? 0 : status_bytes(st));
        weft_status st3{};
        if (!w.recv(in.data(), in.size(), src, tag_probe, WEFT_COMM_WORLD, &st3,
                    "the probed message from rank " + std::to_string(src)))
            return;
        if (conformance::pattern_check(in.data(), in.size(), 300u + src) != in.size())
            w.fail("the probed message from rank " + std::to_string(src) + " arrived damaged");
    }
}

void check_barrier(Worker &w) {
    for (int i = 0; i < 10; ++i) {
        int rc = weft_barrier(WEFT_COMM_WORLD);
        if (rc != WEFT_SUCCESS) {
            w.fail("weft_barrier: " + errtext(rc));
            return;
        }
    }
    /* The last rank enters late; nobody may leave before it entered.  weftrun starts every rank
     * on this node, so CLOCK_MONOTONIC is one clock for all. */
    const int late = w.size - 1;
    int64_t times[2] = {0, 0}; /* entered (the late rank), left */
    if (w.rank == late) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        times[0] = monotonic_ns();
    }
    int rc = weft_barrier(WEFT_COMM_WORLD);
    times[1] = monotonic_ns();
    if (rc != WEFT_SUCCESS) {
        w.fail("weft_barrier: " + errtext(rc));
        return;
    }
    if (w.rank != 0) {
        w.send(times, sizeof(times), 0, tag_barrier, WEFT_COMM_WORLD, "the barrier times");
        return;
    }
    std::vector<int64_t> left(w.size);
    int64_t entered = late == 0 ? times[0] : 0;
    left[0] = times[1];
    for (int r = 1; r < w.size; ++r) {
        int64_t t[2];
        if (!w.recv(t, sizeof(t), r, tag_barrier, WEFT_COMM_WORLD, nullptr,
                    "rank " + std::to_string(r) + "'s barrier times"))
            return;
        left[r] = t[1];
        if (r == late) entered = t[0];
    }
    for (int r = 0; r < w.size; ++r)
        if (left[r] < entered) {
            w.fail("rank " + std::to_string(r) + " left the barrier " + std::to_string((entered - left[r]) / 1000000) +
                   " ms before rank " + std::to_string(late) + " entered it");
            return;
        }
}

void check_allreduce(Worker &w) {
    const int64_t n = w.size;
    int64_t one = w.rank + 1, sum = -1;
    int rc = weft_allreduce(&one, &sum, 1, WEFT_INT64_T, WEFT_SUM, WEFT_COMM_WORLD);
    if (rc != WEFT_SUCCESS) {
        w.fail("weft_allreduce(SUM, int64): " + errtext(rc));
        return;
    }
    if (sum != n * (n + 1) / 2)
        w.fail("allreduce SUM of rank+1 gave " + std::to_string(sum) + ", not " + std::to_string(n * (n + 1) / 2));
    int mine = w.rank, max = -1;
    rc = weft_allreduce(&mine, &max, 1, WEFT_INT, WEFT_MAX, WEFT_COMM_WORLD);
    if (rc != WEFT_SUCCESS) {
        w.fail("weft_allreduce(MAX, int): " + errtext(rc));
        return;
    }
    if (max != w.size - 1) w.fail("allreduce MAX of the ranks gave " + std::to_string(max));
    int64_t inplace = w.rank;
    rc = weft_allreduce(WEFT_IN_PLACE, &inplace, 1, WEFT_INT64_T, WEFT_SUM, WEFT_COMM_WORLD);
    if (rc != WEFT_SUCCESS) {
        w.fail("weft_allreduce(IN_PLACE): " + errtext(rc));
        return;
    }
    if (inplace != n * (n - 1) / 2) w.fail("allreduce IN_PLACE SUM of the ranks gave " + std::to_string(inplace));
    /* 2 MiB of doubles: the large-message algorithms. */
    const size_t count = 256 * 1024;
    std::vector<double> in(count), out(count, -1.0);
    for (size_t i = 0; i < count; ++i) in[i] = w.rank + static_cast<double>(i);
    rc = weft_allreduce(in.data(), out.data(), count, WEFT_DOUBLE, WEFT_SUM, WEFT_COMM_WORLD);
    if (rc != WEFT_SUCCESS) {
        w.fail("weft_allreduce(SUM, 2 MiB of double): " + errtext(rc));
        return;
    }
    for (size_t i = 0; i < count; ++i) {
        double want = static_cast<double>(n * (n - 1) / 2) + static_cast<double>(n) * i;
        if (out[i] != want) {
            w.fail("allreduce SUM of 2 MiB of double: element " + std::to_string(i) + " is " + std::to_string(out[i]) +
                   ", not " + std::to_string(want));
            return;
        }
    }
}

struct CheckDef {
    const char *name;
    void (*run)(Worker &);
    bool needs_two;
};
const CheckDef k_defs[] = {
    {k_checks[0], check_fabric_in_use, false}, {k_checks[1], check_ping_pong, true},
    {k_checks[2], check_non_overtaking, true}, {k_checks[3], check_any_source_any_tag, true},
    {k_checks[4], check_truncation, true},     {k_checks[5], check_probe, true},
    {k_checks[6], check_barrier, false},       {k_checks[7], check_allreduce, false},
};

/* What a rank tells rank 0 after each check. */
struct Report {
    int32_t ok;
    int32_t timed_out;
    char why[480];
};

}  // namespace

int mp_worker_main(int argc, char **argv) {
    std::vector<std::string> only;
    int np = 0;
    Worker w;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--mp-only=", 0) == 0) {
            std::string list = a.substr(10);
            size_t start = 0;
            while (start <= list.size()) {
                size_t end = list.find(',', start);
                if (end == std::string::npos) end = list.size();
                if (end > start) only.push_back(list.substr(start, end - start));
                start = end + 1;
            }
        } else if (a.rfind("--mp-np=", 0) == 0) {
            np = atoi(a.c_str() + 8);
        } else if (a.rfind("--mp-check-timeout=", 0) == 0) {
            w.check_timeout_s = std::max(1, atoi(a.c_str() + 19));
        }
    }
    int rc = weft_init(&argc, &argv);
    if (rc != WEFT_SUCCESS) {
        out_line(std::string("MP FAIL ") + k_init + ": weft_init with WEFT_FABRIC=" +
                 (getenv("WEFT_FABRIC") ? getenv("WEFT_FABRIC") : "") + ": " + errtext(rc));
        return 1;
    }
    weft_comm_rank(WEFT_COMM_WORLD, &w.rank);
    weft_comm_size(WEFT_COMM_WORLD, &w.size);
    if (np > 0 && w.size != np && w.rank == 0)
        out_line(std::string("MP FAIL ") + k_init + ": weft_comm_size is " + std::to_string(w.size) +
                 ", weftrun started " + std::to_string(np) + " processes");
    rc = weft_comm_dup(WEFT_COMM_WORLD, &w.results);
    if (rc != WEFT_SUCCESS) {
        if (w.rank == 0) out_line(std::string("MP FAIL ") + k_init + ": weft_comm_dup: " + errtext(rc));
        return 1;
    }
    for (size_t idx = 0; idx < std::size(k_defs); ++idx) {
        const CheckDef &c = k_defs[idx];
        if (!only.empty() && std::find(only.begin(), only.end(), c.name) == only.end()) continue;
        if (c.needs_two && w.size < 2) {
            if (w.rank == 0) out_line(std::string("MP SKIP ") + c.name + ": needs at least 2 processes (--np)");
            continue;
        }
        if (w.rank == 0) out_line(std::string("MP BEGIN ") + c.name);
        w.why.clear();
        w.timed_out = false;
        w.deadline = steady::now() + std::chrono::seconds(w.check_timeout_s);
        c.run(w);

        /* Every rank's outcome goes to rank 0 (on a communicator of its own). */
        const int tag = static_cast<int>(idx);
        w.deadline = steady::now() + std::chrono::seconds(w.check_timeout_s);
        if (w.rank != 0) {
            Report rep{};
            rep.ok = w.ok();
            rep.timed_out = w.timed_out;
            snprintf(rep.why, sizeof(rep.why), "%s", w.why.c_str());
            bool was_stuck = w.timed_out;
            w.send(&rep, sizeof(rep), 0, tag, w.results, "reporting to rank 0");
            if (was_stuck || w.timed_out) {
                fprintf(stderr, "weft-conformance --mp-worker: rank %d: %s: %s\n", w.rank, c.name, w.why.c_str());
                fflush(stderr);
                _exit(3); /* weftrun ends the job */
            }
            continue;
        }
        std::vector<std::string> failures;
        if (!w.ok()) failures.push_back("rank 0: " + w.why);
        bool stuck = w.timed_out;
        for (int r = 1; r < w.size && !w.timed_out; ++r) {
            Report rep{};
            w.why.clear();
            if (!w.recv(&rep, sizeof(rep), r, tag, w.results, nullptr, "rank " + std::to_string(r) + "'s outcome")) {
                failures.push_back("rank " + std::to_string(r) + " did not report its outcome: " + w.why);
                break;
            }
            rep.why[sizeof(rep.why) - 1] = '\0';
            if (!rep.ok) failures.push_back("rank " + std::to_string(r) + ": " + rep.why);
            stuck = stuck || rep.timed_out;
        }
        stuck = stuck || w.timed_out;
        if (failures.empty()) {
            out_line(std::string("MP PASS ") + c.name);
        } else {
            std::string line = std::string("MP FAIL ") + c.name + ": " + failures[0];
            if (failures.size() > 1) line += " (and " + std::to_string(failures.size() - 1) + " more rank(s) failed)";
            out_line(line);
        }
        if (stuck) _exit(3); /* a rank is stuck in the check: nothing after it can be trusted */
    }
    weft_comm_free(&w.results);
    /* Not a check of its own unless it fails or does not end (the parent knows it by BEGIN). */
    if (w.rank == 0) out_line(std::string("MP BEGIN ") + k_finalize);
    rc = weft_finalize();
    if (rc != WEFT_SUCCESS) {
        out_line(std::string("MP FAIL ") + k_finalize + ": rank " + std::to_string(w.rank) +
                 ": weft_finalize: " + errtext(rc));
        return 1;
    }
    return 0;
}

}  // namespace kit
