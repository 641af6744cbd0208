/* Ending a program with enqueued work left over, one way per run (argv[1]), in one process:
 *   unmatched  a receive into "device" memory that no message matches, then weft_finalize
 *   unwaited   an isend/irecv_enqueue request never passed to weft_wait_enqueue, then finalize
 *   exit       a GPU stream, then exit() without weft_finalize
 * Each must end cleanly (exit status 0, no crash, no sanitizer report) within its time limit:
 * finalize lets the queue past Weft's points before anything it reads is freed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostq.h"
#include "weft/weft.h"

#define CHECK(call)                                               \
    do {                                                          \
        int rc_ = (call);                                         \
        if (rc_ != WEFT_SUCCESS) {                                \
            char d_[WEFT_MAX_ERROR_STRING] = "";                  \
            size_t l_ = 0;                                        \
            weft_error_detail(d_, &l_);                           \
            fprintf(stderr, "%s: code %d: %s\n", #call, rc_, d_); \
            return 1;                                             \
        }                                                         \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s unmatched|unwaited|exit\n", argv[0]);
        return 2;
    }
    CHECK(weft_init(NULL, NULL));
    hostq_t *q = NULL;
    if (hostq_create(&q) != 0) return 1;
    weft_info info;
    CHECK(weft_info_create(&info));
    CHECK(weft_info_set(info, "type", "weft_hostq_t"));
    CHECK(weft_info_set_hex(info, "value", &q, sizeof q));
    weft_stream s;
    CHECK(weft_stream_create(info, &s));
    weft_info_free(&info);
    weft_comm c;
    CHECK(weft_stream_comm_create(WEFT_COMM_WORLD, s, &c));
    int *dev = hostq_malloc_device(1024 * sizeof(int));
    static int host[1024];
    if (strcmp(argv[1], "unmatched") == 0) {
        CHECK(weft_recv_enqueue(dev, 1024, WEFT_INT, 0, 5, c, WEFT_STATUS_IGNORE));
    } else if (strcmp(argv[1], "unwaited") == 0) {
        weft_request r[2];
        CHECK(weft_irecv_enqueue(dev, 1024, WEFT_INT, 0, 6, c, &r[0]));
        CHECK(weft_isend_enqueue(host, 1024, WEFT_INT, 0, 6, c, &r[1]));
        if (hostq_synchronize(q) != 0) return 1;
    } else if (strcmp(argv[1], "exit") == 0) {
        CHECK(weft_send_enqueue(host, 1, WEFT_INT, 0, 7, c));
        CHECK(weft_recv_enqueue(host + 1, 1, WEFT_INT, 0, 7, c, WEFT_STATUS_IGNORE));
        if (hostq_synchronize(q) != 0) return 1;
        exit(host[1] == host[0] ? 0 : 1);
    } else {
        return 2;
    }
    /* The communicator and stream stay: finalize must cope with them and their queue. */
    CHECK(weft_finalize());
    printf("%s: finalized\n", argv[1]);
    return 0;
}
