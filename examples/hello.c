/* hello: every rank passes a message around a ring and checks what it received.
 * Run: weftrun -n 2 weft-hello */
#include <stdio.h>
#include <string.h>

#include <weft/weft.h>

static int check(int rc, const char *what) {
    if (rc != WEFT_SUCCESS) {
        char text[WEFT_MAX_ERROR_STRING], detail[WEFT_MAX_ERROR_STRING];
        size_t len;
        weft_error_string(rc, text, &len);
        weft_error_detail(detail, &len);
        fprintf(stderr, "weft-hello: %s failed: %s (%s)\n", what, text, detail);
    }
    return rc;
}

int main(int argc, char **argv) {
    if (check(weft_init(&argc, &argv), "weft_init")) return 1;
    int rank, size;
    weft_comm_rank(WEFT_COMM_WORLD, &rank);
    weft_comm_size(WEFT_COMM_WORLD, &size);

    weft_info info;
    char fabric[64] = "?", boot[64] = "?";
    int flag;
    if (weft_get_runtime_info(&info) == WEFT_SUCCESS) {
        weft_info_get(info, "fabric", sizeof fabric - 1, fabric, &flag);
        weft_info_get(info, "bootstrap", sizeof boot - 1, boot, &flag);
        weft_info_free(&info);
    }
    if (rank == 0) printf("weft-hello: %d processes, fabric=%s bootstrap=%s\n", size, fabric, boot);

    /* Each rank sends to the next and receives from the previous, 3 rounds. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, failures = 0;
    for (int round = 0; round < 3; ++round) {
        char out[64], in[64] = "", expect[64];
        snprintf(out, sizeof out, "hello from rank %d, round %d", rank, round);
        snprintf(expect, sizeof expect, "hello from rank %d, round %d", prev, round);
        weft_request req;
        weft_status st;
        if (check(weft_irecv(in, sizeof in, WEFT_CHAR, prev, round, WEFT_COMM_WORLD, &req), "weft_irecv") ||
            check(weft_send(out, strlen(out) + 1, WEFT_CHAR, next, round, WEFT_COMM_WORLD), "weft_send") ||
            check(weft_wait(&req, &st), "weft_wait"))
            return 1;
        if (strcmp(in, expect) != 0 || st.source != prev || st.tag != round) {
            fprintf(stderr, "weft-hello: rank %d got '%s' from %d tag %d, expected '%s'\n", rank, in, st.source, st.tag,
                    expect);
            ++failures;
        } else if (round == 0) {
            printf("rank %d of %d received: \"%s\"\n", rank, size, in);
        }
    }
    fflush(stdout);
    if (check(weft_finalize(), "weft_finalize")) return 1;
    return failures ? 2 : 0;
}
