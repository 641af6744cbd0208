// Error handlers: each communicator's handler, and the dispatch every entry point's error exit
// goes through (MPI 4.0 section 9.3).
//
// HOW AN ENTRY POINT USES IT.  At every exit that may return an error, return through one of
// the functions below instead of returning the code itself.  They cost the success path one
// predicted branch on the code (none at an exit that only errors reach); the handler's work is
// out of line, in the cold section.  fn is the entry point's name, printed by
// WEFT_ERRORS_ARE_FATAL.
//
//   - A call that takes a communicator (weft_send, weft_barrier, weft_comm_dup, ...): the
//     handle it was given, valid or not (an invalid one uses WEFT_COMM_SELF's handler):
//         if (int rc = check(...)) return comm_error_raise(handle, rc, "weft_x");  // rc != 0
//         return comm_error_return(handle, do_it(...), "weft_x");               // rc may be 0
//     A call that reaches its communicator through another object (a PGAS kernel, a stream
//     communicator's queue) passes that communicator's handle.
//   - A call on requests (wait, test, waitall, cancel, request_free, start ...): the
//     communicator of the request, which request_error_raise finds from the request's
//     comm_pending (read it before the request is released); nullptr (unknown, a null or
//     invalid handle) uses WEFT_COMM_SELF's handler:
//         int *owner = r->comm_pending;  int rc = retire(r, ...);
//         return request_error_return(owner, rc, "weft_wait");
//   - A call with no communicator (weft_type_*, weft_op_*, weft_info_* after init,
//     weft_group_*, weft_stream_create ...): self_error_return(rc, "weft_x") (base/error.hpp,
//     usable from every layer).
// A failed runtime_check needs no dispatch (no handler runs before weft_init or after
// weft_finalize).  Return only once every internal lock is released: the handler may call Weft.
// Return through them at the outermost entry point only: when an entry point calls another
// public one (as weft_probe calls weft_iprobe), call a non-dispatching inner function instead,
// or make the calls inside an errhandler_internal_scope, so that the handler runs once.  A
// cold entry point may simply be split in two (what enqueue_api.cpp, stream.cpp and pgas.cpp
// do):
//     namespace { int x_impl(args) { ...returns codes as before... } }
//     extern "C" int weft_x(args) {
//         int rc;
//         {
//             errhandler_internal_scope inner;  // its own public calls run no handler
//             rc = x_impl(args);
//         }
//         return comm_error_return(comm, rc, "weft_x");
//     }
// (the scope is a thread-local increment: leave it out of message paths that call nothing
// public).  Core code that calls a public entry point for its own purposes (a progress
// thread's weft_test) does so inside an errhandler_internal_scope: no user handler runs there.
// A hot path that no longer holds the handle at its error exit may pass the comm object:
// comm_error_return_at(c, rc, fn) finds the handle only on error.
//
// A call that creates a communicator from another gives it the parent's handler:
//     child->errhandler = parent.errhandler;
// (weft_comm_dup, weft_comm_split and the stream communicators do; a copy of the parent's
// struct comm copies it too).  Before weft_init and after weft_finalize no handler runs.
#pragma once
#include "base/error.hpp"
#include "weft/weft.h"

namespace weft {

// The handler attached to a communicator (a member of struct comm): WEFT_ERRORS_RETURN unless
// set.  Copies share the handler and keep it alive (a user handler is freed once no handle
// and no communicator refers to it).  Read and written under the handlers' lock.
class errhandler_ref {
  public:
    errhandler_ref() = default;
    errhandler_ref(const errhandler_ref &other);
    errhandler_ref &operator=(const errhandler_ref &other);
    ~errhandler_ref();
    weft_errhandler get() const;
    weft_errhandler get_locked() const;  // the handlers' lock held (errhandler.cpp)
    // false (and no change) when handle is not a predefined handler or a live user one.
    bool set(weft_errhandler handle);

  private:
    weft_errhandler handle_ = WEFT_ERRORS_RETURN;
};

// Runs the handler of comm (WEFT_COMM_SELF's when comm is not a valid communicator) for code,
// which must not be WEFT_SUCCESS, and returns code.  Cold and out of line.
int comm_error_raise(weft_comm comm, int code, const char *fn) __attribute__((cold, noinline));
// The same for a communicator known by its object (a hot path's error exit, where keeping the
// handle alive would cost a register; the handle is looked up only on error).
struct comm;
int comm_error_raise_at(const comm *c, int code, const char *fn) __attribute__((cold, noinline));
// The same for the communicator whose pending counter (request::comm_pending) is comm_pending.
int request_error_raise(const int *comm_pending, int code, const char *fn) __attribute__((cold, noinline));

inline int comm_error_return(weft_comm comm, int code, const char *fn) {
    if (__builtin_expect(code == WEFT_SUCCESS, 1)) return WEFT_SUCCESS;
    return comm_error_raise(comm, code, fn);
}
inline int comm_error_return_at(const comm *c, int code, const char *fn) {
    if (__builtin_expect(code == WEFT_SUCCESS, 1)) return WEFT_SUCCESS;
    return comm_error_raise_at(c, code, fn);
}
inline int request_error_return(const int *comm_pending, int code, const char *fn) {
    if (__builtin_expect(code == WEFT_SUCCESS, 1)) return WEFT_SUCCESS;
    return request_error_raise(comm_pending, code, fn);
}

// While one is alive on a thread, errors raised on that thread run no handler (the code is
// returned as with WEFT_ERRORS_RETURN).  For core code that calls public entry points.
class errhandler_internal_scope {
  public:
    errhandler_internal_scope();
    ~errhandler_internal_scope();
    errhandler_internal_scope(const errhandler_internal_scope &) = delete;
    errhandler_internal_scope &operator=(const errhandler_internal_scope &) = delete;
};

// An entry point whose body (impl, returning a code) may call public entry points: runs it in
// an errhandler_internal_scope, then returns through comm's handler, the request owner's or
// WEFT_COMM_SELF's.  The entry points of the calls added with issue 22 are written this way:
//     extern "C" int weft_x(weft_comm comm, ...) {
//         return comm_entry(comm, "weft_x", [&] { return x_impl(comm, ...); });
//     }
template <class Impl>
int comm_entry(weft_comm comm, const char *fn, Impl &&impl) {
    int rc;
    {
        errhandler_internal_scope inner;
        rc = impl();
    }
    return comm_error_return(comm, rc, fn);
}
template <class Impl>
int request_entry(const int *owner, const char *fn, Impl &&impl) {
    int rc;
    {
        errhandler_internal_scope inner;
        rc = impl();
    }
    return request_error_return(owner, rc, fn);
}
template <class Impl>
int self_entry(const char *fn, Impl &&impl) {
    int rc;
    {
        errhandler_internal_scope inner;
        rc = impl();
    }
    return self_error_return(rc, fn);
}

}  // namespace weft
