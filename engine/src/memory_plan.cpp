#include "memory_plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kestrel/memory.h"

namespace kes {

namespace {

enum class Order { Size, Breadth, Duration };
enum class Fit { Lowest, Best };

// The order one strategy places buffers in; ties go by first step, then index, so plans are deterministic.
std::vector<size_t> placement_order(Order order, const std::vector<PlanBuffer>& b, const std::vector<uint64_t>& sizes) {
    const size_t n = b.size();
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), size_t{0});
    auto larger = [&](size_t x, size_t y) {
        if (sizes[x] != sizes[y]) return sizes[x] > sizes[y];
        if (b[x].first != b[y].first) return b[x].first < b[y].first;
        return x < y;
    };
    if (order == Order::Size) {
        std::sort(idx.begin(), idx.end(), larger);
    } else if (order == Order::Duration) {
        std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
            const int64_t dx = b[x].last - b[x].first, dy = b[y].last - b[y].first;
            return dx != dy ? dx > dy : larger(x, y);
        });
    } else {
        // Breadth (TFLite's greedy by breadth): the steps with the most live bytes first, each step's
        // still unplaced buffers largest first. The live set only grows at a buffer's first step, so
        // those steps are the only ones to look at.
        std::sort(idx.begin(), idx.end(), larger);
        std::vector<int64_t> steps;
        for (const PlanBuffer& x : b) steps.push_back(x.first);
        std::sort(steps.begin(), steps.end());
        steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
        std::vector<uint64_t> breadth(steps.size(), 0);
        for (size_t s = 0; s < steps.size(); ++s)
            for (size_t i = 0; i < n; ++i)
                if (b[i].first <= steps[s] && steps[s] <= b[i].last) breadth[s] += sizes[i];
        std::vector<size_t> by_breadth(steps.size());
        std::iota(by_breadth.begin(), by_breadth.end(), size_t{0});
        std::stable_sort(by_breadth.begin(), by_breadth.end(),
                         [&](size_t x, size_t y) { return breadth[x] > breadth[y]; });
        std::vector<size_t> out;
        out.reserve(n);
        std::vector<bool> taken(n, false);
        for (size_t s : by_breadth)
            for (size_t i : idx)
                if (!taken[i] && b[i].first <= steps[s] && steps[s] <= b[i].last) {
                    taken[i] = true;
                    out.push_back(i);
                }
        idx.swap(out);
    }
    return idx;
}

// Places the buffers in `order`, each against the already placed ones it shares a step with; returns
// the arena size.
uint64_t place(const std::vector<size_t>& order, Fit fit, const std::vector<PlanBuffer>& b,
               const std::vector<uint64_t>& sizes, std::vector<uint64_t>& offsets) {
    std::vector<size_t> placed;
    placed.reserve(order.size());
    std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of overlapping placed buffers
    uint64_t arena = 0;
    for (size_t i : order) {
        busy.clear();
        for (size_t j : placed)
            if (sizes[j] > 0 && b[j].first <= b[i].last && b[i].first <= b[j].last)
                busy.emplace_back(offsets[j], offsets[j] + sizes[j]);
        std::sort(busy.begin(), busy.end());
        uint64_t offset = 0;
        if (fit == Fit::Lowest) {
            for (const auto& [begin, end] : busy) {
                if (begin >= offset + sizes[i]) break;  // the gap before this range fits
                offset = std::max(offset, end);
            }
        } else {
            // The smallest gap that fits (lowest on ties), else above everything.
            uint64_t cursor = 0, best_gap = UINT64_MAX;
            bool found = false;
            for (const auto& [begin, end] : busy) {
                if (begin > cursor && begin - cursor >= sizes[i] && begin - cursor < best_gap) {
                    best_gap = begin - cursor;
                    offset = cursor;
                    found = true;
                }
                cursor = std::max(cursor, end);
            }
            if (!found) offset = cursor;
        }
        offsets[i] = offset;
        arena = std::max(arena, offset + sizes[i]);
        placed.push_back(i);
    }
    return arena;
}

}  // namespace

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

    // Greedy by size at the lowest offset first: later strategies replace it only when strictly smaller.
    static constexpr std::pair<Order, Fit> kStrategies[] = {
        {Order::Size, Fit::Lowest},  {Order::Size, Fit::Best},       {Order::Breadth, Fit::Lowest},
        {Order::Breadth, Fit::Best}, {Order::Duration, Fit::Lowest}, {Order::Duration, Fit::Best}};
    std::vector<uint64_t> offsets(n);
    bool first = true;
    for (const auto& [order, fit] : kStrategies) {
        const uint64_t arena = place(placement_order(order, buffers, sizes), fit, buffers, sizes, offsets);
        if (first || arena < r.arena_size) {
            r.arena_size = arena;
            r.offsets = offsets;
            first = false;
        }
        if (r.arena_size == r.ideal_size) break;  // nothing can beat the ideal
    }
    return r;
}

