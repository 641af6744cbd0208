/* weft-msgrate: message rate between two ranks, like osu_mbw_mr with one pair.
 *
 * Per iteration, rank 0 posts WINDOW weft_isend of SIZE bytes and waits for all of them, then
 * receives a 4-byte ack; rank 1 posts WINDOW weft_irecv, waits for all of them, then sends the
 * ack.  Rate = WINDOW * ITERS / time measured on rank 0.
 *
 *   weftrun -n 2 weft-msgrate [-s SIZE] [-W WINDOW] [-i ITERS] [-w WARMUP] [-c FILE] [--csv]
 *                             [-p] [-t THREADS -m global|vci|stream]
 *
 * This is a benchmark program, not a test: it prints numbers and does not judge them. */
#include "bench_common.h"

#include <getopt.h>
#include <stdint.h>

#define TAG_DATA 100
#define TAG_ACK 101
#define TAG_SYNC 102
#define ACK_BYTES 4

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "Usage: weftrun -n 2 %s [options]\n"
            "Message rate from rank 0 to rank 1: per iteration WINDOW weft_isend + weft_waitall on\n"
            "rank 0, WINDOW weft_irecv + weft_waitall on rank 1, then a %d-byte ack from rank 1\n"
            "(the osu_mbw_mr pattern with one pair).\n"
            "\n"
            "  -s, --size SIZE     message size in bytes (default 8); K/M/G suffixes accepted\n"
            "  -W, --window N      messages in flight per iteration (default 64)\n"
            "  -i, --iters N       timed iterations (default 10000)\n"
            "  -w, --warmup N      untimed iterations first (default 100)\n"
            "  -c, --csv-file FILE also write the result as CSV to FILE\n"
            "      --csv           print CSV on stdout instead of the text report\n"
            "  -p, --pin           pin rank r to the r-th CPU of the inherited affinity mask\n"
            "                      (default: keep the mask the launcher/taskset gave)\n"
            "  -t, --threads N     communicating threads per rank (default 1)\n"
            "  -m, --mode MODE     how threads reach the network: global | vci | stream\n"
            "                      (default global)\n"
            "                      NOTE: only -t 1 -m global is implemented for now; more threads\n"
            "                      and the vci/stream modes come with the streams work.\n"
            "  -h, --help          this text\n"
            "\n"
            "CSV columns: bytes,window,iterations,threads,mode,messages,seconds,msg_per_s,MBps\n",
            prog, ACK_BYTES);
}

