// Fuzz target: the parsers of environment variables.
//  - WEFT_FABRIC / info weft_fabric lists: loader_parse_preference (core/loader/loader.cpp);
//  - counts and sizes: env_count and read_endpoint_config (core/init/init.cpp: WEFT_NUM_VCIS,
//    WEFT_RESERVED_VCIS, WEFT_POLLS_BEFORE_YIELD, WEFT_THREAD_CS), local_processes
//    (WEFT_LOCAL_SIZE, SLURM_STEP_TASKS_PER_NODE, ...); kvs::env_int (wire/kvs_wire.hpp: WEFT_RANK,
//    WEFT_SIZE, PMI_FD, PMI_RANK, PMI_SIZE) and kvs::timeout_from_env (WEFT_BOOTSTRAP_TIMEOUT).
// runtime.cpp's parsers are file-local: this file includes runtime.cpp and links the rest of
// core (see CMakeLists.txt).
//
// Input: length-prefixed strings, one per variable (each cut at its first NUL).
//
// Invariants:
//  - a preference list parses exactly when every comma-separated item, trimmed of blanks, is
//    empty or [^]name with name in [a-z0-9_-]+; the result lists the names in order, and joining
//    it back ("a,b,^c") parses to the same lists;
//  - a number parses exactly as a reference reading of strtol/strtoul's grammar says (leading
//    blanks, a sign, decimal digits, nothing after), within the variable's bounds, and to the same
//    value; a rejected one names the variable in the error detail; an unset or empty one gives
//    the default.
#include <cctype>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "kvs_wire.hpp"
#include "loader/loader.hpp"
// The code under test, with its file-local parsers.
#include "init/init.cpp"

namespace {

// strtol / strtoul's decimal grammar: blanks, an optional sign, at least one digit, and then
// the end of the string.  The magnitude saturates at 2^64.
struct number {
    bool neg = false;
    unsigned __int128 mag = 0;
};
std::optional<number> reference_number(const std::string &s) {
    size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    number n;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) n.neg = s[i++] == '-';
    size_t digits = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++digits)
        if (n.mag <= (unsigned __int128)1 << 64) n.mag = n.mag * 10 + static_cast<unsigned>(s[i] - '0');
    if (digits == 0 || i != s.size()) return std::nullopt;
    return n;
}

// kvs::env_int's verdict: 0 and the value, 1 unset/empty, -1 otherwise.
int reference_env_int(const std::string *v, long lo, long hi, long &out) {
    if (!v || v->empty()) return 1;
    auto n = reference_number(*v);
    if (!n) return -1;
    __int128 x = n->neg ? -(__int128)n->mag : (__int128)n->mag;
    if (x < LONG_MIN || x > LONG_MAX || x < lo || x > hi) return -1;
    out = static_cast<long>(x);
    return 0;
}

fuzz::env_var g_vars[] = {
    fuzz::env_var("WEFT_SIZE"),          fuzz::env_var("WEFT_BOOTSTRAP_TIMEOUT"),    fuzz::env_var("WEFT_NUM_VCIS"),
    fuzz::env_var("WEFT_RESERVED_VCIS"), fuzz::env_var("WEFT_POLLS_BEFORE_YIELD"),   fuzz::env_var("WEFT_THREAD_CS"),
    fuzz::env_var("WEFT_LOCAL_SIZE"),    fuzz::env_var("SLURM_STEP_TASKS_PER_NODE"),
};
enum { v_size, v_timeout, v_num_vcis, v_reserved, v_polls, v_cs, v_local, v_slurm, nvars };

