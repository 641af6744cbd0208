/* jacobi: the 2D Jacobi stencil on PGAS active messages (Shoal's Jacobi application).
 *
 * An N x N grid with fixed boundary values (top edge 1.0, the other edges 0.0) and an irregular
 * starting guess inside is relaxed for ITERS steps with the von Neumann (5-point) stencil: each interior cell becomes the mean of its
 * four cardinal neighbours from the previous step.  The rows are split into contiguous blocks,
 * one per PGAS kernel.  Each kernel keeps two copies of its block (old and new step) in its
 * segment, each with a halo row above and below:
 *
 *     buffer b (b = 0, 1), local row i = 0 .. rows+1:
 *         offset = (b * (max_rows + 2) + i) * N * sizeof(double)
 *         row 0: halo (the upper neighbour's last row), rows 1..rows: owned, rows+1: halo
 *
 * Every step: compute the new buffer from the old one, then send the first and last owned
 * rows of the new buffer into the neighbours' halo rows with Long AMs straight from the
 * segment (weft_am_long_seg), wait for their automatic replies (the data is in place before a
 * reply is sent) and pass a PGAS barrier (so every kernel's halos are complete before anyone
 * reads them, and no one overwrites a halo that a slower kernel is still reading).  At the end
 * kernel 0 pulls every block with weft_am_get_long and compares the grid with a serial run.
 *
 *   weftrun -n P weft-jacobi N ITERS [KERNELS]
 *
 * KERNELS = P (default): one kernel per process, on WEFT_COMM_WORLD.
 * KERNELS = P x K, K >= 2: a multiplex communicator with K streams per process, one thread per
 * stream (needs K reserved endpoints per process: WEFT_RESERVED_VCIS >= K, default 8).
 * On the galapagos fabric a cluster file (WEFT_GALAPAGOS_CLUSTER) may add hardware kernels,
 * which run the same step (the GAScore model's "jacobi" function): the grid is then split over
 * all of them; kernel 0 must be a software kernel (it gathers the result).
 * Prints PASS (exit 0) or FAIL (exit 1). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/weft.h>

#define TOP_EDGE_VALUE 1.0
#define TOLERANCE 1e-12

/* Prints the failed call with the error text and the calling thread's detailed message, then
 * ends the whole job (a kernel cannot just return: its peers would wait for it forever). */
static void fail(const char *what, int rc, int line) {
    char text[WEFT_MAX_ERROR_STRING + 1] = "";
    char detail[WEFT_MAX_ERROR_STRING + 1] = "";
    size_t len = 0;
    if (weft_error_string(rc, text, &len) != WEFT_SUCCESS) snprintf(text, sizeof text, "unknown error");
    len = 0;
    if (weft_error_detail(detail, &len) != WEFT_SUCCESS) detail[0] = '\0';
    fprintf(stderr, "weft-jacobi: line %d: %s failed: %s (%d)%s%s\n", line, what, text, rc, detail[0] ? ": " : "",
            detail);
    fflush(stderr);
    weft_abort(WEFT_COMM_WORLD, 1);
    exit(1);
}

