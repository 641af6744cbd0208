// Completion: wait, test, waitall, waitany, testall, cancel.
#include <memory>
#include <new>

#include "base/error.hpp"
#include "base/handle.hpp"
#include "comm/errhandler.hpp"
#include "transport/persistent.hpp"
#include "transport/runtime.hpp"

namespace weft {
namespace {

// Requests of the enqueue API belong to their GPU queue, not to the host.
// Why a handle is not a valid request, where it can be told.
const char *request_hint(weft_request handle) {
    if (handle_kind_bits(handle) == static_cast<uint32_t>(handle_kind::enqueue))
        return " (it was made by an enqueue call: complete it with weft_wait_enqueue)";
    if (request_retired(handle))
        return " (that request was already completed and freed by a wait or test, which set the"
               " handle it was given to WEFT_REQUEST_NULL: this is a stale copy, or it was waited"
               " on twice)";
    return "";
}

void empty_status(weft_status *status) {
    if (status == WEFT_STATUS_IGNORE) return;
    status->source = WEFT_ANY_SOURCE;
    status->tag = WEFT_ANY_TAG;
    status->error = WEFT_SUCCESS;
    status->stream_index = 0;
    status->weft_bytes_ = 0;
    status->weft_cancelled_ = 0;
}

// Finishes a completed request without returning it to its pool.
inline int finish(request *r, weft_status *status) {
    if (status == WEFT_STATUS_IGNORE && request_finish_trivial(*r)) return WEFT_SUCCESS;
    return request_finish(*r, status);
}

// Finishes a completed request, returns it to its pool and nulls the handle.  A persistent
// request stays, inactive, with its handle.  *owner: the request's communicator (its pending
// counter) when it failed, for the error handler.
int retire(request *r, weft_request *handle, weft_status *status, const int **owner) {
    int rc = WEFT_SUCCESS;
    if (status != WEFT_STATUS_IGNORE || !request_finish_trivial(*r)) {  // finish(r, status)
        rc = request_finish(*r, status);
        if (__builtin_expect(rc != WEFT_SUCCESS, 0)) *owner = r->comm_pending;
        if (__builtin_expect(r->persistent, 0)) return rc;
    }
    vci &v = *r->endpoint;
    v.enter();
    request_release(*r);
    v.leave();
    *handle = WEFT_REQUEST_NULL;
    return rc;
}

// Every handle must be null or valid before any is touched.
int check_requests(const char *fn, size_t count, const weft_request *requests) {
    if (count != 0 && requests == nullptr) return fail(WEFT_ERR_ARG, "%s: requests must not be NULL", fn);
    for (size_t i = 0; i < count; ++i)
        if (requests[i] != WEFT_REQUEST_NULL && request_lookup(requests[i]) == nullptr)
            return fail(WEFT_ERR_REQUEST, "%s: requests[%zu] = 0x%x is not a valid request%s", fn, i, requests[i],
                        request_hint(requests[i]));
    return WEFT_SUCCESS;
}

bool done(const request *r) { return r->complete.load(std::memory_order_acquire); }

}  // namespace
}  // namespace weft

using namespace weft;

extern "C" int weft_wait(weft_request *handle, weft_status *status) {
    if (int rc = runtime_check("weft_wait")) return rc;
    if (handle == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "weft_wait: request must not be NULL"), "weft_wait");
    if (*handle == WEFT_REQUEST_NULL) {
        empty_status(status);
        return WEFT_SUCCESS;
    }
    request *r = request_lookup(*handle);
    if (r == nullptr)
        return self_error_return(
            fail(WEFT_ERR_REQUEST, "weft_wait: 0x%x is not a valid request%s", *handle, request_hint(*handle)),
            "weft_wait");
    vci_progress_until(*r->endpoint, [&] { return done(r); });
    const int *owner = nullptr;
    int rc = retire(r, handle, status, &owner);  // sets owner: read it after
    return request_error_return(owner, rc, "weft_wait");
}

extern "C" int weft_test(weft_request *handle, int *flag, weft_status *status) {
    if (int rc = runtime_check("weft_test")) return rc;
    if (handle == nullptr || flag == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "weft_test: request and flag must not be NULL"), "weft_test");
    if (*handle == WEFT_REQUEST_NULL) {
        *flag = 1;
        empty_status(status);
        return WEFT_SUCCESS;
    }
    request *r = request_lookup(*handle);
    if (r == nullptr)
        return self_error_return(
            fail(WEFT_ERR_REQUEST, "weft_test: 0x%x is not a valid request%s", *handle, request_hint(*handle)),
            "weft_test");
    if (!done(r)) r->endpoint->progress();
    *flag = done(r);
    if (!*flag) return WEFT_SUCCESS;
    const int *owner = nullptr;
    int rc = retire(r, handle, status, &owner);
    return request_error_return(owner, rc, "weft_test");
}

