/* kestrel/memory.h — device memory, aligned buffers and the DVPP-style memory pool.
 *
 * On an Ascend board, media buffers live in a DVPP memory region with two rules (docs/BOARD-RULES.md §Memory):
 *   - every buffer starts 128-byte aligned;
 *   - a buffer of `len` bytes occupies ALIGN_UP(len, 32) + 32 bytes (kes_mem_dvpp_size()).
 * Kestrel applies both rules to every buffer it hands out, on the host too, so that the sizes and
 * offsets an app sees on a laptop are the ones it will see on the board.
 *
 * Three ways to get memory:
 *   1. kes_mem_alloc / kes_mem_free: one aligned buffer straight from the backend, no pool.
 *   2. kes_mem_pool: one contiguous region carved into blocks (like ACLLite's DVPP pool or carving a
 *      big acldvppMalloc by hand), optionally growing in chunks. O(1) alloc and free (two-level
 *      segregated fit), neighbours coalesce on free, statistics, and misuse is caught: a pointer the
 *      pool never gave out, or one freed twice, is refused with KES_ERR_INVALID_ARGUMENT and a message
 *      — never a crash or a corrupted pool.
 *   3. A pool over memory the caller already owns (kes_mem_pool_config.external_memory), e.g. a region
 *      reserved at start-up; the pool never frees it.
 *
 * Bookkeeping lives outside the managed memory, so a pool never writes into the blocks it manages
 * (a requirement for NPU memory the CPU cannot touch) and a buffer overrun cannot corrupt it.
 *
 * Backends: KES_MEM_HOST (host memory; regions of a page or more are page-aligned) is always
 * available. KES_MEM_DEVICE is the board's device memory: aclrtMalloc when the Ascend backend is
 * active (kestrel/backend.h), host memory otherwise, so code written for the board runs unchanged.
 * KES_MEM_DVPP is the memory the DVPP hardware reads and writes (acldvppMalloc, from libacl_dvpp.so):
 * JPEG bytes to decode, pictures for VPC, frames for VDEC. It follows the same choice; with Ascend
 * active but no DVPP library it is device memory (aclrtMalloc). dvpp's hardware path puts its output
 * images there, so they feed a model's static-AIPP input with no copy.
 * Device memory is CPU-addressable on the boards (ACL_DEVICE run mode) but not on PCIe cards (ACL_HOST):
 * ask kes_mem_is_host_accessible before touching it, and move data with kes_mem_copy, which follows
 * aclrtMemcpy's argument checks and is aclrtMemcpy for the device kinds when Ascend is active.
 *
 * Thread-safety: kes_mem_alloc/free/copy may be called from any thread. All kes_mem_pool_* calls on one
 * pool may run concurrently from any threads (an internal lock serialises them); destroying a pool
 * while other threads still use it is the caller's bug.
 * Ownership: memory from a pool belongs to the pool; kes_mem_pool_destroy releases all of it at once
 * (blocks still allocated then are reported at KES_LOG_WARN as leaks).
 */
#ifndef KESTREL_MEMORY_H
#define KESTREL_MEMORY_H

#include "kestrel/status.h"

KES_BEGIN_DECLS

/* Every block from Kestrel starts at a multiple of this (DVPP's rule; also a cache-line multiple). */
#define KES_MEM_ALIGNMENT 128u

typedef enum kes_mem_backend {
    KES_MEM_HOST = 0,   /* ordinary host memory */
    KES_MEM_DEVICE = 1, /* the board's device (NPU) memory; host memory in host builds */
    KES_MEM_DVPP = 2    /* the board's DVPP memory (acldvppMalloc); host memory in host builds */
} kes_mem_backend;

typedef enum kes_memcpy_kind {
    KES_MEMCPY_HOST_TO_HOST = 0,
    KES_MEMCPY_HOST_TO_DEVICE = 1,
    KES_MEMCPY_DEVICE_TO_HOST = 2,
    KES_MEMCPY_DEVICE_TO_DEVICE = 3
} kes_memcpy_kind;

/* ALIGN_UP(len, 32) + 32: the bytes DVPP reserves for a buffer of `len` bytes. 0 if that overflows. */
KES_API size_t kes_mem_dvpp_size(size_t len);

/* ---- plain buffers ------------------------------------------------------------------------------ */

/* Allocates kes_mem_dvpp_size(size) bytes starting 128-byte aligned. size must be > 0.
 * KES_ERR_OUT_OF_MEMORY when the backend has no memory left; *out_ptr is then NULL. */
KES_API kes_status kes_mem_alloc(kes_mem_backend backend, size_t size, void** out_ptr);

/* Like kes_mem_alloc with a caller-chosen alignment (a power of two ≥ 128). */
KES_API kes_status kes_mem_alloc_aligned(kes_mem_backend backend, size_t size, size_t alignment, void** out_ptr);

/* Frees a buffer from kes_mem_alloc*. NULL is a no-op. A pointer that is not a live kes_mem_alloc*
 * buffer (already freed, or never allocated there) is left alone: logged at KES_LOG_ERROR and recorded
 * as this thread's last error (KES_ERR_INVALID_ARGUMENT). */
KES_API void kes_mem_free(void* ptr);

/* Copies `count` bytes; refuses (KES_ERR_INVALID_ARGUMENT) NULL pointers, count > dst_capacity and
 * overlapping ranges, as aclrtMemcpy does. */
KES_API kes_status kes_mem_copy(void* dst, size_t dst_capacity, const void* src, size_t count, kes_memcpy_kind kind);

