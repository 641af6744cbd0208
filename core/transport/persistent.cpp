#include "transport/persistent.hpp"

#include <cstdlib>

#include "base/error.hpp"
#include "base/match.hpp"
#include "loader/plugin_host.hpp"
#include "transport/peer_failure.hpp"

namespace weft {

void request_empty_status(weft_status *status) {
    if (status == WEFT_STATUS_IGNORE) return;
    status->source = WEFT_ANY_SOURCE;
    status->tag = WEFT_ANY_TAG;
    status->error = WEFT_SUCCESS;
    status->stream_index = 0;
    status->weft_bytes_ = 0;
    status->weft_cancelled_ = 0;
}

int persistent_create(vci &v, int *comm_pending, std::shared_ptr<persistent_op> op, weft_request *handle,
                      const char *fn) {
    v.enter();
    request *r = v.requests.alloc(handle);
    if (r != nullptr) {
        r->endpoint = &v;
        r->persistent = true;
        r->extras = true;  // request_finish must see it (persistent_finish)
        r->persist = std::move(op);
        r->op = request::kind::done;  // nothing in flight: the failure sweep passes it by
        r->complete.store(true, std::memory_order_relaxed);
        r->comm_pending = comm_pending;
        if (comm_pending != nullptr) ++*comm_pending;
    }
    v.leave();
    if (r == nullptr) {
        *handle = WEFT_REQUEST_NULL;
        return fail(WEFT_ERR_NO_MEM,
                    "%s: more than %u requests pending on one endpoint (spread them over more: WEFT_NUM_VCIS, streams)",
                    fn, request_pool::max_slots - 1);
    }
    return WEFT_SUCCESS;
}

int persistent_finish(request &r, weft_status *status) {
    persistent_op &p = *r.persist;
    if (!p.active) {
        request_empty_status(status);
        return WEFT_SUCCESS;
    }
    p.active = false;
    int rc = p.finish(r, status);
    r.extras = true;  // request_finish_op clears it
    return rc;
}

int persistent_start(request &r) {
    persistent_op &p = *r.persist;
    r.fabric_status = WEFT_PLUGIN_OK;
    r.failing = false;
    r.msg_bytes = 0;
    r.complete.store(false, std::memory_order_relaxed);
    p.active = true;
    int rc = p.start(r);
    if (rc != WEFT_SUCCESS) {
        p.active = false;
        r.op = request::kind::done;
        r.complete.store(true, std::memory_order_release);
    }
    return rc;
}

namespace {

// The endpoint's hook for detached requests: its state is their list, linked through
// next_free (unused while a request is in use).  Each that completed is finished, its result
// dropped (nobody waits for it), and released.
void retire_detached(request &r) {
    request_finish(r, WEFT_STATUS_IGNORE);
    if (r.persistent) r.sched = nullptr;  // a persistent collective's schedule is its op's
    r.persistent = false;
    r.persist.reset();
    r.extras = false;
    request_release(r);
}

int detached_progress(vci &, vci_hook &self) {
    int n = 0;
    auto *head = static_cast<request *>(self.state);
    request **link = &head;
    while (request *r = *link) {
        if (!r->complete.load(std::memory_order_acquire)) {
            link = &r->next_free;
            continue;
        }
        *link = r->next_free;
        retire_detached(*r);
        ++n;
    }
    self.state = head;
    return n;
}

}  // namespace

void request_detach(request &r) {
    vci &v = *r.endpoint;
    v.enter();
    // No longer the communicator's (nor so its stream's): they may be freed before it completes.
    // A receive forgets its communicator too (the failure sweep then passes it by).
    if (r.comm_pending != nullptr) --*r.comm_pending;
    r.comm_pending = nullptr;
    r.group = nullptr;
    vci_hook *hook = vci_hook_find(v, detached_progress);
    if (hook == nullptr) hook = vci_hook_add(v, vci_hook{detached_progress, nullptr, nullptr});
    if (hook != nullptr) {
        r.next_free = static_cast<request *>(hook->state);
        hook->state = &r;
        v.leave();
        return;
    }
    v.leave();
    // Every hook of the endpoint is taken (vci_max_hooks): complete it here instead.
    vci_progress_until(v, [&] { return r.complete.load(std::memory_order_acquire); });
    v.enter();
    retire_detached(r);
    v.leave();
}

int request_free(request &r) {
    if (r.lightweight) return WEFT_SUCCESS;  // shared by sends that finished at once; never released
    if (!r.complete.load(std::memory_order_acquire)) {
        bool detachable = r.persistent ? r.persist->detachable() : r.op != request::kind::coll;
        if (!detachable)
            return fail(WEFT_ERR_REQUEST,
                        "weft_request_free: 0x%x is an active collective; complete it with a wait or test first "
                        "(freeing one is erroneous in MPI)",
                        r.handle);
        request_detach(r);
        return WEFT_SUCCESS;
    }
    // Nothing in flight: finish what completed (staging, a schedule, held types), then release.
    vci &v = *r.endpoint;
    v.enter();
    retire_detached(r);
    v.leave();
    return WEFT_SUCCESS;
}

int request_peek(request &r, weft_status *status) {
    if (request_inactive(r)) {
        request_empty_status(status);
        return WEFT_SUCCESS;
    }
    if (r.op == request::kind::coll) {
        int err = coll_request_error(r);
        request_empty_status(status);
        if (status != WEFT_STATUS_IGNORE) status->error = err;
        return err;
    }
    // The computation of request_finish_op, releasing nothing.
    bool cancelled = r.fabric_status == WEFT_PLUGIN_ERR_CANCELED;
    int err = WEFT_SUCCESS;
    if (r.fabric_status == WEFT_PLUGIN_ERR_TRUNCATE)
        err = fail(WEFT_ERR_TRUNCATE, "weft_request_get_status: a message of %zu bytes does not fit the buffer",
                   r.msg_bytes);
    else if (r.fabric_status != WEFT_PLUGIN_OK && !cancelled)
        err = fail(plugin_error(r.fabric_status), "weft_request_get_status: the operation failed (code %d)",
                   r.fabric_status);
    size_t bytes = 0;
    if (r.op == request::kind::recv) {
        size_t capacity = r.type ? r.user_count * r.type->size : r.user_count;
        bytes = r.msg_bytes < capacity ? r.msg_bytes : capacity;
        // The buffer must hold the data once the request reads as complete: unpack now, and
        // leave request_finish nothing to unpack.  A receive that landed in place (an iovec:
        // staging holds the list, type is null) has nothing to unpack.
        if (r.staging != nullptr) {
            if (!cancelled && r.type != nullptr) datatype_unpack(*r.type, r.staging, bytes, r.user_buf, r.user_count);
            std::free(r.staging);
            r.staging = nullptr;
        }
    }
    if (status != WEFT_STATUS_IGNORE) {
        if (r.op == request::kind::recv && !cancelled) {
            status->source = match_source(r.msg_tag);
            status->tag = match_tag(r.msg_tag);
            status->stream_index = match_index(r.msg_tag);
        } else if (r.op == request::kind::done) {
            status->source = WEFT_PROC_NULL;
            status->tag = WEFT_ANY_TAG;
            status->stream_index = 0;
        }
        status->error = err;
        status->weft_bytes_ = bytes;
        status->weft_cancelled_ = cancelled;
    }
    return err;
}

}  // namespace weft
