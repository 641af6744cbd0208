// mpi.h from C++ through weftcxx: the declarations are extern "C", the handles ints.
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = -1, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> all(static_cast<size_t>(size), -1);
    MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    bool ok = true;
    for (int i = 0; i < size; ++i) ok = ok && all[static_cast<size_t>(i)] == i;
    if (rank == 0) std::printf("mpi_cxx: %s\n", ok ? "OK" : "wrong allgather result");
    MPI_Finalize();
    return ok ? 0 : 1;
}
