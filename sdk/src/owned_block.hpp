// owned_block.hpp — the memory behind an owned kes_image or kes_tensor (kes_image_alloc,
// kes_tensor_alloc): a block from the caller's pool, or from host memory when there is none, and its
// return to where it came from.
#pragma once

#include <cstddef>
#include <string>

#include "kestrel/memory.h"

namespace kes {

// A block of `bytes` (at least 1, so that an owned object always has data != NULL) from `pool`, or
// host memory when pool is NULL; nullptr with the allocator's status in *out_status when it refuses.
void* try_alloc_owned_block(kes_mem_pool* pool, size_t bytes, kes_status* out_status) noexcept;

// Throws kes::Error(status): "cannot allocate <bytes> bytes for <what> from the pool|host memory:
// <the allocator's reason, kes_last_error()>".
[[noreturn]] void fail_owned_block(kes_status status, kes_mem_pool* pool, size_t bytes, const std::string& what);

// try_alloc_owned_block, or fail_owned_block with what() naming the object (e.g. "NV12 1920x1080"):
// called only on failure, so a successful allocation formats nothing.
template <class What>
void* alloc_owned_block(kes_mem_pool* pool, size_t bytes, What&& what) {
    kes_status st = KES_OK;
    void* data = try_alloc_owned_block(pool, bytes, &st);
    if (!data) fail_owned_block(st, pool, bytes, what());
    return data;
}

// Returns a block of alloc_owned_block to its pool (or host memory); NULL is a no-op. A release
// cannot fail: a pool's refusal (a block that is not its own) is logged, naming `caller`.
void free_owned_block(kes_mem_pool* pool, void* data, const char* caller);

}  // namespace kes
