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
    WEFT_ERR_ARG = 1,               /* an argument is invalid (null pointer, bad value) */
    WEFT_ERR_COMM = 2,              /* invalid communicator handle */
    WEFT_ERR_RANK = 3,              /* rank out of range for the communicator */
    WEFT_ERR_TAG = 4,               /* tag negative (other than WEFT_ANY_TAG) or > WEFT_TAG_UB */
    WEFT_ERR_COUNT = 5,             /* count too large */
    WEFT_ERR_TYPE = 6,              /* invalid or uncommitted datatype */
    WEFT_ERR_OP = 7,                /* invalid reduction operation, or op/type mismatch */
    WEFT_ERR_REQUEST = 8,           /* invalid request handle */
    WEFT_ERR_INFO = 9,              /* invalid info handle */
    WEFT_ERR_INFO_KEY = 10,         /* info key empty or longer than WEFT_MAX_INFO_KEY */
    WEFT_ERR_INFO_VALUE = 11,       /* info value too long, or not valid hex for get_hex */
    WEFT_ERR_INFO_NOKEY = 12,       /* info key not present (delete) or n out of range */
    WEFT_ERR_BUFFER = 13,           /* null buffer with a non-zero count */
    WEFT_ERR_TRUNCATE = 14,         /* message larger than the receive buffer */
    WEFT_ERR_NOT_INITIALIZED = 15,  /* called before weft_init */
    WEFT_ERR_FINALIZED = 16,        /* called after weft_finalize */
    WEFT_ERR_ALREADY_INITIALIZED = 17,
    WEFT_ERR_NO_MEM = 18,
    WEFT_ERR_PLUGIN = 19,           /* no usable plugin: missing, wrong ABI, failed to open */
    WEFT_ERR_BOOTSTRAP = 20,        /* launcher/PMI/PMIx key-value exchange failed */
    WEFT_ERR_FABRIC = 21,           /* the fabric reported a failure */
    WEFT_ERR_IN_STATUS = 22,        /* see the error field of each status (waitall, testall) */
    WEFT_ERR_STREAM = 23,           /* invalid stream handle or stream misuse */
    WEFT_ERR_NO_ENDPOINT = 24,      /* no network endpoint left (see WEFT_RESERVED_VCIS) */
    WEFT_ERR_BUSY = 25,             /* object still in use (pending operations, communicators) */
    WEFT_ERR_PROC_FAILED = 26,      /* a peer process failed */
    WEFT_ERR_UNSUPPORTED = 27,      /* valid request this build or fabric cannot do */
    WEFT_ERR_THREAD = 28,           /* call not allowed at the provided thread level */
    WEFT_ERR_INTERNAL = 29,
    WEFT_ERR_NO_DEVICE = 30,        /* no GPU driver or device for the queue (see the message) */
    WEFT_ERR_LASTCODE = 30
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
    int source;       /* rank of the sender in the communicator */
    int tag;
    int error;        /* WEFT_SUCCESS, WEFT_ERR_TRUNCATE, ... */
    int stream_index; /* sender's stream index on multiplex communicators, else 0 */
    size_t weft_bytes_; /* private: bytes received; read with weft_get_count */
    int weft_cancelled_; /* private */
} weft_status;

#define WEFT_STATUS_IGNORE ((weft_status *)0)
#define WEFT_STATUSES_IGNORE ((weft_status *)0)

/* Thread levels, in increasing order. */
enum {
    WEFT_THREAD_SINGLE = 0,
    WEFT_THREAD_FUNNELED = 1,
    WEFT_THREAD_SERIALIZED = 2,
    WEFT_THREAD_MULTIPLE = 3
};

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

/* ---- Info (usable before weft_init and after weft_finalize) ---- */
WEFT_API int weft_info_create(weft_info *info);
WEFT_API int weft_info_set(weft_info info, const char *key, const char *value);
/* Copies at most valuelen characters plus a terminating NUL; flag=0 when the key is absent. */
WEFT_API int weft_info_get(weft_info info, const char *key, size_t valuelen, char *value,
                           int *flag);
WEFT_API int weft_info_get_valuelen(weft_info info, const char *key, size_t *valuelen,
                                    int *flag);
