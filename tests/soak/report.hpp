// Failure reporting: the first wrong byte, error code or status ends the process with a line
// "weft-soak: FAIL rank R thread T seed S: WHERE: what" on stderr and exit status 1.  WHERE is
// what the thread last announced with doing(), which the watchdog also shows.
#pragma once
#include <string>

#include "weft/weft.h"

namespace soak {

extern thread_local constinit int tl_thread;       // -1: the main thread
extern thread_local constinit char tl_where[256];  // "round 12 p2p(sc_1)": prefixed to failures

[[noreturn]] void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// "code N (text), detail: ..." of a Weft error code.
std::string weft_err(int rc);

// Announces what the calling thread is doing (prefixed to its failures, shown by the watchdog).
void doing(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace soak

// Fails unless call returns WEFT_SUCCESS.
#define WEFT_OK(call)                                                                                  \
    do {                                                                                               \
        int rc_ = (call);                                                                              \
        if (rc_ != WEFT_SUCCESS) ::soak::fail("%s returned %s", #call, ::soak::weft_err(rc_).c_str()); \
    } while (0)
