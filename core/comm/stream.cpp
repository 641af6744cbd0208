// Streams: creation on the endpoint pools, free, progress and progress threads.
#include "comm/stream.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/error.hpp"
#include "comm/errhandler.hpp"
#include "base/handle.hpp"
#include "base/info.hpp"
#include "transport/runtime.hpp"

namespace weft {
namespace {

// Never destroyed at exit (weft_finalize clears it): a program that exits without finalizing
// must not tear down streams under the enqueue thread or a stream's progress thread.
handle_table<stream> &streams() {
    static auto *table = new handle_table<stream>(handle_kind::stream, 1);
    return *table;
}

// Takes a free explicit endpoint, opening it on first use.
int take_explicit(vci *&out) {
    runtime &r = rt();
    std::lock_guard lock(r.pool_mutex);
    for (uint32_t i = 0; i < r.num_reserved; ++i) {
        if (r.explicit_taken[i]) continue;
        uint32_t index = r.num_implicit + i;
        auto &v = r.vcis[index];
        if (!v) {
            auto fresh = std::make_unique<vci>(index);
            if (int rc = vci_open(*fresh, &r.fabric.plugin.fabric_ops, r.fabric.fabric, false)) return rc;
            v = std::move(fresh);
        }
        r.explicit_taken[i] = true;
        out = v.get();
        return WEFT_SUCCESS;
    }
    return fail(WEFT_ERR_NO_ENDPOINT,
                "weft_stream_create: all %u reserved endpoints are taken by streams; raise WEFT_RESERVED_VCIS, free a "
                "stream, or pass info weft_shared_endpoint=true",
                r.num_reserved);
}

void give_back(vci *v) {
    runtime &r = rt();
    std::lock_guard lock(r.pool_mutex);
    r.explicit_taken[v->index - r.num_implicit] = false;
}

// Idle a while spinning (a message usually follows soon), then sleep on the fabric's fd.  The
// spin is as short as a waiting thread's before it yields (g_polls_before_yield): where the node
// runs more processes than cores, a progress thread that spun 256 polls after every wake-up kept
// the application threads it serves off the CPU (8-byte round trips with progress threads, 4
// processes x 2 streams on 2 cores beside a busy core: medians 300-700 us against 25-75 us
// without them).
void progress_loop(stream *s) {
    const unsigned spin_polls = std::min(256u, g_polls_before_yield);
    vci &v = *s->endpoint;
    int fabric_fd = -1;
    if (v.ops->ep_wait_fd != nullptr && v.ops->ep_arm != nullptr &&
        v.ops->ep_wait_fd(v.ep, &fabric_fd) != WEFT_PLUGIN_OK)
        fabric_fd = -1;
    unsigned idle = 0;
    while (!s->progress_stop.load(std::memory_order_acquire)) {
        if (v.progress() > 0) {
            idle = 0;
            continue;
        }
        if (++idle < spin_polls) continue;
        idle = 0;
        pollfd fds[2] = {{s->wake_fd, POLLIN, 0}, {fabric_fd, POLLIN, 0}};
        int nfds = 1;
        if (fabric_fd >= 0) {
            v.enter();
            int rc = v.ops->ep_arm(v.ep);
            v.leave();
            if (rc == WEFT_PLUGIN_ERR_AGAIN) continue;  // work arrived meanwhile
            nfds = rc == WEFT_PLUGIN_OK ? 2 : 1;
        }
        // Without a fabric fd, wake up often enough to poll; with one, the timeout only bounds
        // how stale a completion driven by another thread's post can get.
        poll(fds, static_cast<nfds_t>(nfds), fabric_fd >= 0 ? 100 : 1);
        if (fds[0].revents & POLLIN) {
            uint64_t drained;
            (void)!read(s->wake_fd, &drained, sizeof drained);
        }
    }
}

int check_stream(const char *fn, weft_stream handle, stream *&s) {
    if (int rc = runtime_check(fn)) return rc;
    s = stream_get(handle);
    if (s == nullptr) return fail(WEFT_ERR_STREAM, "%s: invalid stream handle 0x%x", fn, handle);
    return WEFT_SUCCESS;
}

void stop_thread(stream &s) {
    if (!s.progress_thread.joinable()) return;
    s.progress_stop.store(true, std::memory_order_release);
    uint64_t one = 1;
    (void)!write(s.wake_fd, &one, sizeof one);
    s.progress_thread.join();
    close(s.wake_fd);
    s.wake_fd = -1;
    // Back to the lock-free path, unless the endpoint is shared and needs its lock anyway.
    if (s.exclusive) s.endpoint->locking = false;
}

}  // namespace

stream *stream_get(weft_stream handle) { return streams().get(handle); }

stream_queue_hooks g_stream_queue_hooks;

void stream_finalize_all() {
    streams().for_each([](int, stream &s) { stop_thread(s); });
    streams().clear();
}

}  // namespace weft

using namespace weft;

