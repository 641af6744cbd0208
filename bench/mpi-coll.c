/* mpich-coll / ompi-coll: the weft-coll measurement (coll_bench.h) on plain MPI, built once
 * with each MPI implementation's wrapper compiler (bench/CMakeLists.txt).
 *
 *   mpiexec.mpich -n N mpich-coll [options]      mpirun.openmpi -n N ompi-coll [options]
 *
 * Same options, loop and output as weft-coll; only the library underneath differs.
 * This is a benchmark program, not a test: it prints numbers and does not judge them. */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static void cb_fail(const char *what, int rc, const char *file, int line) {
    char text[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "unknown error");
    fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", file, line, what, text, rc);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* The first line of MPI_Get_library_version ("MPICH Version: 4.0.2", "Open MPI v4.1.4, ..."). */
static void cb_describe(char *buf, size_t cap) {
    char v[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len = 0;
    MPI_Get_library_version(v, &len);
    v[strcspn(v, "\n")] = '\0';
    for (char *p = v; *p; p++)
        if (*p == '\t') *p = ' ';
    snprintf(buf, cap, "%s", v[0] ? v : "MPI (unknown version)");
}

#ifndef CB_MPI_PROG
#define CB_MPI_PROG "mpi-coll"
#endif
#define CB_PROG CB_MPI_PROG
#define CB_LAUNCH "mpiexec -n N"
#define CB_CHECK(call)                                                         \
    do {                                                                       \
        int cb_rc_ = (call);                                                   \
        if (cb_rc_ != MPI_SUCCESS) cb_fail(#call, cb_rc_, __FILE__, __LINE__); \
    } while (0)
#define CB_INIT(argcp, argvp) CB_CHECK(MPI_Init(argcp, argvp))
#define CB_FINALIZE() CB_CHECK(MPI_Finalize())
#define CB_ABORT(code) MPI_Abort(MPI_COMM_WORLD, code)
#define CB_RANK(p) CB_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, p))
#define CB_SIZE(p) CB_CHECK(MPI_Comm_size(MPI_COMM_WORLD, p))
#define CB_WTIME() MPI_Wtime()
#define CB_BARRIER() CB_CHECK(MPI_Barrier(MPI_COMM_WORLD))
#define CB_BCAST(buf, n, root) CB_CHECK(MPI_Bcast(buf, (int)(n), MPI_BYTE, root, MPI_COMM_WORLD))
#define CB_ALLREDUCE_FSUM(s, r, n) CB_CHECK(MPI_Allreduce(s, r, (int)(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD))
#define CB_ALLGATHER(s, r, n) CB_CHECK(MPI_Allgather(s, (int)(n), MPI_BYTE, r, (int)(n), MPI_BYTE, MPI_COMM_WORLD))
#define CB_ALLTOALL(s, r, n) CB_CHECK(MPI_Alltoall(s, (int)(n), MPI_BYTE, r, (int)(n), MPI_BYTE, MPI_COMM_WORLD))
#define CB_REDUCE_DMAX(in, out, n) CB_CHECK(MPI_Reduce(in, out, (int)(n), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD))
#define CB_REDUCE_DSUM(in, out, n) CB_CHECK(MPI_Reduce(in, out, (int)(n), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD))

#include "coll_bench.h"