#define CHECK(call)                                                      \
    do {                                                                 \
        int check_rc_ = (call);                                          \
        if (check_rc_ != WEFT_SUCCESS) fail(#call, check_rc_, __LINE__); \
    } while (0)

/* The problem, identical on every kernel. */
typedef struct problem {
    size_t n;   /* grid side */
    long iters; /* Jacobi steps */
    int nkernels;
    size_t max_rows; /* largest block: every segment has room for it */
    size_t seg_size;
    size_t max_long; /* largest Long payload (and get length) */
} problem;

/* Block decomposition of the n rows: kernel k owns rows first_row(k) .. first_row(k)+rows-1;
 * the first n % nkernels kernels get one row more. */
static size_t block_rows(const problem *p, int k) {
    size_t base = p->n / (size_t)p->nkernels, extra = p->n % (size_t)p->nkernels;
    return base + ((size_t)k < extra ? 1 : 0);
}

static size_t first_row(const problem *p, int k) {
    size_t base = p->n / (size_t)p->nkernels, extra = p->n % (size_t)p->nkernels;
    size_t uk = (size_t)k;
    return uk * base + (uk < extra ? uk : extra);
}

/* Byte offset of local row i of buffer b in any kernel's segment (the layout is the same on
 * every kernel, so a sender computes the receiver's offsets itself). */
static size_t row_offset(const problem *p, int b, size_t i) {
    return ((size_t)b * (p->max_rows + 2) + i) * p->n * sizeof(double);
}

/* Long AMs carry at most max_long bytes: a row range is sent in pieces.  Returns the number of
 * messages, each of which gets one automatic reply. */
static size_t send_rows(weft_pgas kernel, const problem *p, int dst, size_t src_offset, size_t dst_offset,
                        size_t bytes) {
    size_t sent = 0;
    for (size_t done = 0; done < bytes; done += p->max_long, sent++) {
        size_t len = bytes - done < p->max_long ? bytes - done : p->max_long;
        CHECK(weft_am_long_seg(kernel, dst, WEFT_AM_H_EMPTY, NULL, 0, src_offset + done, len, dst_offset + done, 0));
    }
    return sent;
}

/* Sends this kernel's edge rows of buffer b into its neighbours' halo rows of buffer b, waits
 * until they have landed, then waits for every other kernel to have done the same. */
static void exchange_halos(weft_pgas kernel, const problem *p, int me, int b) {
    size_t rows = block_rows(p, me), row_bytes = p->n * sizeof(double), messages = 0;
    if (me > 0) /* my first row -> upper neighbour's bottom halo */
        messages +=
            send_rows(kernel, p, me - 1, row_offset(p, b, 1), row_offset(p, b, block_rows(p, me - 1) + 1), row_bytes);
    if (me < p->nkernels - 1) /* my last row -> lower neighbour's top halo */
        messages += send_rows(kernel, p, me + 1, row_offset(p, b, rows), row_offset(p, b, 0), row_bytes);
    if (messages > 0) CHECK(weft_am_wait_replies(kernel, messages));
    CHECK(weft_pgas_barrier(kernel));
}

/* One Jacobi step on a full grid (the serial reference) or on a block with halos: rows
 * row_lo..row_hi of `out` from `in`, interior columns only.  The same expression in the same
 * order on both sides, so the results agree to the last bit. */
static void relax_rows(const double *in, double *out, size_t n, size_t row_lo, size_t row_hi) {
    for (size_t i = row_lo; i <= row_hi; i++)
        for (size_t j = 1; j + 1 < n; j++)
            out[i * n + j] = 0.25 * (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] + in[i * n + j + 1]);
}

/* Boundary: top edge TOP_EDGE_VALUE, the other edges 0.  Interior: an irregular starting
 * guess in [0, 1), so that every cell matters from the first step (with a zero interior, cells
 * far from the top edge stay below 1e-12 for many steps and a lost halo would go unnoticed). */
static double initial_value(size_t n, size_t row, size_t col) {
    if (row == 0) return TOP_EDGE_VALUE;
    if (row == n - 1 || col == 0 || col == n - 1) return 0.0;
    return (double)((row * 131 + col * 71) % 97) / 97.0;
}

/* The whole computation on kernel 0 alone.  Returns the final grid (malloc'd) or NULL. */
static double *serial_jacobi(const problem *p) {
    size_t n = p->n;
    double *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) a[i * n + j] = b[i * n + j] = initial_value(n, i, j);
    for (long t = 0; t < p->iters; t++) {
        relax_rows(a, b, n, 1, n - 2);
        double *swap = a;
        a = b;
        b = swap;
    }
    free(b);
    return a;
}

/* Kernel 0: pulls every block of buffer b into a full grid (its own spare buffer is the landing
 * area, as large as any block) and compares with the serial run.  Returns 0 on PASS. */
