/* Weft and another MPI in one process (compiled once with mpicc.mpich, once with mpicc.openmpi).
 *
 *   weft-coexist-<mpi> ORDER [refused]
 *
 * ORDER is four letters: the order of MPI_Init (M), weft_init (W), MPI_Finalize (m) and
 * weft_finalize (w), e.g. MWwm (Weft nested inside MPI), WMmw, MWmw, WMwm.  While both are
 * initialised, each library's allreduce and bcast on its world must give the right answer;
 * after one has finalised, the other must still work (its collectives once more) and finalise
 * cleanly.  Under a launcher (not weftrun, where the MPI runs as singletons) both worlds must
 * have the same size.  With "refused", weft_init must fail with WEFT_ERR_BOOTSTRAP (the
 * launcher cannot serve both libraries in that order) and MPI must still work.  Rank 0 prints
 * "bootstrap=<Weft's bootstrap>" for run-under.sh.  Exit 0 only when every check passed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft/weft.h>

static int failures;

#define CHECK(cond, ...)                                    \
    do {                                                    \
        if (!(cond)) {                                      \
            fprintf(stderr, "coexist: FAIL: " __VA_ARGS__); \
            fputc('\n', stderr);                            \
            ++failures;                                     \
        }                                                   \
    } while (0)

static void weft_detail(int rc, const char *what) {
    if (rc == WEFT_SUCCESS) return;
    char msg[WEFT_MAX_ERROR_STRING] = "";
    size_t len = 0;
    weft_error_detail(msg, &len);
    CHECK(0, "%s returned %d: %s", what, rc, msg);
}

/* Allreduce and bcast on MPI_COMM_WORLD. */
static void mpi_collectives(const char *when) {
    int rank = -1, size = -1, sum = -1, word = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && sum == size * (size - 1) / 2, "%s: MPI_Allreduce gave %d (rc %d), want %d", when, sum,
          rc, size * (size - 1) / 2);
    if (rank == size - 1) word = 4242 + size;
    rc = MPI_Bcast(&word, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && word == 4242 + size, "%s: MPI_Bcast gave %d (rc %d)", when, word, rc);
}

/* Allreduce, bcast and a ring of messages on WEFT_COMM_WORLD. */
static void weft_collectives(const char *when) {
    int rank = -1, size = -1, sum = -1, word = -1;
    weft_comm_rank(WEFT_COMM_WORLD, &rank);
    weft_comm_size(WEFT_COMM_WORLD, &size);
    int rc = weft_allreduce(&rank, &sum, 1, WEFT_INT, WEFT_SUM, WEFT_COMM_WORLD);
    weft_detail(rc, "weft_allreduce");
    CHECK(sum == size * (size - 1) / 2, "%s: weft_allreduce gave %d, want %d", when, sum, size * (size - 1) / 2);
    if (rank == 0) word = 777 + size;
    weft_detail(weft_bcast(&word, 1, WEFT_INT, 0, WEFT_COMM_WORLD), "weft_bcast");
    CHECK(word == 777 + size, "%s: weft_bcast gave %d", when, word);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, in = -1;
    weft_request r = WEFT_REQUEST_NULL;
    weft_detail(weft_isend(&rank, 1, WEFT_INT, next, 5, WEFT_COMM_WORLD, &r), "weft_isend");
    weft_detail(weft_recv(&in, 1, WEFT_INT, prev, 5, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), "weft_recv");
    weft_detail(weft_wait(&r, WEFT_STATUS_IGNORE), "weft_wait");
    CHECK(in == prev, "%s: ring message from rank %d was %d", when, prev, in);
}

int main(int argc, char **argv) {
    const char *order = argc > 1 ? argv[1] : "MWwm";
    int ok = strlen(order) == 4;
    for (const char *c = "MWmw"; *c && ok; ++c) ok = strchr(order, *c) != NULL;
    if (!ok || strchr(order, 'm') < strchr(order, 'M') || strchr(order, 'w') < strchr(order, 'W')) {
        fprintf(stderr, "usage: %s ORDER (a permutation of MWmw with each init before its finalize)\n", argv[0]);
        return 2;
    }
    const int refused = argc > 2 && strcmp(argv[2], "refused") == 0;
    int mpi_up = 0, weft_up = 0, rank = -1, weft_size = -1;
    char boot[64] = "?";
    for (const char *step = order; *step; ++step) {
        char when[64];
        snprintf(when, sizeof when, "%.*s", (int)(step - order), order);
        switch (*step) {
            case 'M': {
                int rc = MPI_Init(&argc, &argv);
                CHECK(rc == MPI_SUCCESS, "MPI_Init returned %d", rc);
                mpi_up = 1;
                break;
            }
            case 'W': {
                int rc = weft_init(&argc, &argv);
                if (refused) {
                    char msg[WEFT_MAX_ERROR_STRING] = "";
                    size_t len = 0;
                    weft_error_detail(msg, &len);
                    CHECK(rc == WEFT_ERR_BOOTSTRAP, "weft_init returned %d, want a refusal (%d)", rc,
                          WEFT_ERR_BOOTSTRAP);
                    /* One line per job: MPI's rank 0, or the launcher's before MPI_Init. */
                    int mrank = -1;
                    if (mpi_up) MPI_Comm_rank(MPI_COMM_WORLD, &mrank);
                    const char *pmi_rank = getenv("PMI_RANK");
                    if (!mpi_up && pmi_rank != NULL) mrank = atoi(pmi_rank);
                    if (rc == WEFT_ERR_BOOTSTRAP && mrank == 0)
                        printf("weft-coexist %s: weft_init refused, as expected, with bootstrap=pmi1: %s\n", order,
                               msg);
                    break;
                }
                weft_detail(rc, "weft_init");
                weft_up = rc == WEFT_SUCCESS;
                weft_comm_rank(WEFT_COMM_WORLD, &rank);
                weft_comm_size(WEFT_COMM_WORLD, &weft_size);
                weft_info info;
                int flag = 0;
                if (weft_get_runtime_info(&info) == WEFT_SUCCESS) {
                    weft_info_get(info, "bootstrap", sizeof boot - 1, boot, &flag);
                    weft_info_free(&info);
                }
                if (rank == 0) printf("weft-coexist %s: bootstrap=%s\n", order, boot);
                break;
            }
            case 'm': {
                mpi_collectives(when);
                if (weft_up) weft_collectives(when);
                int size = -1, mrank = -1;
                MPI_Comm_size(MPI_COMM_WORLD, &size);
                MPI_Comm_rank(MPI_COMM_WORLD, &mrank);
                if (mrank == 0) printf("weft-coexist %s: mpi size=%d\n", order, size);
                CHECK(weft_size < 0 || strcmp(boot, "weftrun") == 0 || size == weft_size,
                      "MPI's world has %d processes, Weft's %d", size, weft_size);
                CHECK(MPI_Finalize() == MPI_SUCCESS, "MPI_Finalize failed");
                mpi_up = 0;
                break;
            }
            case 'w':
                if (!weft_up) break;
                weft_collectives(when);
                if (mpi_up) mpi_collectives(when);
                weft_detail(weft_finalize(), "weft_finalize");
                weft_up = 0;
                break;
        }
        fflush(stdout);
    }
    if (failures) fprintf(stderr, "coexist %s: rank %d: %d check(s) failed\n", order, rank, failures);
    return failures ? 1 : 0;
}
