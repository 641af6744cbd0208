// Error reporting and logging shared by all of core.
#pragma once
#include <cstdarg>
#include <string>

namespace weft {

// Records a detailed message for the calling thread (read back with weft_error_detail), logs it
// at debug level, and returns code, so that entry points can write `return fail(WEFT_ERR_X, ...)`.
int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Clears the calling thread's detail message (entry points that succeed need not call it).
void clear_error_detail();
// Puts back a detail saved from current_error_detail() (around a user error handler, which
// may make calls of its own).
void restore_error_detail(std::string detail);
const std::string &current_error_detail();

// Calls with no communicator (datatypes, ops, info, streams...) report a failure to
// WEFT_COMM_SELF's error handler (MPI 4.0): `return self_error_return(rc, "weft_x");` at each
// exit that may fail (the rules are in comm/errhandler.hpp).  The handlers live in comm/,
// which installs itself in no_comm_error_hook; until then (and in programs without comm/) the
// code is returned as it is.
extern int (*no_comm_error_hook)(int code, const char *fn);
int no_comm_error_raise(int code, const char *fn) __attribute__((cold, noinline));
inline int self_error_return(int code, const char *fn) {
    if (__builtin_expect(code == 0, 1)) return 0;
    return no_comm_error_raise(code, fn);
}

// WEFT_LOG=error|warn|info|debug (default warn).  Lines go to stderr prefixed with
// "weft[<rank>] <level>:".
int log_level();
void log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_set_rank(int rank);

}  // namespace weft
