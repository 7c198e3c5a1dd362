// ascend_memory.cpp — KES_MEM_DEVICE served by aclrtMalloc, and KES_MEM_DVPP by acldvppMalloc, when the
// Ascend backend is active.
//
// aclrtMalloc's documented first address is aligned for the device's DMA (BOARD-RULES §Memory: DVPP and model
// buffers start 128-byte aligned); a caller asking for more (kes_mem_alloc_aligned, pools with page
// chunks) gets an over-allocation with the aligned start recorded here, out of band: device memory
// may not be CPU-addressable (ACL_HOST run mode), so nothing is ever written into it.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ascend_runtime.hpp"
#include "kes/acl_dvpp.hpp"
#include "kes/error.hpp"
#include "kes/logging.hpp"

namespace kes {
namespace acl {
namespace {

struct LastFailure {
    kes_status status = KES_ERR_OUT_OF_MEMORY;
    std::string detail;
};
thread_local LastFailure t_failure;

// Which allocator a backend wraps: the runtime's (models) or DVPP's (media).
enum class Heap { kDevice, kDvpp };

class AscendBackend final : public DeviceBackend {
public:
    explicit AscendBackend(Heap heap) noexcept : heap_(heap) {}

    const char* name() const noexcept override { return heap_ == Heap::kDvpp ? "ascend dvpp" : "ascend"; }

    void* allocate(size_t size, size_t alignment) noexcept override {
        try {
            return allocate_or_throw(size, alignment);
        } catch (const kes::Error& e) {
            t_failure.status = e.status();
            t_failure.detail = e.what();
        } catch (...) {
            t_failure.status = KES_ERR_OUT_OF_MEMORY;
            t_failure.detail = "out of host memory while allocating device memory";
        }
        return nullptr;
    }

    void release(void* ptr) noexcept override {
        if (!ptr) return;
        void* raw = ptr;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = raw_.find(ptr);
            if (it != raw_.end()) {
                raw = it->second;
                raw_.erase(it);
            }
        }
        try {
            const Api* a = loaded_api();
            const DvppApi* d = heap_ == Heap::kDvpp ? dvpp() : nullptr;
            if (!a || (heap_ == Heap::kDvpp && !d)) {
                KES_LOGE("sdk", "%s buffer %p outlived the AscendCL runtime; not freed", name(), ptr);
                return;
            }
            ScopedContext bind;
            const Error e = d ? d->acldvppFree(raw) : a->aclrtFree(raw);
            if (e != kSuccess) KES_LOGE("sdk", "%s", describe(d ? "acldvppFree" : "aclrtFree", e).c_str());
        } catch (const std::exception& ex) {
            KES_LOGE("sdk", "freeing device buffer %p: %s", ptr, ex.what());
        }
        live_.fetch_sub(1, std::memory_order_relaxed);
    }

    kes_status failure(std::string* detail) const noexcept override {
        try {
            if (detail) *detail = t_failure.detail;
        } catch (...) {
        }
        return t_failure.status;
    }

    size_t live() const noexcept { return live_.load(std::memory_order_relaxed); }

private:
    // The heap's allocator and its release, by name for error messages.
    void raw_allocate(const Api& a, void** p, size_t size) const {
        if (heap_ == Heap::kDvpp) {
            const DvppApi* d = dvpp();
            if (!d) fail(KES_ERR_UNSUPPORTED, "DVPP memory: %s", dvpp_reason());
            check("acldvppMalloc", d->acldvppMalloc(p, size));
            return;
        }
        check("aclrtMalloc", a.aclrtMalloc(p, size, kMallocHugeFirst));
    }
    void raw_release(const Api& a, void* p) const {
        if (heap_ == Heap::kDvpp) {
            if (const DvppApi* d = dvpp()) d->acldvppFree(p);
            return;
        }
        a.aclrtFree(p);
    }

    void* allocate_or_throw(size_t size, size_t alignment) {
        const Api& a = require();
        ScopedContext bind;
        void* p = nullptr;
        raw_allocate(a, &p, size);
        if (reinterpret_cast<uintptr_t>(p) % alignment == 0) {
            live_.fetch_add(1, std::memory_order_relaxed);
            return p;
        }
        raw_release(a, p);
        if (size > SIZE_MAX - alignment) fail(KES_ERR_OUT_OF_MEMORY, "%zu bytes + alignment overflow", size);
        raw_allocate(a, &p, size + alignment);
        const uintptr_t base = reinterpret_cast<uintptr_t>(p);
        void* aligned = reinterpret_cast<void*>((base + alignment - 1) & ~(uintptr_t{alignment} - 1));
        try {
            std::lock_guard<std::mutex> lock(mutex_);
            raw_.emplace(aligned, p);
        } catch (...) {
            raw_release(a, p);
            throw;
        }
        live_.fetch_add(1, std::memory_order_relaxed);
        return aligned;
    }

    const Heap heap_;
    std::mutex mutex_;
    std::unordered_map<void*, void*> raw_;  // aligned start → what aclrtMalloc returned
    std::atomic<size_t> live_{0};
};

// Never destroyed: buffers freed by static destructors at exit still find them.
AscendBackend& device_heap() noexcept {
    alignas(AscendBackend) static unsigned char storage[sizeof(AscendBackend)];
    static AscendBackend* instance = ::new (static_cast<void*>(storage)) AscendBackend(Heap::kDevice);
    return *instance;
}
AscendBackend& dvpp_heap() noexcept {
    alignas(AscendBackend) static unsigned char storage[sizeof(AscendBackend)];
    static AscendBackend* instance = ::new (static_cast<void*>(storage)) AscendBackend(Heap::kDvpp);
    return *instance;
}

}  // namespace

DeviceBackend* ascend_memory_backend() noexcept {
    return &device_heap();
}

DeviceBackend* dvpp_memory_backend() noexcept {
    return dvpp() ? &dvpp_heap() : nullptr;
}

size_t live_device_allocations() noexcept {
    return device_heap().live() + dvpp_heap().live();
}

}  // namespace acl
}  // namespace kes
