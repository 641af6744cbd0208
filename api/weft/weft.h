/* Weft public C API (C11 and C++).
 *
 * Naming rule: where MPI/MPIX has a counterpart, the call has the same name with the prefix
 * `weft_` and the same argument order; counts are size_t.  Every call returns an error code
 * (WEFT_SUCCESS or a WEFT_ERR_* value); none aborts the process on bad input.
 *
 * Handles are 32-bit integers that encode their kind, so a handle of the wrong kind, a freed
 * handle or garbage is detected and reported (WEFT_ERR_COMM, WEFT_ERR_TYPE, ...) instead of
 * being dereferenced.  Every kind's null handle is 0. */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1
#define WEFT_VERSION_PATCH 0

/* ---- Error codes (stable numbers: they cross process and plugin boundaries) ---- */
enum {
    WEFT_SUCCESS = 0,
    WEFT_ERR_ARG = 1,              /* an argument is invalid (null pointer, bad value) */
    WEFT_ERR_COMM = 2,             /* invalid communicator handle */
    WEFT_ERR_RANK = 3,             /* rank out of range for the communicator */
    WEFT_ERR_TAG = 4,              /* tag negative (other than WEFT_ANY_TAG) or > WEFT_TAG_UB */
    WEFT_ERR_COUNT = 5,            /* count too large */
    WEFT_ERR_TYPE = 6,             /* invalid or uncommitted datatype */
    WEFT_ERR_OP = 7,               /* invalid reduction operation, or op/type mismatch */
    WEFT_ERR_REQUEST = 8,          /* invalid request handle */
    WEFT_ERR_INFO = 9,             /* invalid info handle */
    WEFT_ERR_INFO_KEY = 10,        /* info key empty or longer than WEFT_MAX_INFO_KEY */
    WEFT_ERR_INFO_VALUE = 11,      /* info value too long, or not valid hex for get_hex */
    WEFT_ERR_INFO_NOKEY = 12,      /* info key not present (delete) or n out of range */
    WEFT_ERR_BUFFER = 13,          /* null buffer with a non-zero count */
    WEFT_ERR_TRUNCATE = 14,        /* message larger than the receive buffer */
    WEFT_ERR_NOT_INITIALIZED = 15, /* called before weft_init */
    WEFT_ERR_FINALIZED = 16,       /* called after weft_finalize */
    WEFT_ERR_ALREADY_INITIALIZED = 17,
    WEFT_ERR_NO_MEM = 18,
    WEFT_ERR_PLUGIN = 19,      /* no usable plugin: missing, wrong ABI, failed to open */
    WEFT_ERR_BOOTSTRAP = 20,   /* launcher/PMI/PMIx key-value exchange failed */
    WEFT_ERR_FABRIC = 21,      /* the fabric reported a failure */
    WEFT_ERR_IN_STATUS = 22,   /* see the error field of each status (waitall, testall) */
    WEFT_ERR_STREAM = 23,      /* invalid stream handle or stream misuse */
    WEFT_ERR_NO_ENDPOINT = 24, /* no network endpoint left (see WEFT_RESERVED_VCIS) */
    WEFT_ERR_BUSY = 25,        /* object still in use (pending operations, communicators) */
    WEFT_ERR_PROC_FAILED = 26, /* a peer process failed */
    WEFT_ERR_UNSUPPORTED = 27, /* valid request this build or fabric cannot do */
    WEFT_ERR_THREAD = 28,      /* call not allowed at the provided thread level */
    WEFT_ERR_INTERNAL = 29,
    WEFT_ERR_NO_DEVICE = 30,  /* no GPU driver or device for the queue (see the message) */
    WEFT_ERR_GROUP = 31,      /* invalid group handle, or a group that is not a subset where one must be */
    WEFT_ERR_ERRHANDLER = 32, /* invalid error handler handle, or a predefined one freed */
    WEFT_ERR_LASTCODE = 32
};

#define WEFT_MAX_ERROR_STRING 512
#define WEFT_MAX_PROCESSOR_NAME 256
#define WEFT_MAX_INFO_KEY 255
#define WEFT_MAX_INFO_VAL 4096

/* ---- Handles ---- */
typedef int weft_comm;
typedef int weft_info;
typedef int weft_stream;
typedef int weft_request;
typedef int weft_datatype;
typedef int weft_op;

#define WEFT_COMM_NULL ((weft_comm)0)
#define WEFT_COMM_WORLD ((weft_comm)0x10000001)
#define WEFT_COMM_SELF ((weft_comm)0x10000002)
#define WEFT_INFO_NULL ((weft_info)0)
#define WEFT_STREAM_NULL ((weft_stream)0)
#define WEFT_REQUEST_NULL ((weft_request)0)
#define WEFT_DATATYPE_NULL ((weft_datatype)0)
#define WEFT_OP_NULL ((weft_op)0)

/* Built-in datatypes. */
#define WEFT_BYTE ((weft_datatype)0x50000001)
#define WEFT_CHAR ((weft_datatype)0x50000002)
#define WEFT_INT8_T ((weft_datatype)0x50000003)
#define WEFT_UINT8_T ((weft_datatype)0x50000004)
#define WEFT_INT16_T ((weft_datatype)0x50000005)
#define WEFT_UINT16_T ((weft_datatype)0x50000006)
#define WEFT_INT32_T ((weft_datatype)0x50000007)
#define WEFT_UINT32_T ((weft_datatype)0x50000008)
#define WEFT_INT64_T ((weft_datatype)0x50000009)
#define WEFT_UINT64_T ((weft_datatype)0x5000000a)
#define WEFT_INT ((weft_datatype)0x5000000b)
#define WEFT_LONG ((weft_datatype)0x5000000c)
#define WEFT_FLOAT ((weft_datatype)0x5000000d)
#define WEFT_DOUBLE ((weft_datatype)0x5000000e)
#define WEFT_UNSIGNED ((weft_datatype)0x5000000f)
#define WEFT_UNSIGNED_LONG ((weft_datatype)0x50000010)
#define WEFT_SHORT ((weft_datatype)0x50000011)
#define WEFT_UNSIGNED_SHORT ((weft_datatype)0x50000012)
#define WEFT_LONG_LONG ((weft_datatype)0x50000013)
#define WEFT_UNSIGNED_LONG_LONG ((weft_datatype)0x50000014)
#define WEFT_SIGNED_CHAR ((weft_datatype)0x50000015)
#define WEFT_UNSIGNED_CHAR ((weft_datatype)0x50000016)
#define WEFT_C_BOOL ((weft_datatype)0x50000017)
#define WEFT_LONG_DOUBLE ((weft_datatype)0x50000018)
/* Pair types for MINLOC/MAXLOC (value, int index), laid out as the C struct would be. */
#define WEFT_FLOAT_INT ((weft_datatype)0x50000019)
#define WEFT_DOUBLE_INT ((weft_datatype)0x5000001a)
#define WEFT_LONG_INT ((weft_datatype)0x5000001b)
#define WEFT_2INT ((weft_datatype)0x5000001c)
#define WEFT_SHORT_INT ((weft_datatype)0x5000001d)

/* Reduction operations (used by collectives). */
#define WEFT_MAX ((weft_op)0x60000001)
#define WEFT_MIN ((weft_op)0x60000002)
#define WEFT_SUM ((weft_op)0x60000003)
#define WEFT_PROD ((weft_op)0x60000004)
#define WEFT_LAND ((weft_op)0x60000005)
#define WEFT_BAND ((weft_op)0x60000006)
#define WEFT_LOR ((weft_op)0x60000007)
#define WEFT_BOR ((weft_op)0x60000008)
#define WEFT_LXOR ((weft_op)0x60000009)
#define WEFT_BXOR ((weft_op)0x6000000a)
#define WEFT_MINLOC ((weft_op)0x6000000b)
#define WEFT_MAXLOC ((weft_op)0x6000000c)

#define WEFT_ANY_SOURCE (-1)
#define WEFT_ANY_TAG (-1)
#define WEFT_PROC_NULL (-2)
#define WEFT_ANY_INDEX (-1)
/* Largest valid tag: tags travel in 20 bits of the 64-bit match word. */
#define WEFT_TAG_UB 0xFFFFF
/* Result of weft_get_count when the received bytes are not a whole number of elements, and
 * of weft_waitany when every request is null. */
