/* Counters and log lines of the model. */
#include "gascore_stats.hpp"

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace gascore {

namespace {
std::atomic<bool> quiet_logs{false};
std::mutex stderr_lock; /* one line at a time from many threads */

void vlog(const char *fmt, va_list ap) {
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    std::lock_guard<std::mutex> g(stderr_lock);
    std::fprintf(stderr, "weft-gascore: %s\n", line);
    std::fflush(stderr);
}
}  // namespace

void set_quiet(bool quiet) { quiet_logs = quiet; }

void log_line(const char *fmt, ...) {
    if (quiet_logs) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void log_always(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

std::string stats::summary() const {
    uint64_t total = 0;
    std::string by_reason;
    for (size_t i = 0; i < drop_reason_count; ++i) {
        uint64_t n = dropped[i].load();
        total += n;
        by_reason += ' ';
        by_reason += drop_reason_name(drop_reason(i));
        by_reason += '=';
        by_reason += std::to_string(n);
    }
    return "handled " + std::to_string(handled.load()) + " packets; dropped " + std::to_string(total) + " (" +
        by_reason.substr(1) + "); refused connections " + std::to_string(refused_connections.load()) +
        "; bad headers " + std::to_string(bad_headers.load()) + "; skipped Weft message packets " +
        std::to_string(weft_messages.load());
}

}  // namespace gascore
