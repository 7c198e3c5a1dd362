// device_backend.hpp — where Kestrel's buffers come from (internal to the sdk; not installed).
//
// kes_mem_alloc and every kes_mem_pool chunk get their memory from a DeviceBackend. The host backend
// is always present; KES_MEM_DEVICE is the seam for a board's device memory: aclrtMalloc when the
// Ascend backend is active (ascend_memory.cpp, chosen by kestrel/backend.h), the host backend
// otherwise, so code written for the board runs unchanged on a laptop. DVPP memory (acldvppMalloc,
// from libacl_dvpp.so) joins as a third backend with the DVPP issue: media buffers must come from it
// on a board, model buffers from aclrtMalloc.
//
// A backend hands out raw regions only. It never needs to be CPU-accessible: callers (the pool in
// particular) keep all bookkeeping out of band and never write into what a backend returns.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>

#include "kestrel/memory.h"

namespace kes {

class DeviceBackend {
public:
    virtual ~DeviceBackend() = default;

    // Short name for log and error messages ("host", "dvpp").
    virtual const char* name() const noexcept = 0;

    // Returns at least `size` bytes starting at a multiple of `alignment` (a power of two ≥
    // KES_MEM_ALIGNMENT), or nullptr when the backend has no memory for it. Never throws.
    virtual void* allocate(size_t size, size_t alignment) noexcept = 0;

    // Gives back a region from allocate(). nullptr is a no-op.
    virtual void release(void* ptr) noexcept = 0;

    // Why this thread's last allocate() returned nullptr: a status and, when the backend knows more
    // than "no memory" (an AscendCL error, an unavailable runtime), a message for kes_last_error().
    virtual kes_status failure(std::string* detail) const noexcept {
        (void)detail;
        return KES_ERR_OUT_OF_MEMORY;
    }
};

// The backend behind `kind` (a kes_mem_backend value), or nullptr for any other value. The returned
// object lives for the whole process (never destroyed, so static destructors may still release memory).
DeviceBackend* backend_for(int kind) noexcept;

}  // namespace kes
