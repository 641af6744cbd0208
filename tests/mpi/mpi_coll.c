/* Every collective through the MPI front end, in its six forms: blocking, nonblocking (MPI_I...)
 * and persistent (..._init, started twice), each with int and large-count (_c) arguments; the
 * v and w variants convert their count and displacement arrays.  Results are checked on every
 * rank; roots rotate. */
#include <string.h>

#include "mpi_check.h"

#define C 5 /* elements per block */
#define MAXP 16
static int rank, size;
static MPI_Request req;
static MPI_Comm comm;

/* v: 0 blocking, 1 nonblocking, 2 persistent (int counts); 3, 4, 5 the same with _c. */
#define RUN(v, B, I, P, BC, IC, PC)                              \
    do {                                                         \
        switch (v) {                                             \
            case 0: CHECK_RC(B); break;                          \
            case 1:                                              \
                CHECK_RC(I);                                     \
                CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));     \
                break;                                           \
            case 2:                                              \
                CHECK_RC(P);                                     \
                for (int run_ = 0; run_ < 2; ++run_) {           \
                    CHECK_RC(MPI_Start(&req));                   \
                    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE)); \
                }                                                \
                CHECK_RC(MPI_Request_free(&req));                \
                break;                                           \
            case 3: CHECK_RC(BC); break;                         \
            case 4:                                              \
                CHECK_RC(IC);                                    \
                CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));     \
                break;                                           \
            default:                                             \
                CHECK_RC(PC);                                    \
                CHECK_RC(MPI_Start(&req));                       \
                CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));     \
                CHECK_RC(MPI_Request_free(&req));                \
                break;                                           \
        }                                                        \
    } while (0)
