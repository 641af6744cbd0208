// weft_info_*: every call, every error code, ordering, duplication, hex values, threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/info.hpp"
#include "weft/weft.h"

namespace {

std::string detail() {
    char buf[WEFT_MAX_ERROR_STRING + 1] = {};
    size_t len = 0;
    weft_error_detail(buf, &len);
    return buf;
}

// An info object freed at the end of the test.
struct InfoTest : ::testing::Test {
    weft_info info = WEFT_INFO_NULL;
    void SetUp() override { ASSERT_EQ(weft_info_create(&info), WEFT_SUCCESS); }
    void TearDown() override {
        if (info != WEFT_INFO_NULL) {
            EXPECT_EQ(weft_info_free(&info), WEFT_SUCCESS);
        }
    }
    std::string get(const char *key) {
        char buf[WEFT_MAX_INFO_VAL + 1];
        int flag = -1;
        EXPECT_EQ(weft_info_get(info, key, WEFT_MAX_INFO_VAL, buf, &flag), WEFT_SUCCESS);
        EXPECT_EQ(flag, 1) << key;
        return flag ? buf : "";
    }
};

}  // namespace

TEST_F(InfoTest, CreateGivesValidDistinctHandles) {
    weft_info other = WEFT_INFO_NULL;
    ASSERT_EQ(weft_info_create(&other), WEFT_SUCCESS);
    EXPECT_NE(other, WEFT_INFO_NULL);
    EXPECT_NE(other, info);
    int n = -1;
    EXPECT_EQ(weft_info_get_nkeys(other, &n), WEFT_SUCCESS);
    EXPECT_EQ(n, 0);
    EXPECT_EQ(weft_info_free(&other), WEFT_SUCCESS);
    EXPECT_EQ(other, WEFT_INFO_NULL);
}

TEST_F(InfoTest, SetGet) {
    ASSERT_EQ(weft_info_set(info, "type", "cudaStream_t"), WEFT_SUCCESS);
    EXPECT_EQ(get("type"), "cudaStream_t");
    ASSERT_EQ(weft_info_set(info, "empty", ""), WEFT_SUCCESS);
    EXPECT_EQ(get("empty"), "");
    size_t len = 99;
    int flag = 0;
    EXPECT_EQ(weft_info_get_valuelen(info, "type", &len, &flag), WEFT_SUCCESS);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(len, strlen("cudaStream_t"));
    EXPECT_EQ(weft_info_get_valuelen(info, "empty", &len, &flag), WEFT_SUCCESS);
    EXPECT_EQ(len, 0u);
}

TEST_F(InfoTest, MissingKeyGivesFlagZero) {
    char buf[16] = "unchanged";
    int flag = 1;
    EXPECT_EQ(weft_info_get(info, "nope", sizeof buf - 1, buf, &flag), WEFT_SUCCESS);
    EXPECT_EQ(flag, 0);
    EXPECT_STREQ(buf, "unchanged");
    size_t len = 0;
    flag = 1;
    EXPECT_EQ(weft_info_get_valuelen(info, "nope", &len, &flag), WEFT_SUCCESS);
    EXPECT_EQ(flag, 0);
}

TEST_F(InfoTest, GetTruncatesToValuelen) {
    ASSERT_EQ(weft_info_set(info, "k", "hello"), WEFT_SUCCESS);
    char buf[8];
    memset(buf, 'X', sizeof buf);
    int flag = 0;
    ASSERT_EQ(weft_info_get(info, "k", 3, buf, &flag), WEFT_SUCCESS);
    EXPECT_EQ(flag, 1);
    EXPECT_STREQ(buf, "hel");
    EXPECT_EQ(buf[4], 'X');  // at most valuelen + 1 bytes written
    memset(buf, 'X', sizeof buf);
    ASSERT_EQ(weft_info_get(info, "k", 0, buf, &flag), WEFT_SUCCESS);
    EXPECT_EQ(buf[0], '\0');
    EXPECT_EQ(buf[1], 'X');
    ASSERT_EQ(weft_info_get(info, "k", 5, buf, &flag), WEFT_SUCCESS);
    EXPECT_STREQ(buf, "hello");
}

