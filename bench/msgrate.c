/* weft-msgrate: message rate between two ranks, like osu_mbw_mr with one pair per thread.
 *
 * Per iteration, rank 0 posts WINDOW weft_isend of SIZE bytes and waits for all of them, then
 * receives a 4-byte ack; rank 1 posts WINDOW weft_irecv, waits for all of them, then sends the
 * ack.  With -t T, thread i of rank 0 does this with thread i of rank 1, all T pairs at once, each
 * on a communicator of its own (the MPIX Stream paper's Figure 3).  Rate = T * WINDOW * ITERS /
 * time measured on rank 0 between two barriers that span every thread of both ranks.
 *
 *   weftrun -n 2 weft-msgrate [-s SIZE] [-W WINDOW] [-i ITERS] [-w WARMUP] [-c FILE] [--csv]
 *                             [-p | -P] [-t THREADS] [-m single|global|vci|stream]
 *
 * This is a benchmark program, not a test: it prints numbers and does not judge them. */
#include "bench_common.h"

#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "bench_callgrind.h"

#define TAG_DATA 100
#define TAG_ACK 101
#define TAG_SYNC 102
#define ACK_BYTES 4

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "Usage: weftrun -n 2 %s [options]\n"
            "Message rate from rank 0 to rank 1: per iteration WINDOW weft_isend + weft_waitall on\n"
            "rank 0, WINDOW weft_irecv + weft_waitall on rank 1, then a %d-byte ack from rank 1\n"
            "(the osu_mbw_mr pattern with one pair).  With -t T, thread i of rank 0 runs this loop\n"
            "with thread i of rank 1, all T pairs concurrently; the aggregate rate is reported.\n"
            "\n"
            "  -s, --size SIZE     message size in bytes (default 8); K/M/G suffixes accepted\n"
            "  -W, --window N      messages in flight per iteration (default 64)\n"
            "  -i, --iters N       timed iterations per thread (default 10000)\n"
            "  -w, --warmup N      untimed iterations first (default 100)\n"
            "  -c, --csv-file FILE also write the result as CSV to FILE\n"
            "      --csv           print CSV on stdout instead of the text report\n"
            "  -p, --pin           pin rank r (all of its threads) to the r-th CPU of the inherited\n"
            "                      affinity mask (default: keep the mask the launcher/taskset gave)\n"
            "  -P, --pin-threads   pin thread i of rank r to the (r*T+i)-th CPU of the inherited mask\n"
            "                      (a core per thread when the mask has 2T CPUs)\n"
            "  -t, --threads N     communicating threads per rank (default 1)\n"
            "  -m, --mode MODE     how threads reach the network (default single):\n"
            "                      single: weft_init (THREAD_SINGLE), WEFT_COMM_WORLD; -t 1 only\n"
            "                      global: THREAD_MULTIPLE, WEFT_THREAD_CS=global, one\n"
            "                              weft_comm_dup of WORLD per thread\n"
            "                      vci:    THREAD_MULTIPLE, WEFT_THREAD_CS=vci, WEFT_NUM_VCIS=T,\n"
            "                              one dup per thread (each on its own implicit endpoint)\n"
            "                      stream: THREAD_MULTIPLE, one weft_stream_create +\n"
            "                              weft_stream_comm_create(WORLD) per thread (no lock)\n"
            "                      WEFT_THREAD_CS / WEFT_NUM_VCIS / WEFT_RESERVED_VCIS already set in\n"
            "                      the environment are kept.\n"
            "  -h, --help          this text\n"
            "\n"
            "CSV columns: bytes,window,iterations,threads,mode,messages,seconds,msg_per_s,MBps\n",
            prog, ACK_BYTES);
}

enum { MODE_SINGLE, MODE_GLOBAL, MODE_VCI, MODE_STREAM };

static int parse_mode(const char *s) {
    if (!strcmp(s, "single")) return MODE_SINGLE;
    if (!strcmp(s, "global")) return MODE_GLOBAL;
    if (!strcmp(s, "vci")) return MODE_VCI;
    if (!strcmp(s, "stream")) return MODE_STREAM;
    return -1;
}