#define WEFT_UNDEFINED SIZE_MAX

typedef struct weft_status {
    int source; /* rank of the sender in the communicator */
    int tag;
    int error;           /* WEFT_SUCCESS, WEFT_ERR_TRUNCATE, ... */
    int stream_index;    /* sender's stream index on multiplex communicators, else 0 */
    size_t weft_bytes_;  /* private: bytes received; read with weft_get_count */
    int weft_cancelled_; /* private */
} weft_status;

#define WEFT_STATUS_IGNORE ((weft_status *)0)
#define WEFT_STATUSES_IGNORE ((weft_status *)0)

/* Thread levels, in increasing order. */
enum { WEFT_THREAD_SINGLE = 0, WEFT_THREAD_FUNNELED = 1, WEFT_THREAD_SERIALIZED = 2, WEFT_THREAD_MULTIPLE = 3 };

/* ---- Errors ---- */
/* Text for an error code (MPI_Error_string).  string must hold WEFT_MAX_ERROR_STRING bytes;
 * *resultlen: the length written, without the terminating NUL. */
WEFT_API int weft_error_string(int errorcode, char *string, size_t *resultlen);
/* Weft extension: the detailed message of the last error raised on the calling thread
 * (names the variable, file or argument to change); empty when there was none.  string must
 * hold WEFT_MAX_ERROR_STRING (512) bytes: a longer message is cut to its first 511
 * characters, NUL-terminated, and *resultlen is the length written (511 then).  WEFT_LOG=debug
 * logs each message as it was raised (up to 1023 characters). */
WEFT_API int weft_error_detail(char *string, size_t *resultlen);

/* ---- Error handlers and error classes (MPI 4.0 sections 9.3-9.5) ----
 * Every communicator has an error handler, inherited from its parent by weft_comm_dup,
 * weft_comm_split and every other call that creates a communicator from another.  When a call
 * fails, the handler of its communicator runs before the call returns its code; a call on a
 * request uses its request's communicator, a call with no communicator (or with an invalid
 * one) WEFT_COMM_SELF's, as MPI 4.0 says.  The default everywhere is WEFT_ERRORS_RETURN, so
 * a program that never sets a handler sees Weft's native behaviour: every call returns its
 * code and never aborts.  Before weft_init and after weft_finalize no handler runs.
 *
 * The mapping of every WEFT_ERR_* code to its MPI error class is docs/errors.md. */

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

/* ---- Info (usable before weft_init and after weft_finalize) ---- */
WEFT_API int weft_info_create(weft_info *info);
WEFT_API int weft_info_set(weft_info info, const char *key, const char *value);
/* Copies at most valuelen characters plus a terminating NUL; flag=0 when the key is absent. */
WEFT_API int weft_info_get(weft_info info, const char *key, size_t valuelen, char *value, int *flag);
WEFT_API int weft_info_get_valuelen(weft_info info, const char *key, size_t *valuelen, int *flag);
WEFT_API int weft_info_delete(weft_info info, const char *key);
WEFT_API int weft_info_dup(weft_info info, weft_info *newinfo);
WEFT_API int weft_info_free(weft_info *info);
WEFT_API int weft_info_get_nkeys(weft_info info, int *nkeys);
/* key must hold WEFT_MAX_INFO_KEY + 1 characters. */
WEFT_API int weft_info_get_nthkey(weft_info info, int n, char *key);
/* MPIX_Info_set_hex: stores value_size bytes as two lowercase hex digits each, in memory order. */
WEFT_API int weft_info_set_hex(weft_info info, const char *key, const void *value, size_t value_size);
/* Decodes the hex value of key into exactly value_size bytes; also accepts MPICH's "[N]" for
 * a run of N zero bytes.  Malformed hex or a decoded size other than value_size is an error. */
WEFT_API int weft_info_get_hex(weft_info info, const char *key, void *value, size_t value_size, int *flag);

/* ---- Environment ---- */
WEFT_API int weft_init(int *argc, char ***argv);
WEFT_API int weft_init_thread(int *argc, char ***argv, int required, int *provided);
/* Weft extension: init with hints (e.g. "weft_fabric" = "ofi,ucx"). */
WEFT_API int weft_init_info(int *argc, char ***argv, int required, weft_info info, int *provided);
WEFT_API int weft_finalize(void);
WEFT_API int weft_initialized(int *flag);
WEFT_API int weft_finalized(int *flag);
WEFT_API int weft_query_thread(int *provided);
WEFT_API int weft_abort(weft_comm comm, int errorcode);
WEFT_API double weft_wtime(void);
WEFT_API double weft_wtick(void);
WEFT_API int weft_get_processor_name(char *name, size_t *resultlen);
/* Weft extension: a new info object describing the running library: "fabric" (selected fabric
 * plugin), "fabric_version", "bootstrap" (weftrun, pmix, pmi1 or singleton), "thread_level",
 * and "liveness_address" (IPv4:port of the peer-failure monitor, when it runs).
 * The caller frees it with weft_info_free. */
WEFT_API int weft_get_runtime_info(weft_info *info);
/* Weft extension: a new info object with this process's counters since weft_init, as decimal
 * strings: "dropped_am_packets" (active messages dropped as malformed), "refused_liveness_
 * connections" (connections to the peer-failure monitor without the job's token),
 * "failed_processes" (processes known dead), "shm_collectives" (blocking collectives that ran
 * through the shared memory of a communicator on one node), and, where the fabric counts them,
 * "dropped_fabric_packets" and "refused_fabric_connections".  Free it with weft_info_free. */
WEFT_API int weft_get_stats(weft_info *info);

/* ---- Introspection for tools (weft-info); none needs weft_init ----
 * The plugin search path, ':'-separated: WEFT_PLUGIN_PATH's entries, then <libdir>/weft next to
 * the libweft in use, then the configured install directory.  size is the buffer's; the text
 * is cut to fit (always terminated). */
WEFT_API int weft_query_plugin_path(char *path, size_t size);
/* One plugin found on the search path, as weft_query_plugins reports it.  The strings live
 * until the callback returns. */
typedef struct weft_plugin_report {
    size_t struct_size; /* sizeof(weft_plugin_report_t) of the library that filled it */
    const char *name;   /* from the file name, libweft-<name>.so */
    const char *path;
    const char *kind;    /* "fabric", "queue", or "" when it cannot be loaded */
    const char *version; /* the plugin's own version string */
    unsigned abi_major, abi_minor;
    int priority;
    int status;      /* 1: opens here; 0: loads but does not open; -1: cannot be loaded */
    const char *why; /* the reason when status is not 1, else "" */
    size_t eager_size, inject_size, max_message_size; /* a fabric that opens */
    const char *queue_types;                          /* a queue plugin: the info types it decodes, space-separated */
} weft_plugin_report_t;
typedef void (*weft_plugin_report_fn)(const weft_plugin_report_t *plugin, void *arg);
/* Loads every plugin on the search path, tries to open it, and reports each to fn. */
WEFT_API int weft_query_plugins(weft_plugin_report_fn fn, void *arg);
/* The fabric weft_init would select now (WEFT_FABRIC, else the highest priority that opens):
 * its name in name (size bytes).  WEFT_ERR_PLUGIN when none opens, WEFT_ERR_PLUGIN too for a
 * malformed WEFT_FABRIC; weft_error_detail says why. */
WEFT_API int weft_query_fabric(char *name, size_t size);
/* One collective algorithm, as weft_query_collectives reports it.  The strings are static. */
typedef struct weft_coll_report {
    size_t struct_size;     /* sizeof(weft_coll_report_t) of the library that filled it */
    const char *collective; /* "allreduce" (weft_allreduce and weft_iallreduce) */
    const char *algorithm;  /* "ring": the value of variable that forces it */
    const char *variable;   /* "WEFT_COLL_ALLREDUCE" */
    const char *when;       /* when the automatic choice takes it (by size, process count,
                               commutativity) and what it needs to run, in words */
} weft_coll_report_t;
typedef void (*weft_coll_report_fn)(const weft_coll_report_t *algorithm, void *arg);
/* Reports every algorithm of every collective to fn: collectives in a fixed order, and within
 * one the order in which the automatic choice tries them.  WEFT_ERR_ARG when fn is NULL. */
