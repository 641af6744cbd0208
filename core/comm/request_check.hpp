// Validation shared by the request calls of comm/request_calls.cpp and comm/wait_some.cpp.
#pragma once
#include <cstdio>

#include "base/error.hpp"
#include "base/handle.hpp"
#include "transport/request.hpp"

namespace weft {

// Fails with WEFT_ERR_REQUEST: `what` (e.g. "request", "requests[3]") = handle is not a valid
// request, and why where that can be told.
inline int request_invalid(const char *fn, const char *what, weft_request handle) {
    const char *why = "";
    if (handle_kind_bits(handle) == static_cast<uint32_t>(handle_kind::enqueue))
        why = " (it was made by an enqueue call: complete it with weft_wait_enqueue)";
    else if (request_retired(handle))
        why =
            " (that request was already completed and freed, which set the handle it was given to"
            " WEFT_REQUEST_NULL: this is a stale copy)";
    return fail(WEFT_ERR_REQUEST, "%s: %s = 0x%x is not a valid request%s", fn, what, handle, why);
}

// Every handle of requests[0, count) null or valid before any is touched.
inline int requests_check(const char *fn, size_t count, const weft_request *requests) {
    if (count != 0 && requests == nullptr) return fail(WEFT_ERR_ARG, "%s: requests must not be NULL", fn);
    for (size_t i = 0; i < count; ++i)
        if (requests[i] != WEFT_REQUEST_NULL && request_lookup(requests[i]) == nullptr) {
            char what[40];
            std::snprintf(what, sizeof what, "requests[%zu]", i);
            return request_invalid(fn, what, requests[i]);
        }
    return WEFT_SUCCESS;
}

}  // namespace weft
