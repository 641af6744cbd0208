// Completion of some of many: weft_waitsome, weft_testsome, weft_testany (MPI 4.0 3.7.5).
// Null and inactive persistent requests take no part; completed requests are retired as
// weft_wait retires them (freed, or a persistent one left inactive with its handle).
#include "base/error.hpp"
#include "comm/errhandler.hpp"
#include "comm/request_check.hpp"
#include "transport/persistent.hpp"
#include "transport/runtime.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

// Finishes the completed request of requests[i] and retires it.
int retire(weft_request &handle, weft_status *status) {
    request *r = request_lookup(handle);
    int rc = request_finish(*r, status);
    if (r->persistent) return rc;
    vci &v = *r->endpoint;
    v.enter();
    request_release(*r);
    v.leave();
    handle = WEFT_REQUEST_NULL;
    return rc;
}

// The requests that take part: active = how many; writes the indices of the completed ones to
// indices and returns how many.
size_t scan(size_t count, const weft_request *requests, size_t *indices, size_t &active) {
    size_t n = 0;
    active = 0;
    for (size_t i = 0; i < count; ++i) {
        if (requests[i] == WEFT_REQUEST_NULL) continue;
        request *r = request_lookup(requests[i]);
        if (request_inactive(*r)) continue;
        ++active;
        if (r->complete.load(std::memory_order_acquire)) {
            indices[n++] = i;
        }
    }
    return n;
}

// Progresses each endpoint of the requests that take part once (runs of one endpoint once).
int progress_all(size_t count, const weft_request *requests) {
    int n = 0;
    vci *last = nullptr;
    for (size_t i = 0; i < count; ++i) {
        if (requests[i] == WEFT_REQUEST_NULL) continue;
        request *r = request_lookup(requests[i]);
        if (request_inactive(*r) || r->endpoint == last) continue;
        last = r->endpoint;
        n += last->progress();
    }
    return n;
}

int some(const char *fn, bool wait, size_t count, weft_request *requests, size_t *outcount, size_t *indices,
         weft_status *statuses) {
    if (int rc = runtime_check(fn)) return rc;
    if (outcount == nullptr) return fail(WEFT_ERR_ARG, "%s: outcount must not be NULL", fn);
    if (count != 0 && indices == nullptr) return fail(WEFT_ERR_ARG, "%s: indices must not be NULL", fn);
    if (int rc = requests_check(fn, count, requests)) return rc;
    size_t active = 0, n = scan(count, requests, indices, active);
    for (unsigned idle = 0; n == 0 && active != 0;) {
        int progressed = progress_all(count, requests);
        n = scan(count, requests, indices, active);
        if (!wait) break;
        if (progressed > 0) {
            idle = 0;
        } else if (++idle >= g_polls_before_yield) {  // see vci_progress_until
            idle = 0;
            sched_yield();
        }
    }
    if (active == 0) {
        *outcount = WEFT_UNDEFINED;
        return WEFT_SUCCESS;
    }
    *outcount = n;
    int first_error = WEFT_SUCCESS;
    size_t errors = 0;
    for (size_t k = 0; k < n; ++k) {
        weft_status *st = statuses == WEFT_STATUSES_IGNORE ? WEFT_STATUS_IGNORE : &statuses[k];
        if (int rc = retire(requests[indices[k]], st))
            if (errors++ == 0) first_error = rc;
    }
    if (errors == 0) return WEFT_SUCCESS;
    return statuses == WEFT_STATUSES_IGNORE ? first_error : WEFT_ERR_IN_STATUS;
}

}  // namespace
}  // namespace weft

using namespace weft;

static int waitsome_impl(size_t incount, weft_request requests[], size_t *outcount, size_t indices[],
                         weft_status statuses[]) {
    return some("weft_waitsome", true, incount, requests, outcount, indices, statuses);
}

extern "C" int weft_waitsome(size_t incount, weft_request requests[], size_t *outcount, size_t indices[],
                             weft_status statuses[]) {
    return self_entry("weft_waitsome", [&] { return waitsome_impl(incount, requests, outcount, indices, statuses); });
}

static int testsome_impl(size_t incount, weft_request requests[], size_t *outcount, size_t indices[],
                         weft_status statuses[]) {
    return some("weft_testsome", false, incount, requests, outcount, indices, statuses);
}

extern "C" int weft_testsome(size_t incount, weft_request requests[], size_t *outcount, size_t indices[],
                             weft_status statuses[]) {
    return self_entry("weft_testsome", [&] { return testsome_impl(incount, requests, outcount, indices, statuses); });
}

static int testany_impl(size_t count, weft_request requests[], size_t *index, int *flag, weft_status *status) {
    if (int rc = runtime_check("weft_testany")) return rc;
    if (index == nullptr || flag == nullptr) return fail(WEFT_ERR_ARG, "weft_testany: index and flag must not be NULL");
    if (int rc = requests_check("weft_testany", count, requests)) return rc;
    size_t active = 0;
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) progress_all(count, requests);
        active = 0;
        for (size_t i = 0; i < count; ++i) {
            if (requests[i] == WEFT_REQUEST_NULL) continue;
            request *r = request_lookup(requests[i]);
            if (request_inactive(*r)) continue;
            ++active;
            if (r->complete.load(std::memory_order_acquire)) {
                *flag = 1;
                *index = i;
                return retire(requests[i], status);
            }
        }
        if (active == 0) {
            *flag = 1;
            *index = WEFT_UNDEFINED;
            request_empty_status(status);
            return WEFT_SUCCESS;
        }
    }
    *flag = 0;
    *index = WEFT_UNDEFINED;
    return WEFT_SUCCESS;
}

extern "C" int weft_testany(size_t count, weft_request requests[], size_t *index, int *flag, weft_status *status) {
    return self_entry("weft_testany", [&] { return testany_impl(count, requests, index, flag, status); });
}