void check_preference(const std::string &text) {
    weft::fabric_preference pref;
    pref.include = {"stale"};  // must be replaced
    std::string why;
    bool ok = weft::loader_parse_preference(text, pref, why);

    // Reference: split at commas, trim blanks, check names.
    std::vector<std::string> inc, exc;
    bool valid = true;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        std::string item = text.substr(start, end - start);
        start = end + 1;
        size_t a = item.find_first_not_of(" \t");
        if (a == std::string::npos) continue;
        item = item.substr(a, item.find_last_not_of(" \t") - a + 1);
        bool ex = item[0] == '^';
        if (ex) item.erase(0, 1);
        if (item.empty() || item.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos) {
            valid = false;
            break;
        }
        (ex ? exc : inc).push_back(item);
    }
    // Only separators: nothing named.
    const bool names_nothing =
        valid && inc.empty() && exc.empty() && text.find_first_not_of(" \t") != std::string::npos;
    if (names_nothing) valid = false;
    FUZZ_CHECK(ok == valid);
    if (!ok) {
        FUZZ_CHECK(why.find(names_nothing ? "names no plugin" : "is not a plugin name") != std::string::npos);
        return;
    }
    FUZZ_CHECK(pref.include == inc && pref.exclude == exc);
    // Joined back, the lists parse to themselves.
    std::string joined;
    for (auto &n : pref.include) joined += (joined.empty() ? "" : ",") + n;
    for (auto &n : pref.exclude) joined += (joined.empty() ? "^" : ",^") + n;
    weft::fabric_preference again;
    FUZZ_CHECK(weft::loader_parse_preference(joined, again, why));
    FUZZ_CHECK(again.include == pref.include && again.exclude == pref.exclude);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz::input in(data, size);
    check_preference(std::string(in.str()));

    // Each variable: unset (length byte 255), or set to the next string.
    std::string values[nvars];
    bool set[nvars];
    for (int i = 0; i < nvars; ++i) {
        uint8_t len = in.u8();
        set[i] = len != 255;
        std::string_view v = in.bytes(len == 255 ? 0 : len);
        values[i] = std::string(v.substr(0, v.find('\0')));
        if (set[i])
            g_vars[i].set(values[i]);
        else
            g_vars[i].unset();
    }
    auto val = [&](int i) -> const std::string * { return set[i] ? &values[i] : nullptr; };

    // kvs::env_int (WEFT_SIZE: 1..INT_MAX, as bootstrap_weftrun_open reads it).
    {
        long out = -7, expect_out = -7;
        int rc = weft::kvs::env_int("WEFT_SIZE", 1, INT_MAX, out);
        int expect = reference_env_int(val(v_size), 1, INT_MAX, expect_out);
        FUZZ_CHECK(rc == expect && out == expect_out);
    }
    // kvs::timeout_from_env.
    {
        int seconds = -1;
        std::string why;
        bool ok = weft::kvs::timeout_from_env(seconds, why);
        long t = weft::kvs::default_timeout_s;
        int r = reference_env_int(val(v_timeout), 1, 86400L * 365, t);
        FUZZ_CHECK(ok == (r >= 0) && seconds == (r == 0 ? t : weft::kvs::default_timeout_s));
        if (!ok) FUZZ_CHECK(why.find("WEFT_BOOTSTRAP_TIMEOUT") != std::string::npos);
    }
    // env_count (strtoul's grammar, a leading '-' refused) through read_endpoint_config.
    {
        auto count = [&](int i, uint32_t fallback, uint32_t lo, uint32_t hi) -> std::optional<uint32_t> {
            const std::string *v = val(i);
            if (!v || v->empty()) return fallback;
            auto n = reference_number(*v);
            if (!n || (*v)[0] == '-') return std::nullopt;
            unsigned __int128 x = n->mag;
            if (n->neg && x != 0) {  // strtoul negates in unsigned long; out of range unless it wraps into it
                if (x > ULONG_MAX) return std::nullopt;
                x = static_cast<unsigned long>(-static_cast<unsigned long>(x));
            }
            if (x > ULONG_MAX || x < lo || x > hi) return std::nullopt;
            return static_cast<uint32_t>(x);
        };
        // WEFT_POLLS_BEFORE_YIELD's default depends on the machine: check the parse directly.
        uint32_t polls = 0;
        int rc = weft::env_count("WEFT_POLLS_BEFORE_YIELD", 512, 1, 1u << 30, polls);
        auto expect_polls = count(v_polls, 512, 1, 1u << 30);
        FUZZ_CHECK((rc == WEFT_SUCCESS) == expect_polls.has_value());
        if (rc == WEFT_SUCCESS)
            FUZZ_CHECK(polls == *expect_polls);
        else
            FUZZ_CHECK(weft::current_error_detail().find("WEFT_POLLS_BEFORE_YIELD") != std::string::npos);

        weft::runtime r;
        rc = weft::read_endpoint_config(r);
        auto nv = count(v_num_vcis, 1, 1, 64), nr = count(v_reserved, 8, 0, 191);
        const std::string *cs = val(v_cs);
        bool cs_ok = !cs || cs->empty() || *cs == "global" || *cs == "vci";
        bool expect_ok = expect_polls && nv && nr && cs_ok;
        FUZZ_CHECK((rc == WEFT_SUCCESS) == expect_ok);
        if (expect_ok) FUZZ_CHECK(r.num_implicit == *nv && r.num_reserved == *nr && weft::g_polls_before_yield >= 1);
        (void)weft::local_processes();
    }
    return 0;
}
