// parallel.hpp — how fast kernels spread a node over threads.
//
// A node's work is cut into units fixed by its shapes (never by the thread count), and up to
// rc.threads workers share them out. Each worker gets a slot index in [0, threads) for its share of the
// scratch memory. Every unit is computed by the same code whoever claims it, so the results are
// bit-identical for any thread count.
//
// The units are dealt in contiguous shares, [h·units/workers, (h+1)·units/workers) for h < workers. A
// thread works through its home share in order, then helps with the others' (a late or slow worker's
// share is finished by the rest). The home share is a property of the thread, not of the call: the
// calling thread's is share 0, a pool thread's is fixed by its ordinal. Units run along the image
// (rows, pixel tiles), so a thread's share of one layer is about the part of the image it wrote in the
// layer before: it reads its own core's cache. (With one counter for all, each layer's halves fell to
// the threads at random: BlazeFace-256 on 2 threads was 10% slower, and a MaxPool after a conv took
// longer on 2 threads than on 1.)
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>

#include "../../op.hpp"

namespace kes {
namespace kernels {

// The bytes between two workers' scratch slots: `bytes` rounded up to whole 128-byte blocks (two cache
// lines, as the adjacent-line prefetchers fetch them). Slots closer than that put two workers' writes on
// one line: a MaxPool whose 32-byte pointer slots shared a line ran 4x slower per pixel on 2 threads.
constexpr size_t slot_stride(size_t bytes) {
    return (bytes + 127) / 128 * 128;
}

// A number of this thread's own, the same for every call: the order in which threads first asked.
inline uint32_t thread_ordinal() {
    static std::atomic<uint32_t> next{0};
    thread_local const uint32_t mine = next.fetch_add(1, std::memory_order_relaxed);
    return mine;
}

// fn(unit, slot) for every unit in [0, units).
template <class F>
void parallel_units(const RunContext& rc, uint64_t units, F&& fn) {
    kes_thread_pool* pool = rc.pool;
    const uint32_t workers = static_cast<uint32_t>(std::min<uint64_t>(pool ? rc.threads : 1, units));
    if (workers <= 1) {
        for (uint64_t u = 0; u < units; ++u) fn(u, 0u);
        return;
    }
    struct alignas(64) Share {  // one cache line each: the workers' counters do not share lines
        std::atomic<uint64_t> next;
        uint64_t end;
    };
    struct Team {
        F* fn;
        uint32_t workers;
        std::thread::id caller;
        Share shares[kMaxThreads];
    } team{&fn, workers, std::this_thread::get_id(), {}};
    for (uint32_t s = 0; s < workers; ++s) {
        team.shares[s].next.store(units * s / workers, std::memory_order_relaxed);
        team.shares[s].end = units * (s + 1) / workers;
    }
    // One parallel_for item per worker, so the item index is a slot no two running workers share.
    kes_thread_pool_parallel_for(
        pool, workers, 1,
        [](void* user, uint64_t begin, uint64_t end, uint32_t) {
            Team& t = *static_cast<Team*>(user);
            // Two pool threads may have the same home share (it only costs locality): the slot, which
            // owns the scratch, is the parallel_for item, unique among the running workers.
            const uint32_t home = std::this_thread::get_id() == t.caller ? 0 : 1 + thread_ordinal() % (t.workers - 1);
            for (uint64_t slot = begin; slot < end; ++slot)
                for (uint32_t i = 0; i < t.workers; ++i) {  // its home share first, then the next ones
                    Share& share = t.shares[(home + i) % t.workers];
                    for (uint64_t u; (u = share.next.fetch_add(1, std::memory_order_relaxed)) < share.end;)
                        (*t.fn)(u, static_cast<uint32_t>(slot));
                }
        },
        &team);
}

}  // namespace kernels
}  // namespace kes