BufferSharing share_buffers(const SharingGraph& g,
                            const std::function<bool(ShareKind kind, size_t node, size_t input)>& take) {
    const size_t nt = g.tensors.size();
    BufferSharing s;
    s.first.assign(nt, INT64_MAX);
    s.last.assign(nt, INT64_MIN);
    auto touch = [&](int32_t t, int64_t step) {
        if (t < 0) return;
        s.first[static_cast<size_t>(t)] = std::min(s.first[static_cast<size_t>(t)], step);
        s.last[static_cast<size_t>(t)] = std::max(s.last[static_cast<size_t>(t)], step);
    };
    for (int32_t t : *g.inputs) touch(t, 0);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const int64_t step = static_cast<int64_t>(i) + 1;
        for (int32_t t : *g.nodes[i].inputs) touch(t, step);
        for (int32_t t : *g.nodes[i].outputs) touch(t, step);
    }
    for (int32_t t : *g.outputs) touch(t, static_cast<int64_t>(g.nodes.size()) + 1);

    // Union-find over tensors; group_last (by root) is the last step any member is needed.
    std::vector<size_t> parent(nt);
    std::iota(parent.begin(), parent.end(), size_t{0});
    std::vector<int64_t> group_last = s.last;
    auto root = [&](size_t t) {
        while (parent[t] != t) t = parent[t] = parent[parent[t]];
        return t;
    };
    auto join = [&](size_t into, size_t t) {
        const size_t r = root(into), o = root(t);
        if (r == o) return;
        parent[o] = r;
        group_last[r] = std::max(group_last[r], group_last[o]);
    };
    auto activation = [&](int32_t t) { return t >= 0 && g.tensors[static_cast<size_t>(t)].activation; };

    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const SharingGraph::Node& n = g.nodes[i];
        const std::vector<int32_t>& ins = *n.inputs;
        if (n.outputs->size() != 1 || !activation((*n.outputs)[0])) continue;
        const size_t out = static_cast<size_t>((*n.outputs)[0]);
        const int64_t step = static_cast<int64_t>(i) + 1;
        if (is_view_op(n.op)) {
            if (!ins.empty() && activation(ins[0]) && take(ShareKind::View, i, 0))
                join(static_cast<size_t>(ins[0]), out);
            continue;
        }
        const SharingGraph::Tensor& y = g.tensors[out];
        for (size_t k = 0; k < ins.size(); ++k) {
            if (!activation(ins[k])) continue;
            const SharingGraph::Tensor& x = g.tensors[static_cast<size_t>(ins[k])];
            if (!is_inplace_input(n.op, k, 1, x.dtype, *x.shape, y.dtype, *y.shape)) continue;
            const size_t r = root(static_cast<size_t>(ins[k]));
            if (group_last[r] > step || r == root(out)) continue;  // its bytes are needed later
            bool read_twice = false;  // another input of this node in the group would read overwritten bytes
            for (size_t j = 0; j < ins.size(); ++j)
                if (j != k && ins[j] >= 0 && root(static_cast<size_t>(ins[j])) == r) read_twice = true;
            if (read_twice || !take(ShareKind::InPlace, i, k)) continue;
            join(static_cast<size_t>(ins[k]), out);
            break;
        }
    }
    s.group.resize(nt);
    for (size_t t = 0; t < nt; ++t) s.group[t] = root(t);
    return s;
}

}  // namespace kes
