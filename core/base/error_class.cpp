// The class of each error code: predefined codes (with their MPI classes) and added ones.
#include "base/error_class.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "base/error.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

// The name is the enumerator's own spelling, so the table cannot name a code wrongly.
#define WEFT_ROW(code, mpi) \
    { code, #code, mpi }
// MPI has no class for Weft's runtime states, plugins, launchers, streams and busy objects:
// MPICH reports such failures as MPI_ERR_OTHER, and so does the table.
constexpr error_class_row rows[] = {
    WEFT_ROW(WEFT_SUCCESS, "MPI_SUCCESS"),
    WEFT_ROW(WEFT_ERR_ARG, "MPI_ERR_ARG"),
    WEFT_ROW(WEFT_ERR_COMM, "MPI_ERR_COMM"),
    WEFT_ROW(WEFT_ERR_RANK, "MPI_ERR_RANK"),
    WEFT_ROW(WEFT_ERR_TAG, "MPI_ERR_TAG"),
    WEFT_ROW(WEFT_ERR_COUNT, "MPI_ERR_COUNT"),
    WEFT_ROW(WEFT_ERR_TYPE, "MPI_ERR_TYPE"),
    WEFT_ROW(WEFT_ERR_OP, "MPI_ERR_OP"),
    WEFT_ROW(WEFT_ERR_REQUEST, "MPI_ERR_REQUEST"),
    WEFT_ROW(WEFT_ERR_INFO, "MPI_ERR_INFO"),
    WEFT_ROW(WEFT_ERR_INFO_KEY, "MPI_ERR_INFO_KEY"),
    WEFT_ROW(WEFT_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE"),
    WEFT_ROW(WEFT_ERR_INFO_NOKEY, "MPI_ERR_INFO_NOKEY"),
    WEFT_ROW(WEFT_ERR_BUFFER, "MPI_ERR_BUFFER"),
    WEFT_ROW(WEFT_ERR_TRUNCATE, "MPI_ERR_TRUNCATE"),
    WEFT_ROW(WEFT_ERR_NOT_INITIALIZED, "MPI_ERR_OTHER"),
    WEFT_ROW(WEFT_ERR_FINALIZED, "MPI_ERR_OTHER"),
    WEFT_ROW(WEFT_ERR_ALREADY_INITIALIZED, "MPI_ERR_OTHER"),
    WEFT_ROW(WEFT_ERR_NO_MEM, "MPI_ERR_NO_MEM"),
    WEFT_ROW(WEFT_ERR_PLUGIN, "MPI_ERR_OTHER"),
    WEFT_ROW(WEFT_ERR_BOOTSTRAP, "MPI_ERR_OTHER"),
    WEFT_ROW(WEFT_ERR_FABRIC, "MPI_ERR_OTHER"),
    WEFT_ROW(WEFT_ERR_IN_STATUS, "MPI_ERR_IN_STATUS"),
    WEFT_ROW(WEFT_ERR_STREAM, "MPI_ERR_OTHER"),
    WEFT_ROW(WEFT_ERR_NO_ENDPOINT, "MPI_ERR_OTHER"),
    WEFT_ROW(WEFT_ERR_BUSY, "MPI_ERR_OTHER"),
    WEFT_ROW(WEFT_ERR_PROC_FAILED, "MPIX_ERR_PROC_FAILED"),
    WEFT_ROW(WEFT_ERR_UNSUPPORTED, "MPI_ERR_UNSUPPORTED_OPERATION"),
    WEFT_ROW(WEFT_ERR_THREAD, "MPI_ERR_OTHER"),
    WEFT_ROW(WEFT_ERR_INTERNAL, "MPI_ERR_INTERN"),
    WEFT_ROW(WEFT_ERR_NO_DEVICE, "MPI_ERR_OTHER"),
    WEFT_ROW(WEFT_ERR_GROUP, "MPI_ERR_GROUP"),
    WEFT_ROW(WEFT_ERR_ERRHANDLER, "MPI_ERR_ERRHANDLER"),
};
#undef WEFT_ROW
constexpr int predefined_count = static_cast<int>(sizeof rows / sizeof rows[0]);

constexpr bool rows_in_order() {
    for (int i = 0; i < predefined_count; ++i)
        if (rows[i].code != i) return false;
    return true;
}
static_assert(rows_in_order(), "the table lists every code once, in order, without gaps");
static_assert(predefined_count <= WEFT_ERR_FIRST_USER, "added codes start above the predefined ones");

// Added classes and codes: code -> class (a class maps to itself), and their strings.  Rare
// calls: one mutex.  Never destroyed, so that a call during exit finds them.
struct user_errors {
    std::mutex mutex;
    int next = WEFT_ERR_FIRST_USER;
    std::map<int, int> class_of;
    std::map<int, std::string> strings;
};
user_errors &users() {
    static user_errors *u = new user_errors;
    return *u;
}

bool predefined(int code) { return code >= 0 && code < predefined_count; }

}  // namespace

const error_class_row *error_class_rows(size_t *count) {
    *count = static_cast<size_t>(predefined_count);
    return rows;
}

bool error_user_string(int code, char *out) {
    if (predefined(code)) return false;
    user_errors &u = users();
    std::lock_guard lock(u.mutex);
    auto it = u.strings.find(code);
    if (it == u.strings.end()) {
        if (u.class_of.count(code) == 0) return false;
        out[0] = '\0';  // added, no string yet: MPI's empty string
        return true;
    }
    std::strncpy(out, it->second.c_str(), WEFT_MAX_ERROR_STRING - 1);
    out[WEFT_MAX_ERROR_STRING - 1] = '\0';
    return true;
}

}  // namespace weft

