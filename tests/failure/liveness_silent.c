/* A process that falls silent without dying, and one that only computes.  3 processes under
 * `weftrun --keep-going`, WEFT_PEER_TIMEOUT=T set; rank 1 is the victim.  argv[1]:
 *   stopped  it stops itself (SIGSTOP): its kernel still answers, its heartbeat stops;
 *   cutoff   it runs `sh -c "$WEFT_TEST_CUT"`, which takes its node's link down (liveness_case.sh
 *            runs it in a network namespace of its own);
 *   compute  it sleeps 2T + 1 s without calling Weft, then sends: nothing may fail.
 * In stopped and cutoff, a receive from the victim that the survivors posted fails with
 * WEFT_ERR_PROC_FAILED, its detail says "not responding" or "unreachable", within 3T of the
 * victim's last word (CLOCK_MONOTONIC, which weft_wtime reads: one machine), and the survivors
 * still talk and finalize.  Each rank that finishes prints PASS. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "weft/weft.h"

enum { victim = 1, tag_go = 1, tag_notice = 2, tag_pending = 3, tag_alive = 4 };

static int me = -1;

#define EXPECT(cond, what)                                               \
    do {                                                                 \
        if (!(cond)) {                                                   \
            printf("rank %d: FAIL: %s (line %d)\n", me, what, __LINE__); \
            _exit(1);                                                    \
        }                                                                \
    } while (0)
#define CHECK(call) EXPECT((call) == WEFT_SUCCESS, #call)

/* The victim's part in stopped and cutoff: once both survivors have posted their receive, it
 * tells them the time and falls silent. */
static void fall_silent(const char *how) {
    int go = 0;
    for (int r = 0; r < 3; ++r)
        if (r != victim) CHECK(weft_recv(&go, 1, WEFT_INT, r, tag_go, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
    double t = weft_wtime();
    for (int r = 0; r < 3; ++r)
        if (r != victim) CHECK(weft_send(&t, 1, WEFT_DOUBLE, r, tag_notice, WEFT_COMM_WORLD));
    if (strcmp(how, "stopped") == 0) {
        raise(SIGSTOP);
    } else {
        const char *cut = getenv("WEFT_TEST_CUT");
        EXPECT(cut != NULL && system(cut) == 0, "WEFT_TEST_CUT takes the link down");
    }
    /* weftrun ends this process once a survivor reports it; were it not, the survivors fail. */
    sleep(120);
    EXPECT(0, "not ended by weftrun");
}

static void survivor(const char *how, int timeout_s, weft_comm alive) {
    int x = 0, go = 1;
    double death = 0;
    weft_request pending;
    CHECK(weft_irecv(&x, 1, WEFT_INT, victim, tag_pending, WEFT_COMM_WORLD, &pending));
    CHECK(weft_send(&go, 1, WEFT_INT, victim, tag_go, WEFT_COMM_WORLD));
    CHECK(weft_recv(&death, 1, WEFT_DOUBLE, victim, tag_notice, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
    int rc = weft_wait(&pending, WEFT_STATUS_IGNORE);
    double detected = weft_wtime() - death;
    char detail[WEFT_MAX_ERROR_STRING] = "";
    size_t len = 0;
    weft_error_detail(detail, &len);
    printf("rank %d: wait on a receive from rank 1 -> %d after %.3f s (%s)\n", me, rc, detected, detail);
    EXPECT(rc == WEFT_ERR_PROC_FAILED, "the receive fails with WEFT_ERR_PROC_FAILED");
    const char *word = strcmp(how, "stopped") == 0 ? "not responding" : "unreachable";
    EXPECT(strstr(detail, word) != NULL,
           strcmp(how, "stopped") == 0 ? "the detail says not responding" : "the detail says unreachable");
    EXPECT(detected < 3.0 * timeout_s, "detected within 3 x WEFT_PEER_TIMEOUT");
    /* The survivors go on: point-to-point, a collective of their own, finalize. */
    int other = me == 0 ? 2 : 0, in = -1;
    CHECK(weft_sendrecv(&me, 1, WEFT_INT, other, tag_alive, &in, 1, WEFT_INT, other, tag_alive, WEFT_COMM_WORLD,
                        WEFT_STATUS_IGNORE));
    EXPECT(in == other, "the survivors exchange");
    CHECK(weft_barrier(alive));
    printf("rank %d: %s detected in %.3f s (WEFT_PEER_TIMEOUT=%d)\n", me, how, detected, timeout_s);
}

/* rank 1 computes for 2T + 1 s while the others wait for it: no failure. */
static void compute(int timeout_s) {
    int x = 0;
    if (me == victim) {
        sleep((unsigned)(2 * timeout_s + 1));
        x = 42;
        for (int r = 0; r < 3; ++r)
            if (r != victim) CHECK(weft_send(&x, 1, WEFT_INT, r, tag_pending, WEFT_COMM_WORLD));
    } else {
        weft_request r;
        CHECK(weft_irecv(&x, 1, WEFT_INT, victim, tag_pending, WEFT_COMM_WORLD, &r));
        CHECK(weft_wait(&r, WEFT_STATUS_IGNORE));
        EXPECT(x == 42, "the value from rank 1");
    }
    CHECK(weft_barrier(WEFT_COMM_WORLD));
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc != 2 ||
        (strcmp(argv[1], "stopped") != 0 && strcmp(argv[1], "cutoff") != 0 && strcmp(argv[1], "compute") != 0)) {
        fprintf(stderr, "usage: %s stopped|cutoff|compute  (weftrun -n 3 --keep-going)\n", argv[0]);
        return 2;
    }
    const char *t = getenv("WEFT_PEER_TIMEOUT");
    int timeout_s = t != NULL ? atoi(t) : 0;
    int size = 0;
    CHECK(weft_init(&argc, &argv));
    weft_comm_rank(WEFT_COMM_WORLD, &me);
    weft_comm_size(WEFT_COMM_WORLD, &size);
    EXPECT(size == 3, "run with 3 processes");
    EXPECT(timeout_s >= 1, "WEFT_PEER_TIMEOUT set to 1 s or more");
    weft_comm alive;
    CHECK(weft_comm_split(WEFT_COMM_WORLD, me == victim, me, &alive));
    CHECK(weft_barrier(WEFT_COMM_WORLD));
    if (strcmp(argv[1], "compute") == 0)
        compute(timeout_s);
    else if (me == victim)
        fall_silent(argv[1]);
    else
        survivor(argv[1], timeout_s, alive);
    CHECK(weft_comm_free(&alive));
    CHECK(weft_finalize());
    printf("rank %d: PASS\n", me);
    return 0;
}