WEFT_API int weft_query_collectives(weft_coll_report_fn fn, void *arg);

/* ---- Communicators ---- */
WEFT_API int weft_comm_rank(weft_comm comm, int *rank);
WEFT_API int weft_comm_size(weft_comm comm, int *size);
/* Collective over comm.  A dup of a stream communicator keeps its streams. */
WEFT_API int weft_comm_dup(weft_comm comm, weft_comm *newcomm);
/* color < 0 (e.g. WEFT_UNDEFINED converted to int) gives WEFT_COMM_NULL. */
WEFT_API int weft_comm_split(weft_comm comm, int color, int key, weft_comm *newcomm);
/* Refused with WEFT_ERR_BUSY while operations on comm are pending. */
WEFT_API int weft_comm_free(weft_comm *comm);

/* ---- Groups ----
 * A group is an ordered set of processes: rank i of the group is its i-th process.  Groups are
 * local objects: making and comparing them never communicates. */
typedef int weft_group;
#define WEFT_GROUP_NULL ((weft_group)0)
/* The group with no members.  It cannot be freed.  Operations whose result is empty return a
 * new handle of an empty group (weft_group_compare with WEFT_GROUP_EMPTY: WEFT_IDENT), which
 * the caller frees like any other, so that code freeing every group it made stays correct. */
#define WEFT_GROUP_EMPTY ((weft_group)0x90000001)

/* Results of weft_group_compare and weft_comm_compare (MPI's values). */
enum { WEFT_IDENT = 0, WEFT_CONGRUENT = 1, WEFT_SIMILAR = 2, WEFT_UNEQUAL = 3 };

/* Longest communicator name, with its terminating NUL (MPI_MAX_OBJECT_NAME). */
#define WEFT_MAX_OBJECT_NAME 128

/* Ranks that have no counterpart: weft_group_rank of a process outside the group, and
 * weft_group_translate_ranks of a process not in the second group, give (int)WEFT_UNDEFINED,
 * that is -1, as weft_comm_split takes WEFT_UNDEFINED converted to int for "no color".  In C
 * and C++ `rank == WEFT_UNDEFINED` holds for it (the int converts to SIZE_MAX). */

/* The group of comm's processes, in comm's rank order (a multiplex communicator: one member
 * per process, whatever the number of its streams). */
WEFT_API int weft_comm_group(weft_comm comm, weft_group *group);
WEFT_API int weft_group_size(weft_group group, int *size);
/* The calling process's rank in group, or (int)WEFT_UNDEFINED when it is not a member. */
WEFT_API int weft_group_rank(weft_group group, int *rank);
/* The members of group at ranks[0..n), in that order; the ranks must be valid and distinct
 * (WEFT_ERR_RANK).  n = 0 gives an empty group. */
WEFT_API int weft_group_incl(weft_group group, size_t n, const int ranks[], weft_group *newgroup);
/* The members of group not at ranks[0..n) (valid and distinct), in group's order. */
WEFT_API int weft_group_excl(weft_group group, size_t n, const int ranks[], weft_group *newgroup);
/* Triplets (first, last, stride): first, first + stride, ... up to last inclusive.  stride may
 * be negative, never 0; a triplet that runs away from last (first > last with stride > 0, or
 * first < last with stride < 0) is refused (WEFT_ERR_ARG), as MPICH refuses it.  Every rank
 * named must be valid and named once (WEFT_ERR_RANK). */
WEFT_API int weft_group_range_incl(weft_group group, size_t n, int ranges[][3], weft_group *newgroup);
WEFT_API int weft_group_range_excl(weft_group group, size_t n, int ranges[][3], weft_group *newgroup);
/* group1's members, then group2's members not in group1 (each in its group's order). */
WEFT_API int weft_group_union(weft_group group1, weft_group group2, weft_group *newgroup);
/* group1's members that are in group2, in group1's order. */
WEFT_API int weft_group_intersection(weft_group group1, weft_group group2, weft_group *newgroup);
/* group1's members that are not in group2, in group1's order. */
WEFT_API int weft_group_difference(weft_group group1, weft_group group2, weft_group *newgroup);
/* ranks2[i]: the rank in group2 of the process at ranks1[i] in group1; (int)WEFT_UNDEFINED
 * when it is not in group2; WEFT_PROC_NULL stays WEFT_PROC_NULL. */
WEFT_API int weft_group_translate_ranks(weft_group group1, size_t n, const int ranks1[], weft_group group2,
                                        int ranks2[]);
/* WEFT_IDENT: same members in the same order; WEFT_SIMILAR: same members, another order;
 * WEFT_UNEQUAL otherwise. */
WEFT_API int weft_group_compare(weft_group group1, weft_group group2, int *result);
/* Sets *group to WEFT_GROUP_NULL.  Communicators made from the group are unaffected.
 * WEFT_GROUP_EMPTY cannot be freed (WEFT_ERR_GROUP). */
WEFT_API int weft_group_free(weft_group *group);

/* ---- Communicators from groups ----
 * A communicator made from a stream or multiplex communicator (weft_comm_create,
 * weft_comm_create_group, weft_comm_idup) is one too: each member keeps the streams it
 * attached to the parent, with their indices, and its endpoints; only the context differs. */

/* Collective over comm: every process of comm calls it.  group must be a subset of comm's
 * group.  Members of group get a communicator over group (rank order: group's); the others get
 * WEFT_COMM_NULL.  As in MPI 2.2 and MPICH, processes may pass different, disjoint groups:
 * each group's members must pass the same group, and each disjoint group becomes its own
 * communicator. */
WEFT_API int weft_comm_create(weft_comm comm, weft_group group, weft_comm *newcomm);
/* Collective over group's members only: comm's other processes need not call it and may do
 * anything meanwhile (one that calls it, as with WEFT_GROUP_EMPTY, gets WEFT_COMM_NULL at once,
 * as in MPICH).  Concurrent calls on overlapping
 * groups, from different threads, must pass different tags (tags that differ in their low 18
 * bits: the agreement's messages carry those). */
WEFT_API int weft_comm_create_group(weft_comm comm, weft_group group, int tag, weft_comm *newcomm);
/* WEFT_IDENT: the same communicator; WEFT_CONGRUENT: same processes in the same rank order;
 * WEFT_SIMILAR: same processes, another order; WEFT_UNEQUAL otherwise. */
WEFT_API int weft_comm_compare(weft_comm comm1, weft_comm comm2, int *result);
/* Names are local, for tools and messages, and are not copied by dup, idup or create.
 * WEFT_COMM_WORLD and WEFT_COMM_SELF are named "WEFT_COMM_WORLD" and "WEFT_COMM_SELF" until
 * renamed; other communicators have the empty name.  A name longer than
 * WEFT_MAX_OBJECT_NAME - 1 characters is cut to that length. */
WEFT_API int weft_comm_set_name(weft_comm comm, const char *name);
/* name must hold WEFT_MAX_OBJECT_NAME bytes; *resultlen: its length without the NUL. */
WEFT_API int weft_comm_get_name(weft_comm comm, char *name, size_t *resultlen);
/* Nonblocking weft_comm_dup: returns at once with *newcomm set, usable once the request has
 * completed (weft_wait, weft_test, ...).  Collective over comm and ordered with comm's other
 * collectives; a process may communicate with others before they reach their own call. */
WEFT_API int weft_comm_idup(weft_comm comm, weft_comm *newcomm, weft_request *request);

/* ---- Streams (MPIX Stream) ----
 * A stream is a serial execution context: operations on one stream never run concurrently,
 * so its path takes no lock.  A CPU stream gets its own network endpoint from the explicit
 * pool (WEFT_RESERVED_VCIS, default 8); info "weft_shared_endpoint"="true" shares an implicit
 * endpoint instead (then guarded by a lock under WEFT_THREAD_MULTIPLE).  Info "type"/"value"
 * attach a GPU queue (value hex-encoded with weft_info_set_hex). */
