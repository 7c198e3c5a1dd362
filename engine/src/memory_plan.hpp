// memory_plan.hpp — the static activation plan (issue 5 §3): every activation in ONE arena.
//
// Two parts, shared by the writer (which plans) and the loader (which re-checks a file's plan):
//
// share_buffers() decides which tensors may share one buffer. Steps: graph inputs appear at step 0,
// node i runs at step i + 1, graph outputs live to step node_count + 1; a tensor lives from the first
// to the last step that writes or reads it. Tensors that share bytes form a group whose buffer lives
// from its first member's first step to its last member's last step. Two kinds of sharing:
//  - a view (is_view_op, op.hpp): output 0 is input 0's bytes reinterpreted (nothing is written);
//  - in place (is_inplace_input, op.hpp): an elementwise node writes its single output over input k.
//    Besides the op's own rule (same shape, same dtype size, a kernel that reads element i before it
//    writes element i), input k must be an activation whose group nobody needs after this node (the
//    group's last step is this one: no later reader, no graph output) and no other input of the node
//    may be in that group (it would read bytes already overwritten).
//
// plan_memory() places buffers with lifetimes [first, last] (inclusive steps) at 128-byte aligned
// offsets so that no two live at one step overlap. It runs several deterministic greedy strategies —
// buffers taken largest first, or step by step from the step with the most live bytes ("breadth"), or
// longest-lived first; each placed at the lowest offset that fits or in the smallest gap that fits —
// and keeps the smallest arena (ties: the earliest strategy, greedy-by-size at the lowest offset).
// The ideal is the most bytes (each buffer rounded up to 128) live at any one step: no plan of these
// buffers can be smaller.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "kestrel/tensor.h"
#include "op.hpp"

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

// The parts of a graph share_buffers() looks at; tensors and nodes by index, as in the graph.
struct SharingGraph {
    struct Tensor {
        kes_dtype dtype = KES_F32;
        const Shape* shape = nullptr;
        bool activation = false;  // false: a weight (never shared)
    };
    struct Node {
        std::string_view op;
        const std::vector<int32_t>* inputs = nullptr;  // -1: an omitted optional input
        const std::vector<int32_t>* outputs = nullptr;
    };
    std::vector<Tensor> tensors;
    std::vector<Node> nodes;
    const std::vector<int32_t>* inputs = nullptr;   // graph inputs
    const std::vector<int32_t>* outputs = nullptr;  // graph outputs
};

enum class ShareKind { View, InPlace };

struct BufferSharing {
    std::vector<int64_t> first, last;  // per tensor; INT64_MAX and INT64_MIN for a tensor never used
    std::vector<size_t> group;         // per tensor: the tensor its group grew from (itself when alone)
};

// Walks the nodes in order; for each sharing the rules above allow, asks take(kind, node, input) — the
// writer's options decide, the loader answers whether the file put the output at that input's offset
// (both share only tensors that hold bytes, so the loader sees exactly the writer's choices) — and on
// true joins the node's output to that input's group (for in-place, the first input taken). Every
// index must be in range (the caller has checked).
BufferSharing share_buffers(const SharingGraph& g,
                            const std::function<bool(ShareKind kind, size_t node, size_t input)>& take);

}  // namespace kes
