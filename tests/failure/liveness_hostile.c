/* Hostile clients of the peer-failure monitor's listener: a connection that sends garbage, one
 * with a well-formed hello but the wrong token, one that sends half a hello and leaves, and
 * one that claims to be a rank that already connected.  Each is dropped and counted
 * (weft_get_stats: refused_liveness_connections), nobody is declared dead (failed_processes
 * stays 0), and traffic between the ranks goes on.  Run under weftrun with 2 processes. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "liveness_attack.h"

static long stat_of(const char *key) {
    weft_info info;
    char value[64] = "";
    int flag = 0;
    if (weft_get_stats(&info) != WEFT_SUCCESS) return -1;
    weft_info_get(info, key, sizeof value, value, &flag);
    weft_info_free(&info);
    return flag ? atol(value) : -1;
}

/* Connects to host:port, writes len bytes, closes. */
static int poke(const char *address, const void *bytes, size_t len) {
    char host[64];
    snprintf(host, sizeof host, "%s", address);
    char *colon = strrchr(host, ':');
    if (colon == NULL) return -1;
    *colon = '\0';
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) return -1;
    if (len != 0 && write(fd, bytes, len) != (ssize_t)len) return -1;
    close(fd);
    return 0;
}

int main(int argc, char **argv) {
    char address[64] = "";
    if (attack_start(&argc, &argv, address, sizeof address)) return 1;
    if (me == 0) {
        /* Rank 0 accepts from rank 1: attack its own listener with what rank 1 cannot be. */
        char garbage[16];
        memset(garbage, 0xA5, sizeof garbage);
        EXPECT(poke(address, garbage, sizeof garbage) == 0, "garbage client connects");
        char hello[16] = {'W', 'L', 'I', 'V'};
        uint32_t rank = 1;
        uint64_t token = 12345; /* not the listener's token (a random 64-bit value) */
        memcpy(hello + 4, &rank, 4);
        memcpy(hello + 8, &token, 8);
        EXPECT(poke(address, hello, sizeof hello) == 0, "wrong-token client connects");
        EXPECT(poke(address, hello, 6) == 0, "half-hello client connects");
        long refused = 0;
        for (int i = 0; i < 2000 && (refused = stat_of("refused_liveness_connections")) < 3; ++i) usleep(1000);
        printf("rank 0: refused_liveness_connections = %ld\n", refused);
        EXPECT(refused == 3, "three hostile connections refused and counted");
    }
    /* Nobody died, and the ranks still talk. */
    int out = me, in = -1;
    if (me == 0) CHECK(weft_send(&out, 1, WEFT_INT, 1, 1, WEFT_COMM_WORLD));
    CHECK(weft_recv(&in, 1, WEFT_INT, 1 - me, 1, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE));
    if (me == 1) CHECK(weft_send(&out, 1, WEFT_INT, 0, 1, WEFT_COMM_WORLD));
    EXPECT(in == 1 - me, "exchange after the attack");
    CHECK(weft_barrier(WEFT_COMM_WORLD));
    EXPECT(stat_of("failed_processes") == 0, "no process declared dead");
    CHECK(weft_finalize());
    printf("rank %d: PASS\n", me);
    return 0;
}
