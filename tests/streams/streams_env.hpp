// Shared helpers for the stream tests (MPIX Stream semantics).  Multi-process suites are
// collective: every process runs the same tests in the same order, and each test starts and
// ends with a barrier on WEFT_COMM_WORLD, under the watchdog (tests/common/).
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "collective_test.hpp"
#include "error_detail.hpp"
#include "multiprocess_main.hpp"
#include "watchdog.hpp"
#include "weft/weft.h"
#include "weft_env.hpp"

namespace streams_test {

using harness::current_test_name;
using harness::detail;
using harness::p2p_barrier;
using harness::step;
using harness::watchdog;
using harness::world_rank;
using harness::world_size;
// Every test starts and ends with all processes in step, under the watchdog (30 s unless the
// test overrides limit_s(); the whole program must stay well inside ctest's 120 s).
using collective_test = harness::collective_test<>;

// "rank R: code N (text), detail: ..." for assertion messages.
inline std::string err(int code) { return "rank " + std::to_string(world_rank()) + ": " + harness::err(code); }

// Thread level asked for at init: tests pass --thread=multiple (or the suite asks for it).
inline int &required_level() {
    static int level = WEFT_THREAD_SINGLE;
    return level;
}
inline int &provided_level() {
    static int level = -1;
    return level;
}

// Removes "--thread=single|multiple" from argv (after gtest has taken its flags).
inline void parse_args(int *argc, char **argv) {
    int out = 1;
    for (int i = 1; i < *argc; ++i) {
        if (std::strcmp(argv[i], "--thread=multiple") == 0)
            required_level() = WEFT_THREAD_MULTIPLE;
        else if (std::strcmp(argv[i], "--thread=single") == 0)
            required_level() = WEFT_THREAD_SINGLE;
        else
            argv[out++] = argv[i];
    }
    *argc = out;
}

// Initializes Weft once for the program and finalizes after the last test.
class environment : public ::testing::Environment {
  public:
    explicit environment(const char *name) : name_(name) {}
    void SetUp() override {
        init();
        if (::testing::Test::HasFatalFailure()) return;
        harness::runtime rt;
        ASSERT_TRUE(harness::runtime_info(rt));
        if (world_rank() == 0) {
            const char *nv = std::getenv("WEFT_NUM_VCIS"), *cs = std::getenv("WEFT_THREAD_CS"),
                       *rv = std::getenv("WEFT_RESERVED_VCIS");
            std::printf("%s: %d processes, fabric=%s bootstrap=%s thread level=%d (asked %d) WEFT_NUM_VCIS=%s "
                        "WEFT_THREAD_CS=%s WEFT_RESERVED_VCIS=%s\n",
                        name_, world_size(), rt.fabric.c_str(), rt.bootstrap.c_str(), provided_level(),
                        required_level(), nv ? nv : "-", cs ? cs : "-", rv ? rv : "-");
            std::fflush(stdout);
        }
    }
    void TearDown() override { EXPECT_EQ(harness::finalize_watched(), WEFT_SUCCESS) << detail(); }

  protected:
    // weft_init_thread at required_level(), then the watchdog (a fatal failure when init fails).
    void init() {
        int provided = -1;
        int rc = weft_init_thread(nullptr, nullptr, required_level(), &provided);
        ASSERT_EQ(rc, WEFT_SUCCESS) << "weft_init_thread: " << detail();
        provided_level() = provided;
        watchdog::get().start(world_rank());
    }
    const char *name_;
};

// Deterministic payload byte for message `seq` at position `i` from (rank, index).
inline unsigned char pattern(int from_rank, int from_idx, int seq, size_t i) {
    return static_cast<unsigned char>((from_rank * 131 + from_idx * 31 + seq * 7 + i * 13) & 0xff);
}

inline int stream_create(weft_stream *s, bool shared = false) {
    weft_info info = WEFT_INFO_NULL;
    if (shared) {
        if (int rc = weft_info_create(&info)) return rc;
        if (int rc = weft_info_set(info, "weft_shared_endpoint", "true")) return rc;
    }
    int rc = weft_stream_create(info, s);
    if (info != WEFT_INFO_NULL) weft_info_free(&info);
    return rc;
}

}  // namespace streams_test

// main() for a suite: gtest flags, then --thread=..., then the environment.
#define STREAMS_TEST_MAIN(NAME, DEFAULT_LEVEL)                                        \
    int main(int argc, char **argv) {                                                 \
        ::testing::InitGoogleTest(&argc, argv);                                       \
        streams_test::required_level() = (DEFAULT_LEVEL);                             \
        streams_test::parse_args(&argc, argv);                                        \
        ::testing::AddGlobalTestEnvironment(new streams_test::environment(NAME));     \
        return RUN_ALL_TESTS();                                                       \
    }
