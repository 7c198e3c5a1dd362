// Tests for kes_mem_pool (kestrel/memory.h): placement, coalescing, misuse detection, growth, external
// memory, statistics, a randomised run against a reference model, and concurrent use.
#include <gtest/gtest.h>
#include <cstddef>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kestrel/log.h"
#include "kestrel/memory.h"

#include "log_capture.hpp"
#include "struct_size_check.hpp"

using kes_test::expect_struct_growth;
using kes_test::SizedStruct;

namespace {

// Out-parameters start pointing here, so a test sees whether a failing call reset them to NULL.
char g_poison;

constexpr size_t kKiB = 1024;

struct PoolDeleter {
    void operator()(kes_mem_pool* pool) const { kes_mem_pool_destroy(pool); }
};
using PoolPtr = std::unique_ptr<kes_mem_pool, PoolDeleter>;

struct PoolOptions {
    size_t initial = 64 * kKiB;
    size_t grow = 0;
    size_t max = 0;
    void* external = nullptr;
    kes_mem_backend backend = KES_MEM_HOST;
    const char* name = "test-pool";
};

PoolPtr make_pool(const PoolOptions& o) {
    kes_mem_pool_config config;
    kes_mem_pool_config_init(&config);
    config.backend = o.backend;
    config.initial_bytes = o.initial;
    config.grow_bytes = o.grow;
    config.max_bytes = o.max;
    config.external_memory = o.external;
    config.name = o.name;
    kes_mem_pool* pool = nullptr;
    EXPECT_EQ(kes_mem_pool_create(&config, &pool), KES_OK) << kes_last_error();
    return PoolPtr(pool);
}

PoolPtr make_pool(size_t initial) {
    PoolOptions o;
    o.initial = initial;
    return make_pool(o);
}

kes_mem_pool_stats stats_of(const kes_mem_pool* pool) {
    kes_mem_pool_stats s;
    std::memset(&s, 0, sizeof s);
    EXPECT_EQ(kes_mem_pool_get_stats(pool, &s), KES_OK) << kes_last_error();
    return s;
}

// The bytes a block for `request` occupies: the DVPP size rounded up to the 128-byte placement grain.
size_t placed(size_t request) {
    return (kes_mem_dvpp_size(request) + 127) / 128 * 128;
}

// The largest request whose block is exactly `block` bytes (a multiple of 128).
size_t request_filling(size_t block) {
    return block - 32;
}

void* must_alloc(kes_mem_pool* pool, size_t size) {
    void* p = nullptr;
    EXPECT_EQ(kes_mem_pool_alloc(pool, size, &p), KES_OK) << kes_last_error();
    return p;
}

bool aligned128(const void* p) {
    return reinterpret_cast<uintptr_t>(p) % KES_MEM_ALIGNMENT == 0;
}

bool last_error_mentions(const char* text) {
    return std::string(kes_last_error()).find(text) != std::string::npos;
}

// Field-by-field, since the struct has padding that memcmp would read.
void expect_same_stats(const kes_mem_pool_stats& a, const kes_mem_pool_stats& b) {
    EXPECT_EQ(a.capacity_bytes, b.capacity_bytes);
    EXPECT_EQ(a.in_use_bytes, b.in_use_bytes);
    EXPECT_EQ(a.requested_bytes, b.requested_bytes);
    EXPECT_EQ(a.peak_in_use_bytes, b.peak_in_use_bytes);
    EXPECT_EQ(a.free_bytes, b.free_bytes);
    EXPECT_EQ(a.largest_free_block, b.largest_free_block);
    EXPECT_EQ(a.live_blocks, b.live_blocks);
    EXPECT_EQ(a.free_blocks, b.free_blocks);
    EXPECT_EQ(a.total_allocs, b.total_allocs);
    EXPECT_EQ(a.failed_allocs, b.failed_allocs);
    EXPECT_EQ(a.chunk_count, b.chunk_count);
    EXPECT_EQ(a.fragmentation, b.fragmentation);
}

using kes_test::LogCapture;

// A caller-owned, 128-byte aligned region for external-memory pools.
struct AlignedFree {
    void operator()(unsigned char* p) const { std::free(p); }
};
std::unique_ptr<unsigned char, AlignedFree> aligned_region(size_t bytes) {
    return std::unique_ptr<unsigned char, AlignedFree>(static_cast<unsigned char*>(std::aligned_alloc(128, bytes)));
}

TEST(MemPool, ConfigInitSetsDocumentedDefaults) {
    kes_mem_pool_config config;
    std::memset(&config, 0xCD, sizeof config);
    kes_mem_pool_config_init(&config);
    EXPECT_EQ(config.struct_size, sizeof(kes_mem_pool_config));
    EXPECT_EQ(config.backend, KES_MEM_HOST);
    EXPECT_EQ(config.initial_bytes, 64u << 20);
    EXPECT_EQ(config.grow_bytes, 0u);
    EXPECT_EQ(config.max_bytes, 0u);
    EXPECT_EQ(config.external_memory, nullptr);
    EXPECT_STREQ(config.name, "pool");
    kes_mem_pool_config_init(nullptr);  // no-op

    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&config, &pool), KES_OK) << kes_last_error();
    EXPECT_EQ(stats_of(pool).capacity_bytes, 64u << 20);
    kes_mem_pool_destroy(pool);
}