TEST_F(InfoTest, ReplaceKeepsPosition) {
    ASSERT_EQ(weft_info_set(info, "a", "1"), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_set(info, "b", "2"), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_set(info, "c", "3"), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_set(info, "a", "replaced"), WEFT_SUCCESS);
    int n = 0;
    ASSERT_EQ(weft_info_get_nkeys(info, &n), WEFT_SUCCESS);
    EXPECT_EQ(n, 3);
    char key[WEFT_MAX_INFO_KEY + 1];
    ASSERT_EQ(weft_info_get_nthkey(info, 0, key), WEFT_SUCCESS);
    EXPECT_STREQ(key, "a");
    EXPECT_EQ(get("a"), "replaced");
}

TEST_F(InfoTest, ThousandKeysInInsertionOrder) {
    for (int i = 0; i < 1000; ++i) {
        std::string k = "key" + std::to_string(i), v = "value" + std::to_string(i * 7);
        ASSERT_EQ(weft_info_set(info, k.c_str(), v.c_str()), WEFT_SUCCESS);
    }
    int n = 0;
    ASSERT_EQ(weft_info_get_nkeys(info, &n), WEFT_SUCCESS);
    ASSERT_EQ(n, 1000);
    char key[WEFT_MAX_INFO_KEY + 1];
    for (int i = 0; i < 1000; ++i) {
        ASSERT_EQ(weft_info_get_nthkey(info, i, key), WEFT_SUCCESS);
        ASSERT_EQ(std::string(key), "key" + std::to_string(i));
        ASSERT_EQ(get(key), "value" + std::to_string(i * 7));
    }
    ASSERT_EQ(weft_info_delete(info, "key0"), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_delete(info, "key500"), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_get_nkeys(info, &n), WEFT_SUCCESS);
    EXPECT_EQ(n, 998);
    ASSERT_EQ(weft_info_get_nthkey(info, 0, key), WEFT_SUCCESS);
    EXPECT_STREQ(key, "key1");
    ASSERT_EQ(weft_info_get_nthkey(info, 499, key), WEFT_SUCCESS);
    EXPECT_STREQ(key, "key501");
}

TEST_F(InfoTest, Delete) {
    ASSERT_EQ(weft_info_set(info, "a", "1"), WEFT_SUCCESS);
    EXPECT_EQ(weft_info_delete(info, "a"), WEFT_SUCCESS);
    int flag = 1;
    size_t len;
    EXPECT_EQ(weft_info_get_valuelen(info, "a", &len, &flag), WEFT_SUCCESS);
    EXPECT_EQ(flag, 0);
    EXPECT_EQ(weft_info_delete(info, "a"), WEFT_ERR_INFO_NOKEY);
    EXPECT_NE(detail().find("'a'"), std::string::npos) << detail();
    EXPECT_EQ(weft_info_delete(info, "never"), WEFT_ERR_INFO_NOKEY);
}

TEST_F(InfoTest, DupIsIndependent) {
    ASSERT_EQ(weft_info_set(info, "a", "1"), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_set(info, "b", "2"), WEFT_SUCCESS);
    weft_info copy = WEFT_INFO_NULL;
    ASSERT_EQ(weft_info_dup(info, &copy), WEFT_SUCCESS);
    EXPECT_NE(copy, info);
    ASSERT_EQ(weft_info_set(info, "a", "changed"), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_set(info, "c", "3"), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_set(copy, "d", "4"), WEFT_SUCCESS);

    char buf[32];
    int flag = 0, n = 0;
    ASSERT_EQ(weft_info_get(copy, "a", 31, buf, &flag), WEFT_SUCCESS);
    EXPECT_STREQ(buf, "1");
    ASSERT_EQ(weft_info_get(copy, "c", 31, buf, &flag), WEFT_SUCCESS);
    EXPECT_EQ(flag, 0);
    ASSERT_EQ(weft_info_get(info, "d", 31, buf, &flag), WEFT_SUCCESS);
    EXPECT_EQ(flag, 0);
    ASSERT_EQ(weft_info_get_nkeys(copy, &n), WEFT_SUCCESS);
    EXPECT_EQ(n, 3);

    // The copy outlives the original.
    ASSERT_EQ(weft_info_free(&info), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_get(copy, "b", 31, buf, &flag), WEFT_SUCCESS);
    EXPECT_STREQ(buf, "2");
    EXPECT_EQ(weft_info_free(&copy), WEFT_SUCCESS);
}

