// Error handler objects, their calls, and the dispatch of errors to them.
#include "comm/errhandler.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "base/error.hpp"
#include "base/handle.hpp"
#include "base/lifecycle.hpp"
#include "comm/comm.hpp"
#include "weft/plugin.h"

namespace weft {
namespace {

struct errhandler_obj {
    weft_comm_errhandler_function *fn = nullptr;  // nullptr for the predefined ones
    int refs = 1;                                 // handles and communicators (under the lock)
};

// The table and the lock are never destroyed: communicators release their handler when they
// are destroyed, which may happen during exit.
struct errhandlers {
    std::mutex mutex;  // refcounts and every communicator's errhandler_ref
    handle_table<errhandler_obj> table{handle_kind::errhandler, 16};
    errhandlers() {
        for (weft_errhandler h : {WEFT_ERRORS_ARE_FATAL, WEFT_ERRORS_RETURN, WEFT_ERRORS_ABORT})
            table.put_predefined(handle_slot(h), std::make_shared<errhandler_obj>());
    }
};
errhandlers &handlers() {
    static errhandlers *e = new errhandlers;
    return *e;
}

bool predefined(weft_errhandler h) {
    return h == WEFT_ERRORS_ARE_FATAL || h == WEFT_ERRORS_RETURN || h == WEFT_ERRORS_ABORT;
}

// Under the lock.
void retain_locked(errhandlers &e, weft_errhandler h) {
    if (predefined(h)) return;
    if (errhandler_obj *o = e.table.get(h)) ++o->refs;
}
void release_locked(errhandlers &e, weft_errhandler h) {
    if (predefined(h)) return;
    errhandler_obj *o = e.table.get(h);
    if (o != nullptr && --o->refs == 0) e.table.erase(h);
}

thread_local int internal_depth = 0;

const char *comm_name(weft_comm c, char *buf, size_t size) {
    if (c == WEFT_COMM_WORLD) return "WEFT_COMM_WORLD";
    if (c == WEFT_COMM_SELF) return "WEFT_COMM_SELF";
    snprintf(buf, size, "0x%x", static_cast<unsigned>(c));
    return buf;
}

[[noreturn]] void die(weft_errhandler which, weft_comm comm, int code, const char *fn, bool explicit_call) {
    char text[WEFT_MAX_ERROR_STRING], name[16];
    size_t len = 0;
    weft_error_string(code, text, &len);
    // The detail belongs to the failing call; weft_comm_call_errhandler has none of its own.
    std::string detail = explicit_call ? std::string() : current_error_detail();
    log(WEFT_LOG_ERROR, "error in %s on %s: %s (code %d)%s%s; %s: aborting the job", fn,
        comm_name(comm, name, sizeof name), text, code, detail.empty() ? "" : ": ", detail.c_str(),
        which == WEFT_ERRORS_ABORT ? "WEFT_ERRORS_ABORT" : "WEFT_ERRORS_ARE_FATAL");
    // ERRORS_ABORT aborts comm's processes, ARE_FATAL all of them (MPICH passes a null
    // communicator there); weft_abort ends the whole job either way, as MPICH's does.
    weft_abort(which == WEFT_ERRORS_ABORT ? comm : WEFT_COMM_WORLD, code);
    _exit(1);  // weft_abort does not return
}

// Runs comm's handler (comm valid or not).  explicit_call: weft_comm_call_errhandler, which
// runs it even inside a handler or an internal scope.
void invoke(weft_comm handle, int code, const char *fn, bool explicit_call) {
    if (!runtime_initialized()) return;
    if (!explicit_call && internal_depth > 0) return;
    comm *c = comm_get(handle);
    if (c == nullptr) {
        handle = WEFT_COMM_SELF;
        c = comm_get(handle);
        if (c == nullptr) return;  // finalizing
    }
    weft_errhandler h;
    weft_comm_errhandler_function *f = nullptr;
    {
        errhandlers &e = handlers();
        std::lock_guard lock(e.mutex);
        h = c->errhandler.get_locked();
        if (errhandler_obj *o = e.table.get(h)) f = o->fn;
    }
    if (h == WEFT_ERRORS_ARE_FATAL || h == WEFT_ERRORS_ABORT) die(h, handle, code, fn, explicit_call);
    if (f == nullptr) return;  // WEFT_ERRORS_RETURN
    // The handler may make calls of its own: their errors run no handler (as in MPICH), and
    // the caller still finds the original error's detail afterwards.
    std::string detail = current_error_detail();
    weft_comm arg_comm = handle;
    int arg_code = code;
    ++internal_depth;
    f(&arg_comm, &arg_code);
    --internal_depth;
    restore_error_detail(std::move(detail));
}

}  // namespace

errhandler_ref::errhandler_ref(const errhandler_ref &other) {
    errhandlers &e = handlers();
    std::lock_guard lock(e.mutex);
    handle_ = other.handle_;
    retain_locked(e, handle_);
}

errhandler_ref &errhandler_ref::operator=(const errhandler_ref &other) {
    if (this != &other) {
        errhandlers &e = handlers();
        std::lock_guard lock(e.mutex);
        retain_locked(e, other.handle_);
        release_locked(e, handle_);
        handle_ = other.handle_;
    }
    return *this;
}

errhandler_ref::~errhandler_ref() {
    if (predefined(handle_)) return;
    errhandlers &e = handlers();
    std::lock_guard lock(e.mutex);
    release_locked(e, handle_);
}

weft_errhandler errhandler_ref::get() const {
    errhandlers &e = handlers();
    std::lock_guard lock(e.mutex);
    return handle_;
}

weft_errhandler errhandler_ref::get_locked() const { return handle_; }

bool errhandler_ref::set(weft_errhandler handle) {
    errhandlers &e = handlers();
    std::lock_guard lock(e.mutex);
    if (!predefined(handle) && e.table.get(handle) == nullptr) return false;
    retain_locked(e, handle);
    release_locked(e, handle_);
    handle_ = handle;
    return true;
}

int comm_error_raise(weft_comm comm, int code, const char *fn) {
    invoke(comm, code, fn, false);
    return code;
}

int comm_error_raise_at(const comm *c, int code, const char *fn) {
    weft_comm owner = WEFT_COMM_SELF;
    if (runtime_initialized())
        g_comm_table.for_each([&](int handle, comm &each) {
            if (&each == c) owner = handle;
        });
    return comm_error_raise(owner, code, fn);
}

int request_error_raise(const int *comm_pending, int code, const char *fn) {
    weft_comm owner = WEFT_COMM_SELF;
    if (comm_pending != nullptr && runtime_initialized()) {
        g_comm_table.for_each([&](int handle, comm &c) {
            if (comm_pending >= c.pending.data() && comm_pending < c.pending.data() + c.pending.size()) owner = handle;
        });
    }
    return comm_error_raise(owner, code, fn);
}

// Calls with no communicator (base/error.hpp's self_error_return) come here.
const bool no_comm_hook_installed = [] {
    no_comm_error_hook = [](int code, const char *fn) { return comm_error_raise(WEFT_COMM_SELF, code, fn); };
    return true;
}();

errhandler_internal_scope::errhandler_internal_scope() { ++internal_depth; }
errhandler_internal_scope::~errhandler_internal_scope() { --internal_depth; }

}  // namespace weft

