// memory.cpp — DVPP size rule, plain aligned buffers (kes_mem_alloc*) and the device-memory backends.
//
// kes_mem_free takes only a pointer, yet a buffer may come from either backend and with any
// alignment. So every live buffer is recorded (pointer → backend) in a process-wide registry: free
// then returns it to the backend that made it, and a pointer Kestrel never handed out (or one freed
// twice) is reported and ignored instead of corrupting the C heap.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

#include <unistd.h>

#include "ascend_runtime.hpp"
#include "device_backend.hpp"
#include "kes/error.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"
#include "kestrel/memory.h"

namespace kes {
namespace {

// Holds a T that is constructed on first use and never destroyed, so code running in static
// destructors (an app's global pool, a leaked buffer freed at exit) can still reach it.
template <class T>
class Immortal {
public:
    template <class... Args>
    explicit Immortal(Args&&... args) {
        ::new (static_cast<void*>(storage_)) T(std::forward<Args>(args)...);
    }
    T& get() noexcept { return *std::launder(reinterpret_cast<T*>(storage_)); }

private:
    alignas(T) unsigned char storage_[sizeof(T)];
};

size_t page_size() noexcept {
    static const size_t size = [] {
        long v = sysconf(_SC_PAGESIZE);
        return v > 0 && is_pow2(static_cast<uint64_t>(v)) ? static_cast<size_t>(v) : size_t{4096};
    }();
    return size;
}

// Host memory via posix_memalign, so ordinary free() releases any alignment. Regions of a page or
// more are page-aligned: pool chunks and frame buffers then behave like device memory (which is
// mapped in pages) and can be madvise()d or pinned by a future backend without copying.
class HostBackend final : public DeviceBackend {
public:
    const char* name() const noexcept override { return "host"; }

    void* allocate(size_t size, size_t alignment) noexcept override {
        size_t align = alignment < KES_MEM_ALIGNMENT ? size_t{KES_MEM_ALIGNMENT} : alignment;
        if (size >= page_size() && align < page_size()) align = page_size();
        // Requests no machine can satisfy are refused here rather than passed on: sanitizer
        // allocators abort on absurd sizes instead of returning NULL.
        if (size == 0 || size > static_cast<size_t>(PTRDIFF_MAX) - align) return nullptr;
        void* ptr = nullptr;
        if (posix_memalign(&ptr, align, size) != 0) return nullptr;
        return ptr;
    }

    void release(void* ptr) noexcept override { std::free(ptr); }
};

DeviceBackend& host_backend() noexcept {
    static Immortal<HostBackend> backend;
    return backend.get();
}

// KES_MEM_DEVICE follows the backend choice (kestrel/backend.h): aclrtMalloc when Ascend is active,
// the host backend otherwise (every machine without CANN), so code written for the board runs unchanged.
DeviceBackend& device_backend() noexcept {
    DeviceBackend* ascend = acl::device_memory_backend();
    return ascend ? *ascend : host_backend();
}

// KES_MEM_DVPP: acldvppMalloc when Ascend is active with DVPP, else as KES_MEM_DEVICE.
DeviceBackend& dvpp_backend() noexcept {
    DeviceBackend* dvpp = acl::dvpp_memory_backend();
    return dvpp ? *dvpp : device_backend();
}

// Which backend owns each live kes_mem_alloc buffer. A mutex-protected hash map: kes_mem_alloc is
// for long-lived buffers (per-frame buffers come from pools), so one uncontended lock per call is
// cheap next to the allocation itself.
class AllocationRegistry {
public:
    // Throws std::bad_alloc if the entry cannot be stored.
    void add(void* ptr, DeviceBackend* backend, int kind) {
        std::lock_guard<std::mutex> lock(mutex_);
        owners_.emplace(ptr, Owner{backend, kind});
    }
    // Forgets ptr and returns its backend, or nullptr if ptr is not a live buffer.
    DeviceBackend* remove(void* ptr) noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = owners_.find(ptr);
        if (it == owners_.end()) return nullptr;
        DeviceBackend* backend = it->second.backend;
        owners_.erase(it);
        return backend;
    }
    // The kes_mem_backend ptr was allocated as, or -1 if ptr does not start a live buffer.
    int kind_of(const void* ptr) noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = owners_.find(const_cast<void*>(ptr));
        return it == owners_.end() ? -1 : it->second.kind;
    }

private:
    struct Owner {
        DeviceBackend* backend;
        int kind;
    };
    std::mutex mutex_;
    std::unordered_map<void*, Owner> owners_;
};

AllocationRegistry& registry() noexcept {
    static Immortal<AllocationRegistry> instance;
    return instance.get();
}

const char* backend_name(int kind) noexcept {
    switch (kind) {
        case KES_MEM_HOST: return "KES_MEM_HOST";
        case KES_MEM_DEVICE: return "KES_MEM_DEVICE";
        case KES_MEM_DVPP: return "KES_MEM_DVPP";
    }
    return "?";
}

void* allocate_buffer(int kind, size_t size, size_t alignment) {
    DeviceBackend* backend = backend_for(kind);
    KES_REQUIRE(backend != nullptr, "backend %d is not a kes_mem_backend value", kind);
    KES_REQUIRE(size > 0, "size must be > 0");
    const size_t bytes = kes_mem_dvpp_size(size);
    if (bytes == 0) {
        KES_FAIL(KES_ERR_OUT_OF_MEMORY, "size %zu is too large: its DVPP size (ALIGN_UP(size, 32) + 32) overflows",
                 size);
    }
    void* ptr = backend->allocate(bytes, alignment);
    if (ptr == nullptr) {
        std::string detail;
        const kes_status why = backend->failure(&detail);
        if (!detail.empty()) {
            KES_FAIL(why, "%s (%s backend), %zu bytes: %s", backend_name(kind), backend->name(), size, detail.c_str());
        }
        KES_FAIL(KES_ERR_OUT_OF_MEMORY, "%s (%s backend) has no %zu bytes aligned to %zu for a %zu-byte buffer",
                 backend_name(kind), backend->name(), bytes, alignment, size);
    }
    try {
        registry().add(ptr, backend, kind);
    } catch (const std::bad_alloc&) {
        backend->release(ptr);
        KES_FAIL(KES_ERR_OUT_OF_MEMORY, "no memory to record a %zu-byte buffer", size);
    }
    return ptr;
}

}  // namespace

