// model.hpp — a verified, loaded model: the graph as plain structs, and the kernels that run it.
//
// parse_kom() checks the file's structure (FlatBuffers verifier, indices, weights inside the blob, plan
// inside the arena and free of overlaps, topological order); build_program() then creates every node's
// kernel through the op registry with the real weights, which checks attributes and shapes: the
// kernels' output shapes must equal the file's. Only then does the executor trust the model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attrs.hpp"
#include "kestrel/tensor.h"
#include "op.hpp"

namespace kes {

struct TensorInfo {
    std::string name;
    kes_dtype dtype = KES_F32;
    kes_layout layout = KES_LAYOUT_ND;
    Shape shape;
    uint64_t elements = 0;
    uint64_t bytes = 0;
    int32_t weight = -1;  // weight section, or -1 for an activation
    uint64_t offset = 0;  // arena offset (activations) or blob offset (weights)
    Quant quant;
};

struct NodeInfo {
    std::string name;
    std::string op;
    const OpDef* def = nullptr;
    Attrs attrs;
    std::vector<int32_t> inputs;  // -1: omitted optional input
    std::vector<int32_t> outputs;
};

struct ModelInfo {
    uint32_t format_version = 0;
    std::vector<TensorInfo> tensors;
    std::vector<NodeInfo> nodes;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    uint64_t weights_offset = 0;  // in the file
    uint64_t weights_size = 0;
    uint64_t arena_size = 0;
    uint64_t ideal_size = 0;
    size_t max_node_inputs = 0, max_node_outputs = 0;
    std::vector<std::pair<uint32_t, std::string>> aipp;  // (graph input index, aipp_op text)
    std::vector<int64_t> batch_gears;                    // ascending; empty when static
    std::string source_format, source_hash, converter_version, target_board;
};

// The kernels for one batch gear, bound to the weights they were created with.
struct Program {
    int64_t batch = 0;                             // 0: the static shapes as written
    std::vector<std::unique_ptr<Kernel>> kernels;  // one per node
    std::vector<Shape> shapes;                     // per tensor, at this gear
    std::vector<uint64_t> bytes;                   // per tensor, at this gear
};

// Verifies a .kom image's structure and describes it. Throws kes::Error: KES_ERR_CORRUPT_DATA naming the
// problem, KES_ERR_UNSUPPORTED for valid content this build cannot run (newer format, unknown op).
// Never reads outside [data, data+size).
ModelInfo parse_kom(const uint8_t* data, size_t size);

// Creates the kernels for `batch` (0: as written; else one of m.batch_gears) over the weight blob
// `weights` (m.weights_size bytes, 128-byte aligned). Throws KES_ERR_CORRUPT_DATA when a node's
// attributes or shapes are inconsistent or its outputs differ from the file's tensors,
// KES_ERR_UNSUPPORTED for valid nodes this build cannot execute.
Program build_program(const ModelInfo& m, const uint8_t* weights, int64_t batch);

}  // namespace kes
