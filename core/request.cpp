#include "request.hpp"

#include <cstdlib>

#include "error.hpp"
#include "handle.hpp"
#include "match.hpp"
#include "runtime.hpp"

namespace weft {

void request_on_complete(void *context, const weft_fabric_completion_t *c) {
    auto *r = static_cast<request *>(context);
    r->fabric_status = c->status;
    r->msg_tag = c->tag;
    r->msg_bytes = c->length;
    r->complete.store(true, std::memory_order_release);
}

int request_finish(request &r, weft_status *status) {
    if (r.op == request::kind::coll) return coll_request_finish(r, status);
    int err = WEFT_SUCCESS;
    bool cancelled = r.fabric_status == WEFT_PLUGIN_ERR_CANCELED;
    if (r.fabric_status == WEFT_PLUGIN_ERR_TRUNCATE)
        err = WEFT_ERR_TRUNCATE;
    else if (r.fabric_status != WEFT_PLUGIN_OK && !cancelled)
        err = plugin_error(r.fabric_status);
    size_t bytes = 0;
    if (r.op == request::kind::recv) {
        size_t capacity = r.type ? r.user_count * r.type->size : r.user_count;
        bytes = r.msg_bytes < capacity ? r.msg_bytes : capacity;
        if (r.staging != nullptr && !cancelled) datatype_unpack(*r.type, r.staging, bytes, r.user_buf, r.user_count);
    }
    std::free(r.staging);
    r.staging = nullptr;
    r.type.reset();
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

request_pool::~request_pool() = default;

request *request_pool::alloc(weft_request *handle) {
    uint32_t slot;
    if (!free_.empty()) {
        slot = free_.back();
        free_.pop_back();
    } else {
        slot = size_.load(std::memory_order_relaxed);
        if (slot >= max_slots) return nullptr;
        auto &c = chunks_[slot / chunk];
        if (!c) c = std::make_unique<request[]>(chunk);
        size_.store(slot + 1, std::memory_order_release);
    }
    request *r = &chunks_[slot / chunk][slot % chunk];
    r->complete.store(false, std::memory_order_relaxed);
    r->in_use = true;
    r->fabric_status = WEFT_PLUGIN_OK;
    r->msg_tag = 0;
    r->msg_bytes = 0;
    r->slot = slot;
    *handle = handle_make(handle_kind::request, vci_index_, slot);
    return r;
}

void request_pool::release(request *r) {
    r->in_use = false;
    free_.push_back(r->slot);
}

void request_release(request &r) {
    if (r.comm_pending != nullptr) --*r.comm_pending;
    if (r.stream_pending != nullptr) --*r.stream_pending;
    r.comm_pending = r.stream_pending = nullptr;
    r.endpoint->requests.release(&r);
}

request *request_lookup(weft_request handle) {
    if (handle_kind_bits(handle) != static_cast<uint32_t>(handle_kind::request)) return nullptr;
    auto &vcis = rt().vcis;
    uint32_t index = handle_generation(handle);
    if (index >= vcis.size() || !vcis[index]) return nullptr;
    return vcis[index]->requests.lookup(handle_slot(handle));
}

}  // namespace weft