WEFT_API int weft_stream_create(weft_info info, weft_stream *stream);
/* WEFT_ERR_BUSY (stream unchanged) while a communicator or a pending operation uses it. */
WEFT_API int weft_stream_free(weft_stream *stream);
/* Collective over comm; each process attaches one local stream or WEFT_STREAM_NULL.  The
 * parent's own streams, if any, are discarded. */
WEFT_API int weft_stream_comm_create(weft_comm comm, weft_stream stream, weft_comm *newcomm);
/* Collective; each process attaches count >= 0 local streams, addressed by index. */
WEFT_API int weft_stream_comm_create_multiplex(weft_comm comm, size_t count, const weft_stream streams[],
                                               weft_comm *newcomm);
/* The local stream at index idx (0 for a stream communicator); WEFT_STREAM_NULL if none. */
WEFT_API int weft_comm_get_stream(weft_comm comm, int idx, weft_stream *stream);
/* Multiplex point-to-point: from the local stream src_idx to the peer's stream dst_idx.
 * Receives may pass WEFT_ANY_INDEX as src_idx; status.stream_index reports it. */
WEFT_API int weft_stream_send(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm,
                              int src_idx, int dst_idx);
WEFT_API int weft_stream_isend(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm,
                               int src_idx, int dst_idx, weft_request *request);
WEFT_API int weft_stream_recv(void *buf, size_t count, weft_datatype datatype, int source, int tag, weft_comm comm,
                              int src_idx, int dst_idx, weft_status *status);
WEFT_API int weft_stream_irecv(void *buf, size_t count, weft_datatype datatype, int source, int tag, weft_comm comm,
                               int src_idx, int dst_idx, weft_request *request);
/* A stream progresses only its own endpoint.  So one thread that owns two streams and sends a
 * large (rendezvous-sized) message from one to the other must not block on either side alone:
 * post both with weft_stream_isend/irecv and complete them with weft_waitall, which progresses
 * every endpoint involved (or call weft_stream_progress on the other stream).
 * Progress the stream's endpoint once (from the stream's own context). */
WEFT_API int weft_stream_progress(weft_stream stream);
/* A thread that progresses the stream until stopped; it sleeps on the fabric's wake-up when
 * idle.  While it runs, the stream's endpoint is guarded by a lock. */
WEFT_API int weft_start_progress_thread(weft_stream stream);
WEFT_API int weft_stop_progress_thread(weft_stream stream);

/* ---- Datatypes ---- */
WEFT_API int weft_type_contiguous(size_t count, weft_datatype oldtype, weft_datatype *newtype);
/* stride is in multiples of oldtype's extent and may be negative. */
WEFT_API int weft_type_vector(size_t count, size_t blocklength, ptrdiff_t stride, weft_datatype oldtype,
                              weft_datatype *newtype);
WEFT_API int weft_type_commit(weft_datatype *datatype);
WEFT_API int weft_type_free(weft_datatype *datatype);
WEFT_API int weft_type_size(weft_datatype datatype, size_t *size);
WEFT_API int weft_type_get_extent(weft_datatype datatype, ptrdiff_t *lb, ptrdiff_t *extent);

/* ---- Derived datatypes beyond contiguous and vector, pack/unpack, element counts ----
 * Counts, block lengths and positions are size_t.  Displacements and strides: ptrdiff_t everywhere.  Where MPI takes an int displacement in
 * multiples of the old type's extent (weft_type_vector, weft_type_indexed,
 * weft_type_create_indexed_block) so does Weft, as a ptrdiff_t; where MPI takes an MPI_Aint
 * byte displacement (the h-variants, struct, resized) Weft takes a byte ptrdiff_t.
 * Displacements and strides may be negative; the extent given to weft_type_create_resized may
 * not (WEFT_ERR_ARG).  A size, extent or displacement that overflows gives WEFT_ERR_COUNT.
 *
 * Non-contiguous datatypes in point-to-point calls travel as an iovec of their runs where the
 * fabric takes one (ucx, ofi) and the runs are few enough (WEFT_IOV_MAX in the environment,
 * default 1024; 0: always pack), packed otherwise; receives land in place the same way.
 * Predefined reductions (WEFT_SUM ...) accept a derived type whose basic elements are all of
 * one predefined type (e.g. a vector of WEFT_DOUBLE). */
/* Array orders of weft_type_create_subarray (MPICH's values of MPI_ORDER_C/FORTRAN). */
enum { WEFT_ORDER_C = 56, WEFT_ORDER_FORTRAN = 57 };

/* stride in bytes. */
WEFT_API int weft_type_create_hvector(size_t count, size_t blocklength, ptrdiff_t stride, weft_datatype oldtype,
                                      weft_datatype *newtype);
/* Block i: blocklengths[i] elements at displacements[i] extents of oldtype. */
WEFT_API int weft_type_indexed(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                               weft_datatype oldtype, weft_datatype *newtype);
WEFT_API int weft_type_create_indexed_block(size_t count, size_t blocklength, const ptrdiff_t displacements[],
                                            weft_datatype oldtype, weft_datatype *newtype);
/* displacements in bytes. */
WEFT_API int weft_type_create_hindexed(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                                       weft_datatype oldtype, weft_datatype *newtype);
WEFT_API int weft_type_create_hindexed_block(size_t count, size_t blocklength, const ptrdiff_t displacements[],
                                             weft_datatype oldtype, weft_datatype *newtype);
/* Block i: blocklengths[i] elements of types[i] at displacements[i] bytes. */
WEFT_API int weft_type_create_struct(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                                     const weft_datatype types[], weft_datatype *newtype);
/* The same typemap with lower bound lb and extent bytes (extent >= 0). */
WEFT_API int weft_type_create_resized(weft_datatype oldtype, ptrdiff_t lb, ptrdiff_t extent, weft_datatype *newtype);
/* A new handle for the same layout (committed when oldtype is). */
WEFT_API int weft_type_dup(weft_datatype oldtype, weft_datatype *newtype);
/* The subsizes[] block at starts[] of an ndims-dimensional array of sizes[] elements of oldtype,
 * in WEFT_ORDER_C (last index fastest) or WEFT_ORDER_FORTRAN; lb 0, extent the whole array's. */
WEFT_API int weft_type_create_subarray(size_t ndims, const size_t sizes[], const size_t subsizes[],
                                       const size_t starts[], int order, weft_datatype oldtype, weft_datatype *newtype);
/* Bounds of the bytes the type touches (MPI_Type_get_true_extent). */
WEFT_API int weft_type_get_true_extent(weft_datatype datatype, ptrdiff_t *true_lb, ptrdiff_t *true_extent);

/* Basic elements received (a pair type such as WEFT_DOUBLE_INT counts two), or WEFT_UNDEFINED
 * when the message ends inside one. */
WEFT_API int weft_get_elements(const weft_status *status, weft_datatype datatype, size_t *count);

/* Packs incount elements at inbuf into outbuf[outsize] at *position, which advances; a
 * committed datatype; WEFT_ERR_TRUNCATE when outsize is too small (nothing written).  comm
 * must be valid (Weft's packed format is the same on every communicator). */
WEFT_API int weft_pack(const void *inbuf, size_t incount, weft_datatype datatype, void *outbuf, size_t outsize,
                       size_t *position, weft_comm comm);
/* Unpacks outcount elements from inbuf[insize] at *position, which advances;
 * WEFT_ERR_TRUNCATE when fewer bytes are left than that needs (nothing written). */
WEFT_API int weft_unpack(const void *inbuf, size_t insize, size_t *position, void *outbuf, size_t outcount,
                         weft_datatype datatype, weft_comm comm);
/* An upper bound of the bytes weft_pack needs for incount elements (exact in Weft). */
WEFT_API int weft_pack_size(size_t incount, weft_datatype datatype, weft_comm comm, size_t *size);

/* ---- Point-to-point ---- */
WEFT_API int weft_send(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm);
WEFT_API int weft_recv(void *buf, size_t count, weft_datatype datatype, int source, int tag, weft_comm comm,
                       weft_status *status);
