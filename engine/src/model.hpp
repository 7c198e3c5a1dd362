// model.hpp — a verified, loaded model: the graph as plain structs the executor trusts.
//
// kom_load.cpp builds a Model only after the FlatBuffers verifier and every consistency check have
// passed (indices in range, shapes agree with each op, plan inside the arena, weights inside the
// blob), so the kernels index memory without re-checking.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kestrel/tensor.h"

namespace kes {

enum class Op : uint16_t { Add = 1, Sub, Mul, Relu, Abs, Reshape, Conv2D, FullyConnected, MatMul };

struct TensorInfo {
    std::string name;
    kes_dtype dtype = KES_F32;
    kes_layout layout = KES_LAYOUT_ND;
    uint32_t ndim = 0;
    int64_t shape[KES_TENSOR_MAX_DIMS] = {};
    uint64_t elements = 0;
    uint64_t bytes = 0;
    int32_t weight = -1;  // weight section, or -1 for an activation
    uint64_t offset = 0;  // arena offset (activations) or blob offset (weights)
};

struct NodeInfo {
    Op op = Op::Add;
    std::string name;
    int32_t inputs[3] = {-1, -1, -1};
    uint32_t input_count = 0;
    int32_t output = -1;
    bool fused_relu = false;
    // Conv2D
    int32_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
    int32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
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
    std::string source_format, source_hash, converter_version, target_board;
};

// Verifies a .kom image and describes it. Throws kes::Error: KES_ERR_CORRUPT_DATA naming the problem,
// KES_ERR_UNSUPPORTED for valid content this build cannot run. Never reads outside [data, data+size).
ModelInfo parse_kom(const uint8_t* data, size_t size);

}  // namespace kes
