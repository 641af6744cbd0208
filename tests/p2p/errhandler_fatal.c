/* weft-errhandler-fatal MODE: rank 0 raises an error with a fatal handler set, the other
 * ranks wait for a message that never comes; the job must end with the handler's message.
 * MODE: fatal-call  WEFT_ERRORS_ARE_FATAL on WEFT_COMM_WORLD, weft_comm_call_errhandler
 *       abort-call  WEFT_ERRORS_ABORT on a dup, weft_comm_call_errhandler
 *       fatal-send  WEFT_ERRORS_ARE_FATAL on WEFT_COMM_WORLD, weft_send to a rank out of range
 *       abort-recv  WEFT_ERRORS_ABORT on a split, weft_recv with a negative tag
 * Rank 0 prints "NOT ABORTED" and exits 0 if the error returns (the ctest then fails).  C, so that
 * weft.h is compiled as C too. */
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (weft_init(&argc, &argv) != WEFT_SUCCESS) return 2;
    int rank = 0, x = 0;
    weft_comm_rank(WEFT_COMM_WORLD, &rank);
    weft_comm comm = WEFT_COMM_WORLD;
    int size = 0;
    weft_comm_size(WEFT_COMM_WORLD, &size);
    if (!strcmp(mode, "fatal-call") || !strcmp(mode, "fatal-send")) {
        if (weft_comm_set_errhandler(WEFT_COMM_WORLD, WEFT_ERRORS_ARE_FATAL) != WEFT_SUCCESS) return 2;
    } else if (!strcmp(mode, "abort-call")) {
        if (weft_comm_dup(WEFT_COMM_WORLD, &comm) != WEFT_SUCCESS) return 2;
        if (weft_comm_set_errhandler(comm, WEFT_ERRORS_ABORT) != WEFT_SUCCESS) return 2;
    } else if (!strcmp(mode, "abort-recv")) {
        if (weft_comm_split(WEFT_COMM_WORLD, 0, 0, &comm) != WEFT_SUCCESS) return 2;
        if (weft_comm_set_errhandler(comm, WEFT_ERRORS_ABORT) != WEFT_SUCCESS) return 2;
    } else {
        fprintf(stderr, "usage: weft-errhandler-fatal fatal-call|abort-call|fatal-send|abort-recv\n");
        return 2;
    }
    if (rank == 0 && !strcmp(mode, "fatal-send")) {
        weft_send(&x, 1, WEFT_INT, size, 0, comm);
    } else if (rank == 0 && !strcmp(mode, "abort-recv")) {
        weft_recv(&x, 1, WEFT_INT, 0, -4, comm, WEFT_STATUS_IGNORE);
    } else if (rank == 0) {
        weft_comm_call_errhandler(comm, WEFT_ERR_RANK);
    } else {
        /* Never sent: the receive ends with the job, or fails first when this process notices
         * that rank 0 ended (its liveness connection closes) before the launcher ends this one,
         * which is a race the launcher may lose; neither is the error returning. */
        weft_recv(&x, 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE);
        return 1;
    }
    printf("NOT ABORTED\n");
    weft_finalize();
    return 0;
}