static void sync_pair(int rank)
{
    int peer = 1 - rank;
    if (rank == 0) {
        BENCH_CHECK(weft_send(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, WEFT_COMM_WORLD));
        BENCH_CHECK(weft_recv(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, WEFT_COMM_WORLD,
                              WEFT_STATUS_IGNORE));
    } else {
        BENCH_CHECK(weft_recv(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, WEFT_COMM_WORLD,
                              WEFT_STATUS_IGNORE));
        BENCH_CHECK(weft_send(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, WEFT_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    size_t msg_size = 8;
    long window = 64, iters = 10000, warmup = 100, threads = 1;
    const char *mode = "global";
    const char *csv_path = NULL;
    int csv_stdout = 0, pin = 0;

    BENCH_CHECK(weft_init(&argc, &argv));
    int rank = 0, size = 0;
    BENCH_CHECK(weft_comm_rank(WEFT_COMM_WORLD, &rank));
    BENCH_CHECK(weft_comm_size(WEFT_COMM_WORLD, &size));

    static const struct option longopts[] = {
        {"size", required_argument, NULL, 's'},     {"window", required_argument, NULL, 'W'},
        {"iters", required_argument, NULL, 'i'},    {"warmup", required_argument, NULL, 'w'},
        {"csv-file", required_argument, NULL, 'c'}, {"csv", no_argument, NULL, 'C'},
        {"pin", no_argument, NULL, 'p'},            {"threads", required_argument, NULL, 't'},
        {"mode", required_argument, NULL, 'm'},     {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int opt, bad = 0;
    opterr = rank == 0; /* only rank 0 complains about bad options */
    while ((opt = getopt_long(argc, argv, "s:W:i:w:c:pt:m:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 's': bad |= bench_parse_size(optarg, &msg_size); break;
        case 'W': bad |= bench_parse_long(optarg, 1, &window); break;
        case 'i': bad |= bench_parse_long(optarg, 1, &iters); break;
        case 'w': bad |= bench_parse_long(optarg, 0, &warmup); break;
        case 'c': csv_path = optarg; break;
        case 'C': csv_stdout = 1; break;
        case 'p': pin = 1; break;
        case 't': bad |= bench_parse_long(optarg, 1, &threads); break;
        case 'm':
            mode = optarg;
            if (strcmp(mode, "global") && strcmp(mode, "vci") && strcmp(mode, "stream")) {
                if (rank == 0)
                    fprintf(stderr, "%s: -m must be global, vci or stream (got '%s')\n", argv[0],
                            mode);
                bad = 1;
            }
            break;
        case 'h':
            if (rank == 0)
                usage(stdout, argv[0]);
            weft_finalize();
            return 0;
        default: bad = 1; break;
        }
    }
    if (bad || optind != argc) {
        if (rank == 0) {
            fprintf(stderr, "%s: bad arguments\n", argv[0]);
            usage(stderr, argv[0]);
        }
        weft_finalize();
        return 2;
    }
    if (threads != 1 || strcmp(mode, "global") != 0) {
        if (rank == 0)
            fprintf(stderr,
                    "%s: -t %ld -m %s is not implemented yet: only -t 1 -m global for now "
                    "(multi-thread vci/stream modes come with the streams work)\n",
                    argv[0], threads, mode);
        weft_finalize();
        return 2;
    }
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "%s: needs exactly 2 ranks, got %d (use weftrun -n 2)\n", argv[0],
                    size);
        weft_finalize();
        return 2;
    }
    int cpu = -1;
    if (pin)
        cpu = bench_pin(rank);

    FILE *csv = NULL;
    if (rank == 0 && csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            fprintf(stderr, "%s: cannot open %s: %s\n", argv[0], csv_path, strerror(errno));
            weft_abort(WEFT_COMM_WORLD, 1);
            return 1;
        }
    }

    /* One buffer slot per message in the window, so receives never overlap. */
    size_t slot = msg_size ? msg_size : 1;
    char *buf = malloc(slot * (size_t)window);
    weft_request *reqs = malloc(sizeof *reqs * (size_t)window);
    if (!buf || !reqs) {
        fprintf(stderr, "rank %d: cannot allocate %ld x %zu bytes\n", rank, window, slot);
        weft_abort(WEFT_COMM_WORLD, 1);
        return 1;
    }
    char ack[ACK_BYTES] = {0};
    for (size_t k = 0; k < slot * (size_t)window; k++)
        buf[k] = rank == 0 ? (char)((k * 13 + 5) & 0xff) : 0;

    int cpus[2] = {cpu, -1};
    if (rank == 1)
        BENCH_CHECK(weft_send(&cpu, 1, WEFT_INT, 0, TAG_SYNC, WEFT_COMM_WORLD));
    else
        BENCH_CHECK(weft_recv(&cpus[1], 1, WEFT_INT, 1, TAG_SYNC, WEFT_COMM_WORLD,
                              WEFT_STATUS_IGNORE));

    sync_pair(rank);
    double t0 = 0.0, elapsed = 0.0;
    if (rank == 0) {
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t0 = weft_wtime();
            for (long j = 0; j < window; j++)
                BENCH_CHECK(weft_isend(buf + (size_t)j * slot, msg_size, WEFT_BYTE, 1, TAG_DATA,
                                       WEFT_COMM_WORLD, &reqs[j]));
            BENCH_CHECK(weft_waitall((size_t)window, reqs, WEFT_STATUSES_IGNORE));
            BENCH_CHECK(weft_recv(ack, ACK_BYTES, WEFT_BYTE, 1, TAG_ACK, WEFT_COMM_WORLD,
                                  WEFT_STATUS_IGNORE));
        }
        elapsed = weft_wtime() - t0;
    } else {
        for (long i = 0; i < warmup + iters; i++) {
            for (long j = 0; j < window; j++)
                BENCH_CHECK(weft_irecv(buf + (size_t)j * slot, msg_size, WEFT_BYTE, 0, TAG_DATA,
                                       WEFT_COMM_WORLD, &reqs[j]));
            BENCH_CHECK(weft_waitall((size_t)window, reqs, WEFT_STATUSES_IGNORE));
            BENCH_CHECK(weft_send(ack, ACK_BYTES, WEFT_BYTE, 0, TAG_ACK, WEFT_COMM_WORLD));
        }
    }

    /* Rank 1 checks that what arrived is what rank 0 sent, and tells rank 0. */
    int bad_data = 0;
    if (rank == 1) {
        for (size_t j = 0; j < (size_t)window && !bad_data; j++) {
            for (size_t off = 0; off < msg_size; off++) {
                size_t k = j * slot + off;
                if (buf[k] != (char)((k * 13 + 5) & 0xff)) {
                    bad_data = 1;
                    fprintf(stderr,
                            "weft-msgrate: message %zu byte %zu differs from what was sent\n", j,
                            off);
                    break;
                }
            }
        }
        BENCH_CHECK(weft_send(&bad_data, 1, WEFT_INT, 0, TAG_SYNC, WEFT_COMM_WORLD));
    } else {
        BENCH_CHECK(weft_recv(&bad_data, 1, WEFT_INT, 1, TAG_SYNC, WEFT_COMM_WORLD,
                              WEFT_STATUS_IGNORE));
    }

    if (rank == 0) {
        char fabric[256];
        bench_fabric_name(fabric, sizeof fabric);
        double msgs = (double)window * (double)iters;
        double rate = elapsed > 0 ? msgs / elapsed : 0.0;
        double mbps = rate * (double)msg_size / 1e6;
        if (csv_stdout) {
            printf("bytes,window,iterations,threads,mode,messages,seconds,msg_per_s,MBps\n");
            printf("%zu,%ld,%ld,%ld,%s,%.0f,%.6f,%.0f,%.2f\n", msg_size, window, iters, threads,
                   mode, msgs, elapsed, rate, mbps);
        } else {
            printf("# weft-msgrate: fabric %s, %zu-byte messages, window %ld, %ld iterations, "
                   "%ld thread(s), mode %s\n",
                   fabric, msg_size, window, iters, threads, mode);
            if (pin)
                printf("# pinned: rank 0 -> CPU %d, rank 1 -> CPU %d\n", cpus[0], cpus[1]);
            printf("messages: %.0f  seconds: %.6f\n", msgs, elapsed);
            printf("message rate: %.0f msg/s  (%.3f Mmsg/s, %.2f MB/s)\n", rate, rate / 1e6, mbps);
        }
        if (csv) {
            fprintf(csv, "bytes,window,iterations,threads,mode,messages,seconds,msg_per_s,MBps\n");
            fprintf(csv, "%zu,%ld,%ld,%ld,%s,%.0f,%.6f,%.0f,%.2f\n", msg_size, window, iters,
                    threads, mode, msgs, elapsed, rate, mbps);
            fclose(csv);
        }
        fflush(stdout);
    }

    free(buf);
    free(reqs);
    BENCH_CHECK(weft_finalize());
    return bad_data ? 1 : 0;
}
