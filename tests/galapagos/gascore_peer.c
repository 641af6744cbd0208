/* A Weft software kernel against kernels hosted by the GAScore model (weft-gascore), through
 * the PGAS API alone: run by tests/galapagos/with_gascore.sh with a cluster file where kernel 0
 * is this process (rank 0), kernel 1 an "idle" hardware kernel and kernel 2 an "echo" one.
 * Every Shoal message kind goes to hardware and comes back by get (Short with H_ADD and
 * H_INCR, Medium to the echo kernel and back to a handler here, Long from a buffer and from the
 * segment, strided, vectored, Long and strided gets); what Shoal's format cannot say is refused
 * with WEFT_ERR_UNSUPPORTED.  The model's exit report is checked by the script (counters).
 * Prints PASS (exit 0) or FAIL: ... (exit 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/weft.h>

#define SEG (1u << 20)
#define H_ECHOED 5

static int failures;

#define CHECK(call)                                                            \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != WEFT_SUCCESS) {                                             \
            char d_[WEFT_MAX_ERROR_STRING + 1] = "";                           \
            size_t l_ = 0;                                                     \
            weft_error_detail(d_, &l_);                                        \
            printf("FAIL: line %d: %s -> %d: %s\n", __LINE__, #call, rc_, d_); \
            fflush(stdout);                                                    \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define EXPECT(cond, ...)                        \
    do {                                         \
        if (!(cond)) {                           \
            printf("FAIL: line %d: ", __LINE__); \
            printf(__VA_ARGS__);                 \
            printf("\n");                        \
            ++failures;                          \
        }                                        \
    } while (0)

static unsigned char echoed[256];
static size_t echoed_len;
static int echoed_from = -1, echo_calls;

static void on_echo(weft_pgas kernel, const weft_am_info *info, void *user_data) {
    (void)kernel;
    (void)user_data;
    echo_calls++;
    echoed_from = info->source;
    echoed_len = info->length < sizeof echoed ? info->length : sizeof echoed;
    memcpy(echoed, info->payload, echoed_len);
}

static void fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 29 + seed * 13 + 1);
}

/* Reads back `n` bytes of hardware kernel 1 at `remote` into the segment at `local`. */
static void get_back(weft_pgas k, size_t remote, size_t n, size_t local) {
    CHECK(weft_am_get_long(k, 1, WEFT_AM_H_EMPTY, NULL, 0, remote, n, local, 0));
    CHECK(weft_am_wait_replies(k, 1));
}

