// PGAS contexts: creation, kernels, counters, barrier and freeing (entry points).
#include "pgas/pgas.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "base/error.hpp"
#include "comm/errhandler.hpp"
#include "base/finalize_hooks.hpp"
#include "base/handle.hpp"
#include "base/info.hpp"
#include "base/match.hpp"
#include "transport/peer_failure.hpp"
#include "transport/runtime.hpp"

namespace weft {

namespace {

handle_table<am_kernel> &kernels_table() {
    static handle_table<am_kernel> t(handle_kind::pgas, 1);
    return t;
}

// Live contexts, so that weft_finalize can release what the application did not free.
std::mutex g_ctx_mutex;
std::vector<std::shared_ptr<pgas_ctx>> g_contexts;

void consume(std::atomic<uint64_t> &a, uint64_t by) {
    a.store(a.load(std::memory_order_relaxed) - by, std::memory_order_relaxed);
}

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

int make_kernel(pgas_ctx &x, size_t li, std::shared_ptr<am_kernel> &out) {
    auto k = std::make_shared<am_kernel>();
    comm &c = *x.c;
    k->ctx = &x;
    k->li = li;
    k->v = c.local[li];
    k->s = c.local_streams[li];
    k->id = x.id_of[c.remote_offset[static_cast<size_t>(c.rank)] + li];
    size_t seg = round_up(x.segment_size == 0 ? 1 : x.segment_size, 64);
    k->segment = static_cast<char *>(std::aligned_alloc(64, seg));
    size_t packets = size_t{am_rx_slots + am_tx_slots} * am_max_packet;
    k->packet_memory = static_cast<char *>(std::aligned_alloc(64, packets));
    if (k->segment == nullptr || k->packet_memory == nullptr) {
        std::free(k->segment);
        std::free(k->packet_memory);
        k->segment = k->packet_memory = nullptr;
        return fail(WEFT_ERR_NO_MEM,
                    "weft_pgas_create: cannot allocate a %zu-byte segment and %zu bytes of packet buffers",
                    x.segment_size, packets);
    }
    std::memset(k->segment, 0, seg);
    k->rx = std::make_unique<am_rx[]>(am_rx_slots);
    k->tx = std::make_unique<am_tx[]>(am_tx_slots);
    for (unsigned i = 0; i < am_rx_slots; ++i)
        k->rx[i].buf = reinterpret_cast<uint64_t *>(k->packet_memory + size_t{i} * am_max_packet);
    for (unsigned i = 0; i < am_tx_slots; ++i)
        k->tx[i].buf = reinterpret_cast<uint64_t *>(k->packet_memory + size_t{am_rx_slots + i} * am_max_packet);
    out = std::move(k);
    return WEFT_SUCCESS;
}

// Packets hardware kernels send this kernel arrive through the fabric's kernel binding, as
// messages from rank am_hw_rank with the sender's kernel id as the stream index.
int bind_kernel(am_kernel &k) {
    vci &v = *k.v;
    uint64_t base = match_bits(k.ctx->context, 0, am_hw_rank, static_cast<uint32_t>(k.li) << am_tag_shift);
    int rc = v.ops->kernel_bind(v.ep, k.id, base, match_index_shift);
    if (rc != WEFT_PLUGIN_OK)
        return fail(plugin_error(rc),
                    "weft_pgas_create: the fabric cannot deliver kernel %u's packets (code %d; "
                    "are the hardware nodes of WEFT_GALAPAGOS_CLUSTER running?)",
                    k.id, rc);
    return WEFT_SUCCESS;
}

// Posts the kernel's receives and links it to its endpoint.
int start_kernel(am_kernel &k) {
    vci &v = *k.v;
    v.enter();
    int rc = WEFT_SUCCESS;
    for (unsigned i = 0; i < am_rx_slots && rc == WEFT_SUCCESS; ++i) rc = am_post_rx(k, k.rx[i]);
    if (rc == WEFT_SUCCESS && k.ctx->has_hardware) rc = bind_kernel(k);
    if (rc == WEFT_SUCCESS) {
        // PGAS takes one of the endpoint's hooks (vci_max_hooks counts them).
        vci_hook *hook = vci_hook_find(v, am_progress_hook);
        if (hook == nullptr) hook = vci_hook_add(v, vci_hook{am_progress_hook, nullptr, nullptr});
        k.next_on_vci = static_cast<am_kernel *>(hook->state);
        hook->state = &k;
    }
    v.leave();
    return rc;
}

// Unlinks the kernel, withdraws its receives and waits for its sends; frees its memory.
void stop_kernel(am_kernel &k, bool linked) {
    vci &v = *k.v;
    v.enter();
    if (linked && k.ctx->has_hardware) v.ops->kernel_unbind(v.ep, k.id);
    if (vci_hook *hook = linked ? vci_hook_find(v, am_progress_hook) : nullptr) {
        auto *head = static_cast<am_kernel *>(hook->state);
        for (am_kernel **p = &head; *p != nullptr; p = &(*p)->next_on_vci)
            if (*p == &k) {
                *p = k.next_on_vci;
                break;
            }
        hook->state = head;  // null once the last kernel left: the endpoint drops the hook
    }
    auto withdraw = [&](request &r) {
        if (!r.complete.load(std::memory_order_acquire) && v.ops->cancel(v.ep, request_context(r)) != WEFT_PLUGIN_OK)
            log(WEFT_LOG_DEBUG, "pgas kernel %u: a receive could not be cancelled", k.id);
    };
    if (linked) {
        for (unsigned i = 0; i < am_rx_slots; ++i) withdraw(k.rx[i].r);
        for (auto &e : k.rndv)
            if (e->active) withdraw(e->r);
    }
    // Cancellation completes through progress; a fabric whose peer vanished still returns
    // (ep_progress never blocks), and a bounded number of rounds keeps finalize from hanging.
    auto settled = [&] {
        if (linked) {
            for (unsigned i = 0; i < am_rx_slots; ++i)
                if (!k.rx[i].r.complete.load(std::memory_order_acquire)) return false;
            for (auto &e : k.rndv)
                if (e->active && !e->r.complete.load(std::memory_order_acquire)) return false;
        }
        for (unsigned i = 0; i < am_tx_slots; ++i)
            if (k.tx[i].busy && !k.tx[i].r.complete.load(std::memory_order_acquire)) return false;
        return true;
    };
    bool done = false;
    for (int round = 0; round < 1000000 && !(done = settled()); ++round) v.ops->ep_progress(v.ep);
    v.leave();
    if (!done) {
        // Requests the fabric still references: leak the buffers rather than free them under it.
        log(WEFT_LOG_WARN, "pgas kernel %u: operations still pending at free; their buffers are not released", k.id);
        return;
    }
    for (unsigned i = 0; i < am_tx_slots; ++i) std::free(k.tx[i].heap);
    for (auto &e : k.rndv) std::free(e->staging);
    std::free(k.segment);
    std::free(k.packet_memory);
    k.segment = k.packet_memory = nullptr;
}

void release_ctx(pgas_ctx &x, bool linked) {
    for (auto &k : x.kernels) {
        stop_kernel(*k, linked);
        kernels_table().erase(k->handle);
    }
    x.kernels.clear();
}

void forget_ctx(pgas_ctx *x) {
    std::lock_guard lock(g_ctx_mutex);
    for (size_t i = 0; i < g_contexts.size(); ++i)
        if (g_contexts[i].get() == x) {
            g_contexts.erase(g_contexts.begin() + static_cast<long>(i));
            return;
        }
}

int check_kernel(const char *fn, weft_pgas h, am_kernel *&k) {
    if (int rc = runtime_check(fn)) return rc;
    k = kernels_table().get(h);
    if (k == nullptr) return fail(WEFT_ERR_ARG, "%s: invalid PGAS kernel handle 0x%x", fn, h);
    return WEFT_SUCCESS;
}

// PGAS calls report to the error handler of their context's communicator (the dup of the one
// given to weft_pgas_create, which inherited its handler); an invalid kernel handle to
// WEFT_COMM_SELF's.  Looked up only on error: the message paths pay nothing.
weft_comm pgas_comm_of(weft_pgas h) {
    am_kernel *k = kernels_table().get(h);
    return k != nullptr && k->ctx != nullptr ? k->ctx->dup : WEFT_COMM_SELF;
}
__attribute__((cold, noinline)) int pgas_error_raise(weft_pgas h, int code, const char *fn) {
    return comm_error_raise(pgas_comm_of(h), code, fn);
}

int not_in_handler(const char *fn) {
    if (am_in_handler())
        return fail(WEFT_ERR_ARG, "%s: a handler may only reply (weft_am_reply_short); send requests from the kernel",
                    fn);
    return WEFT_SUCCESS;
}

int conflict(const char *fn) {
    return fail(WEFT_ERR_STREAM, "%s: another thread is using the kernel's stream; a kernel is a serial context", fn);
}

// Progresses k's endpoint until done() holds, or until a process of the context has died
// (what is awaited may then never come: replies, counters and barriers have no sender
// recorded, so any death ends the wait with WEFT_ERR_PROC_FAILED).
template <class Done>
int kernel_wait(const char *fn, am_kernel &k, Done &&done) {
    if (int rc = not_in_handler(fn)) return rc;
    stream_use use(k.s);
    if (use.conflict()) return conflict(fn);
    const comm &c = *k.ctx->c;
    bool dead = false;
    vci_progress_until(*k.v, [&] {
        if (done()) return true;
        dead = __builtin_expect(g_failure_epoch.load(std::memory_order_relaxed) != 0, 0) && group_has_failed(c);
        return dead;
    });
    if (dead && !done()) {
        int r = group_first_failed(c);
        return fail_proc(fn, r, c.world_ranks[static_cast<size_t>(r)]);
    }
    return WEFT_SUCCESS;
}

// The getters: a valid kernel and a non-null output, then one value.
template <class T, class Get>
int kernel_query(const char *fn, const char *what, weft_pgas h, T *out, Get get) {
    am_kernel *k;
    if (int rc = check_kernel(fn, h, k)) return rc;
    if (out == nullptr) return fail(WEFT_ERR_ARG, "%s: %s must not be NULL", fn, what);
    *out = get(*k);
    return WEFT_SUCCESS;
}

bool region_ok(uint64_t offset, uint64_t length, uint64_t size) { return offset <= size && length <= size - offset; }

}  // namespace

void pgas_finalize_all() {
    std::vector<std::shared_ptr<pgas_ctx>> all;
    {
        std::lock_guard lock(g_ctx_mutex);
        all.swap(g_contexts);
    }
    for (auto &x : all) release_ctx(*x, true);
}

// ------------------------------------------------------------------ message entry points ----
namespace {

struct am_call {
    am_kernel *k = nullptr;
    am_packet p;
};

// What every message and reply checks of its handler and arguments.
int check_handler_args(const char *fn, unsigned handler, const uint64_t *args, unsigned nargs) {
    if (handler >= WEFT_AM_MAX_HANDLERS || handler == am_h_barrier || handler == am_h_reserved)
        return fail(WEFT_ERR_ARG, "%s: handler %u is not 0..2 or %d..%d", fn, handler, WEFT_AM_HANDLER_FIRST,
                    WEFT_AM_MAX_HANDLERS - 1);
    if (nargs > WEFT_AM_MAX_ARGS)
        return fail(WEFT_ERR_ARG, "%s: %u arguments; at most %d", fn, nargs, WEFT_AM_MAX_ARGS);
    if (nargs != 0 && args == nullptr) return fail(WEFT_ERR_ARG, "%s: args is NULL but nargs is %u", fn, nargs);
    if (handler == WEFT_AM_H_ADD && nargs == 0)
        return fail(WEFT_ERR_ARG, "%s: WEFT_AM_H_ADD needs the addend in args[0]", fn);
    return WEFT_SUCCESS;
}

int prepare(const char *fn, weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
            unsigned flags, uint8_t kind, am_call &call) {
    if (int rc = check_kernel(fn, h, call.k)) return rc;
    if (int rc = not_in_handler(fn)) return rc;
    pgas_ctx &x = *call.k->ctx;
    if (dst < 0 || static_cast<uint32_t>(dst) >= x.nkernels)
        return fail(WEFT_ERR_RANK, "%s: kernel %d is outside 0..%u", fn, dst, x.nkernels - 1);
    if (int r = x.kernel_rank[static_cast<size_t>(dst)];
        r >= 0 && peer_failed(x.c->world_ranks[static_cast<size_t>(r)]))
        return fail_proc(fn, r, x.c->world_ranks[static_cast<size_t>(r)]);
    if (int rc = check_handler_args(fn, handler, args, nargs)) return rc;
    if ((flags & ~WEFT_AM_ASYNC) != 0) return fail(WEFT_ERR_ARG, "%s: unknown flags 0x%x", fn, flags & ~WEFT_AM_ASYNC);
    call.p.type = static_cast<uint8_t>(kind | ((flags & WEFT_AM_ASYNC) ? am_async : 0));
    call.p.dst = static_cast<uint32_t>(dst);
    call.p.handler = handler;
    call.p.nargs = nargs;
    call.p.args = args;
    return WEFT_SUCCESS;
}

// A get's handler runs here when the data arrives: it must exist, or the data would be dropped.
int check_local_handler(const char *fn, const am_call &call) {
    unsigned h = call.p.handler;
    if (h >= WEFT_AM_HANDLER_FIRST && call.k->handlers[h].fn == nullptr)
        return fail(WEFT_ERR_ARG,
                    "%s: handler %u runs on this kernel when the data arrives, and none is registered there", fn, h);
    return WEFT_SUCCESS;
}

int send(const char *fn, am_call &call, const am_source &src) {
    am_kernel &k = *call.k;
    stream_use use(k.s);
    if (use.conflict()) return conflict(fn);
    vci &v = *k.v;
    am_tx *waiter = nullptr;
    v.enter();
    int rc = am_send(k, call.p, src, &waiter);
    // Answer what arrived meanwhile (replies, peers' requests): a kernel that only sends
    // would otherwise let its peers' replies back up until their sends stall.
    if (rc == WEFT_SUCCESS) v.progress_held();
    v.leave();
    if (rc == WEFT_SUCCESS && waiter != nullptr) {
        // A large payload from the caller's buffer: it must have left before the call returns.
        vci_progress_until(v, [&] { return waiter->r.complete.load(std::memory_order_acquire); });
        v.enter();
        waiter->held = false;
        v.leave();
    }
    return rc;
}

int check_length(const char *fn, const am_call &call, uint64_t length, uint64_t max) {
    if (length > max)
        return fail(WEFT_ERR_COUNT, "%s: %llu bytes; the most is %llu (weft_am_max_%s)", fn,
                    static_cast<unsigned long long>(length), static_cast<unsigned long long>(max),
                    max == am_max_inline && call.p.kind() == am_kind_medium ? "medium" : "long");
    return WEFT_SUCCESS;
}

int check_region(const char *fn, const char *what, const am_call &call, uint64_t offset, uint64_t length) {
    uint64_t size = call.k->ctx->segment_size;
    if (!region_ok(offset, length, size))
        return fail(WEFT_ERR_ARG, "%s: %s [%llu, +%llu) lies outside the %llu-byte segment", fn, what,
                    static_cast<unsigned long long>(offset), static_cast<unsigned long long>(length),
                    static_cast<unsigned long long>(size));
    return WEFT_SUCCESS;
}

int to_stride(const char *fn, const char *what, const am_call &call, const weft_am_stride *s, am_stride_desc &d,
              uint64_t &total) {
    if (s == nullptr) return fail(WEFT_ERR_ARG, "%s: the %s region is NULL", fn, what);
    d = {s->offset, s->stride, s->block_size, s->block_count};
    uint64_t extent;
    if (__builtin_mul_overflow(d.block_size, d.block_count, &total) || !am_stride_extent(d, extent))
        return fail(WEFT_ERR_ARG, "%s: the %s region's size overflows", fn, what);
    if (d.block_count > 1 && d.stride < d.block_size)
        return fail(WEFT_ERR_ARG, "%s: the %s region's blocks overlap (stride %zu < block size %zu)", fn, what,
                    s->stride, s->block_size);
    return check_region(fn, what, call, d.offset, extent);
}

}  // namespace
}  // namespace weft

