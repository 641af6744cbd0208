/* The body of weft-coll (coll.c) and of mpich-coll / ompi-coll (mpi-coll.c): one measurement
 * loop, compiled once against Weft and once against MPI.
 *
 * The including file defines the backend as macros and then includes this header, which holds
 * the whole program (options, buffers, loops, checks, output).  So the two programs run the
 * same code, call for call; only the library underneath differs.
 *
 *   CB_PROG, CB_LAUNCH               program name, launcher shown in --help
 *   CB_SUCCESS                       success return code
 *   CB_CHECK(call)                   abort the job with a message when call != CB_SUCCESS
 *   CB_INIT(argcp, argvp)            init; CB_FINALIZE(); CB_ABORT(code)
 *   CB_RANK(intp), CB_SIZE(intp)     rank and size in the world communicator
 *   CB_WTIME()                       seconds (double)
 *   CB_BARRIER()
 *   CB_BCAST(buf, nbytes, root)                    bytes
 *   CB_ALLREDUCE_FSUM(sbuf, rbuf, nfloats)         float, sum
 *   CB_ALLGATHER(sbuf, rbuf, nbytes)               bytes per rank
 *   CB_ALLTOALL(sbuf, rbuf, nbytes)                bytes per pair
 *   CB_REDUCE_DMAX(in, out, n) / CB_REDUCE_DSUM(in, out, n)   doubles to rank 0
 *   cb_describe(char *buf, size_t cap)            one line: library, fabric/version
 *
 * Measurement, for each collective and each size (as osu_<coll>, with the differences noted):
 *   barrier; `warmup` untimed calls; [-t: rank 0 broadcasts a smaller `iters`]; barrier; t0;
 *   `iters` calls back to back; t1.
 *   Each rank's latency is (t1 - t0) / iters; rank 0 prints the average over ranks (as OSU's
 *   "Avg Latency"), the minimum and the maximum.  OSU instead times each call separately with a
 *   barrier after every call; back-to-back calls let consecutive calls overlap a little (a rank
 *   that leaves early starts the next call), which is what an application loop sees.
 *   Above the "large" threshold (default 8 KiB, as OSU) iters and warmup are divided by 10.
 *   The results are checked once after the timed loop of each size (outside the timing).
 *
 * This is a benchmark, not a test: it prints numbers and judges nothing (a wrong result makes
 * the exit status 1). */
#ifndef WEFT_COLL_BENCH_H
#define WEFT_COLL_BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h" /* option parsing and pinning, shared with the other benchmarks */

enum { CB_BARRIER_ID, CB_BCAST_ID, CB_ALLREDUCE_ID, CB_ALLGATHER_ID, CB_ALLTOALL_ID, CB_NCOLLS };
static const char *const cb_names[CB_NCOLLS] = {"barrier", "bcast", "allreduce", "allgather",
                                                "alltoall"};

/* "barrier,bcast" or "all" -> which[]; returns 0 on success.  order[] keeps the given order. */
static int cb_parse_colls(const char *list, int order[CB_NCOLLS], int *count)
{
    *count = 0;
    if (strcmp(list, "all") == 0) {
        for (int c = 0; c < CB_NCOLLS; c++)
            order[(*count)++] = c;
        return 0;
    }
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int found = -1;
        for (int c = 0; c < CB_NCOLLS; c++)
            if (strlen(cb_names[c]) == len && strncmp(p, cb_names[c], len) == 0)
                found = c;
        if (found < 0)
            return -1;
        for (int k = 0; k < *count; k++)
            if (order[k] == found)
                found = -2; /* duplicate: ignore */
        if (found >= 0)
            order[(*count)++] = found;
        p += len;
        if (*p == ',')
            p++;
    }
    return *count > 0 ? 0 : -1;
}

static void cb_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "Usage: %s %s [options]\n"
            "Latency of back-to-back collectives on the world communicator, per message size\n"
            "(powers of two from MIN to MAX), like the OSU collective benchmarks.\n"
            "\n"
            "  -c, --colls LIST   comma-separated: barrier,bcast,allreduce,allgather,alltoall\n"
            "                     or all (default all)\n"
            "  -m, --min SIZE     smallest size in bytes (default 8); K/M suffixes accepted\n"
            "  -M, --max SIZE     largest size (default 4M)\n"
            "  -i, --iters N      timed calls per size (default 1000; /10 above LARGE)\n"
            "  -w, --warmup N     untimed calls before each size (default 100; /10 above LARGE)\n"
            "  -L, --large SIZE   threshold for the /10 rule (default 8K, as OSU)\n"
            "  -t, --time SEC     cap each size's timed loop at about SEC seconds: rank 0\n"
            "                     estimates the time per call from the warm-up and broadcasts\n"
            "                     the count (at least 10 calls; needs warm-up > 0; default 0:\n"
            "                     no cap)\n"
            "  -p, --pin          pin rank r to the r-th CPU of the inherited affinity mask\n"
            "  -h, --help         this text\n"
            "\n"
            "Sizes: bcast SIZE bytes from rank 0; allreduce SIZE/4 floats, sum; allgather and\n"
            "alltoall SIZE bytes per rank (per pair); barrier is one row with bytes 0.\n"
            "Output (rank 0): '#' comment lines, then CSV collective,bytes,avg_us,min_us,max_us,iters\n"
            "where avg/min/max are over ranks of each rank's (time of ITERS calls) / ITERS and\n"
            "iters is the number of timed calls; a 7th field WRONG marks a wrong result.\n",
            CB_LAUNCH, prog);
}