static int gather_and_check(weft_pgas kernel, const problem *p, int b, double seconds) {
    size_t n = p->n, row_bytes = n * sizeof(double);
    void *base = NULL;
    size_t seg_size = 0;
    CHECK(weft_pgas_segment(kernel, &base, &seg_size));
    double *grid = malloc(n * n * sizeof *grid);
    double *reference = serial_jacobi(p);
    if (!grid || !reference) {
        fprintf(stderr, "weft-jacobi: cannot allocate the %zu x %zu result grids\n", n, n);
        free(grid);
        free(reference);
        return 1;
    }
    memcpy(grid, (char *)base + row_offset(p, b, 1), block_rows(p, 0) * row_bytes);
    int spare = 1 - b;
    for (int k = 1; k < p->nkernels; k++) {
        size_t bytes = block_rows(p, k) * row_bytes, gets = 0;
        for (size_t done = 0; done < bytes; done += p->max_long, gets++) {
            size_t len = bytes - done < p->max_long ? bytes - done : p->max_long;
            CHECK(weft_am_get_long(kernel, k, WEFT_AM_H_EMPTY, NULL, 0, row_offset(p, b, 1) + done, len,
                                   row_offset(p, spare, 1) + done, 0));
        }
        /* A get's data arriving is its reply. */
        CHECK(weft_am_wait_replies(kernel, gets));
        memcpy(grid + first_row(p, k) * n, (char *)base + row_offset(p, spare, 1), bytes);
    }

    double max_diff = 0.0;
    size_t worst = 0;
    for (size_t c = 0; c < n * n; c++) {
        double d = grid[c] > reference[c] ? grid[c] - reference[c] : reference[c] - grid[c];
        if (!(d <= max_diff)) { /* also catches NaN */
            max_diff = d;
            worst = c;
        }
    }
    int ok = max_diff < TOLERANCE;
    printf(
        "weft-jacobi: %zu x %zu grid, %ld iterations, %d kernels: %.6f s (%.3f us/iteration); "
        "centre value %.12g; max |parallel - serial| = %.3g%s\n",
        n, n, p->iters, p->nkernels, seconds, p->iters > 0 ? seconds * 1e6 / (double)p->iters : 0.0,
        grid[(n / 2) * n + n / 2], max_diff, ok ? "" : " (above 1e-12)");
    if (!ok)
        fprintf(stderr, "weft-jacobi: worst cell (%zu, %zu): parallel %.17g, serial %.17g\n", worst / n, worst % n,
                grid[worst], reference[worst]);
    printf("%s\n", ok ? "PASS" : "FAIL");
    fflush(stdout);
    free(grid);
    free(reference);
    return ok ? 0 : 1;
}

/* What one kernel does, start to end.  Returns 0, or 1 on kernel 0 when the check failed. */
static int run_kernel(weft_pgas kernel, const problem *p) {
    int me = -1;
    CHECK(weft_pgas_kernel_id(kernel, &me));
    void *base = NULL;
    size_t seg_size = 0;
    CHECK(weft_pgas_segment(kernel, &base, &seg_size));
    if (seg_size < p->seg_size) {
        fprintf(stderr, "weft-jacobi: kernel %d: segment of %zu bytes, asked for %zu\n", me, seg_size, p->seg_size);
        weft_abort(WEFT_COMM_WORLD, 1);
        return 1;
    }
    size_t n = p->n, rows = block_rows(p, me), first = first_row(p, me);

    /* Owned rows of both buffers get the initial values: the boundary cells are never written
     * again, so both buffers keep them.  The halos come from the first exchange. */
    for (int b = 0; b < 2; b++) {
        double *block = (double *)((char *)base + row_offset(p, b, 0));
        for (size_t i = 1; i <= rows; i++)
            for (size_t j = 0; j < n; j++) block[i * n + j] = initial_value(n, first + i - 1, j);
    }
    int cur = 0;
    exchange_halos(kernel, p, me, cur);

    /* Interior rows of this block, in local numbering (global row 0 and n-1 stay fixed). */
    size_t lo = first == 0 ? 2 : 1;
    size_t hi = first + rows == n ? rows - 1 : rows;
    double t0 = weft_wtime();
    for (long t = 0; t < p->iters; t++) {
        const double *in = (const double *)((char *)base + row_offset(p, cur, 0));
        double *out = (double *)((char *)base + row_offset(p, 1 - cur, 0));
        if (lo <= hi) relax_rows(in, out, n, lo, hi);
        exchange_halos(kernel, p, me, 1 - cur);
        cur = 1 - cur;
    }
    double seconds = weft_wtime() - t0;

    int result = 0;
    if (me == 0) result = gather_and_check(kernel, p, cur, seconds);
    /* The others serve kernel 0's gets while they wait here. */
    CHECK(weft_pgas_barrier(kernel));
    return result;
}