using namespace weft;

namespace {

// Kernel ids: rank-major over the communicator, unless the fabric has a cluster description
// (a Galapagos cluster file), which numbers every kernel, software and hardware, itself.  Its
// software kernels of each process are that process's local kernels in id order.
int layout_kernels(pgas_ctx &x) {
    comm &c = *x.c;
    for (int r = 0; r < c.size; ++r)
        for (uint32_t i = c.remote_offset[static_cast<size_t>(r)]; i < c.remote_offset[static_cast<size_t>(r) + 1];
             ++i) {
            x.kernel_rank.push_back(r);
            x.kernel_index.push_back(static_cast<uint8_t>(i - c.remote_offset[static_cast<size_t>(r)]));
            x.id_of.push_back(i);
        }
    const weft_fabric_ops_v1_t &ops = rt().fabric.plugin.fabric_ops;
    size_t count = 0;
    if (ops.kernel_table == nullptr || ops.kernel_table(rt().fabric.fabric, nullptr, 0, &count) != WEFT_PLUGIN_OK ||
        count == 0)
        return WEFT_SUCCESS;
    std::vector<weft_fabric_kernel_t> table(count);
    if (ops.kernel_table(rt().fabric.fabric, table.data(), count, &count) != WEFT_PLUGIN_OK || count != table.size())
        return fail(WEFT_ERR_INTERNAL, "weft_pgas_create: the fabric's kernel table changed while read");
    for (size_t i = 0; i < count; ++i)
        if (table[i].id != i)
            return fail(WEFT_ERR_ARG,
                        "weft_pgas_create: the cluster file (WEFT_GALAPAGOS_CLUSTER) must number its "
                        "kernels 0..%zu without gaps; kernel %zu is missing",
                        count - 1, i);
    std::vector<int> comm_rank_of_world(static_cast<size_t>(rt().world_size), -1);
    for (int r = 0; r < c.size; ++r) comm_rank_of_world[static_cast<size_t>(c.world_ranks[static_cast<size_t>(r)])] = r;
    std::vector<int> rank(count, -1);
    std::vector<uint8_t> index(count, 0);
    std::vector<uint32_t> id_of(x.id_of.size(), 0), seen(static_cast<size_t>(c.size), 0);
    bool hardware = false;
    for (size_t id = 0; id < count; ++id) {
        int w = table[id].world_rank;
        if (w < 0) {
            hardware = true;
            continue;
        }
        int r = w < rt().world_size ? comm_rank_of_world[static_cast<size_t>(w)] : -1;
        if (r < 0)
            return fail(WEFT_ERR_ARG,
                        "weft_pgas_create: the cluster file (WEFT_GALAPAGOS_CLUSTER) puts kernel %zu on "
                        "world rank %d, which is not in the communicator",
                        id, w);
        uint32_t have = c.remote_offset[static_cast<size_t>(r) + 1] - c.remote_offset[static_cast<size_t>(r)];
        uint32_t li = seen[static_cast<size_t>(r)]++;
        if (li >= have)
            return fail(WEFT_ERR_ARG,
                        "weft_pgas_create: the cluster file (WEFT_GALAPAGOS_CLUSTER) gives rank %d more "
                        "kernels than the %u it attached",
                        r, have);
        rank[id] = r;
        index[id] = static_cast<uint8_t>(li);
        id_of[c.remote_offset[static_cast<size_t>(r)] + li] = static_cast<uint32_t>(id);
    }
    for (int r = 0; r < c.size; ++r) {
        uint32_t have = c.remote_offset[static_cast<size_t>(r) + 1] - c.remote_offset[static_cast<size_t>(r)];
        if (seen[static_cast<size_t>(r)] != have)
            return fail(WEFT_ERR_ARG,
                        "weft_pgas_create: the cluster file (WEFT_GALAPAGOS_CLUSTER) gives rank %d %u "
                        "kernel(s); it attached %u",
                        r, seen[static_cast<size_t>(r)], have);
    }
    x.nkernels = static_cast<uint32_t>(count);
    x.kernel_rank = std::move(rank);
    x.kernel_index = std::move(index);
    x.id_of = std::move(id_of);
    x.has_hardware = hardware;
    // A GAScore takes Shoal's packets only: no rendezvous, so a Long fits one packet.
    if (hardware) x.max_long = std::min(x.max_long, am_max_inline);
    return WEFT_SUCCESS;
}

}  // namespace