WEFT_API int weft_info_delete(weft_info info, const char *key);
WEFT_API int weft_info_dup(weft_info info, weft_info *newinfo);
WEFT_API int weft_info_free(weft_info *info);
WEFT_API int weft_info_get_nkeys(weft_info info, int *nkeys);
/* key must hold WEFT_MAX_INFO_KEY + 1 characters. */
WEFT_API int weft_info_get_nthkey(weft_info info, int n, char *key);
/* MPIX_Info_set_hex: stores value_size bytes as two lowercase hex digits each, in memory order. */
WEFT_API int weft_info_set_hex(weft_info info, const char *key, const void *value,
                               size_t value_size);
/* Decodes the hex value of key into exactly value_size bytes; also accepts MPICH's "[N]" for
 * a run of N zero bytes.  Malformed hex or a decoded size other than value_size is an error. */
WEFT_API int weft_info_get_hex(weft_info info, const char *key, void *value, size_t value_size,
                               int *flag);

/* ---- Environment ---- */
WEFT_API int weft_init(int *argc, char ***argv);
WEFT_API int weft_init_thread(int *argc, char ***argv, int required, int *provided);
/* Weft extension: init with hints (e.g. "weft_fabric" = "ofi,ucx"). */
WEFT_API int weft_init_info(int *argc, char ***argv, int required, weft_info info,
                            int *provided);
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
 * "failed_processes" (processes known dead), and, where the fabric counts them,
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
    size_t struct_size;    /* sizeof(weft_plugin_report_t) of the library that filled it */
    const char *name;      /* from the file name, libweft-<name>.so */
    const char *path;
    const char *kind;      /* "fabric", "queue", or "" when it cannot be loaded */
    const char *version;   /* the plugin's own version string */
    unsigned abi_major, abi_minor;
    int priority;
    int status;            /* 1: opens here; 0: loads but does not open; -1: cannot be loaded */
    const char *why;       /* the reason when status is not 1, else "" */
    size_t eager_size, inject_size, max_message_size; /* a fabric that opens */
    const char *queue_types; /* a queue plugin: the info types it decodes, space-separated */
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
WEFT_API int weft_stream_comm_create_multiplex(weft_comm comm, size_t count,
                                               const weft_stream streams[], weft_comm *newcomm);
/* The local stream at index idx (0 for a stream communicator); WEFT_STREAM_NULL if none. */
WEFT_API int weft_comm_get_stream(weft_comm comm, int idx, weft_stream *stream);
/* Multiplex point-to-point: from the local stream src_idx to the peer's stream dst_idx.
 * Receives may pass WEFT_ANY_INDEX as src_idx; status.stream_index reports it. */
WEFT_API int weft_stream_send(const void *buf, size_t count, weft_datatype datatype, int dest,
                              int tag, weft_comm comm, int src_idx, int dst_idx);
WEFT_API int weft_stream_isend(const void *buf, size_t count, weft_datatype datatype, int dest,
                               int tag, weft_comm comm, int src_idx, int dst_idx,
                               weft_request *request);
WEFT_API int weft_stream_recv(void *buf, size_t count, weft_datatype datatype, int source,
                              int tag, weft_comm comm, int src_idx, int dst_idx,
                              weft_status *status);
WEFT_API int weft_stream_irecv(void *buf, size_t count, weft_datatype datatype, int source,
                               int tag, weft_comm comm, int src_idx, int dst_idx,
                               weft_request *request);
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
WEFT_API int weft_type_vector(size_t count, size_t blocklength, ptrdiff_t stride,
                              weft_datatype oldtype, weft_datatype *newtype);
WEFT_API int weft_type_commit(weft_datatype *datatype);
WEFT_API int weft_type_free(weft_datatype *datatype);
WEFT_API int weft_type_size(weft_datatype datatype, size_t *size);
WEFT_API int weft_type_get_extent(weft_datatype datatype, ptrdiff_t *lb, ptrdiff_t *extent);

/* ---- Point-to-point ---- */
WEFT_API int weft_send(const void *buf, size_t count, weft_datatype datatype, int dest, int tag,
                       weft_comm comm);
WEFT_API int weft_recv(void *buf, size_t count, weft_datatype datatype, int source, int tag,
                       weft_comm comm, weft_status *status);
/* A small send that the fabric finished before weft_isend returned gets a request handle
 * shared by every such send on its endpoint (MPICH's lightweight requests do the same): it is
 * complete already, and a wait or test still retires it and sets the handle to
 * WEFT_REQUEST_NULL.  So two pending handles may be equal: do not key anything on them. */
WEFT_API int weft_isend(const void *buf, size_t count, weft_datatype datatype, int dest, int tag,
                        weft_comm comm, weft_request *request);