TEST_F(InfoTest, KeyLimits) {
    std::string longest(WEFT_MAX_INFO_KEY, 'k');
    EXPECT_EQ(weft_info_set(info, longest.c_str(), "v"), WEFT_SUCCESS);
    char key[WEFT_MAX_INFO_KEY + 1];
    ASSERT_EQ(weft_info_get_nthkey(info, 0, key), WEFT_SUCCESS);
    EXPECT_EQ(std::string(key), longest);

    std::string too_long(WEFT_MAX_INFO_KEY + 1, 'k');
    EXPECT_EQ(weft_info_set(info, too_long.c_str(), "v"), WEFT_ERR_INFO_KEY);
    EXPECT_NE(detail().find("WEFT_MAX_INFO_KEY"), std::string::npos) << detail();
    EXPECT_EQ(weft_info_set(info, "", "v"), WEFT_ERR_INFO_KEY);
    char buf[8];
    int flag;
    size_t len;
    EXPECT_EQ(weft_info_get(info, "", 7, buf, &flag), WEFT_ERR_INFO_KEY);
    EXPECT_EQ(weft_info_get(info, too_long.c_str(), 7, buf, &flag), WEFT_ERR_INFO_KEY);
    EXPECT_EQ(weft_info_get_valuelen(info, "", &len, &flag), WEFT_ERR_INFO_KEY);
    EXPECT_EQ(weft_info_delete(info, ""), WEFT_ERR_INFO_KEY);
    EXPECT_EQ(weft_info_delete(info, too_long.c_str()), WEFT_ERR_INFO_KEY);
    EXPECT_EQ(weft_info_set_hex(info, "", buf, 1), WEFT_ERR_INFO_KEY);
    EXPECT_EQ(weft_info_get_hex(info, too_long.c_str(), buf, 1, &flag), WEFT_ERR_INFO_KEY);
}

TEST_F(InfoTest, ValueLimits) {
    std::string longest(WEFT_MAX_INFO_VAL, 'v');
    EXPECT_EQ(weft_info_set(info, "k", longest.c_str()), WEFT_SUCCESS);
    EXPECT_EQ(get("k"), longest);
    std::string too_long(WEFT_MAX_INFO_VAL + 1, 'v');
    EXPECT_EQ(weft_info_set(info, "k", too_long.c_str()), WEFT_ERR_INFO_VALUE);
    EXPECT_NE(detail().find("'k'"), std::string::npos) << detail();
    EXPECT_EQ(get("k"), longest);  // unchanged by the failed set
}

