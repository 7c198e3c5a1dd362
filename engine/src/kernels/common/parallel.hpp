// parallel.hpp — how fast kernels spread a node over threads.
//
// A node's work is cut into units fixed by its shapes (never by the thread count), and up to
// rc.threads workers claim units from one counter. Each worker gets a slot index in [0, threads) for
// its share of the scratch memory. Every unit is computed by the same code whoever claims it, so the
// results are bit-identical for any thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "../../op.hpp"

namespace kes {
namespace kernels {

// fn(unit, slot) for every unit in [0, units).
template <class F>
void parallel_units(const RunContext& rc, uint64_t units, F&& fn) {
    kes_thread_pool* pool = rc.pool;
    const uint32_t workers = static_cast<uint32_t>(std::min<uint64_t>(pool ? rc.threads : 1, units));
    if (workers <= 1) {
        for (uint64_t u = 0; u < units; ++u) fn(u, 0u);
        return;
    }
    struct Team {
        F* fn;
        uint64_t units;
        std::atomic<uint64_t> next{0};
    } team{&fn, units};
    // One parallel_for item per worker, so the item index is a slot no two running workers share.
    kes_thread_pool_parallel_for(
        pool, workers, 1,
        [](void* user, uint64_t begin, uint64_t end, uint32_t) {
            Team& t = *static_cast<Team*>(user);
            for (uint64_t slot = begin; slot < end; ++slot)
                for (uint64_t u; (u = t.next.fetch_add(1, std::memory_order_relaxed)) < t.units;)
                    (*t.fn)(u, static_cast<uint32_t>(slot));
        },
        &team);
}

}  // namespace kernels
}  // namespace kes
