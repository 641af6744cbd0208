// A fresh PGAS context on WEFT_COMM_WORLD for every test: one kernel per process, kernel id =
// world rank.  Most tests send around a ring (kernel s to kernel s+1 mod n), so with one
// process every message goes from the kernel to itself.
#pragma once
#include "pgas_harness.hpp"

namespace pgas_test {

class World : public harness::collective_test<> {
  protected:
    pgas_ctx ctx;
    double limit_s() const override { return 40; }
    virtual bool compat() const { return false; }
    void SetUp() override {
        collective_test::SetUp();
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
        collective_test::TearDown();
    }
    kernel_ctx &kc() { return ctx.k0(); }
    int me() { return kc().id; }
    int nk() { return kc().n; }
    static int next_of(int s, int n) { return (s + 1) % n; }
    static int prev_of(int s, int n) { return (s + n - 1) % n; }
};

}  // namespace pgas_test
