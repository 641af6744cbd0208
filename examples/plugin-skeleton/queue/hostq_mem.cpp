// hostq memory: "device" and "pinned" allocations are ordinary memory recorded in an address
// registry, so that hostq_pointer_kind can tell them apart from plain host memory.
#include "hostq.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace {

struct hostq_region {
    size_t size;
    int kind;
};

struct hostq_mem_registry {
    std::mutex lock;
    std::map<uintptr_t, hostq_region> regions;  // by start address
};

hostq_mem_registry &mem_registry() {
    static auto *r = new hostq_mem_registry;  // never destroyed: frees may run at exit
    return *r;
}

constexpr size_t hostq_alignment = 256;  // what cudaMalloc guarantees

void *hostq_mem_alloc(size_t n, int kind) {
    size_t size = n ? n : 1;  // distinct, registrable address even for 0 bytes
    if (size > SIZE_MAX - hostq_alignment) return nullptr;
    size_t rounded = (size + hostq_alignment - 1) / hostq_alignment * hostq_alignment;
    void *p = aligned_alloc(hostq_alignment, rounded);
    if (!p) return nullptr;
    try {
        hostq_mem_registry &r = mem_registry();
        std::lock_guard<std::mutex> g(r.lock);
        r.regions[reinterpret_cast<uintptr_t>(p)] = {size, kind};
    } catch (const std::bad_alloc &) {
        free(p);
        return nullptr;
    }
    return p;
}

int hostq_mem_free(void *p, int kind) {
    if (!p) return HOSTQ_OK;
    hostq_mem_registry &r = mem_registry();
    {
        std::lock_guard<std::mutex> g(r.lock);
        auto it = r.regions.find(reinterpret_cast<uintptr_t>(p));
        if (it == r.regions.end() || it->second.kind != kind) return HOSTQ_ERR_INVALID;
        r.regions.erase(it);
    }
    free(p);
    return HOSTQ_OK;
}

}  // namespace

extern "C" {

void *hostq_malloc_device(size_t n) { return hostq_mem_alloc(n, HOSTQ_PTR_DEVICE); }

int hostq_free_device(void *p) { return hostq_mem_free(p, HOSTQ_PTR_DEVICE); }

void *hostq_malloc_host(size_t n) { return hostq_mem_alloc(n, HOSTQ_PTR_PINNED); }

int hostq_free_host(void *p) { return hostq_mem_free(p, HOSTQ_PTR_PINNED); }

int hostq_pointer_kind(const void *p) {
    auto a = reinterpret_cast<uintptr_t>(p);
    hostq_mem_registry &r = mem_registry();
    std::lock_guard<std::mutex> g(r.lock);
    auto it = r.regions.upper_bound(a);  // first region starting after a
    if (it == r.regions.begin()) return HOSTQ_PTR_HOST;
    --it;
    return a - it->first < it->second.size ? it->second.kind : HOSTQ_PTR_HOST;
}

}  // extern "C"
