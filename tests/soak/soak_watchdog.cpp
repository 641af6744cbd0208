#include "soak_watchdog.hpp"

#include <unistd.h>

#include <string>

#include "options.hpp"

namespace soak {

std::vector<std::unique_ptr<activity>> g_activity;
thread_local constinit activity *tl_activity = nullptr;

void watchdog::start(double seconds) {
    limit_ = seconds;
    seen_.assign(g_activity.size(), ~uint64_t(0));
    since_.assign(g_activity.size(), std::chrono::steady_clock::now());
    thread_.start(std::chrono::milliseconds(500), [this] { check(); });
}

void watchdog::check() {
    auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < g_activity.size(); ++i) {
        uint64_t c = g_activity[i]->changes.load();
        if (c != seen_[i] || g_activity[i]->idle.load()) {
            seen_[i] = c;
            since_[i] = now;
            continue;
        }
        if (std::chrono::duration<double>(now - since_[i]).count() > limit_) report(i);
    }
}

void watchdog::report(size_t stuck) {
    std::string out = "weft-soak: WATCHDOG rank " + std::to_string(g_rank) + " seed " + std::to_string(opt.seed) +
        ": " + (stuck + 1 == g_activity.size() ? "the main thread" : "thread " + std::to_string(stuck)) +
        " made no progress for " + std::to_string(int(limit_)) + " s; every thread's step:\n";
    for (size_t i = 0; i < g_activity.size(); ++i) {
        std::lock_guard<std::mutex> g(g_activity[i]->mu);
        out += "  " + (i + 1 == g_activity.size() ? std::string("main") : "thread " + std::to_string(i)) + ": " +
            g_activity[i]->what + (g_activity[i]->idle ? " (idle)" : "") + "\n";
    }
    ssize_t w = write(2, out.data(), out.size());
    (void)w;
    _exit(3);
}

}  // namespace soak