namespace {

// weft_waitall without the error handler (weft_testall ends with it); *owner: the first failed
// request's communicator.
int waitall(size_t count, weft_request requests[], weft_status statuses[], const int **owner) {
    if (int rc = runtime_check("weft_waitall")) return rc;
    if (count != 0 && requests == nullptr) return fail(WEFT_ERR_ARG, "weft_waitall: requests must not be NULL");
    // A window of sends that all completed when they were posted (the endpoint's lightweight
    // handle), with no statuses wanted, needs only its handles nulled.  Anything else takes the
    // loops below, which validate every handle before touching any.
    if (statuses == WEFT_STATUSES_IGNORE) {
        size_t lead = 0;
        while (lead < count && request_is_done_send(requests[lead])) ++lead;
        if (lead == count && count != 0) {
            for (size_t i = 0; i < count; ++i) requests[i] = WEFT_REQUEST_NULL;
            return WEFT_SUCCESS;
        }
    }
    // Resolve (and validate) every handle once; a window of requests fits on the stack.
    constexpr size_t on_stack = 128;
    request *stack_reqs[on_stack];
    std::unique_ptr<request *[]> heap_reqs;
    request **reqs = stack_reqs;
    if (count > on_stack) {
        heap_reqs.reset(new (std::nothrow) request *[count]);
        if (!heap_reqs) return fail(WEFT_ERR_NO_MEM, "weft_waitall: %zu requests", count);
        reqs = heap_reqs.get();
    }
    // one: the endpoint of every non-null request when they share one (the usual case), else
    // nullptr.
    vci *one = nullptr;
    bool mixed = false;
    for (size_t i = 0; i < count; ++i) {
        if (requests[i] == WEFT_REQUEST_NULL) {
            reqs[i] = nullptr;
            continue;
        }
        request *r = reqs[i] = request_lookup(requests[i]);
        if (__builtin_expect(r == nullptr, 0))
            return fail(WEFT_ERR_REQUEST, "weft_waitall: requests[%zu] = 0x%x is not a valid request%s", i, requests[i],
                        request_hint(requests[i]));
        if (r->endpoint != one) {
            if (one != nullptr) mixed = true;
            one = r->endpoint;
        }
    }
    if (mixed) one = nullptr;
    size_t first_pending = 0;
    if (one != nullptr) {
        // One endpoint: progress it until the requests complete, in order (first_pending only
        // moves forward, so each poll costs O(1) beyond the progress itself).  Completed
        // requests are checked on the way for anything request_finish would have to do.
        bool all_trivial = true;
        for (unsigned idle = 0;;) {
            for (; first_pending < count; ++first_pending) {
                request *r = reqs[first_pending];
                if (r == nullptr) continue;
                if (!done(r)) break;
                all_trivial &= request_finish_trivial(*r);
            }
            if (first_pending == count) break;
            if (one->progress() > 0) {
                idle = 0;
            } else if (++idle >= g_polls_before_yield) {
                idle = 0;
                vci_progress_others(*one);
                sched_yield();
            }
        }
        // Finish (statuses, unpacking, errors; nothing at all in the common case), then return
        // every request to the pool in one pass over the endpoint.
        int first_error = WEFT_SUCCESS;
        size_t errors = 0;
        if (!all_trivial || statuses != WEFT_STATUSES_IGNORE) {
            for (size_t i = 0; i < count; ++i) {
                weft_status *st = statuses == WEFT_STATUSES_IGNORE ? WEFT_STATUS_IGNORE : &statuses[i];
                if (reqs[i] == nullptr) {
                    empty_status(st);
                } else if (int rc = finish(reqs[i], st)) {
                    if (errors++ == 0) {
                        first_error = rc;
                        *owner = reqs[i]->comm_pending;
                    }
                }
            }
        }
        one->enter();
        if (all_trivial) {
            for (size_t i = 0; i < count; ++i) {
                if (request *r = reqs[i]) {
                    request_release(*r);
                    requests[i] = WEFT_REQUEST_NULL;
                }
            }
        } else {
            // Persistent requests (never trivial) stay, inactive, with their handles.
            for (size_t i = 0; i < count; ++i) {
                if (request *r = reqs[i]; r != nullptr && !r->persistent) {
                    request_release(*r);
                    requests[i] = WEFT_REQUEST_NULL;
                }
            }
        }
        one->leave();
        if (errors == 0) return WEFT_SUCCESS;
        return statuses == WEFT_STATUSES_IGNORE ? first_error : WEFT_ERR_IN_STATUS;
    } else {
        // Progress every endpoint involved, round-robin, rather than one request at a time: a
        // receive on one local stream may need a send on another to progress (two streams of
        // one thread exchanging a rendezvous-sized message).  first_pending skips the finished
        // prefix.
        for (unsigned idle = 0;;) {
            while (first_pending < count && (reqs[first_pending] == nullptr || done(reqs[first_pending])))
                ++first_pending;
            if (first_pending == count) break;
            int progressed = 0;
            vci *last = nullptr;
            for (size_t i = first_pending; i < count; ++i) {
                request *r = reqs[i];
                if (r == nullptr || r->endpoint == last || done(r)) continue;
                last = r->endpoint;
                progressed += last->progress();
            }
            if (progressed > 0) {
                idle = 0;
            } else if (++idle >= g_polls_before_yield) {
                idle = 0;
                vci_progress_others(*last);
                sched_yield();
            }
        }
    }
    int first_error = WEFT_SUCCESS;
    size_t errors = 0;
    for (size_t i = 0; i < count; ++i) {
        weft_status *st = statuses == WEFT_STATUSES_IGNORE ? WEFT_STATUS_IGNORE : &statuses[i];
        if (reqs[i] == nullptr) {
            empty_status(st);
            continue;
        }
        const int *failed = nullptr;
        if (int rc = retire(reqs[i], &requests[i], st, &failed)) {
            if (errors++ == 0) {
                first_error = rc;
                *owner = failed;
            }
        }
    }
    if (errors == 0) return WEFT_SUCCESS;
    return statuses == WEFT_STATUSES_IGNORE ? first_error : WEFT_ERR_IN_STATUS;
}

}  // namespace