TEST(MemPool, BadConfigIsRefused) {
    kes_mem_pool_config good;
    kes_mem_pool_config_init(&good);
    good.initial_bytes = 4 * kKiB;
    kes_mem_pool* pool = reinterpret_cast<kes_mem_pool*>(&g_poison);

    EXPECT_EQ(kes_mem_pool_create(nullptr, &pool), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(pool, nullptr);
    EXPECT_EQ(kes_mem_pool_create(&good, nullptr), KES_ERR_INVALID_ARGUMENT);

    auto expect_refused = [&](kes_mem_pool_config c, const char* mention) {
        kes_mem_pool* p = reinterpret_cast<kes_mem_pool*>(&g_poison);
        EXPECT_EQ(kes_mem_pool_create(&c, &p), KES_ERR_INVALID_ARGUMENT) << mention;
        EXPECT_EQ(p, nullptr);
        EXPECT_TRUE(last_error_mentions(mention)) << kes_last_error();
    };
    kes_mem_pool_config c = good;
    c.struct_size = 0;
    expect_refused(c, "struct_size");
    c.struct_size = sizeof(kes_mem_pool_config) - 1;
    expect_refused(c, "struct_size");
    c = good;
    c.initial_bytes = 0;
    expect_refused(c, "initial_bytes");
    c = good;
    c.max_bytes = 2 * kKiB;
    expect_refused(c, "max_bytes");
    c = good;
    c.initial_bytes = 100;  // rounds up to 128, above the cap
    c.max_bytes = 100;
    c.grow_bytes = 128;
    expect_refused(c, "max_bytes");
    c = good;
    c.initial_bytes = SIZE_MAX;
    expect_refused(c, "initial_bytes");
    c = good;
    c.grow_bytes = SIZE_MAX - 5;
    expect_refused(c, "grow_bytes");
    c = good;
    const int kBadBackend = 42;
    std::memcpy(&c.backend, &kBadBackend, sizeof c.backend);  // as a C caller could
    expect_refused(c, "backend");

    auto region = aligned_region(8 * kKiB);
    c = good;
    c.external_memory = region.get() + 64;
    expect_refused(c, "aligned");
    c = good;
    c.external_memory = region.get();
    c.initial_bytes = 100;
    expect_refused(c, "smaller than one");
}

TEST(MemPool, LargerStructSizeFromANewerHeaderIsAccepted) {
    struct {
        kes_mem_pool_config config;
        unsigned char future_fields[32];
    } bigger;
    std::memset(&bigger, 0, sizeof bigger);
    kes_mem_pool_config_init(&bigger.config);
    bigger.config.struct_size = sizeof bigger;
    bigger.config.initial_bytes = 4 * kKiB;
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&bigger.config, &pool), KES_OK) << kes_last_error();
    kes_mem_pool_destroy(pool);
}

