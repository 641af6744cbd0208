#include "transport/request.hpp"

#include <cstdlib>
#include <new>

#include "transport/peer_failure.hpp"
#include "transport/persistent.hpp"
#include "base/error.hpp"
#include "base/handle.hpp"
#include "base/match.hpp"
#include "transport/runtime.hpp"

namespace weft {

size_t g_request_space = request_line_offset;

void request_space_set(size_t wanted) { g_request_space = request_space_for(wanted); }

void request_on_complete(void *context, const weft_fabric_completion_t *c) {
    request *r = request_of_context(context);
    // A receive cancelled because its peer died (peer_failure.cpp) failed, it was not cancelled.
    r->fabric_status = __builtin_expect(c->status == WEFT_PLUGIN_ERR_CANCELED, 0) && r->failing
        ? WEFT_PLUGIN_ERR_PEER_FAILED
        : c->status;
    r->msg_tag = c->tag;
    r->msg_bytes = c->length;
    // The sync bit (match_sync_bit) tested in memory, one instruction with its branch: every
    // receive pays it.
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && match_sync_bit == uint64_t{2} << 48);
    if (__builtin_expect(reinterpret_cast<const unsigned char *>(&c->tag)[6] & 2, 0)) p2p_sync_completed(*r);
    r->complete.store(true, std::memory_order_release);
}

int request_finish(request &r, weft_status *status) {
    if (__builtin_expect(r.persistent, 0)) return persistent_finish(r, status);
    return request_finish_op(r, status);
}

int request_finish_op(request &r, weft_status *status) {
    if (r.op == request::kind::coll) return coll_request_finish(r, status);
    if (r.fabric_status == request_status_sync) {
        r.fabric_status = WEFT_PLUGIN_OK;
        r.endpoint->progress();  // sends the acknowledgement, if no progress has yet
    }
    int err = WEFT_SUCCESS;
    bool cancelled = r.fabric_status == WEFT_PLUGIN_ERR_CANCELED;
    if (r.fabric_status == WEFT_PLUGIN_ERR_TRUNCATE)
        err = WEFT_ERR_TRUNCATE;
    else if (r.fabric_status != WEFT_PLUGIN_OK && !cancelled)
        err = plugin_error(r.fabric_status);
    if (err == WEFT_ERR_PROC_FAILED) {
        int dead = r.op != request::kind::recv || r.group == nullptr ? -1
            : r.peer >= 0                                            ? r.peer
                                                                     : group_first_failed(*r.group);
        if (dead >= 0)
            fail_proc("recv", dead, r.group->world_ranks[static_cast<size_t>(dead)]);
        else
            fail(err, "%s: the peer process failed", r.op == request::kind::recv ? "recv" : "send");
    }
    size_t bytes = 0;
    if (r.op == request::kind::recv) {
        size_t capacity = r.type ? r.user_count * r.type->size : r.user_count;
        bytes = r.msg_bytes < capacity ? r.msg_bytes : capacity;
        // A staging buffer without a type is an iovec the message landed through (p2p_iov.cpp).
        if (r.staging != nullptr && r.type != nullptr && !cancelled)
            datatype_unpack(*r.type, r.staging, bytes, r.user_buf, r.user_count);
    }
    if (r.staging != nullptr) {
        std::free(r.staging);
        r.staging = nullptr;
    }
    if (r.type_hold) r.type_hold.reset();
    // Written only when set: the lightweight request is read by other threads meanwhile.
    if (r.extras) r.extras = false;
    if (status != WEFT_STATUS_IGNORE) {
        if (r.op == request::kind::recv && !cancelled) {
            status->source = match_source(r.msg_tag);
            status->tag = match_tag(r.msg_tag);
            status->stream_index = match_index(r.msg_tag);
        } else if (r.op == request::kind::done) {
            status->source = WEFT_PROC_NULL;
            status->tag = WEFT_ANY_TAG;
            status->stream_index = 0;
        }
        status->error = err;
        status->weft_bytes_ = bytes;
        status->weft_cancelled_ = cancelled;
    }
    return err;
}

std::atomic<request_pool *> g_request_pools[1u << 12];

request_pool::request_pool(uint32_t vci_index, vci *owner)
    : space_(g_request_space),
      stride_((g_request_space + sizeof(request) + 63) / 64 * 64),
      vci_index_(vci_index),
      done_handle_(handle_make(handle_kind::request, vci_index, 0)),
      owner_(owner) {
    if (vci_index_ < request_pool_max)
        g_request_pools[request_pool_key(vci_index_)].store(this, std::memory_order_release);
}

request_pool::~request_pool() {
    for (auto &a : chunks_) {
        request *c = a.load(std::memory_order_relaxed);
        if (c == nullptr) continue;
        for (uint32_t i = 0; i < chunk; ++i) at(c, i)->~request();
        ::operator delete (reinterpret_cast<char *>(c) - space_, std::align_val_t{64});
    }
    if (vci_index_ < request_pool_max) {
        request_pool *self = this;
        g_request_pools[request_pool_key(vci_index_)].compare_exchange_strong(self, nullptr);
    }
}

request *request_pool::grow() {
    uint32_t first = size_;
    if (first >= max_slots) return nullptr;
    void *mem = ::operator new (size_t{chunk} * stride_, std::align_val_t{64}, std::nothrow);
    if (mem == nullptr) return nullptr;
    auto *c = reinterpret_cast<request *>(static_cast<char *>(mem) + space_);
    for (uint32_t i = 0; i < chunk; ++i) new (at(c, i)) request;
    // Chain the new chunk in slot order (slot 0, WEFT_REQUEST_NULL, is skipped).
    uint32_t base = first - first % chunk;
    request *head = nullptr;
    for (uint32_t i = chunk; i-- > first - base;) {
        request &r = *at(c, i);
        r.handle = handle_make(handle_kind::request, vci_index_, base + i);
        r.next_free = head;
        head = &r;
    }
    if (base == 0) {  // slot 0: the lightweight request of sends finished at once
        request &lw = *c;
        lw.lightweight = true;
        lw.in_use = true;
        lw.op = request::kind::send;
        lw.complete.store(true, std::memory_order_relaxed);
        lw.endpoint = owner_;
        lw.handle = done_handle_;
    }
    chunks_[first / chunk].store(c, std::memory_order_release);
    free_ = head;
    size_ = base + chunk;
    return head;
}

}  // namespace weft
