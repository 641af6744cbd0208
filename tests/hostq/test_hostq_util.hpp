// Helpers shared by the hostq tests: bounded polling instead of sleeping as synchronization.
#pragma once

#include "hostq.h"

#include <chrono>
#include <thread>

// Polls pred every 200 us until it holds (true) or timeout passes (false).
template <class Pred>
bool hostq_test_wait_until(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > deadline) return pred();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
}

constexpr uint64_t hostq_test_sync_us = 10u * 1000 * 1000;  // bound of every synchronize

// Destroys q once it is idle.  A queue still stuck after the bound (a wait that a broken
// implementation never releases) is left alive, so that the test fails instead of hanging.
inline bool hostq_test_destroy(hostq_t *q) {
    if (hostq_synchronize_timeout(q, hostq_test_sync_us) != HOSTQ_OK) return false;
    return hostq_destroy(q) == HOSTQ_OK;
}
