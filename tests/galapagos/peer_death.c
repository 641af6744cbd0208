/* A peer node dies (its process ends without finalizing, as after SIGKILL) in the middle of a
 * job: operations toward it fail with WEFT_ERR_PROC_FAILED within a bounded time instead of
 * hanging.  Rank 1 tells rank 0 it is about to die and exits at once; rank 0 then sends it a
 * large message (which cannot complete: nobody reads it) and a small one, and checks that both
 * fail with WEFT_ERR_PROC_FAILED, printing the time from the notice to each failure.
 *   weftrun -n 2 weft-test-gal-peer_death        (WEFT_FABRIC=galapagos)
 * Prints PASS (exit 0) or FAIL (exit 1).  Rank 0 ends without weft_finalize: the job's other
 * process is gone, so a collective finalize would wait for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <weft/weft.h>

#define BIG (64u << 20)

static int fail_line(const char *what, int rc) {
    printf("FAIL: %s returned %d\n", what, rc);
    fflush(stdout);
    _exit(1);
}

int main(int argc, char **argv) {
    if (weft_init(&argc, &argv) != WEFT_SUCCESS) return 1;
    int rank = -1, size = 0;
    weft_comm_rank(WEFT_COMM_WORLD, &rank);
    weft_comm_size(WEFT_COMM_WORLD, &size);
    if (size != 2) {
        printf("FAIL: run with 2 processes\n");
        return 1;
    }
    int notice = 7;
    if (rank == 1) {
        int rc = weft_send(&notice, 1, WEFT_INT, 0, 1, WEFT_COMM_WORLD);
        if (rc != WEFT_SUCCESS) fail_line("rank 1: weft_send", rc);
        _exit(0); /* dies: no finalize, sockets closed by the kernel */
    }
    int got = 0, rc;
    if ((rc = weft_recv(&got, 1, WEFT_INT, 1, 1, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE)) != WEFT_SUCCESS)
        fail_line("rank 0: weft_recv of the notice", rc);
    double t0 = weft_wtime();
    usleep(20000); /* let rank 1 be gone (its exit follows the notice at once) */
    char *big = calloc(1, BIG);
    weft_request req = WEFT_REQUEST_NULL;
    rc = weft_isend(big, BIG, WEFT_BYTE, 1, 2, WEFT_COMM_WORLD, &req);
    if (rc == WEFT_SUCCESS) rc = weft_wait(&req, WEFT_STATUS_IGNORE);
    double t1 = weft_wtime();
    int small_rc = weft_send(&notice, 1, WEFT_INT, 1, 3, WEFT_COMM_WORLD);
    double t2 = weft_wtime();
    printf("peer death: large send -> %d after %.3f s, small send -> %d after %.3f s (from the notice)\n", rc, t1 - t0,
           small_rc, t2 - t0);
    int ok = rc == WEFT_ERR_PROC_FAILED && small_rc == WEFT_ERR_PROC_FAILED && t2 - t0 < 10.0;
    printf("%s\n", ok ? "PASS" : "FAIL");
    fflush(stdout);
    free(big);
    _exit(ok ? 0 : 1);
}
