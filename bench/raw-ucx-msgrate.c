/* raw-ucx-msgrate: the weft-msgrate loop written directly on UCP, the physical limit that
 * Weft's stream mode is compared with.
 *
 * One ucp_context per process, one ucp_worker per thread (UCS_THREAD_MODE_SINGLE), one endpoint
 * from thread i of rank 0 to thread i of rank 1.  Per iteration thread i of rank 0 posts WINDOW
 * ucp_tag_send_nbx of SIZE bytes and progresses until all complete, then receives a 4-byte ack;
 * thread i of rank 1 posts WINDOW ucp_tag_recv_nbx, progresses until all complete, then sends
 * the ack.  Barriers between phases: local pthread barrier + a tagged sync between the two
 * thread 0s.  Rate = T * WINDOW * ITERS / time on rank 0.
 *
 * Run it under weftrun (which sets WEFT_RANK/WEFT_SIZE); Weft itself is not used.  Worker
 * addresses are exchanged through files in a directory both ranks see (-d DIR, else
 * $RAW_UCX_DIR, else /tmp/raw-ucx-msgrate.<uid>.<weftrun's pid>).  The directory must be this
 * user's and closed to others (mode 0700; one made here is): another user's, or one open to
 * others, is refused, since whoever writes there chooses whom we connect to.  The job token
 * never appears in it.  Files are written atomically (rename) and removed once both sides are
 * connected, and the directory with them.
 *
 *   weftrun -n 2 raw-ucx-msgrate [-s SIZE] [-W WINDOW] [-i ITERS] [-w WARMUP] [-t THREADS]
 *                                [-d DIR] [-p] [-c FILE] [--csv]
 *
 * This is a benchmark program, not a test: it prints numbers and does not judge them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "bench_callgrind.h" /* BENCH_CG=loop|window, as in msgrate.c */
#include "bench_util.h"      /* option parsing and pinning, as in the Weft benchmarks */

#define TAG_DATA 100ull
#define TAG_ACK 101ull
#define TAG_SYNC 102ull
#define ACK_BYTES 4

static int g_rank = -1;

#define DIE(...)                                              \
    do {                                                      \
        fprintf(stderr, "raw-ucx-msgrate rank %d: ", g_rank); \
        fprintf(stderr, __VA_ARGS__);                         \
        fputc('\n', stderr);                                  \
        exit(1);                                              \
    } while (0)
#define UCS_CHECK(call)                                                  \
    do {                                                                 \
        ucs_status_t st_ = (call);                                       \
        if (st_ != UCS_OK) DIE("%s: %s", #call, ucs_status_string(st_)); \
    } while (0)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "Usage: weftrun -n 2 %s [options]\n"
            "The weft-msgrate loop (WINDOW tagged sends + one %d-byte ack per window, T thread\n"
            "pairs) directly on UCP, one worker per thread (UCS_THREAD_MODE_SINGLE).\n"
            "\n"
            "  -s, --size SIZE     message size in bytes (default 8)\n"
            "  -W, --window N      messages in flight per iteration (default 64)\n"
            "  -i, --iters N       timed iterations per thread (default 10000)\n"
            "  -w, --warmup N      untimed iterations first (default 100)\n"
            "  -t, --threads N     thread pairs (default 1)\n"
            "  -d, --dir DIR       address-exchange directory shared by both ranks (default\n"
            "                      $RAW_UCX_DIR, else /tmp/raw-ucx-msgrate.<uid>.<weftrun pid>);\n"
            "                      this user's, mode 0700 (others are refused)\n"
            "  -p, --pin           pin rank r (all its threads) to the r-th CPU of the inherited mask\n"
            "  -P, --pin-threads   pin thread i of rank r to the (r*T+i)-th CPU of the inherited mask\n"
            "  -c, --csv-file FILE also write the result as CSV to FILE\n"
            "      --csv           print CSV on stdout instead of the text report\n"
            "  -h, --help          this text\n"
            "\n"
            "CSV columns: bytes,window,iterations,threads,mode,messages,seconds,msg_per_s,MBps\n"
            "(mode is \"raw-ucx\", the same layout as weft-msgrate)\n",
            prog, ACK_BYTES);
}

