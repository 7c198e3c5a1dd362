// passes.hpp — graph rewrites run by the converter between import and kom_writer, in the order
// convert.cpp documents: fold_constants first (it infers shapes as it goes, so a Reshape fed by
// Shape → Gather → Concat sees a constant), then the fusions, remove_dead_nodes and a final
// infer_shapes.
// Each pass keeps the graph's observable outputs exactly (up to float rounding where it folds
// arithmetic, e.g. BatchNorm into Conv weights) and is tested on its own.
#pragma once

#include <cstddef>
#include <memory>

#include "ir.hpp"

namespace kes::ir {

struct PassStats {
    size_t nodes_removed = 0;
    size_t nodes_folded = 0;
    size_t nodes_fused = 0;
};

// Runs every node's op create() in order and stores the output dtypes/shapes in the graph (constant
// inputs are given to create() with their data). Throws kes::Error naming the node: KES_ERR_UNSUPPORTED
// for an op not in the registry (naming the op), else the op's own error.
void infer_shapes(Graph& g);

// The two steps infer_shapes is made of, for passes that interleave their own work with it
// (fold_constants): every graph input must have a known shape (else INVALID_ARGUMENT naming it);
// infer_node creates node n's kernel from the graph's current tensors, stores its output dtypes and
// shapes in the graph and returns the kernel (ready to run on constant inputs).
void require_input_shapes(const Graph& g);
std::unique_ptr<Kernel> infer_node(Graph& g, const Node& n);

// Evaluates nodes whose inputs are all constant with the reference kernels and turns their outputs
// into constants (Shape → Gather → Concat → Reshape chains disappear). Needs inferred shapes.
// keep_quantized: DequantizeLinear nodes are not folded, so that fuse_qdq (fusion.hpp) still sees the
// quantized weights behind them; the converter folds again after it (what it left becomes f32).
PassStats fold_constants(Graph& g, size_t max_folded_bytes = size_t{64} << 20, bool keep_quantized = false);

// Removes every Cast whose output has its input's dtype (after infer_shapes): its readers read the
// input. One that makes a graph output hands the output's name to the node producing its input, when
// that is a node's output and no graph output itself (else it stays, a copy). The fp16 ONNX models
// leave such Casts (onnx_import.cpp: compute_f16_in_f32).
PassStats remove_noop_casts(Graph& g);

// Removes nodes none of whose outputs reaches a graph output, then unused tensors.
PassStats remove_dead_nodes(Graph& g);

}  // namespace kes::ir
