// weft_comm_idup: the context-id agreement of weft_comm_dup (comm/comm_context.hpp) run as a
// chain of nonblocking collective schedules, as MPICH builds idup on its nonblocking schedules.
// It lives in this layer because the schedules do: each round of the agreement (an allgather
// of free-context masks, then one of claims, again while a claim fails) is a schedule, and a
// hook on the parent's endpoint starts the next round when one completes, so the agreement
// moves on at every progress of that endpoint and never blocks the caller.
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "base/error.hpp"
#include "comm/errhandler.hpp"
#include "coll/coll_sched.hpp"
#include "comm/comm_context.hpp"
#include "comm/comm_derive.hpp"
#include "comm/stream.hpp"
#include "transport/runtime.hpp"
#include "weft/weft.h"

namespace weft {

extern handle_table<comm> g_comm_table;

namespace {

// Tags as user collectives take them (coll.cpp): the top tag bit, and the parent's collective
// sequence number, so that an idup is ordered with the parent's other collectives and its
// messages never meet theirs.  Every round of one idup uses its one tag: rounds run in order
// at every process, and messages between two processes are matched in the order sent.
constexpr uint32_t coll_tag_bit = 0x80000;

struct idup_op {
    comm *parent = nullptr;
    std::shared_ptr<comm> result;  // in the table from the call on (its handle is the user's)
    weft_comm handle = WEFT_COMM_NULL;
    request *user = nullptr;
    bool claiming = false;  // the round in flight: claims (true) or free masks
    std::unique_ptr<coll_sched> sched;
    context_mask mine{};
    std::vector<context_mask> masks;
    uint8_t claimed = 0;
    std::vector<uint8_t> claims;
    size_t pick = 0;
    int attempt = 0;
    idup_op *next = nullptr;
};

// Starts a ring allgather of `bytes` per process over the parent: out[rank] = in (caller holds
// the endpoint).
void start_allgather(idup_op &op, const void *in, size_t bytes, void *out) {
    comm &c = *op.parent;
    coll_sched &s = *op.sched;
    int tag = s.tag;
    s.reset();
    s.c = &c;
    s.endpoint = c.local[0];
    s.ctx = static_cast<uint16_t>(c.context_id + 1);
    s.tag = tag;
    auto *base = static_cast<char *>(out);
    std::memcpy(base + static_cast<size_t>(c.rank) * bytes, in, bytes);
    const int n = c.size, next = (c.rank + 1) % n, prev = (c.rank + n - 1) % n;
    for (int step = 0; step < n - 1; ++step) {
        s.send(next, base + static_cast<size_t>((c.rank - step + n) % n) * bytes, bytes);
        s.recv(prev, base + static_cast<size_t>((c.rank - step - 1 + 2 * n) % n) * bytes, bytes);
        s.end_round();
    }
    coll_sched_start(s);
}

void start_masks(idup_op &op) {
    op.claiming = false;
    context_free_mask(op.mine);
    start_allgather(op, &op.mine, sizeof op.mine, op.masks.data());
}

// Moves op on after its round completed; true once the agreement has ended, with its code in rc.
bool advance(idup_op &op, int &rc) {
    coll_sched &s = *op.sched;
    if (s.error != WEFT_SUCCESS) {
        if (op.claiming && op.claimed) context_unclaim(op.pick);
        rc = s.error;
        return true;
    }
    if (!op.claiming) {
        op.pick = context_pick(op.masks.data(), op.masks.size(),
                               context_pick_start(op.parent->context_id, static_cast<uint32_t>(s.tag), op.attempt));
        if (op.pick == context_pairs) {
            rc =
                fail(WEFT_ERR_NO_MEM,
                     "weft_comm_idup: out of communicator context ids (%zu in use); free communicators", context_pairs);
            return true;
        }
        op.claimed = context_claim(op.pick) ? 1 : 0;
        op.claiming = true;
        start_allgather(op, &op.claimed, 1, op.claims.data());
        return false;
    }
    bool all = true;
    for (uint8_t c : op.claims) all = all && c != 0;
    if (all) {
        rc = WEFT_SUCCESS;
        return true;
    }
    if (op.claimed) context_unclaim(op.pick);
    if (++op.attempt == context_attempts) {
        rc = fail(WEFT_ERR_INTERNAL, "weft_comm_idup: could not agree on a context id after %d attempts",
                  context_attempts);
        return true;
    }
    start_masks(op);
    return false;
}

// Fills the communicator (or withdraws its handle) and completes the user's request, whose
// finish (coll_request_finish) returns the schedule's error and frees it.
void finish(idup_op *op, int rc) {
    if (rc == WEFT_SUCCESS) {
        std::vector<int> all(static_cast<size_t>(op->parent->size));
        for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
        std::shared_ptr<comm> made = comm_derive(*op->parent, all, op->parent->rank, context_id_of(op->pick));
        comm_hold_streams(*made);
        *op->result = std::move(*made);
    } else {
        g_comm_table.erase(op->handle);
    }
    op->sched->error = rc;
    request *r = op->user;
    r->sched = op->sched.release();
    r->complete.store(true, std::memory_order_release);
    delete op;
}

// The endpoint's hook: its state is the list of idups in flight there.
int progress_hook(vci &, vci_hook &self) {
    int n = 0;
    auto *head = static_cast<idup_op *>(self.state);
    idup_op **link = &head;
    while (idup_op *op = *link) {
        if (!op->sched->done.load(std::memory_order_acquire)) {
            link = &op->next;
            continue;
        }
        ++n;
        int rc = WEFT_SUCCESS;
        if (advance(*op, rc)) {
            *link = op->next;
            finish(op, rc);
            continue;
        }
        link = &op->next;
    }
    self.state = head;
    return n;
}

// The schedules fail themselves when a member dies (the collectives' own hook aborts them).
void peer_failed_hook(vci &, vci_hook &) {}

}  // namespace
}  // namespace weft

