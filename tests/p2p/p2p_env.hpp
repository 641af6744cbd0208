// Shared fixture for tests that run in every process of a job (started by weftrun or an MPI
// launcher).  Tests are collective: each process runs the same list in the same order.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>

#include "weft/weft.h"

namespace p2p_test {

inline int rank() {
    int r = -1;
    weft_comm_rank(WEFT_COMM_WORLD, &r);
    return r;
}
inline int size() {
    int s = -1;
    weft_comm_size(WEFT_COMM_WORLD, &s);
    return s;
}

// A barrier made of point-to-point messages on a tag no test uses (collectives come later).
inline void barrier() {
    constexpr int tag = WEFT_TAG_UB;
    char token = 0;
    if (rank() == 0) {
        for (int i = 1; i < size(); ++i)
            ASSERT_EQ(weft_recv(&token, 1, WEFT_CHAR, WEFT_ANY_SOURCE, tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
        for (int i = 1; i < size(); ++i) ASSERT_EQ(weft_send(&token, 1, WEFT_CHAR, i, tag, WEFT_COMM_WORLD), 0);
    } else {
        ASSERT_EQ(weft_send(&token, 1, WEFT_CHAR, 0, tag, WEFT_COMM_WORLD), 0);
        ASSERT_EQ(weft_recv(&token, 1, WEFT_CHAR, 0, tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
    }
}

// Initializes Weft once for the whole program and finalizes after the last test.
class environment : public ::testing::Environment {
  public:
    void SetUp() override {
        ASSERT_EQ(weft_init(nullptr, nullptr), WEFT_SUCCESS);
        // The launcher tests (tests/launch/run-under.sh) check this line.
        weft_info info;
        char boot[64] = "?", fabric[64] = "?";
        int flag = 0;
        ASSERT_EQ(weft_get_runtime_info(&info), WEFT_SUCCESS);
        weft_info_get(info, "bootstrap", sizeof boot - 1, boot, &flag);
        weft_info_get(info, "fabric", sizeof fabric - 1, fabric, &flag);
        weft_info_free(&info);
        if (rank() == 0) std::printf("weft-test-p2p: %d processes, fabric=%s bootstrap=%s\n", size(), fabric, boot);
    }
    void TearDown() override { ASSERT_EQ(weft_finalize(), WEFT_SUCCESS); }
};

// Every test starts and ends with all processes in step.
class collective_test : public ::testing::Test {
  protected:
    void SetUp() override { barrier(); }
    void TearDown() override { barrier(); }
};

}  // namespace p2p_test
