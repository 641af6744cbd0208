// Attaching GPU queues to streams: what stream creation says for bad, unknown or
// device-less queues.  One process (singleton bootstrap).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "error_detail.hpp"
#include "hostq.h"
#include "weft/weft.h"

namespace {

using harness::detail;

class Attach : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { ASSERT_EQ(weft_init(nullptr, nullptr), WEFT_SUCCESS) << detail(); }
    static void TearDownTestSuite() { EXPECT_EQ(weft_finalize(), WEFT_SUCCESS) << detail(); }

    // weft_stream_create with info type and a raw value (already hex) or bytes.
    static int create(const char *type, const void *bytes, size_t size, weft_stream *s, const char *hex = nullptr) {
        weft_info info;
        weft_info_create(&info);
        weft_info_set(info, "type", type);
        if (hex != nullptr)
            weft_info_set(info, "value", hex);
        else if (bytes != nullptr)
            weft_info_set_hex(info, "value", bytes, size);
        int rc = weft_stream_create(info, s);
        weft_info_free(&info);
        return rc;
    }
};

TEST_F(Attach, HostQueueAttachesAndFrees) {
    if (std::getenv("WEFT_HOSTQ_NO_DEVICE")) GTEST_SKIP() << "this run has no hostq device";
    hostq_t *q = nullptr;
    ASSERT_EQ(hostq_create(&q), 0);
    weft_stream s = WEFT_STREAM_NULL;
    int rc = create("weft_hostq_t", &q, sizeof q, &s);
    ASSERT_EQ(rc, WEFT_SUCCESS) << detail();
    weft_comm c = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s, &c), WEFT_SUCCESS) << detail();
    // A one-process job: send to itself through the queue.
    int in = 5, out = 0;
    ASSERT_EQ(weft_irecv_enqueue(&out, 1, WEFT_INT, 0, 0, c, nullptr), WEFT_ERR_ARG);
    weft_request r;
    ASSERT_EQ(weft_irecv_enqueue(&out, 1, WEFT_INT, 0, 0, c, &r), WEFT_SUCCESS) << detail();
    ASSERT_EQ(weft_send_enqueue(&in, 1, WEFT_INT, 0, 0, c), WEFT_SUCCESS) << detail();
    weft_status st{};
    ASSERT_EQ(weft_wait_enqueue(&r, &st), WEFT_SUCCESS) << detail();
    ASSERT_EQ(hostq_synchronize(q), 0);
    EXPECT_EQ(out, 5);
    EXPECT_EQ(st.source, 0);
    for (int i = 0; i < 2000 && (rc = weft_comm_free(&c)) == WEFT_ERR_BUSY; ++i) usleep(1000);
    EXPECT_EQ(rc, WEFT_SUCCESS) << detail();
    EXPECT_EQ(weft_stream_free(&s), WEFT_SUCCESS) << detail();
    hostq_destroy(q);
}

TEST_F(Attach, BadValues) {
    if (std::getenv("WEFT_HOSTQ_NO_DEVICE")) GTEST_SKIP() << "this run has no hostq device";
    weft_stream s = WEFT_STREAM_NULL;
    uint32_t four = 1;
    EXPECT_EQ(create("weft_hostq_t", &four, sizeof four, &s), WEFT_ERR_INFO_VALUE);
    EXPECT_NE(detail().find("8 bytes"), std::string::npos) << detail();
    uintptr_t garbage = 0x1234;
    EXPECT_EQ(create("weft_hostq_t", &garbage, sizeof garbage, &s), WEFT_ERR_INFO_VALUE);
    EXPECT_NE(detail().find("hostq"), std::string::npos) << detail();
    EXPECT_EQ(create("weft_hostq_t", nullptr, 0, &s, "00zz"), WEFT_ERR_INFO_VALUE);
    EXPECT_NE(detail().find("hex"), std::string::npos) << detail();
    EXPECT_EQ(create("weft_hostq_t", nullptr, 0, &s), WEFT_ERR_INFO_VALUE);
    EXPECT_NE(detail().find("'value'"), std::string::npos) << detail();
    EXPECT_EQ(s, WEFT_STREAM_NULL);
}

TEST_F(Attach, UnknownTypeNamesThePluginSearch) {
    weft_stream s = WEFT_STREAM_NULL;
    uint64_t h = 1;
    EXPECT_EQ(create("fooStream_t", &h, sizeof h, &s), WEFT_ERR_PLUGIN);
    EXPECT_NE(detail().find("no queue plugin decodes info type 'fooStream_t'"), std::string::npos) << detail();
    EXPECT_NE(detail().find("WEFT_PLUGIN_PATH"), std::string::npos) << detail();
}

TEST_F(Attach, BadMechanismIsRefused) {
    setenv("WEFT_ENQUEUE", "spin", 1);
    weft_stream s = WEFT_STREAM_NULL;
    uint64_t h = 1;
    EXPECT_EQ(create("weft_hostq_t", &h, sizeof h, &s), WEFT_ERR_ARG);
    EXPECT_NE(detail().find("WEFT_ENQUEUE"), std::string::npos) << detail();
    unsetenv("WEFT_ENQUEUE");
}

// The GPU plugins built here have no driver or device on a machine without a GPU: stream
// creation says so; with a device, a null queue handle is refused instead.  Never success.
TEST_F(Attach, GpuQueuesWithoutDeviceOrWithNullHandle) {
    struct {
        const char *type;
        bool built;
    } cases[] = {{"cudaStream_t", WEFT_TEST_PLUGIN_CUDA != 0},
                 {"hipStream_t", WEFT_TEST_PLUGIN_HIP != 0},
                 {"ze_command_list_handle_t", WEFT_TEST_PLUGIN_SYCL != 0}};
    for (const auto &c : cases) {
        weft_stream s = WEFT_STREAM_NULL;
        uint64_t null_handle = 0;
        int rc = create(c.type, &null_handle, sizeof null_handle, &s);
        std::string why = detail();
        std::printf("%s: code %d: %s\n", c.type, rc, why.c_str());
        EXPECT_EQ(s, WEFT_STREAM_NULL);
        if (c.built) {
            // Here: no driver or no device.  On a GPU machine: the null handle is refused.
            EXPECT_TRUE(rc == WEFT_ERR_NO_DEVICE || rc == WEFT_ERR_INFO_VALUE) << c.type << ": code " << rc << ": " << why;
            if (rc == WEFT_ERR_NO_DEVICE) {
                EXPECT_NE(why.find("no"), std::string::npos) << why;
            }
        } else {
            EXPECT_EQ(rc, WEFT_ERR_PLUGIN) << c.type << ": " << why;
        }
    }
}

TEST_F(Attach, NoDeviceIsReported) {
    if (!std::getenv("WEFT_HOSTQ_NO_DEVICE")) GTEST_SKIP() << "run with WEFT_HOSTQ_NO_DEVICE=1";
    hostq_t *q = nullptr;
    ASSERT_EQ(hostq_create(&q), 0);
    weft_stream s = WEFT_STREAM_NULL;
    EXPECT_EQ(create("weft_hostq_t", &q, sizeof q, &s), WEFT_ERR_NO_DEVICE);
    EXPECT_NE(detail().find("WEFT_HOSTQ_NO_DEVICE"), std::string::npos) << detail();
    hostq_destroy(q);
}

}  // namespace
