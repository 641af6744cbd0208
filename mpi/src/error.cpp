// Error codes, classes, strings and handlers (MPI 4.0 sections 9.3-9.5) on Weft's.
#include <stdarg.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>

#include "attr.hpp"
#include "handles.hpp"

namespace weft_mpi {

// MPI class (a bare class a program passes, e.g. to MPI_Comm_call_errhandler) -> a Weft code
// of that class.
static int class_to_weft(int c) {
    switch (c) {
        case MPI_ERR_BUFFER: return WEFT_ERR_BUFFER;
        case MPI_ERR_COUNT: return WEFT_ERR_COUNT;
        case MPI_ERR_TYPE: return WEFT_ERR_TYPE;
        case MPI_ERR_TAG: return WEFT_ERR_TAG;
        case MPI_ERR_COMM: return WEFT_ERR_COMM;
        case MPI_ERR_RANK:
        case MPI_ERR_ROOT: return WEFT_ERR_RANK;
        case MPI_ERR_GROUP: return WEFT_ERR_GROUP;
        case MPI_ERR_OP: return WEFT_ERR_OP;
        case MPI_ERR_ARG: return WEFT_ERR_ARG;
        case MPI_ERR_TRUNCATE: return WEFT_ERR_TRUNCATE;
        case MPI_ERR_OTHER: return WEFT_ERR_FABRIC;
        case MPI_ERR_INTERN: return WEFT_ERR_INTERNAL;
        case MPI_ERR_IN_STATUS: return WEFT_ERR_IN_STATUS;
        case MPI_ERR_REQUEST: return WEFT_ERR_REQUEST;
        case MPI_ERR_INFO: return WEFT_ERR_INFO;
        case MPI_ERR_INFO_KEY: return WEFT_ERR_INFO_KEY;
        case MPI_ERR_INFO_VALUE: return WEFT_ERR_INFO_VALUE;
        case MPI_ERR_INFO_NOKEY: return WEFT_ERR_INFO_NOKEY;
        case MPI_ERR_NO_MEM: return WEFT_ERR_NO_MEM;
        case MPI_ERR_UNSUPPORTED_OPERATION: return WEFT_ERR_UNSUPPORTED;
        case MPIX_ERR_PROC_FAILED: return WEFT_ERR_PROC_FAILED;
        default: return WEFT_ERR_INTERNAL;
    }
}

int werr(int m) {
    if (m == MPI_SUCCESS) return WEFT_SUCCESS;
    if (m & dynamic_bit) return m & ~dynamic_bit;
    if (m >= 256 && (m >> 8) < WEFT_ERR_FIRST_USER) return m >> 8;
    return class_to_weft(m);
}

int fail(weft_comm comm, int weft_code, const char *fmt, ...) {
    weft_errhandler h = WEFT_ERRHANDLER_NULL;
    if (weft_comm_get_errhandler(comm, &h) != WEFT_SUCCESS) comm = WEFT_COMM_SELF, weft_comm_get_errhandler(comm, &h);
    if (h == WEFT_ERRORS_ARE_FATAL || h == WEFT_ERRORS_ABORT) {
        // The handler prints Weft's detail, which knows nothing of this failure: say it first.
        va_list ap;
        va_start(ap, fmt);
        std::fputs("Weft MPI front end: ", stderr);
        std::vfprintf(stderr, fmt, ap);
        std::fputc('\n', stderr);
        va_end(ap);
    } else if (h != WEFT_ERRORS_RETURN && h != WEFT_ERRHANDLER_NULL) {
        weft_errhandler_free(&h);
    }
    weft_comm_call_errhandler(comm, weft_code);
    return merr(weft_code);
}

}  // namespace weft_mpi

using namespace weft_mpi;

namespace {
bool valid_class(int c) { return (c >= MPI_SUCCESS && c <= 77) || (c >= 101 && c <= 105); }
}  // namespace

