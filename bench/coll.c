/* weft-coll: latency of Weft's blocking collectives per message size, like the OSU collective
 * benchmarks (osu_barrier, osu_bcast, osu_allreduce, osu_allgather, osu_alltoall).
 *
 *   weftrun -n N weft-coll [-c LIST] [-m MIN] [-M MAX] [-i ITERS] [-w WARMUP] [-L LARGE] [-p]
 *
 * The measurement loop lives in coll_bench.h and is shared, call for call, with mpi-coll.c
 * (built as mpich-coll and ompi-coll); this file only maps its macros onto the Weft C API.
 * This is a benchmark program, not a test: it prints numbers and does not judge them. */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#include "bench_common.h"

/* "fabric ucx (version), bootstrap weftrun" from the runtime info. */
static void cb_describe(char *buf, size_t cap)
{
    char fabric[128] = "?", version[128] = "", boot[64] = "?";
    weft_info info = WEFT_INFO_NULL;
    if (weft_get_runtime_info(&info) == WEFT_SUCCESS) {
        int flag = 0;
        weft_info_get(info, "fabric", sizeof fabric - 1, fabric, &flag);
        if (!flag)
            snprintf(fabric, sizeof fabric, "?");
        weft_info_get(info, "fabric_version", sizeof version - 1, version, &flag);
        if (!flag)
            version[0] = '\0';
        weft_info_get(info, "bootstrap", sizeof boot - 1, boot, &flag);
        if (!flag)
            snprintf(boot, sizeof boot, "?");
        weft_info_free(&info);
    }
    snprintf(buf, cap, "weft, fabric %s%s%s%s, bootstrap %s", fabric, version[0] ? " (" : "",
             version, version[0] ? ")" : "", boot);
}

#define CB_PROG "weft-coll"
#define CB_LAUNCH "weftrun -n N"
#define CB_CHECK(call) BENCH_CHECK(call)
#define CB_INIT(argcp, argvp) CB_CHECK(weft_init(argcp, argvp))
#define CB_FINALIZE() CB_CHECK(weft_finalize())
#define CB_ABORT(code) weft_abort(WEFT_COMM_WORLD, code)
#define CB_RANK(p) CB_CHECK(weft_comm_rank(WEFT_COMM_WORLD, p))
#define CB_SIZE(p) CB_CHECK(weft_comm_size(WEFT_COMM_WORLD, p))
#define CB_WTIME() weft_wtime()
#define CB_BARRIER() CB_CHECK(weft_barrier(WEFT_COMM_WORLD))
#define CB_BCAST(buf, n, root) CB_CHECK(weft_bcast(buf, n, WEFT_BYTE, root, WEFT_COMM_WORLD))
#define CB_ALLREDUCE_FSUM(s, r, n)                                                                \
    CB_CHECK(weft_allreduce(s, r, n, WEFT_FLOAT, WEFT_SUM, WEFT_COMM_WORLD))
#define CB_ALLGATHER(s, r, n)                                                                     \
    CB_CHECK(weft_allgather(s, n, WEFT_BYTE, r, n, WEFT_BYTE, WEFT_COMM_WORLD))
#define CB_ALLTOALL(s, r, n)                                                                      \
    CB_CHECK(weft_alltoall(s, n, WEFT_BYTE, r, n, WEFT_BYTE, WEFT_COMM_WORLD))
#define CB_REDUCE_DMAX(in, out, n)                                                                \
    CB_CHECK(weft_reduce(in, out, n, WEFT_DOUBLE, WEFT_MAX, 0, WEFT_COMM_WORLD))
#define CB_REDUCE_DSUM(in, out, n)                                                                \
    CB_CHECK(weft_reduce(in, out, n, WEFT_DOUBLE, WEFT_SUM, 0, WEFT_COMM_WORLD))

#include "coll_bench.h"
