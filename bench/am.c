/* weft-am: latency and throughput of PGAS active messages, measured the way the Shoal paper
 * does (section IV-B), between kernel 0 (the sender, rank 0) and kernel 1 (rank 1).
 *
 *   latency:    one message, then weft_am_wait_replies(1) for its automatic reply; the time of
 *               each round trip is one sample (-i samples after -w untimed ones); the median
 *               and the 99th percentile are reported.
 *   throughput: N messages back to back (-n), then weft_am_wait_replies(N); payload bits per
 *               second and messages per second over that time, the median of -r bursts.
 *
 * Kinds: short (no payload, one row with bytes 0), medium (weft_am_medium from a caller
 * buffer), long (weft_am_long from a caller buffer into the receiver's segment), long_seg
 * (weft_am_long_seg from the sender's segment).  Every message runs the built-in empty handler
 * (WEFT_AM_H_EMPTY).  The receiver spins in weft_pgas_progress, so its handlers and replies run
 * at once, until the sender's stop message (a user handler) arrives.
 *
 *   weftrun -n 2 weft-am [-k KINDS] [-m MIN] [-M MAX] [-i ITERS] [-n N] [-w WARMUP] [-r R] [-p]
 *
 * This is a benchmark program, not a test: it prints numbers and does not judge them, except
 * that it checks the bytes a Long delivered (read back with weft_am_get_long after each size)
 * and exits 1 on a mismatch. */
#include "bench_common.h"

#include <getopt.h>
#include <stdint.h>

#define HANDLER_STOP WEFT_AM_HANDLER_FIRST

enum kind { KIND_SHORT, KIND_MEDIUM, KIND_LONG, KIND_LONG_SEG, KIND_COUNT };
static const char *const kind_names[KIND_COUNT] = {"short", "medium", "long", "long_seg"};

typedef struct options {
    int kinds[KIND_COUNT]; /* which kinds to run */
    size_t min_bytes, max_bytes;
    long iters, burst, warmup, reps;
    int pin;
} options;

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "Usage: weftrun -n 2 %s [options]\n"
            "PGAS active-message latency and throughput between kernel 0 (rank 0) and kernel 1\n"
            "(rank 1), Shoal's method: latency = one message + its automatic reply\n"
            "(weft_am_wait_replies(1)); throughput = N messages back to back, then\n"
            "weft_am_wait_replies(N).  Payload sizes MIN..MAX in powers of two.\n"
            "\n"
            "  -k, --kinds LIST    short,medium,long,long_seg or all (default all)\n"
            "  -m, --min SIZE      smallest payload (default 8); K/M/G suffixes accepted\n"
            "  -M, --max SIZE      largest payload (default 4K; e.g. -M 1M; sizes above the\n"
            "                      kind's limit, weft_am_max_medium / weft_am_max_long, are skipped)\n"
            "  -i, --iters N       timed round trips per size for the latency (default 1000)\n"
            "  -n, --burst N       messages per throughput burst (default 1000)\n"
            "  -w, --warmup N      untimed round trips (and one untimed burst) per size (default 100)\n"
            "  -r, --reps R        throughput bursts per size; the median is reported (default 5)\n"
            "  -p, --pin           pin rank r to the r-th CPU of the inherited affinity mask\n"
            "  -h, --help          this text\n"
            "\n"
            "Output: '#' comment lines, then CSV\n"
            "  kind,bytes,latency_us_median,latency_us_p99,throughput_gbps,msgs_per_s\n"
            "(throughput_gbps: payload bits / s / 1e9; 0 for short).  The fabric is whatever\n"
            "WEFT_FABRIC selects.\n",
            prog);
}

static int parse_kinds(const char *list, int kinds[KIND_COUNT]) {
    for (int k = 0; k < KIND_COUNT; k++) kinds[k] = 0;
    const char *s = list;
    while (*s) {
        size_t len = strcspn(s, ",");
        int found = 0;
        if (len == 3 && strncmp(s, "all", 3) == 0) {
            for (int k = 0; k < KIND_COUNT; k++) kinds[k] = 1;
            found = 1;
        }
        for (int k = 0; k < KIND_COUNT && !found; k++)
            if (strlen(kind_names[k]) == len && strncmp(s, kind_names[k], len) == 0) kinds[k] = found = 1;
        if (!found) return -1;
        s += len;
        if (*s == ',') s++;
    }
    return 0;
}

