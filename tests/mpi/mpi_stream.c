/* MPIX streams as MPICH users write them (MPICH 4.1+ names): a stream communicator per thread,
 * and a multiplex communicator whose streams are addressed by index (MPIX_Stream_isend /
 * MPIX_Stream_irecv with source and destination indices, MPIX_ANY_INDEX), progress threads and
 * explicit progress.  Two processes, each with NT threads and NT streams. */
#include <pthread.h>
#include <string.h>

#include "mpi_check.h"

#define NT 2
#define N 256
#define ROUNDS 20
static int rank, size, peer;
static MPIX_Stream streams[NT];
static MPI_Comm stream_comms[NT], mux;

static void *stream_thread(void *arg) {
    int t = (int)(long)arg, out[N], in[N];
    for (int round = 0; round < ROUNDS; ++round) {
        for (int i = 0; i < N; ++i) out[i] = rank * 100000 + t * 10000 + round * 100 + i % 100;
        /* on the thread's own stream communicator: ordinary MPI calls, no lock */
        MPI_Request r[2];
        CHECK_RC(MPI_Irecv(in, N, MPI_INT, peer, round, stream_comms[t], &r[0]));
        CHECK_RC(MPI_Isend(out, N, MPI_INT, peer, round, stream_comms[t], &r[1]));
        CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < N; ++i) CHECK(in[i] == peer * 100000 + t * 10000 + round * 100 + i % 100);
        /* on the multiplex communicator: from local stream t to the peer's stream t */
        MPI_Status st;
        CHECK_RC(MPIX_Stream_irecv(in, N, MPI_INT, peer, 1000 + round, mux, t, t, &r[0]));
        CHECK_RC(MPIX_Stream_isend(out, N, MPI_INT, peer, 1000 + round, mux, t, t, &r[1]));
        CHECK_RC(MPI_Wait(&r[0], &st));
        CHECK_RC(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 1000 + round);
        for (int i = 0; i < N; ++i) CHECK(in[i] == peer * 100000 + t * 10000 + round * 100 + i % 100);
    }
    /* a collective on the thread's stream communicator, concurrently with the other thread's */
    int one = t + 1, sum = 0;
    CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, stream_comms[t]));
    CHECK(sum == size * (t + 1));
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    print_banner("mpi_stream");
    CHECK(size == 2);
    peer = 1 - rank;

    for (int t = 0; t < NT; ++t) {
        CHECK_RC(MPIX_Stream_create(MPI_INFO_NULL, &streams[t]));
        CHECK(streams[t] != MPIX_STREAM_NULL);
        CHECK_RC(MPIX_Stream_comm_create(MPI_COMM_WORLD, streams[t], &stream_comms[t]));
        MPIX_Stream back;
        CHECK_RC(MPIX_Comm_get_stream(stream_comms[t], 0, &back));
        CHECK(back == streams[t]);
    }
    CHECK_RC(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, NT, streams, &mux));
    MPIX_Stream s1;
    CHECK_RC(MPIX_Comm_get_stream(mux, 1, &s1));
    CHECK(s1 == streams[1]);

    pthread_t th[NT];
    for (int t = 0; t < NT; ++t) CHECK(pthread_create(&th[t], NULL, stream_thread, (void *)(long)t) == 0);
    for (int t = 0; t < NT; ++t) CHECK(pthread_join(th[t], NULL) == 0);

    /* Blocking multiplex calls, any source index, persistent multiplex requests.  Indices as
     * MPICH's: the sender's stream first, then the receiver's, on both sides.  A stream progresses only its own endpoint: nonblocking and waitall
     * where one thread drives both ends. */
    int out[N], in[N];
    for (int i = 0; i < N; ++i) out[i] = rank * 7 + i;
    MPI_Request r[2];
    MPI_Status st[2];
    CHECK_RC(MPIX_Stream_irecv(in, N, MPI_INT, peer, 5, mux, MPIX_ANY_INDEX, 0, &r[0]));
    CHECK_RC(MPIX_Stream_isend(out, N, MPI_INT, peer, 5, mux, 1, 0, &r[1]));
    CHECK_RC(MPI_Waitall(2, r, st));
    for (int i = 0; i < N; ++i) CHECK(in[i] == peer * 7 + i);
    if (rank == 0) {
        CHECK_RC(MPIX_Stream_send(out, 3, MPI_INT, peer, 6, mux, 0, 1));
        CHECK_RC(MPIX_Stream_recv(in, N, MPI_INT, peer, 7, mux, 0, 1, &st[0]));
        CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 7 && in[0] == peer * 7);
    } else {
        CHECK_RC(MPIX_Stream_recv(in, N, MPI_INT, peer, 6, mux, 0, 1, &st[0]));
        int c;
        CHECK_RC(MPI_Get_count(&st[0], MPI_INT, &c));
        CHECK(c == 3 && in[2] == peer * 7 + 2);
        CHECK_RC(MPIX_Stream_send(out, 2, MPI_INT, peer, 7, mux, 0, 1));
    }
    MPI_Request p[2];
    CHECK_RC(MPIX_Stream_recv_init(in, N, MPI_INT, peer, 8, mux, 1, 1, &p[0]));
    CHECK_RC(MPIX_Stream_send_init(out, N, MPI_INT, peer, 8, mux, 1, 1, &p[1]));
    for (int round = 0; round < 3; ++round) {
        out[0] = rank * 1000 + round;
        CHECK_RC(MPI_Startall(2, p));
        CHECK_RC(MPI_Waitall(2, p, MPI_STATUSES_IGNORE));
        CHECK(in[0] == peer * 1000 + round);
    }
    CHECK_RC(MPI_Request_free(&p[0]));
    CHECK_RC(MPI_Request_free(&p[1]));

    /* Explicit progress and a progress thread on stream 0. */
    CHECK_RC(MPIX_Stream_progress(streams[0]));
    CHECK_RC(MPIX_Start_progress_thread(streams[0]));
    CHECK_RC(MPI_Irecv(in, N, MPI_INT, peer, 9, stream_comms[0], &r[0]));
    CHECK_RC(MPI_Send(out, N, MPI_INT, peer, 9, stream_comms[0]));
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < 30) flag = MPIX_Request_is_complete(r[0]); /* no progress of its own */
    CHECK(flag == 1);
    CHECK_RC(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    CHECK_RC(MPIX_Stop_progress_thread(streams[0]));

    /* A stream in use is refused; free in order. */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPIX_Stream busy = streams[0];
    CHECK(MPIX_Stream_free(&busy) != MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&mux));
    for (int t = 0; t < NT; ++t) {
        CHECK_RC(MPI_Comm_free(&stream_comms[t]));
        CHECK_RC(MPIX_Stream_free(&streams[t]));
        CHECK(streams[t] == MPIX_STREAM_NULL);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("mpi_stream: OK\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
