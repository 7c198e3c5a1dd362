#include "memory_plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kestrel/memory.h"

namespace kes {

MemoryPlanResult plan_memory(const std::vector<PlanBuffer>& buffers) {
    MemoryPlanResult r;
    const size_t n = buffers.size();
    r.offsets.assign(n, 0);
    std::vector<uint64_t> sizes(n);
    uint64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
        KES_REQUIRE(buffers[i].last >= buffers[i].first, "plan buffer %zu: last step %lld < first %lld", i,
                    static_cast<long long>(buffers[i].last), static_cast<long long>(buffers[i].first));
        KES_REQUIRE(buffers[i].size <= (UINT64_MAX >> 2), "plan buffer %zu: size too large", i);
        sizes[i] = align_up(buffers[i].size, KES_MEM_ALIGNMENT);
        KES_REQUIRE(checked_add(total, sizes[i], &total), "plan: total size overflows");
    }

    // Ideal: sweep the lifetime events (+size at first, -size after last).
    std::map<int64_t, int64_t> delta;
    for (size_t i = 0; i < n; ++i) {
        delta[buffers[i].first] += static_cast<int64_t>(sizes[i]);
        delta[buffers[i].last + 1] -= static_cast<int64_t>(sizes[i]);
    }
    int64_t live = 0;
    for (const auto& [step, d] : delta) {
        (void)step;
        live += d;
        r.ideal_size = std::max(r.ideal_size, static_cast<uint64_t>(live));
    }

    // Greedy by size; ties by earlier start then index, so the plan is deterministic.
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
        return buffers[a].first < buffers[b].first;
    });
    std::vector<size_t> placed;
    std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of overlapping placed buffers
    for (size_t i : order) {
        busy.clear();
        for (size_t j : placed) {
            if (buffers[j].first <= buffers[i].last && buffers[i].first <= buffers[j].last && sizes[j] > 0)
                busy.emplace_back(r.offsets[j], r.offsets[j] + sizes[j]);
        }
        std::sort(busy.begin(), busy.end());
        uint64_t offset = 0;
        for (const auto& [begin, end] : busy) {
            if (begin >= offset + sizes[i]) break;  // the gap before this range fits
            offset = std::max(offset, end);
        }
        r.offsets[i] = offset;
        r.arena_size = std::max(r.arena_size, offset + sizes[i]);
        placed.push_back(i);
    }
    return r;
}

}  // namespace kes