/* A small send that the fabric finished before weft_isend returned gets a request handle
 * shared by every such send on its endpoint (MPICH's lightweight requests do the same): it is
 * complete already, and a wait or test still retires it and sets the handle to
 * WEFT_REQUEST_NULL.  So two pending handles may be equal: do not key anything on them. */
WEFT_API int weft_isend(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm,
                        weft_request *request);
WEFT_API int weft_irecv(void *buf, size_t count, weft_datatype datatype, int source, int tag, weft_comm comm,
                        weft_request *request);
WEFT_API int weft_wait(weft_request *request, weft_status *status);
WEFT_API int weft_test(weft_request *request, int *flag, weft_status *status);
WEFT_API int weft_waitall(size_t count, weft_request requests[], weft_status statuses[]);
WEFT_API int weft_waitany(size_t count, weft_request requests[], size_t *index, weft_status *status);
WEFT_API int weft_testall(size_t count, weft_request requests[], int *flag, weft_status statuses[]);
/* Cancels a pending receive.  Sends cannot be cancelled (MPI 4 deprecates it): WEFT_ERR_UNSUPPORTED. */
WEFT_API int weft_cancel(weft_request *request);
WEFT_API int weft_test_cancelled(const weft_status *status, int *flag);
WEFT_API int weft_probe(int source, int tag, weft_comm comm, weft_status *status);
WEFT_API int weft_iprobe(int source, int tag, weft_comm comm, int *flag, weft_status *status);
WEFT_API int weft_get_count(const weft_status *status, weft_datatype datatype, size_t *count);

/* ---- Synchronous sends ----
 * Complete only once the matching receive has matched the message (on every fabric: the
 * receiver acknowledges it), so a completed synchronous send also tells that the receiver got
 * there.  Any receive, probe or matched probe matches a synchronous message like any other;
 * the receiver's endpoint sends the acknowledgement when the receive completes there, at its
 * next progress (any call that progresses it: a wait, test, probe or blocking call).  Sends to
 * WEFT_PROC_NULL complete at once.  As on other sends, weft_cancel of a pending weft_issend
 * request is refused (WEFT_ERR_UNSUPPORTED); so is that of a pending weft_isendrecv or
 * weft_imrecv request (a matched message cannot be unmatched). */
WEFT_API int weft_ssend(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm);
WEFT_API int weft_issend(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm,
                         weft_request *request);
/* Multiplex forms: from the local stream src_idx to the peer's stream dst_idx (as
 * weft_stream_send). */
WEFT_API int weft_stream_ssend(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm,
                               int src_idx, int dst_idx);
WEFT_API int weft_stream_issend(const void *buf, size_t count, weft_datatype datatype, int dest, int tag,
                                weft_comm comm, int src_idx, int dst_idx, weft_request *request);
/* Persistent synchronous sends (weft_start starts one run; see weft_send_init). */
WEFT_API int weft_ssend_init(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm,
                             weft_request *request);
WEFT_API int weft_stream_ssend_init(const void *buf, size_t count, weft_datatype datatype, int dest, int tag,
                                    weft_comm comm, int src_idx, int dst_idx, weft_request *request);

/* ---- Send and receive in one call ----
 * The receive is posted before the send, so a ring of sendrecv calls never deadlocks.  The
 * status is the receive's.  The nonblocking forms return one request that completes when both
 * parts have.  The _replace forms send buf's contents and receive into buf, through a
 * temporary buffer of count elements (packed) that lives until the operation completes. */
WEFT_API int weft_sendrecv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, int dest, int sendtag,
                           void *recvbuf, size_t recvcount, weft_datatype recvtype, int source, int recvtag,
                           weft_comm comm, weft_status *status);
WEFT_API int weft_sendrecv_replace(void *buf, size_t count, weft_datatype datatype, int dest, int sendtag, int source,
                                   int recvtag, weft_comm comm, weft_status *status);
WEFT_API int weft_isendrecv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, int dest, int sendtag,
                            void *recvbuf, size_t recvcount, weft_datatype recvtype, int source, int recvtag,
                            weft_comm comm, weft_request *request);
WEFT_API int weft_isendrecv_replace(void *buf, size_t count, weft_datatype datatype, int dest, int sendtag, int source,
                                    int recvtag, weft_comm comm, weft_request *request);

/* ---- Matched probe ----
 * weft_mprobe / weft_improbe find a message as weft_probe does and remove it from matching at
 * once: no other receive or probe can match it, so threads that probe then receive never take
 * each other's messages.  The message is received (only) with weft_mrecv / weft_imrecv on the
 * handle, which is then set to WEFT_MESSAGE_NULL.  A probe of WEFT_PROC_NULL returns
 * WEFT_MESSAGE_NO_PROC, whose receive completes at once with a WEFT_PROC_NULL status.
 * The message is received into a buffer the handle owns as soon as it is probed, and copied
 * (unpacked) into the receive's buffer by mrecv / at imrecv's completion; a message larger
 * than that buffer is truncated there (WEFT_ERR_TRUNCATE, as weft_recv).  A pending message
 * keeps its communicator busy (weft_comm_free refuses it). */
typedef int weft_message;
#define WEFT_MESSAGE_NULL ((weft_message)0)
#define WEFT_MESSAGE_NO_PROC ((weft_message)0xB0000001)
WEFT_API int weft_mprobe(int source, int tag, weft_comm comm, weft_message *message, weft_status *status);
/* *flag = 0 and *message untouched when no message is there. */
WEFT_API int weft_improbe(int source, int tag, weft_comm comm, int *flag, weft_message *message, weft_status *status);
WEFT_API int weft_mrecv(void *buf, size_t count, weft_datatype datatype, weft_message *message, weft_status *status);
WEFT_API int weft_imrecv(void *buf, size_t count, weft_datatype datatype, weft_message *message, weft_request *request);

/* ---- Reduction operations ---- */
/* A user reduction: inoutvec[i] = invec[i] op inoutvec[i] for *len elements of *datatype.
 * commute = 0 declares the operation non-commutative: operands are then combined in rank
 * order. */
typedef void weft_user_function(void *invec, void *inoutvec, size_t *len, weft_datatype *datatype);
WEFT_API int weft_op_create(weft_user_function *user_fn, int commute, weft_op *op);
/* An operation freed while a nonblocking collective uses it stays alive until that completes. */
WEFT_API int weft_op_free(weft_op *op);

/* ---- Collectives ----
 * On every communicator kind: conventional ones run on their implicit endpoint, stream
 * communicators on the attached stream's endpoint, multiplex communicators on local stream
 * index 0 (every process must then attach at least one stream).  Every process calls the
 * same collectives in the same order; nonblocking ones complete through wait/test (or any
 * progress of the endpoint).  Datatypes may be derived; reductions take built-in datatypes
 * with a built-in operation, or any contiguous datatype with a user operation.
 * Algorithms are chosen by message size and process count; WEFT_COLL_<NAME>=<algorithm>
 * forces one (README.md lists them).  Displacements are in elements of the datatype. */
#define WEFT_IN_PLACE ((void *)-1)

WEFT_API int weft_barrier(weft_comm comm);
WEFT_API int weft_bcast(void *buffer, size_t count, weft_datatype datatype, int root, weft_comm comm);
WEFT_API int weft_reduce(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op, int root,
                         weft_comm comm);
WEFT_API int weft_allreduce(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                            weft_comm comm);
WEFT_API int weft_gather(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf, size_t recvcount,
                         weft_datatype recvtype, int root, weft_comm comm);
WEFT_API int weft_gatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                          const size_t recvcounts[], const size_t displs[], weft_datatype recvtype, int root,
                          weft_comm comm);
WEFT_API int weft_scatter(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                          size_t recvcount, weft_datatype recvtype, int root, weft_comm comm);
WEFT_API int weft_scatterv(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                           weft_datatype sendtype, void *recvbuf, size_t recvcount, weft_datatype recvtype, int root,
                           weft_comm comm);