WEFT_API int weft_irecv(void *buf, size_t count, weft_datatype datatype, int source, int tag,
                        weft_comm comm, weft_request *request);
WEFT_API int weft_wait(weft_request *request, weft_status *status);
WEFT_API int weft_test(weft_request *request, int *flag, weft_status *status);
WEFT_API int weft_waitall(size_t count, weft_request requests[], weft_status statuses[]);
WEFT_API int weft_waitany(size_t count, weft_request requests[], size_t *index,
                          weft_status *status);
WEFT_API int weft_testall(size_t count, weft_request requests[], int *flag,
                          weft_status statuses[]);
WEFT_API int weft_cancel(weft_request *request);
WEFT_API int weft_test_cancelled(const weft_status *status, int *flag);
WEFT_API int weft_probe(int source, int tag, weft_comm comm, weft_status *status);
WEFT_API int weft_iprobe(int source, int tag, weft_comm comm, int *flag, weft_status *status);
WEFT_API int weft_get_count(const weft_status *status, weft_datatype datatype, size_t *count);

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
WEFT_API int weft_reduce(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype,
                         weft_op op, int root, weft_comm comm);
WEFT_API int weft_allreduce(const void *sendbuf, void *recvbuf, size_t count,
                            weft_datatype datatype, weft_op op, weft_comm comm);
WEFT_API int weft_gather(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                         void *recvbuf, size_t recvcount, weft_datatype recvtype, int root,
                         weft_comm comm);
WEFT_API int weft_gatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                          void *recvbuf, const size_t recvcounts[], const size_t displs[],
                          weft_datatype recvtype, int root, weft_comm comm);
WEFT_API int weft_scatter(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                          void *recvbuf, size_t recvcount, weft_datatype recvtype, int root,
                          weft_comm comm);
WEFT_API int weft_scatterv(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                           weft_datatype sendtype, void *recvbuf, size_t recvcount,
                           weft_datatype recvtype, int root, weft_comm comm);
WEFT_API int weft_allgather(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                            void *recvbuf, size_t recvcount, weft_datatype recvtype,
                            weft_comm comm);
WEFT_API int weft_allgatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                             void *recvbuf, const size_t recvcounts[], const size_t displs[],
                             weft_datatype recvtype, weft_comm comm);
WEFT_API int weft_alltoall(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                           void *recvbuf, size_t recvcount, weft_datatype recvtype,
                           weft_comm comm);
WEFT_API int weft_alltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                            weft_datatype sendtype, void *recvbuf, const size_t recvcounts[],
                            const size_t rdispls[], weft_datatype recvtype, weft_comm comm);
WEFT_API int weft_reduce_scatter_block(const void *sendbuf, void *recvbuf, size_t recvcount,
                                       weft_datatype datatype, weft_op op, weft_comm comm);
WEFT_API int weft_scan(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype,
                       weft_op op, weft_comm comm);
WEFT_API int weft_exscan(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype,
                         weft_op op, weft_comm comm);

WEFT_API int weft_ibarrier(weft_comm comm, weft_request *request);
WEFT_API int weft_ibcast(void *buffer, size_t count, weft_datatype datatype, int root,
                         weft_comm comm, weft_request *request);
WEFT_API int weft_ireduce(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype,
                          weft_op op, int root, weft_comm comm, weft_request *request);
WEFT_API int weft_iallreduce(const void *sendbuf, void *recvbuf, size_t count,
                             weft_datatype datatype, weft_op op, weft_comm comm,
                             weft_request *request);
WEFT_API int weft_igather(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                          void *recvbuf, size_t recvcount, weft_datatype recvtype, int root,
                          weft_comm comm, weft_request *request);
WEFT_API int weft_igatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                           void *recvbuf, const size_t recvcounts[], const size_t displs[],
                           weft_datatype recvtype, int root, weft_comm comm,
                           weft_request *request);
WEFT_API int weft_iscatter(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                           void *recvbuf, size_t recvcount, weft_datatype recvtype, int root,
                           weft_comm comm, weft_request *request);
WEFT_API int weft_iscatterv(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                            weft_datatype sendtype, void *recvbuf, size_t recvcount,
                            weft_datatype recvtype, int root, weft_comm comm,
                            weft_request *request);
WEFT_API int weft_iallgather(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                             void *recvbuf, size_t recvcount, weft_datatype recvtype,
                             weft_comm comm, weft_request *request);
