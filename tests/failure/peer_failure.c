/* A process dies (SIGKILL) in the middle of traffic; the survivors' pending and new operations
 * involving it fail with WEFT_ERR_PROC_FAILED, in time, while the survivors keep talking to
 * each other and finalize.  One kind of traffic per run (argv[1]):
 *   p2p      pending irecv from the victim, ANY_SOURCE irecv, an 8 MiB isend to it nobody
 *            receives; then a new send and recv to it
 *   coll     pending iallreduces (8 B and 8 MiB) on a communicator with the victim, and a
 *            blocking barrier it never joins (through the node's shared memory: no message
 *            to wait for, only its flag); then a new barrier;
 *            a collective on the survivors' own communicator still works
 *   pgas     requests to the victim's kernel wait for replies that never come; PGAS barrier;
 *            the broken context is freed
 *   enqueue  a receive from the victim enqueued on a (host) queue; its status fails
 * Run with 3 processes under `weftrun --keep-going`: rank 1 is the victim.  Before dying it
 * tells the others the time (CLOCK_MONOTONIC, which weft_wtime reads: one node); each survivor
 * prints the time from that death to its first WEFT_ERR_PROC_FAILED, and PASS or FAIL. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "weft/weft.h"
#ifdef WEFT_TEST_HOSTQ
#include "hostq.h"
#endif

enum { victim = 1, tag_notice = 99, tag_pending = 5, tag_any = 6, tag_big = 7, tag_alive = 8 };
#define BIG (8u << 20)

static int me = -1;
static double death = 0, first_failure = 0;

static void detail(const char *what, int rc) {
    char d[WEFT_MAX_ERROR_STRING] = "";
    size_t len = 0;
    weft_error_detail(d, &len);
    printf("rank %d: %s -> %d (%s)\n", me, what, rc, d);
}

#define EXPECT(cond, what)                                               \
    do {                                                                 \
        if (!(cond)) {                                                   \
            printf("rank %d: FAIL: %s (line %d)\n", me, what, __LINE__); \
            fflush(stdout);                                              \
            _exit(1);                                                    \
        }                                                                \
    } while (0)
#define CHECK(call) EXPECT((call) == WEFT_SUCCESS, #call)

/* rc must be WEFT_ERR_PROC_FAILED; the first one sets first_failure. */
static void expect_failed(const char *what, int rc) {
    if (rc == WEFT_ERR_PROC_FAILED && first_failure == 0) first_failure = weft_wtime();
    detail(what, rc);
    EXPECT(rc == WEFT_ERR_PROC_FAILED, what);
}

enum { tag_go = 98 };

/* The survivors have finished the traffic before the death and posted what must be pending
 * when it comes: they tell the victim to go ahead. */
static void ready(void) {
    int go = 1;
    CHECK(weft_send(&go, 1, WEFT_INT, victim, tag_go, WEFT_COMM_WORLD));
}

