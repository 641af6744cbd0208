/* A local flood of idle connections on a rank's liveness listener (1,100 of them, more than the
 * 1,024 descriptors rank 0 is given here) must neither exhaust that rank's descriptors, nor make
 * its monitor thread spin, nor get anyone declared dead: the ranks still talk afterwards, rank 0
 * can still open files, and it used under 0.3 s of CPU in the second it was flooded.  (Before,
 * rank 0's descriptors ran out in 0.04 s, the monitor spun at ~42% CPU and the job failed with
 * false peer failures.)  Run under weftrun with 2 processes.
 * With the argument "emfile", rank 0 is held to 16 descriptors more than it has open once the
 * job runs, so that the flood does exhaust them: its monitor must then say so, back off instead
 * of spinning, keep its peers, and recover when the flood ends. */
#include <dirent.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "liveness_attack.h"

enum { flood = 1100 };

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* In a child of rank 1 (descriptors raised): opens `flood` idle connections to address, holds
 * them until its parent writes to `hold`, then exits 0 (1 if it could not connect at all). */
static pid_t start_flood(const char *address, int hold) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    struct rlimit lim = {flood + 64, flood + 64};
    setrlimit(RLIMIT_NOFILE, &lim);
    char host[64];
    snprintf(host, sizeof host, "%s", address);
    char *colon = strrchr(host, ':');
    if (colon == NULL) _exit(1);
    *colon = '\0';
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) _exit(1);
    int opened = 0;
    for (int i = 0; i < flood; ++i) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) ++opened;
    }
    char c;
    (void)!read(hold, &c, 1);
    _exit(opened > 0 ? 0 : 1);
}

int main(int argc, char **argv) {
    /* Rank 0 gets the descriptors a default login has, whatever this machine's limit. */
    const char *r = getenv("WEFT_RANK");
    if (r != NULL && atoi(r) == 0) {
        struct rlimit lim;
        getrlimit(RLIMIT_NOFILE, &lim);
        lim.rlim_cur = 1024;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    char address[64] = "";
    if (attack_start(&argc, &argv, address, sizeof address)) return 1;
    const int emfile = argc > 1 && strcmp(argv[1], "emfile") == 0;
    /* A first exchange: the fabric's connection exists before the flood. */
    int out = me, in = -1;
    CHECK(
        weft_sendrecv(&out, 1, WEFT_INT, 1 - me, 1, &in, 1, WEFT_INT, 1 - me, 1, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
    /* The barriers below run once before rank 0's descriptors run out: under UBSan the first
     * check of a dynamic type reads the object's memory through a pipe, so that a process
     * without a free descriptor reports a false "invalid vptr" (and the shared-memory
     * collectives set up their segment at the first barrier, as a program's would). */
    CHECK(weft_barrier(WEFT_COMM_WORLD));
    struct rlimit saved;
    getrlimit(RLIMIT_NOFILE, &saved);
    if (emfile && me == 0) {
        int open_fds = 0;
        DIR *d = opendir("/proc/self/fd");
        while (d != NULL && readdir(d) != NULL) ++open_fds;
        if (d != NULL) closedir(d);
        struct rlimit tight = {(rlim_t)open_fds + 16, saved.rlim_max};
        EXPECT(setrlimit(RLIMIT_NOFILE, &tight) == 0, "setrlimit");
    }
    if (me == 0) CHECK(weft_send(address, sizeof address, WEFT_CHAR, 1, 2, WEFT_COMM_WORLD));
    int hold[2] = {-1, -1};
    pid_t flooder = -1;
    if (me == 1) {
        CHECK(weft_recv(address, sizeof address, WEFT_CHAR, 0, 2, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
        EXPECT(pipe(hold) == 0, "pipe");
        flooder = start_flood(address, hold[0]);
        EXPECT(flooder > 0, "fork of the flooding client");
    }
    CHECK(weft_barrier(WEFT_COMM_WORLD));
    /* The flood is under way (rank 1 started it before the barrier): one second of it. */
    double cpu0 = cpu_seconds();
    sleep(1);
    double cpu = cpu_seconds() - cpu0;
    printf("rank %d: %.3f s of CPU in the flooded second\n", me, cpu);
    if (me == 0) {
        EXPECT(cpu < 0.3, "rank 0 spun while its listener was flooded");
        if (!emfile) {
            int fd = open("/dev/null", O_RDONLY);
            EXPECT(fd >= 0, "rank 0 ran out of file descriptors");
            close(fd);
        }
    }
    /* Nobody died, and the ranks still talk while the flood holds its connections. */
    for (int round = 0; round < 10; ++round) {
        out = me * 100 + round;
        CHECK(weft_sendrecv(&out, 1, WEFT_INT, 1 - me, 3, &in, 1, WEFT_INT, 1 - me, 3, WEFT_COMM_WORLD,
                            WEFT_STATUS_IGNORE));
        EXPECT(in == (1 - me) * 100 + round, "exchange during the flood");
    }
    CHECK(weft_barrier(WEFT_COMM_WORLD));
    if (me == 1) {
        (void)!write(hold[1], "x", 1);
        int status = 0;
        waitpid(flooder, &status, 0);
        EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the flooding client could not connect at all");
    }
    if (emfile && me == 0) {
        setrlimit(RLIMIT_NOFILE, &saved);
        sleep(1); /* the flood's connections close; the listener accepts again */
        int fd = open("/dev/null", O_RDONLY);
        EXPECT(fd >= 0, "rank 0 has no descriptor after the flood");
        close(fd);
    }
    weft_info stats;
    int flag = 0;
    char failed[32] = "";
    CHECK(weft_get_stats(&stats));
    weft_info_get(stats, "failed_processes", sizeof failed, failed, &flag);
    weft_info_free(&stats);
    EXPECT(flag && atol(failed) == 0, "no process declared dead");
    CHECK(weft_finalize());
    printf("rank %d: PASS\n", me);
    return 0;
}
