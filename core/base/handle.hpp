// Integer handles (see api/weft/weft.h): [31:28] kind, [27:20] generation, [19:0] slot.
// A table maps handles to objects.  Lookups take no lock: slots live in fixed chunks that are
// never moved, and a slot's (generation, pointer) pair is read atomically.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace weft {

enum class handle_kind : uint32_t {
    comm = 1,
    info = 2,
    stream = 3,
    request = 4,
    datatype = 5,
    op = 6,
    pgas = 7,
    enqueue = 8,
    group = 9,
    // 10: free
    message = 11,  // weft_message (matched probe): WEFT_MESSAGE_NO_PROC has this kind
    errhandler = 12
};

constexpr uint32_t handle_kind_bits(int handle) { return static_cast<uint32_t>(handle) >> 28; }
constexpr uint32_t handle_generation(int handle) { return (static_cast<uint32_t>(handle) >> 20) & 0xff; }
constexpr uint32_t handle_slot(int handle) { return static_cast<uint32_t>(handle) & 0xfffff; }
constexpr int handle_make(handle_kind kind, uint32_t generation, uint32_t slot) {
    return static_cast<int>((static_cast<uint32_t>(kind) << 28) | ((generation & 0xff) << 20) | (slot & 0xfffff));
}

// Owns objects of type T; slot 0 is never used so that handle value 0 stays the null handle.
// Slots below first_dynamic are reserved for predefined objects (WEFT_COMM_WORLD, WEFT_BYTE...),
// which have generation 0; dynamic objects get generations 1..255.
template <class T>
class handle_table {
  public:
    static constexpr uint32_t chunk_size = 1024;
    static constexpr uint32_t max_chunks = 1024;  // 1M slots, the width of the slot field

    handle_table(handle_kind kind, uint32_t first_dynamic) : kind_(kind), next_(first_dynamic) {}
    ~handle_table() { clear(); }

    // Installs a predefined object at a fixed slot with generation 0.
    int put_predefined(uint32_t slot, std::shared_ptr<T> object) {
        std::lock_guard lock(mutex_);
        entry &e = slot_entry(slot);
        e.object = std::move(object);
        e.ptr.store(e.object.get(), std::memory_order_release);
        e.generation.store(0, std::memory_order_release);
        int h = handle_make(kind_, 0, slot);
        e.handle.store(h, std::memory_order_release);
        return h;
    }

    // Returns the new handle, or 0 when the table is full.
    int insert(std::shared_ptr<T> object) {
        std::lock_guard lock(mutex_);
        uint32_t slot;
        if (!free_.empty()) {
            slot = free_.back();
            free_.pop_back();
        } else {
            if (next_ >= chunk_size * max_chunks) return 0;
            slot = next_++;
        }
        entry &e = slot_entry(slot);
        uint32_t gen = e.generation.load(std::memory_order_relaxed) % 255 + 1;
        e.object = std::move(object);
        e.generation.store(gen, std::memory_order_release);
        e.ptr.store(e.object.get(), std::memory_order_release);
        int h = handle_make(kind_, gen, slot);
        e.handle.store(h, std::memory_order_release);  // last: get() matches on it
        return h;
    }

    // nullptr when the handle is of another kind, out of range, freed or stale.  A live slot
    // holds its full handle (kind, generation, slot), so one comparison checks all three; a
    // free slot holds 0, which no valid handle equals.  (Slot 0 is never used: handle 0 finds
    // a null pointer there.)
    T *get(int handle) const {
        uint32_t slot = handle_slot(handle);
        const entry *chunk = chunks_[slot / chunk_size].load(std::memory_order_acquire);
        if (chunk == nullptr) return nullptr;
        const entry &e = chunk[slot % chunk_size];
        if (e.handle.load(std::memory_order_acquire) != handle) return nullptr;
        return e.ptr.load(std::memory_order_acquire);
    }

    // Shared ownership, for objects that pending operations keep alive after a free.
    std::shared_ptr<T> get_shared(int handle) {
        std::lock_guard lock(mutex_);
        if (get(handle) == nullptr) return nullptr;
        return slot_entry(handle_slot(handle)).object;
    }

    // Removes the object; returns false for an invalid handle.  Predefined slots are refused.
    bool erase(int handle) {
        std::lock_guard lock(mutex_);
        if (get(handle) == nullptr || handle_generation(handle) == 0) return false;
        uint32_t slot = handle_slot(handle);
        entry &e = slot_entry(slot);
        e.handle.store(0, std::memory_order_release);
        e.ptr.store(nullptr, std::memory_order_release);
        e.object.reset();
        free_.push_back(slot);
        return true;
    }

    // Calls fn(handle, T&) for every live object (used at finalize).
    template <class F>
    void for_each(F &&fn) {
        std::lock_guard lock(mutex_);
        for (uint32_t c = 0; c < max_chunks; ++c) {
            entry *chunk = chunks_[c].load(std::memory_order_acquire);
            if (chunk == nullptr) continue;
            for (uint32_t i = 0; i < chunk_size; ++i)
                if (T *p = chunk[i].ptr.load(std::memory_order_acquire))
                    fn(handle_make(kind_, chunk[i].generation.load(), c * chunk_size + i), *p);
        }
    }

    void clear() {
        std::lock_guard lock(mutex_);
        for (auto &c : chunks_) delete[] c.exchange(nullptr);
        free_.clear();
    }

  private:
    struct entry {
        std::atomic<T *> ptr{nullptr};
        std::atomic<uint32_t> generation{0};
        std::atomic<int> handle{0};  // the live handle of this slot, 0 when free
        std::shared_ptr<T> object;
    };
    entry &slot_entry(uint32_t slot) {
        auto &chunk = chunks_[slot / chunk_size];
        entry *c = chunk.load(std::memory_order_acquire);
        if (c == nullptr) {
            c = new entry[chunk_size];
            chunk.store(c, std::memory_order_release);
        }
        return c[slot % chunk_size];
    }

    handle_kind kind_;
    uint32_t next_;
    std::vector<uint32_t> free_;
    std::array<std::atomic<entry *>, max_chunks> chunks_{};
    mutable std::mutex mutex_;
};

}  // namespace weft