namespace {
int pgas_create_impl(weft_comm handle, size_t segment_size, weft_info info, weft_pgas *out) {
    if (int rc = runtime_check("weft_pgas_create")) return rc;
    if (out == nullptr) return fail(WEFT_ERR_ARG, "weft_pgas_create: pgas must not be NULL");
    if (comm_get(handle) == nullptr)
        return fail(WEFT_ERR_COMM, "weft_pgas_create: invalid communicator handle 0x%x", handle);
    bool shoal_compat = false;
    if (info != WEFT_INFO_NULL) {
        int n;
        if (weft_info_get_nkeys(info, &n) != WEFT_SUCCESS)
            return fail(WEFT_ERR_INFO, "weft_pgas_create: invalid info handle 0x%x", info);
        if (auto v = info_lookup(info, "weft_am_shoal_compat")) {
            if (*v != "true" && *v != "false")
                return fail(WEFT_ERR_INFO_VALUE,
                            "weft_pgas_create: info weft_am_shoal_compat is '%s'; use true or false", v->c_str());
            shoal_compat = *v == "true";
        }
    }
    auto x = std::make_shared<pgas_ctx>();
    if (int rc = weft_comm_dup(handle, &x->dup)) return rc;
    comm &c = *comm_get(x->dup);
    x->c = &c;
    x->context = c.context_id;
    x->segment_size = segment_size;
    x->shoal_compat = shoal_compat;
    x->nkernels = c.remote_offset[static_cast<size_t>(c.size)];
    uint64_t max_message = rt().fabric.caps.max_message_size ? rt().fabric.caps.max_message_size : UINT32_MAX;
    x->max_long = static_cast<size_t>(std::min<uint64_t>(max_message, UINT32_MAX));
    int rc = WEFT_SUCCESS;
    if (x->nkernels > am_max_kernels)
        rc = fail(WEFT_ERR_ARG, "weft_pgas_create: %u kernels; kernel ids are 16 bits (at most %u)", x->nkernels,
                  am_max_kernels);
    else if (c.local.empty())
        rc = fail(WEFT_ERR_STREAM,
                  "weft_pgas_create: this process attached no stream to the multiplex communicator, "
                  "so it has no kernel");
    if (rc == WEFT_SUCCESS) rc = layout_kernels(*x);
    for (size_t li = 0; li < c.local.size() && rc == WEFT_SUCCESS; ++li) {
        std::shared_ptr<am_kernel> k;
        rc = make_kernel(*x, li, k);
        if (rc != WEFT_SUCCESS) break;
        k->handle = kernels_table().insert(k);
        if (k->handle == 0) {
            rc = fail(WEFT_ERR_NO_MEM, "weft_pgas_create: too many PGAS kernels");
            std::free(k->segment);
            std::free(k->packet_memory);
            break;
        }
        x->kernels.push_back(k);
        rc = start_kernel(*k);
        if (rc != WEFT_SUCCESS) {
            x->kernels.pop_back();
            kernels_table().erase(k->handle);
            stop_kernel(*k, false);
        }
    }
    if (rc != WEFT_SUCCESS) {
        release_ctx(*x, true);
        weft_comm_free(&x->dup);
        return rc;
    }
    {
        std::lock_guard lock(g_ctx_mutex);
        g_contexts.push_back(x);
        finalize_hook_add(pgas_finalize_all, finalize_prio_pgas);
    }
    // Every kernel's receives are posted before anyone sends (fewer unexpected messages).
    if ((rc = weft_barrier(x->dup)) != WEFT_SUCCESS) return rc;
    *out = x->kernels[0]->handle;
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_pgas_create(weft_comm handle, size_t segment_size, weft_info info, weft_pgas *out) {
    return comm_entry(handle, "weft_pgas_create", [&] { return pgas_create_impl(handle, segment_size, info, out); });
}

namespace {
int pgas_free_impl(weft_pgas *handle) {
    if (handle == nullptr) return fail(WEFT_ERR_ARG, "weft_pgas_free: pgas must not be NULL");
    am_kernel *k;
    if (int rc = check_kernel("weft_pgas_free", *handle, k)) return rc;
    if (int rc = not_in_handler("weft_pgas_free")) return rc;
    pgas_ctx *x = k->ctx;
    // Drain this process's sends while answering peers (their large payloads need our receives),
    // then agree that every process is here before withdrawing the receives.
    auto progress_all = [&] {
        for (auto &kk : x->kernels) kk->v->progress();
    };
    auto sends_done = [&] {
        for (auto &kk : x->kernels)
            for (unsigned i = 0; i < am_tx_slots; ++i)
                if (kk->tx[i].busy && !kk->tx[i].r.complete.load(std::memory_order_acquire)) return false;
        return true;
    };
    while (!sends_done()) progress_all();
    // A context that lost a process cannot agree (the barrier fails at once): it is released
    // locally all the same, and the failure reported.
    weft_request barrier = WEFT_REQUEST_NULL;
    int failed = weft_ibarrier(x->dup, &barrier);
    for (int flag = 0; failed == WEFT_SUCCESS;) {
        failed = weft_test(&barrier, &flag, WEFT_STATUS_IGNORE);
        if (failed != WEFT_SUCCESS && failed != WEFT_ERR_PROC_FAILED) return failed;
        if (flag) break;
        progress_all();
    }
    release_ctx(*x, true);
    weft_comm dup = x->dup;
    int rc = weft_comm_free(&dup);
    forget_ctx(x);
    *handle = WEFT_PGAS_NULL;
    return failed != WEFT_SUCCESS ? failed : rc;
}
}  // namespace

extern "C" int weft_pgas_free(weft_pgas *handle) {
    weft_comm where = handle ? pgas_comm_of(*handle) : WEFT_COMM_SELF;  // gone after
    int rc;
    {
        errhandler_internal_scope inner;  // its own barrier and free run no handler
        rc = pgas_free_impl(handle);
    }
    return comm_error_return(where, rc, "weft_pgas_free");
}

namespace {
int pgas_get_kernel_impl(weft_pgas h, int index, weft_pgas *kernel) {
    am_kernel *k;
    if (int rc = check_kernel("weft_pgas_get_kernel", h, k)) return rc;
    if (kernel == nullptr) return fail(WEFT_ERR_ARG, "weft_pgas_get_kernel: kernel must not be NULL");
    const auto &ks = k->ctx->kernels;
    if (index < 0 || static_cast<size_t>(index) >= ks.size())
        return fail(WEFT_ERR_STREAM, "weft_pgas_get_kernel: local kernel %d is outside 0..%zu", index, ks.size() - 1);
    *kernel = ks[static_cast<size_t>(index)]->handle;
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_pgas_get_kernel(weft_pgas h, int index, weft_pgas *kernel) {
    int rc = pgas_get_kernel_impl(h, index, kernel);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_pgas_get_kernel");
    return WEFT_SUCCESS;
}

namespace {
int pgas_kernel_id_impl(weft_pgas h, int *id) {
    return kernel_query("weft_pgas_kernel_id", "id", h, id, [](const am_kernel &k) { return static_cast<int>(k.id); });
}
}  // namespace

extern "C" int weft_pgas_kernel_id(weft_pgas h, int *id) {
    int rc = pgas_kernel_id_impl(h, id);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_pgas_kernel_id");
    return WEFT_SUCCESS;
}

namespace {
int pgas_num_kernels_impl(weft_pgas h, int *count) {
    return kernel_query("weft_pgas_num_kernels", "count", h, count,
                        [](const am_kernel &k) { return static_cast<int>(k.ctx->nkernels); });
}
}  // namespace

extern "C" int weft_pgas_num_kernels(weft_pgas h, int *count) {
    int rc = pgas_num_kernels_impl(h, count);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_pgas_num_kernels");
    return WEFT_SUCCESS;
}

namespace {
int pgas_segment_impl(weft_pgas h, void **base, size_t *size) {
    am_kernel *k;
    if (int rc = check_kernel("weft_pgas_segment", h, k)) return rc;
    if (base == nullptr || size == nullptr)
        return fail(WEFT_ERR_ARG, "weft_pgas_segment: base and size must not be NULL");
    *base = k->segment;
    *size = k->ctx->segment_size;
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_pgas_segment(weft_pgas h, void **base, size_t *size) {
    int rc = pgas_segment_impl(h, base, size);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_pgas_segment");
    return WEFT_SUCCESS;
}

namespace {
int pgas_progress_impl(weft_pgas h) {
    am_kernel *k;
    if (int rc = check_kernel("weft_pgas_progress", h, k)) return rc;
    if (int rc = not_in_handler("weft_pgas_progress")) return rc;
    stream_use use(k->s);
    if (use.conflict()) return conflict("weft_pgas_progress");
    int n = k->v->progress();
    return n < 0 ? fail(plugin_error(n), "weft_pgas_progress: the fabric's progress failed (code %d)", n)
                 : WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_pgas_progress(weft_pgas h) {
    int rc = pgas_progress_impl(h);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_pgas_progress");
    return WEFT_SUCCESS;
}

namespace {
int pgas_wait_counter_impl(weft_pgas h, uint64_t value) {
    am_kernel *k;
    if (int rc = check_kernel("weft_pgas_wait_counter", h, k)) return rc;
    if (int rc = kernel_wait("weft_pgas_wait_counter", *k,
                             [&] { return k->counter.load(std::memory_order_acquire) >= value; }))
        return rc;
    k->v->enter();
    consume(k->counter, value);
    k->v->leave();
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_pgas_wait_counter(weft_pgas h, uint64_t value) {
    int rc = pgas_wait_counter_impl(h, value);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_pgas_wait_counter");
    return WEFT_SUCCESS;
}

namespace {
int am_wait_replies_impl(weft_pgas h, size_t n) {
    am_kernel *k;
    if (int rc = check_kernel("weft_am_wait_replies", h, k)) return rc;
    if (int rc =
            kernel_wait("weft_am_wait_replies", *k, [&] { return k->replies.load(std::memory_order_acquire) >= n; }))
        return rc;
    k->v->enter();
    consume(k->replies, n);
    k->v->leave();
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_am_wait_replies(weft_pgas h, size_t n) {
    int rc = am_wait_replies_impl(h, n);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_wait_replies");
    return WEFT_SUCCESS;
}

// Shoal's barrier, message for message, so software and hardware kernels (a GAScore) can share
// one: every other kernel sends kernel 0 a Short with H_INCR_BAR (3) and waits for its release,
// a Short with H_INCR_BAR from kernel 0 once all arrived.  None is ASYNC: each earns an automatic
// reply, and the barrier waits for its own (Shoal's wait_reply), so no reply is left over.
namespace {
int pgas_barrier_impl(weft_pgas h) {
    am_kernel *k;
    if (int rc = check_kernel("weft_pgas_barrier", h, k)) return rc;
    if (int rc = not_in_handler("weft_pgas_barrier")) return rc;
    pgas_ctx &x = *k->ctx;
    auto signal = [&](uint32_t dst) {
        am_call call;
        call.k = k;
        call.p.type = am_kind_short;
        call.p.dst = dst;
        call.p.handler = am_h_barrier;
        return send("weft_pgas_barrier", call, am_source{});
    };
    auto wait_consume = [&](std::atomic<uint64_t> &counter, uint64_t n) -> int {
        if (int rc = kernel_wait("weft_pgas_barrier", *k, [&] { return counter.load(std::memory_order_acquire) >= n; }))
            return rc;
        k->v->enter();
        consume(counter, n);
        k->v->leave();
        return WEFT_SUCCESS;
    };
    uint64_t others = x.nkernels - 1;
    if (k->id == x.root_kernel) {
        if (int rc = wait_consume(k->barrier_arrivals, others)) return rc;
        for (uint32_t dst = 0; dst < x.nkernels; ++dst)
            if (dst != k->id)
                if (int rc = signal(dst)) return rc;
        return wait_consume(k->replies, others);
    }
    if (int rc = signal(x.root_kernel)) return rc;
    if (int rc = wait_consume(k->barrier_arrivals, 1)) return rc;
    return wait_consume(k->replies, 1);
}
}  // namespace

extern "C" int weft_pgas_barrier(weft_pgas h) {
    int rc = pgas_barrier_impl(h);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_pgas_barrier");
    return WEFT_SUCCESS;
}

namespace {
int pgas_bad_packets_impl(weft_pgas h, uint64_t *count) {
    return kernel_query("weft_pgas_bad_packets", "count", h, count,
                        [](const am_kernel &k) { return k.bad_packets.load(std::memory_order_acquire); });
}
}  // namespace

extern "C" int weft_pgas_bad_packets(weft_pgas h, uint64_t *count) {
    int rc = pgas_bad_packets_impl(h, count);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_pgas_bad_packets");
    return WEFT_SUCCESS;
}

namespace {
int am_register_impl(weft_pgas h, unsigned index, weft_am_handler fn, void *user_data) {
    am_kernel *k;
    if (int rc = check_kernel("weft_am_register", h, k)) return rc;
    if (index < WEFT_AM_HANDLER_FIRST || index >= WEFT_AM_MAX_HANDLERS)
        return fail(WEFT_ERR_ARG, "weft_am_register: index %u; user handlers are %d..%d (0..4 are built in)", index,
                    WEFT_AM_HANDLER_FIRST, WEFT_AM_MAX_HANDLERS - 1);
    k->v->enter();
    k->handlers[index] = {fn, user_data};
    k->v->leave();
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_am_register(weft_pgas h, unsigned index, weft_am_handler fn, void *user_data) {
    int rc = am_register_impl(h, index, fn, user_data);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_register");
    return WEFT_SUCCESS;
}

namespace {
int am_max_medium_impl(weft_pgas h, size_t *bytes) {
    return kernel_query("weft_am_max_medium", "bytes", h, bytes, [](const am_kernel &) { return am_max_inline; });
}
}  // namespace

extern "C" int weft_am_max_medium(weft_pgas h, size_t *bytes) {
    int rc = am_max_medium_impl(h, bytes);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_max_medium");
    return WEFT_SUCCESS;
}

namespace {
int am_max_long_impl(weft_pgas h, size_t *bytes) {
    return kernel_query("weft_am_max_long", "bytes", h, bytes, [](const am_kernel &k) { return k.ctx->max_long; });
}
}  // namespace

extern "C" int weft_am_max_long(weft_pgas h, size_t *bytes) {
    int rc = am_max_long_impl(h, bytes);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_max_long");
    return WEFT_SUCCESS;
}

namespace {
int am_max_args_impl(weft_pgas h, unsigned *nargs) {
    return kernel_query("weft_am_max_args", "nargs", h, nargs,
                        [](const am_kernel &) { return static_cast<unsigned>(WEFT_AM_MAX_ARGS); });
}
}  // namespace

extern "C" int weft_am_max_args(weft_pgas h, unsigned *nargs) {
    int rc = am_max_args_impl(h, nargs);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_max_args");
    return WEFT_SUCCESS;
}

namespace {
int am_short_impl(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs, unsigned flags) {
    am_call call;
    if (int rc = prepare("weft_am_short", h, dst, handler, args, nargs, flags, am_kind_short, call)) return rc;
    return send("weft_am_short", call, am_source{});
}
}  // namespace

extern "C" int weft_am_short(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                             unsigned flags) {
    int rc = am_short_impl(h, dst, handler, args, nargs, flags);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_short");
    return WEFT_SUCCESS;
}

namespace {
int am_medium_impl(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs, const void *buf,
                   size_t length, unsigned flags) {
    const char *fn = "weft_am_medium";
    am_call call;
    if (int rc = prepare(fn, h, dst, handler, args, nargs, flags, am_kind_medium | am_fifo, call)) return rc;
    if (int rc = check_length(fn, call, length, am_max_inline)) return rc;
    if (buf == nullptr && length != 0) return fail(WEFT_ERR_BUFFER, "%s: buf is NULL but length is %zu", fn, length);
    call.p.payload_bytes = length;
    am_source src;
    src.contig = buf;
    src.caller_buffer = true;
    return send(fn, call, src);
}
}  // namespace

extern "C" int weft_am_medium(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                              const void *buf, size_t length, unsigned flags) {
    int rc = am_medium_impl(h, dst, handler, args, nargs, buf, length, flags);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_medium");
    return WEFT_SUCCESS;
}

namespace {
int am_medium_seg_impl(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs, size_t src_offset,
                       size_t length, unsigned flags) {
    const char *fn = "weft_am_medium_seg";
    am_call call;
    if (int rc = prepare(fn, h, dst, handler, args, nargs, flags, am_kind_medium, call)) return rc;
    if (int rc = check_length(fn, call, length, am_max_inline)) return rc;
    if (int rc = check_region(fn, "source", call, src_offset, length)) return rc;
    call.p.payload_bytes = length;
    am_source src;
    src.contig = call.k->segment + src_offset;
    return send(fn, call, src);
}
}  // namespace

extern "C" int weft_am_medium_seg(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                                  size_t src_offset, size_t length, unsigned flags) {
    int rc = am_medium_seg_impl(h, dst, handler, args, nargs, src_offset, length, flags);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_medium_seg");
    return WEFT_SUCCESS;
}

namespace {
int am_long_impl(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs, const void *buf,
                 size_t length, size_t dst_offset, unsigned flags) {
    const char *fn = "weft_am_long";
    am_call call;
    if (int rc = prepare(fn, h, dst, handler, args, nargs, flags, am_kind_long | am_fifo, call)) return rc;
    if (int rc = check_length(fn, call, length, call.k->ctx->max_long)) return rc;
    if (buf == nullptr && length != 0) return fail(WEFT_ERR_BUFFER, "%s: buf is NULL but length is %zu", fn, length);
    if (int rc = check_region(fn, "destination", call, dst_offset, length)) return rc;
    call.p.payload_bytes = length;
    call.p.dst_offset = dst_offset;
    am_source src;
    src.contig = buf;
    src.caller_buffer = true;
    return send(fn, call, src);
}
}  // namespace

extern "C" int weft_am_long(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                            const void *buf, size_t length, size_t dst_offset, unsigned flags) {
    int rc = am_long_impl(h, dst, handler, args, nargs, buf, length, dst_offset, flags);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_long");
    return WEFT_SUCCESS;
}

namespace {
int am_long_seg_impl(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs, size_t src_offset,
                     size_t length, size_t dst_offset, unsigned flags) {
    const char *fn = "weft_am_long_seg";
    am_call call;
    if (int rc = prepare(fn, h, dst, handler, args, nargs, flags, am_kind_long, call)) return rc;
    if (int rc = check_length(fn, call, length, call.k->ctx->max_long)) return rc;
    if (int rc = check_region(fn, "source", call, src_offset, length)) return rc;
    if (int rc = check_region(fn, "destination", call, dst_offset, length)) return rc;
    call.p.payload_bytes = length;
    call.p.dst_offset = dst_offset;
    am_source src;
    src.contig = call.k->segment + src_offset;
    return send(fn, call, src);
}
}  // namespace

extern "C" int weft_am_long_seg(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                                size_t src_offset, size_t length, size_t dst_offset, unsigned flags) {
    int rc = am_long_seg_impl(h, dst, handler, args, nargs, src_offset, length, dst_offset, flags);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_long_seg");
    return WEFT_SUCCESS;
}

namespace {
int am_long_strided_impl(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                         const weft_am_stride *src_region, const weft_am_stride *dst_region, unsigned flags) {
    const char *fn = "weft_am_long_strided";
    am_call call;
    if (int rc = prepare(fn, h, dst, handler, args, nargs, flags, am_kind_strided, call)) return rc;
    am_stride_desc from;
    uint64_t src_total, dst_total;
    if (int rc = to_stride(fn, "source", call, src_region, from, src_total)) return rc;
    if (int rc = to_stride(fn, "destination", call, dst_region, call.p.dst_stride, dst_total)) return rc;
    if (src_total != dst_total)
        return fail(WEFT_ERR_ARG, "%s: the source moves %llu bytes and the destination takes %llu", fn,
                    static_cast<unsigned long long>(src_total), static_cast<unsigned long long>(dst_total));
    if (int rc = check_length(fn, call, src_total, call.k->ctx->max_long)) return rc;
    call.p.payload_bytes = src_total;
    am_source src;
    src.stride = &from;
    return send(fn, call, src);
}
}  // namespace

extern "C" int weft_am_long_strided(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                                    const weft_am_stride *src_region, const weft_am_stride *dst_region,
                                    unsigned flags) {
    int rc = am_long_strided_impl(h, dst, handler, args, nargs, src_region, dst_region, flags);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_long_strided");
    return WEFT_SUCCESS;
}

namespace {
int am_long_vectored_impl(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                          const weft_am_piece *src_pieces, size_t src_count, const weft_am_piece *dst_pieces,
                          size_t dst_count, unsigned flags) {
    const char *fn = "weft_am_long_vectored";
    am_call call;
    if (int rc = prepare(fn, h, dst, handler, args, nargs, flags, am_kind_vectored, call)) return rc;
    if (src_count > WEFT_AM_MAX_VECTOR || dst_count > WEFT_AM_MAX_VECTOR)
        return fail(WEFT_ERR_ARG, "%s: %zu source and %zu destination pieces; at most %d each", fn, src_count,
                    dst_count, WEFT_AM_MAX_VECTOR);
    if ((src_count != 0 && src_pieces == nullptr) || (dst_count != 0 && dst_pieces == nullptr))
        return fail(WEFT_ERR_ARG, "%s: a piece array is NULL with a non-zero count", fn);
    uint64_t src_total = 0, dst_total = 0;
    for (size_t i = 0; i < src_count; ++i) {
        if (int rc = check_region(fn, "source piece", call, src_pieces[i].offset, src_pieces[i].length)) return rc;
        src_total += src_pieces[i].length;  // each fits the segment: no overflow for 16 pieces
    }
    uint64_t wire_pieces[2 * WEFT_AM_MAX_VECTOR];
    for (size_t i = 0; i < dst_count; ++i) {
        if (int rc = check_region(fn, "destination piece", call, dst_pieces[i].offset, dst_pieces[i].length)) return rc;
        dst_total += dst_pieces[i].length;
        wire_pieces[2 * i] = dst_pieces[i].offset;
        wire_pieces[2 * i + 1] = dst_pieces[i].length;
    }
    if (src_total != dst_total)
        return fail(WEFT_ERR_ARG, "%s: the source pieces hold %llu bytes and the destination pieces %llu", fn,
                    static_cast<unsigned long long>(src_total), static_cast<unsigned long long>(dst_total));
    if (int rc = check_length(fn, call, src_total, call.k->ctx->max_long)) return rc;
    call.p.payload_bytes = src_total;
    call.p.npieces = static_cast<unsigned>(dst_count);
    call.p.pieces = wire_pieces;
    am_source src;
    src.pieces = src_pieces;
    src.npieces = src_count;
    return send(fn, call, src);
}
}  // namespace

extern "C" int weft_am_long_vectored(weft_pgas h, int dst, unsigned handler, const uint64_t *args, unsigned nargs,
                                     const weft_am_piece *src_pieces, size_t src_count, const weft_am_piece *dst_pieces,
                                     size_t dst_count, unsigned flags) {
    int rc = am_long_vectored_impl(h, dst, handler, args, nargs, src_pieces, src_count, dst_pieces, dst_count, flags);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_long_vectored");
    return WEFT_SUCCESS;
}

namespace {
int am_get_long_impl(weft_pgas h, int target, unsigned handler, const uint64_t *args, unsigned nargs,
                     size_t remote_offset, size_t length, size_t local_offset, unsigned flags) {
    const char *fn = "weft_am_get_long";
    if (flags & WEFT_AM_ASYNC) return fail(WEFT_ERR_ARG, "%s: WEFT_AM_ASYNC: a get's data is its reply", fn);
    am_call call;
    if (int rc = prepare(fn, h, target, handler, args, nargs, flags, am_kind_long, call)) return rc;
    if (int rc = check_local_handler(fn, call)) return rc;
    if (int rc = check_length(fn, call, length, call.k->ctx->max_long)) return rc;
    if (int rc = check_region(fn, "remote source", call, remote_offset, length)) return rc;
    if (int rc = check_region(fn, "local destination", call, local_offset, length)) return rc;
    call.p.ext_flags = am_ext_get;
    call.p.payload_bytes = length;
    call.p.src_offset = remote_offset;
    call.p.dst_offset = local_offset;
    return send(fn, call, am_source{});
}
}  // namespace

extern "C" int weft_am_get_long(weft_pgas h, int target, unsigned handler, const uint64_t *args, unsigned nargs,
                                size_t remote_offset, size_t length, size_t local_offset, unsigned flags) {
    int rc = am_get_long_impl(h, target, handler, args, nargs, remote_offset, length, local_offset, flags);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_get_long");
    return WEFT_SUCCESS;
}

namespace {
int am_get_strided_impl(weft_pgas h, int target, unsigned handler, const uint64_t *args, unsigned nargs,
                        const weft_am_stride *remote, const weft_am_stride *local, unsigned flags) {
    const char *fn = "weft_am_get_strided";
    if (flags & WEFT_AM_ASYNC) return fail(WEFT_ERR_ARG, "%s: WEFT_AM_ASYNC: a get's data is its reply", fn);
    am_call call;
    if (int rc = prepare(fn, h, target, handler, args, nargs, flags, am_kind_strided, call)) return rc;
    if (int rc = check_local_handler(fn, call)) return rc;
    uint64_t remote_total, local_total;
    if (int rc = to_stride(fn, "remote source", call, remote, call.p.src_stride, remote_total)) return rc;
    if (int rc = to_stride(fn, "local destination", call, local, call.p.dst_stride, local_total)) return rc;
    if (remote_total != local_total)
        return fail(WEFT_ERR_ARG, "%s: the remote region holds %llu bytes and the local one %llu", fn,
                    static_cast<unsigned long long>(remote_total), static_cast<unsigned long long>(local_total));
    if (int rc = check_length(fn, call, remote_total, call.k->ctx->max_long)) return rc;
    call.p.ext_flags = am_ext_get;
    call.p.payload_bytes = remote_total;
    return send(fn, call, am_source{});
}
}  // namespace

extern "C" int weft_am_get_strided(weft_pgas h, int target, unsigned handler, const uint64_t *args, unsigned nargs,
                                   const weft_am_stride *remote, const weft_am_stride *local, unsigned flags) {
    int rc = am_get_strided_impl(h, target, handler, args, nargs, remote, local, flags);
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) return pgas_error_raise(h, rc, "weft_am_get_strided");
    return WEFT_SUCCESS;
}

namespace {
int am_reply_short_impl(const weft_am_info *request, unsigned handler, const uint64_t *args, unsigned nargs) {
    const char *fn = "weft_am_reply_short";
    if (int rc = runtime_check(fn)) return rc;
    if (request == nullptr) return fail(WEFT_ERR_ARG, "%s: request must not be NULL", fn);
    if (int rc = check_handler_args(fn, handler, args, nargs)) return rc;
    return am_reply_short(request, handler, args, nargs);
}
}  // namespace

extern "C" int weft_am_reply_short(const weft_am_info *request, unsigned handler, const uint64_t *args,
                                   unsigned nargs) {
    return self_error_return(am_reply_short_impl(request, handler, args, nargs), "weft_am_reply_short");
}