struct shared {
    int rank;
    long window, iters, warmup, threads;
    size_t msg_size, slot;
    pthread_barrier_t bar;
    double t0, t1;
};

struct thr {
    struct shared *sh;
    int idx;
    ucp_worker_h worker;
    ucp_ep_h ep;
    ucp_address_t *addr;
    size_t addr_len;
    char *buf;
    int bad;
    int cpu; /* -P: the CPU this thread pins itself to; else -1 */
    pthread_t tid;
};

static void send_cb(void *request, ucs_status_t status, void *user_data) {
    if (status != UCS_OK) DIE("send completed with %s", ucs_status_string(status));
    ++*(long *)user_data;
    ucp_request_free(request);
}

static void recv_cb(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info, void *user_data) {
    (void)info;
    if (status != UCS_OK) DIE("receive completed with %s", ucs_status_string(status));
    ++*(long *)user_data;
    ucp_request_free(request);
}

/* Posts a send; *done is incremented when it completes (now or from a later progress). */
static void post_send(struct thr *t, const void *buf, size_t len, ucp_tag_t tag, long *done) {
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE,
        .cb.send = send_cb,
        .user_data = done,
        .datatype = ucp_dt_make_contig(1)};
    ucs_status_ptr_t r = ucp_tag_send_nbx(t->ep, buf, len, tag, &p);
    if (UCS_PTR_IS_ERR(r)) DIE("ucp_tag_send_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    if (r == NULL) ++*done;
}

static void post_recv(struct thr *t, void *buf, size_t len, ucp_tag_t tag, long *done) {
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE,
        .cb.recv = recv_cb,
        .user_data = done,
        .datatype = ucp_dt_make_contig(1)};
    ucs_status_ptr_t r = ucp_tag_recv_nbx(t->worker, buf, len, tag, (ucp_tag_t)-1, &p);
    if (UCS_PTR_IS_ERR(r)) DIE("ucp_tag_recv_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    if (r == NULL) ++*done;
}

static void wait_count(struct thr *t, long *done, long want) {
    while (*done < want) ucp_worker_progress(t->worker);
}

static void sync_pair(struct thr *t) {
    long done = 0;
    char b = 0;
    if (t->sh->rank == 0) {
        post_send(t, &b, 1, TAG_SYNC, &done);
        wait_count(t, &done, 1);
        post_recv(t, &b, 1, TAG_SYNC, &done);
        wait_count(t, &done, 2);
    } else {
        post_recv(t, &b, 1, TAG_SYNC, &done);
        wait_count(t, &done, 1);
        post_send(t, &b, 1, TAG_SYNC, &done);
        wait_count(t, &done, 2);
    }
}

static void barrier_all(struct thr *t) {
    pthread_barrier_wait(&t->sh->bar);
    if (t->idx == 0) sync_pair(t);
    pthread_barrier_wait(&t->sh->bar);
}

static char pattern(int idx, size_t k) { return (char)((k * 13 + 5 + (size_t)idx * 7) & 0xff); }

