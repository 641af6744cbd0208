/* The profiling interface: a tool's MPI_Send / MPI_Isend / MPI_Allreduce wrappers (as a PMPI
 * library defines them) take the calls, and reach Weft through PMPI_*. */
#include "mpi_check.h"

static int sends, isends, allreduces;
int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    ++sends;
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}
int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
    ++isends;
    return PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
}
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    ++allreduces;
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, x, y = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    print_banner("mpi_pmpi");
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    x = rank;
    MPI_Request r;
    for (int i = 0; i < 3; ++i) {
        CHECK_RC(MPI_Isend(&x, 1, MPI_INT, right, i, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Recv(&y, 1, MPI_INT, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(y == left);
    }
    CHECK_RC(MPI_Irecv(&y, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Send(&x, 1, MPI_INT, right, 9, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int s = 0;
    CHECK_RC(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(s == size * (size - 1) / 2);
    CHECK(sends == 1 && isends == 3 && allreduces == 1);
    if (rank == 0)
        printf("mpi_pmpi: OK (%d MPI_Send, %d MPI_Isend, %d MPI_Allreduce seen by the tool)\n", sends, isends,
               allreduces);
    CHECK_RC(MPI_Finalize());
    return 0;
}