static unsigned char cb_byte(size_t a, size_t b, size_t k, size_t n)
{
    return (unsigned char)((a * 31 + b * 17 + k * 7 + n + 1) & 0xff);
}

/* One call of the collective being measured (the same in the warm-up and the timed loop). */
static inline void cb_one_call(int coll, unsigned char *sbuf, unsigned char *rbuf, size_t n,
                               size_t nfloats)
{
    switch (coll) {
    case CB_BARRIER_ID: CB_BARRIER(); break;
    case CB_BCAST_ID: CB_BCAST(sbuf, n, 0); break;
    case CB_ALLREDUCE_ID: CB_ALLREDUCE_FSUM(sbuf, rbuf, nfloats); break;
    case CB_ALLGATHER_ID: CB_ALLGATHER(sbuf, rbuf, n); break;
    case CB_ALLTOALL_ID: CB_ALLTOALL(sbuf, rbuf, n); break;
    default: break;
    }
}

int main(int argc, char **argv)
{
    size_t min_size = 8, max_size = (size_t)4 << 20, large = 8192;
    long iters = 1000, warmup = 100;
    double time_cap = 0.0;
    int order[CB_NCOLLS], ncolls = 0, pin = 0;

    CB_INIT(&argc, &argv);
    int rank = 0, nprocs = 0;
    CB_RANK(&rank);
    CB_SIZE(&nprocs);
    cb_parse_colls("all", order, &ncolls);

    static const struct option longopts[] = {
        {"colls", required_argument, NULL, 'c'}, {"min", required_argument, NULL, 'm'},
        {"max", required_argument, NULL, 'M'},   {"iters", required_argument, NULL, 'i'},
        {"warmup", required_argument, NULL, 'w'}, {"large", required_argument, NULL, 'L'},
        {"time", required_argument, NULL, 't'},  {"pin", no_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int opt, bad = 0;
    opterr = rank == 0;
    while ((opt = getopt_long(argc, argv, "c:m:M:i:w:L:t:ph", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c': bad |= cb_parse_colls(optarg, order, &ncolls); break;
        case 'm': bad |= bench_parse_size(optarg, &min_size); break;
        case 'M': bad |= bench_parse_size(optarg, &max_size); break;
        case 'i': bad |= bench_parse_long(optarg, 1, &iters); break;
        case 'w': bad |= bench_parse_long(optarg, 0, &warmup); break;
        case 'L': bad |= bench_parse_size(optarg, &large); break;
        case 't': {
            char *end = NULL;
            time_cap = strtod(optarg, &end);
            bad |= end == optarg || *end != '\0' || time_cap < 0.0;
            break;
        }
        case 'p': pin = 1; break;
        case 'h':
            if (rank == 0)
                cb_usage(stdout, argv[0]);
            CB_FINALIZE();
            return 0;
        default: bad = 1; break;
        }
    }
    if (min_size < 1)
        min_size = 1;
    if (bad || optind != argc || min_size > max_size || max_size > (size_t)INT_MAX / 2 ||
        max_size * (size_t)nprocs > (size_t)INT_MAX) {
        if (rank == 0) {
            fprintf(stderr, "%s: bad arguments%s\n", argv[0],
                    min_size > max_size ? " (MIN > MAX)" : "");
            cb_usage(stderr, argv[0]);
        }
        CB_FINALIZE();
        return 2;
    }
    if (pin)
        bench_pin(rank); /* says why when it fails */

    size_t cap = max_size * (size_t)nprocs;
    unsigned char *sbuf = malloc(cap), *rbuf = malloc(cap);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "rank %d: cannot allocate 2 x %zu bytes\n", rank, cap);
        CB_ABORT(1);
        return 1;
    }
    memset(sbuf, 0, cap);
    memset(rbuf, 0, cap);

    if (rank == 0) {
        char desc[512];
        cb_describe(desc, sizeof desc);
        printf("# %s: %d ranks, %s\n", CB_PROG, nprocs, desc);
        printf("# iters %ld warmup %ld (/10 above %zu B), time cap %g s per size; back-to-back "
               "calls; avg/min/max over ranks of per-rank mean latency%s\n",
               iters, warmup, large, time_cap, pin ? "; pinned" : "");
        printf("collective,bytes,avg_us,min_us,max_us,iters\n");
        fflush(stdout);
    }

    long mismatches = 0;
    size_t first = 1;
    while (first < min_size)
        first *= 2;
    for (int ci = 0; ci < ncolls; ci++) {
        int coll = order[ci];
        for (size_t n = first; n <= max_size; n *= 2) {
            size_t bytes = coll == CB_BARRIER_ID ? 0 : n;
            size_t nfloats = n / sizeof(float);
            if (coll == CB_ALLREDUCE_ID && nfloats == 0)
                continue;
            long it = iters, wu = warmup;
            if (bytes > large) {
                it = iters / 10 > 0 ? iters / 10 : 1;
                wu = warmup / 10;
            }

            /* Inputs (a pattern that depends on rank, peer, offset and size). */
            switch (coll) {
            case CB_BCAST_ID:
                for (size_t k = 0; k < n; k++)
                    sbuf[k] = rank == 0 ? cb_byte(0, 0, k, n) : 0;
                break;
            case CB_ALLREDUCE_ID: {
                float *f = (float *)(void *)sbuf;
                for (size_t k = 0; k < nfloats; k++)
                    f[k] = (float)((int)(k % 16) + rank);
                memset(rbuf, 0, nfloats * sizeof(float));
                break;
            }
            case CB_ALLGATHER_ID:
                for (size_t k = 0; k < n; k++)
                    sbuf[k] = cb_byte((size_t)rank, 0, k, n);
                memset(rbuf, 0, n * (size_t)nprocs);
                break;
            case CB_ALLTOALL_ID:
                for (int d = 0; d < nprocs; d++)
                    for (size_t k = 0; k < n; k++)
                        sbuf[(size_t)d * n + k] = cb_byte((size_t)rank, (size_t)d, k, n);
                memset(rbuf, 0, n * (size_t)nprocs);
                break;
            default: break;
            }

            CB_BARRIER();
            double tw = CB_WTIME();
            for (long i = 0; i < wu; i++)
                cb_one_call(coll, sbuf, rbuf, n, nfloats);
            if (time_cap > 0.0 && wu > 0) {
                /* Rank 0's warm-up time per call decides the count for everyone. */
                double cnt = 0.0;
                if (rank == 0) {
                    double per = (CB_WTIME() - tw) / (double)wu;
                    cnt = per > 0.0 ? time_cap / per : (double)it;
                }
                CB_BCAST(&cnt, sizeof cnt, 0);
                if (cnt < (double)it)
                    it = cnt < 10.0 ? 10 : (long)cnt;
            }
            CB_BARRIER();
            double t0 = CB_WTIME();
            for (long i = 0; i < it; i++)
                cb_one_call(coll, sbuf, rbuf, n, nfloats);
            double lat = (CB_WTIME() - t0) * 1e6 / (double)it;

            /* Check the last call's result. */
            long bad_here = 0;
            switch (coll) {
            case CB_BCAST_ID:
                for (size_t k = 0; k < n; k++)
                    bad_here += sbuf[k] != cb_byte(0, 0, k, n);
                break;
            case CB_ALLREDUCE_ID: {
                const float *f = (const float *)(const void *)rbuf;
                for (size_t k = 0; k < nfloats; k++) {
                    float want = (float)((double)nprocs * (double)(k % 16) +
                                         (double)nprocs * (nprocs - 1) / 2.0);
                    bad_here += f[k] != want;
                }
                break;
            }
            case CB_ALLGATHER_ID:
                for (int s = 0; s < nprocs; s++)
                    for (size_t k = 0; k < n; k++)
                        bad_here += rbuf[(size_t)s * n + k] != cb_byte((size_t)s, 0, k, n);
                break;
            case CB_ALLTOALL_ID:
                for (int s = 0; s < nprocs; s++)
                    for (size_t k = 0; k < n; k++)
                        bad_here += rbuf[(size_t)s * n + k] !=
                                    cb_byte((size_t)s, (size_t)rank, k, n);
                break;
            default: break;
            }
            if (bad_here) {
                fprintf(stderr, "%s: rank %d: %s of %zu bytes: %ld wrong bytes/elements\n",
                        CB_PROG, rank, cb_names[coll], n, bad_here);
                mismatches += bad_here;
            }

            double mx_in[3] = {lat, -lat, bad_here ? 1.0 : 0.0}, mx_out[3] = {0, 0, 0};
            double sum_in = lat, sum_out = 0.0;
            CB_REDUCE_DMAX(mx_in, mx_out, 3);
            CB_REDUCE_DSUM(&sum_in, &sum_out, 1);
            if (rank == 0) {
                printf("%s,%zu,%.3f,%.3f,%.3f,%ld%s\n", cb_names[coll], bytes,
                       sum_out / (double)nprocs, -mx_out[1], mx_out[0], it,
                       mx_out[2] > 0 ? ",WRONG" : "");
                fflush(stdout);
            }
            if (coll == CB_BARRIER_ID || n > max_size / 2)
                break; /* barrier: one row; else avoid overflow past max */
        }
    }
    CB_BARRIER();
    free(sbuf);
    free(rbuf);
    CB_FINALIZE();
    return mismatches ? 1 : 0;
}

#endif /* WEFT_COLL_BENCH_H */