WEFT_API int weft_allgather(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                            size_t recvcount, weft_datatype recvtype, weft_comm comm);
WEFT_API int weft_allgatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                             const size_t recvcounts[], const size_t displs[], weft_datatype recvtype, weft_comm comm);
WEFT_API int weft_alltoall(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                           size_t recvcount, weft_datatype recvtype, weft_comm comm);
WEFT_API int weft_alltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                            weft_datatype sendtype, void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                            weft_datatype recvtype, weft_comm comm);
WEFT_API int weft_reduce_scatter_block(const void *sendbuf, void *recvbuf, size_t recvcount, weft_datatype datatype,
                                       weft_op op, weft_comm comm);
WEFT_API int weft_scan(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                       weft_comm comm);
WEFT_API int weft_exscan(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                         weft_comm comm);

WEFT_API int weft_ibarrier(weft_comm comm, weft_request *request);
WEFT_API int weft_ibcast(void *buffer, size_t count, weft_datatype datatype, int root, weft_comm comm,
                         weft_request *request);
WEFT_API int weft_ireduce(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                          int root, weft_comm comm, weft_request *request);
WEFT_API int weft_iallreduce(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                             weft_comm comm, weft_request *request);
WEFT_API int weft_igather(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                          size_t recvcount, weft_datatype recvtype, int root, weft_comm comm, weft_request *request);
WEFT_API int weft_igatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                           const size_t recvcounts[], const size_t displs[], weft_datatype recvtype, int root,
                           weft_comm comm, weft_request *request);
WEFT_API int weft_iscatter(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                           size_t recvcount, weft_datatype recvtype, int root, weft_comm comm, weft_request *request);
WEFT_API int weft_iscatterv(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                            weft_datatype sendtype, void *recvbuf, size_t recvcount, weft_datatype recvtype, int root,
                            weft_comm comm, weft_request *request);
WEFT_API int weft_iallgather(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                             size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_request *request);
WEFT_API int weft_iallgatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                              const size_t recvcounts[], const size_t displs[], weft_datatype recvtype, weft_comm comm,
                              weft_request *request);
WEFT_API int weft_ialltoall(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                            size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_request *request);
WEFT_API int weft_ialltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                             weft_datatype sendtype, void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                             weft_datatype recvtype, weft_comm comm, weft_request *request);
WEFT_API int weft_ireduce_scatter_block(const void *sendbuf, void *recvbuf, size_t recvcount, weft_datatype datatype,
                                        weft_op op, weft_comm comm, weft_request *request);
WEFT_API int weft_iscan(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                        weft_comm comm, weft_request *request);
WEFT_API int weft_iexscan(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                          weft_comm comm, weft_request *request);

/* ---- reduce_scatter with per-rank counts, alltoallw with per-peer datatypes, local
 * reductions ---- */
/* Reduces each process's sendbuf, a vector of recvcounts[0] + ... + recvcounts[size-1]
 * elements, elementwise over all processes and scatters the result: rank r receives
 * recvcounts[r] elements, block r of the reduced vector (blocks in rank order).  recvcounts
 * must be the same on every process; zero counts are allowed.  sendbuf = WEFT_IN_PLACE: the
 * input is taken from recvbuf, which then holds the whole vector, and the result lands at its
 * start.  A non-commutative op combines in rank order.  Datatypes as for weft_reduce.
 * Algorithms (WEFT_COLL_REDUCE_SCATTER=recursive_halving|pairwise|reduce_scatterv, weft-info
 * --coll): recursive halving below 512 KiB in all and pairwise from there for a commutative
 * op; a reduce to rank 0 followed by a scatterv for a non-commutative one. */
WEFT_API int weft_reduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[], weft_datatype datatype,
                                 weft_op op, weft_comm comm);
WEFT_API int weft_ireduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[], weft_datatype datatype,
                                  weft_op op, weft_comm comm, weft_request *request);
/* Persistent form (MPI-4): the schedule is built once; each weft_start replays it. */
WEFT_API int weft_reduce_scatter_init(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                                      weft_datatype datatype, weft_op op, weft_comm comm, weft_info info,
                                      weft_request *request);

/* Alltoall with a datatype per peer: sendcounts[j] elements of sendtypes[j] at sendbuf +
 * sdispls[j] go to rank j, which receives them as recvcounts[i] elements of recvtypes[i] at
 * recvbuf + rdispls[i] (i the sender).  Displacements are in BYTES (as MPI's), not elements.
 * Each pair's type signatures must match (equal byte sizes; else WEFT_ERR_TRUNCATE).  Any
 * committed datatype, derived ones included; where a count is 0 the type, displacement and
 * buffer are not looked at.  sendbuf = WEFT_IN_PLACE: sendcounts, sdispls and sendtypes are
 * ignored and each block is sent from recvbuf as described by the receive arguments, then
 * replaced.  Algorithms (WEFT_COLL_ALLTOALLW=scattered|pairwise): scattered (up to 32 peers in
 * flight at once) unless forced. */
WEFT_API int weft_alltoallw(const void *sendbuf, const size_t sendcounts[], const ptrdiff_t sdispls[],
                            const weft_datatype sendtypes[], void *recvbuf, const size_t recvcounts[],
                            const ptrdiff_t rdispls[], const weft_datatype recvtypes[], weft_comm comm);
WEFT_API int weft_ialltoallw(const void *sendbuf, const size_t sendcounts[], const ptrdiff_t sdispls[],
                             const weft_datatype sendtypes[], void *recvbuf, const size_t recvcounts[],
                             const ptrdiff_t rdispls[], const weft_datatype recvtypes[], weft_comm comm,
                             weft_request *request);
WEFT_API int weft_alltoallw_init(const void *sendbuf, const size_t sendcounts[], const ptrdiff_t sdispls[],
                                 const weft_datatype sendtypes[], void *recvbuf, const size_t recvcounts[],
                                 const ptrdiff_t rdispls[], const weft_datatype recvtypes[], weft_comm comm,
                                 weft_info info, weft_request *request);

/* inoutbuf[i] = inbuf[i] op inoutbuf[i] for count elements, locally (no communication): the
 * combination a reduction applies, with the same datatype rules (WEFT_ERR_OP for an op the
 * datatype does not take).  The buffers must not overlap; WEFT_IN_PLACE is not allowed. */
WEFT_API int weft_reduce_local(const void *inbuf, void *inoutbuf, size_t count, weft_datatype datatype, weft_op op);

/* *commute = 1 when op is commutative (every predefined op; a user op created with commute
 * != 0), else 0.  WEFT_ERR_OP for WEFT_OP_NULL or a freed or invalid handle. */
WEFT_API int weft_op_commutative(weft_op op, int *commute);

/* ---- Persistent requests, persistent collectives and the request calls that go with them
 * (MPI 4.0 sections 3.9, 3.7.5, 6.13) ----
 * A persistent request is made inactive by its *_init call and keeps its handle until
 * weft_request_free: weft_start makes it active, and a wait or test that completes it makes it
 * inactive again (the handle stays).  A wait or test on an inactive persistent request returns
 * at once with an empty status (source WEFT_ANY_SOURCE, tag WEFT_ANY_TAG, error WEFT_SUCCESS,
 * count 0); weft_waitany, weft_testany, weft_waitsome and weft_testsome skip them as they skip
 * WEFT_REQUEST_NULL.  While it exists, a persistent request counts as pending on its
 * communicator and stream (weft_comm_free, weft_stream_free: WEFT_ERR_BUSY until it is freed). */
/* ---- Persistent point-to-point ----
 * The arguments of weft_isend/weft_irecv, checked once, here: a bad argument fails the init
 * (with its code and detail), never a start.  Each start sends (receives) buf as it is then. */
WEFT_API int weft_send_init(const void *buf, size_t count, weft_datatype datatype, int dest, int tag, weft_comm comm,
                            weft_request *request);
WEFT_API int weft_recv_init(void *buf, size_t count, weft_datatype datatype, int source, int tag, weft_comm comm,
                            weft_request *request);