DeviceBackend* backend_for(int kind) noexcept {
    switch (kind) {
        case KES_MEM_HOST: return &host_backend();
        case KES_MEM_DEVICE: return &device_backend();
        case KES_MEM_DVPP: return &dvpp_backend();
    }
    return nullptr;
}

}  // namespace kes

extern "C" {

size_t kes_mem_dvpp_size(size_t len) {
    // BOARD-RULES §Memory: acldvppMalloc reserves ALIGN_UP(len, 32) + 32 bytes. The largest len whose result
    // still fits is SIZE_MAX - 63 (ALIGN_UP gives SIZE_MAX - 63, plus 32 = SIZE_MAX - 31).
    if (len > SIZE_MAX - 63) return 0;
    return static_cast<size_t>(kes::align_up(len, 32) + 32);
}

kes_status kes_mem_alloc(kes_mem_backend backend, size_t size, void** out_ptr) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_ptr);
        *out_ptr = nullptr;
        *out_ptr = kes::allocate_buffer(static_cast<int>(kes::enum_value(backend)), size, KES_MEM_ALIGNMENT);
        return KES_OK;
    });
}

kes_status kes_mem_alloc_aligned(kes_mem_backend backend, size_t size, size_t alignment, void** out_ptr) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_ptr);
        *out_ptr = nullptr;
        KES_REQUIRE(kes::is_pow2(alignment) && alignment >= KES_MEM_ALIGNMENT,
                    "alignment must be a power of two >= %u (got %zu)", KES_MEM_ALIGNMENT, alignment);
        *out_ptr = kes::allocate_buffer(static_cast<int>(kes::enum_value(backend)), size, alignment);
        return KES_OK;
    });
}

void kes_mem_free(void* ptr) {
    if (ptr == nullptr) return;
    kes::guard(__func__, [&] {
        kes::DeviceBackend* backend = kes::registry().remove(ptr);
        if (backend == nullptr) {
            // Handing an unknown pointer to free() would corrupt the heap far from the bug; refusing
            // keeps the process alive and the message points at the culprit.
            KES_LOGE("sdk", "kes_mem_free: %p was not returned by kes_mem_alloc*, or was already freed; ignored", ptr);
            KES_FAIL(KES_ERR_INVALID_ARGUMENT, "%p was not returned by kes_mem_alloc*, or was already freed; ignored",
                     ptr);
        }
        backend->release(ptr);
        return KES_OK;
    });
}

kes_status kes_mem_copy(void* dst, size_t dst_capacity, const void* src, size_t count, kes_memcpy_kind kind) {
    return kes::guard(__func__, [&] {
        const int raw_kind = static_cast<int>(kes::enum_value(kind));
        KES_REQUIRE(raw_kind >= KES_MEMCPY_HOST_TO_HOST && raw_kind <= KES_MEMCPY_DEVICE_TO_DEVICE,
                    "kind %d is not a kes_memcpy_kind value", raw_kind);
        KES_REQUIRE_NOT_NULL(dst);
        KES_REQUIRE_NOT_NULL(src);
        KES_REQUIRE(count <= dst_capacity, "count %zu exceeds dst_capacity %zu", count, dst_capacity);
        // Compare as integers: the ranges may belong to different objects, where pointer comparison
        // is undefined. Differences avoid computing an end address that could wrap.
        const uintptr_t d = reinterpret_cast<uintptr_t>(dst);
        const uintptr_t s = reinterpret_cast<uintptr_t>(src);
        const uintptr_t gap = d < s ? s - d : d - s;
        KES_REQUIRE(count == 0 || gap >= count, "source [%p, +%zu) and destination [%p, +%zu) overlap", src, count, dst,
                    count);
        // The device kinds go to aclrtMemcpy when the Ascend backend is active (device memory may not
        // be CPU-addressable); otherwise device memory is host memory and every kind is a plain copy.
        if (count == 0) return KES_OK;
        if (raw_kind != KES_MEMCPY_HOST_TO_HOST && kes::acl::copy(dst, dst_capacity, src, count, raw_kind)) {
            return KES_OK;
        }
        std::memcpy(dst, src, count);
        return KES_OK;
    });
}

kes_status kes_mem_get_backend(const void* ptr, kes_mem_backend* out_backend) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_backend);
        *out_backend = KES_MEM_HOST;
        KES_REQUIRE_NOT_NULL(ptr);
        const int kind = kes::registry().kind_of(ptr);
        if (kind < 0) KES_FAIL(KES_ERR_NOT_FOUND, "%p does not start a live kes_mem_alloc buffer", ptr);
        *out_backend = static_cast<kes_mem_backend>(kind);
        return KES_OK;
    });
}

int kes_mem_is_host_accessible(kes_mem_backend backend) {
    switch (kes::enum_value(backend)) {
        case KES_MEM_HOST: return 1;
        case KES_MEM_DEVICE:
        case KES_MEM_DVPP: return kes::acl::device_memory_host_accessible() ? 1 : 0;
    }
    return 0;
}

}  // extern "C"