/* -t and -m are needed before weft_init (they choose the thread level and the environment).
 * This scan only looks for them; the full parse with error messages comes after weft_init. */
static void prescan(int argc, char **argv, long *threads, const char **mode) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int is_t = 0;
        if (!strcmp(a, "--")) break;
        if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            is_t = 1;
            v = i + 1 < argc ? argv[++i] : NULL;
        } else if (!strncmp(a, "--threads=", 10)) {
            is_t = 1;
            v = a + 10;
        } else if (!strncmp(a, "-t", 2)) {
            is_t = 1;
            v = a + 2;
        } else if (!strcmp(a, "-m") || !strcmp(a, "--mode"))
            v = i + 1 < argc ? argv[++i] : NULL;
        else if (!strncmp(a, "--mode=", 7))
            v = a + 7;
        else if (!strncmp(a, "-m", 2))
            v = a + 2;
        else if (a[0] == '-' && a[1] != '-' && strchr("sWiwc", a[1]) && a[2] == '\0') {
            i++;
            continue;
        } else
            continue;
        if (!v) continue;
        if (is_t) {
            long t;
            if (bench_parse_long(v, 1, &t) == 0) *threads = t;
        } else
            *mode = v;
    }
}

struct shared {
    int rank, mode;
    long window, iters, warmup, threads;
    size_t msg_size, slot;
    pthread_barrier_t bar;
    double t0, t1;
};

struct thr {
    struct shared *sh;
    int idx;
    weft_comm comm;
    weft_stream stream;
    char *buf;
    weft_request *reqs;
    int bad;
    int cpu; /* -P: the CPU this thread pins itself to; else -1 */
    pthread_t tid;
};

static char pattern(int idx, size_t k) { return (char)((k * 13 + 5 + (size_t)idx * 7) & 0xff); }

static void sync_pair(int rank, weft_comm comm) {
    int peer = 1 - rank;
    if (rank == 0) {
        BENCH_CHECK(weft_send(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, comm));
        BENCH_CHECK(weft_recv(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, comm, WEFT_STATUS_IGNORE));
    } else {
        BENCH_CHECK(weft_recv(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, comm, WEFT_STATUS_IGNORE));
        BENCH_CHECK(weft_send(NULL, 0, WEFT_BYTE, peer, TAG_SYNC, comm));
    }
}

/* Barrier over every thread of both ranks: the local threads meet, thread 0 syncs with thread 0
 * of the peer by point-to-point on its own communicator, the local threads meet again. */
static void barrier_all(struct thr *t) {
    pthread_barrier_wait(&t->sh->bar);
    if (t->idx == 0) sync_pair(t->sh->rank, t->comm);
    pthread_barrier_wait(&t->sh->bar);
}

