/* Helpers shared by the Weft benchmarks (C11, public API only): error checks and the fabric's
 * name, plus everything in bench_util.h (parsing, pinning, the two-rank check). */
#ifndef WEFT_BENCH_COMMON_H
#define WEFT_BENCH_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdio.h>
#include <stdlib.h>

#include <weft/weft.h>

#include "bench_util.h"

/* Print the error code text and the detailed message of a failed call, then abort the job. */
static void bench_fail(const char *what, int rc, const char *file, int line)
{
    char text[WEFT_MAX_ERROR_STRING + 1] = "";
    char detail[WEFT_MAX_ERROR_STRING + 1] = "";
    size_t len = 0;
    if (weft_error_string(rc, text, &len) != WEFT_SUCCESS)
        snprintf(text, sizeof text, "unknown error");
    len = 0;
    if (weft_error_detail(detail, &len) != WEFT_SUCCESS)
        detail[0] = '\0';
    fprintf(stderr, "%s:%d: %s failed: %s (%d)%s%s\n", file, line, what, text, rc,
            detail[0] ? ": " : "", detail);
    fflush(stderr);
    int inited = 0, finalized = 0;
    weft_initialized(&inited);
    weft_finalized(&finalized);
    if (inited && !finalized)
        weft_abort(WEFT_COMM_WORLD, 1);
    exit(1);
}

#define BENCH_CHECK(call)                                                                         \
    do {                                                                                          \
        int bench_rc_ = (call);                                                                   \
        if (bench_rc_ != WEFT_SUCCESS)                                                            \
            bench_fail(#call, bench_rc_, __FILE__, __LINE__);                                     \
    } while (0)

/* The fabric plugin selected at init (runtime info key "fabric"), or "?" if unavailable. */
static inline void bench_fabric_name(char *name, size_t cap)
{
    snprintf(name, cap, "?");
    weft_info info = WEFT_INFO_NULL;
    if (weft_get_runtime_info(&info) != WEFT_SUCCESS)
        return;
    char buf[256] = "";
    int flag = 0;
    if (weft_info_get(info, "fabric", sizeof buf - 1, buf, &flag) == WEFT_SUCCESS && flag &&
        buf[0] != '\0')
        snprintf(name, cap, "%s", buf);
    weft_info_free(&info);
}

#endif /* WEFT_BENCH_COMMON_H */