WEFT_API int weft_iallgatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                              void *recvbuf, const size_t recvcounts[], const size_t displs[],
                              weft_datatype recvtype, weft_comm comm, weft_request *request);
WEFT_API int weft_ialltoall(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                            void *recvbuf, size_t recvcount, weft_datatype recvtype,
                            weft_comm comm, weft_request *request);
WEFT_API int weft_ialltoallv(const void *sendbuf, const size_t sendcounts[],
                             const size_t sdispls[], weft_datatype sendtype, void *recvbuf,
                             const size_t recvcounts[], const size_t rdispls[],
                             weft_datatype recvtype, weft_comm comm, weft_request *request);
WEFT_API int weft_ireduce_scatter_block(const void *sendbuf, void *recvbuf, size_t recvcount,
                                        weft_datatype datatype, weft_op op, weft_comm comm,
                                        weft_request *request);
WEFT_API int weft_iscan(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype,
                        weft_op op, weft_comm comm, weft_request *request);
WEFT_API int weft_iexscan(const void *sendbuf, void *recvbuf, size_t count,
                          weft_datatype datatype, weft_op op, weft_comm comm,
                          weft_request *request);

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
WEFT_API int weft_send_enqueue(const void *buf, size_t count, weft_datatype datatype, int dest,
                               int tag, weft_comm comm);
WEFT_API int weft_recv_enqueue(void *buf, size_t count, weft_datatype datatype, int source,
                               int tag, weft_comm comm, weft_status *status);
/* The request starts when the queue reaches this point; the queue does not wait for it. */
WEFT_API int weft_isend_enqueue(const void *buf, size_t count, weft_datatype datatype, int dest,
                                int tag, weft_comm comm, weft_request *request);
WEFT_API int weft_irecv_enqueue(void *buf, size_t count, weft_datatype datatype, int source,
                                int tag, weft_comm comm, weft_request *request);
/* The queue waits here for the request(s), which must come from *_enqueue calls on the same
 * queue (else WEFT_ERR_REQUEST); the handles become WEFT_REQUEST_NULL at once. */
WEFT_API int weft_wait_enqueue(weft_request *request, weft_status *status);
WEFT_API int weft_waitall_enqueue(size_t count, weft_request requests[], weft_status statuses[]);
WEFT_API int weft_allreduce_enqueue(const void *sendbuf, void *recvbuf, size_t count,
                                    weft_datatype datatype, weft_op op, weft_comm comm);
WEFT_API int weft_bcast_enqueue(void *buffer, size_t count, weft_datatype datatype, int root,
                                weft_comm comm);
WEFT_API int weft_barrier_enqueue(weft_comm comm);
WEFT_API int weft_allgather_enqueue(const void *sendbuf, size_t sendcount, weft_datatype sendtype,
                                    void *recvbuf, size_t recvcount, weft_datatype recvtype,
                                    weft_comm comm);

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

#define WEFT_AM_MAX_ARGS 15       /* 64-bit handler arguments per message */
#define WEFT_AM_MAX_HANDLERS 256  /* handler indices 0..255 */
#define WEFT_AM_MAX_VECTOR 16     /* pieces per side of a vectored Long */
/* Built-in handlers, with Shoal's numbers.  3 (H_INCR_BAR) is the barrier's and 4 (Shoal's
 * H_WAIT) is reserved: neither can be sent or registered; user handlers are
 * WEFT_AM_HANDLER_FIRST..255. */
#define WEFT_AM_H_EMPTY 0  /* does nothing: a message wanted only for its data and reply */
#define WEFT_AM_H_INCR 1   /* adds 1 to the target kernel's counter (weft_pgas_wait_counter) */
#define WEFT_AM_H_ADD 2    /* adds args[0] to the target kernel's counter */
#define WEFT_AM_HANDLER_FIRST 5

/* Flags of weft_am_* */
#define WEFT_AM_ASYNC 0x1u  /* no automatic reply (a get's data is its reply: not allowed there) */

/* Message kinds, as weft_am_info::kind reports them. */
enum {
    WEFT_AM_SHORT = 1,
    WEFT_AM_MEDIUM = 2,
    WEFT_AM_LONG = 4,
    WEFT_AM_LONG_STRIDED = 5,
    WEFT_AM_LONG_VECTORED = 6
};

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
    int source;             /* the sending kernel */
    unsigned handler;
    unsigned token;         /* the sender's 16-bit message token */
    int kind;               /* WEFT_AM_SHORT ... WEFT_AM_LONG_VECTORED */
    int is_reply;           /* the message is a reply (weft_am_reply_short, or a get's data) */
    unsigned nargs;
    const uint64_t *args;
    const void *payload;    /* Medium: the payload */
    size_t length;          /* Medium, Long: payload bytes (strided, vectored: in total) */
    size_t offset;          /* Long: where the data landed in this kernel's segment (strided,
                               vectored: the first destination offset) */
    void *weft_private_;
} weft_am_info;

