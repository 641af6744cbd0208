/* Helpers shared by the benchmarks that need no Weft (C11): option parsing, pinning, the two-rank
 * check.  bench_common.h adds the Weft ones; coll_bench.h, which also builds against MPI
 * (mpi-coll.c), and raw-ucx-msgrate.c, which runs on UCP alone, include this one directly. */
#ifndef WEFT_BENCH_UTIL_H
#define WEFT_BENCH_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The n-th CPU (modulo their count) of the calling thread's affinity mask, or -1 (with a
 * message naming `who`).  *count, when not NULL, gets how many CPUs the mask has. */
static inline int bench_nth_cpu(const char *who, int n, int *count) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        fprintf(stderr, "%s: sched_getaffinity: %s\n", who, strerror(errno));
        return -1;
    }
    int total = CPU_COUNT(&allowed);
    if (count) *count = total;
    if (total <= 0) return -1;
    int want = n % total, seen = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &allowed)) {
            if (seen == want) return c;
            seen++;
        }
    }
    return -1;
}

/* Pin the calling thread to one CPU; returns it, or -1 (with a message naming `who`). */
static inline int bench_pin_cpu(const char *who, int cpu) {
    if (cpu < 0) return -1;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        fprintf(stderr, "%s: sched_setaffinity(%d): %s\n", who, cpu, strerror(errno));
        return -1;
    }
    return cpu;
}

/* Pin the calling process to the rank-th CPU (modulo their count) of the affinity mask it was
 * started with, so that `taskset -c 2,3 weftrun -n 2 prog -p` puts rank 0 on CPU 2 and rank 1
 * on CPU 3.  Returns the CPU chosen, or -1 (with a message) on failure. */
static inline int bench_pin(int rank) {
    char who[32];
    snprintf(who, sizeof who, "rank %d", rank);
    int n = 0, cpu = bench_pin_cpu(who, bench_nth_cpu(who, rank, &n));
    if (cpu >= 0 && n < 2) fprintf(stderr, "rank %d: warning: only one CPU allowed; ranks share CPU %d\n", rank, cpu);
    return cpu;
}

/* -P (--pin-threads) of the threaded benchmarks: thread i of rank r gets the (r * threads + i)-th
 * CPU of the inherited mask, so that with 2T CPUs every thread has a core of its own (the MPIX
 * Stream paper's Figure 3 setup).  Computed by the main thread before anything is pinned;
 * cpus[i] is -1 where that failed.  Returns how many CPUs the mask has. */
static inline int bench_thread_cpus(int rank, long threads, int *cpus) {
    char who[32];
    snprintf(who, sizeof who, "rank %d", rank);
    int n = 0;
    for (long i = 0; i < threads; i++) cpus[i] = bench_nth_cpu(who, (int)(rank * threads + i), &n);
    if (n < 2 * threads)
        fprintf(stderr, "rank %d: warning: %d CPUs for 2 x %ld threads; threads share CPUs\n", rank, n, threads);
    return n;
}

/* Parse a size with an optional K/M/G suffix (powers of 1024). Returns 0 on success. */
static inline int bench_parse_size(const char *s, size_t *out) {
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-') return -1;
    switch (*end) {
        case 'k':
        case 'K':
            v <<= 10;
            end++;
            break;
        case 'm':
        case 'M':
            v <<= 20;
            end++;
            break;
        case 'g':
        case 'G':
            v <<= 30;
            end++;
            break;
        default: break;
    }
    if (*end == 'B' || *end == 'b') end++;
    if (*end != '\0') return -1;
    *out = (size_t)v;
    return 0;
}

static inline int bench_parse_long(const char *s, long min, long *out) {
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < min) return -1;
    *out = v;
    return 0;
}

/* Point-to-point benchmarks run between exactly two ranks: 0 when size is 2, else a message
 * (from rank 0) and 1. */
static inline int bench_need_two_ranks(int rank, int size, const char *prog) {
    if (size == 2) return 0;
    if (rank == 0) fprintf(stderr, "%s: needs exactly 2 ranks, got %d (use weftrun -n 2)\n", prog, size);
    return 1;
}

#endif /* WEFT_BENCH_UTIL_H */
