// Request calls beside wait and test: weft_start, weft_startall, weft_request_free,
// weft_request_get_status, weft_request_is_complete (transport/persistent.hpp does the work).
#include "base/error.hpp"
#include "comm/request_check.hpp"
#include "transport/persistent.hpp"
#include "transport/runtime.hpp"
#include "weft/weft_persist.h"

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

}  // namespace
}  // namespace weft

using namespace weft;

extern "C" int weft_start(weft_request *handle) {
    if (int rc = runtime_check("weft_start")) return rc;
    if (handle == nullptr) return fail(WEFT_ERR_ARG, "weft_start: request must not be NULL");
    int rc = WEFT_SUCCESS;
    request *r = startable("weft_start", "request", *handle, rc);
    return r != nullptr ? persistent_start(*r) : rc;
}

extern "C" int weft_startall(size_t count, weft_request requests[]) {
    if (int rc = runtime_check("weft_startall")) return rc;
    if (count != 0 && requests == nullptr) return fail(WEFT_ERR_ARG, "weft_startall: requests must not be NULL");
    int rc = WEFT_SUCCESS;
    char what[40];
    for (size_t i = 0; i < count; ++i) {
        std::snprintf(what, sizeof what, "requests[%zu]", i);
        if (startable("weft_startall", what, requests[i], rc) == nullptr) return rc;
        for (size_t j = 0; j < i; ++j)
            if (requests[j] == requests[i])
                return fail(WEFT_ERR_REQUEST, "weft_startall: requests[%zu] and requests[%zu] are the same request", j,
                            i);
    }
    for (size_t i = 0; i < count; ++i)
        if (int e = persistent_start(*request_lookup(requests[i]))) return e;
    return WEFT_SUCCESS;
}

extern "C" int weft_request_free(weft_request *handle) {
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

extern "C" int weft_request_get_status(weft_request handle, int *flag, weft_status *status) {
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

extern "C" int weft_request_is_complete(weft_request handle, int *flag) {
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
