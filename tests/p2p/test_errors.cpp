// Bad input: every call returns an error code with a detail, nothing crashes or hangs.
// One process; the phases (before init, initialized, after finalize) run in this order.
#include <gtest/gtest.h>

#include <string>

#include "error_detail.hpp"
#include "weft/weft.h"

namespace {

using harness::detail;

int x = 0;

TEST(A_BeforeInit, CallsReportNotInitialized) {
    int flag = 1;
    ASSERT_EQ(weft_initialized(&flag), 0);
    EXPECT_EQ(flag, 0);
    EXPECT_EQ(weft_send(&x, 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD), WEFT_ERR_NOT_INITIALIZED);
    EXPECT_NE(detail().find("weft_send"), std::string::npos) << detail();
    int r;
    EXPECT_EQ(weft_comm_rank(WEFT_COMM_WORLD, &r), WEFT_ERR_NOT_INITIALIZED);
    weft_request req = WEFT_REQUEST_NULL;
    EXPECT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), WEFT_ERR_NOT_INITIALIZED);
    EXPECT_EQ(weft_finalize(), WEFT_ERR_NOT_INITIALIZED);
    EXPECT_EQ(weft_init_thread(nullptr, nullptr, 7, &r), WEFT_ERR_ARG);
    EXPECT_EQ(weft_init_thread(nullptr, nullptr, WEFT_THREAD_SINGLE, nullptr), WEFT_ERR_ARG);
}

TEST(B_Initialized, InitTwiceIsAnError) {
    int provided = -1;
    ASSERT_EQ(weft_init_thread(nullptr, nullptr, WEFT_THREAD_MULTIPLE, &provided), 0) << detail();
    EXPECT_EQ(provided, WEFT_THREAD_MULTIPLE);
    EXPECT_EQ(weft_init(nullptr, nullptr), WEFT_ERR_ALREADY_INITIALIZED);
    int size = 0;
    ASSERT_EQ(weft_comm_size(WEFT_COMM_WORLD, &size), 0);
    EXPECT_EQ(size, 1);
}

TEST(B_Initialized, InvalidCommunicators) {
    const weft_comm bad[] = {WEFT_COMM_NULL, 0x10000fff, 0x7fffffff, -1, static_cast<weft_comm>(WEFT_INT)};
    for (weft_comm c : bad) {
        EXPECT_EQ(weft_send(&x, 1, WEFT_INT, 0, 0, c), WEFT_ERR_COMM) << std::hex << c;
        EXPECT_EQ(weft_recv(&x, 1, WEFT_INT, 0, 0, c, WEFT_STATUS_IGNORE), WEFT_ERR_COMM);
        int r;
        EXPECT_EQ(weft_comm_rank(c, &r), WEFT_ERR_COMM);
    }
    EXPECT_EQ(weft_comm_rank(WEFT_COMM_WORLD, nullptr), WEFT_ERR_ARG);
}

