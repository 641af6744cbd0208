// A fresh PGAS context on WEFT_COMM_WORLD for every test: one kernel per process, kernel id =
// world rank.  Most tests send around a ring (kernel s to kernel s+1 mod n), so with one
// process every message goes from the kernel to itself.
#pragma once
#include "pgas_harness.hpp"

namespace pgas_test {

class World : public ::testing::Test {
  protected:
    pgas_ctx ctx;
    virtual double limit_s() const { return 40; }
    virtual bool compat() const { return false; }
    void SetUp() override {
        watchdog::get().arm(current_test_name(), limit_s());
        step("p2p barrier before the test");
        p2p_barrier();
        step("weft_pgas_create on WEFT_COMM_WORLD");
        std::string why;
        int rc = ctx.create(WEFT_COMM_WORLD, 1, compat(), why);
        ASSERT_EQ(rc, 0) << "rank " << world_rank() << ": " << why;
        ASSERT_EQ(ctx.nkernels, world_size()) << "weft_pgas_num_kernels on WEFT_COMM_WORLD";
        ASSERT_EQ(kc().id, world_rank()) << "weft_pgas_kernel_id on WEFT_COMM_WORLD";
        step("test body");
    }
    void TearDown() override {
        step("weft_pgas_free");
        int rc = ctx.destroy();
        EXPECT_EQ(rc, 0) << "rank " << world_rank() << ": weft_pgas_free: " << err(rc);
        step("p2p barrier after the test");
        p2p_barrier();
        watchdog::get().disarm();
    }
    kernel_ctx &kc() { return ctx.k0(); }
    int me() { return kc().id; }
    int nk() { return kc().n; }
    static int next_of(int s, int n) { return (s + 1) % n; }
    static int prev_of(int s, int n) { return (s + n - 1) % n; }
};

}  // namespace pgas_test
