/* Cartesian topologies: MPI_Dims_create, a periodic 2D grid, coordinates and ranks both ways,
 * a halo exchange along both dimensions with MPI_Cart_shift and MPI_Sendrecv, rows and
 * columns from MPI_Cart_sub, a non-periodic grid's edges (MPI_PROC_NULL), MPI_Topo_test. */
#include "mpi_check.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    print_banner("mpi_topo");

    int d2[2] = {0, 0};
    CHECK_RC(MPI_Dims_create(12, 2, d2));
    CHECK(d2[0] == 4 && d2[1] == 3);
    int d3[3] = {0, 2, 0};
    CHECK_RC(MPI_Dims_create(16, 3, d3));
    CHECK(d3[0] * d3[1] * d3[2] == 16 && d3[1] == 2 && d3[0] >= d3[2]);
    int d1[2] = {0, 0};
    CHECK_RC(MPI_Dims_create(7, 2, d1));
    CHECK(d1[0] == 7 && d1[1] == 1);

    int dims[2] = {0, 0}, periods[2] = {1, 1};
    CHECK_RC(MPI_Dims_create(size, 2, dims));
    MPI_Comm grid;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
    int status = -1;
    CHECK_RC(MPI_Topo_test(grid, &status));
    CHECK(status == MPI_CART);
    CHECK_RC(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED);
    int nd = 0, gd[2], gp[2], gc[2], grank;
    CHECK_RC(MPI_Cartdim_get(grid, &nd));
    CHECK(nd == 2);
    CHECK_RC(MPI_Comm_rank(grid, &grank));
    CHECK_RC(MPI_Cart_get(grid, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 1);
    CHECK(gc[0] == grank / dims[1] && gc[1] == grank % dims[1]); /* row-major */
    for (int r = 0; r < size; ++r) {
        int co[2], back = -1;
        CHECK_RC(MPI_Cart_coords(grid, r, 2, co));
        CHECK_RC(MPI_Cart_rank(grid, co, &back));
        CHECK(back == r);
    }
    int wrapped[2] = {gc[0] - dims[0], gc[1] + 2 * dims[1]}, same = -1;
    CHECK_RC(MPI_Cart_rank(grid, wrapped, &same)); /* periodic: coordinates wrap */
    CHECK(same == grank);

    /* Halo exchange: each process sends its rank to both neighbours in each dimension. */
    for (int dir = 0; dir < 2; ++dir) {
        int src, dst, got = -1;
        CHECK_RC(MPI_Cart_shift(grid, dir, 1, &src, &dst));
        CHECK_RC(MPI_Sendrecv(&grank, 1, MPI_INT, dst, dir, &got, 1, MPI_INT, src, dir, grid, MPI_STATUS_IGNORE));
        CHECK(got == src);
        int co[2];
        CHECK_RC(MPI_Cart_coords(grid, src, 2, co));
        CHECK(co[1 - dir] == gc[1 - dir] && co[dir] == (gc[dir] - 1 + dims[dir]) % dims[dir]);
    }

    /* Rows and columns. */
    int keep_row[2] = {0, 1}, keep_col[2] = {1, 0};
    MPI_Comm row, col;
    CHECK_RC(MPI_Cart_sub(grid, keep_row, &row));
    CHECK_RC(MPI_Cart_sub(grid, keep_col, &col));
    int rs, rr, cs, cr;
    MPI_Comm_size(row, &rs), MPI_Comm_rank(row, &rr), MPI_Comm_size(col, &cs), MPI_Comm_rank(col, &cr);
    CHECK(rs == dims[1] && rr == gc[1] && cs == dims[0] && cr == gc[0]);
    int sum = 0;
    CHECK_RC(MPI_Allreduce(&grank, &sum, 1, MPI_INT, MPI_SUM, row)); /* a row's ranks */
    CHECK(sum == gc[0] * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2);
    CHECK_RC(MPI_Cartdim_get(row, &nd));
    CHECK(nd == 1);
    MPI_Comm dupgrid;
    CHECK_RC(MPI_Comm_dup(grid, &dupgrid)); /* a dup keeps the topology */
    CHECK_RC(MPI_Topo_test(dupgrid, &status));
    CHECK(status == MPI_CART);

    /* A non-periodic line over all processes: the ends have MPI_PROC_NULL neighbours. */
    int line = size, nonper = 0;
    MPI_Comm lc;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, &line, &nonper, 0, &lc));
    int src, dst;
    CHECK_RC(MPI_Cart_shift(lc, 0, 1, &src, &dst));
    CHECK(src == (rank == 0 ? MPI_PROC_NULL : rank - 1) && dst == (rank == size - 1 ? MPI_PROC_NULL : rank + 1));
    /* A grid smaller than the world: the others get MPI_COMM_NULL. */
    int one = 1, per = 0;
    MPI_Comm solo;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, &one, &per, 0, &solo));
    CHECK((rank == 0) == (solo != MPI_COMM_NULL));
    if (solo != MPI_COMM_NULL) CHECK_RC(MPI_Comm_free(&solo));

    MPI_Comm *frees[] = {&row, &col, &dupgrid, &lc, &grid};
    for (unsigned i = 0; i < sizeof frees / sizeof frees[0]; ++i) CHECK_RC(MPI_Comm_free(frees[i]));
    if (rank == 0) printf("mpi_topo: OK\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
