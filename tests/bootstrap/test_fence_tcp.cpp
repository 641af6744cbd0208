// The fence channel PMI-1 uses beside an MPI library (core/bootstrap/fence_tcp.cpp), with its
// three processes as threads: connections without rank 0's token are refused and counted, not
// taken for a rank; fences are barriers; a rank that leaves makes the others' fence fail with a
// message naming it, and never hang.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "bootstrap/fence_tcp.hpp"
#include "weft/weft.h"

namespace {

// Connects to "<IPv4> <port> <token>" and sends a hello with `token` for `rank`.
int connect_as(const std::string &published, uint32_t rank, uint64_t token) {
    char host[64] = {0};
    unsigned port = 0;
    unsigned long long published_token = 0;
    if (std::sscanf(published.c_str(), "%63s %u %llu", host, &port, &published_token) != 3) return -1;
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, host, &sa.sin_addr);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval five{5, 0};  // a test that fails must not hang in recv
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &five, sizeof five);
    if (::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0) return -1;
    char hello[16] = {'W', 'F', 'N', 'C'};
    std::memcpy(hello + 4, &rank, 4);
    std::memcpy(hello + 8, &token, 8);
    (void)!::send(fd, hello, sizeof hello, MSG_NOSIGNAL);
    return fd;
}

uint64_t token_of(const std::string &published) {
    unsigned long long t = 0;
    char host[64];
    unsigned port;
    std::sscanf(published.c_str(), "%63s %u %llu", host, &port, &t);
    return t;
}

TEST(FenceTcp, RefusesStrangersAndFencesThreeRanks) {
    weft::fence_tcp ch[3];
    std::string published;
    ASSERT_EQ(ch[0].listen(0, 3, published), WEFT_SUCCESS) << weft::current_error_detail();
    ASSERT_FALSE(published.empty());
    for (int r = 1; r < 3; ++r) {
        std::string none;
        ASSERT_EQ(ch[r].listen(r, 3, none), WEFT_SUCCESS);
        EXPECT_TRUE(none.empty()) << "only rank 0 listens";
    }
    // Before the real ranks: a wrong token claiming rank 1, and one claiming a rank out of range.
    int wrong = connect_as(published, 1, token_of(published) + 1);
    int out_of_range = connect_as(published, 7, token_of(published));
    ASSERT_GE(wrong, 0);
    ASSERT_GE(out_of_range, 0);

    std::atomic<int> rc0{-1};
    std::thread root([&] { rc0 = ch[0].connect("", 10); });
    for (int r = 1; r < 3; ++r) ASSERT_EQ(ch[r].connect(published, 10), WEFT_SUCCESS) << weft::current_error_detail();
    root.join();
    ASSERT_EQ(rc0.load(), WEFT_SUCCESS);
    // The strangers were closed by rank 0.
    char b;
    EXPECT_EQ(::recv(wrong, &b, 1, 0), 0);
    EXPECT_EQ(::recv(out_of_range, &b, 1, 0), 0);
    ::close(wrong);
    ::close(out_of_range);

    // Three fences; no rank leaves a fence before every rank has entered it.
    std::atomic<int> entered{0}, early{0};
    std::vector<std::thread> ranks;
    for (int r = 0; r < 3; ++r)
        ranks.emplace_back([&, r] {
            for (int round = 1; round <= 3; ++round) {
                if (r == 2) std::this_thread::sleep_for(std::chrono::milliseconds(20));
                ++entered;
                int rc = ch[r].fence(10);
                if (rc != WEFT_SUCCESS || entered.load() < 3 * round) ++early;
            }
        });
    for (auto &t : ranks) t.join();
    EXPECT_EQ(early.load(), 0);
}

TEST(FenceTcp, ARankThatLeavesFailsTheFenceWithItsName) {
    weft::fence_tcp ch[2];
    std::string published, none;
    ASSERT_EQ(ch[0].listen(0, 2, published), WEFT_SUCCESS);
    ASSERT_EQ(ch[1].listen(1, 2, none), WEFT_SUCCESS);
    std::thread root([&] { EXPECT_EQ(ch[0].connect("", 10), WEFT_SUCCESS); });
    ASSERT_EQ(ch[1].connect(published, 10), WEFT_SUCCESS);
    root.join();
    ch[1].close();
    EXPECT_EQ(ch[0].fence(10), WEFT_ERR_BOOTSTRAP);
    EXPECT_NE(weft::current_error_detail().find("rank 1"), std::string::npos) << weft::current_error_detail();
}

// Connections that say nothing, or their hello a byte at a time, hold up no rank: rank 0 reads
// hellos side by side (it read them one at a time, 5 s each, so these three held the real ranks
// up for 15 s), and drops a slow one 5 s after accepting it.
TEST(FenceTcp, SlowOrSilentConnectionsHoldUpNoRank) {
    weft::fence_tcp ch[3];
    std::string published, none;
    ASSERT_EQ(ch[0].listen(0, 3, published), WEFT_SUCCESS);
    for (int r = 1; r < 3; ++r) ASSERT_EQ(ch[r].listen(r, 3, none), WEFT_SUCCESS);
    char host[64];
    unsigned port = 0;
    unsigned long long token = 0;
    ASSERT_EQ(std::sscanf(published.c_str(), "%63s %u %llu", host, &port, &token), 3);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, host, &sa.sin_addr);
    std::vector<int> slow;
    for (int i = 0; i < 3; ++i) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa), 0);
        (void)!::send(fd, "W", 1, MSG_NOSIGNAL);  // then nothing more: a byte of a hello
        slow.push_back(fd);
    }
    std::atomic<int> rc0{-1};
    auto t0 = std::chrono::steady_clock::now();
    std::thread root([&] { rc0 = ch[0].connect("", 30); });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the slow ones are first in line
    for (int r = 1; r < 3; ++r) ASSERT_EQ(ch[r].connect(published, 30), WEFT_SUCCESS) << weft::current_error_detail();
    root.join();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(rc0.load(), WEFT_SUCCESS) << weft::current_error_detail();
    EXPECT_LT(ms, 4000) << "the ranks waited behind connections that sent no hello";
    std::atomic<int> failed{0};
    std::vector<std::thread> ranks;
    for (int r = 0; r < 3; ++r) ranks.emplace_back([&, r] { failed += ch[r].fence(10) != WEFT_SUCCESS; });
    for (auto &t : ranks) t.join();
    EXPECT_EQ(failed.load(), 0);
    for (int fd : slow) ::close(fd);
}

TEST(FenceTcp, NobodyConnectsWithinTheTimeout) {
    weft::fence_tcp root;
    std::string published;
    ASSERT_EQ(root.listen(0, 2, published), WEFT_SUCCESS);
    EXPECT_EQ(root.connect("", 1), WEFT_ERR_BOOTSTRAP);
    EXPECT_NE(weft::current_error_detail().find("did not connect"), std::string::npos) << weft::current_error_detail();
}

}  // namespace