typedef void (*weft_am_handler)(weft_pgas kernel, const weft_am_info *info, void *user_data);

/* Collective over comm.  Each local kernel gets a zero-filled segment of segment_size bytes.
 * Info keys: weft_am_shoal_compat=true refuses every message a Shoal-limited peer (the
 * GAScore) could not parse, instead of sending it. */
WEFT_API int weft_pgas_create(weft_comm comm, size_t segment_size, weft_info info,
                              weft_pgas *pgas);
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

WEFT_API int weft_am_register(weft_pgas kernel, unsigned index, weft_am_handler fn,
                              void *user_data);
WEFT_API int weft_am_max_medium(weft_pgas kernel, size_t *bytes);
WEFT_API int weft_am_max_long(weft_pgas kernel, size_t *bytes);
WEFT_API int weft_am_max_args(weft_pgas kernel, unsigned *nargs);

/* Messages.  Each returns once its source data may be reused (a caller's buffer) or has been
 * handed to the fabric (segment data: do not change it until the reply arrives). */
WEFT_API int weft_am_short(weft_pgas kernel, int dst, unsigned handler, const uint64_t *args,
                           unsigned nargs, unsigned flags);
/* Medium: the payload goes to the target's handler (info->payload). */
WEFT_API int weft_am_medium(weft_pgas kernel, int dst, unsigned handler, const uint64_t *args,
                            unsigned nargs, const void *buf, size_t length, unsigned flags);
WEFT_API int weft_am_medium_seg(weft_pgas kernel, int dst, unsigned handler,
                                const uint64_t *args, unsigned nargs, size_t src_offset,
                                size_t length, unsigned flags);
/* Long: the payload is written into the target's segment at dst_offset before its handler
 * runs and before the reply is sent. */
WEFT_API int weft_am_long(weft_pgas kernel, int dst, unsigned handler, const uint64_t *args,
                          unsigned nargs, const void *buf, size_t length, size_t dst_offset,
                          unsigned flags);
WEFT_API int weft_am_long_seg(weft_pgas kernel, int dst, unsigned handler,
                              const uint64_t *args, unsigned nargs, size_t src_offset,
                              size_t length, size_t dst_offset, unsigned flags);
/* Strided and vectored Longs read the caller's segment; both sides move the same bytes. */
WEFT_API int weft_am_long_strided(weft_pgas kernel, int dst, unsigned handler,
                                  const uint64_t *args, unsigned nargs,
                                  const weft_am_stride *src, const weft_am_stride *dst_region,
                                  unsigned flags);
WEFT_API int weft_am_long_vectored(weft_pgas kernel, int dst, unsigned handler,
                                   const uint64_t *args, unsigned nargs,
                                   const weft_am_piece *src, size_t src_count,
                                   const weft_am_piece *dst_pieces, size_t dst_count,
                                   unsigned flags);
/* Gets: bring the target's segment data into the caller's segment.  The data's arrival is the
 * reply (weft_am_wait_replies counts it); `handler` (WEFT_AM_H_EMPTY for none) then runs on
 * the caller with is_reply set. */
WEFT_API int weft_am_get_long(weft_pgas kernel, int target, unsigned handler,
                              const uint64_t *args, unsigned nargs, size_t remote_offset,
                              size_t length, size_t local_offset, unsigned flags);
WEFT_API int weft_am_get_strided(weft_pgas kernel, int target, unsigned handler,
                                 const uint64_t *args, unsigned nargs,
                                 const weft_am_stride *remote, const weft_am_stride *local,
                                 unsigned flags);
/* From inside a request handler only, once: a Short reply to its sender.  It runs `handler`
 * there and is not counted by weft_am_wait_replies. */
WEFT_API int weft_am_reply_short(const weft_am_info *request, unsigned handler,
                                 const uint64_t *args, unsigned nargs);
/* Waits until n automatic replies arrived (counting since the last call) and consumes them. */
WEFT_API int weft_am_wait_replies(weft_pgas kernel, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_WEFT_H */