extern "C" int weft_waitall(size_t count, weft_request requests[], weft_status statuses[]) {
    const int *owner = nullptr;
    int rc = waitall(count, requests, statuses, &owner);
    return request_error_return(owner, rc, "weft_waitall");
}

extern "C" int weft_testall(size_t count, weft_request requests[], int *flag, weft_status statuses[]) {
    if (int rc = runtime_check("weft_testall")) return rc;
    if (flag == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "weft_testall: flag must not be NULL"), "weft_testall");
    if (int rc = check_requests("weft_testall", count, requests)) return self_error_return(rc, "weft_testall");
    bool all = true;
    for (size_t i = 0; i < count; ++i) {
        if (requests[i] == WEFT_REQUEST_NULL) continue;
        request *r = request_lookup(requests[i]);
        if (!done(r)) r->endpoint->progress();
        all = all && done(r);
    }
    *flag = all;
    if (!all) return WEFT_SUCCESS;
    const int *owner = nullptr;
    int rc = waitall(count, requests, statuses, &owner);
    return request_error_return(owner, rc, "weft_testall");
}

extern "C" int weft_waitany(size_t count, weft_request requests[], size_t *index, weft_status *status) {
    if (int rc = runtime_check("weft_waitany")) return rc;
    if (index == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "weft_waitany: index must not be NULL"), "weft_waitany");
    if (int rc = check_requests("weft_waitany", count, requests)) return self_error_return(rc, "weft_waitany");
    for (unsigned polls = 1;; ++polls) {
        bool any_active = false;
        for (size_t i = 0; i < count; ++i) {
            if (requests[i] == WEFT_REQUEST_NULL) continue;
            request *r = request_lookup(requests[i]);
            if (request_inactive(*r)) continue;
            any_active = true;
            if (done(r)) {
                *index = i;
                const int *owner = nullptr;
                int rc = retire(r, &requests[i], status, &owner);
                return request_error_return(owner, rc, "weft_waitany");
            }
        }
        if (!any_active) {
            *index = WEFT_UNDEFINED;
            empty_status(status);
            return WEFT_SUCCESS;
        }
        for (size_t i = 0; i < count; ++i)
            if (requests[i] != WEFT_REQUEST_NULL) request_lookup(requests[i])->endpoint->progress();
        if (polls % g_polls_before_yield == 0) sched_yield();  // see vci_progress_until
    }
}

extern "C" int weft_cancel(weft_request *handle) {
    if (int rc = runtime_check("weft_cancel")) return rc;
    if (handle == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "weft_cancel: request must not be NULL"), "weft_cancel");
    request *r = request_lookup(*handle);
    if (r == nullptr)
        return self_error_return(
            fail(WEFT_ERR_REQUEST, "weft_cancel: 0x%x is not a valid request%s", *handle, request_hint(*handle)),
            "weft_cancel");
    if (r->op == request::kind::send)
        return request_error_raise(
            r->comm_pending,
            fail(WEFT_ERR_UNSUPPORTED, "weft_cancel: cancelling a send is not supported (deprecated in MPI 4)"),
            "weft_cancel");
    if (r->op != request::kind::recv || done(r)) return WEFT_SUCCESS;
    vci &v = *r->endpoint;
    v.enter();
    int rc = v.ops->cancel(v.ep, request_context(*r));
    v.leave();
    // NOT_FOUND: it matched meanwhile; the wait will report a normal completion.
    if (rc != WEFT_PLUGIN_OK && rc != WEFT_PLUGIN_ERR_NOT_FOUND)
        return request_error_raise(
            r->comm_pending,
            fail(plugin_error(rc), "weft_cancel: the fabric could not cancel the receive (code %d)", rc),
            "weft_cancel");
    return WEFT_SUCCESS;
}

extern "C" int weft_test_cancelled(const weft_status *status, int *flag) {
    if (status == nullptr || flag == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "weft_test_cancelled: status and flag must not be NULL"),
                                 "weft_test_cancelled");
    *flag = status->weft_cancelled_;
    return WEFT_SUCCESS;
}