/* The victim waits until every survivor is ready, announces its death (delay_s ahead) and dies. */
static void die_later(int size, double delay_s) {
    int go = 0;
    for (int r = 0; r < size; ++r)
        if (r != victim) CHECK(weft_recv(&go, 1, WEFT_INT, r, tag_go, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
    double t = weft_wtime() + delay_s;
    for (int r = 0; r < size; ++r)
        if (r != victim) CHECK(weft_send(&t, 1, WEFT_DOUBLE, r, tag_notice, WEFT_COMM_WORLD));
    while (weft_wtime() < t) usleep(1000);
    raise(SIGKILL);
}
static void die(int size) { die_later(size, 0); }

static void await_notice(void) {
    CHECK(weft_recv(&death, 1, WEFT_DOUBLE, victim, tag_notice, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
}

/* The survivors (ranks 0 and 2) still talk to each other. */
static void survivors_talk(void) {
    int other = me == 0 ? 2 : 0, out = me, in = -1;
    if (me == 0) CHECK(weft_send(&out, 1, WEFT_INT, other, tag_alive, WEFT_COMM_WORLD));
    CHECK(weft_recv(&in, 1, WEFT_INT, other, tag_alive, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
    if (me != 0) CHECK(weft_send(&out, 1, WEFT_INT, other, tag_alive, WEFT_COMM_WORLD));
    EXPECT(in == other, "survivors exchange");
}

static void run_p2p(int size) {
    int warm = 0;
    for (int i = 0; i < 100; ++i) { /* traffic with the victim before it dies */
        if (me == victim)
            CHECK(weft_send(&i, 1, WEFT_INT, 0, 1, WEFT_COMM_WORLD));
        else if (me == 0)
            CHECK(weft_recv(&warm, 1, WEFT_INT, victim, 1, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
    }
    if (me == victim) die(size);
    int a = 0, b = 0;
    char *big = calloc(1, BIG);
    weft_request pending, any, bigsend;
    CHECK(weft_irecv(&a, 1, WEFT_INT, victim, tag_pending, WEFT_COMM_WORLD, &pending));
    CHECK(weft_irecv(&b, 1, WEFT_INT, WEFT_ANY_SOURCE, tag_any, WEFT_COMM_WORLD, &any));
    CHECK(weft_isend(big, BIG, WEFT_BYTE, victim, tag_big, WEFT_COMM_WORLD, &bigsend));
    ready();
    await_notice();
    weft_status st;
    expect_failed("wait on an irecv from the dead", weft_wait(&pending, &st));
    expect_failed("wait on an ANY_SOURCE irecv", weft_wait(&any, WEFT_STATUS_IGNORE));
    /* Posted before the death: it may have left (into the peer's socket buffers) before it. */
    int big_rc = weft_wait(&bigsend, WEFT_STATUS_IGNORE);
    detail("wait on an 8 MiB isend to the dead", big_rc);
    EXPECT(big_rc == WEFT_SUCCESS || big_rc == WEFT_ERR_PROC_FAILED, "8 MiB isend: success or PROC_FAILED");
    expect_failed("a new send to the dead", weft_send(&a, 1, WEFT_INT, victim, 3, WEFT_COMM_WORLD));
    expect_failed("a new recv from the dead",
                  weft_recv(&a, 1, WEFT_INT, victim, 3, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
    free(big);
    survivors_talk();
}

/* weft_get_stats: the blocking collectives that ran through shared memory. */
static long shm_collectives(void) {
    weft_info info;
    char v[32] = "0";
    int flag = 0;
    CHECK(weft_get_stats(&info));
    CHECK(weft_info_get(info, "shm_collectives", sizeof v, v, &flag));
    weft_info_free(&info);
    EXPECT(flag, "weft_get_stats has shm_collectives");
    return atol(v);
}

static void run_coll(int size) {
    weft_comm alive;
    CHECK(weft_comm_split(WEFT_COMM_WORLD, me == victim ? 1 : 0, me, &alive));
    long x = 1, sum = 0;
    for (int i = 0; i < 50; ++i) CHECK(weft_allreduce(&x, &sum, 1, WEFT_LONG, WEFT_SUM, WEFT_COMM_WORLD));
    EXPECT(sum == size, "allreduce before the death");
    EXPECT(shm_collectives() >= 50, "the small blocking allreduces ran through shared memory");
    if (me == victim) die_later(size, 0.1);
    weft_request r, rbig;
    enum { nbig = 1 << 20 }; /* 8 MiB: the survivors' messages to each other need a rendezvous */
    long *big_in = calloc(nbig, sizeof(long)), *big_out = calloc(nbig, sizeof(long));
    CHECK(weft_iallreduce(&x, &sum, 1, WEFT_LONG, WEFT_SUM, WEFT_COMM_WORLD, &r)); /* the victim never joins */
    CHECK(weft_iallreduce(big_in, big_out, nbig, WEFT_LONG, WEFT_SUM, WEFT_COMM_WORLD, &rbig));
    ready();
    await_notice(); /* the victim dies 100 ms later, while the survivors wait in the barrier */
    expect_failed("a barrier the dead never joins (shared memory)", weft_barrier(WEFT_COMM_WORLD));
    expect_failed("wait on a pending iallreduce", weft_wait(&r, WEFT_STATUS_IGNORE));
    expect_failed("wait on a pending 8 MiB iallreduce", weft_wait(&rbig, WEFT_STATUS_IGNORE));
    free(big_in);
    free(big_out);
    expect_failed("a new barrier", weft_barrier(WEFT_COMM_WORLD));
    CHECK(weft_allreduce(&x, &sum, 1, WEFT_LONG, WEFT_SUM, alive));
    EXPECT(sum == size - 1, "allreduce among the survivors");
    CHECK(weft_comm_free(&alive));
    survivors_talk();
}

static void run_pgas(int size) {
    weft_pgas k;
    CHECK(weft_pgas_create(WEFT_COMM_WORLD, 4096, WEFT_INFO_NULL, &k));
    uint64_t one = 1;
    CHECK(weft_pgas_barrier(k));
    for (int i = 0; i < 20; ++i) { /* everyone sends the next rank a Short, with replies */
        CHECK(weft_am_short(k, (me + 1) % size, WEFT_AM_H_ADD, &one, 1, 0));
        CHECK(weft_am_wait_replies(k, 1));
    }
    CHECK(weft_pgas_barrier(k));
    if (me == victim) die(size);
    ready();
    await_notice();
    /* Requests to the victim: sent or refused, their replies never come. */
    int rc = weft_am_short(k, victim, WEFT_AM_H_ADD, &one, 1, 0);
    if (rc != WEFT_SUCCESS)
        expect_failed("a Short to the dead", rc);
    else
        expect_failed("waiting for the dead's reply", weft_am_wait_replies(k, 1));
    expect_failed("a new Short to the dead", weft_am_short(k, victim, WEFT_AM_H_ADD, &one, 1, 0));
    expect_failed("a PGAS barrier", weft_pgas_barrier(k));
    /* A context that lost a kernel is broken (replies and counters do not say who they wait
     * for): it is freed, and the survivors go on with point-to-point. */
    int rc_free = weft_pgas_free(&k);
    EXPECT(rc_free == WEFT_SUCCESS || rc_free == WEFT_ERR_PROC_FAILED, "weft_pgas_free of a broken context");
    EXPECT(k == WEFT_PGAS_NULL, "weft_pgas_free released the context");
    survivors_talk();
}

#ifdef WEFT_TEST_HOSTQ
static void run_enqueue(int size) {
    hostq_t *q = NULL;
    EXPECT(hostq_create(&q) == 0, "hostq_create");
    weft_info info;
    CHECK(weft_info_create(&info));
    CHECK(weft_info_set(info, "type", "weft_hostq_t"));
    CHECK(weft_info_set_hex(info, "value", &q, sizeof q));
    weft_stream s;
    CHECK(weft_stream_create(info, &s));
    weft_info_free(&info);
    weft_comm c;
    CHECK(weft_stream_comm_create(WEFT_COMM_WORLD, s, &c));
    static int buf[16];
    if (me == victim) {
        CHECK(weft_send_enqueue(buf, 16, WEFT_INT, 0, 1, c));
        EXPECT(hostq_synchronize(q) == 0, "hostq_synchronize");
        die(size);
    }
    if (me == 0) {
        CHECK(weft_recv_enqueue(buf, 16, WEFT_INT, victim, 1, c, WEFT_STATUS_IGNORE));
        EXPECT(hostq_synchronize(q) == 0, "hostq_synchronize");
    }
    weft_status st;
    memset(&st, 0, sizeof st);
    CHECK(weft_recv_enqueue(buf, 16, WEFT_INT, victim, 2, c, &st)); /* pending when it dies */
    ready();
    await_notice();
    EXPECT(hostq_synchronize(q) == 0, "hostq_synchronize");
    expect_failed("an enqueued recv from the dead (its status)", st.error);
    /* The queue goes on: a send to the dead fails, the survivors still exchange. */
    weft_status st2;
    memset(&st2, 0, sizeof st2);
    weft_request r;
    CHECK(weft_isend_enqueue(buf, 1, WEFT_INT, victim, 3, c, &r));
    CHECK(weft_wait_enqueue(&r, &st2));
    EXPECT(hostq_synchronize(q) == 0, "hostq_synchronize");
    expect_failed("an enqueued send to the dead (its status)", st2.error);
    CHECK(weft_comm_free(&c));
    CHECK(weft_stream_free(&s));
    hostq_destroy(q);
    survivors_talk();
}
#endif

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s p2p|coll|pgas|enqueue  (weftrun -n 3 --keep-going)\n", argv[0]);
        return 2;
    }
    int size = 0;
    setvbuf(stdout, NULL, _IONBF, 0); /* the victim's death must not swallow anyone's lines */
    CHECK(weft_init(&argc, &argv));
    weft_comm_rank(WEFT_COMM_WORLD, &me);
    weft_comm_size(WEFT_COMM_WORLD, &size);
    EXPECT(size == 3, "run with 3 processes");
    if (strcmp(argv[1], "p2p") == 0)
        run_p2p(size);
    else if (strcmp(argv[1], "coll") == 0)
        run_coll(size);
    else if (strcmp(argv[1], "pgas") == 0)
        run_pgas(size);
#ifdef WEFT_TEST_HOSTQ
    else if (strcmp(argv[1], "enqueue") == 0)
        run_enqueue(size);
#endif
    else
        return 2;
    char fabric[64] = "";
    weft_info info;
    if (weft_get_runtime_info(&info) == WEFT_SUCCESS) {
        int flag = 0;
        weft_info_get(info, "fabric", sizeof fabric, fabric, &flag);
        weft_info_free(&info);
    }
    CHECK(weft_finalize());
    printf("rank %d: %s on %s: death to first WEFT_ERR_PROC_FAILED %.1f ms\nPASS\n", me, argv[1], fabric,
           (first_failure - death) * 1e3);
    return 0;
}
