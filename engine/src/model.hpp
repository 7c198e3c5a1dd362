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
    uint64_t capacity = 0;  // bytes the plan reserves (≥ bytes; more when an image gear needs more)
    int32_t weight = -1;    // weight section, or -1 for an activation
    uint64_t offset = 0;    // arena offset (activations) or blob offset (weights)
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

// A graph input whose dims h_dim / w_dim take the selected image gear (ATC --dynamic_image_size).
struct ImageInputInfo {
    uint32_t input = 0;  // index into ModelInfo::inputs
    int32_t h_dim = 0, w_dim = 0;
};

// What an execution runs at: a batch gear, an image size gear, or (all 0) the shapes as written.
struct Gear {
    int64_t batch = 0;
    int64_t height = 0, width = 0;
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
    std::vector<std::pair<uint32_t, std::string>> aipp;    // (graph input index, aipp_op text)
    std::vector<int64_t> batch_gears;                      // ascending; empty when static
    std::vector<std::pair<int64_t, int64_t>> image_sizes;  // (height, width), ascending by area; written at the last
    std::vector<ImageInputInfo> image_inputs;
    std::string source_format, source_hash, converter_version, target_board;
    bool has_weights_crc = false;  // the file carries the blob's CRC-32 (converters since issue 23)
    bool weights_checked = false;  // ... and parse_kom checked it
};

// The kernels for one batch gear, bound to the weights they were created with.
struct Program {
    Gear gear;                                     // all 0: the static shapes as written
    std::vector<std::unique_ptr<Kernel>> kernels;  // one per node
    // Per node: the fused kernel the CPU executor runs in its place (a depthwise Conv's consumer, with the
    // depthwise node skipped), or null. Filled by the executor after build_program; kernels stay.
    std::vector<std::unique_ptr<Kernel>> fused;
    std::vector<Shape> shapes;    // per tensor, at this gear
    std::vector<uint64_t> bytes;  // per tensor, at this gear
};

// Whether parse_kom reads the whole weight blob to check its CRC-32 (kom.fbs: weights_crc32).
enum class WeightCheck { Verify, Skip };

// Verifies a .kom image's structure and describes it, and with WeightCheck::Verify the weight blob's
// CRC-32 when the file carries one (files of earlier converters carry none: ModelInfo::weights_checked
// says so). Throws kes::Error: KES_ERR_CORRUPT_DATA naming the problem, KES_ERR_UNSUPPORTED for valid
// content this build cannot run (newer format, unknown op). Never reads outside [data, data+size).
ModelInfo parse_kom(const uint8_t* data, size_t size, WeightCheck check = WeightCheck::Verify);

// Creates the kernels for `gear` (all 0: as written; else one of m.batch_gears or m.image_sizes) over
// the weight blob `weights` (m.weights_size bytes, 128-byte aligned). With `fast`, each node's reference
// kernel is replaced by a fast one where one covers it (kernels/select.hpp); the caller then packs
// their weights (Kernel::pack / bind_packed) before running them. Auto-padding and shape-following
// attributes are resolved by each op's create() at the gear's shapes. Throws KES_ERR_INVALID_ARGUMENT
// for a gear the model does not have, KES_ERR_CORRUPT_DATA when a node's attributes or shapes are
// inconsistent, its outputs differ from the file's tensors (as written) or outgrow the plan's
// capacity (other gears), KES_ERR_UNSUPPORTED for valid nodes this build cannot execute.
Program build_program(const ModelInfo& m, const uint8_t* weights, Gear gear, bool fast = false);

}  // namespace kes
