/* MPI_Abort ends the job with the code; and an error on MPI_COMM_WORLD, whose handler is
 * MPI_ERRORS_ARE_FATAL by default, ends it too (ctest expects the failure). */
#include <string.h>

#include "mpi_check.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, x = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        MPI_Send(&x, 1, MPI_INT, 1 << 20, 0, MPI_COMM_WORLD); /* a bad rank: fatal */
        printf("mpi_abort: MPI_ERRORS_ARE_FATAL returned\n");
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) MPI_Abort(MPI_COMM_WORLD, 7);
    MPI_Barrier(MPI_COMM_WORLD); /* the others wait here until the job ends */
    printf("mpi_abort: survived MPI_Abort\n");
    MPI_Finalize();
    return 0;
}