/* The receiver's stop handler: ends its progress loop.  It runs inside weft_pgas_progress on
 * the receiver's own thread, so a plain int is enough. */
static void on_stop(weft_pgas kernel, const weft_am_info *info, void *user_data) {
    (void)kernel;
    (void)info;
    *(int *)user_data = 1;
}

/* The sender's view of one measurement. */
typedef struct sender {
    weft_pgas kernel;
    int kind;
    char *buf; /* caller buffer for medium and long */
    size_t bytes;
} sender;

/* One message of the current kind to kernel 1, with an automatic reply. */
static void send_one(const sender *s) {
    switch (s->kind) {
        case KIND_SHORT: BENCH_CHECK(weft_am_short(s->kernel, 1, WEFT_AM_H_EMPTY, NULL, 0, 0)); break;
        case KIND_MEDIUM:
            BENCH_CHECK(weft_am_medium(s->kernel, 1, WEFT_AM_H_EMPTY, NULL, 0, s->buf, s->bytes, 0));
            break;
        case KIND_LONG:
            BENCH_CHECK(weft_am_long(s->kernel, 1, WEFT_AM_H_EMPTY, NULL, 0, s->buf, s->bytes, 0, 0));
            break;
        case KIND_LONG_SEG:
            BENCH_CHECK(weft_am_long_seg(s->kernel, 1, WEFT_AM_H_EMPTY, NULL, 0, 0, s->bytes, 0, 0));
            break;
        default: break;
    }
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Value at quantile q (0..1) of n sorted samples (nearest rank). */
static double quantile(const double *sorted, long n, double q) {
    long idx = (long)(q * (double)n + 0.999999) - 1;
    if (idx < 0) idx = 0;
    if (idx >= n) idx = n - 1;
    return sorted[idx];
}

/* Latency and throughput of one kind and size; prints the CSV row.  Returns 1 when a Long's
 * data did not arrive intact, else 0. */
static int measure(const sender *s, const options *o, double *samples, double *burst_times, char *seg,
                   size_t check_offset) {
    for (long i = 0; i < o->warmup; i++) {
        send_one(s);
        BENCH_CHECK(weft_am_wait_replies(s->kernel, 1));
    }
    for (long i = 0; i < o->iters; i++) {
        double t0 = weft_wtime();
        send_one(s);
        BENCH_CHECK(weft_am_wait_replies(s->kernel, 1));
        samples[i] = weft_wtime() - t0;
    }
    qsort(samples, (size_t)o->iters, sizeof *samples, compare_doubles);
    double lat_median = quantile(samples, o->iters, 0.5), lat_p99 = quantile(samples, o->iters, 0.99);

    if (o->warmup > 0) {
        for (long i = 0; i < o->burst; i++) send_one(s);
        BENCH_CHECK(weft_am_wait_replies(s->kernel, (size_t)o->burst));
    }
    for (long r = 0; r < o->reps; r++) {
        double t0 = weft_wtime();
        for (long i = 0; i < o->burst; i++) send_one(s);
        BENCH_CHECK(weft_am_wait_replies(s->kernel, (size_t)o->burst));
        burst_times[r] = weft_wtime() - t0;
    }
    qsort(burst_times, (size_t)o->reps, sizeof *burst_times, compare_doubles);
    double t = quantile(burst_times, o->reps, 0.5);
    double msgs_per_s = t > 0 ? (double)o->burst / t : 0.0;
    double gbps = t > 0 ? (double)o->burst * (double)s->bytes * 8.0 / t / 1e9 : 0.0;
    printf("%s,%zu,%.3f,%.3f,%.4f,%.0f\n", kind_names[s->kind], s->bytes, lat_median * 1e6, lat_p99 * 1e6, gbps,
           msgs_per_s);
    fflush(stdout);

    /* Long kinds: read the receiver's landing area back and compare with what was sent. */
    if (s->kind == KIND_LONG || s->kind == KIND_LONG_SEG) {
        const char *sent = s->kind == KIND_LONG ? s->buf : seg;
        memset(seg + check_offset, 0, s->bytes);
        BENCH_CHECK(weft_am_get_long(s->kernel, 1, WEFT_AM_H_EMPTY, NULL, 0, 0, s->bytes, check_offset, 0));
        BENCH_CHECK(weft_am_wait_replies(s->kernel, 1));
        if (memcmp(seg + check_offset, sent, s->bytes) != 0) {
            fprintf(stderr,
                    "weft-am: %s of %zu bytes: the receiver's segment differs from what "
                    "was sent\n",
                    kind_names[s->kind], s->bytes);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    options o = {.min_bytes = 8, .max_bytes = 4096, .iters = 1000, .burst = 1000, .warmup = 100, .reps = 5};
    for (int k = 0; k < KIND_COUNT; k++) o.kinds[k] = 1;

    BENCH_CHECK(weft_init(&argc, &argv));
    int rank = 0, size = 0;
    BENCH_CHECK(weft_comm_rank(WEFT_COMM_WORLD, &rank));
    BENCH_CHECK(weft_comm_size(WEFT_COMM_WORLD, &size));

    static const struct option longopts[] = {
        {"kinds", required_argument, NULL, 'k'}, {"min", required_argument, NULL, 'm'},
        {"max", required_argument, NULL, 'M'},   {"iters", required_argument, NULL, 'i'},
        {"burst", required_argument, NULL, 'n'}, {"warmup", required_argument, NULL, 'w'},
        {"reps", required_argument, NULL, 'r'},  {"pin", no_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    int opt, bad = 0;
    opterr = rank == 0; /* only rank 0 complains about bad options */
    while ((opt = getopt_long(argc, argv, "k:m:M:i:n:w:r:ph", longopts, NULL)) != -1) {
        switch (opt) {
            case 'k': bad |= parse_kinds(optarg, o.kinds); break;
            case 'm': bad |= bench_parse_size(optarg, &o.min_bytes); break;
            case 'M': bad |= bench_parse_size(optarg, &o.max_bytes); break;
            case 'i': bad |= bench_parse_long(optarg, 1, &o.iters); break;
            case 'n': bad |= bench_parse_long(optarg, 1, &o.burst); break;
            case 'w': bad |= bench_parse_long(optarg, 0, &o.warmup); break;
            case 'r': bad |= bench_parse_long(optarg, 1, &o.reps); break;
            case 'p': o.pin = 1; break;
            case 'h':
                if (rank == 0) usage(stdout, argv[0]);
                weft_finalize();
                return 0;
            default: bad = 1; break;
        }
    }
    if (bad || optind != argc || o.min_bytes > o.max_bytes || o.min_bytes == 0) {
        if (rank == 0) {
            fprintf(stderr, "%s: bad arguments%s\n", argv[0],
                    o.min_bytes > o.max_bytes ? " (MIN > MAX)"
                        : o.min_bytes == 0    ? " (MIN must be > 0; short is the 0-byte row)"
                                              : "");
            usage(stderr, argv[0]);
        }
        weft_finalize();
        return 2;
    }
    if (bench_need_two_ranks(rank, size, argv[0])) {
        weft_finalize();
        return 2;
    }
    /* Where each rank runs (rank 1 tells rank 0), for the header. */
    int cpus[2] = {o.pin ? bench_pin(rank) : -1, -1};
    if (rank == 1)
        BENCH_CHECK(weft_send(&cpus[0], 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD));
    else
        BENCH_CHECK(weft_recv(&cpus[1], 1, WEFT_INT, 1, 0, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));

    /* Segment: [0, max) is the sender's long_seg source and the receiver's landing area;
     * [max, 2 max) is where the sender reads the landing area back to check it. */
    size_t check_offset = o.max_bytes;
    weft_pgas kernel = WEFT_PGAS_NULL;
    BENCH_CHECK(weft_pgas_create(WEFT_COMM_WORLD, 2 * o.max_bytes, WEFT_INFO_NULL, &kernel));
    int me = -1;
    BENCH_CHECK(weft_pgas_kernel_id(kernel, &me));
    size_t max_medium = 0, max_long = 0;
    BENCH_CHECK(weft_am_max_medium(kernel, &max_medium));
    BENCH_CHECK(weft_am_max_long(kernel, &max_long));
    static int stop = 0;
    if (me == 1) BENCH_CHECK(weft_am_register(kernel, HANDLER_STOP, on_stop, &stop));
    /* Nobody sends before the stop handler exists. */
    BENCH_CHECK(weft_pgas_barrier(kernel));

    int mismatches = 0;
    if (me == 1) {
        while (!stop) BENCH_CHECK(weft_pgas_progress(kernel));
    } else {
        char fabric[256];
        bench_fabric_name(fabric, sizeof fabric);
        printf(
            "# weft-am: fabric %s; kernel 0 -> kernel 1, handler WEFT_AM_H_EMPTY, automatic "
            "replies\n",
            fabric);
        printf(
            "# latency: median and p99 of %ld round trips (message + reply) after %ld warm-up; "
            "throughput: median of %ld bursts of %ld messages + wait_replies\n",
            o.iters, o.warmup, o.reps, o.burst);
        printf("# limits: weft_am_max_medium %zu B, weft_am_max_long %zu B%s\n", max_medium, max_long,
               o.pin ? "" : "; not pinned (-p pins)");
        if (o.pin) printf("# pinned: rank 0 -> CPU %d, rank 1 -> CPU %d\n", cpus[0], cpus[1]);
        printf("kind,bytes,latency_us_median,latency_us_p99,throughput_gbps,msgs_per_s\n");
        fflush(stdout);

        void *seg_base = NULL;
        size_t seg_size = 0;
        BENCH_CHECK(weft_pgas_segment(kernel, &seg_base, &seg_size));
        char *seg = seg_base;
        char *buf = malloc(o.max_bytes);
        double *samples = malloc((size_t)o.iters * sizeof *samples);
        double *burst_times = malloc((size_t)o.reps * sizeof *burst_times);
        if (!buf || !samples || !burst_times || seg_size < 2 * o.max_bytes) {
            fprintf(stderr,
                    "weft-am: cannot allocate %zu bytes (or segment of %zu bytes too "
                    "small)\n",
                    o.max_bytes, seg_size);
            weft_abort(WEFT_COMM_WORLD, 1);
            return 1;
        }
        size_t first = 1; /* MIN rounded up to a power of two */
        while (first < o.min_bytes) first *= 2;
        for (int kind = 0; kind < KIND_COUNT; kind++) {
            if (!o.kinds[kind]) continue;
            sender s = {.kernel = kernel, .kind = kind, .buf = buf, .bytes = 0};
            if (kind == KIND_SHORT) {
                mismatches += measure(&s, &o, samples, burst_times, seg, check_offset);
                continue;
            }
            size_t limit = kind == KIND_MEDIUM ? max_medium : max_long;
            for (size_t n = first; n <= o.max_bytes && n > 0; n *= 2) {
                if (n > limit) {
                    printf("# %s: %zu B and above exceed the limit (%zu B); skipped\n", kind_names[kind], n, limit);
                    break;
                }
                /* A pattern per kind and size, so a stale landing area is noticed. */
                char *src = kind == KIND_LONG_SEG ? seg : buf;
                for (size_t b = 0; b < n; b++) src[b] = (char)((b * 31 + n + (size_t)kind * 7) & 0xff);
                s.bytes = n;
                mismatches += measure(&s, &o, samples, burst_times, seg, check_offset);
            }
        }
        free(buf);
        free(samples);
        free(burst_times);
        BENCH_CHECK(weft_am_short(kernel, 1, HANDLER_STOP, NULL, 0, 0));
        BENCH_CHECK(weft_am_wait_replies(kernel, 1));
    }

    BENCH_CHECK(weft_pgas_free(&kernel));
    BENCH_CHECK(weft_finalize());
    return mismatches ? 1 : 0;
}
