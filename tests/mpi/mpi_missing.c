/* Calls a function Weft's front end does not define (one-sided communication): built against
 * MPICH, it must fail to load on Weft with LD_BIND_NOW=1, naming the function (mpich-abi.sh). */
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Win win;
    int x = 0;
    MPI_Win_create(&x, sizeof x, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
