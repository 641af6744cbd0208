/* weft-pingpong: one-way latency between two ranks, like osu_latency.
 *
 * Rank 0 sends a message of N bytes with weft_send and waits for the reply with weft_recv;
 * rank 1 receives it and replies with N bytes from its own send buffer, as osu_latency and
 * ucx_perftest -t tag_lat do (--echo: it sends back the buffer it just received into).
 * One-way latency = (time of all round trips) / (2 * iters).  Buffers are page-aligned, as
 * both references' are.  Sizes: 0, 1, 2, 4, ... up to -M (powers of two), starting at -m.
 *
 *   weftrun -n 2 weft-pingpong [-m MIN] [-M MAX] [-i ITERS] [-w WARMUP] [-c FILE] [--csv] [-p] [-e]
 *
 * This is a benchmark program, not a test: it prints numbers and does not judge them. */
#include "bench_common.h"

#include <getopt.h>
#include <stdint.h>
#include <unistd.h>

#define TAG_DATA 1
#define TAG_SYNC 2
/* Above this size the iteration and warm-up counts are divided by 10 (as osu_latency does). */
#define LARGE_MESSAGE 8192

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "Usage: weftrun -n 2 %s [options]\n"
            "One-way latency (round trip / 2) between rank 0 and rank 1 with blocking\n"
            "weft_send/weft_recv, for message sizes MIN..MAX in powers of two (0 first if MIN=0).\n"
            "\n"
            "  -m, --min SIZE      smallest message size (default 0); K/M/G suffixes accepted\n"
            "  -M, --max SIZE      largest message size (default 4M)\n"
            "  -i, --iters N       timed round trips per size (default 10000; /10 above %d B)\n"
            "  -w, --warmup N      untimed round trips before each size (default 1000; /10 above %d B)\n"
            "  -c, --csv-file FILE also write the results as CSV to FILE\n"
            "      --csv           print CSV on stdout instead of the table\n"
            "  -p, --pin           pin rank r to the r-th CPU of the inherited affinity mask\n"
            "                      (default: keep the mask the launcher/taskset gave)\n"
            "  -e, --echo          rank 1 sends back the buffer it received into (default: its\n"
            "                      own send buffer, as osu_latency and ucx_perftest do)\n"
            "  -h, --help          this text\n"
            "\n"
            "CSV columns: bytes,iterations,latency_us,bandwidth_MBps\n",
            prog, LARGE_MESSAGE, LARGE_MESSAGE);
}