/* Multiplex and stream communicators: the src_idx/dst_idx of weft_stream_isend/irecv. */
WEFT_API int weft_stream_send_init(const void *buf, size_t count, weft_datatype datatype, int dest, int tag,
                                   weft_comm comm, int src_idx, int dst_idx, weft_request *request);
WEFT_API int weft_stream_recv_init(void *buf, size_t count, weft_datatype datatype, int source, int tag, weft_comm comm,
                                   int src_idx, int dst_idx, weft_request *request);

/* Starts an inactive persistent request.  WEFT_ERR_REQUEST (request unchanged) for
 * WEFT_REQUEST_NULL, an invalid handle, a request that is not persistent, or one that is
 * active (started and not yet completed by a wait or test). */
WEFT_API int weft_start(weft_request *request);
/* Checks every request as weft_start does before starting any, then starts them in order. */
WEFT_API int weft_startall(size_t count, weft_request requests[]);

/* Frees the request and sets the handle to WEFT_REQUEST_NULL.  An active point-to-point
 * request (persistent or not) is not cancelled: its operation completes, and its resources are
 * released when its endpoint next progresses, without anyone waiting (use another way to learn
 * that the buffer is free again).  It stops counting as pending on its communicator and stream
 * at once.  WEFT_ERR_REQUEST for WEFT_REQUEST_NULL, an invalid handle, and an active collective
 * (nonblocking or persistent: erroneous in MPI; complete it first). */
WEFT_API int weft_request_free(weft_request *request);
/* MPI_Request_get_status: *flag = whether the request has completed (a test that frees
 * nothing: the request and its handle stay as they are, to be completed by a wait or test);
 * then status as a wait would fill it, and the operation's error is returned.  Progresses the
 * request's endpoint once.  WEFT_REQUEST_NULL and inactive persistent requests: flag 1 and an
 * empty status. */
WEFT_API int weft_request_get_status(weft_request request, int *flag, weft_status *status);
/* MPIX_Request_is_complete: *flag = whether the request has completed, with no progress at all
 * (a cheap check for a thread that leaves progress to others).  1 for WEFT_REQUEST_NULL and an
 * inactive persistent request. */
WEFT_API int weft_request_is_complete(weft_request request, int *flag);

/* ---- Completion of some of many (MPI rules) ----
 * Inactive persistent requests count as WEFT_REQUEST_NULL.  When every request is null or
 * inactive: weft_testany sets *flag 1, *index WEFT_UNDEFINED and an empty status;
 * weft_waitsome and weft_testsome set *outcount WEFT_UNDEFINED.  Completed requests are freed
 * (handle WEFT_REQUEST_NULL) or, persistent ones, made inactive.  weft_testany with none
 * complete: *flag 0, *index WEFT_UNDEFINED.  weft_waitsome/testsome write the indices of the
 * completed requests to indices[0, *outcount) and their statuses to statuses[0, *outcount)
 * (indices and statuses hold incount entries); when any completed one failed they return
 * WEFT_ERR_IN_STATUS and each status's error field says which (with WEFT_STATUSES_IGNORE: the
 * first failure's code). */
WEFT_API int weft_waitsome(size_t incount, weft_request requests[], size_t *outcount, size_t indices[],
                           weft_status statuses[]);
WEFT_API int weft_testany(size_t count, weft_request requests[], size_t *index, int *flag, weft_status *status);
WEFT_API int weft_testsome(size_t incount, weft_request requests[], size_t *outcount, size_t indices[],
                           weft_status statuses[]);

/* ---- Persistent collectives (MPI 4.0) ----
 * The arguments of the blocking collective, then info (WEFT_INFO_NULL, or an info whose keys
 * are ignored) and the request.  Collective: every process of comm calls it, in the same order
 * as its other collectives.  The schedule is built here, once, and each weft_start replays it
 * (all processes start their persistent collectives on a communicator in the same order,
 * relative to each other and to its other collectives).  Buffers are read at each start.  An
 * active persistent collective cannot be freed (WEFT_ERR_REQUEST); an inactive one can. */
WEFT_API int weft_barrier_init(weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_bcast_init(void *buffer, size_t count, weft_datatype datatype, int root, weft_comm comm,
                             weft_info info, weft_request *request);
WEFT_API int weft_reduce_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                              int root, weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_allreduce_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                                 weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_gather_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                              size_t recvcount, weft_datatype recvtype, int root, weft_comm comm, weft_info info,
                              weft_request *request);
WEFT_API int weft_gatherv_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                               const size_t recvcounts[], const size_t displs[], weft_datatype recvtype, int root,
                               weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_scatter_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                               size_t recvcount, weft_datatype recvtype, int root, weft_comm comm, weft_info info,
                               weft_request *request);
WEFT_API int weft_scatterv_init(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                                weft_datatype sendtype, void *recvbuf, size_t recvcount, weft_datatype recvtype,
                                int root, weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_allgather_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                 size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_info info,
                                 weft_request *request);
WEFT_API int weft_allgatherv_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                  const size_t recvcounts[], const size_t displs[], weft_datatype recvtype,
                                  weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_alltoall_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_info info,
                                weft_request *request);
WEFT_API int weft_alltoallv_init(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                                 weft_datatype sendtype, void *recvbuf, const size_t recvcounts[],
                                 const size_t rdispls[], weft_datatype recvtype, weft_comm comm, weft_info info,
                                 weft_request *request);
WEFT_API int weft_reduce_scatter_block_init(const void *sendbuf, void *recvbuf, size_t recvcount,
                                            weft_datatype datatype, weft_op op, weft_comm comm, weft_info info,
                                            weft_request *request);
WEFT_API int weft_scan_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                            weft_comm comm, weft_info info, weft_request *request);
WEFT_API int weft_exscan_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                              weft_comm comm, weft_info info, weft_request *request);

/* ===================================================================== GPU enqueue ==
 * On a communicator whose local stream has a GPU queue (weft_stream_create with info "type"
 * and hex "value": "cudaStream_t", "hipStream_t", "ze_command_list_handle_t",
 * "ze_command_queue_handle_t", "sycl::queue"), these calls return once the operation is
 * registered; it starts when the queue reaches it, and the queue goes on past it once it has
 * completed.  Buffers (host, pinned, managed or device memory) must stay valid until then.
 * Device buffers are staged through pinned host memory with copies on the same queue unless
 * the fabric handles device memory.  One progress thread serves all GPU queues.  WEFT_ENQUEUE=
 * memops (default: stream memory operations, Level Zero host-signalled events) or hostfn
 * (host callbacks) picks how the queue and the thread meet.  A status pointer is written when
 * the operation completes, before the queue goes on.  On a communicator without a GPU queue
 * they fail with WEFT_ERR_STREAM. */
WEFT_API int weft_send_enqueue(const void *buf, size_t count, weft_datatype datatype, int dest, int tag,
                               weft_comm comm);
WEFT_API int weft_recv_enqueue(void *buf, size_t count, weft_datatype datatype, int source, int tag, weft_comm comm,
                               weft_status *status);
/* The request starts when the queue reaches this point; the queue does not wait for it. */
WEFT_API int weft_isend_enqueue(const void *buf, size_t count, weft_datatype datatype, int dest, int tag,
                                weft_comm comm, weft_request *request);
WEFT_API int weft_irecv_enqueue(void *buf, size_t count, weft_datatype datatype, int source, int tag, weft_comm comm,
                                weft_request *request);
/* The queue waits here for the request(s), which must come from *_enqueue calls on the same
 * queue (else WEFT_ERR_REQUEST); the handles become WEFT_REQUEST_NULL at once. */
WEFT_API int weft_wait_enqueue(weft_request *request, weft_status *status);
WEFT_API int weft_waitall_enqueue(size_t count, weft_request requests[], weft_status statuses[]);
WEFT_API int weft_allreduce_enqueue(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype,
                                    weft_op op, weft_comm comm);
WEFT_API int weft_bcast_enqueue(void *buffer, size_t count, weft_datatype datatype, int root, weft_comm comm);
WEFT_API int weft_barrier_enqueue(weft_comm comm);
WEFT_API int weft_allgather_enqueue(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                    size_t recvcount, weft_datatype recvtype, weft_comm comm);