/* The backend a live kes_mem_alloc* buffer came from (ptr must be its start). KES_ERR_NOT_FOUND for any
 * other pointer (pool blocks: kes_mem_pool_backend of the pool). */
KES_API kes_status kes_mem_get_backend(const void* ptr, kes_mem_backend* out_backend);

/* 1 when the CPU may read and write memory of this backend directly (always for KES_MEM_HOST; for
 * KES_MEM_DEVICE and KES_MEM_DVPP unless the Ascend backend runs in ACL_HOST mode or is required but unavailable), else
 * 0. Resolves the backend choice (kestrel/backend.h) on first call. */
KES_API int kes_mem_is_host_accessible(kes_mem_backend backend);

/* ---- pool ----------------------------------------------------------------------------------------- */

typedef struct kes_mem_pool kes_mem_pool; /* opaque handle */

typedef struct kes_mem_pool_config {
    uint32_t struct_size;    /* sizeof(kes_mem_pool_config): lets the struct grow without breaking the ABI */
    kes_mem_backend backend; /* where chunks come from; with external_memory, what that memory is
                                (reported by kes_mem_pool_backend, e.g. to let DVPP write into it) */
    size_t initial_bytes;    /* size of the first region; rounded up to 128 (down with
                                external_memory, so the pool never passes the region's end) */
    size_t grow_bytes;       /* 0: fixed size. Otherwise, when full, add a chunk of max(grow_bytes,
                                needed) bytes */
    size_t max_bytes;        /* with grow_bytes: total capacity never exceeds this (0 = no cap);
                                the last chunk is cut to what is left */
    void* external_memory;   /* optional caller-owned region (128-byte aligned) used instead of
                                allocating; initial_bytes is then its size and growth is off */
    const char* name;        /* for log and error messages ("jpegd-out", "model-work"); copied */
} kes_mem_pool_config;

/* Fills `config` with defaults: host backend, 64 MiB, no growth, name "pool". */
KES_API void kes_mem_pool_config_init(kes_mem_pool_config* config);

typedef struct kes_mem_pool_stats {
    size_t capacity_bytes;     /* total bytes managed (all chunks) */
    size_t in_use_bytes;       /* bytes taken by live blocks, as placed (multiples of 128) */
    size_t requested_bytes;    /* Σ size the callers asked for, over live blocks */
    size_t peak_in_use_bytes;  /* highest in_use_bytes since creation or kes_mem_pool_reset_peak */
    size_t free_bytes;         /* capacity_bytes - in_use_bytes */
    size_t largest_free_block; /* the biggest block an alloc could still get without growing */
    uint64_t live_blocks;      /* blocks allocated and not yet freed */
    uint64_t free_blocks;      /* separate free ranges */
    uint64_t total_allocs;     /* successful allocations since creation */
    uint64_t failed_allocs;    /* allocations refused with KES_ERR_OUT_OF_MEMORY */
    uint32_t chunk_count;      /* regions (1 unless the pool has grown) */
    double fragmentation;      /* 1 - largest_free_block / free_bytes; 0 when free space is one block */
} kes_mem_pool_stats;

/* Creates a pool. KES_ERR_INVALID_ARGUMENT for a bad config (struct_size, zero size, misaligned
 * external memory, max_bytes < initial_bytes), KES_ERR_OUT_OF_MEMORY if the first region cannot be
 * allocated. */
KES_API kes_status kes_mem_pool_create(const kes_mem_pool_config* config, kes_mem_pool** out_pool);

/* Destroys the pool and frees its chunks. NULL is a no-op. */
KES_API void kes_mem_pool_destroy(kes_mem_pool* pool);

/* Allocates a block for `size` bytes (size > 0). The block starts 128-byte aligned and has at least
 * kes_mem_dvpp_size(size) usable bytes. KES_ERR_OUT_OF_MEMORY when no free block is large enough and
 * the pool cannot grow; *out_ptr is then NULL and the pool is unchanged. */
KES_API kes_status kes_mem_pool_alloc(kes_mem_pool* pool, size_t size, void** out_ptr);

/* Returns a block to the pool and merges it with free neighbours. KES_ERR_INVALID_ARGUMENT (nothing
 * changed) for a pointer outside the pool, one not at the start of a block, or a block already free.
 * NULL is a no-op returning KES_OK. */
KES_API kes_status kes_mem_pool_free(kes_mem_pool* pool, void* ptr);

/* Usable bytes of the live block starting at ptr (≥ kes_mem_dvpp_size of the requested size). */
KES_API kes_status kes_mem_pool_block_size(const kes_mem_pool* pool, const void* ptr, size_t* out_size);

/* 1 if ptr points anywhere inside memory managed by the pool, else 0. */
KES_API int kes_mem_pool_contains(const kes_mem_pool* pool, const void* ptr);
/* The backend the pool was configured with (KES_MEM_HOST for NULL). */
KES_API kes_mem_backend kes_mem_pool_backend(const kes_mem_pool* pool);

KES_API kes_status kes_mem_pool_get_stats(const kes_mem_pool* pool, kes_mem_pool_stats* out_stats);
KES_API void kes_mem_pool_reset_peak(kes_mem_pool* pool);

/* Walks every block and checks the pool's invariants (blocks tile each chunk, no two free neighbours,
 * free lists match, stats add up). KES_OK, or KES_ERR_INTERNAL naming the first broken invariant.
 * O(blocks + capacity/128): for tests and diagnostics, not hot paths. */
KES_API kes_status kes_mem_pool_check(const kes_mem_pool* pool);

KES_END_DECLS

#endif /* KESTREL_MEMORY_H */
