/* weft-strided: ping-pong of a strided message (a vector datatype) between two ranks.
 *
 * Both ranks send and receive `count` blocks of `block` bytes, each block starting 2 * block
 * bytes after the previous one (half the memory is holes), as one element of a vector type:
 * rank 0 sends, rank 1 receives and sends it back.  Prints the one-way time per message and
 * the bandwidth of the data (not the holes).  Compare how the message travels with
 * WEFT_IOV_MAX (p2p_iov.cpp): 0 packs every message into a staging buffer, a value >= count
 * lets a fabric with tag_sendv (ucx, ofi) gather and scatter the blocks in place.
 *
 *   weftrun -n 2 weft-strided [-b BLOCK] [-t TOTAL] [-i ITERS]
 *   weft-strided -s [...]        one process sends to itself (irecv + isend + waitall):
 *                                no peer to wait for, so the path length is all there is
 *
 * Instruction counts: with BENCH_CG=loop, under valgrind --tool=callgrind --collect-atstart=no,
 * only the timed loop is counted (bench_callgrind.h); divide by the iterations.
 *
 * A benchmark program, not a test: it prints numbers and does not judge them. */
#include "bench_common.h"
#include "bench_util.h"

#include "bench_callgrind.h" /* after bench_common.h, which defines _GNU_SOURCE */

#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    size_t block = 64, total = (size_t)1 << 20;
    long iters = 200;
    int self = 0;
    BENCH_CHECK(weft_init(&argc, &argv));
    int rank = 0, size = 0;
    BENCH_CHECK(weft_comm_rank(WEFT_COMM_WORLD, &rank));
    BENCH_CHECK(weft_comm_size(WEFT_COMM_WORLD, &size));
    int opt;
    while ((opt = getopt(argc, argv, "b:t:i:sh")) != -1) {
        switch (opt) {
            case 's': self = 1; break;
            case 'b':
                if (bench_parse_size(optarg, &block) || block == 0) return 2;
                break;
            case 't':
                if (bench_parse_size(optarg, &total)) return 2;
                break;
            case 'i':
                if (bench_parse_long(optarg, 1, &iters)) return 2;
                break;
            default:
                if (rank == 0)
                    fprintf(stderr,
                            "usage: weftrun -n 2 %s [-b BLOCK bytes, 64] [-t TOTAL data bytes, 1M] [-i ITERS]\n",
                            argv[0]);
                return opt == 'h' ? 0 : 2;
        }
    }
    if (!self && bench_need_two_ranks(rank, size, "weft-strided")) return 1;
    size_t count = total / block;
    weft_datatype vec;
    BENCH_CHECK(weft_type_vector(count, block, (ptrdiff_t)(2 * block), WEFT_BYTE, &vec));
    BENCH_CHECK(weft_type_commit(&vec));
    char *buf = malloc(2 * total);
    if (buf == NULL) return 1;
    memset(buf, rank + 1, 2 * total);
    int peer = self ? rank : 1 - rank, cg = cg_mode() == CG_LOOP;
    (void)cg_settle_us;
    char *in = self ? malloc(2 * total) : buf;
    if (in == NULL) return 1;
    double t0 = 0;
    for (long i = -iters / 10 - 1; i < iters; ++i) {
        if (i == 0) {
            if (cg) CALLGRIND_TOGGLE_COLLECT;
            t0 = now_s();
        }
        if (self) {
            weft_request r[2];
            BENCH_CHECK(weft_irecv(in, 1, vec, peer, 1, WEFT_COMM_WORLD, &r[0]));
            BENCH_CHECK(weft_isend(buf, 1, vec, peer, 1, WEFT_COMM_WORLD, &r[1]));
            BENCH_CHECK(weft_waitall(2, r, WEFT_STATUSES_IGNORE));
        } else if (rank == 0) {
            BENCH_CHECK(weft_send(buf, 1, vec, peer, 1, WEFT_COMM_WORLD));
            BENCH_CHECK(weft_recv(buf, 1, vec, peer, 1, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
        } else {
            BENCH_CHECK(weft_recv(buf, 1, vec, peer, 1, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
            BENCH_CHECK(weft_send(buf, 1, vec, peer, 1, WEFT_COMM_WORLD));
        }
    }
    if (cg) CALLGRIND_TOGGLE_COLLECT;
    double one_way = (now_s() - t0) / ((self ? 1.0 : 2.0) * (double)iters);
    if (rank == 0) {
        char fabric[64];
        bench_fabric_name(fabric, sizeof fabric);
        const char *iov = getenv("WEFT_IOV_MAX");
        printf(
            "weft-strided: fabric %s, WEFT_IOV_MAX=%s%s: %zu blocks of %zu B (%zu B of data), %.1f us one-way, "
            "%.1f MB/s\n",
            fabric, iov ? iov : "(default 1024)", self ? ", to itself" : "", count, block, count * block, one_way * 1e6,
            (double)(count * block) / one_way / 1e6);
    }
    weft_type_free(&vec);
    if (in != buf) free(in);
    free(buf);
    BENCH_CHECK(weft_finalize());
    return 0;
}