using namespace weft;

extern "C" int weft_comm_create_errhandler(weft_comm_errhandler_function *fn, weft_errhandler *errhandler) {
    const char *name = "weft_comm_create_errhandler";
    if (int rc = runtime_check(name)) return rc;
    if (fn == nullptr || errhandler == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "%s: comm_errhandler_fn and errhandler must not be NULL", name),
                                 name);
    auto o = std::make_shared<errhandler_obj>();
    o->fn = fn;
    int h = handlers().table.insert(std::move(o));
    if (h == 0) return self_error_return(fail(WEFT_ERR_NO_MEM, "%s: too many error handlers", name), name);
    *errhandler = h;
    return WEFT_SUCCESS;
}

extern "C" int weft_comm_set_errhandler(weft_comm handle, weft_errhandler errhandler) {
    const char *name = "weft_comm_set_errhandler";
    if (int rc = runtime_check(name)) return rc;
    comm *c = comm_get(handle);
    if (c == nullptr)
        return comm_error_raise(handle, fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", name, handle),
                                name);
    if (!c->errhandler.set(errhandler))
        return comm_error_raise(
            handle, fail(WEFT_ERR_ERRHANDLER, "%s: 0x%x is not a valid error handler", name, errhandler), name);
    return WEFT_SUCCESS;
}

extern "C" int weft_comm_get_errhandler(weft_comm handle, weft_errhandler *errhandler) {
    const char *name = "weft_comm_get_errhandler";
    if (int rc = runtime_check(name)) return rc;
    comm *c = comm_get(handle);
    if (c == nullptr)
        return comm_error_raise(handle, fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", name, handle),
                                name);
    if (errhandler == nullptr)
        return comm_error_raise(handle, fail(WEFT_ERR_ARG, "%s: errhandler must not be NULL", name), name);
    errhandlers &e = handlers();
    std::lock_guard lock(e.mutex);
    weft_errhandler h = c->errhandler.get_locked();
    retain_locked(e, h);  // the caller's new reference
    *errhandler = h;
    return WEFT_SUCCESS;
}

extern "C" int weft_comm_call_errhandler(weft_comm handle, int errorcode) {
    const char *name = "weft_comm_call_errhandler";
    if (int rc = runtime_check(name)) return rc;
    if (comm_get(handle) == nullptr)
        return comm_error_raise(handle, fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", name, handle),
                                name);
    invoke(handle, errorcode, name, true);
    return WEFT_SUCCESS;
}

extern "C" int weft_errhandler_free(weft_errhandler *errhandler) {
    const char *name = "weft_errhandler_free";
    if (int rc = runtime_check(name)) return rc;
    if (errhandler == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "%s: errhandler must not be NULL", name), name);
    weft_errhandler h = *errhandler;
    if (predefined(h))
        return self_error_return(
            fail(
                WEFT_ERR_ERRHANDLER,
                "%s: WEFT_ERRORS_RETURN, WEFT_ERRORS_ARE_FATAL and WEFT_ERRORS_ABORT are predefined and cannot be freed",
                name),
            name);
    {
        errhandlers &e = handlers();
        std::lock_guard lock(e.mutex);
        if (e.table.get(h) != nullptr) {
            release_locked(e, h);
            *errhandler = WEFT_ERRHANDLER_NULL;
            return WEFT_SUCCESS;
        }
    }
    return self_error_return(
        fail(WEFT_ERR_ERRHANDLER, "%s: 0x%x is not a valid error handler (freed already?)", name, h), name);
}
