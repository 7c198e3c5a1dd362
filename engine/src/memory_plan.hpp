// memory_plan.hpp — the static activation plan (issue 5 §3): every activation in ONE arena.
//
// Buffers with lifetimes [first, last] (inclusive step numbers) are placed greedy-by-size: largest
// first, each at the lowest 128-byte aligned offset that fits in a gap among the already placed
// buffers whose lifetimes overlap its own. The ideal is the most bytes (each rounded up to 128) live
// at any one step; no plan can be smaller, and greedy-by-size usually lands within a few percent.
#pragma once

#include <cstdint>
#include <vector>

namespace kes {

struct PlanBuffer {
    uint64_t size = 0;  // bytes (rounded up to 128 when placed)
    int64_t first = 0;  // first step the buffer is live
    int64_t last = 0;   // last step (inclusive)
};

struct MemoryPlanResult {
    std::vector<uint64_t> offsets;  // one per buffer, multiples of 128
    uint64_t arena_size = 0;        // multiple of 128
    uint64_t ideal_size = 0;        // most aligned bytes live at any step
};

// Throws kes::Error(KES_ERR_INVALID_ARGUMENT) for last < first or sizes whose sum overflows.
MemoryPlanResult plan_memory(const std::vector<PlanBuffer>& buffers);

}  // namespace kes
