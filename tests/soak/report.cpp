#include "report.hpp"

#include <unistd.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "error_detail.hpp"
#include "options.hpp"
#include "soak_watchdog.hpp"

namespace soak {

thread_local constinit int tl_thread = -1;            // -1: the main thread
thread_local constinit char tl_where[256] = "setup";  // "round 12 p2p(sc_1)": prefixed to failures

void fail(const char *fmt, ...) {
    char msg[3000];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char line[3600];
    std::snprintf(line, sizeof line, "weft-soak: FAIL rank %d thread %d seed %" PRIu64 ": %s: %s\n", g_rank, tl_thread,
                  opt.seed, tl_where, msg);
    ssize_t w = write(2, line, std::strlen(line));
    (void)w;
    std::fflush(stdout);
    _exit(1);
}

std::string weft_err(int rc) {
    const std::string det = harness::detail();
    return "code " + std::to_string(rc) + " (" + harness::error_string(rc) + ")" +
        (det.empty() ? "" : ", detail: " + det);
}

void doing(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(tl_where, sizeof tl_where, fmt, ap);
    va_end(ap);
    if (tl_activity) {
        std::lock_guard<std::mutex> g(tl_activity->mu);
        std::memcpy(tl_activity->what, tl_where, sizeof tl_where);
        tl_activity->changes.fetch_add(1, std::memory_order_relaxed);
    }
}

}  // namespace soak