TEST(B_Initialized, RanksTagsCountsBuffers) {
    EXPECT_EQ(weft_send(&x, 1, WEFT_INT, 1, 0, WEFT_COMM_WORLD), WEFT_ERR_RANK);
    EXPECT_NE(detail().find("out of range"), std::string::npos) << detail();
    EXPECT_EQ(weft_send(&x, 1, WEFT_INT, -5, 0, WEFT_COMM_WORLD), WEFT_ERR_RANK);
    EXPECT_EQ(weft_send(&x, 1, WEFT_INT, WEFT_ANY_SOURCE, 0, WEFT_COMM_WORLD), WEFT_ERR_RANK);
    EXPECT_EQ(weft_send(&x, 1, WEFT_INT, 0, -1, WEFT_COMM_WORLD), WEFT_ERR_TAG);
    EXPECT_EQ(weft_send(&x, 1, WEFT_INT, 0, WEFT_TAG_UB + 1, WEFT_COMM_WORLD), WEFT_ERR_TAG);
    EXPECT_EQ(weft_recv(&x, 1, WEFT_INT, 0, -7, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), WEFT_ERR_TAG);
    EXPECT_EQ(weft_send(nullptr, 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD), WEFT_ERR_BUFFER);
    EXPECT_EQ(weft_send(&x, SIZE_MAX / 2, WEFT_INT, 0, 0, WEFT_COMM_WORLD), WEFT_ERR_COUNT);
    weft_request req;
    EXPECT_EQ(weft_isend(&x, 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_irecv(&x, 1, WEFT_INT, 3, 0, WEFT_COMM_WORLD, &req), WEFT_ERR_RANK);
}

TEST(B_Initialized, Datatypes) {
    EXPECT_EQ(weft_send(&x, 1, WEFT_DATATYPE_NULL, 0, 0, WEFT_COMM_WORLD), WEFT_ERR_TYPE);
    EXPECT_EQ(weft_send(&x, 1, 0x5000ffff, 0, 0, WEFT_COMM_WORLD), WEFT_ERR_TYPE);
    EXPECT_EQ(weft_send(&x, 1, WEFT_COMM_WORLD, 0, 0, WEFT_COMM_WORLD), WEFT_ERR_TYPE);
    weft_datatype t;
    ASSERT_EQ(weft_type_contiguous(2, WEFT_INT, &t), 0);
    int two[2];
    EXPECT_EQ(weft_send(two, 1, t, 0, 0, WEFT_COMM_WORLD), WEFT_ERR_TYPE);  // not committed
    EXPECT_NE(detail().find("commit"), std::string::npos) << detail();
    weft_datatype stale = t;
    ASSERT_EQ(weft_type_free(&t), 0);
    EXPECT_EQ(weft_send(two, 1, stale, 0, 0, WEFT_COMM_WORLD), WEFT_ERR_TYPE);  // freed
}

TEST(B_Initialized, Requests) {
    weft_request bad = 0x40000123;
    EXPECT_EQ(weft_wait(&bad, WEFT_STATUS_IGNORE), WEFT_ERR_REQUEST);
    int flag;
    EXPECT_EQ(weft_test(&bad, &flag, WEFT_STATUS_IGNORE), WEFT_ERR_REQUEST);
    EXPECT_EQ(weft_wait(nullptr, WEFT_STATUS_IGNORE), WEFT_ERR_ARG);
    // A completed request's handle is nulled; a copy of the old handle is then invalid.
    weft_request req, copy;
    ASSERT_EQ(weft_isend(&x, 1, WEFT_INT, 0, 1, WEFT_COMM_WORLD, &req), 0);
    copy = req;
    int y;
    ASSERT_EQ(weft_recv(&y, 1, WEFT_INT, 0, 1, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
    ASSERT_EQ(weft_wait(&req, WEFT_STATUS_IGNORE), 0);
    EXPECT_EQ(req, WEFT_REQUEST_NULL);
    EXPECT_EQ(weft_wait(&copy, WEFT_STATUS_IGNORE), WEFT_ERR_REQUEST);
    EXPECT_NE(detail().find("already completed"), std::string::npos) << detail();
    // Also once a new request took the freed slot (the low 17 bits): the stale copy must not reach it.
    weft_request fresh;
    ASSERT_EQ(weft_irecv(&y, 1, WEFT_INT, 0, 3, WEFT_COMM_WORLD, &fresh), 0);
    EXPECT_EQ(fresh & 0x1ffff, copy & 0x1ffff) << "the free list no longer reuses the slot: this check tests nothing";
    EXPECT_EQ(weft_wait(&copy, WEFT_STATUS_IGNORE), WEFT_ERR_REQUEST);
    EXPECT_NE(detail().find("stale copy"), std::string::npos) << detail();
    flag = 1;
    EXPECT_EQ(weft_test(&fresh, &flag, WEFT_STATUS_IGNORE), 0);
    EXPECT_EQ(flag, 0) << "the fresh receive must still be pending";
    ASSERT_EQ(weft_send(&x, 1, WEFT_INT, 0, 3, WEFT_COMM_WORLD), 0);
    ASSERT_EQ(weft_wait(&fresh, WEFT_STATUS_IGNORE), 0);
    // waitall refuses the whole array when one handle is bad, touching none.
    weft_request reqs[2];
    ASSERT_EQ(weft_irecv(&y, 1, WEFT_INT, 0, 2, WEFT_COMM_WORLD, &reqs[0]), 0);
    reqs[1] = 0x4000beef;
    EXPECT_EQ(weft_waitall(2, reqs, WEFT_STATUSES_IGNORE), WEFT_ERR_REQUEST);
    EXPECT_NE(reqs[0], WEFT_REQUEST_NULL);
    ASSERT_EQ(weft_send(&x, 1, WEFT_INT, 0, 2, WEFT_COMM_WORLD), 0);
    ASSERT_EQ(weft_wait(&reqs[0], WEFT_STATUS_IGNORE), 0);
    EXPECT_EQ(weft_waitall(1, nullptr, WEFT_STATUSES_IGNORE), WEFT_ERR_ARG);
    // The same beside a send that completed when posted (waitall's shortcut for those).
    ASSERT_EQ(weft_isend(&x, 1, WEFT_INT, 0, 4, WEFT_COMM_WORLD, &reqs[0]), 0);
    ASSERT_EQ(reqs[0] & 0xfffff, 0) << "not the lightweight handle of a send finished at once: this part tests nothing";
    reqs[1] = 0x4000beef;
    EXPECT_EQ(weft_waitall(2, reqs, WEFT_STATUSES_IGNORE), WEFT_ERR_REQUEST);
    EXPECT_NE(reqs[0], WEFT_REQUEST_NULL);
    ASSERT_EQ(weft_recv(&y, 1, WEFT_INT, 0, 4, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
    EXPECT_EQ(weft_waitall(1, reqs, WEFT_STATUSES_IGNORE), 0);
    EXPECT_EQ(reqs[0], WEFT_REQUEST_NULL);
    // Lightweight-looking bits of an endpoint that does not exist are refused.
    weft_request forged = 0x4ff00000;
    EXPECT_EQ(weft_waitall(1, &forged, WEFT_STATUSES_IGNORE), WEFT_ERR_REQUEST);
    EXPECT_EQ(forged, 0x4ff00000);
}

TEST(B_Initialized, ErrorStrings) {
    char text[WEFT_MAX_ERROR_STRING];
    size_t len = 0;
    for (int code = 0; code <= WEFT_ERR_LASTCODE; ++code) {
        ASSERT_EQ(weft_error_string(code, text, &len), 0);
        EXPECT_GT(len, 0u);
    }
    EXPECT_EQ(weft_error_string(12345, text, &len), WEFT_ERR_ARG);
    EXPECT_EQ(weft_error_string(0, nullptr, &len), WEFT_ERR_ARG);
}

TEST(C_Finalized, CallsReportFinalized) {
    ASSERT_EQ(weft_finalize(), 0);
    int flag = 0;
    weft_finalized(&flag);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(weft_send(&x, 1, WEFT_INT, 0, 0, WEFT_COMM_WORLD), WEFT_ERR_FINALIZED);
    EXPECT_EQ(weft_init(nullptr, nullptr), WEFT_ERR_FINALIZED);
    EXPECT_EQ(weft_finalize(), WEFT_ERR_FINALIZED);
    // Info still works after finalize.
    weft_info info;
    ASSERT_EQ(weft_info_create(&info), 0);
    ASSERT_EQ(weft_info_free(&info), 0);
}

}  // namespace
