/* A program that never frees its PGAS context: weft_finalize must release it (receives
 * withdrawn while the endpoints still exist, buffers freed), so ASan sees neither a
 * use-after-free nor a leak.  Messages are still in flight when finalize starts. */
#include <stdio.h>
#include <weft/weft.h>

#define CHECK(call)                                                    \
    do {                                                               \
        int rc_ = (call);                                              \
        if (rc_ != WEFT_SUCCESS) {                                     \
            char why_[WEFT_MAX_ERROR_STRING];                          \
            size_t n_ = sizeof why_;                                   \
            weft_error_detail(why_, &n_);                              \
            fprintf(stderr, "%s failed (%d): %s\n", #call, rc_, why_); \
            return 1;                                                  \
        }                                                              \
    } while (0)

int main(int argc, char **argv) {
    CHECK(weft_init(&argc, &argv));
    int rank = 0, size = 0;
    CHECK(weft_comm_rank(WEFT_COMM_WORLD, &rank));
    CHECK(weft_comm_size(WEFT_COMM_WORLD, &size));
    weft_pgas pgas = WEFT_PGAS_NULL, other = WEFT_PGAS_NULL;
    CHECK(weft_pgas_create(WEFT_COMM_WORLD, 1 << 16, WEFT_INFO_NULL, &pgas));
    CHECK(weft_pgas_create(WEFT_COMM_WORLD, 1 << 20, WEFT_INFO_NULL, &other));
    static char big[1 << 19];
    int peer = (rank + 1) % size;
    for (int i = 0; i < 100; i++) CHECK(weft_am_short(pgas, peer, WEFT_AM_H_INCR, NULL, 0, WEFT_AM_ASYNC));
    CHECK(weft_am_long(other, peer, WEFT_AM_H_EMPTY, NULL, 0, big, sizeof big, 0, WEFT_AM_ASYNC));
    CHECK(weft_pgas_barrier(pgas));
    CHECK(weft_finalize());
    printf("rank %d: finalized with two PGAS contexts still open\n", rank);
    return 0;
}