/* ============================================ PGAS active messages (the Shoal semantics) ==
 * A PGAS context spans the kernels of a communicator: one kernel per rank, or on a multiplex
 * communicator one per attached stream, numbered rank-major (rank 0's streams 0..n0-1, then
 * rank 1's ...).  Each kernel owns a segment; remote addresses are byte offsets into the
 * target kernel's segment.  A weft_pgas handle acts as one local kernel: weft_pgas_create
 * returns this process's first kernel, weft_pgas_get_kernel the others.  A kernel is a serial
 * context: its calls and its handlers never run at once.  Handlers run while the kernel's
 * endpoint progresses: inside any Weft call on it, weft_pgas_progress, weft_stream_progress of
 * its stream, or the stream's progress thread (Shoal's handler thread).
 * The wire format is docs/pgas-wire.md. */
typedef int weft_pgas;
#define WEFT_PGAS_NULL ((weft_pgas)0)

#define WEFT_AM_MAX_ARGS 15      /* 64-bit handler arguments per message */
#define WEFT_AM_MAX_HANDLERS 256 /* handler indices 0..255 */
#define WEFT_AM_MAX_VECTOR 16    /* pieces per side of a vectored Long */
/* Built-in handlers, with Shoal's numbers.  3 (H_INCR_BAR) is the barrier's and 4 (Shoal's
 * H_WAIT) is reserved: neither can be sent or registered; user handlers are
 * WEFT_AM_HANDLER_FIRST..255. */
#define WEFT_AM_H_EMPTY 0 /* does nothing: a message wanted only for its data and reply */
#define WEFT_AM_H_INCR 1  /* adds 1 to the target kernel's counter (weft_pgas_wait_counter) */
#define WEFT_AM_H_ADD 2   /* adds args[0] to the target kernel's counter */
#define WEFT_AM_HANDLER_FIRST 5

/* Flags of weft_am_* */
#define WEFT_AM_ASYNC 0x1u /* no automatic reply (a get's data is its reply: not allowed there) */

/* Message kinds, as weft_am_info::kind reports them. */
enum { WEFT_AM_SHORT = 1, WEFT_AM_MEDIUM = 2, WEFT_AM_LONG = 4, WEFT_AM_LONG_STRIDED = 5, WEFT_AM_LONG_VECTORED = 6 };

/* A strided region of a segment: block_count blocks of block_size bytes, stride bytes apart
 * (from the start of one block to the next), the first at offset. */
typedef struct weft_am_stride {
    size_t offset;
    size_t stride;
    size_t block_size;
    size_t block_count;
} weft_am_stride;

/* One piece of a vectored Long (a segment offset and a length; zero lengths are allowed). */
typedef struct weft_am_piece {
    size_t offset;
    size_t length;
} weft_am_piece;

/* What a handler is told.  Pointers are valid until the handler returns. */
typedef struct weft_am_info {
    int source; /* the sending kernel */
    unsigned handler;
    unsigned token; /* the sender's 16-bit message token */
    int kind;       /* WEFT_AM_SHORT ... WEFT_AM_LONG_VECTORED */
    int is_reply;   /* the message is a reply (weft_am_reply_short, or a get's data) */
    unsigned nargs;
    const uint64_t *args;
    const void *payload; /* Medium: the payload */
    size_t length;       /* Medium, Long: payload bytes (strided, vectored: in total) */
    size_t offset;       /* Long: where the data landed in this kernel's segment (strided,
                               vectored: the first destination offset) */
    void *weft_private_;
} weft_am_info;

typedef void (*weft_am_handler)(weft_pgas kernel, const weft_am_info *info, void *user_data);

/* Collective over comm.  Each local kernel gets a zero-filled segment of segment_size bytes.
 * Info keys: weft_am_shoal_compat=true refuses every message a Shoal-limited peer (the
 * GAScore) could not parse, instead of sending it. */
WEFT_API int weft_pgas_create(weft_comm comm, size_t segment_size, weft_info info, weft_pgas *pgas);
/* Collective: frees every local kernel of the context (pass the handle create returned). */
WEFT_API int weft_pgas_free(weft_pgas *pgas);
/* The handle of local kernel `index` (the index of its stream on a multiplex communicator). */
WEFT_API int weft_pgas_get_kernel(weft_pgas pgas, int index, weft_pgas *kernel);
WEFT_API int weft_pgas_kernel_id(weft_pgas kernel, int *id);
WEFT_API int weft_pgas_num_kernels(weft_pgas kernel, int *count);
WEFT_API int weft_pgas_segment(weft_pgas kernel, void **base, size_t *size);
/* Runs handlers of messages that arrived; returns at once. */
WEFT_API int weft_pgas_progress(weft_pgas kernel);
/* Waits until the kernel's counter reaches value, then subtracts value. */
WEFT_API int weft_pgas_wait_counter(weft_pgas kernel, uint64_t value);
/* Every kernel of the context calls it; returns once all have.  Shoal's barrier, message for
 * message (hardware kernels can take part): it waits for the replies of its own messages only,
 * not for those of earlier ones. */
WEFT_API int weft_pgas_barrier(weft_pgas kernel);
/* Packets dropped because they failed validation (bad header, size or bounds). */
WEFT_API int weft_pgas_bad_packets(weft_pgas kernel, uint64_t *count);

WEFT_API int weft_am_register(weft_pgas kernel, unsigned index, weft_am_handler fn, void *user_data);
WEFT_API int weft_am_max_medium(weft_pgas kernel, size_t *bytes);
WEFT_API int weft_am_max_long(weft_pgas kernel, size_t *bytes);
WEFT_API int weft_am_max_args(weft_pgas kernel, unsigned *nargs);

/* Messages.  Each returns once its source data may be reused (a caller's buffer) or has been
 * handed to the fabric (segment data: do not change it until the reply arrives). */
WEFT_API int weft_am_short(weft_pgas kernel, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                           unsigned flags);
/* Medium: the payload goes to the target's handler (info->payload). */
WEFT_API int weft_am_medium(weft_pgas kernel, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                            const void *buf, size_t length, unsigned flags);
WEFT_API int weft_am_medium_seg(weft_pgas kernel, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                                size_t src_offset, size_t length, unsigned flags);
/* Long: the payload is written into the target's segment at dst_offset before its handler
 * runs and before the reply is sent. */
WEFT_API int weft_am_long(weft_pgas kernel, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                          const void *buf, size_t length, size_t dst_offset, unsigned flags);
WEFT_API int weft_am_long_seg(weft_pgas kernel, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                              size_t src_offset, size_t length, size_t dst_offset, unsigned flags);
/* Strided and vectored Longs read the caller's segment; both sides move the same bytes. */
WEFT_API int weft_am_long_strided(weft_pgas kernel, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                                  const weft_am_stride *src, const weft_am_stride *dst_region, unsigned flags);
WEFT_API int weft_am_long_vectored(weft_pgas kernel, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                                   const weft_am_piece *src, size_t src_count, const weft_am_piece *dst_pieces,
                                   size_t dst_count, unsigned flags);
/* Gets: bring the target's segment data into the caller's segment.  The data's arrival is the
 * reply (weft_am_wait_replies counts it); `handler` (WEFT_AM_H_EMPTY for none) then runs on
 * the caller with is_reply set. */
WEFT_API int weft_am_get_long(weft_pgas kernel, int target, unsigned handler, const uint64_t *args, unsigned nargs,
                              size_t remote_offset, size_t length, size_t local_offset, unsigned flags);
WEFT_API int weft_am_get_strided(weft_pgas kernel, int target, unsigned handler, const uint64_t *args, unsigned nargs,
                                 const weft_am_stride *remote, const weft_am_stride *local, unsigned flags);
/* From inside a request handler only, once: a Short reply to its sender.  It runs `handler`
 * there and is not counted by weft_am_wait_replies. */
WEFT_API int weft_am_reply_short(const weft_am_info *request, unsigned handler, const uint64_t *args, unsigned nargs);
/* Waits until n automatic replies arrived (counting since the last call) and consumes them. */
WEFT_API int weft_am_wait_replies(weft_pgas kernel, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_WEFT_H */
