/* What the model counts and how it logs: one line per refused connection or dropped packet on
 * stderr (unless --quiet), and a summary at exit. */
#ifndef WEFT_GASCORE_STATS_HPP
#define WEFT_GASCORE_STATS_HPP

#include <atomic>
#include <cstdint>
#include <string>

#include "gascore_am.hpp"

namespace gascore {

struct stats {
    std::atomic<uint64_t> handled{0}; /* AM packets acted on */
    std::atomic<uint64_t> dropped[drop_reason_count]{};
    std::atomic<uint64_t> refused_connections{0};
    std::atomic<uint64_t> bad_headers{0};   /* Galapagos headers that ended a connection */
    std::atomic<uint64_t> weft_messages{0}; /* Weft tagged-message packets skipped */

    void drop(drop_reason r) { dropped[size_t(r)].fetch_add(1, std::memory_order_relaxed); }
    std::string summary() const;
};

/* printf-style, one line on stderr prefixed "weft-gascore: "; nothing when quiet. */
void set_quiet(bool quiet);
[[gnu::format(printf, 1, 2)]] void log_line(const char *fmt, ...);
/* Always printed (errors that end the program, the summary). */
[[gnu::format(printf, 1, 2)]] void log_always(const char *fmt, ...);

}  // namespace gascore

#endif
