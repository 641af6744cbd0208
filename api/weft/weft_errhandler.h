/* Weft public C API: error handlers and error classes (MPI 4.0 chapter 9.3-9.5).
 *
 * To be folded into weft.h: the codes below join weft.h's error enum (WEFT_ERR_LASTCODE
 * becomes WEFT_ERR_ERRHANDLER), the rest goes after "---- Errors ----".
 *
 * Every communicator has an error handler, inherited from its parent by weft_comm_dup,
 * weft_comm_split and every other call that creates a communicator from another.  When a call
 * fails, the handler of its communicator runs before the call returns its code; a call on a
 * request uses its request's communicator, a call with no communicator (or with an invalid
 * one) WEFT_COMM_SELF's, as MPI 4.0 says.  The default everywhere is WEFT_ERRORS_RETURN, so
 * a program that never sets a handler sees Weft's native behaviour: every call returns its
 * code and never aborts.  Before weft_init and after weft_finalize no handler runs.
 *
 * The mapping of every WEFT_ERR_* code to its MPI error class is docs/errors.md. */
#ifndef WEFT_WEFT_ERRHANDLER_H
#define WEFT_WEFT_ERRHANDLER_H

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Error codes added with error handlers (the merger folds them into weft.h's enum) ---- */
enum {
    WEFT_ERR_GROUP = 31,     /* invalid group handle (the groups part adds it too: keep one) */
    WEFT_ERR_ERRHANDLER = 32 /* invalid error handler handle, or a predefined one freed */
};

/* Error classes and codes added with weft_add_error_class / weft_add_error_code are numbered
 * from WEFT_ERR_FIRST_USER up, above every predefined code (and room to add more). */
#define WEFT_ERR_FIRST_USER 64

/* ---- Error handlers ---- */
typedef int weft_errhandler;
#define WEFT_ERRHANDLER_NULL ((weft_errhandler)0)
/* Aborts the job (every process of WEFT_COMM_WORLD, as weft_abort does) after printing the
 * error string, the detail message and the call that failed. */
#define WEFT_ERRORS_ARE_FATAL ((weft_errhandler)0xc0000001)
/* Returns the code to the caller: Weft's native behaviour and the default. */
#define WEFT_ERRORS_RETURN ((weft_errhandler)0xc0000002)
/* MPI 4.0: aborts the processes of the communicator, as weft_abort(comm, code) does (which, as
 * in MPICH, ends the whole job); prints the same message as WEFT_ERRORS_ARE_FATAL first. */
#define WEFT_ERRORS_ABORT ((weft_errhandler)0xc0000003)

/* A user handler: *comm is the communicator the error was raised on, *errorcode the code the
 * failing call returns once the handler returns (changing *errorcode does not change that).
 * No further arguments are passed.  The handler runs on the thread of the failing call, with
 * no lock of Weft's held: it may call Weft (including on the same communicator), and it may
 * end the process.  weft_error_detail still reports the original error after it returns. */
typedef void weft_comm_errhandler_function(weft_comm *comm, int *errorcode, ...);

WEFT_API int weft_comm_create_errhandler(weft_comm_errhandler_function *comm_errhandler_fn,
                                         weft_errhandler *errhandler);
/* Attaches errhandler to comm (which keeps it alive even once freed).  WEFT_COMM_NULL is
 * refused with WEFT_ERR_COMM. */
WEFT_API int weft_comm_set_errhandler(weft_comm comm, weft_errhandler errhandler);
/* The handler attached to comm: a new reference to free with weft_errhandler_free (freeing a
 * predefined handler this returned is not needed, and refused). */
WEFT_API int weft_comm_get_errhandler(weft_comm comm, weft_errhandler *errhandler);
/* Runs comm's handler with errorcode, as a failing call would; WEFT_SUCCESS once it returned
 * (WEFT_ERRORS_RETURN: at once; WEFT_ERRORS_ARE_FATAL / WEFT_ERRORS_ABORT do not return). */
WEFT_API int weft_comm_call_errhandler(weft_comm comm, int errorcode);
/* Sets *errhandler to WEFT_ERRHANDLER_NULL; the handler lives on while a communicator uses
 * it.  Predefined handlers are refused (WEFT_ERR_ERRHANDLER). */
WEFT_API int weft_errhandler_free(weft_errhandler *errhandler);

/* ---- Error classes (usable before weft_init and after weft_finalize) ---- */
/* The class of a code: each predefined WEFT_ERR_* is its own class; a code added with
 * weft_add_error_code has the class it was added to.  WEFT_ERR_ARG for any other value. */
WEFT_API int weft_error_class(int errorcode, int *errorclass);
/* A new error class (and code), >= WEFT_ERR_FIRST_USER. */
WEFT_API int weft_add_error_class(int *errorclass);
/* A new error code of errorclass (a predefined class or one added above). */
WEFT_API int weft_add_error_code(int errorclass, int *errorcode);
/* The text weft_error_string returns for an added class or code (at most
 * WEFT_MAX_ERROR_STRING - 1 characters; a later call replaces it).  Predefined codes are
 * refused (WEFT_ERR_ARG). */
WEFT_API int weft_add_error_string(int errorcode, const char *string);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_WEFT_ERRHANDLER_H */
