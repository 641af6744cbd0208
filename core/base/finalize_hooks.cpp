#include "base/finalize_hooks.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace weft {
namespace {

struct hook {
    void (*fn)();
    int priority;
};
std::mutex g_mutex;
std::vector<hook> g_hooks;

}  // namespace

void finalize_hook_add(void (*fn)(), int priority) {
    std::lock_guard lock(g_mutex);
    for (const hook &h : g_hooks)
        if (h.fn == fn) return;
    g_hooks.push_back({fn, priority});
}

void finalize_hooks_run(int floor) {
    std::vector<hook> due;
    {
        std::lock_guard lock(g_mutex);
        auto above = std::stable_partition(g_hooks.begin(), g_hooks.end(), [floor](const hook &h) { return h.priority <= floor; });
        due.assign(above, g_hooks.end());
        g_hooks.erase(above, g_hooks.end());
    }
    std::stable_sort(due.begin(), due.end(), [](const hook &a, const hook &b) { return a.priority > b.priority; });
    for (const hook &h : due) h.fn();  // without the lock: a hook may register another
}

}  // namespace weft
