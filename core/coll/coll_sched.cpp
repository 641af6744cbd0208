#include "coll/coll_sched.hpp"

#include <atomic>
#include <cstring>
#include <new>

#include "base/error.hpp"
#include "base/match.hpp"
#include "transport/peer_failure.hpp"
#include "transport/runtime.hpp"

namespace weft {

char *coll_sched::alloc(size_t bytes) {
    if (buffers_used < buffers.size() && buffers[buffers_used].data && buffers[buffers_used].size >= bytes)
        return buffers[buffers_used++].data.get();
    char *p = new (std::nothrow) char[bytes == 0 ? 1 : bytes];
    if (p == nullptr) return nullptr;
    if (buffers_used == buffers.size()) buffers.emplace_back();
    buffers[buffers_used].data.reset(p);
    buffers[buffers_used++].size = bytes;
    return p;
}

void coll_sched::reset() {
    // Large scratch goes back to the system rather than pinning memory between calls.
    constexpr size_t keep = 256 * 1024;
    for (buffer &b : buffers)
        if (b.size > keep) {
            b.data.reset();
            b.size = 0;
        }
    buffers_used = 0;
    steps.clear();
    round_end.clear();
    held_types.clear();
    op = op_binding{};
    round = 0;
    posted = 0;
    in_locals = false;
    local_next = 0;
    started = false;
    aborted = false;
    done.store(false, std::memory_order_relaxed);
    error = WEFT_SUCCESS;
    user_request = nullptr;
    next = nullptr;
}

namespace {

bool is_comm(const coll_step &s) { return s.k == coll_step::kind::send || s.k == coll_step::kind::recv; }

// Posts one send or receive on the schedule's endpoint (held by the caller).
int post(coll_sched &s, const coll_step &st, request &r) {
    comm &c = *s.c;
    vci &v = *s.endpoint;
    r.complete.store(false, std::memory_order_relaxed);
    r.fabric_status = WEFT_PLUGIN_OK;
    r.failing = false;
    r.endpoint = &v;
    if (peer_failed(c.world_ranks[static_cast<size_t>(st.peer)]))
        return fail_proc("collective", st.peer, c.world_ranks[static_cast<size_t>(st.peer)]);
    r.msg_bytes = 0;
    r.user_count = st.n;
    int rc;
    if (st.k == coll_step::kind::send) {
        r.op = request::kind::send;
        weft_fabric_peer_t *peer = nullptr;
        if (int e = comm_peer(c, 0, st.peer, 0, &peer)) return e;
        uint64_t bits = match_bits(s.ctx, 0, static_cast<uint32_t>(c.rank), static_cast<uint32_t>(s.tag));
        while ((rc = v.ops->tag_send(v.ep, peer, st.src, st.n, bits, request_context(r))) == WEFT_PLUGIN_ERR_AGAIN)
            v.ops->ep_progress(v.ep);
    } else {
        r.op = request::kind::recv;
        uint64_t bits = match_bits(s.ctx, 0, static_cast<uint32_t>(st.peer), static_cast<uint32_t>(s.tag));
        while ((rc = v.ops->tag_recv(v.ep, st.dst, st.n, bits, 0, request_context(r))) == WEFT_PLUGIN_ERR_AGAIN)
            v.ops->ep_progress(v.ep);
    }
    if (rc != WEFT_PLUGIN_OK)
        return fail(plugin_error(rc), "collective: the fabric refused a %s with rank %d (code %d)",
                    st.k == coll_step::kind::send ? "send" : "receive", st.peer, rc);
    return WEFT_SUCCESS;
}

// Flags live in memory that other processes write: atomic_ref gives the acquire and release
// orders without a lock (lock-free, so address-free across processes).
bool flags_reached(const coll_step &st) {
    const char *flag = static_cast<const char *>(st.src);
    for (int i = 0; i < st.peer; ++i, flag += 64)
        if (std::atomic_ref<const uint64_t>(*reinterpret_cast<const uint64_t *>(flag)).load(std::memory_order_acquire) <
            st.n)
            return false;
    return true;
}

int truncated(int peer, size_t sent, size_t expected) {
    return fail(WEFT_ERR_TRUNCATE,
                "collective: rank %d sent %zu bytes where %zu were expected (do all processes pass matching counts, "
                "datatypes and roots?)",
                peer, sent, expected);
}

void run_local(coll_sched &s, const coll_step &st) {
    switch (st.k) {
        case coll_step::kind::flag_set:
            std::atomic_ref<uint64_t>(*static_cast<uint64_t *>(st.dst)).store(st.n, std::memory_order_release);
            break;
        case coll_step::kind::size_check: {
            // Ordered by the flag_wait before it, like the slot's data.
            uint64_t sent =
                std::atomic_ref<const uint64_t>(*static_cast<const uint64_t *>(st.src)).load(std::memory_order_relaxed);
            if (sent != st.n) s.error = truncated(st.peer, sent, st.n);
            break;
        }
        case coll_step::kind::reduce: op_apply(s.op, st.src, st.dst, st.n); break;
        case coll_step::kind::copy: std::memmove(st.dst, st.src, st.n); break;
        case coll_step::kind::unpack: datatype_unpack(*st.type, st.src, st.n * st.type->size, st.dst, st.n); break;
        case coll_step::kind::pack: datatype_pack(*st.type, st.src, st.n, st.dst); break;
        default: break;
    }
}

// Checks the round's completed requests; the first failure becomes the schedule's error.
void collect(coll_sched &s, size_t first) {
    for (size_t i = 0; i < s.posted; ++i) {
        request &r = s.reqs[i];
        if (s.error != WEFT_SUCCESS) continue;
        const coll_step &st = s.steps[first + i];
        if (r.fabric_status == WEFT_PLUGIN_ERR_TRUNCATE || (r.op == request::kind::recv && r.msg_bytes != st.n)) {
            s.error = truncated(st.peer, r.msg_bytes, st.n);
        } else if (r.fabric_status != WEFT_PLUGIN_OK) {
            s.error = fail(plugin_error(r.fabric_status), "collective: a %s with rank %d failed (code %d)",
                           st.k == coll_step::kind::send ? "send" : "receive", st.peer, r.fabric_status);
        }
    }
    s.posted = 0;
}

// Hands the requests of an aborted schedule's unfinished sends, and the scratch memory they
// may read, to the endpoint until it closes (the fabric completes them at ep_close at the
// latest); the schedule then finishes without them.
void orphan_sends(coll_sched &s) {
    vci::orphan o;
    o.reqs = std::move(s.reqs);
    s.reqs_cap = 0;
    for (coll_sched::buffer &b : s.buffers) o.data.push_back(std::move(b.data));
    s.buffers.clear();
    s.buffers_used = 0;
    s.endpoint->orphans.push_back(std::move(o));
}

// Runs the current round's local steps from s.local_next; false while a flag_wait holds it.
// A failed schedule skips them (a flag may never come) but still sets its flags, so that the
// processes waiting on them go on, to their own error or to the next collective.
bool run_locals(coll_sched &s, size_t end) {
    for (; s.local_next < end; ++s.local_next) {
        const coll_step &st = s.steps[s.local_next];
        if (is_comm(st)) continue;
        if (s.error != WEFT_SUCCESS) {
            if (st.k == coll_step::kind::flag_set) run_local(s, st);
            continue;
        }
        if (st.k == coll_step::kind::flag_wait) {
            if (!flags_reached(st)) return false;
            continue;
        }
        run_local(s, st);
    }
    return true;
}

// Moves s forward as far as it can without waiting; true when it has finished.
bool advance(coll_sched &s) {
    while (true) {
        size_t begin = s.round == 0 ? 0 : s.round_end[s.round - 1];
        if (s.posted != 0) {
            bool sends_left = false;
            for (size_t i = 0; i < s.posted; ++i)
                if (!s.reqs[i].complete.load(std::memory_order_acquire)) {
                    // After a failure a living peer may never take a large send of ours (it
                    // abandoned the collective too): once the receives are in, let it go.
                    if (!s.aborted || s.reqs[i].op != request::kind::send) return false;
                    sends_left = true;
                }
            collect(s, begin);
            if (sends_left) orphan_sends(s);
            // Local steps follow the round's sends and receives.
            s.in_locals = true;
            s.local_next = begin;
        }
        if (s.in_locals) {
            if (!run_locals(s, s.round_end[s.round])) return false;
            s.in_locals = false;
            ++s.round;
            continue;
        }
        if (s.round == s.round_end.size() || s.error != WEFT_SUCCESS) return true;
        size_t end = s.round_end[s.round];
        size_t ncomm = 0;
        while (begin + ncomm < end && is_comm(s.steps[begin + ncomm])) ++ncomm;
        if (ncomm == 0) {
            s.in_locals = true;
            s.local_next = begin;
            continue;
        }
        if (ncomm > s.reqs_cap) {
            s.reqs.reset(new local_request[ncomm]);
            s.reqs_cap = ncomm;
        }
        for (size_t i = 0; i < ncomm; ++i) {
            if (int rc = post(s, s.steps[begin + i], s.reqs[i])) {
                s.error = rc;
                break;  // what was posted must still complete before the schedule ends
            }
            s.posted = i + 1;
        }
        if (s.posted == 0) return true;
    }
}

// The last touch of s: once the flag is set, the waiter (possibly another thread, when the
// endpoint is shared) may reuse or free the schedule.
void finish(coll_sched &s) {
    if (request *r = s.user_request)
        r->complete.store(true, std::memory_order_release);
    else
        s.done.store(true, std::memory_order_release);
}

// The endpoint's hook (vci_hook): its state is the list of schedules in flight there, in the
// order they started; it goes away with the last of them.
int progress_hook(vci &, vci_hook &self) {
    int n = 0;
    auto *head = static_cast<coll_sched *>(self.state);
    coll_sched **link = &head;
    while (coll_sched *s = *link) {
        size_t round = s->round;
        if (advance(*s)) {
            *link = s->next;
            s->next = nullptr;
            finish(*s);
            ++n;
            continue;
        }
        if (s->round != round) ++n;
        link = &s->next;
    }
    self.state = head;
    return n;
}

// A member is gone, so no schedule on its communicator can finish.
void peer_failed_hook(vci &, vci_hook &self) {
    for (auto *s = static_cast<coll_sched *>(self.state); s != nullptr; s = s->next)
        if (group_has_failed(*s->c)) coll_sched_abort(*s);
}

}  // namespace

void coll_sched_abort(coll_sched &s) {
    s.aborted = true;
    if (s.error == WEFT_SUCCESS) {
        int r = group_first_failed(*s.c);
        s.error = fail_proc("collective", r, r >= 0 ? s.c->world_ranks[static_cast<size_t>(r)] : -1);
    }
    // Receives would wait forever (the dead send nothing, the living abandon the collective
    // too): cancel them.  Sends to the dead the fabric fails (ep_peer_failed); those to the
    // living that do not finish are orphaned by advance.
    vci &v = *s.endpoint;
    for (size_t i = 0; i < s.posted; ++i) {
        request &r = s.reqs[i];
        if (r.op != request::kind::recv || r.failing || r.complete.load(std::memory_order_acquire)) continue;
        r.failing = true;
        if (v.ops->cancel(v.ep, request_context(r)) != WEFT_PLUGIN_OK) r.failing = false;
    }
}

bool coll_sched_start(coll_sched &s) {
    s.end_round();
    s.started = true;
    if (__builtin_expect(g_failure_epoch.load(std::memory_order_acquire) != 0, 0) && group_has_failed(*s.c))
        coll_sched_abort(s);  // a member is gone: fail at once, posting nothing
    if (advance(s)) {
        finish(s);
        return false;
    }
    // Appended at the tail: schedules on one endpoint then advance in the order they started.
    // Collectives take one of the endpoint's hooks (vci_max_hooks counts them).
    vci_hook *hook = vci_hook_find(*s.endpoint, progress_hook);
    if (hook == nullptr) hook = vci_hook_add(*s.endpoint, vci_hook{progress_hook, peer_failed_hook, nullptr});
    auto *head = static_cast<coll_sched *>(hook->state);
    coll_sched **link = &head;
    while (*link != nullptr) link = &(*link)->next;
    *link = &s;
    hook->state = head;
    return true;
}

int coll_sched_run(coll_sched &s) {
    vci &v = *s.endpoint;
    v.enter();
    bool running = coll_sched_start(s);
    v.leave();
    if (running) vci_progress_until(v, [&] { return s.done.load(std::memory_order_acquire); });
    return s.error;
}

}  // namespace weft

namespace weft {

int coll_request_finish(request &r, weft_status *status) {
    int err = r.sched->error;
    delete r.sched;
    r.sched = nullptr;
    if (status != WEFT_STATUS_IGNORE) {
        status->source = WEFT_ANY_SOURCE;
        status->tag = WEFT_ANY_TAG;
        status->stream_index = 0;
        status->error = err;
        status->weft_bytes_ = 0;
        status->weft_cancelled_ = 0;
    }
    return err;
}

}  // namespace weft
