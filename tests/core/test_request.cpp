// Request layout: the fabric's context space before every request, as much as it asked for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "transport/request.hpp"

namespace {

uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }

// Pools made after request_space_set(wanted) lay out their requests for that space.
class RequestLayout : public ::testing::TestWithParam<size_t> {
  protected:
    void SetUp() override { weft::request_space_set(GetParam()); }
    void TearDown() override { weft::request_space_set(0); }
};

TEST(RequestSpace, RoundsToTheHotLineAndCaps) {
    EXPECT_EQ(weft::request_space_for(0), 16u);
    EXPECT_EQ(weft::request_space_for(16), 16u);
    EXPECT_EQ(weft::request_space_for(17), 80u);
    EXPECT_EQ(weft::request_space_for(32), 80u);    // FI_CONTEXT2
    EXPECT_EQ(weft::request_space_for(336), 336u);  // UCX 1.13: exactly, as before
    EXPECT_EQ(weft::request_space_for(337), 400u);
    EXPECT_EQ(weft::request_space_for(WEFT_FABRIC_CONTEXT_SPACE_MAX), weft::request_space_max);
    EXPECT_EQ(weft::request_space_for(1u << 20), weft::request_space_max);
    EXPECT_GE(weft::request_space_max, size_t{WEFT_FABRIC_CONTEXT_SPACE_MAX});
}

TEST_P(RequestLayout, PoolSlotsHoldTheSpaceAlignedAndApart) {
    const size_t space = weft::g_request_space;
    ASSERT_EQ(space, weft::request_space_for(GetParam()));
    weft::request_pool pool(weft::request_pool_max - 1, nullptr);
    std::vector<weft::request *> got;
    for (int i = 0; i < 600; ++i) {  // more than two chunks
        weft_request h = WEFT_REQUEST_NULL;
        weft::request *r = pool.alloc(&h);
        ASSERT_NE(r, nullptr);
        void *ctx = weft::request_context(*r);
        EXPECT_EQ(addr(ctx) % 64, 0u) << "the fabric's context must be 64-byte aligned";
        EXPECT_EQ(addr(r) - addr(ctx), space);
        EXPECT_EQ(weft::request_of_context(ctx), r);
        EXPECT_EQ(addr(&r->next_free) % 64, 0u) << "the receive fields start a cache line";
        EXPECT_EQ(pool.lookup(h), r);
        EXPECT_EQ(weft::request_lookup(h), r);
        got.push_back(r);
    }
    // No request overlaps another's space.
    std::sort(got.begin(), got.end());
    for (size_t i = 1; i < got.size(); ++i)
        EXPECT_GE(addr(weft::request_context(*got[i])), addr(got[i - 1]) + sizeof(weft::request));
    // The lightweight request (slot 0) has its space too.
    weft::request *lw = weft::request_lookup(pool.done_send_handle());
    ASSERT_NE(lw, nullptr);
    EXPECT_TRUE(lw->lightweight);
    EXPECT_EQ(addr(weft::request_context(*lw)) % 64, 0u);
    for (weft::request *r : got) pool.release(r);
}

TEST_P(RequestLayout, LocalRequestHasRoomForAnySpace) {
    auto lr = std::make_unique<weft::local_request>();
    weft::request &r = *lr;
    void *ctx = weft::request_context(r);
    EXPECT_EQ(addr(ctx) % 64, 0u);
    EXPECT_GE(addr(ctx), addr(lr.get())) << "the space must lie inside the local_request";
    EXPECT_EQ(addr(&r) - addr(lr.get()), weft::request_space_max);
    EXPECT_EQ(weft::request_of_context(ctx), &r);
}

INSTANTIATE_TEST_SUITE_P(Spaces, RequestLayout, ::testing::Values(0, 32, 100, 336, 400, 512, 4096));

}  // namespace
