/* Shared by the MPI programs of tests/mpi: CHECK fails the program (exit 1 on every rank, through
 * MPI_Abort) with the file, line and expression; CHECK_RC also names the MPI error. */
#ifndef WEFT_TESTS_MPI_CHECK_H
#define WEFT_TESTS_MPI_CHECK_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            fflush(stderr);                                                          \
            MPI_Abort(MPI_COMM_WORLD, 1);                                            \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

#define CHECK_RC(call)                                                                                       \
    do {                                                                                                     \
        int check_rc_ = (call);                                                                              \
        if (check_rc_ != MPI_SUCCESS) {                                                                      \
            char check_s_[MPI_MAX_ERROR_STRING];                                                             \
            int check_n_ = 0;                                                                                \
            MPI_Error_string(check_rc_, check_s_, &check_n_);                                                \
            fprintf(stderr, "%s:%d: %s returned %d (%s)\n", __FILE__, __LINE__, #call, check_rc_, check_s_); \
            fflush(stderr);                                                                                  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                    \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

/* Rank 0 prints the program's size and the library (Weft's says "bootstrap=<name>", which
 * tests/launch/run-under.sh checks under third-party launchers). */
static inline void print_banner(const char *name) {
    int rank, size, len;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_library_version(version, &len);
    if (rank == 0) printf("%s: %d processes, %s\n", name, size, version);
}
#endif