TEST_F(InfoTest, NullPointers) {
    char buf[8];
    int flag;
    size_t len;
    EXPECT_EQ(weft_info_create(nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_set(info, nullptr, "v"), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_set(info, "k", nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_get(info, nullptr, 7, buf, &flag), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_get(info, "k", 7, nullptr, &flag), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_get(info, "k", 7, buf, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_get_valuelen(info, nullptr, &len, &flag), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_get_valuelen(info, "k", nullptr, &flag), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_get_valuelen(info, "k", &len, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_delete(info, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_dup(info, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_free(nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_get_nkeys(info, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_get_nthkey(info, 0, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_set_hex(info, nullptr, buf, 1), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_set_hex(info, "k", nullptr, 1), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_get_hex(info, nullptr, buf, 1, &flag), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_get_hex(info, "k", nullptr, 1, &flag), WEFT_ERR_ARG);
    EXPECT_EQ(weft_info_get_hex(info, "k", buf, 1, nullptr), WEFT_ERR_ARG);
}

TEST_F(InfoTest, NthkeyOutOfRange) {
    char key[WEFT_MAX_INFO_KEY + 1];
    // weft.h: WEFT_ERR_INFO_NOKEY covers "n out of range".
    EXPECT_EQ(weft_info_get_nthkey(info, 0, key), WEFT_ERR_INFO_NOKEY);
    ASSERT_EQ(weft_info_set(info, "a", "1"), WEFT_SUCCESS);
    EXPECT_EQ(weft_info_get_nthkey(info, 1, key), WEFT_ERR_INFO_NOKEY);
    EXPECT_NE(detail().find("n = 1"), std::string::npos) << detail();
    EXPECT_EQ(weft_info_get_nthkey(info, -1, key), WEFT_ERR_INFO_NOKEY);
    EXPECT_EQ(weft_info_get_nthkey(info, INT32_MIN, key), WEFT_ERR_INFO_NOKEY);
    EXPECT_EQ(weft_info_get_nthkey(info, 0, key), WEFT_SUCCESS);
}

TEST(InfoHandles, NullFreedStaleAndForeignHandles) {
    weft_info a = WEFT_INFO_NULL;
    ASSERT_EQ(weft_info_create(&a), WEFT_SUCCESS);
    weft_info stale = a;
    ASSERT_EQ(weft_info_free(&a), WEFT_SUCCESS);
    EXPECT_EQ(a, WEFT_INFO_NULL);
    // Likely reuses the slot with a new generation: the old handle must still be refused.
    weft_info b = WEFT_INFO_NULL;
    ASSERT_EQ(weft_info_create(&b), WEFT_SUCCESS);

    char buf[8], key[WEFT_MAX_INFO_KEY + 1];
    int flag, n;
    size_t len;
    weft_info dup;
    for (weft_info bad : {stale, WEFT_INFO_NULL, static_cast<weft_info>(WEFT_COMM_WORLD),
                          static_cast<weft_info>(WEFT_INT), 12345, -1, 0x2fffffff}) {
        SCOPED_TRACE(bad);
        EXPECT_EQ(weft_info_set(bad, "k", "v"), WEFT_ERR_INFO);
        EXPECT_EQ(weft_info_get(bad, "k", 7, buf, &flag), WEFT_ERR_INFO);
        EXPECT_EQ(weft_info_get_valuelen(bad, "k", &len, &flag), WEFT_ERR_INFO);
        EXPECT_EQ(weft_info_delete(bad, "k"), WEFT_ERR_INFO);
        EXPECT_EQ(weft_info_dup(bad, &dup), WEFT_ERR_INFO);
        EXPECT_EQ(weft_info_get_nkeys(bad, &n), WEFT_ERR_INFO);
        EXPECT_EQ(weft_info_get_nthkey(bad, 0, key), WEFT_ERR_INFO);
        EXPECT_EQ(weft_info_set_hex(bad, "k", buf, 1), WEFT_ERR_INFO);
        EXPECT_EQ(weft_info_get_hex(bad, "k", buf, 1, &flag), WEFT_ERR_INFO);
        weft_info copy = bad;
        EXPECT_EQ(weft_info_free(&copy), WEFT_ERR_INFO);
        EXPECT_EQ(copy, bad);
        EXPECT_FALSE(weft::info_lookup(bad, "k").has_value());
    }
    EXPECT_EQ(weft_info_get_nkeys(b, &n), WEFT_SUCCESS);
    weft_info again = b;
    EXPECT_EQ(weft_info_free(&b), WEFT_SUCCESS);
    EXPECT_EQ(weft_info_free(&again), WEFT_ERR_INFO);  // double free
}

TEST_F(InfoTest, InfoLookup) {
    ASSERT_EQ(weft_info_set(info, "weft_fabric", "ofi,ucx"), WEFT_SUCCESS);
    auto v = weft::info_lookup(info, "weft_fabric");
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(*v, "ofi,ucx");
    EXPECT_FALSE(weft::info_lookup(info, "other").has_value());
    EXPECT_FALSE(weft::info_lookup(WEFT_INFO_NULL, "weft_fabric").has_value());
}

TEST_F(InfoTest, HexRoundTrip) {
    struct {
        uint64_t a;
        uint32_t b;
        uint16_t c;
    } in{0x0102030405060708ull, 0xdeadbeef, 0}, out{};
    ASSERT_EQ(weft_info_set_hex(info, "value", &in, sizeof in), WEFT_SUCCESS);
    std::string text = get("value");
    EXPECT_EQ(text.size(), 2 * sizeof in);
    EXPECT_EQ(text.substr(0, 2), "08");  // memory order on little-endian hosts
    int flag = 0;
    ASSERT_EQ(weft_info_get_hex(info, "value", &out, sizeof out, &flag), WEFT_SUCCESS);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(memcmp(&in, &out, sizeof in), 0);

    void *ptr = &flag, *back = nullptr;
    ASSERT_EQ(weft_info_set_hex(info, "ptr", &ptr, sizeof ptr), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_get_hex(info, "ptr", &back, sizeof back, &flag), WEFT_SUCCESS);
    EXPECT_EQ(back, ptr);

    // Zero bytes: an empty value.
    ASSERT_EQ(weft_info_set_hex(info, "none", nullptr, 0), WEFT_SUCCESS);
    EXPECT_EQ(get("none"), "");
    ASSERT_EQ(weft_info_get_hex(info, "none", nullptr, 0, &flag), WEFT_SUCCESS);
    EXPECT_EQ(flag, 1);
}

TEST_F(InfoTest, GetHexAcceptsMpichForms) {
    uint64_t v = 1;
    int flag = 0;
    ASSERT_EQ(weft_info_set(info, "z", "[8]"), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_get_hex(info, "z", &v, sizeof v, &flag), WEFT_SUCCESS);
    EXPECT_EQ(v, 0u);
    unsigned char b[4];
    ASSERT_EQ(weft_info_set(info, "m", "AB[2]cD"), WEFT_SUCCESS);
    ASSERT_EQ(weft_info_get_hex(info, "m", b, 4, &flag), WEFT_SUCCESS);
    EXPECT_EQ(b[0], 0xab);
    EXPECT_EQ(b[1], 0);
    EXPECT_EQ(b[2], 0);
    EXPECT_EQ(b[3], 0xcd);
}

TEST_F(InfoTest, GetHexErrors) {
    unsigned char out[8];
    int flag = -1;
    ASSERT_EQ(weft_info_get_hex(info, "absent", out, 8, &flag), WEFT_SUCCESS);
    EXPECT_EQ(flag, 0);

    ASSERT_EQ(weft_info_set_hex(info, "x", "1234567", 7), WEFT_SUCCESS);
    EXPECT_EQ(weft_info_get_hex(info, "x", out, 8, &flag), WEFT_ERR_INFO_VALUE);
    EXPECT_EQ(detail(), "key 'x': decodes to 7 bytes, expected 8");
    EXPECT_EQ(weft_info_get_hex(info, "x", out, 6, &flag), WEFT_ERR_INFO_VALUE);
    EXPECT_NE(detail().find("key 'x'"), std::string::npos) << detail();

    for (const char *bad : {"abc", "zz", "[", "[]", "[x]", "ab[3", "]", "0x11"}) {
        SCOPED_TRACE(bad);
        ASSERT_EQ(weft_info_set(info, "bad", bad), WEFT_SUCCESS);
        EXPECT_EQ(weft_info_get_hex(info, "bad", out, 1, &flag), WEFT_ERR_INFO_VALUE);
        EXPECT_NE(detail().find("key 'bad'"), std::string::npos) << detail();
        EXPECT_NE(detail().find("position"), std::string::npos) << detail();
    }
    // Hostile run lengths fail fast, as a size mismatch.
    ASSERT_EQ(weft_info_set(info, "huge", "[999999999999]"), WEFT_SUCCESS);
    EXPECT_EQ(weft_info_get_hex(info, "huge", out, 8, &flag), WEFT_ERR_INFO_VALUE);
    EXPECT_NE(detail().find("expected 8"), std::string::npos) << detail();
    // Even when the caller claims a huge buffer.
    ASSERT_EQ(weft_info_set(info, "huge", "[18446744073709551615]"), WEFT_SUCCESS);
    EXPECT_EQ(weft_info_get_hex(info, "huge", out, SIZE_MAX, &flag), WEFT_ERR_INFO_VALUE);
}

TEST_F(InfoTest, SetHexSizeLimit) {
    std::vector<unsigned char> data(WEFT_MAX_INFO_VAL / 2 + 1, 0x5a);
    EXPECT_EQ(weft_info_set_hex(info, "k", data.data(), data.size() - 1), WEFT_SUCCESS);
    EXPECT_EQ(weft_info_set_hex(info, "k", data.data(), data.size()), WEFT_ERR_INFO_VALUE);
    EXPECT_EQ(weft_info_set_hex(info, "k", data.data(), SIZE_MAX), WEFT_ERR_INFO_VALUE);
    std::vector<unsigned char> back(data.size() - 1);
    int flag = 0;
    ASSERT_EQ(weft_info_get_hex(info, "k", back.data(), back.size(), &flag), WEFT_SUCCESS);
    EXPECT_EQ(back[0], 0x5a);
    EXPECT_EQ(weft_info_get_hex(info, "k", back.data(), SIZE_MAX, &flag), WEFT_ERR_INFO_VALUE);
}

TEST(InfoThreads, ConcurrentUseOfOneObject) {
    weft_info info = WEFT_INFO_NULL;
    ASSERT_EQ(weft_info_create(&info), WEFT_SUCCESS);
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            char buf[64];
            int flag;
            for (int i = 0; i < 2000; ++i) {
                std::string k = "k" + std::to_string((t * 31 + i) % 50);
                if (weft_info_set(info, k.c_str(), "value") != WEFT_SUCCESS) ++errors;
                if (weft_info_get(info, k.c_str(), 63, buf, &flag) != WEFT_SUCCESS) ++errors;
                if (i % 7 == 0) weft_info_delete(info, k.c_str());  // may race: NOKEY is fine
                weft_info d;
                if (weft_info_dup(info, &d) != WEFT_SUCCESS || weft_info_free(&d) != WEFT_SUCCESS) ++errors;
            }
        });
    for (auto &th : threads) th.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(weft_info_free(&info), WEFT_SUCCESS);
}

TEST(InfoThreads, FreeWhileOthersUse) {
    // Threads using a handle that another frees get WEFT_ERR_INFO, never a crash.
    for (int round = 0; round < 50; ++round) {
        weft_info info = WEFT_INFO_NULL;
        ASSERT_EQ(weft_info_create(&info), WEFT_SUCCESS);
        weft_info shared = info;
        std::atomic<int> bad{0};
        std::thread user([&] {
            char buf[16];
            int flag;
            for (int i = 0; i < 200; ++i) {
                int rc = weft_info_set(shared, "k", "v");
                if (rc != WEFT_SUCCESS && rc != WEFT_ERR_INFO) ++bad;
                rc = weft_info_get(shared, "k", 15, buf, &flag);
                if (rc != WEFT_SUCCESS && rc != WEFT_ERR_INFO) ++bad;
            }
        });
        EXPECT_EQ(weft_info_free(&info), WEFT_SUCCESS);
        user.join();
        EXPECT_EQ(bad.load(), 0);
    }
}
