// Request calls beside wait and test: weft_start, weft_startall, weft_request_free,
// weft_request_get_status, weft_request_is_complete (transport/persistent.hpp does the work).
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "comm/errhandler.hpp"
#include "comm/request_check.hpp"
#include "transport/persistent.hpp"
#include "transport/runtime.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

// The request of a handle that weft_start may start; nullptr after recording the error.
request *startable(const char *fn, const char *what, weft_request handle, int &rc) {
    if (handle == WEFT_REQUEST_NULL) {
        rc = fail(WEFT_ERR_REQUEST, "%s: %s is WEFT_REQUEST_NULL", fn, what);
        return nullptr;
    }
    request *r = request_lookup(handle);
    if (r == nullptr) {
        rc = request_invalid(fn, what, handle);
        return nullptr;
    }
    if (!r->persistent) {
        rc = fail(WEFT_ERR_REQUEST,
                  "%s: %s = 0x%x is not a persistent request (only *_init calls make requests that can be started)", fn,
                  what, handle);
        return nullptr;
    }
    if (r->persist->active) {
        rc = fail(WEFT_ERR_REQUEST, "%s: %s = 0x%x is active (started, and not yet completed by a wait or test)", fn,
                  what, handle);
        return nullptr;
    }
    return r;
}

int duplicate(size_t i, size_t j) {
    return fail(WEFT_ERR_REQUEST, "weft_startall: requests[%zu] and requests[%zu] are the same request", i, j);
}

// No handle twice in requests[0, count): pairwise for a few, sorted for many.
int check_distinct(size_t count, const weft_request *requests) {
    constexpr size_t pairwise_max = 32;
    if (count <= pairwise_max) {
        for (size_t i = 1; i < count; ++i)
            for (size_t j = 0; j < i; ++j)
                if (requests[j] == requests[i]) return duplicate(j, i);
        return WEFT_SUCCESS;
    }
    std::vector<std::pair<weft_request, size_t>> sorted(count);
    for (size_t i = 0; i < count; ++i) sorted[i] = {requests[i], i};
    std::sort(sorted.begin(), sorted.end());
    for (size_t k = 1; k < count; ++k)
        if (sorted[k].first == sorted[k - 1].first) return duplicate(sorted[k - 1].second, sorted[k].second);
    return WEFT_SUCCESS;
}

}  // namespace
}  // namespace weft

using namespace weft;

// The communicator (its pending counter) a request handle was posted on, read before the call
// may release the request: its error handler runs for the call's errors.  nullptr for a null
// or invalid handle (WEFT_COMM_SELF's handler then).
static const int *request_owner(weft_request handle) {
    request *r = handle != WEFT_REQUEST_NULL ? request_lookup(handle) : nullptr;
    return r != nullptr ? r->comm_pending : nullptr;
}

static int start_impl(weft_request *handle) {
    if (int rc = runtime_check("weft_start")) return rc;
    if (handle == nullptr) return fail(WEFT_ERR_ARG, "weft_start: request must not be NULL");
    int rc = WEFT_SUCCESS;
    request *r = startable("weft_start", "request", *handle, rc);
    return r != nullptr ? persistent_start(*r) : rc;
}

extern "C" int weft_start(weft_request *handle) {
    return request_entry(request_owner(handle != nullptr ? *handle : WEFT_REQUEST_NULL), "weft_start",
                         [&] { return start_impl(handle); });
}

static int startall_impl(size_t count, weft_request requests[]) {
    if (int rc = runtime_check("weft_startall")) return rc;
    if (count != 0 && requests == nullptr) return fail(WEFT_ERR_ARG, "weft_startall: requests must not be NULL");
    int rc = WEFT_SUCCESS;
    char what[40];
    for (size_t i = 0; i < count; ++i) {
        std::snprintf(what, sizeof what, "requests[%zu]", i);
        if (startable("weft_startall", what, requests[i], rc) == nullptr) return rc;
    }
    // A request given twice would be started twice: refuse before starting any.
    if (int rc2 = check_distinct(count, requests)) return rc2;
    for (size_t i = 0; i < count; ++i)
        if (int e = persistent_start(*request_lookup(requests[i]))) return e;
    return WEFT_SUCCESS;
}

extern "C" int weft_startall(size_t count, weft_request requests[]) {
    return self_entry("weft_startall", [&] { return startall_impl(count, requests); });
}

static int request_free_impl(weft_request *handle) {
    if (int rc = runtime_check("weft_request_free")) return rc;
    if (handle == nullptr) return fail(WEFT_ERR_ARG, "weft_request_free: request must not be NULL");
    if (*handle == WEFT_REQUEST_NULL)
        return fail(WEFT_ERR_REQUEST, "weft_request_free: request is WEFT_REQUEST_NULL (nothing to free)");
    request *r = request_lookup(*handle);
    if (r == nullptr) return request_invalid("weft_request_free", "request", *handle);
    if (int rc = request_free(*r)) return rc;
    *handle = WEFT_REQUEST_NULL;
    return WEFT_SUCCESS;
}

extern "C" int weft_request_free(weft_request *handle) {
    return request_entry(request_owner(handle != nullptr ? *handle : WEFT_REQUEST_NULL), "weft_request_free",
                         [&] { return request_free_impl(handle); });
}

static int request_get_status_impl(weft_request handle, int *flag, weft_status *status) {
    if (int rc = runtime_check("weft_request_get_status")) return rc;
    if (flag == nullptr) return fail(WEFT_ERR_ARG, "weft_request_get_status: flag must not be NULL");
    if (handle == WEFT_REQUEST_NULL) {
        *flag = 1;
        request_empty_status(status);
        return WEFT_SUCCESS;
    }
    request *r = request_lookup(handle);
    if (r == nullptr) return request_invalid("weft_request_get_status", "request", handle);
    if (!r->complete.load(std::memory_order_acquire)) r->endpoint->progress();
    *flag = r->complete.load(std::memory_order_acquire);
    return *flag ? request_peek(*r, status) : WEFT_SUCCESS;
}

extern "C" int weft_request_get_status(weft_request handle, int *flag, weft_status *status) {
    return request_entry(request_owner(handle), "weft_request_get_status",
                         [&] { return request_get_status_impl(handle, flag, status); });
}

static int request_is_complete_impl(weft_request handle, int *flag) {
    if (int rc = runtime_check("weft_request_is_complete")) return rc;
    if (flag == nullptr) return fail(WEFT_ERR_ARG, "weft_request_is_complete: flag must not be NULL");
    if (handle == WEFT_REQUEST_NULL) {
        *flag = 1;
        return WEFT_SUCCESS;
    }
    request *r = request_lookup(handle);
    if (r == nullptr) return request_invalid("weft_request_is_complete", "request", handle);
    *flag = r->complete.load(std::memory_order_acquire);
    return WEFT_SUCCESS;
}

extern "C" int weft_request_is_complete(weft_request handle, int *flag) {
    return request_entry(request_owner(handle), "weft_request_is_complete",
                         [&] { return request_is_complete_impl(handle, flag); });
}
