// Weft C++ layer: error handlers and error classes (weft_errhandler.h), in weft.hpp's style.
//
// How they meet weft.hpp's exceptions: the C++ layer throws weft::error for every code a call
// returns.  With the default handler, WEFT_ERRORS_RETURN, C++ programs therefore get
// exceptions (what MPI's C++ bindings called MPI::ERRORS_THROW_EXCEPTIONS).  A user handler
// runs first, inside the failing call, and the exception follows once the call returns;
// WEFT_ERRORS_ARE_FATAL and WEFT_ERRORS_ABORT end the job before any exception.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "weft.h"
#include "weft.hpp"
#include "weft_errhandler.h"

namespace weft {

namespace detail {
// The C++ callables of handlers made by this layer, by handle.  An entry outlives its
// Errhandler (a communicator keeps a freed handler alive); a handle reused later replaces it.
struct errhandler_callables {
    std::mutex mutex;
    std::map<weft_errhandler, std::shared_ptr<const std::function<void(weft_comm, int)>>> by_handle;
    static errhandler_callables &get() {
        static errhandler_callables *c = new errhandler_callables;  // used until exit
        return *c;
    }
};

inline void errhandler_trampoline(weft_comm *comm, int *code, ...) {
    weft_errhandler h = WEFT_ERRHANDLER_NULL;
    if (weft_comm_get_errhandler(*comm, &h) != WEFT_SUCCESS) return;
    std::shared_ptr<const std::function<void(weft_comm, int)>> fn;
    {
        errhandler_callables &c = errhandler_callables::get();
        std::lock_guard lock(c.mutex);
        auto it = c.by_handle.find(h);
        if (it != c.by_handle.end()) fn = it->second;
    }
    weft_errhandler_free(&h);  // get_errhandler's reference
    if (fn) (*fn)(*comm, *code);
}
}  // namespace detail

// An error handler this program made: freed on destruction (a communicator it is set on keeps
// it alive meanwhile).  The predefined ones are plain handles: WEFT_ERRORS_RETURN ...
class Errhandler {
  public:
    // fn(communicator, code) runs inside the failing call, before it returns the code (and
    // before weft.hpp throws).  It must not throw: it runs inside the library.
    explicit Errhandler(std::function<void(Comm, int)> fn) {
        auto callable = std::make_shared<const std::function<void(weft_comm, int)>>(
            [fn = std::move(fn)](weft_comm c, int code) noexcept { fn(Comm(c), code); });
        // No error reaches the handle before it is registered: no communicator has it yet.
        check(weft_comm_create_errhandler(detail::errhandler_trampoline, &h_));
        detail::errhandler_callables &c = detail::errhandler_callables::get();
        std::lock_guard lock(c.mutex);
        c.by_handle[h_] = std::move(callable);
    }
    // A C handler.
    explicit Errhandler(weft_comm_errhandler_function *fn) { check(weft_comm_create_errhandler(fn, &h_)); }
    // Takes ownership of a handle (weft_comm_get_errhandler's reference); a predefined handle
    // is held without being freed.
    static Errhandler adopt(weft_errhandler h) noexcept { return Errhandler(h, 0); }
    ~Errhandler() { reset(); }
    Errhandler(const Errhandler &) = delete;
    Errhandler &operator=(const Errhandler &) = delete;
    Errhandler(Errhandler &&o) noexcept : h_(std::exchange(o.h_, WEFT_ERRHANDLER_NULL)) {}
    Errhandler &operator=(Errhandler &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, WEFT_ERRHANDLER_NULL);
        }
        return *this;
    }
    weft_errhandler handle() const noexcept { return h_; }
    void reset() noexcept {
        if (h_ != WEFT_ERRHANDLER_NULL && h_ != WEFT_ERRORS_RETURN && h_ != WEFT_ERRORS_ARE_FATAL &&
            h_ != WEFT_ERRORS_ABORT)
            weft_errhandler_free(&h_);
        h_ = WEFT_ERRHANDLER_NULL;
    }

  private:
    Errhandler(weft_errhandler h, int) noexcept : h_(h) {}
    weft_errhandler h_ = WEFT_ERRHANDLER_NULL;
};

// comm's handler from now on (communicators created from comm inherit it).
inline void set_errhandler(Comm comm, weft_errhandler h) { check(weft_comm_set_errhandler(comm.handle(), h)); }
inline void set_errhandler(Comm comm, const Errhandler &h) { set_errhandler(comm, h.handle()); }
// comm's handler, as an owning Errhandler (compare handle() with WEFT_ERRORS_RETURN ...).
inline Errhandler get_errhandler(Comm comm) {
    weft_errhandler h = WEFT_ERRHANDLER_NULL;
    check(weft_comm_get_errhandler(comm.handle(), &h));
    return Errhandler::adopt(h);
}
// Runs comm's handler with code, as a failing call would.
inline void call_errhandler(Comm comm, int code) { check(weft_comm_call_errhandler(comm.handle(), code)); }

// ---- Error classes ----
inline int error_class(int code) {
    int cls = 0;
    check(weft_error_class(code, &cls));
    return cls;
}
inline int add_error_class() {
    int cls = 0;
    check(weft_add_error_class(&cls));
    return cls;
}
inline int add_error_code(int error_class) {
    int code = 0;
    check(weft_add_error_code(error_class, &code));
    return code;
}
inline void add_error_string(int code, const std::string &text) { check(weft_add_error_string(code, text.c_str())); }

}  // namespace weft