#define INFO MPI_INFO_NULL

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    print_banner("mpi_coll");
    CHECK(size <= MAXP);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    const MPI_Count cC = C;
    int in[MAXP * MAXP * C], out[MAXP * MAXP * C];
    int counts[MAXP], displs[MAXP], rcounts[MAXP], rdispls[MAXP], bdispls[MAXP], rbdispls[MAXP];
    MPI_Count ccounts[MAXP], crcounts[MAXP];
    MPI_Aint cdispls[MAXP], crdispls[MAXP], cbdispls[MAXP], crbdispls[MAXP];
    MPI_Datatype types[MAXP];
    for (int j = 0; j < MAXP; ++j) types[j] = MPI_INT;

    for (int v = 0; v < 6; ++v) {
        int root = v % size;
        RUN(v, MPI_Barrier(comm), MPI_Ibarrier(comm, &req), MPI_Barrier_init(comm, INFO, &req), MPI_Barrier(comm),
            MPI_Ibarrier(comm, &req), MPI_Barrier_init(comm, INFO, &req));

        /* Bcast */
        for (int i = 0; i < C; ++i) out[i] = rank == root ? root * 100 + i : -1;
        RUN(v, MPI_Bcast(out, C, MPI_INT, root, comm), MPI_Ibcast(out, C, MPI_INT, root, comm, &req),
            MPI_Bcast_init(out, C, MPI_INT, root, comm, INFO, &req), MPI_Bcast_c(out, cC, MPI_INT, root, comm),
            MPI_Ibcast_c(out, cC, MPI_INT, root, comm, &req),
            MPI_Bcast_init_c(out, cC, MPI_INT, root, comm, INFO, &req));
        for (int i = 0; i < C; ++i) CHECK(out[i] == root * 100 + i);

        /* Reduce (sum) */
        for (int i = 0; i < C; ++i) in[i] = rank + i, out[i] = -1;
        RUN(v, MPI_Reduce(in, out, C, MPI_INT, MPI_SUM, root, comm),
            MPI_Ireduce(in, out, C, MPI_INT, MPI_SUM, root, comm, &req),
            MPI_Reduce_init(in, out, C, MPI_INT, MPI_SUM, root, comm, INFO, &req),
            MPI_Reduce_c(in, out, cC, MPI_INT, MPI_SUM, root, comm),
            MPI_Ireduce_c(in, out, cC, MPI_INT, MPI_SUM, root, comm, &req),
            MPI_Reduce_init_c(in, out, cC, MPI_INT, MPI_SUM, root, comm, INFO, &req));
        if (rank == root)
            for (int i = 0; i < C; ++i) CHECK(out[i] == size * (size - 1) / 2 + size * i);

        /* Allreduce (max; in place for the blocking int form) */
        for (int i = 0; i < C; ++i) in[i] = rank * 10 + i, out[i] = in[i];
        const void *src = v == 0 ? MPI_IN_PLACE : in;
        RUN(v, MPI_Allreduce(src, out, C, MPI_INT, MPI_MAX, comm),
            MPI_Iallreduce(in, out, C, MPI_INT, MPI_MAX, comm, &req),
            MPI_Allreduce_init(in, out, C, MPI_INT, MPI_MAX, comm, INFO, &req),
            MPI_Allreduce_c(in, out, cC, MPI_INT, MPI_MAX, comm),
            MPI_Iallreduce_c(in, out, cC, MPI_INT, MPI_MAX, comm, &req),
            MPI_Allreduce_init_c(in, out, cC, MPI_INT, MPI_MAX, comm, INFO, &req));
        for (int i = 0; i < C; ++i) CHECK(out[i] == (size - 1) * 10 + i);

        /* Gather / Scatter */
        for (int i = 0; i < C; ++i) in[i] = rank * 100 + i;
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Gather(in, C, MPI_INT, out, C, MPI_INT, root, comm),
            MPI_Igather(in, C, MPI_INT, out, C, MPI_INT, root, comm, &req),
            MPI_Gather_init(in, C, MPI_INT, out, C, MPI_INT, root, comm, INFO, &req),
            MPI_Gather_c(in, cC, MPI_INT, out, cC, MPI_INT, root, comm),
            MPI_Igather_c(in, cC, MPI_INT, out, cC, MPI_INT, root, comm, &req),
            MPI_Gather_init_c(in, cC, MPI_INT, out, cC, MPI_INT, root, comm, INFO, &req));
        if (rank == root)
            for (int j = 0; j < size * C; ++j) CHECK(out[j] == (j / C) * 100 + j % C);
        for (int j = 0; j < size * C; ++j) in[j] = (j / C) * 1000 + root + j % C;
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Scatter(in, C, MPI_INT, out, C, MPI_INT, root, comm),
            MPI_Iscatter(in, C, MPI_INT, out, C, MPI_INT, root, comm, &req),
            MPI_Scatter_init(in, C, MPI_INT, out, C, MPI_INT, root, comm, INFO, &req),
            MPI_Scatter_c(in, cC, MPI_INT, out, cC, MPI_INT, root, comm),
            MPI_Iscatter_c(in, cC, MPI_INT, out, cC, MPI_INT, root, comm, &req),
            MPI_Scatter_init_c(in, cC, MPI_INT, out, cC, MPI_INT, root, comm, INFO, &req));
        for (int i = 0; i < C; ++i) CHECK(out[i] == rank * 1000 + root + i);

        /* v layouts: rank j has j + 1 elements, placed with a gap of one element. */
        int total = 0;
        for (int j = 0; j < size; ++j) {
            counts[j] = j + 1, displs[j] = total, ccounts[j] = j + 1, cdispls[j] = total;
            total += j + 2;
        }
        for (int i = 0; i <= rank; ++i) in[i] = rank * 100 + i;
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Gatherv(in, rank + 1, MPI_INT, out, counts, displs, MPI_INT, root, comm),
            MPI_Igatherv(in, rank + 1, MPI_INT, out, counts, displs, MPI_INT, root, comm, &req),
            MPI_Gatherv_init(in, rank + 1, MPI_INT, out, counts, displs, MPI_INT, root, comm, INFO, &req),
            MPI_Gatherv_c(in, rank + 1, MPI_INT, out, ccounts, cdispls, MPI_INT, root, comm),
            MPI_Igatherv_c(in, rank + 1, MPI_INT, out, ccounts, cdispls, MPI_INT, root, comm, &req),
            MPI_Gatherv_init_c(in, rank + 1, MPI_INT, out, ccounts, cdispls, MPI_INT, root, comm, INFO, &req));
        if (rank == root)
            for (int j = 0; j < size; ++j) {
                for (int i = 0; i <= j; ++i) CHECK(out[displs[j] + i] == j * 100 + i);
                CHECK(out[displs[j] + j + 1] == -1); /* the gap is untouched */
            }
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Allgatherv(in, rank + 1, MPI_INT, out, counts, displs, MPI_INT, comm),
            MPI_Iallgatherv(in, rank + 1, MPI_INT, out, counts, displs, MPI_INT, comm, &req),
            MPI_Allgatherv_init(in, rank + 1, MPI_INT, out, counts, displs, MPI_INT, comm, INFO, &req),
            MPI_Allgatherv_c(in, rank + 1, MPI_INT, out, ccounts, cdispls, MPI_INT, comm),
            MPI_Iallgatherv_c(in, rank + 1, MPI_INT, out, ccounts, cdispls, MPI_INT, comm, &req),
            MPI_Allgatherv_init_c(in, rank + 1, MPI_INT, out, ccounts, cdispls, MPI_INT, comm, INFO, &req));
        for (int j = 0; j < size; ++j)
            for (int i = 0; i <= j; ++i) CHECK(out[displs[j] + i] == j * 100 + i);
        for (int j = 0; j < size; ++j)
            for (int i = 0; i <= j; ++i) in[displs[j] + i] = j * 10 + root + i;
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Scatterv(in, counts, displs, MPI_INT, out, rank + 1, MPI_INT, root, comm),
            MPI_Iscatterv(in, counts, displs, MPI_INT, out, rank + 1, MPI_INT, root, comm, &req),
            MPI_Scatterv_init(in, counts, displs, MPI_INT, out, rank + 1, MPI_INT, root, comm, INFO, &req),
            MPI_Scatterv_c(in, ccounts, cdispls, MPI_INT, out, rank + 1, MPI_INT, root, comm),
            MPI_Iscatterv_c(in, ccounts, cdispls, MPI_INT, out, rank + 1, MPI_INT, root, comm, &req),
            MPI_Scatterv_init_c(in, ccounts, cdispls, MPI_INT, out, rank + 1, MPI_INT, root, comm, INFO, &req));
        for (int i = 0; i <= rank; ++i) CHECK(out[i] == rank * 10 + root + i);
        CHECK(out[rank + 1] == -1);

        /* Allgather */
        for (int i = 0; i < C; ++i) in[i] = rank * 100 + v + i;
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Allgather(in, C, MPI_INT, out, C, MPI_INT, comm),
            MPI_Iallgather(in, C, MPI_INT, out, C, MPI_INT, comm, &req),
            MPI_Allgather_init(in, C, MPI_INT, out, C, MPI_INT, comm, INFO, &req),
            MPI_Allgather_c(in, cC, MPI_INT, out, cC, MPI_INT, comm),
            MPI_Iallgather_c(in, cC, MPI_INT, out, cC, MPI_INT, comm, &req),
            MPI_Allgather_init_c(in, cC, MPI_INT, out, cC, MPI_INT, comm, INFO, &req));
        for (int j = 0; j < size * C; ++j) CHECK(out[j] == (j / C) * 100 + v + j % C);

        /* Alltoall: block j goes to rank j */
        for (int j = 0; j < size * C; ++j) in[j] = rank * 1000 + (j / C) * 10 + j % C;
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Alltoall(in, C, MPI_INT, out, C, MPI_INT, comm),
            MPI_Ialltoall(in, C, MPI_INT, out, C, MPI_INT, comm, &req),
            MPI_Alltoall_init(in, C, MPI_INT, out, C, MPI_INT, comm, INFO, &req),
            MPI_Alltoall_c(in, cC, MPI_INT, out, cC, MPI_INT, comm),
            MPI_Ialltoall_c(in, cC, MPI_INT, out, cC, MPI_INT, comm, &req),
            MPI_Alltoall_init_c(in, cC, MPI_INT, out, cC, MPI_INT, comm, INFO, &req));
        for (int j = 0; j < size * C; ++j) CHECK(out[j] == (j / C) * 1000 + rank * 10 + j % C);

        /* Alltoallv / Alltoallw: rank a sends (a + b) % 3 + 1 elements to rank b. */
        int st = 0, rt = 0;
        for (int j = 0; j < size; ++j) {
            counts[j] = (rank + j) % 3 + 1, displs[j] = st, bdispls[j] = st * (int)sizeof(int);
            rcounts[j] = (j + rank) % 3 + 1, rdispls[j] = rt, rbdispls[j] = rt * (int)sizeof(int);
            ccounts[j] = counts[j], cdispls[j] = displs[j], cbdispls[j] = bdispls[j];
            crcounts[j] = rcounts[j], crdispls[j] = rdispls[j], crbdispls[j] = rbdispls[j];
            for (int i = 0; i < counts[j]; ++i) in[st + i] = rank * 1000 + j * 10 + i;
            st += counts[j] + 1, rt += rcounts[j] + 1;
        }
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Alltoallv(in, counts, displs, MPI_INT, out, rcounts, rdispls, MPI_INT, comm),
            MPI_Ialltoallv(in, counts, displs, MPI_INT, out, rcounts, rdispls, MPI_INT, comm, &req),
            MPI_Alltoallv_init(in, counts, displs, MPI_INT, out, rcounts, rdispls, MPI_INT, comm, INFO, &req),
            MPI_Alltoallv_c(in, ccounts, cdispls, MPI_INT, out, crcounts, crdispls, MPI_INT, comm),
            MPI_Ialltoallv_c(in, ccounts, cdispls, MPI_INT, out, crcounts, crdispls, MPI_INT, comm, &req),
            MPI_Alltoallv_init_c(in, ccounts, cdispls, MPI_INT, out, crcounts, crdispls, MPI_INT, comm, INFO, &req));
        for (int j = 0; j < size; ++j)
            for (int i = 0; i < rcounts[j]; ++i) CHECK(out[rdispls[j] + i] == j * 1000 + rank * 10 + i);
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Alltoallw(in, counts, bdispls, types, out, rcounts, rbdispls, types, comm),
            MPI_Ialltoallw(in, counts, bdispls, types, out, rcounts, rbdispls, types, comm, &req),
            MPI_Alltoallw_init(in, counts, bdispls, types, out, rcounts, rbdispls, types, comm, INFO, &req),
            MPI_Alltoallw_c(in, ccounts, cbdispls, types, out, crcounts, crbdispls, types, comm),
            MPI_Ialltoallw_c(in, ccounts, cbdispls, types, out, crcounts, crbdispls, types, comm, &req),
            MPI_Alltoallw_init_c(in, ccounts, cbdispls, types, out, crcounts, crbdispls, types, comm, INFO, &req));
        for (int j = 0; j < size; ++j)
            for (int i = 0; i < rcounts[j]; ++i) CHECK(out[rdispls[j] + i] == j * 1000 + rank * 10 + i);

        /* Reduce_scatter_block and Reduce_scatter (rank j gets j + 1 elements) */
        for (int j = 0; j < size * C; ++j) in[j] = rank + j;
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Reduce_scatter_block(in, out, C, MPI_INT, MPI_SUM, comm),
            MPI_Ireduce_scatter_block(in, out, C, MPI_INT, MPI_SUM, comm, &req),
            MPI_Reduce_scatter_block_init(in, out, C, MPI_INT, MPI_SUM, comm, INFO, &req),
            MPI_Reduce_scatter_block_c(in, out, cC, MPI_INT, MPI_SUM, comm),
            MPI_Ireduce_scatter_block_c(in, out, cC, MPI_INT, MPI_SUM, comm, &req),
            MPI_Reduce_scatter_block_init_c(in, out, cC, MPI_INT, MPI_SUM, comm, INFO, &req));
        for (int k = 0; k < C; ++k) CHECK(out[k] == size * (size - 1) / 2 + size * (rank * C + k));
        int before = 0;
        for (int j = 0; j < size; ++j) counts[j] = j + 1, ccounts[j] = j + 1, before += j < rank ? j + 1 : 0;
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm),
            MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm, &req),
            MPI_Reduce_scatter_init(in, out, counts, MPI_INT, MPI_SUM, comm, INFO, &req),
            MPI_Reduce_scatter_c(in, out, ccounts, MPI_INT, MPI_SUM, comm),
            MPI_Ireduce_scatter_c(in, out, ccounts, MPI_INT, MPI_SUM, comm, &req),
            MPI_Reduce_scatter_init_c(in, out, ccounts, MPI_INT, MPI_SUM, comm, INFO, &req));
        for (int k = 0; k <= rank; ++k) CHECK(out[k] == size * (size - 1) / 2 + size * (before + k));

        /* Scan and Exscan (sum of rank + 1 + i over the ranks before) */
        for (int i = 0; i < C; ++i) in[i] = rank + 1 + i;
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Scan(in, out, C, MPI_INT, MPI_SUM, comm), MPI_Iscan(in, out, C, MPI_INT, MPI_SUM, comm, &req),
            MPI_Scan_init(in, out, C, MPI_INT, MPI_SUM, comm, INFO, &req),
            MPI_Scan_c(in, out, cC, MPI_INT, MPI_SUM, comm), MPI_Iscan_c(in, out, cC, MPI_INT, MPI_SUM, comm, &req),
            MPI_Scan_init_c(in, out, cC, MPI_INT, MPI_SUM, comm, INFO, &req));
        for (int i = 0; i < C; ++i) CHECK(out[i] == (rank + 1) * (rank + 2) / 2 + (rank + 1) * i);
        memset(out, 0xff, sizeof out);
        RUN(v, MPI_Exscan(in, out, C, MPI_INT, MPI_SUM, comm), MPI_Iexscan(in, out, C, MPI_INT, MPI_SUM, comm, &req),
            MPI_Exscan_init(in, out, C, MPI_INT, MPI_SUM, comm, INFO, &req),
            MPI_Exscan_c(in, out, cC, MPI_INT, MPI_SUM, comm), MPI_Iexscan_c(in, out, cC, MPI_INT, MPI_SUM, comm, &req),
            MPI_Exscan_init_c(in, out, cC, MPI_INT, MPI_SUM, comm, INFO, &req));
        if (rank > 0)
            for (int i = 0; i < C; ++i) CHECK(out[i] == rank * (rank + 1) / 2 + rank * i);
    }

    /* MINLOC on MPI_DOUBLE_INT (a pair type, MPICH's 0x8c... value). */
    struct {
        double value;
        int index;
    } pin = {(double)((rank * 7) % size), rank}, pout;
    CHECK_RC(MPI_Allreduce(&pin, &pout, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm));
    CHECK(pout.value == 0.0 && pout.index == 0);
    CHECK_RC(MPI_Comm_free(&comm));
    if (rank == 0) printf("mpi_coll: OK\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
