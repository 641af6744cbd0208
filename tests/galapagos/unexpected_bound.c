/* Unexpected-message memory is bounded, with back-pressure rather than loss (issue 24 item 12).
 * Rank 0 sends an 8 MiB message and then 50 000 messages of 1 KiB that rank 1 has not asked
 * for; rank 1 progresses for 3 s without receiving (it probes another tag), as a rank that runs
 * behind, or a token holder's target, would.  Its memory must grow by less than 16 MiB (with
 * WEFT_GALAPAGOS_UNEXPECTED_PER_PEER=1M; unbounded, the messages took 58 MB).  Then it probes
 * the large message (which the bound held up half-way), receives it, and receives every small
 * one in order: all must arrive whole (0 mismatches), and rank 0's sends must all complete.
 *   weftrun -n 2 weft-test-gal-unexpected_bound      (WEFT_FABRIC=galapagos)
 * Prints PASS (exit 0) or FAIL (exit 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/weft.h>

#define BIG (8u << 20)
#define SMALL 1024
#define COUNT 50000
#define WINDOW 256
#define TAG_BIG 2
#define TAG_SMALL 1

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}

static unsigned char pattern(long msg, long byte) { return (unsigned char)(msg * 131 + byte * 7 + 1); }

static int check(int rc, const char *what) {
    if (rc != WEFT_SUCCESS) {
        printf("FAIL: %s returned %d\n", what, rc);
        fflush(stdout);
        exit(1);
    }
    return rc;
}

int main(int argc, char **argv) {
    check(weft_init(&argc, &argv), "weft_init");
    int rank = -1, size = 0;
    weft_comm_rank(WEFT_COMM_WORLD, &rank);
    weft_comm_size(WEFT_COMM_WORLD, &size);
    if (size != 2) {
        printf("FAIL: run with 2 processes\n");
        return 1;
    }
    unsigned char *big = malloc(BIG);
    static unsigned char small[WINDOW][SMALL];
    long mismatches = 0;
    if (rank == 0) {
        for (long b = 0; b < BIG; ++b) big[b] = pattern(-1, b);
        weft_request big_req;
        check(weft_isend(big, BIG, WEFT_BYTE, 1, TAG_BIG, WEFT_COMM_WORLD, &big_req), "isend big");
        weft_request reqs[WINDOW];
        for (long m = 0; m < COUNT; m += WINDOW) {
            int n = COUNT - m < WINDOW ? (int)(COUNT - m) : WINDOW;
            for (int i = 0; i < n; ++i) {
                for (long b = 0; b < SMALL; ++b) small[i][b] = pattern(m + i, b);
                check(weft_isend(small[i], SMALL, WEFT_BYTE, 1, TAG_SMALL, WEFT_COMM_WORLD, &reqs[i]), "isend");
            }
            check(weft_waitall((size_t)n, reqs, WEFT_STATUSES_IGNORE), "waitall of sends");
        }
        check(weft_wait(&big_req, WEFT_STATUS_IGNORE), "wait big");
    } else {
        long before = rss_kib();
        double until = weft_wtime() + 3.0;
        while (weft_wtime() < until) {
            int flag = 0;
            check(weft_iprobe(0, 999, WEFT_COMM_WORLD, &flag, WEFT_STATUS_IGNORE), "iprobe");
        }
        long grown = rss_kib() - before;
        printf("rank 1: memory grew by %ld KiB while 3 s behind\n", grown);
        /* The large message is held up half-way by the bound: probing finds it, and a receive
         * for it lets its connection flow again. */
        weft_status st;
        check(weft_probe(0, TAG_BIG, WEFT_COMM_WORLD, &st), "probe big");
        check(weft_recv(big, BIG, WEFT_BYTE, 0, TAG_BIG, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), "recv big");
        for (long b = 0; b < BIG; ++b) mismatches += big[b] != pattern(-1, b);
        for (long m = 0; m < COUNT; ++m) {
            check(weft_recv(small[0], SMALL, WEFT_BYTE, 0, TAG_SMALL, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), "recv");
            for (long b = 0; b < SMALL; ++b) mismatches += small[0][b] != pattern(m, b);
        }
        printf("rank 1: %ld mismatched bytes in %d messages\n", mismatches, COUNT + 1);
        int ok = grown < 16 * 1024 && mismatches == 0;
        if (!ok) mismatches += 1;
    }
    long bad = mismatches;
    int rc = weft_allreduce(WEFT_IN_PLACE, &bad, 1, WEFT_LONG, WEFT_SUM, WEFT_COMM_WORLD);
    free(big);
    check(weft_finalize(), "weft_finalize");
    if (rank == 0) printf("%s\n", rc == WEFT_SUCCESS && bad == 0 ? "PASS" : "FAIL");
    return rc == WEFT_SUCCESS && bad == 0 ? 0 : 1;
}
