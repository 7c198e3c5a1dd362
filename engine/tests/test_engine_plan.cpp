// The static memory planner: no two simultaneously live buffers overlap, offsets are 128-aligned,
// and the arena is never below the ideal (the most bytes live at any step).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kes/error.hpp"
#include "memory_plan.hpp"

namespace {

void expect_valid(const std::vector<kes::PlanBuffer>& b, const kes::MemoryPlanResult& r) {
    ASSERT_EQ(r.offsets.size(), b.size());
    EXPECT_EQ(r.arena_size % 128, 0u);
    EXPECT_GE(r.arena_size, r.ideal_size);
    for (size_t i = 0; i < b.size(); ++i) {
        EXPECT_EQ(r.offsets[i] % 128, 0u);
        EXPECT_LE(r.offsets[i] + b[i].size, r.arena_size);
        for (size_t j = i + 1; j < b.size(); ++j) {
            const bool live_together = b[i].first <= b[j].last && b[j].first <= b[i].last;
            const bool disjoint = r.offsets[i] + b[i].size <= r.offsets[j] || r.offsets[j] + b[j].size <= r.offsets[i];
            if (live_together && b[i].size && b[j].size) {
                EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j;
            }
        }
    }
}

}  // namespace

TEST(MemoryPlan, ChainReusesMemory) {
    // a → b → c → d: at most two live at once, so the arena is two buffers, not four.
    std::vector<kes::PlanBuffer> b{{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
    const auto r = kes::plan_memory(b);
    expect_valid(b, r);
    EXPECT_EQ(r.ideal_size, 2048u);
    EXPECT_EQ(r.arena_size, 2048u);
}

TEST(MemoryPlan, RandomDagsNeverOverlapLiveTensors) {
    std::mt19937 rng(1234);
    for (int round = 0; round < 200; ++round) {
        // A random DAG in topological order: node i consumes 1-2 earlier outputs; its output lives from
        // step i to its last consumer.
        const int nodes = 2 + static_cast<int>(rng() % 30);
        std::vector<kes::PlanBuffer> b(static_cast<size_t>(nodes));
        for (int i = 0; i < nodes; ++i) {
            b[i].size = 1 + rng() % 5000;
            b[i].first = b[i].last = i;
            const int fan_in = i == 0 ? 0 : 1 + static_cast<int>(rng() % 2);
            for (int k = 0; k < fan_in; ++k) {
                const int src = static_cast<int>(rng() % static_cast<unsigned>(i));
                b[src].last = std::max<int64_t>(b[src].last, i);
            }
        }
        const auto r = kes::plan_memory(b);
        expect_valid(b, r);
        // Greedy-by-size never needs more than every buffer side by side.
        uint64_t sum = 0;
        for (const auto& x : b) sum += (x.size + 127) / 128 * 128;
        EXPECT_LE(r.arena_size, sum);
    }
}

TEST(MemoryPlan, RejectsInvertedLifetime) {
    std::vector<kes::PlanBuffer> b{{128, 3, 1}};
    EXPECT_THROW(kes::plan_memory(b), kes::Error);
}