using namespace weft;

static int comm_idup_impl(weft_comm handle, weft_comm *newcomm, weft_request *req) {
    static const char fn[] = "weft_comm_idup";
    if (int rc = runtime_check(fn)) return rc;
    comm *parent = comm_get(handle);
    if (parent == nullptr) return fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", fn, handle);
    if (newcomm == nullptr || req == nullptr) return fail(WEFT_ERR_ARG, "%s: newcomm and request must not be NULL", fn);
    if (parent->local.empty())
        return fail(WEFT_ERR_STREAM, "%s: this process attached no stream to the multiplex communicator", fn);
    for (int r = 0; r < parent->size; ++r)
        if (parent->remote_offset[static_cast<size_t>(r) + 1] == parent->remote_offset[static_cast<size_t>(r)])
            return fail(WEFT_ERR_STREAM, "%s: rank %d attached no stream to the multiplex communicator", fn, r);
    stream_use use(parent->local_streams[0]);
    if (use.conflict())
        return fail(WEFT_ERR_STREAM, "%s: another thread is using the same stream; a stream is a serial context", fn);

    std::unique_ptr<idup_op> op(new (std::nothrow) idup_op);
    std::unique_ptr<coll_sched> sched(new (std::nothrow) coll_sched);
    if (!op || !sched) return fail(WEFT_ERR_NO_MEM, "%s: out of memory", fn);
    op->parent = parent;
    op->sched = std::move(sched);
    op->masks.resize(static_cast<size_t>(parent->size));
    op->claims.resize(static_cast<size_t>(parent->size));
    // The handle exists from now on; until the agreement ends it names an empty communicator
    // that reports an operation pending, so that weft_comm_free refuses it.
    op->result = std::make_shared<comm>();
    op->result->pending.assign(1, 1);

    vci &v = *parent->local[0];
    v.enter();
    // This hook and the collectives' own may both be needed.
    unsigned needed = (vci_hook_find(v, progress_hook) == nullptr ? 1u : 0u) + 1u;
    if (v.nhooks + needed > vci_max_hooks) {
        v.leave();
        return fail(WEFT_ERR_NO_MEM, "%s: the endpoint has no progress hook left (%u in use)", fn, v.nhooks);
    }
    request *r = v.requests.alloc(req);
    if (r == nullptr) {
        v.leave();
        return fail(WEFT_ERR_NO_MEM, "%s: more than %u requests pending on one endpoint", fn,
                    request_pool::max_slots - 1);
    }
    op->handle = g_comm_table.insert(op->result);
    if (op->handle == 0) {
        request_release(*r);
        v.leave();
        *req = WEFT_REQUEST_NULL;
        return fail(WEFT_ERR_NO_MEM, "%s: too many communicators", fn);
    }
    r->op = request::kind::coll;
    r->endpoint = &v;
    r->sched = nullptr;  // the last round's schedule, once the agreement has ended
    r->comm_pending = &parent->pending[0];
    ++*r->comm_pending;
    op->user = r;
    op->sched->tag = static_cast<int>(coll_tag_bit | (parent->coll_seq++ & (coll_tag_bit - 1)));
    *newcomm = op->handle;
    start_masks(*op);
    vci_hook *hook = vci_hook_find(v, progress_hook);
    if (hook == nullptr) hook = vci_hook_add(v, vci_hook{progress_hook, peer_failed_hook, nullptr});
    auto *head = static_cast<idup_op *>(hook->state);
    idup_op **link = &head;
    while (*link != nullptr) link = &(*link)->next;
    *link = op.release();
    hook->state = head;
    v.leave();
    return WEFT_SUCCESS;
}

extern "C" int weft_comm_idup(weft_comm handle, weft_comm *newcomm, weft_request *req) {
    return comm_entry(handle, "weft_comm_idup", [&] { return comm_idup_impl(handle, newcomm, req); });
}