static void *run_pair(void *arg) {
    struct thr *t = arg;
    struct shared *sh = t->sh;
    char ack[ACK_BYTES] = {0};
    int cg = cg_mode();
    if (t->cpu >= 0) bench_pin_cpu("raw-ucx-msgrate thread", t->cpu);
    for (int phase = 0; phase < 2; phase++) {
        long n = phase == 0 ? sh->warmup : sh->iters;
        int cg_win = phase == 1 && cg == CG_WINDOW;
        unsigned settle = cg_win ? cg_settle_us() : 0;
        barrier_all(t);
        if (phase == 1 && t->idx == 0) sh->t0 = now();
        if (phase == 1 && cg == CG_LOOP) CALLGRIND_TOGGLE_COLLECT;
        for (long i = 0; i < n; i++) {
            long done = 0;
            if (settle) usleep(settle);
            if (cg_win) CALLGRIND_TOGGLE_COLLECT;
            if (sh->rank == 0) {
                for (long j = 0; j < sh->window; j++)
                    post_send(t, t->buf + (size_t)j * sh->slot, sh->msg_size, TAG_DATA, &done);
                wait_count(t, &done, sh->window);
                if (cg_win) CALLGRIND_TOGGLE_COLLECT;
                post_recv(t, ack, ACK_BYTES, TAG_ACK, &done);
                wait_count(t, &done, sh->window + 1);
            } else {
                for (long j = 0; j < sh->window; j++)
                    post_recv(t, t->buf + (size_t)j * sh->slot, sh->msg_size, TAG_DATA, &done);
                wait_count(t, &done, sh->window);
                if (cg_win) CALLGRIND_TOGGLE_COLLECT;
                post_send(t, ack, ACK_BYTES, TAG_ACK, &done);
                wait_count(t, &done, sh->window + 1);
            }
        }
        if (phase == 1 && cg == CG_LOOP) CALLGRIND_TOGGLE_COLLECT;
    }
    barrier_all(t);
    if (t->idx == 0) sh->t1 = now();
    if (sh->rank == 1) {
        for (size_t j = 0; j < (size_t)sh->window && !t->bad; j++)
            for (size_t off = 0; off < sh->msg_size; off++)
                if (t->buf[j * sh->slot + off] != pattern(t->idx, j * sh->slot + off)) {
                    t->bad = 1;
                    fprintf(stderr, "raw-ucx-msgrate: thread %d message %zu byte %zu differs\n", t->idx, j, off);
                    break;
                }
    }
    return NULL;
}

static void addr_path(char *out, size_t cap, const char *dir, int rank, long idx, int tmp) {
    snprintf(out, cap, "%s/addr.%d.%ld%s", dir, rank, idx, tmp ? ".tmp" : "");
}

static void write_file(const char *dir, const char *name, const void *data, size_t len) {
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) DIE("cannot write %s: %s", tmp, strerror(errno));
    if (rename(tmp, path) != 0) DIE("rename %s: %s", tmp, strerror(errno));
}

/* Waits (<= 60 s) for DIR/name and reads it whole. */
static void *read_file_wait(const char *dir, const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    for (int i = 0; i < 60000; i++) {
        FILE *f = fopen(path, "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            long n = ftell(f);
            fseek(f, 0, SEEK_SET);
            void *p = malloc(n > 0 ? (size_t)n : 1);
            if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) DIE("cannot read %s", path);
            fclose(f);
            *len = (size_t)n;
            return p;
        }
        usleep(1000);
    }
    DIE("timed out waiting for %s (is the peer running with the same -d DIR?)", path);
    return NULL;
}

