/* What the liveness attack tests share (liveness_hostile.c, liveness_flood.c): failure macros
 * that print "rank R: FAIL: ..." and return 1, and a 2-process start that reads this rank's
 * liveness listener address. */
#ifndef WEFT_TEST_LIVENESS_ATTACK_H
#define WEFT_TEST_LIVENESS_ATTACK_H
#include <stdio.h>

#include "weft/weft.h"

static int me = -1;

#define EXPECT(cond, what)                                               \
    do {                                                                 \
        if (!(cond)) {                                                   \
            printf("rank %d: FAIL: %s (line %d)\n", me, what, __LINE__); \
            return 1;                                                    \
        }                                                                \
    } while (0)
#define CHECK(call) EXPECT((call) == WEFT_SUCCESS, #call)

/* weft_init for 2 processes; `address` gets this rank's liveness listener ("IPv4:port").
 * Returns 0, or 1 after printing why. */
static int attack_start(int *argc, char ***argv, char *address, int address_len) {
    setvbuf(stdout, NULL, _IONBF, 0);
    CHECK(weft_init(argc, argv));
    int size = 0;
    weft_comm_rank(WEFT_COMM_WORLD, &me);
    weft_comm_size(WEFT_COMM_WORLD, &size);
    EXPECT(size == 2, "run with 2 processes");
    weft_info info;
    int flag = 0;
    CHECK(weft_get_runtime_info(&info));
    weft_info_get(info, "liveness_address", address_len, address, &flag);
    weft_info_free(&info);
    EXPECT(flag, "the monitor runs and reports its address");
    return 0;
}

#endif
