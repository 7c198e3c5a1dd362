// ir.hpp — the converter's graph: what the ONNX and TFLite importers produce, what the passes rewrite,
// and what kom_writer serialises into a .kom file.
//
// Tensors are referred to by index; a node input of -1 is an omitted optional input. Constants carry
// their bytes (dense, row-major, little-endian, dtype-sized elements). Ops and attributes follow
// op.hpp (ONNX names, latest-opset semantics). A Graph is plain data: importers fill it, passes edit
// it in place, and nothing in it is checked until infer_shapes() (passes.hpp) runs the op registry.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../attrs.hpp"
#include "../op.hpp"

namespace kes::ir {

struct Tensor {
    std::string name;
    kes_dtype dtype = KES_F32;
    Shape shape;                        // may hold -1 for an unknown dim until shapes are inferred
    bool has_shape = false;             // false until the shape is known (importer or infer_shapes)
    kes_layout layout = KES_LAYOUT_ND;  // how the graph input/output is meant (NCHW/NHWC) when 4-d
    Quant quant;
    bool is_const = false;
    std::vector<uint8_t> data;  // is_const: exactly elements × dtype size bytes

    int64_t elements() const;
    // Typed views of constant data (the caller checks dtype).
    template <class T>
    const T* as() const {
        return reinterpret_cast<const T*>(data.data());
    }
    TensorDesc desc() const;  // data points into `data` when is_const
};

struct Node {
    std::string name;
    std::string op;
    std::vector<int32_t> inputs;  // -1: omitted optional input
    std::vector<int32_t> outputs;
    Attrs attrs;
};

struct Metadata {
    std::string source_format;  // "onnx", "tflite", "builder"
    std::string source_hash;    // sha256 of the source file, hex
    std::string converter_version;
    std::string target_board = "host";  // "310", "310B", "host"
};

// Per-input AIPP (ATC's --insert_op_conf): the aipp_op text for the graph input it applies to.
struct InputAipp {
    int32_t input = -1;  // tensor index of a graph input
    std::string config;  // the aipp_op configuration text (aipp module syntax)
};

// A graph input whose dims h_dim / w_dim follow the dynamic image size gear (--dynamic-image-size).
struct ImageInput {
    int32_t input = -1;  // tensor index of a graph input
    int32_t h_dim = -1, w_dim = -1;
};

struct ImageSize {
    int64_t height = 0, width = 0;
    bool operator==(const ImageSize& o) const { return height == o.height && width == o.width; }
};

struct Graph {
    std::vector<Tensor> tensors;
    std::vector<Node> nodes;  // topologically ordered after toposort()
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    std::vector<InputAipp> aipp;
    std::vector<int64_t> dynamic_batch;  // batch gears (--dynamic-batch), empty when static
    // Image size gears (--dynamic-image-size), ascending by area then height; shapes are inferred at
    // the last. Empty when static; never together with dynamic_batch.
    std::vector<ImageSize> dynamic_image_sizes;
    std::vector<ImageInput> image_inputs;
    Metadata metadata;

    int32_t add_tensor(Tensor t);
    int32_t add_activation(std::string name, kes_dtype dtype = KES_F32, Shape shape = {}, bool known = false);
    int32_t add_constant(std::string name, kes_dtype dtype, Shape shape, const void* bytes);
    int32_t add_constant_f32(std::string name, Shape shape, const std::vector<float>& values);
    int32_t add_constant_i64(std::string name, Shape shape, const std::vector<int64_t>& values);
    Node& add_node(std::string op, std::vector<int32_t> inputs, std::vector<int32_t> outputs, std::string name = {});
    int32_t find_tensor(const std::string& name) const;  // -1 if none

    // Index of the node producing tensor t, or -1 (graph input / constant / unproduced).
    int32_t producer(int32_t t) const;
    // Nodes reading tensor t (as any input), in node order.
    std::vector<int32_t> consumers(int32_t t) const;
    bool is_graph_output(int32_t t) const;

    // Orders nodes so each runs after its inputs' producers (stable for already ordered graphs).
    // Throws kes::Error(KES_ERR_INVALID_ARGUMENT) for a cycle or an input nothing produces.
    void toposort();
    // Drops tensors nothing refers to and renumbers (after passes removed nodes).
    void compact();
};

}  // namespace kes::ir
