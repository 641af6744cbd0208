/* Callgrind toggles shared by weft-msgrate and raw-ucx-msgrate, so both count the same region. */
#ifndef WEFT_BENCH_CALLGRIND_H
#define WEFT_BENCH_CALLGRIND_H
#include <stdlib.h>
#include <string.h>

/* Instruction counts (see README.md): with BENCH_CG=loop or BENCH_CG=window in the environment
 * and valgrind --tool=callgrind --collect-atstart=no, callgrind counts only the timed loop
 * (loop), or only each timed window's posts + weft_waitall, without the ack (window).  The
 * toggles are client requests: a few no-op instructions per window when not under valgrind,
 * and none at all unless BENCH_CG is set. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif
enum { CG_NONE, CG_LOOP, CG_WINDOW };
static int cg_mode(void) {
    const char *v = getenv("BENCH_CG");
    if (!v) return CG_NONE;
    return !strcmp(v, "window") ? CG_WINDOW : !strcmp(v, "loop") ? CG_LOOP : CG_NONE;
}
/* BENCH_CG_SETTLE_US=N (window mode, only in the rank that runs under valgrind): sleep N
 * microseconds before each timed window, outside the counted region, so that the peer has
 * sent the whole window by then and the count does not include polls spent waiting for a peer
 * that the machine's load keeps off its core. */
static unsigned cg_settle_us(void) {
    const char *v = getenv("BENCH_CG_SETTLE_US");
    return v && RUNNING_ON_VALGRIND ? (unsigned)strtoul(v, NULL, 10) : 0;
}

#endif /* WEFT_BENCH_CALLGRIND_H */