TEST(MemPool, NullArgumentsAreRefusedOrNoOps) {
    auto pool = make_pool(4 * kKiB);
    void* p = static_cast<void*>(&g_poison);
    EXPECT_EQ(kes_mem_pool_alloc(nullptr, 64, &p), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(kes_mem_pool_alloc(pool.get(), 64, nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_mem_pool_alloc(pool.get(), 0, &p), KES_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(last_error_mentions("size")) << kes_last_error();
    EXPECT_EQ(kes_mem_pool_free(pool.get(), nullptr), KES_OK);
    EXPECT_EQ(kes_mem_pool_free(nullptr, nullptr), KES_ERR_INVALID_ARGUMENT);
    size_t size = 1;
    EXPECT_EQ(kes_mem_pool_block_size(pool.get(), nullptr, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_mem_pool_block_size(nullptr, &size, &size), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_mem_pool_get_stats(pool.get(), nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_mem_pool_get_stats(nullptr, nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_mem_pool_check(nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_mem_pool_contains(nullptr, &size), 0);
    EXPECT_EQ(kes_mem_pool_contains(pool.get(), nullptr), 0);
    kes_mem_pool_reset_peak(nullptr);
    kes_mem_pool_destroy(nullptr);
    EXPECT_EQ(stats_of(pool.get()).failed_allocs, 0u);  // argument errors are not exhaustion
}

TEST(MemPool, EveryBlockIs128ByteAligned) {
    LogCapture quiet;  // blocks left live are reported when the pool goes
    auto pool = make_pool(256 * kKiB);
    std::vector<void*> blocks;
    for (size_t size = 1; size <= 2000; size += 37) {
        void* p = must_alloc(pool.get(), size);
        ASSERT_NE(p, nullptr);
        EXPECT_TRUE(aligned128(p)) << p << " for " << size;
        blocks.push_back(p);
    }
    for (size_t i = 0; i < blocks.size(); i += 2) ASSERT_EQ(kes_mem_pool_free(pool.get(), blocks[i]), KES_OK);
    for (size_t size : {size_t{1}, size_t{96}, size_t{97}, size_t{5000}}) {  // reuse holes
        void* p = must_alloc(pool.get(), size);
        EXPECT_TRUE(aligned128(p)) << p;
    }
    EXPECT_EQ(kes_mem_pool_check(pool.get()), KES_OK) << kes_last_error();
}

TEST(MemPool, BlockIsDvppSizeRoundedUpTo128) {
    LogCapture quiet;  // blocks left live are reported when the pool goes
    auto pool = make_pool(64 * kKiB);
    const struct {
        size_t request, block;
    } cases[] = {{1, 128}, {96, 128}, {97, 256}, {4064, 4096}, {4065, 4224}, {10000, 10112}};
    for (const auto& c : cases) {
        ASSERT_EQ(placed(c.request), c.block);
        void* p = must_alloc(pool.get(), c.request);
        size_t size = 0;
        ASSERT_EQ(kes_mem_pool_block_size(pool.get(), p, &size), KES_OK) << kes_last_error();
        EXPECT_EQ(size, c.block) << "request " << c.request;
        EXPECT_GE(size, kes_mem_dvpp_size(c.request));
    }
}

TEST(MemPool, FreeCoalescesNeighbours) {
    auto pool = make_pool(8 * kKiB);
    void* b[4];
    for (auto& p : b) p = must_alloc(pool.get(), request_filling(2 * kKiB));
    EXPECT_EQ(stats_of(pool.get()).free_blocks, 0u);

    ASSERT_EQ(kes_mem_pool_free(pool.get(), b[0]), KES_OK);
    ASSERT_EQ(kes_mem_pool_free(pool.get(), b[2]), KES_OK);
    EXPECT_EQ(stats_of(pool.get()).free_blocks, 2u);
    EXPECT_EQ(stats_of(pool.get()).largest_free_block, 2 * kKiB);

    ASSERT_EQ(kes_mem_pool_free(pool.get(), b[1]), KES_OK);  // merges with both neighbours
    kes_mem_pool_stats s = stats_of(pool.get());
    EXPECT_EQ(s.free_blocks, 1u);
    EXPECT_EQ(s.largest_free_block, 6 * kKiB);
    EXPECT_EQ(s.fragmentation, 0.0);
    EXPECT_EQ(kes_mem_pool_check(pool.get()), KES_OK) << kes_last_error();

    void* big = must_alloc(pool.get(), request_filling(6 * kKiB));  // the merged range is one block again
    EXPECT_EQ(big, b[0]);
    ASSERT_EQ(kes_mem_pool_free(pool.get(), b[3]), KES_OK);
    ASSERT_EQ(kes_mem_pool_free(pool.get(), big), KES_OK);
    s = stats_of(pool.get());
    EXPECT_EQ(s.free_blocks, 1u);
    EXPECT_EQ(s.largest_free_block, 8 * kKiB);
    EXPECT_EQ(kes_mem_pool_check(pool.get()), KES_OK) << kes_last_error();
}

TEST(MemPool, DoubleFreeIsRefusedAndPoolUnchanged) {
    auto pool = make_pool(16 * kKiB);
    void* a = must_alloc(pool.get(), 1000);
    void* b = must_alloc(pool.get(), 1000);
    void* c = must_alloc(pool.get(), 1000);
    void* d = must_alloc(pool.get(), 1000);

    // b stays a block of its own (live neighbours on both sides).
    ASSERT_EQ(kes_mem_pool_free(pool.get(), b), KES_OK);
    kes_mem_pool_stats before = stats_of(pool.get());
    EXPECT_EQ(kes_mem_pool_free(pool.get(), b), KES_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(last_error_mentions("double free")) << kes_last_error();
    EXPECT_TRUE(last_error_mentions("test-pool")) << kes_last_error();
    expect_same_stats(before, stats_of(pool.get()));
    EXPECT_EQ(kes_mem_pool_check(pool.get()), KES_OK) << kes_last_error();

    // c merges into b's free range: freeing c again is still recognised.
    ASSERT_EQ(kes_mem_pool_free(pool.get(), c), KES_OK);
    before = stats_of(pool.get());
    EXPECT_EQ(kes_mem_pool_free(pool.get(), c), KES_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(last_error_mentions("double free")) << kes_last_error();
    EXPECT_EQ(kes_mem_pool_free(pool.get(), b), KES_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(last_error_mentions("double free")) << kes_last_error();
    expect_same_stats(before, stats_of(pool.get()));
    EXPECT_EQ(kes_mem_pool_check(pool.get()), KES_OK) << kes_last_error();

    size_t size = 0;
    EXPECT_EQ(kes_mem_pool_block_size(pool.get(), b, &size), KES_ERR_INVALID_ARGUMENT);  // not live
    EXPECT_EQ(kes_mem_pool_free(pool.get(), a), KES_OK);
    EXPECT_EQ(kes_mem_pool_free(pool.get(), d), KES_OK);
    EXPECT_EQ(stats_of(pool.get()).free_blocks, 1u);
}

TEST(MemPool, ForeignPointerIsRefused) {
    auto pool = make_pool(16 * kKiB);
    auto other = make_pool(16 * kKiB);
    void* mine = must_alloc(pool.get(), 500);
    void* theirs = must_alloc(other.get(), 500);
    const kes_mem_pool_stats before = stats_of(pool.get());

    int on_stack = 0;
    std::vector<char> on_heap(256);
    kes_mem_pool_stats s = stats_of(pool.get());
    char* end = static_cast<char*>(mine) + s.capacity_bytes;  // one past the chunk (mine is its first block)
    for (void* foreign :
         {static_cast<void*>(&on_stack), static_cast<void*>(on_heap.data()), theirs, static_cast<void*>(end)}) {
        EXPECT_EQ(kes_mem_pool_free(pool.get(), foreign), KES_ERR_INVALID_ARGUMENT) << foreign;
        EXPECT_TRUE(last_error_mentions("not in pool 'test-pool'")) << kes_last_error();
        EXPECT_EQ(kes_mem_pool_contains(pool.get(), foreign), 0);
    }
    expect_same_stats(before, stats_of(pool.get()));
    EXPECT_EQ(kes_mem_pool_free(other.get(), theirs), KES_OK);
    EXPECT_EQ(kes_mem_pool_free(pool.get(), mine), KES_OK);
}

TEST(MemPool, InteriorPointerIsRefused) {
    auto pool = make_pool(16 * kKiB);
    char* p = static_cast<char*>(must_alloc(pool.get(), 1000));  // a 1152-byte block
    const kes_mem_pool_stats before = stats_of(pool.get());
    for (char* interior : {p + 1, p + 128, p + 1151}) {
        EXPECT_EQ(kes_mem_pool_free(pool.get(), interior), KES_ERR_INVALID_ARGUMENT);
        EXPECT_TRUE(last_error_mentions("interior")) << kes_last_error();
        size_t size = 0;
        EXPECT_EQ(kes_mem_pool_block_size(pool.get(), interior, &size), KES_ERR_INVALID_ARGUMENT);
        EXPECT_EQ(kes_mem_pool_contains(pool.get(), interior), 1);
    }
    // Inside the free remainder: no block starts there either.
    EXPECT_EQ(kes_mem_pool_free(pool.get(), p + 4096), KES_ERR_INVALID_ARGUMENT);
    expect_same_stats(before, stats_of(pool.get()));
    EXPECT_EQ(kes_mem_pool_free(pool.get(), p), KES_OK);
    EXPECT_EQ(kes_mem_pool_check(pool.get()), KES_OK) << kes_last_error();
}

TEST(MemPool, ExhaustionReturnsOutOfMemoryAndPoolStillWorks) {
    auto pool = make_pool(64 * kKiB);
    std::vector<void*> blocks;
    blocks.reserve(16);
    void* p = nullptr;
    for (int i = 0; i < 16; ++i) blocks.push_back(must_alloc(pool.get(), request_filling(4 * kKiB)));
    const kes_mem_pool_stats full = stats_of(pool.get());
    EXPECT_EQ(full.free_bytes, 0u);
    EXPECT_EQ(full.largest_free_block, 0u);
    EXPECT_EQ(full.fragmentation, 0.0);

    p = static_cast<void*>(&g_poison);
    EXPECT_EQ(kes_mem_pool_alloc(pool.get(), 100, &p), KES_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(p, nullptr);
    for (const char* part :
         {"test-pool", "requested 100 bytes", "largest free block 0", "capacity 65536", "growth disabled"}) {
        EXPECT_TRUE(last_error_mentions(part)) << part << " in: " << kes_last_error();
    }
    kes_mem_pool_stats s = stats_of(pool.get());
    EXPECT_EQ(s.failed_allocs, 1u);
    s.failed_allocs = full.failed_allocs;
    expect_same_stats(full, s);

    // Too big to ever fit, and too big to even size: both refused cleanly.
    EXPECT_EQ(kes_mem_pool_alloc(pool.get(), SIZE_MAX, &p), KES_ERR_OUT_OF_MEMORY);
    EXPECT_TRUE(last_error_mentions("too large")) << kes_last_error();
    EXPECT_EQ(kes_mem_pool_alloc(pool.get(), SIZE_MAX - 100, &p), KES_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(kes_mem_pool_alloc(pool.get(), SIZE_MAX / 2, &p), KES_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(stats_of(pool.get()).failed_allocs, 4u);

    ASSERT_EQ(kes_mem_pool_free(pool.get(), blocks[5]), KES_OK);
    p = must_alloc(pool.get(), 4000);
    EXPECT_EQ(p, blocks[5]);
    for (void* b : blocks) ASSERT_EQ(kes_mem_pool_free(pool.get(), b), KES_OK);
    s = stats_of(pool.get());
    EXPECT_EQ(s.live_blocks, 0u);
    EXPECT_EQ(s.largest_free_block, 64 * kKiB);
    EXPECT_EQ(kes_mem_pool_check(pool.get()), KES_OK) << kes_last_error();
}

TEST(MemPool, AnyRequestUpToLargestFreeBlockSucceeds) {
    // Free ranges whose sizes sit just above a TLSF class boundary: the good-fit search rounds such a
    // request up past its own list, and the pool must still find the block that fits.
    LogCapture quiet;  // the pool is destroyed with live blocks
    auto pool = make_pool(64 * kKiB);
    std::vector<void*> holes, keep;
    for (size_t block : {size_t{2176}, size_t{9088}, size_t{17536}}) {  // 17, 71, 137 granules
        holes.push_back(must_alloc(pool.get(), request_filling(block)));
        keep.push_back(must_alloc(pool.get(), 1));  // pins the hole's right edge
    }
    for (void* hole : holes) ASSERT_EQ(kes_mem_pool_free(pool.get(), hole), KES_OK);
    keep.push_back(must_alloc(pool.get(), request_filling(stats_of(pool.get()).largest_free_block)));
    const size_t largest = stats_of(pool.get()).largest_free_block;
    ASSERT_EQ(largest, 17536u);
    void* p = must_alloc(pool.get(), request_filling(largest));
    EXPECT_NE(p, nullptr);
    EXPECT_EQ(kes_mem_pool_check(pool.get()), KES_OK) << kes_last_error();
}

TEST(MemPool, GrowsInChunksUpToMax) {
    PoolOptions o;
    o.initial = 4 * kKiB;
    o.grow = 4 * kKiB;
    o.max = 16 * kKiB;
    auto pool = make_pool(o);
    std::vector<void*> blocks;
    for (uint32_t i = 1; i <= 4; ++i) {
        blocks.push_back(must_alloc(pool.get(), request_filling(4 * kKiB)));
        const kes_mem_pool_stats s = stats_of(pool.get());
        EXPECT_EQ(s.chunk_count, i);
        EXPECT_EQ(s.capacity_bytes, size_t{i} * 4 * kKiB);
    }
    void* p = nullptr;
    EXPECT_EQ(kes_mem_pool_alloc(pool.get(), 64, &p), KES_ERR_OUT_OF_MEMORY);
    EXPECT_TRUE(last_error_mentions("max_bytes 16384")) << kes_last_error();
    EXPECT_EQ(stats_of(pool.get()).chunk_count, 4u);

    for (void* b : blocks) ASSERT_EQ(kes_mem_pool_free(pool.get(), b), KES_OK);
    const kes_mem_pool_stats s = stats_of(pool.get());
    EXPECT_EQ(s.free_blocks, 4u);  // chunks are separate regions: never merged across
    EXPECT_EQ(s.largest_free_block, 4 * kKiB);
    EXPECT_EQ(s.capacity_bytes, 16 * kKiB);  // grown chunks are kept for reuse
    EXPECT_EQ(kes_mem_pool_check(pool.get()), KES_OK) << kes_last_error();
}

TEST(MemPool, GrowthUsesTheLastOfTheAllowanceAndFitsOversizedRequests) {
    LogCapture quiet;  // blocks left live are reported when the pool goes
    PoolOptions o;
    o.initial = 4 * kKiB;
    o.grow = 8 * kKiB;
    o.max = 10 * kKiB;
    auto capped = make_pool(o);
    must_alloc(capped.get(), request_filling(4 * kKiB));
    must_alloc(capped.get(), request_filling(4 * kKiB));  // a 6 KiB chunk: what max_bytes leaves
    kes_mem_pool_stats s = stats_of(capped.get());
    EXPECT_EQ(s.capacity_bytes, 10 * kKiB);
    EXPECT_EQ(s.largest_free_block, 2 * kKiB);
    must_alloc(capped.get(), request_filling(2 * kKiB));
    void* p = nullptr;
    EXPECT_EQ(kes_mem_pool_alloc(capped.get(), 1, &p), KES_ERR_OUT_OF_MEMORY);

    o.initial = 4 * kKiB;
    o.grow = 1 * kKiB;
    o.max = 0;
    auto uncapped = make_pool(o);
    void* big = must_alloc(uncapped.get(), 10000);  // needs more than one grow step: one chunk that fits
    s = stats_of(uncapped.get());
    EXPECT_EQ(s.chunk_count, 2u);
    EXPECT_EQ(s.capacity_bytes, 4 * kKiB + placed(10000));
    EXPECT_EQ(kes_mem_pool_free(uncapped.get(), big), KES_OK);

    // A request larger than max_bytes allows is refused without trying the backend.
    o.initial = 4 * kKiB;
    o.grow = 4 * kKiB;
    o.max = 64 * kKiB;
    auto small = make_pool(o);
    EXPECT_EQ(kes_mem_pool_alloc(small.get(), size_t{1} << 40, &p), KES_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(stats_of(small.get()).chunk_count, 1u);
}

TEST(MemPool, ExternalMemoryIsUsedAndNeverFreed) {
    const size_t bytes = 32 * kKiB;
    auto region = aligned_region(bytes);
    ASSERT_NE(region, nullptr);
    unsigned char* const begin = region.get();
    PoolOptions o;
    o.initial = bytes;
    o.external = begin;
    o.grow = 4 * kKiB;  // ignored: an external pool does not grow
    {
        LogCapture quiet;  // the leak report below is expected
        auto pool = make_pool(o);
        EXPECT_EQ(stats_of(pool.get()).capacity_bytes, bytes);
        std::vector<void*> blocks;
        void* p = nullptr;
        while (kes_mem_pool_alloc(pool.get(), 1000, &p) == KES_OK) {
            EXPECT_GE(static_cast<unsigned char*>(p), begin);
            EXPECT_LE(static_cast<unsigned char*>(p) + placed(1000), begin + bytes);
            blocks.push_back(p);
        }
        EXPECT_TRUE(last_error_mentions("external")) << kes_last_error();
        EXPECT_EQ(blocks.size(), bytes / placed(1000));
        EXPECT_EQ(stats_of(pool.get()).chunk_count, 1u);
        EXPECT_EQ(kes_mem_pool_free(pool.get(), blocks[0]), KES_OK);
    }                                 // destroyed with live blocks: the region must survive
    std::memset(begin, 0x11, bytes);  // ASan reports a use-after-free here if the pool freed it
    EXPECT_EQ(begin[bytes - 1], 0x11);
}

TEST(MemPool, ExternalSizeIsRoundedDownToStayInsideTheRegion) {
    LogCapture quiet;  // blocks left live are reported when the pool goes
    auto region = aligned_region(8 * kKiB);
    PoolOptions o;
    o.external = region.get();
    o.initial = 8 * kKiB - 100;
    auto pool = make_pool(o);
    EXPECT_EQ(stats_of(pool.get()).capacity_bytes, 8 * kKiB - 128);
}

TEST(MemPool, NeverWritesIntoManagedMemory) {
    // Device memory may not be CPU-accessible: every byte of bookkeeping must live outside it.
    const size_t bytes = 16 * kKiB;
    auto region = aligned_region(bytes);
    std::memset(region.get(), 0xA5, bytes);
    PoolOptions o;
    o.initial = bytes;
    o.external = region.get();
    {
        auto pool = make_pool(o);
        std::vector<void*> live;
        std::mt19937 rng(7);
        for (int i = 0; i < 300; ++i) {
            void* p = nullptr;
            if (live.empty() || rng() % 3 != 0) {
                if (kes_mem_pool_alloc(pool.get(), 1 + rng() % 1500, &p) == KES_OK) live.push_back(p);
            } else {
                const size_t k = rng() % live.size();
                ASSERT_EQ(kes_mem_pool_free(pool.get(), live[k]), KES_OK);
                live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
            }
        }
        if (!live.empty()) {
            kes_mem_pool_free(pool.get(), live[0]);
            kes_mem_pool_free(pool.get(), live[0]);  // misuse must not write either
        }
        for (size_t i = 1; i < live.size(); ++i) kes_mem_pool_free(pool.get(), live[i]);
    }
    const unsigned char* r = region.get();
    EXPECT_TRUE(std::all_of(r, r + bytes, [](unsigned char b) { return b == 0xA5; }));
}

TEST(MemPool, StatsTrackInUsePeakLargestFreeFragmentation) {
    auto pool = make_pool(16 * kKiB);
    kes_mem_pool_stats s = stats_of(pool.get());
    EXPECT_EQ(s.capacity_bytes, 16 * kKiB);
    EXPECT_EQ(s.in_use_bytes, 0u);
    EXPECT_EQ(s.requested_bytes, 0u);
    EXPECT_EQ(s.peak_in_use_bytes, 0u);
    EXPECT_EQ(s.free_bytes, 16 * kKiB);
    EXPECT_EQ(s.largest_free_block, 16 * kKiB);
    EXPECT_EQ(s.live_blocks, 0u);
    EXPECT_EQ(s.free_blocks, 1u);
    EXPECT_EQ(s.total_allocs, 0u);
    EXPECT_EQ(s.failed_allocs, 0u);
    EXPECT_EQ(s.chunk_count, 1u);
    EXPECT_EQ(s.fragmentation, 0.0);

    void* a = must_alloc(pool.get(), 1000);  // 1152
    void* b = must_alloc(pool.get(), 2000);  // 2048
    void* c = must_alloc(pool.get(), 100);   // 256
    s = stats_of(pool.get());
    EXPECT_EQ(s.in_use_bytes, 1152u + 2048u + 256u);
    EXPECT_EQ(s.requested_bytes, 3100u);
    EXPECT_EQ(s.peak_in_use_bytes, s.in_use_bytes);
    EXPECT_EQ(s.free_bytes, 16 * kKiB - s.in_use_bytes);
    EXPECT_EQ(s.largest_free_block, s.free_bytes);
    EXPECT_EQ(s.live_blocks, 3u);
    EXPECT_EQ(s.total_allocs, 3u);

    ASSERT_EQ(kes_mem_pool_free(pool.get(), b), KES_OK);  // a hole between a and c
    s = stats_of(pool.get());
    const size_t tail = 16 * kKiB - 1152 - 2048 - 256;
    EXPECT_EQ(s.in_use_bytes, 1152u + 256u);
    EXPECT_EQ(s.requested_bytes, 1100u);
    EXPECT_EQ(s.peak_in_use_bytes, 1152u + 2048u + 256u);
    EXPECT_EQ(s.free_blocks, 2u);
    EXPECT_EQ(s.largest_free_block, tail);
    EXPECT_DOUBLE_EQ(s.fragmentation, 1.0 - double(tail) / double(tail + 2048));
    EXPECT_EQ(s.total_allocs, 3u);

    kes_mem_pool_reset_peak(pool.get());
    EXPECT_EQ(stats_of(pool.get()).peak_in_use_bytes, 1152u + 256u);
    ASSERT_EQ(kes_mem_pool_free(pool.get(), a), KES_OK);
    ASSERT_EQ(kes_mem_pool_free(pool.get(), c), KES_OK);
    s = stats_of(pool.get());
    EXPECT_EQ(s.in_use_bytes, 0u);
    EXPECT_EQ(s.peak_in_use_bytes, 1152u + 256u);
    EXPECT_EQ(s.fragmentation, 0.0);
    EXPECT_EQ(kes_mem_pool_check(pool.get()), KES_OK) << kes_last_error();
}

TEST(MemPool, ContainsCoversEveryByteOfEveryChunk) {
    LogCapture quiet;  // blocks left live are reported when the pool goes
    PoolOptions o;
    o.initial = 4 * kKiB;
    o.grow = 4 * kKiB;
    auto pool = make_pool(o);
    char* first = static_cast<char*>(must_alloc(pool.get(), request_filling(4 * kKiB)));
    char* second = static_cast<char*>(must_alloc(pool.get(), request_filling(4 * kKiB)));  // new chunk
    for (char* chunk : {first, second}) {
        EXPECT_EQ(kes_mem_pool_contains(pool.get(), chunk), 1);
        EXPECT_EQ(kes_mem_pool_contains(pool.get(), chunk + 4 * kKiB - 1), 1);
    }
    int outside = 0;
    EXPECT_EQ(kes_mem_pool_contains(pool.get(), &outside), 0);
}

TEST(MemPool, DeviceBackendPoolWorksInHostBuilds) {
    LogCapture quiet;  // blocks left live are reported when the pool goes
    PoolOptions o;
    o.backend = KES_MEM_DEVICE;
    o.initial = 8 * kKiB;
    auto pool = make_pool(o);
    void* p = must_alloc(pool.get(), 300);
    EXPECT_TRUE(aligned128(p));
    EXPECT_EQ(kes_mem_pool_free(pool.get(), p), KES_OK);
}

TEST(MemPool, DestroyReportsLeakedBlocksAsWarnings) {
    LogCapture log;
    PoolOptions o;
    o.name = "leaky";
    auto pool = make_pool(o);
    void* kept = must_alloc(pool.get(), 1000);
    must_alloc(pool.get(), 3000);
    void* freed = must_alloc(pool.get(), 10);
    ASSERT_EQ(kes_mem_pool_free(pool.get(), freed), KES_OK);
    EXPECT_TRUE(log.warnings().empty());
    pool.reset();

    const std::vector<std::string> lines = log.warnings();
    ASSERT_EQ(lines.size(), 3u);  // a summary and one line per leaked block
    EXPECT_NE(lines[0].find("leaky"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("2 live blocks"), std::string::npos) << lines[0];
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", kept);
    EXPECT_NE(lines[1].find(addr), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find("requested 1000"), std::string::npos) << lines[1];

    auto clean = make_pool(4 * kKiB);
    kes_mem_pool_free(clean.get(), must_alloc(clean.get(), 64));
    clean.reset();
    EXPECT_EQ(log.warnings().size(), 3u);  // nothing leaked, nothing said
}

// A reference model: what is live, where, and how big. The pool must agree after every step.
TEST(MemPool, RandomisedAgainstModel) {
    PoolOptions o;
    o.initial = 64 * kKiB;
    o.grow = 32 * kKiB;
    o.max = 256 * kKiB;
    auto pool = make_pool(o);
    kes_mem_pool* const p = pool.get();

    struct Live {
        size_t requested;
        size_t block;
    };
    std::map<char*, Live> live;  // by address, so overlap is a neighbour check
    size_t in_use = 0, requested = 0, peak = 0;
    uint64_t total = 0, failed = 0;
    std::mt19937_64 rng(0x6b657374);  // fixed: a failure reproduces
    void* just_freed = nullptr;

    auto random_size = [&]() -> size_t {
        const uint64_t r = rng() % 100;
        if (r < 50) return 1 + rng() % 512;
        if (r < 90) return 513 + rng() % 8000;
        return 8513 + rng() % 40000;
    };

    for (int step = 0; step < 2500; ++step) {
        const kes_mem_pool_stats before = stats_of(p);
        const uint64_t op = rng() % 100;
        if (op < 3 && !live.empty()) {
            // Misuse: an interior pointer of a live block, refused with nothing changed.
            auto it = std::next(live.begin(), static_cast<std::ptrdiff_t>(rng() % live.size()));
            void* interior = it->first + 1 + rng() % (it->second.block - 1);
            ASSERT_EQ(kes_mem_pool_free(p, interior), KES_ERR_INVALID_ARGUMENT);
            expect_same_stats(before, stats_of(p));
        } else if (op < 5 && just_freed != nullptr) {
            ASSERT_EQ(kes_mem_pool_free(p, just_freed), KES_ERR_INVALID_ARGUMENT);
            expect_same_stats(before, stats_of(p));
        } else if (op < 55 || live.empty()) {
            // Sometimes ask for exactly the largest free block: it must be granted.
            const bool exact = op < 8 && before.largest_free_block >= 128;
            const size_t size = exact ? request_filling(before.largest_free_block) : random_size();
            void* ptr = nullptr;
            const kes_status st = kes_mem_pool_alloc(p, size, &ptr);
            if (st == KES_OK) {
                char* const a = static_cast<char*>(ptr);
                const size_t block = placed(size);
                ASSERT_TRUE(aligned128(ptr));
                size_t got = 0;
                ASSERT_EQ(kes_mem_pool_block_size(p, ptr, &got), KES_OK);
                ASSERT_EQ(got, block);
                ASSERT_EQ(kes_mem_pool_contains(p, ptr), 1);
                ASSERT_EQ(kes_mem_pool_contains(p, a + block - 1), 1);
                auto next = live.lower_bound(a);
                // Compared as integers: blocks in different chunks are unrelated objects.
                const auto addr = [](const char* q) { return reinterpret_cast<uintptr_t>(q); };
                ASSERT_TRUE(next == live.end() || addr(a) + block <= addr(next->first)) << "overlaps the next block";
                if (next != live.begin()) {
                    auto prev = std::prev(next);
                    ASSERT_LE(addr(prev->first) + prev->second.block, addr(a)) << "overlaps the previous block";
                }
                live.emplace(a, Live{size, block});
                in_use += block;
                requested += size;
                peak = std::max(peak, in_use);
                ++total;
                just_freed = nullptr;
            } else {
                ASSERT_EQ(st, KES_ERR_OUT_OF_MEMORY) << kes_last_error();
                ASSERT_FALSE(exact) << "largest_free_block could not be allocated: " << kes_last_error();
                ASSERT_EQ(ptr, nullptr);
                ASSERT_GT(placed(size), before.largest_free_block);  // the stats told the truth
                ++failed;
            }
        } else {
            auto it = std::next(live.begin(), static_cast<std::ptrdiff_t>(rng() % live.size()));
            ASSERT_EQ(kes_mem_pool_free(p, it->first), KES_OK) << kes_last_error();
            in_use -= it->second.block;
            requested -= it->second.requested;
            just_freed = it->first;
            live.erase(it);
        }

        const kes_mem_pool_stats s = stats_of(p);
        ASSERT_EQ(s.in_use_bytes, in_use) << "step " << step;
        ASSERT_EQ(s.requested_bytes, requested);
        ASSERT_EQ(s.peak_in_use_bytes, peak);
        ASSERT_EQ(s.live_blocks, live.size());
        ASSERT_EQ(s.total_allocs, total);
        ASSERT_EQ(s.failed_allocs, failed);
        ASSERT_EQ(s.free_bytes, s.capacity_bytes - in_use);
        ASSERT_LE(s.capacity_bytes, o.max);
        ASSERT_LE(s.largest_free_block, s.free_bytes);
        ASSERT_EQ(s.largest_free_block % 128, 0u);
        ASSERT_DOUBLE_EQ(s.fragmentation,
                         s.free_bytes == 0 ? 0.0 : 1.0 - double(s.largest_free_block) / double(s.free_bytes));
        ASSERT_EQ(kes_mem_pool_check(p), KES_OK) << "step " << step << ": " << kes_last_error();
    }
    EXPECT_GT(failed, 0u);                   // the run reached exhaustion, and...
    EXPECT_GT(stats_of(p).chunk_count, 1u);  // ... grew on the way

    for (const auto& entry : live) ASSERT_EQ(kes_mem_pool_free(p, entry.first), KES_OK);
    const kes_mem_pool_stats s = stats_of(p);
    EXPECT_EQ(s.in_use_bytes, 0u);
    EXPECT_EQ(s.free_blocks, s.chunk_count);  // every chunk coalesced back into one block
    EXPECT_EQ(kes_mem_pool_check(p), KES_OK) << kes_last_error();
}

TEST(MemPool, ConcurrentAllocFreeFromSeveralThreads) {
    auto pool = make_pool(512 * kKiB);
    kes_mem_pool* const p = pool.get();
    constexpr int kThreads = 4;
    constexpr int kIterations = 1500;
    constexpr size_t kRing = 8;  // blocks each thread keeps live
    std::atomic<int> errors{0};

    auto worker = [&](int tid) {
        std::mt19937 rng(static_cast<unsigned>(1000 + tid));
        struct Held {
            unsigned char* ptr = nullptr;
            size_t bytes = 0;
            unsigned char pattern = 0;
        };
        Held ring[kRing];
        auto release = [&](Held& h) {
            // Another thread's block overlapping ours would have overwritten the pattern.
            for (size_t i = 0; i < h.bytes; ++i) {
                if (h.ptr[i] != h.pattern) {
                    ++errors;
                    break;
                }
            }
            if (kes_mem_pool_free(p, h.ptr) != KES_OK) ++errors;
            h = Held{};
        };
        for (int i = 0; i < kIterations; ++i) {
            Held& slot = ring[static_cast<size_t>(i) % kRing];
            if (slot.ptr != nullptr) release(slot);
            void* ptr = nullptr;
            if (kes_mem_pool_alloc(p, 1 + rng() % 2048, &ptr) != KES_OK) {
                ++errors;
                continue;
            }
            size_t bytes = 0;
            if (kes_mem_pool_block_size(p, ptr, &bytes) != KES_OK) ++errors;
            slot.ptr = static_cast<unsigned char*>(ptr);
            slot.bytes = bytes;
            slot.pattern = static_cast<unsigned char>(tid * 61 + i);
            std::memset(slot.ptr, slot.pattern, bytes);  // the whole block, not just the request
            if (i % 64 == 0) stats_of(p);
        }
        for (Held& h : ring) {
            if (h.ptr != nullptr) release(h);
        }
    };
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
    for (auto& th : threads) th.join();

    EXPECT_EQ(errors.load(), 0);
    const kes_mem_pool_stats s = stats_of(p);
    EXPECT_EQ(s.live_blocks, 0u);
    EXPECT_EQ(s.free_blocks, 1u);
    EXPECT_EQ(s.total_allocs, uint64_t{kThreads} * kIterations);
    EXPECT_EQ(kes_mem_pool_check(p), KES_OK) << kes_last_error();
}

}  // namespace

// struct_size (kes/struct_size.hpp): a pool config is accepted from its first release up, and a newer
// one only where the fields this Kestrel does not know are zero (any size >= sizeof was accepted, so a
// newer app's settings were silently ignored).
TEST(MemPool, ConfigGrowsWithoutBreakingApps) {
    kes_mem_pool_config cfg;
    kes_mem_pool_config_init(&cfg);
    cfg.initial_bytes = 1u << 20;
    expect_struct_growth(cfg, offsetof(kes_mem_pool_config, name) + sizeof(const char*), [](kes_mem_pool_config* c) {
        kes_mem_pool* pool = nullptr;
        const kes_status st = kes_mem_pool_create(c, &pool);
        kes_mem_pool_destroy(pool);
        return st;
    });
}
