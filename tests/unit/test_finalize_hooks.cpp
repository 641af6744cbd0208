// Finalize hooks (core/base/finalize_hooks.hpp): the order the shutdown path relies on.
#include <gtest/gtest.h>

#include <string>

#include "base/finalize_hooks.hpp"

namespace {

std::string g_ran;
void hook_a() { g_ran += "a"; }
void hook_b() { g_ran += "b"; }
void hook_c() { g_ran += "c"; }
void hook_d() { g_ran += "d"; }
void hook_adds_d() {
    g_ran += "x";
    weft::finalize_hook_add(hook_d, -50);
}

TEST(FinalizeHooks, RunHighestPriorityFirstOnceEachSplitAtTheFloor) {
    g_ran.clear();
    weft::finalize_hook_add(hook_c, -100);
    weft::finalize_hook_add(hook_a, 300);
    weft::finalize_hook_add(hook_b, 100);
    weft::finalize_hook_add(hook_a, 300);  // a second registration of one function is ignored
    weft::finalize_hooks_run(weft::finalize_prio_endpoints);
    EXPECT_EQ(g_ran, "ab");
    weft::finalize_hooks_run(weft::finalize_prio_endpoints);  // already run: nothing again
    EXPECT_EQ(g_ran, "ab");
    weft::finalize_hooks_run();
    EXPECT_EQ(g_ran, "abc");
    weft::finalize_hooks_run();
    EXPECT_EQ(g_ran, "abc");
}

TEST(FinalizeHooks, AHookMayRegisterAnotherForALaterPhase) {
    g_ran.clear();
    weft::finalize_hook_add(hook_adds_d, 200);
    weft::finalize_hooks_run(weft::finalize_prio_endpoints);
    EXPECT_EQ(g_ran, "x");
    weft::finalize_hooks_run();
    EXPECT_EQ(g_ran, "xd");
}

}  // namespace
