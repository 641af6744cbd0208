/* GPU enqueue as MPICH users write it (MPIX_Send_enqueue and friends on a stream communicator
 * whose stream carries a queue given through info hints: "type" and the hex "value"), on hostq,
 * the host queue runtime of examples/plugin-skeleton/queue that stands in for a GPU stream. */
#include <string.h>

#include "hostq.h"
#include "mpi_check.h"

#define N 1000
struct fill {
    float *x;
    float v;
};
static void fill_kernel(void *arg) {
    struct fill *f = arg;
    for (int i = 0; i < N; ++i) f->x[i] = f->v + (float)i;
}
struct scale {
    float *x;
};
static void double_kernel(void *arg) {
    struct scale *s = arg;
    for (int i = 0; i < N; ++i) s->x[i] *= 2.0f;
}

int main(int argc, char **argv) {
    int provided;
    CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    print_banner("mpi_enqueue");
    CHECK(size == 2);
    int peer = 1 - rank;

    hostq_t *q = NULL;
    CHECK(hostq_create(&q) == 0);
    MPI_Info info;
    CHECK_RC(MPI_Info_create(&info));
    CHECK_RC(MPI_Info_set(info, "type", "weft_hostq_t"));
    CHECK_RC(MPIX_Info_set_hex(info, "value", &q, sizeof q));
    MPIX_Stream s;
    CHECK_RC(MPIX_Stream_create(info, &s));
    CHECK_RC(MPI_Info_free(&info));
    MPI_Comm gc;
    CHECK_RC(MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &gc));

    float *x = hostq_malloc_device(N * sizeof(float)), *y = hostq_malloc_device(N * sizeof(float));
    float *z = hostq_malloc_device(2 * N * sizeof(float));
    CHECK(x != NULL && y != NULL && z != NULL);
    struct fill fx = {x, (float)(rank * 10000)};
    struct scale sy = {y};

    /* kernel -> send, receive -> kernel, in queue order, no synchronize in between */
    CHECK(hostq_launch(q, fill_kernel, &fx) == 0);
    if (rank == 0) {
        CHECK_RC(MPIX_Send_enqueue(x, N, MPI_FLOAT, peer, 1, gc));
        CHECK_RC(MPIX_Recv_enqueue(y, N, MPI_FLOAT, peer, 2, gc, MPI_STATUS_IGNORE));
    } else {
        CHECK_RC(MPIX_Recv_enqueue(y, N, MPI_FLOAT, peer, 1, gc, MPI_STATUS_IGNORE));
        CHECK_RC(MPIX_Send_enqueue(x, N, MPI_FLOAT, peer, 2, gc));
    }
    CHECK(hostq_launch(q, double_kernel, &sy) == 0);
    CHECK(hostq_synchronize(q) == 0);
    for (int i = 0; i < N; ++i) CHECK(y[i] == 2.0f * ((float)(peer * 10000) + (float)i));

    /* nonblocking enqueue with the queue waiting for both, one at a time and all at once */
    MPI_Request r[2];
    CHECK_RC(MPIX_Irecv_enqueue(y, N, MPI_FLOAT, peer, 3, gc, &r[0]));
    CHECK_RC(MPIX_Isend_enqueue(x, N, MPI_FLOAT, peer, 3, gc, &r[1]));
    CHECK_RC(MPIX_Wait_enqueue(&r[0], MPI_STATUS_IGNORE));
    CHECK_RC(MPIX_Wait_enqueue(&r[1], MPI_STATUS_IGNORE));
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
    CHECK(hostq_launch(q, double_kernel, &sy) == 0);
    CHECK_RC(MPIX_Irecv_enqueue(z, N, MPI_FLOAT, peer, 4, gc, &r[0]));
    CHECK_RC(MPIX_Isend_enqueue(x, N, MPI_FLOAT, peer, 4, gc, &r[1]));
    CHECK_RC(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE));
    CHECK(hostq_synchronize(q) == 0);
    for (int i = 0; i < N; ++i) CHECK(y[i] == 2.0f * ((float)(peer * 10000) + (float)i));
    for (int i = 0; i < N; ++i) CHECK(z[i] == (float)(peer * 10000) + (float)i);

    /* collectives on the queue */
    CHECK_RC(MPIX_Allreduce_enqueue(x, y, N, MPI_FLOAT, MPI_SUM, gc));
    CHECK_RC(MPIX_Barrier_enqueue(gc));
    CHECK_RC(MPIX_Bcast_enqueue(x, N, MPI_FLOAT, 1, gc));
    CHECK_RC(MPIX_Allgather_enqueue(x, N, MPI_FLOAT, z, N, MPI_FLOAT, gc));
    CHECK(hostq_synchronize(q) == 0);
    for (int i = 0; i < N; ++i) {
        CHECK(y[i] == 10000.0f + 2.0f * (float)i);
        CHECK(x[i] == 10000.0f + (float)i);
        CHECK(z[i] == 10000.0f + (float)i && z[N + i] == 10000.0f + (float)i);
    }

    /* a status the queue would write later is refused; and an ordinary communicator has no queue */
    CHECK_RC(MPI_Comm_set_errhandler(gc, MPI_ERRORS_RETURN));
    MPI_Status st;
    CHECK(MPIX_Recv_enqueue(y, N, MPI_FLOAT, peer, 5, gc, &st) != MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(MPIX_Send_enqueue(x, N, MPI_FLOAT, peer, 5, MPI_COMM_WORLD) != MPI_SUCCESS);

    CHECK_RC(MPI_Comm_free(&gc));
    CHECK_RC(MPIX_Stream_free(&s));
    hostq_free_device(x);
    hostq_free_device(y);
    hostq_free_device(z);
    CHECK(hostq_destroy(q) == 0);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("mpi_enqueue: OK\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
