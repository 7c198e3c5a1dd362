// bench_mem_pool.cpp — kes_mem_pool alloc/free beside the C heap.
//
// Peers: malloc/free (what most code uses) and posix_memalign(128)/free (what code that needs DVPP's
// 128-byte alignment without a pool uses). Every implementation is asked for the same bytes, the DVPP
// size of the request (BOARD-RULES §Memory), so the comparison is "the buffer a DVPP user must reserve".
//
// Cases (names "<case>:<impl>", see bench_main.cpp):
//   alloc_free/<bytes>   one allocation freed at once, at 64 B, 4 KiB, 64 KiB, 1 MiB and 3110400 B (a
//                        1080p NV12 frame): the allocator's fast path.
//   mixed/live<N>        N blocks stay live; each iteration frees a random one and allocates a random
//                        size (log-uniform 64 B .. 64 KiB) in its place: the steady state of a pipeline
//                        with many buffers in flight, where search and coalescing costs show.
// The memory is not touched: this measures the allocator, not page faults.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kestrel/memory.h"

void kes_bench_register_mem_pool();

namespace {

constexpr size_t kMiB = size_t{1} << 20;

struct PoolDeleter {
    void operator()(kes_mem_pool* pool) const { kes_mem_pool_destroy(pool); }
};
using PoolPtr = std::unique_ptr<kes_mem_pool, PoolDeleter>;

PoolPtr make_pool(size_t initial_bytes, size_t grow_bytes) {
    kes_mem_pool_config config;
    kes_mem_pool_config_init(&config);
    config.initial_bytes = initial_bytes;
    config.grow_bytes = grow_bytes;
    config.name = "bench";
    kes_mem_pool* pool = nullptr;
    if (kes_mem_pool_create(&config, &pool) != KES_OK) return nullptr;
    return PoolPtr(pool);
}

// The three allocators behind one interface, so each case is written once. Static dispatch: the
// benchmark loop inlines the calls, as an application's code would.
struct KestrelPool {
    static constexpr const char* kName = "kestrel";
    kes_mem_pool* pool;
    void* alloc(size_t size) {
        void* p = nullptr;
        return kes_mem_pool_alloc(pool, size, &p) == KES_OK ? p : nullptr;
    }
    void free(void* p) { kes_mem_pool_free(pool, p); }
};

struct Malloc {
    static constexpr const char* kName = "malloc";
    void* alloc(size_t size) { return std::malloc(kes_mem_dvpp_size(size)); }
    void free(void* p) { std::free(p); }
};

struct PosixMemalign {
    static constexpr const char* kName = "posix_memalign";
    void* alloc(size_t size) {
        void* p = nullptr;
        return posix_memalign(&p, KES_MEM_ALIGNMENT, kes_mem_dvpp_size(size)) == 0 ? p : nullptr;
    }
    void free(void* p) { std::free(p); }
};

template <class Impl>
void alloc_free(benchmark::State& state, Impl impl, size_t size) {
    for (auto _ : state) {
        void* p = impl.alloc(size);
        if (p == nullptr) {
            state.SkipWithError("allocation failed");
            break;
        }
        benchmark::DoNotOptimize(p);
        impl.free(p);
    }
    state.SetItemsProcessed(state.iterations());
}

// A fixed, pre-generated workload so every implementation sees the same sequence and the random
// number generator stays out of the timed loop.
struct MixedWorkload {
    static constexpr size_t kSteps = 8192;  // power of two: the loop wraps with a mask
    std::vector<size_t> sizes;              // request per step
    std::vector<uint32_t> slots;            // which live block each step replaces

    MixedWorkload(size_t live, uint64_t seed) : sizes(kSteps), slots(kSteps) {
        std::mt19937_64 rng(seed);
        std::uniform_real_distribution<double> log_size(std::log(64.0), std::log(65536.0));
        std::uniform_int_distribution<uint32_t> slot(0, static_cast<uint32_t>(live - 1));
        for (size_t i = 0; i < kSteps; ++i) {
            sizes[i] = static_cast<size_t>(std::exp(log_size(rng)));
            slots[i] = slot(rng);
        }
    }
};

template <class Impl>
void mixed(benchmark::State& state, Impl impl, size_t live) {
    const MixedWorkload work(live, 0x6b6573);
    std::vector<void*> blocks(live, nullptr);
    for (size_t i = 0; i < live; ++i) blocks[i] = impl.alloc(work.sizes[(i * 7) % MixedWorkload::kSteps]);
    size_t step = 0;
    for (auto _ : state) {
        const size_t k = step++ & (MixedWorkload::kSteps - 1);
        void*& slot = blocks[work.slots[k]];
        impl.free(slot);
        slot = impl.alloc(work.sizes[k]);
        if (slot == nullptr) {
            state.SkipWithError("allocation failed");
            break;
        }
        benchmark::DoNotOptimize(slot);
    }
    for (void* p : blocks) {
        if (p != nullptr) impl.free(p);
    }
    state.SetItemsProcessed(state.iterations());
}

// Pools outlive registration: Google Benchmark runs the lambdas after kes_bench_register_mem_pool
// returns. One pool per case keeps cases independent.
std::vector<PoolPtr>& pools() {
    static std::vector<PoolPtr> all;
    return all;
}

kes_mem_pool* new_pool(size_t initial_bytes, size_t grow_bytes) {
    pools().push_back(make_pool(initial_bytes, grow_bytes));
    return pools().back().get();
}

// A KestrelPool whose pool could not be created fails its first allocation, and the case reports
// "allocation failed" instead of a time.
template <class Impl, class Fn>
void register_case(const std::string& name, Impl impl, Fn fn, size_t arg) {
    const std::string full = name + ":" + Impl::kName;
    benchmark::RegisterBenchmark(full.c_str(), [impl, fn, arg](benchmark::State& state) { fn(state, impl, arg); });
}

}  // namespace

void kes_bench_register_mem_pool() {
    const size_t sizes[] = {64, 4096, 65536, kMiB, 1920 * 1080 * 3 / 2};
    const size_t lives[] = {64, 1024};
    for (size_t size : sizes) {
        const std::string name = "alloc_free/" + std::to_string(size);
        // Room for the block with some to spare; a fixed pool, as a media pipeline would size it.
        register_case(name, KestrelPool{new_pool(4 * kes_mem_dvpp_size(size) + kMiB, 0)}, alloc_free<KestrelPool>,
                      size);
        register_case(name, Malloc{}, alloc_free<Malloc>, size);
        register_case(name, PosixMemalign{}, alloc_free<PosixMemalign>, size);
    }
    for (size_t live : lives) {
        const std::string name = "mixed/live" + std::to_string(live);
        // Log-uniform sizes average ~9.4 KiB: start at twice the expected footprint and let it grow.
        register_case(name, KestrelPool{new_pool(live * 20 * 1024 + 4 * kMiB, 16 * kMiB)}, mixed<KestrelPool>, live);
        register_case(name, Malloc{}, mixed<Malloc>, live);
        register_case(name, PosixMemalign{}, mixed<PosixMemalign>, live);
    }
}