static void *run_pair(void *arg) {
    struct thr *t = arg;
    struct shared *sh = t->sh;
    char ack[ACK_BYTES] = {0};
    weft_comm comm = t->comm;
    if (t->cpu >= 0) bench_pin_cpu("weft-msgrate thread", t->cpu);
    int cg = cg_mode();
    for (int phase = 0; phase < 2; phase++) {
        long n = phase == 0 ? sh->warmup : sh->iters;
        int cg_win = phase == 1 && cg == CG_WINDOW;
        unsigned settle = cg_win ? cg_settle_us() : 0;
        barrier_all(t);
        if (phase == 1 && t->idx == 0) sh->t0 = weft_wtime();
        if (phase == 1 && cg == CG_LOOP) CALLGRIND_TOGGLE_COLLECT;
        if (sh->rank == 0) {
            for (long i = 0; i < n; i++) {
                if (settle) usleep(settle);
                if (cg_win) CALLGRIND_TOGGLE_COLLECT;
                for (long j = 0; j < sh->window; j++)
                    BENCH_CHECK(weft_isend(t->buf + (size_t)j * sh->slot, sh->msg_size, WEFT_BYTE, 1, TAG_DATA, comm,
                                           &t->reqs[j]));
                BENCH_CHECK(weft_waitall((size_t)sh->window, t->reqs, WEFT_STATUSES_IGNORE));
                if (cg_win) CALLGRIND_TOGGLE_COLLECT;
                BENCH_CHECK(weft_recv(ack, ACK_BYTES, WEFT_BYTE, 1, TAG_ACK, comm, WEFT_STATUS_IGNORE));
            }
        } else {
            for (long i = 0; i < n; i++) {
                if (settle) usleep(settle);
                if (cg_win) CALLGRIND_TOGGLE_COLLECT;
                for (long j = 0; j < sh->window; j++)
                    BENCH_CHECK(weft_irecv(t->buf + (size_t)j * sh->slot, sh->msg_size, WEFT_BYTE, 0, TAG_DATA, comm,
                                           &t->reqs[j]));
                BENCH_CHECK(weft_waitall((size_t)sh->window, t->reqs, WEFT_STATUSES_IGNORE));
                if (cg_win) CALLGRIND_TOGGLE_COLLECT;
                BENCH_CHECK(weft_send(ack, ACK_BYTES, WEFT_BYTE, 0, TAG_ACK, comm));
            }
        }
        if (phase == 1 && cg == CG_LOOP) CALLGRIND_TOGGLE_COLLECT;
    }
    barrier_all(t);
    if (t->idx == 0) sh->t1 = weft_wtime();
    /* Rank 1 checks that the last window holds what rank 0 sent. */
    if (sh->rank == 1 && sh->warmup + sh->iters > 0) {
        for (size_t j = 0; j < (size_t)sh->window && !t->bad; j++) {
            for (size_t off = 0; off < sh->msg_size; off++) {
                size_t k = j * sh->slot + off;
                if (t->buf[k] != pattern(t->idx, k)) {
                    t->bad = 1;
                    fprintf(stderr,
                            "weft-msgrate: thread %d message %zu byte %zu differs from what was "
                            "sent\n",
                            t->idx, j, off);
                    break;
                }
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    size_t msg_size = 8;
    long window = 64, iters = 10000, warmup = 100, threads = 1;
    const char *mode = "single";
    const char *csv_path = NULL;
    int csv_stdout = 0, pin = 0, pin_threads = 0;

    /* Thread level and endpoint configuration come before weft_init. */
    prescan(argc, argv, &threads, &mode);
    int mode_id = parse_mode(mode);
    char num[32];
    if (mode_id == MODE_GLOBAL) {
        setenv("WEFT_THREAD_CS", "global", 0);
    } else if (mode_id == MODE_VCI) {
        setenv("WEFT_THREAD_CS", "vci", 0);
        snprintf(num, sizeof num, "%ld", threads);
        setenv("WEFT_NUM_VCIS", num, 0);
    } else if (mode_id == MODE_STREAM && threads > 8) {
        snprintf(num, sizeof num, "%ld", threads);
        setenv("WEFT_RESERVED_VCIS", num, 0);
    }
    int provided = WEFT_THREAD_SINGLE;
    if (mode_id == MODE_SINGLE || mode_id < 0)
        BENCH_CHECK(weft_init(&argc, &argv));
    else
        BENCH_CHECK(weft_init_thread(&argc, &argv, WEFT_THREAD_MULTIPLE, &provided));
    int rank = 0, size = 0;
    BENCH_CHECK(weft_comm_rank(WEFT_COMM_WORLD, &rank));
    BENCH_CHECK(weft_comm_size(WEFT_COMM_WORLD, &size));

    static const struct option longopts[] = {{"size", required_argument, NULL, 's'},
                                             {"window", required_argument, NULL, 'W'},
                                             {"iters", required_argument, NULL, 'i'},
                                             {"warmup", required_argument, NULL, 'w'},
                                             {"csv-file", required_argument, NULL, 'c'},
                                             {"csv", no_argument, NULL, 'C'},
                                             {"pin", no_argument, NULL, 'p'},
                                             {"pin-threads", no_argument, NULL, 'P'},
                                             {"threads", required_argument, NULL, 't'},
                                             {"mode", required_argument, NULL, 'm'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int opt, bad = 0;
    opterr = rank == 0; /* only rank 0 complains about bad options */
    while ((opt = getopt_long(argc, argv, "s:W:i:w:c:pPt:m:h", longopts, NULL)) != -1) {
        switch (opt) {
            case 's': bad |= bench_parse_size(optarg, &msg_size); break;
            case 'W': bad |= bench_parse_long(optarg, 1, &window); break;
            case 'i': bad |= bench_parse_long(optarg, 1, &iters); break;
            case 'w': bad |= bench_parse_long(optarg, 0, &warmup); break;
            case 'c': csv_path = optarg; break;
            case 'C': csv_stdout = 1; break;
            case 'p': pin = 1; break;
            case 'P': pin_threads = 1; break;
            case 't': bad |= bench_parse_long(optarg, 1, &threads); break;
            case 'm':
                mode = optarg;
                if (parse_mode(mode) < 0) {
                    if (rank == 0)
                        fprintf(stderr, "%s: -m must be single, global, vci or stream (got '%s')\n", argv[0], mode);
                    bad = 1;
                }
                break;
            case 'h':
                if (rank == 0) usage(stdout, argv[0]);
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
    if (mode_id == MODE_SINGLE && threads != 1) {
        if (rank == 0)
            fprintf(stderr, "%s: -m single runs one thread; use -m global|vci|stream for -t %ld\n", argv[0], threads);
        weft_finalize();
        return 2;
    }
    if (mode_id != MODE_SINGLE && provided < WEFT_THREAD_MULTIPLE) {
        if (rank == 0) fprintf(stderr, "%s: asked WEFT_THREAD_MULTIPLE, got thread level %d\n", argv[0], provided);
        weft_finalize();
        return 2;
    }
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "%s: needs exactly 2 ranks, got %d (use weftrun -n 2)\n", argv[0], size);
        weft_finalize();
        return 2;
    }
    /* Pinning the main thread before the others start: they inherit its one-CPU mask, so all
     * threads of rank r share the r-th CPU. */
    int cpu = -1;
    int *thread_cpus = calloc((size_t)threads, sizeof *thread_cpus);
    if (!thread_cpus) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        weft_abort(WEFT_COMM_WORLD, 1);
        return 1;
    }
    for (long i = 0; i < threads; i++) thread_cpus[i] = -1;
    if (pin_threads) {
        bench_thread_cpus(rank, threads, thread_cpus);
        cpu = thread_cpus[0];
    } else if (pin)
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

    struct shared sh = {.rank = rank,
                        .mode = mode_id,
                        .window = window,
                        .iters = iters,
                        .warmup = warmup,
                        .threads = threads,
                        .msg_size = msg_size,
                        .slot = msg_size ? msg_size : 1};
    pthread_barrier_init(&sh.bar, NULL, (unsigned)threads);
    struct thr *thr = calloc((size_t)threads, sizeof *thr);
    if (!thr) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        weft_abort(WEFT_COMM_WORLD, 1);
        return 1;
    }
    /* Communicators are created collectively, in thread order, by the main thread. */
    for (long i = 0; i < threads; i++) {
        struct thr *t = &thr[i];
        t->sh = &sh;
        t->idx = (int)i;
        t->cpu = thread_cpus[i];
        t->stream = WEFT_STREAM_NULL;
        t->comm = WEFT_COMM_WORLD;
        if (mode_id == MODE_GLOBAL || mode_id == MODE_VCI) {
            BENCH_CHECK(weft_comm_dup(WEFT_COMM_WORLD, &t->comm));
        } else if (mode_id == MODE_STREAM) {
            BENCH_CHECK(weft_stream_create(WEFT_INFO_NULL, &t->stream));
            BENCH_CHECK(weft_stream_comm_create(WEFT_COMM_WORLD, t->stream, &t->comm));
        }
        t->buf = malloc(sh.slot * (size_t)window);
        t->reqs = malloc(sizeof *t->reqs * (size_t)window);
        if (!t->buf || !t->reqs) {
            fprintf(stderr, "rank %d: cannot allocate %ld x %zu bytes\n", rank, window, sh.slot);
            weft_abort(WEFT_COMM_WORLD, 1);
            return 1;
        }
        for (size_t k = 0; k < sh.slot * (size_t)window; k++) t->buf[k] = rank == 0 ? pattern(t->idx, k) : 0;
    }

    int cpus[2] = {cpu, -1};
    if (rank == 1)
        BENCH_CHECK(weft_send(&cpu, 1, WEFT_INT, 0, TAG_SYNC, WEFT_COMM_WORLD));
    else
        BENCH_CHECK(weft_recv(&cpus[1], 1, WEFT_INT, 1, TAG_SYNC, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));

    /* Thread 0 is the main thread; the others are started here. */
    for (long i = 1; i < threads; i++) {
        int rc = pthread_create(&thr[i].tid, NULL, run_pair, &thr[i]);
        if (rc != 0) {
            fprintf(stderr, "rank %d: pthread_create: %s\n", rank, strerror(rc));
            weft_abort(WEFT_COMM_WORLD, 1);
            return 1;
        }
    }
    run_pair(&thr[0]);
    int bad_data = thr[0].bad;
    for (long i = 1; i < threads; i++) {
        pthread_join(thr[i].tid, NULL);
        bad_data |= thr[i].bad;
    }
    double elapsed = sh.t1 - sh.t0;

    /* Rank 1 tells rank 0 whether what arrived is what was sent. */
    if (rank == 1)
        BENCH_CHECK(weft_send(&bad_data, 1, WEFT_INT, 0, TAG_SYNC, WEFT_COMM_WORLD));
    else
        BENCH_CHECK(weft_recv(&bad_data, 1, WEFT_INT, 1, TAG_SYNC, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));

    if (rank == 0) {
        char fabric[256];
        bench_fabric_name(fabric, sizeof fabric);
        double msgs = (double)threads * (double)window * (double)iters;
        double rate = elapsed > 0 ? msgs / elapsed : 0.0;
        double mbps = rate * (double)msg_size / 1e6;
        if (csv_stdout) {
            printf("bytes,window,iterations,threads,mode,messages,seconds,msg_per_s,MBps\n");
            printf("%zu,%ld,%ld,%ld,%s,%.0f,%.6f,%.0f,%.2f\n", msg_size, window, iters, threads, mode, msgs, elapsed,
                   rate, mbps);
        } else {
            printf(
                "# weft-msgrate: fabric %s, %zu-byte messages, window %ld, %ld iterations, "
                "%ld thread(s), mode %s\n",
                fabric, msg_size, window, iters, threads, mode);
            if (mode_id != MODE_SINGLE) {
                const char *cs = getenv("WEFT_THREAD_CS"), *nv = getenv("WEFT_NUM_VCIS");
                printf("# thread level %d, WEFT_THREAD_CS=%s WEFT_NUM_VCIS=%s\n", provided, cs ? cs : "(unset)",
                       nv ? nv : "(unset)");
            }
            if (pin_threads)
                printf("# pinned per thread: thread i of rank r on CPU r*%ld+i of the mask (thread 0: %d and %d)\n",
                       threads, cpus[0], cpus[1]);
            else if (pin)
                printf("# pinned: rank 0 -> CPU %d, rank 1 -> CPU %d (all threads of a rank)\n", cpus[0], cpus[1]);
            printf("messages: %.0f  seconds: %.6f\n", msgs, elapsed);
            printf("message rate: %.0f msg/s  (%.3f Mmsg/s, %.2f MB/s)\n", rate, rate / 1e6, mbps);
        }
        if (csv) {
            fprintf(csv, "bytes,window,iterations,threads,mode,messages,seconds,msg_per_s,MBps\n");
            fprintf(csv, "%zu,%ld,%ld,%ld,%s,%.0f,%.6f,%.0f,%.2f\n", msg_size, window, iters, threads, mode, msgs,
                    elapsed, rate, mbps);
            fclose(csv);
        }
        fflush(stdout);
    }

    for (long i = 0; i < threads; i++) {
        if (thr[i].comm != WEFT_COMM_WORLD) BENCH_CHECK(weft_comm_free(&thr[i].comm));
        if (thr[i].stream != WEFT_STREAM_NULL) BENCH_CHECK(weft_stream_free(&thr[i].stream));
        free(thr[i].buf);
        free(thr[i].reqs);
    }
    free(thr);
    free(thread_cpus);
    pthread_barrier_destroy(&sh.bar);
    BENCH_CHECK(weft_finalize());
    return bad_data ? 1 : 0;
}
