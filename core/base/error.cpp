// Error strings, per-thread error detail, and the log.
#include "base/error.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/error_class.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

thread_local std::string error_detail;
std::atomic<int> log_rank{-1};

int parse_log_level() {
    const char *v = std::getenv("WEFT_LOG");
    if (v == nullptr || *v == '\0') return 1;
    if (!std::strcmp(v, "error")) return 0;
    if (!std::strcmp(v, "warn")) return 1;
    if (!std::strcmp(v, "info")) return 2;
    if (!std::strcmp(v, "debug")) return 3;
    std::fprintf(stderr, "weft warn: WEFT_LOG='%s' is not one of error|warn|info|debug; using warn\n", v);
    return 1;
}

void vlog(int level, const char *fmt, va_list ap) {
    static const char *const names[] = {"error", "warn", "info", "debug"};
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    int rank = log_rank.load(std::memory_order_relaxed);
    // One write per line so that lines of different ranks do not interleave mid-line.
    char out[1200];
    int n = rank >= 0 ? snprintf(out, sizeof out, "weft[%d] %s: %s\n", rank, names[level], line)
                      : snprintf(out, sizeof out, "weft %s: %s\n", names[level], line);
    if (n > 0) (void)!write(STDERR_FILENO, out, std::min<size_t>(static_cast<size_t>(n), sizeof out - 1));
}

}  // namespace

int log_level() {
    static const int level = parse_log_level();
    return level;
}

void log_set_rank(int rank) { log_rank.store(rank, std::memory_order_relaxed); }

void log(int level, const char *fmt, ...) {
    if (level > log_level()) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

int fail(int code, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    error_detail = buf;
    log(3, "%s", buf);
    return code;
}

int (*no_comm_error_hook)(int code, const char *fn) = nullptr;

int no_comm_error_raise(int code, const char *fn) { return no_comm_error_hook ? no_comm_error_hook(code, fn) : code; }

void clear_error_detail() { error_detail.clear(); }

void restore_error_detail(std::string detail) { error_detail = std::move(detail); }

const std::string &current_error_detail() { return error_detail; }

}  // namespace weft

namespace {
const char *code_text(int code) {
    switch (code) {
        case WEFT_SUCCESS: return "success";
        case WEFT_ERR_ARG: return "invalid argument";
        case WEFT_ERR_COMM: return "invalid communicator";
        case WEFT_ERR_RANK: return "invalid rank";
        case WEFT_ERR_TAG: return "invalid tag";
        case WEFT_ERR_COUNT: return "invalid count";
        case WEFT_ERR_TYPE: return "invalid datatype";
        case WEFT_ERR_OP: return "invalid reduction operation";
        case WEFT_ERR_REQUEST: return "invalid request";
        case WEFT_ERR_INFO: return "invalid info object";
        case WEFT_ERR_INFO_KEY: return "invalid info key";
        case WEFT_ERR_INFO_VALUE: return "invalid info value";
        case WEFT_ERR_INFO_NOKEY: return "info key not found";
        case WEFT_ERR_BUFFER: return "invalid buffer";
        case WEFT_ERR_TRUNCATE: return "message truncated: receive buffer too small";
        case WEFT_ERR_NOT_INITIALIZED: return "weft is not initialized (call weft_init first)";
        case WEFT_ERR_FINALIZED: return "weft is already finalized";
        case WEFT_ERR_ALREADY_INITIALIZED: return "weft is already initialized";
        case WEFT_ERR_NO_MEM: return "out of memory";
        case WEFT_ERR_PLUGIN: return "no usable plugin";
        case WEFT_ERR_BOOTSTRAP: return "bootstrap (launcher key-value exchange) failed";
        case WEFT_ERR_FABRIC: return "fabric error";
        case WEFT_ERR_IN_STATUS: return "error in status (see each status's error field)";
        case WEFT_ERR_STREAM: return "invalid stream";
        case WEFT_ERR_NO_ENDPOINT: return "no network endpoint left";
        case WEFT_ERR_BUSY: return "object still in use";
        case WEFT_ERR_PROC_FAILED: return "peer process failed";
        case WEFT_ERR_UNSUPPORTED: return "operation not supported";
        case WEFT_ERR_THREAD: return "not allowed at the provided thread level";
        case WEFT_ERR_INTERNAL: return "internal error";
        case WEFT_ERR_NO_DEVICE: return "no GPU driver or device for the queue";
        case WEFT_ERR_GROUP: return "invalid group";
        case WEFT_ERR_ERRHANDLER: return "invalid error handler";
        default: return nullptr;
    }
}

int copy_out(const char *text, char *string, size_t *resultlen, size_t cap) {
    size_t n = std::strlen(text);
    if (n >= cap) n = cap - 1;
    std::memcpy(string, text, n);
    string[n] = '\0';
    *resultlen = n;
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_error_string(int errorcode, char *string, size_t *resultlen) {
    if (string == nullptr || resultlen == nullptr)
        return weft::fail(WEFT_ERR_ARG, "weft_error_string: string and resultlen must not be NULL");
    const char *text = code_text(errorcode);
    if (text == nullptr && weft::error_user_string(errorcode, string)) {
        *resultlen = std::strlen(string);
        return WEFT_SUCCESS;
    }
    if (text == nullptr) {
        char buf[64];
        snprintf(buf, sizeof buf, "unknown error code %d", errorcode);
        copy_out(buf, string, resultlen, WEFT_MAX_ERROR_STRING);
        return WEFT_ERR_ARG;
    }
    return copy_out(text, string, resultlen, WEFT_MAX_ERROR_STRING);
}

extern "C" int weft_error_detail(char *string, size_t *resultlen) {
    if (string == nullptr || resultlen == nullptr) return WEFT_ERR_ARG;
    return copy_out(weft::current_error_detail().c_str(), string, resultlen, WEFT_MAX_ERROR_STRING);
}