int main(int argc, char **argv) {
    CHECK(weft_init(&argc, &argv));
    weft_pgas k = WEFT_PGAS_NULL;
    CHECK(weft_pgas_create(WEFT_COMM_WORLD, SEG, WEFT_INFO_NULL, &k));
    int me = -1, n = 0;
    CHECK(weft_pgas_kernel_id(k, &me));
    CHECK(weft_pgas_num_kernels(k, &n));
    EXPECT(me == 0 && n == 3, "kernel %d of %d; the cluster file makes this kernel 0 of 3", me, n);
    size_t max_long = 0;
    CHECK(weft_am_max_long(k, &max_long));
    EXPECT(max_long == 8192, "max Long %zu with hardware kernels, expected 8192", max_long);
    CHECK(weft_am_register(k, H_ECHOED, on_echo, NULL));
    unsigned char *seg = NULL;
    size_t seg_size = 0;
    CHECK(weft_pgas_segment(k, (void **)&seg, &seg_size));

    /* Short: counters on the hardware kernel (checked in the model's report) and replies. */
    uint64_t five = 5;
    CHECK(weft_am_short(k, 1, WEFT_AM_H_ADD, &five, 1, 0));
    CHECK(weft_am_short(k, 1, WEFT_AM_H_INCR, NULL, 0, 0));
    CHECK(weft_am_short(k, 1, WEFT_AM_H_ADD, &five, 1, WEFT_AM_ASYNC));
    CHECK(weft_am_wait_replies(k, 2));

    /* Long from a buffer, read back by a Long get. */
    unsigned char out[6000], *back = seg + 0x40000;
    fill(out, sizeof out, 1);
    CHECK(weft_am_long(k, 1, WEFT_AM_H_EMPTY, NULL, 0, out, 1000, 0x100, 0));
    CHECK(weft_am_wait_replies(k, 1));
    get_back(k, 0x100, 1000, 0x40000);
    EXPECT(memcmp(back, out, 1000) == 0, "Long FIFO then Long get: data differs");

    /* Long from the segment, odd size, ASYNC then a synchronous one behind it. */
    fill(seg, 6000, 2);
    CHECK(weft_am_long_seg(k, 1, WEFT_AM_H_EMPTY, NULL, 0, 0, 13, 0x2000, WEFT_AM_ASYNC));
    CHECK(weft_am_long_seg(k, 1, WEFT_AM_H_INCR, NULL, 0, 13, 5987, 0x2000 + 13, 0));
    CHECK(weft_am_wait_replies(k, 1));
    get_back(k, 0x2000, 6000, 0x40000);
    EXPECT(memcmp(back, seg, 6000) == 0, "Long from the segment then get: data differs");

    /* Strided: 4 blocks of 24 bytes, stride 40 here and 64 there; strided get back. */
    weft_am_stride src = {0x100, 40, 24, 4}, dst = {0x8000, 64, 24, 4};
    CHECK(weft_am_long_strided(k, 1, WEFT_AM_H_EMPTY, NULL, 0, &src, &dst, 0));
    CHECK(weft_am_wait_replies(k, 1));
    weft_am_stride there = {0x8000, 64, 24, 4}, here = {0x50000, 24, 24, 4};
    CHECK(weft_am_get_strided(k, 1, WEFT_AM_H_EMPTY, NULL, 0, &there, &here, 0));
    CHECK(weft_am_wait_replies(k, 1));
    for (int b = 0; b < 4; b++)
        EXPECT(memcmp(seg + 0x50000 + 24 * b, seg + 0x100 + 40 * b, 24) == 0,
               "strided block %d differs after the strided get", b);

    /* Vectored: three pieces there, gathered from two here. */
    weft_am_piece vs[2] = {{0x200, 30}, {0x400, 20}};
    weft_am_piece vd[3] = {{0x9000, 10}, {0x9100, 25}, {0x9200, 15}};
    CHECK(weft_am_long_vectored(k, 1, WEFT_AM_H_EMPTY, NULL, 0, vs, 2, vd, 3, 0));
    CHECK(weft_am_wait_replies(k, 1));
    unsigned char expect[50];
    memcpy(expect, seg + 0x200, 30);
    memcpy(expect + 30, seg + 0x400, 20);
    get_back(k, 0x9000, 10, 0x60000);
    get_back(k, 0x9100, 25, 0x60000 + 10);
    get_back(k, 0x9200, 15, 0x60000 + 35);
    EXPECT(memcmp(seg + 0x60000, expect, 50) == 0, "vectored pieces differ after gets");

    /* Medium to the echo kernel: it comes back to handler H_ECHOED, from kernel 2. */
    unsigned char hello[77];
    fill(hello, sizeof hello, 3);
    CHECK(weft_am_medium(k, 2, H_ECHOED, NULL, 0, hello, sizeof hello, 0));
    CHECK(weft_am_wait_replies(k, 1));
    for (int i = 0; i < 1000000 && echo_calls == 0; i++) CHECK(weft_pgas_progress(k));
    EXPECT(
        echo_calls == 1 && echoed_from == 2 && echoed_len == sizeof hello && memcmp(echoed, hello, sizeof hello) == 0,
        "echo: %d calls, from %d, %zu bytes", echo_calls, echoed_from, echoed_len);

    /* What Shoal's format cannot say is refused, and nothing is sent. */
    EXPECT(weft_am_short(k, 1, 16, NULL, 0, 0) == WEFT_ERR_UNSUPPORTED, "handler 16 to hardware");
    EXPECT(weft_am_long_seg(k, 1, WEFT_AM_H_EMPTY, NULL, 0, 0, 9000, 0, 0) != WEFT_SUCCESS,
           "a 9000-byte Long to hardware (above max Long)");
    weft_am_piece big[1] = {{0, 5000}};
    EXPECT(weft_am_long_vectored(k, 1, WEFT_AM_H_EMPTY, NULL, 0, big, 1, big, 1, 0) == WEFT_ERR_UNSUPPORTED,
           "a vectored piece of 5000 bytes to hardware");
    uint64_t bad = 0;
    CHECK(weft_pgas_bad_packets(k, &bad));
    EXPECT(bad == 0, "%llu packets from hardware were dropped here", (unsigned long long)bad);

    printf("%s\n", failures ? "FAIL" : "PASS");
    fflush(stdout);
    CHECK(weft_pgas_free(&k));
    CHECK(weft_finalize());
    return failures ? 1 : 0;
}