namespace {
int stream_create_impl(weft_info info, weft_stream *out) {
    if (int rc = runtime_check("weft_stream_create")) return rc;
    if (out == nullptr) return fail(WEFT_ERR_ARG, "weft_stream_create: stream must not be NULL");
    auto s = std::make_shared<stream>();
    if (info != WEFT_INFO_NULL) {
        int n = 0;
        if (weft_info_get_nkeys(info, &n) != WEFT_SUCCESS)
            return fail(WEFT_ERR_INFO, "weft_stream_create: invalid info handle 0x%x", info);
        // Every key: queue plugins may read their own (weft_ze_context, ...).
        for (int i = 0; i < n; ++i) {
            char key[WEFT_MAX_INFO_KEY + 1];
            if (weft_info_get_nthkey(info, i, key) != WEFT_SUCCESS) continue;
            if (auto v = info_lookup(info, key)) s->hints[key] = *v;
        }
    }
    if (s->hints.count("type") != 0) {
        if (int rc = queue_attach(s->hints, s->queue)) return rc;
        s->queue->device_fabric = (rt().fabric.caps.flags & WEFT_FABRIC_CAP_DEVICE_MEMORY) != 0;
    }
    runtime &r = rt();
    if (auto it = s->hints.find("weft_shared_endpoint"); it != s->hints.end() && it->second == "true") {
        std::lock_guard lock(r.pool_mutex);
        s->endpoint = r.vcis[r.shared_next++ % r.num_implicit].get();
        s->exclusive = false;
    } else {
        if (int rc = take_explicit(s->endpoint)) return rc;
    }
    if (s->queue) {
        // The enqueue progress thread posts on this endpoint while the program may call
        // ordinary operations on it: take its lock.
        s->endpoint->locking = true;
        if (int rc = g_stream_queue_hooks.attach(*s)) {
            if (s->exclusive) give_back(s->endpoint);
            return rc;
        }
    }
    int h = streams().insert(s);
    if (h == 0) {
        if (s->queue) g_stream_queue_hooks.detach(*s);
        if (s->exclusive) give_back(s->endpoint);
        return fail(WEFT_ERR_NO_MEM, "weft_stream_create: too many streams");
    }
    *out = h;
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_stream_create(weft_info info, weft_stream *out) {
    return self_entry("weft_stream_create", [&] { return stream_create_impl(info, out); });
}

namespace {
int stream_free_impl(weft_stream *handle) {
    if (handle == nullptr) return fail(WEFT_ERR_ARG, "weft_stream_free: stream must not be NULL");
    stream *s;
    if (int rc = check_stream("weft_stream_free", *handle, s)) return rc;
    if (int n = s->comm_refs.load())
        return fail(WEFT_ERR_BUSY, "weft_stream_free: %d communicator(s) still use the stream; free them first", n);
    if (s->progress_thread.joinable())
        return fail(WEFT_ERR_BUSY,
                    "weft_stream_free: the stream's progress thread is running; call weft_stop_progress_thread");
    if (s->queue) {
        if (int rc = g_stream_queue_hooks.detach(*s)) return rc;
        if (s->exclusive) s->endpoint->locking = false;
    }
    if (s->exclusive) give_back(s->endpoint);
    streams().erase(*handle);
    *handle = WEFT_STREAM_NULL;
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_stream_free(weft_stream *handle) {
    return self_entry("weft_stream_free", [&] { return stream_free_impl(handle); });
}

namespace {
int stream_progress_impl(weft_stream handle) {
    stream *s;
    if (int rc = check_stream("weft_stream_progress", handle, s)) return rc;
    stream_use use(s);
    if (use.conflict()) return fail(WEFT_ERR_STREAM, "weft_stream_progress: another thread is using the same stream");
    int n = s->endpoint->progress();
    return n < 0 ? fail(plugin_error(n), "weft_stream_progress: the fabric's progress failed (code %d)", n)
                 : WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_stream_progress(weft_stream handle) {
    return self_entry("weft_stream_progress", [&] { return stream_progress_impl(handle); });
}

namespace {
int start_progress_thread_impl(weft_stream handle) {
    stream *s;
    if (int rc = check_stream("weft_start_progress_thread", handle, s)) return rc;
    if (s->progress_thread.joinable())
        return fail(WEFT_ERR_BUSY, "weft_start_progress_thread: the stream already has a progress thread");
    s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s->wake_fd < 0) return fail(WEFT_ERR_NO_MEM, "weft_start_progress_thread: eventfd: %s", strerror(errno));
    // From now on two threads share the endpoint: take its lock.
    s->endpoint->locking = true;
    s->progress_stop.store(false);
    try {
        s->progress_thread = std::thread(progress_loop, s);
    } catch (const std::system_error &e) {
        s->endpoint->locking = !s->exclusive && s->endpoint->locking;
        close(s->wake_fd);
        s->wake_fd = -1;
        return fail(WEFT_ERR_NO_MEM, "weft_start_progress_thread: cannot start a thread: %s", e.what());
    }
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_start_progress_thread(weft_stream handle) {
    return self_entry("weft_start_progress_thread", [&] { return start_progress_thread_impl(handle); });
}

namespace {
int stop_progress_thread_impl(weft_stream handle) {
    stream *s;
    if (int rc = check_stream("weft_stop_progress_thread", handle, s)) return rc;
    if (!s->progress_thread.joinable())
        return fail(WEFT_ERR_ARG, "weft_stop_progress_thread: the stream has no progress thread");
    stop_thread(*s);
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_stop_progress_thread(weft_stream handle) {
    return self_entry("weft_stop_progress_thread", [&] { return stop_progress_thread_impl(handle); });
}