using namespace weft;

extern "C" int weft_error_class(int errorcode, int *errorclass) {
    if (errorclass == nullptr) return fail(WEFT_ERR_ARG, "weft_error_class: errorclass must not be NULL");
    if (predefined(errorcode)) {
        *errorclass = errorcode;
        return WEFT_SUCCESS;
    }
    user_errors &u = users();
    std::lock_guard lock(u.mutex);
    auto it = u.class_of.find(errorcode);
    if (it == u.class_of.end())
        return fail(WEFT_ERR_ARG, "weft_error_class: %d is neither a WEFT_ERR_* code nor one added by weft_add_error_*",
                    errorcode);
    *errorclass = it->second;
    return WEFT_SUCCESS;
}

extern "C" int weft_add_error_class(int *errorclass) {
    if (errorclass == nullptr) return fail(WEFT_ERR_ARG, "weft_add_error_class: errorclass must not be NULL");
    user_errors &u = users();
    std::lock_guard lock(u.mutex);
    if (u.next == INT32_MAX) return fail(WEFT_ERR_NO_MEM, "weft_add_error_class: no error code left");
    int c = u.next++;
    u.class_of[c] = c;
    *errorclass = c;
    return WEFT_SUCCESS;
}

extern "C" int weft_add_error_code(int errorclass, int *errorcode) {
    if (errorcode == nullptr) return fail(WEFT_ERR_ARG, "weft_add_error_code: errorcode must not be NULL");
    user_errors &u = users();
    std::lock_guard lock(u.mutex);
    if (!predefined(errorclass)) {
        auto it = u.class_of.find(errorclass);
        if (it == u.class_of.end() || it->second != errorclass)
            return fail(WEFT_ERR_ARG,
                        "weft_add_error_code: %d is not an error class (a WEFT_ERR_* code or one from "
                        "weft_add_error_class)",
                        errorclass);
    }
    if (u.next == INT32_MAX) return fail(WEFT_ERR_NO_MEM, "weft_add_error_code: no error code left");
    int c = u.next++;
    u.class_of[c] = errorclass;
    *errorcode = c;
    return WEFT_SUCCESS;
}

extern "C" int weft_add_error_string(int errorcode, const char *string) {
    if (string == nullptr) return fail(WEFT_ERR_ARG, "weft_add_error_string: string must not be NULL");
    if (predefined(errorcode))
        return fail(WEFT_ERR_ARG, "weft_add_error_string: %d is a predefined code; its text cannot change", errorcode);
    size_t n = std::strlen(string);
    if (n >= WEFT_MAX_ERROR_STRING)
        return fail(WEFT_ERR_ARG, "weft_add_error_string: the string has %zu characters; at most %d", n,
                    WEFT_MAX_ERROR_STRING - 1);
    user_errors &u = users();
    std::lock_guard lock(u.mutex);
    if (u.class_of.count(errorcode) == 0)
        return fail(WEFT_ERR_ARG, "weft_add_error_string: %d was not added by weft_add_error_class or _code",
                    errorcode);
    u.strings[errorcode] = string;
    return WEFT_SUCCESS;
}
