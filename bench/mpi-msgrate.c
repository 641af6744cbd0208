/* weft-mpi-msgrate / weft-mpi-msgrate-native: the weft-msgrate loop (one pair, rank 0 posts a
 * window of nonblocking sends and waits for all, rank 1 a window of nonblocking receives, then
 * a 4-byte ack back) written once and compiled twice: through the MPI front end (MPI_Isend,
 * MPI_Irecv, MPI_Waitall on MPI_COMM_WORLD, libweft-mpi) and on Weft's native API (weft_isend,
 * weft_irecv, weft_waitall, libweft), so that the two differ by the front end alone.
 *
 *   weftrun -n 2 weft-mpi-msgrate [-s SIZE] [-W WINDOW] [-i ITERS] [-w WARMUP] [-p]
 *
 * The same file, built by mpicc.mpich / mpicc.openmpi, is mpich-msgrate / ompi-msgrate: the
 * loop on MPICH and Open MPI (bench/compare-modes.sh --mpi).  -p pins rank r to the r-th CPU of
 * the inherited mask, as the other benchmarks do.
 *
 * Prints "<api> <size> B window <W>: <rate> msg/s".  BENCH_CG=window|loop toggles callgrind
 * around each window / the timed loop, as weft-msgrate does (bench_callgrind.h, README.md). */
#include "bench_util.h" /* first: it sets _GNU_SOURCE, which -std=c11 needs for getopt and usleep */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_callgrind.h"

#ifdef BENCH_NATIVE
#include <weft/weft.h>
typedef weft_request req_t;
#define API "native"
#define INIT(argc, argv) weft_init(argc, argv)
#define FINALIZE() weft_finalize()
#define RANK(r) weft_comm_rank(WEFT_COMM_WORLD, r)
#define WTIME() weft_wtime()
#define ISEND(b, n, tag, r) weft_isend(b, n, WEFT_BYTE, 1, tag, WEFT_COMM_WORLD, r)
#define IRECV(b, n, tag, r) weft_irecv(b, n, WEFT_BYTE, 0, tag, WEFT_COMM_WORLD, r)
#define SEND(b, n, to, tag) weft_send(b, n, WEFT_BYTE, to, tag, WEFT_COMM_WORLD)
#define RECV(b, n, from, tag) weft_recv(b, n, WEFT_BYTE, from, tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE)
#define WAITALL(n, r) weft_waitall((size_t)(n), r, WEFT_STATUSES_IGNORE)
#define BARRIER() weft_barrier(WEFT_COMM_WORLD)
#else
#include <mpi.h>
typedef MPI_Request req_t;
#define API "mpi"
#define INIT(argc, argv) MPI_Init(argc, argv)
#define FINALIZE() MPI_Finalize()
#define RANK(r) MPI_Comm_rank(MPI_COMM_WORLD, r)
#define WTIME() MPI_Wtime()
#define ISEND(b, n, tag, r) MPI_Isend(b, (int)(n), MPI_BYTE, 1, tag, MPI_COMM_WORLD, r)
#define IRECV(b, n, tag, r) MPI_Irecv(b, (int)(n), MPI_BYTE, 0, tag, MPI_COMM_WORLD, r)
#define SEND(b, n, to, tag) MPI_Send(b, n, MPI_BYTE, to, tag, MPI_COMM_WORLD)
#define RECV(b, n, from, tag) MPI_Recv(b, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
#define WAITALL(n, r) MPI_Waitall((int)(n), r, MPI_STATUSES_IGNORE)
#define BARRIER() MPI_Barrier(MPI_COMM_WORLD)
#if defined(MPICH) && defined(__GNUC__) && !defined(__clang__)
/* MPICH's access attributes make GCC 12 read MPI_STATUSES_IGNORE ((MPI_Status *)1) as a
 * zero-sized array it would write to: a false -Wstringop-overflow. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#endif

#define CHECK(call)                                                                \
    do {                                                                           \
        int rc_ = (call);                                                          \
        if (rc_ != 0) {                                                            \
            fprintf(stderr, "mpi-msgrate (%s): %s failed: %d\n", API, #call, rc_); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

int main(int argc, char **argv) {
    long size = 8, window = 64, iters = 10000, warmup = 100;
    CHECK(INIT(&argc, &argv));
    int opt, pin = 0;
    while ((opt = getopt(argc, argv, "s:W:i:w:p")) != -1) {
        switch (opt) {
            case 's': size = atol(optarg); break;
            case 'W': window = atol(optarg); break;
            case 'i': iters = atol(optarg); break;
            case 'w': warmup = atol(optarg); break;
            case 'p': pin = 1; break;
            default:
                fprintf(stderr, "usage: weftrun -n 2 %s [-s SIZE] [-W WINDOW] [-i ITERS] [-w WARMUP] [-p]\n", argv[0]);
                return 2;
        }
    }
    int rank;
    CHECK(RANK(&rank));
    if (pin) bench_pin(rank);
    char *buf = malloc((size_t)(size ? size : 1) * (size_t)window), ack[4] = {0};
    req_t *reqs = malloc(sizeof(req_t) * (size_t)window);
    memset(buf, rank, (size_t)(size ? size : 1) * (size_t)window);
    int cg = cg_mode();
    double t0 = 0;
    for (int phase = 0; phase < 2; ++phase) {
        long n = phase == 0 ? warmup : iters;
        int cg_win = phase == 1 && cg == CG_WINDOW;
        unsigned settle = cg_win ? cg_settle_us() : 0;
        CHECK(BARRIER());
        if (phase == 1) t0 = WTIME();
        if (phase == 1 && cg == CG_LOOP) CALLGRIND_TOGGLE_COLLECT;
        for (long i = 0; i < n; ++i) {
            if (settle) usleep(settle);
            if (cg_win) CALLGRIND_TOGGLE_COLLECT;
            if (rank == 0) {
                for (long j = 0; j < window; ++j) CHECK(ISEND(buf + j * size, size, 100, &reqs[j]));
            } else {
                for (long j = 0; j < window; ++j) CHECK(IRECV(buf + j * size, size, 100, &reqs[j]));
            }
            CHECK(WAITALL(window, reqs));
            if (cg_win) CALLGRIND_TOGGLE_COLLECT;
            if (rank == 0)
                CHECK(RECV(ack, 4, 1, 101));
            else
                CHECK(SEND(ack, 4, 0, 101));
        }
        if (phase == 1 && cg == CG_LOOP) CALLGRIND_TOGGLE_COLLECT;
    }
    double t = WTIME() - t0;
    if (rank == 0)
        printf("%s %ld B window %ld: %.0f msg/s (%ld windows, %.3f s)\n", API, size, window,
               (double)(window * iters) / t, iters, t);
    free(buf);
    free(reqs);
    CHECK(FINALIZE());
    return 0;
}