extern "C" int PMPI_Error_class(int errorcode, int *errorclass) {
    if (errorclass == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Error_class: errorclass is NULL");
    if (errorcode & dynamic_bit) {
        int c;
        if (int rc = weft_error_class(errorcode & ~dynamic_bit, &c)) return merr(rc);
        *errorclass = c >= WEFT_ERR_FIRST_USER ? (c | dynamic_bit) : weft_code_class.rows[c];
        return MPI_SUCCESS;
    }
    if (errorcode >= 256 && (errorcode >> 8) < WEFT_ERR_FIRST_USER) {
        *errorclass = errorcode & 0xff;
        return MPI_SUCCESS;
    }
    if (!valid_class(errorcode))
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Error_class: %d is not an error code", errorcode);
    *errorclass = errorcode;
    return MPI_SUCCESS;
}

extern "C" int PMPI_Error_string(int errorcode, char *string, int *resultlen) {
    if (string == nullptr || resultlen == nullptr)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Error_string: string and resultlen must not be NULL");
    if (errorcode == MPI_SUCCESS) {
        *resultlen = std::snprintf(string, MPI_MAX_ERROR_STRING, "No MPI error");
        return MPI_SUCCESS;
    }
    size_t n = 0;
    if (int rc = weft_error_string(werr(errorcode), string, &n)) return merr(rc);
    *resultlen = static_cast<int>(n);
    return MPI_SUCCESS;
}

extern "C" int PMPI_Add_error_class(int *errorclass) {
    if (errorclass == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Add_error_class: errorclass is NULL");
    int c;
    if (int rc = weft_add_error_class(&c)) return merr(rc);
    *errorclass = c | dynamic_bit;
    last_used_code = std::max(last_used_code, *errorclass);
    return MPI_SUCCESS;
}

extern "C" int PMPI_Add_error_code(int errorclass, int *errorcode) {
    if (errorcode == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Add_error_code: errorcode is NULL");
    int c;
    if (int rc = weft_add_error_code(werr(errorclass), &c)) return merr(rc);
    *errorcode = c | dynamic_bit;
    last_used_code = std::max(last_used_code, *errorcode);
    return MPI_SUCCESS;
}

extern "C" int PMPI_Add_error_string(int errorcode, const char *string) {
    if (!(errorcode & dynamic_bit))
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Add_error_string: %d was not added by MPI_Add_error_class/code",
                    errorcode);
    return merr(weft_add_error_string(errorcode & ~dynamic_bit, string));
}

// ---- user error handlers: Weft calls a weft_comm_errhandler_function with Weft's comm and
// code and no user data, so each distinct MPI function gets a trampoline of its own (one
// function, one slot, for the life of the process: a handler lives on while communicators use
// it, and a function registered again reuses its slot). ----
namespace {
constexpr int max_user_handlers = 64;
std::atomic<MPI_Comm_errhandler_function *> user_handlers[max_user_handlers];
std::mutex user_handlers_lock;

template <int I>
void trampoline(weft_comm *comm, int *code, ...) {
    MPI_Comm c = mcomm(*comm);
    int e = merr(*code);
    user_handlers[I].load(std::memory_order_acquire)(&c, &e);
}
template <int... I>
constexpr weft_comm_errhandler_function *trampolines_of(int i, std::integer_sequence<int, I...>) {
    weft_comm_errhandler_function *t[] = {&trampoline<I>...};
    return t[i];
}
weft_comm_errhandler_function *trampoline_at(int i) {
    return trampolines_of(i, std::make_integer_sequence<int, max_user_handlers>{});
}
}  // namespace

extern "C" int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler) {
    if (fn == nullptr || errhandler == nullptr)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG,
                    "MPI_Comm_create_errhandler: function and errhandler must not be NULL");
    int slot = -1;
    {
        std::lock_guard<std::mutex> g(user_handlers_lock);
        for (int i = 0; i < max_user_handlers && slot < 0; ++i) {
            MPI_Comm_errhandler_function *cur = user_handlers[i].load(std::memory_order_relaxed);
            if (cur == fn)
                slot = i;
            else if (cur == nullptr)
                user_handlers[i].store(fn, std::memory_order_release), slot = i;
        }
    }
    if (slot < 0)
        return fail(WEFT_COMM_SELF, WEFT_ERR_NO_MEM,
                    "MPI_Comm_create_errhandler: more than %d distinct handler functions", max_user_handlers);
    weft_errhandler h = WEFT_ERRHANDLER_NULL;
    if (int rc = weft_comm_create_errhandler(trampoline_at(slot), &h)) return merr(rc);
    *errhandler = merrh(h);
    return MPI_SUCCESS;
}

extern "C" int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
    return merr(weft_comm_set_errhandler(wcomm(comm), werrh(errhandler)));
}
extern "C" int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler) {
    if (errhandler == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Comm_get_errhandler: errhandler is NULL");
    weft_errhandler h = WEFT_ERRHANDLER_NULL;
    if (int rc = weft_comm_get_errhandler(wcomm(comm), &h)) return merr(rc);
    *errhandler = merrh(h);
    return MPI_SUCCESS;
}
extern "C" int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
    return merr(weft_comm_call_errhandler(wcomm(comm), werr(errorcode)));
}
extern "C" int PMPI_Errhandler_free(MPI_Errhandler *errhandler) {
    if (errhandler == nullptr) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Errhandler_free: errhandler is NULL");
    weft_errhandler h = werrh(*errhandler);
    // MPI lets a program free a handler MPI_Comm_get_errhandler returned, predefined or not.
    if (h == WEFT_ERRORS_ARE_FATAL || h == WEFT_ERRORS_RETURN || h == WEFT_ERRORS_ABORT) {
        *errhandler = MPI_ERRHANDLER_NULL;
        return MPI_SUCCESS;
    }
    if (int rc = weft_errhandler_free(&h)) return merr(rc);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

#define WEFT_MPI_FAMILY_error 1
#include "alias.hpp"