typedef struct kernel_thread {
    pthread_t thread;
    weft_pgas kernel;
    const problem *p;
    int result;
} kernel_thread;

static void *kernel_thread_main(void *arg) {
    kernel_thread *kt = arg;
    kt->result = run_kernel(kt->kernel, kt->p);
    return NULL;
}

static int parse_size(const char *s, long min, long *out) {
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < min) return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    long n = 0, iters = 0, kernels = 0, streams = 0;
    if (argc < 3 || argc > 4 || parse_size(argv[1], 3, &n) || parse_size(argv[2], 0, &iters) ||
        (argc == 4 && parse_size(argv[3], 1, &kernels))) {
        fprintf(stderr,
                "usage: weftrun -n P %s N ITERS [KERNELS]\n"
                "  N        grid side (>= 3 and >= the number of kernels)\n"
                "  ITERS    Jacobi iterations (>= 0)\n"
                "  KERNELS  P (default): one kernel per process on WEFT_COMM_WORLD;\n"
                "           P x K: a multiplex communicator with K streams (and threads) per\n"
                "           process (needs WEFT_RESERVED_VCIS >= K)\n",
                argv[0]);
        return 2;
    }

    int provided = WEFT_THREAD_SINGLE;
    /* Threads only touch their own kernel, but several threads call into Weft at once. */
    int required = kernels > 0 ? WEFT_THREAD_MULTIPLE : WEFT_THREAD_SINGLE;
    CHECK(weft_init_thread(&argc, &argv, required, &provided));
    if (provided < required) {
        fprintf(stderr, "weft-jacobi: needs thread level %d, got %d\n", required, provided);
        weft_finalize();
        return 1;
    }
    int rank = 0, nprocs = 0;
    CHECK(weft_comm_rank(WEFT_COMM_WORLD, &rank));
    CHECK(weft_comm_size(WEFT_COMM_WORLD, &nprocs));

    if (kernels > 0 && kernels % nprocs != 0) {
        if (rank == 0)
            fprintf(stderr, "weft-jacobi: %ld kernels cannot be spread evenly over %d processes\n", kernels, nprocs);
        weft_finalize();
        return 2;
    }
    if (kernels > nprocs) streams = kernels / nprocs;
    int nlocal = streams > 0 ? (int)streams : 1;
    weft_stream *stream_list = NULL;
    weft_comm comm = WEFT_COMM_WORLD;
    if (streams > 0) {
        stream_list = calloc((size_t)nlocal, sizeof *stream_list);
        if (!stream_list) {
            fprintf(stderr, "weft-jacobi: out of memory\n");
            weft_abort(WEFT_COMM_WORLD, 1);
            return 1;
        }
        for (int s = 0; s < nlocal; s++) CHECK(weft_stream_create(WEFT_INFO_NULL, &stream_list[s]));
        CHECK(weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, (size_t)nlocal, stream_list, &comm));
    }

    problem p = {.n = (size_t)n, .iters = iters, .nkernels = nprocs * nlocal};
    if (p.n < (size_t)p.nkernels) {
        if (rank == 0) fprintf(stderr, "weft-jacobi: N = %zu is smaller than the %d kernels\n", p.n, p.nkernels);
        weft_finalize();
        return 2;
    }
    p.max_rows = (p.n + (size_t)p.nkernels - 1) / (size_t)p.nkernels;
    p.seg_size = 2 * (p.max_rows + 2) * p.n * sizeof(double);

    weft_pgas pgas = WEFT_PGAS_NULL;
    CHECK(weft_pgas_create(comm, p.seg_size, WEFT_INFO_NULL, &pgas));
    int nkernels = 0;
    CHECK(weft_pgas_num_kernels(pgas, &nkernels));
    if (nkernels < p.nkernels) {
        fprintf(stderr, "weft-jacobi: the context has %d kernels, expected at least %d\n", nkernels, p.nkernels);
        weft_abort(WEFT_COMM_WORLD, 1);
        return 1;
    }
    /* More kernels than this job's streams: a Galapagos cluster file adds hardware kernels
     * (an FPGA, or the GAScore model running the same kernel).  The blocks get smaller, so the
     * segment sized for fewer kernels is still large enough. */
    p.nkernels = nkernels;
    p.max_rows = (p.n + (size_t)p.nkernels - 1) / (size_t)p.nkernels;
    CHECK(weft_am_max_long(pgas, &p.max_long));
    if (p.max_long == 0) {
        fprintf(stderr, "weft-jacobi: weft_am_max_long reports 0 bytes\n");
        weft_abort(WEFT_COMM_WORLD, 1);
        return 1;
    }
    if (rank == 0) {
        char fabric[64] = "?";
        weft_info info = WEFT_INFO_NULL;
        int flag = 0;
        if (weft_get_runtime_info(&info) == WEFT_SUCCESS) {
            weft_info_get(info, "fabric", sizeof fabric - 1, fabric, &flag);
            weft_info_free(&info);
        }
        printf(
            "weft-jacobi: %d processes x %d kernel(s)%s, fabric %s, rows per kernel %zu..%zu, "
            "max Long %zu B\n",
            nprocs, nlocal, streams > 0 ? " (multiplex streams, one thread each)" : "", fabric,
            block_rows(&p, p.nkernels - 1), p.max_rows, p.max_long);
        fflush(stdout);
    }

    int failed = 0;
    if (streams == 0) {
        failed = run_kernel(pgas, &p);
    } else {
        kernel_thread *threads = calloc((size_t)nlocal, sizeof *threads);
        if (!threads) {
            fprintf(stderr, "weft-jacobi: out of memory\n");
            weft_abort(WEFT_COMM_WORLD, 1);
            return 1;
        }
        for (int s = 0; s < nlocal; s++) {
            threads[s].p = &p;
            CHECK(weft_pgas_get_kernel(pgas, s, &threads[s].kernel));
            int prc = pthread_create(&threads[s].thread, NULL, kernel_thread_main, &threads[s]);
            if (prc != 0) {
                fprintf(stderr, "weft-jacobi: pthread_create: %s\n", strerror(prc));
                weft_abort(WEFT_COMM_WORLD, 1);
                return 1;
            }
        }
        for (int s = 0; s < nlocal; s++) {
            pthread_join(threads[s].thread, NULL);
            failed |= threads[s].result;
        }
        free(threads);
    }

    CHECK(weft_pgas_free(&pgas));
    if (streams > 0) {
        CHECK(weft_comm_free(&comm));
        for (int s = 0; s < nlocal; s++) CHECK(weft_stream_free(&stream_list[s]));
        free(stream_list);
    }
    /* Every process exits with kernel 0's verdict. */
    CHECK(weft_bcast(&failed, 1, WEFT_INT, 0, WEFT_COMM_WORLD));
    CHECK(weft_finalize());
    return failed ? 1 : 0;
}