int main(int argc, char **argv) {
    size_t msg_size = 8;
    long window = 64, iters = 10000, warmup = 100, threads = 1;
    const char *dir = getenv("RAW_UCX_DIR"), *csv_path = NULL;
    int csv_stdout = 0, pin = 0, pin_threads = 0;
    const char *rs = getenv("WEFT_RANK"), *ss = getenv("WEFT_SIZE");
    g_rank = rs ? atoi(rs) : -1;

    static const struct option longopts[] = {{"size", required_argument, NULL, 's'},
                                             {"window", required_argument, NULL, 'W'},
                                             {"iters", required_argument, NULL, 'i'},
                                             {"warmup", required_argument, NULL, 'w'},
                                             {"threads", required_argument, NULL, 't'},
                                             {"dir", required_argument, NULL, 'd'},
                                             {"pin", no_argument, NULL, 'p'},
                                             {"pin-threads", no_argument, NULL, 'P'},
                                             {"csv-file", required_argument, NULL, 'c'},
                                             {"csv", no_argument, NULL, 'C'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int opt, bad = 0;
    long sz = 8;
    opterr = g_rank <= 0;
    while ((opt = getopt_long(argc, argv, "s:W:i:w:t:d:pPc:h", longopts, NULL)) != -1) {
        switch (opt) {
            case 's':
                bad |= bench_parse_long(optarg, 0, &sz);
                msg_size = (size_t)sz;
                break;
            case 'W': bad |= bench_parse_long(optarg, 1, &window); break;
            case 'i': bad |= bench_parse_long(optarg, 1, &iters); break;
            case 'w': bad |= bench_parse_long(optarg, 0, &warmup); break;
            case 't': bad |= bench_parse_long(optarg, 1, &threads); break;
            case 'd': dir = optarg; break;
            case 'p': pin = 1; break;
            case 'P': pin_threads = 1; break;
            case 'c': csv_path = optarg; break;
            case 'C': csv_stdout = 1; break;
            case 'h':
                if (g_rank <= 0) usage(stdout, argv[0]);
                return 0;
            default: bad = 1; break;
        }
    }
    if (bad || optind != argc) {
        if (g_rank <= 0) usage(stderr, argv[0]);
        return 2;
    }
    if (!rs || !ss || atoi(ss) != 2 || (g_rank != 0 && g_rank != 1)) {
        fprintf(stderr, "%s: run it under weftrun -n 2 (needs WEFT_RANK 0|1 and WEFT_SIZE=2)\n", argv[0]);
        return 2;
    }
    int rank = g_rank;
    char defdir[512];
    if (!dir || !*dir) {
        /* Both ranks are weftrun's children: its pid names the job, and nothing secret does. */
        snprintf(defdir, sizeof defdir, "/tmp/raw-ucx-msgrate.%u.%ld", (unsigned)geteuid(), (long)getppid());
        dir = defdir;
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) DIE("cannot create %s: %s", dir, strerror(errno));
    struct stat st;
    if (lstat(dir, &st) != 0) DIE("cannot stat %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0)
        DIE("refusing the exchange directory %s: it must be a directory of this user's with mode 0700 (it is %s, "
            "owner %u, mode %03o)",
            dir, S_ISDIR(st.st_mode) ? "a directory" : "not a directory", (unsigned)st.st_uid,
            (unsigned)(st.st_mode & 0777));

    int cpu = -1;
    int *thread_cpus = calloc((size_t)threads, sizeof *thread_cpus);
    if (!thread_cpus) DIE("out of memory");
    for (long i = 0; i < threads; i++) thread_cpus[i] = -1;
    if (pin_threads) { /* as weft-msgrate -P: each thread pins itself when it starts */
        bench_thread_cpus(rank, threads, thread_cpus);
        cpu = thread_cpus[0];
    } else if (pin)
        cpu = bench_pin(rank); /* as weft-msgrate: says why and runs on unpinned when it fails */

    ucp_params_t cp = {.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
                       .features = UCP_FEATURE_TAG,
                       .mt_workers_shared = 0};
    ucp_config_t *config;
    UCS_CHECK(ucp_config_read(NULL, NULL, &config));
    ucp_context_h ctx;
    UCS_CHECK(ucp_init(&cp, config, &ctx));
    ucp_config_release(config);

    struct shared sh = {.rank = rank,
                        .window = window,
                        .iters = iters,
                        .warmup = warmup,
                        .threads = threads,
                        .msg_size = msg_size,
                        .slot = msg_size ? msg_size : 1};
    pthread_barrier_init(&sh.bar, NULL, (unsigned)threads);
    struct thr *thr = calloc((size_t)threads, sizeof *thr);
    if (!thr) DIE("out of memory");
    char path[4096], name[64];
    for (long i = 0; i < threads; i++) {
        struct thr *t = &thr[i];
        t->sh = &sh;
        t->idx = (int)i;
        t->cpu = thread_cpus[i];
        ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                                  .thread_mode = UCS_THREAD_MODE_SINGLE};
        UCS_CHECK(ucp_worker_create(ctx, &wp, &t->worker));
        UCS_CHECK(ucp_worker_get_address(t->worker, &t->addr, &t->addr_len));
        snprintf(name, sizeof name, "addr.%d.%ld", rank, i);
        write_file(dir, name, t->addr, t->addr_len);
        t->buf = malloc(sh.slot * (size_t)window);
        if (!t->buf) DIE("out of memory");
        for (size_t k = 0; k < sh.slot * (size_t)window; k++) t->buf[k] = rank == 0 ? pattern(t->idx, k) : 0;
    }
    for (long i = 0; i < threads; i++) {
        struct thr *t = &thr[i];
        size_t len = 0;
        snprintf(name, sizeof name, "addr.%d.%ld", 1 - rank, i);
        void *peer = read_file_wait(dir, name, &len);
        ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, .address = (const ucp_address_t *)peer};
        UCS_CHECK(ucp_ep_create(t->worker, &ep, &t->ep));
        free(peer);
    }
    /* Both sides are connected once every pair has synced; then each removes its own files. */
    for (long i = 0; i < threads; i++) sync_pair(&thr[i]);
    for (long i = 0; i < threads; i++) {
        addr_path(path, sizeof path, dir, rank, i, 0);
        unlink(path);
        ucp_worker_release_address(thr[i].worker, thr[i].addr);
    }
    for (long i = 0; i < threads; i++) sync_pair(&thr[i]);
    if (rank == 0) rmdir(dir); /* succeeds once rank 1's files are gone too; harmless otherwise */

    for (long i = 1; i < threads; i++)
        if (pthread_create(&thr[i].tid, NULL, run_pair, &thr[i]) != 0) DIE("pthread_create failed");
    run_pair(&thr[0]);
    int bad_data = thr[0].bad;
    for (long i = 1; i < threads; i++) {
        pthread_join(thr[i].tid, NULL);
        bad_data |= thr[i].bad;
    }
    double elapsed = sh.t1 - sh.t0;

    /* Rank 1 sends its verdict to rank 0 over pair 0. */
    {
        long done = 0;
        int v = bad_data;
        if (rank == 1)
            post_send(&thr[0], &v, sizeof v, TAG_SYNC, &done);
        else
            post_recv(&thr[0], &v, sizeof v, TAG_SYNC, &done);
        wait_count(&thr[0], &done, 1);
        bad_data = v;
    }
    if (rank == 0) {
        double msgs = (double)threads * (double)window * (double)iters;
        double rate = elapsed > 0 ? msgs / elapsed : 0.0;
        double mbps = rate * (double)msg_size / 1e6;
        const char *hdr = "bytes,window,iterations,threads,mode,messages,seconds,msg_per_s,MBps\n";
        char row[256];
        snprintf(row, sizeof row, "%zu,%ld,%ld,%ld,raw-ucx,%.0f,%.6f,%.0f,%.2f\n", msg_size, window, iters, threads,
                 msgs, elapsed, rate, mbps);
        if (csv_stdout) {
            fputs(hdr, stdout);
            fputs(row, stdout);
        } else {
            const char *tls = getenv("UCX_TLS");
            printf(
                "# raw-ucx-msgrate: UCX %s, UCX_TLS=%s, %zu-byte messages, window %ld, %ld "
                "iterations, %ld thread(s), one worker per thread\n",
                ucp_get_version_string(), tls ? tls : "(unset)", msg_size, window, iters, threads);
            if (pin_threads)
                printf("# pinned per thread: thread i of rank r on CPU r*%ld+i of the mask (rank 0 thread 0: %d)\n",
                       threads, cpu);
            else if (pin)
                printf("# pinned: rank %d -> CPU %d (all threads)\n", rank, cpu);
            printf("messages: %.0f  seconds: %.6f\n", msgs, elapsed);
            printf("message rate: %.0f msg/s  (%.3f Mmsg/s, %.2f MB/s)\n", rate, rate / 1e6, mbps);
        }
        if (csv_path) {
            FILE *f = fopen(csv_path, "w");
            if (!f) DIE("cannot open %s: %s", csv_path, strerror(errno));
            fputs(hdr, f);
            fputs(row, f);
            fclose(f);
        }
        fflush(stdout);
    }

    /* Close: a last sync so that neither side closes while the other still sends, then flush. */
    for (long i = 0; i < threads; i++) {
        struct thr *t = &thr[i];
        sync_pair(t);
        ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
        ucs_status_ptr_t r = ucp_ep_close_nbx(t->ep, &p);
        if (UCS_PTR_IS_PTR(r)) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(t->worker);
            ucp_request_free(r);
        }
        ucp_worker_destroy(t->worker);
        free(t->buf);
    }
    free(thr);
    free(thread_cpus);
    ucp_cleanup(ctx);
    pthread_barrier_destroy(&sh.bar);
    return bad_data ? 1 : 0;
}