/* Zero-byte handshake so both ranks start a size together. */
static void sync_pair(int rank) {
    int peer = 1 - rank;
    if (rank == 0) {
        BENCH_CHECK(weft_send(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, WEFT_COMM_WORLD));
        BENCH_CHECK(weft_recv(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
    } else {
        BENCH_CHECK(weft_recv(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
        BENCH_CHECK(weft_send(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, WEFT_COMM_WORLD));
    }
}

int main(int argc, char **argv) {
    size_t min_size = 0, max_size = (size_t)4 << 20;
    long iters = 10000, warmup = 1000;
    const char *csv_path = NULL;
    int csv_stdout = 0, pin = 0, echo = 0;

    BENCH_CHECK(weft_init(&argc, &argv));
    int rank = 0, size = 0;
    BENCH_CHECK(weft_comm_rank(WEFT_COMM_WORLD, &rank));
    BENCH_CHECK(weft_comm_size(WEFT_COMM_WORLD, &size));

    static const struct option longopts[] = {{"min", required_argument, NULL, 'm'},
                                             {"max", required_argument, NULL, 'M'},
                                             {"iters", required_argument, NULL, 'i'},
                                             {"warmup", required_argument, NULL, 'w'},
                                             {"csv-file", required_argument, NULL, 'c'},
                                             {"csv", no_argument, NULL, 'C'},
                                             {"pin", no_argument, NULL, 'p'},
                                             {"echo", no_argument, NULL, 'e'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int opt, bad = 0;
    opterr = rank == 0; /* only rank 0 complains about bad options */
    while ((opt = getopt_long(argc, argv, "m:M:i:w:c:peh", longopts, NULL)) != -1) {
        switch (opt) {
            case 'm': bad |= bench_parse_size(optarg, &min_size); break;
            case 'M': bad |= bench_parse_size(optarg, &max_size); break;
            case 'i': bad |= bench_parse_long(optarg, 1, &iters); break;
            case 'w': bad |= bench_parse_long(optarg, 0, &warmup); break;
            case 'c': csv_path = optarg; break;
            case 'C': csv_stdout = 1; break;
            case 'p': pin = 1; break;
            case 'e': echo = 1; break;
            case 'h':
                if (rank == 0) usage(stdout, argv[0]);
                weft_finalize();
                return 0;
            default: bad = 1; break;
        }
    }
    if (bad || optind != argc || min_size > max_size) {
        if (rank == 0) {
            fprintf(stderr, "%s: bad arguments%s\n", argv[0], min_size > max_size ? " (MIN > MAX)" : "");
            usage(stderr, argv[0]);
        }
        weft_finalize();
        return 2;
    }
    if (bench_need_two_ranks(rank, size, argv[0])) {
        weft_finalize();
        return 2;
    }
    int cpu = -1;
    if (pin) cpu = bench_pin(rank);

    FILE *csv = NULL;
    if (rank == 0 && csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            fprintf(stderr, "%s: cannot open %s: %s\n", argv[0], csv_path, strerror(errno));
            weft_abort(WEFT_COMM_WORLD, 1);
            return 1;
        }
    }

    /* Page-aligned, as osu_latency's and ucx_perftest's buffers are: malloc's 16-byte offset
     * from the page made 64 KiB over UCX shared memory (a CMA copy) 1.12x slower here. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *sbuf = NULL, *rbuf = NULL;
    if (posix_memalign((void **)&sbuf, page, max_size ? max_size : 1) != 0) sbuf = NULL;
    if (posix_memalign((void **)&rbuf, page, max_size ? max_size : 1) != 0) rbuf = NULL;
    if (!sbuf || !rbuf) {
        fprintf(stderr, "rank %d: cannot allocate 2 x %zu bytes\n", rank, max_size);
        weft_abort(WEFT_COMM_WORLD, 1);
        return 1;
    }
    memset(rbuf, 0, max_size ? max_size : 1);

    /* Report where each rank runs (rank 1 tells rank 0). */
    int cpus[2] = {cpu, -1};
    if (rank == 1)
        BENCH_CHECK(weft_send(&cpu, 1, WEFT_INT, 0, TAG_SYNC, WEFT_COMM_WORLD));
    else
        BENCH_CHECK(weft_recv(&cpus[1], 1, WEFT_INT, 1, TAG_SYNC, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));

    if (rank == 0) {
        char fabric[256];
        bench_fabric_name(fabric, sizeof fabric);
        const char *out_hdr = "bytes,iterations,latency_us,bandwidth_MBps\n";
        if (csv_stdout) {
            fputs(out_hdr, stdout);
        } else {
            printf("# weft-pingpong: fabric %s, one-way latency = round trip / 2, rank 1 replies %s\n", fabric,
                   echo ? "with the buffer it received into (--echo)" : "from its own send buffer");
            if (pin) printf("# pinned: rank 0 -> CPU %d, rank 1 -> CPU %d\n", cpus[0], cpus[1]);
            printf("# %-10s %12s %14s %14s\n", "bytes", "iterations", "latency(us)", "bandwidth(MB/s)");
        }
        if (csv) fputs(out_hdr, csv);
        fflush(stdout);
    }

    int mismatches = 0;
    size_t first = 0; /* MIN rounded up to a power of two (0 stays 0) */
    if (min_size > 0)
        for (first = 1; first < min_size; first *= 2)
            ;
    for (size_t n = first; n <= max_size; n = (n == 0 ? 1 : n * 2)) {
        long it = iters, wu = warmup;
        if (n > LARGE_MESSAGE) {
            it = iters / 10 > 0 ? iters / 10 : 1;
            wu = warmup / 10;
        }
        /* A pattern that changes with the size, the same on both ranks: each checks what it
         * received last after the timed loop. */
        for (size_t k = 0; k < n; k++) sbuf[k] = (char)((k * 7 + n) & 0xff);
        if (n > 0) memset(rbuf, 0, n);

        sync_pair(rank);
        double t0 = 0.0;
        if (rank == 0) {
            for (long i = 0; i < wu + it; i++) {
                if (i == wu) t0 = weft_wtime();
                BENCH_CHECK(weft_send(sbuf, n, WEFT_BYTE, 1, TAG_DATA, WEFT_COMM_WORLD));
                BENCH_CHECK(weft_recv(rbuf, n, WEFT_BYTE, 1, TAG_DATA, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
            }
            double elapsed = weft_wtime() - t0;
            double lat_us = elapsed * 1e6 / (2.0 * (double)it);
            double bw = lat_us > 0 ? (double)n / lat_us : 0.0; /* bytes/us = MB/s */
            if (n > 0 && memcmp(sbuf, rbuf, n) != 0) {
                mismatches++;
                fprintf(stderr, "weft-pingpong: rank 0: the %zu-byte reply differs from what rank 1 sent\n", n);
            }
            if (csv_stdout)
                printf("%zu,%ld,%.4f,%.2f\n", n, it, lat_us, bw);
            else
                printf("  %-10zu %12ld %14.3f %14.2f\n", n, it, lat_us, bw);
            if (csv) fprintf(csv, "%zu,%ld,%.4f,%.2f\n", n, it, lat_us, bw);
            fflush(stdout);
        } else {
            for (long i = 0; i < wu + it; i++) {
                BENCH_CHECK(weft_recv(rbuf, n, WEFT_BYTE, 0, TAG_DATA, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
                /* Echoing what just arrived makes rank 0's copy pull lines that rank 1's copy
                 * has just written (and rank 1's next copy invalidate them in rank 0's cache):
                 * with page-aligned buffers both ways, 1.4x the references' pattern's time at
                 * 64 KiB and 1.25x at 1 MiB here, and 3x in the VM's slow periods
                 * (bench/README.md). */
                BENCH_CHECK(weft_send(echo ? rbuf : sbuf, n, WEFT_BYTE, 0, TAG_DATA, WEFT_COMM_WORLD));
            }
            if (n > 0 && memcmp(sbuf, rbuf, n) != 0) {
                mismatches++;
                fprintf(stderr, "weft-pingpong: rank 1: the %zu-byte message differs from what rank 0 sent\n", n);
            }
        }
        if (n == max_size) break; /* avoid overflow when max_size is the largest power of two */
    }
    sync_pair(rank);

    if (csv) fclose(csv);
    free(sbuf);
    free(rbuf);
    BENCH_CHECK(weft_finalize());
    return mismatches ? 1 : 0;
}
