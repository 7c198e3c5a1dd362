// op.hpp — how an operator is described, checked and executed (the engine's kernel interface).
//
// Every node of a graph names an op ("Conv", "Add", ...). Kestrel's ops use ONNX's names and the
// semantics of the LATEST ONNX opset (17); importers rewrite older forms (an attribute that a later
// opset turned into an input becomes a constant input, old defaults become explicit attributes) and
// other formats (TFLite) map onto the same ops. Layout-sensitive ops (Conv, ConvTranspose, pools)
// take a string attribute "data_layout": "NCHW" (default, ONNX) or "NHWC" (TFLite; the filter is then
// OHWI = [Cout, KH, KW, Cin/group]). Fused activations are attributes read by Activation below.
//
// An OpDef's create() is shape inference, validation and kernel construction in one step: it reads the
// attributes and input descriptions (constant inputs carry their data), throws kes::Error for anything
// wrong, fills the output descriptions and returns a Kernel bound to those shapes. The converter calls
// it for shape inference and constant folding; the loader calls it for every node of a .kom file and
// requires the outputs to equal the file's tensors. Kernel::run then executes with no allocation.
// The kernel create() returns is the reference kernel (kernels/ref/): the oracle. The loader then
// offers the node to the fast kernels (kernels/select.hpp), which may replace it.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attrs.hpp"
#include "kestrel/tensor.h"
#include "kestrel/thread_pool.h"

namespace kes {

using Shape = std::vector<int64_t>;

// Affine quantisation real = scale * (q - zero_point); per tensor (one value) or along `axis`.
struct Quant {
    std::vector<float> scale;
    std::vector<int64_t> zero_point;
    int64_t axis = -1;
    bool empty() const { return scale.empty(); }
};

// A tensor as an op sees it at creation: dtype, shape and, for constants, the data (dense, row-major).
struct TensorDesc {
    kes_dtype dtype = KES_F32;
    Shape shape;
    const void* data = nullptr;  // constant contents when known (weights, folded values), else null
    Quant quant;

    int64_t rank() const { return static_cast<int64_t>(shape.size()); }
    int64_t elements() const;  // 1 for a scalar
    size_t bytes() const;
    bool is_const() const { return data != nullptr; }
};

struct NodeDesc {
    const std::string& name;
    const std::string& op;
    const Attrs& attrs;
    std::vector<const TensorDesc*> inputs;  // nullptr marks an omitted optional input
    size_t output_count = 1;

    // Input i or nullptr when absent/omitted (i may be past the end).
    const TensorDesc* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
};

// How a kernel runs (kernel interface v2, docs/ARCHITECTURE.md "Kernels"): the threads it may use and
// its scratch memory. Both come from the execution context; the reference kernels ignore them.
struct RunContext {
    kes_thread_pool* pool = nullptr;  // nullptr: the calling thread only
    uint32_t threads = 1;             // how many threads may work on one node (1 ≤ threads ≤ kMaxThreads)
    uint8_t* scratch = nullptr;       // ≥ scratch_bytes(threads) of the running kernel, 128-byte aligned
    size_t scratch_size = 0;
};

// Scratch is sized for this many threads when a model loads (its work bytes must be known before a
// context picks its thread count), so no context runs a node on more threads than this.
constexpr uint32_t kMaxThreads = 8;

class Kernel {
public:
    virtual ~Kernel() = default;
    // inputs[i] / outputs[i] follow the node's order (nullptr for an omitted optional input); shapes
    // and dtypes are those create() saw and produced. Must not allocate. May throw kes::Error
    // (KES_ERR_INVALID_ARGUMENT) for data the shapes could not rule out, e.g. a Gather index out of
    // range in a runtime tensor; never reads or writes outside the tensors. Results must not depend on
    // rc.threads (bit for bit): work is split into pieces fixed by the shapes, never by the threads.
    virtual void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const = 0;
    // On the calling thread, without scratch: for kernels whose scratch_bytes() is 0 (every reference
    // kernel; constant folding and the op tests run them this way).
    void run(const void* const* inputs, void* const* outputs) const { run(RunContext{}, inputs, outputs); }

    // Which implementation this is ("reference", or the fast kernel's name and ISA): profiles show it.
    virtual const char* impl() const { return "reference"; }
    // Packed weights: bytes this kernel wants in the model's weight region (a 128-byte aligned slice),
    // filled once by pack() when the model loads and handed to every gear's kernel of the node by
    // bind_packed(). The packed form may depend only on the weights and attributes, never on the
    // gear's shapes, so one copy serves every gear and every context.
    virtual size_t packed_bytes() const { return 0; }
    virtual void pack(void* dst) const { (void)dst; }
    virtual void bind_packed(const void* packed) { (void)packed; }
    // Scratch for a run on `threads` threads (im2col tiles, indirection buffers, per-thread
    // accumulators): the context's work arena reserves the largest need of any node.
    virtual size_t scratch_bytes(uint32_t threads) const {
        (void)threads;
        return 0;
    }
};

struct OpDef {
    const char* name;
    size_t min_inputs, max_inputs;    // counted including omitted optional inputs
    size_t min_outputs, max_outputs;  // checked before create() is called
    // Validates and builds (see the top of this file). outputs arrives sized to the node's output
    // count with default descs; create() sets dtype and shape of each. Throws kes::Error:
    // KES_ERR_UNSUPPORTED for valid requests this build does not implement (an attribute value, a
    // dtype), KES_ERR_INVALID_ARGUMENT for inconsistent attributes or shapes. Messages need not name
    // the node: the caller prefixes "node <name> (<op>): ".
    std::unique_ptr<Kernel> (*create)(const NodeDesc& node, std::vector<TensorDesc>& outputs);
};

// The registry (op_registry.cpp). find_op returns nullptr for an unknown name.
const OpDef* find_op(std::string_view name);
std::vector<std::string> registered_op_names();  // sorted

// Checks the counts, calls def->create and re-throws its errors with the node named (status kept).
std::unique_ptr<Kernel> create_kernel(const OpDef& def, const NodeDesc& node, std::vector<TensorDesc>& outputs);

// Ops whose output is their first input's bytes reinterpreted (Reshape, Flatten, Squeeze, Unsqueeze,
// Identity): the memory plan may give both one buffer, and the loader accepts that overlap.
bool is_view_op(std::string_view op);

// One-input elementwise ops: output element i depends on input element i only (Relu, Abs, Exp, ...,
// Shrink, IsNaN, IsInf, Not). Layout-free (the layout pass carries them through); all but IsNaN and
// IsInf (bool outputs) are in is_inplace_input's list.
bool is_unary_elementwise(std::string_view op);

// Elementwise ops that may write their output over an input (the memory plan's in-place sharing):
// true when `op`'s kernel, with its single output on the bytes of input `input`, still computes the
// same result. Each listed kernel (src/ops/) reads element i of that input before it writes element i of
// the output and never reads another element of it afterwards; so the input must hold exactly the
// output's elements: the same shape (no broadcast) and the same dtype size. Unary math, Not, Clip,
// Cast, CastLike, Dropout and BatchNormalization alias input 0 (X); Max/Min/Sum/Mean only input 0, as
// their kernel first copies input 0 into the output; binary arithmetic, PRelu, BitShift, the
// comparisons and And/Or/Xor either input. Where is left out: its kernel memcpys each element, and
// memcpy onto itself is undefined. Whether the input's bytes are free to overwrite (no later reader)
// is the plan's part: share_buffers() in memory_plan.hpp.
bool is_inplace_input(std::string_view op, size_t input, size_t output_count, kes_dtype input_dtype,
                      const Shape& input_shape, kes_dtype output_dtype, const Shape& output_shape);

// ---- helpers for op implementations -----------------------------------------------------------------

int64_t shape_elements(const Shape& shape);    // throws INVALID_ARGUMENT on a negative dim or overflow
std::string shape_string(const Shape& shape);  // "[1,3,224,224]"
Shape contiguous_strides(const Shape& shape);  // in elements, row-major
// numpy broadcast of two shapes; throws INVALID_ARGUMENT naming both shapes when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Element strides of `in` seen through `out`'s shape (right-aligned; 0 along broadcast dims).
Shape broadcast_strides(const Shape& in, const Shape& out);
// Maps a possibly negative axis into [0, rank); throws INVALID_ARGUMENT when out of [-rank, rank).
int64_t normalize_axis(int64_t axis, int64_t rank);
// Reads a constant integer tensor (int64 or int32) as int64 values; throws UNSUPPORTED when the
// input is not constant (shape-determining inputs must be constants: shapes are static).
std::vector<int64_t> const_ints(const TensorDesc& t, const char* what);
std::vector<float> const_floats(const TensorDesc& t, const char* what);      // f32 constant
void require_dtype(const TensorDesc& t, kes_dtype dtype, const char* what);  // else UNSUPPORTED

// The reference kernels' sigmoid, standalone and fused alike (e^x over 1 + e^x for negative x keeps
// its relative accuracy where 1 / (1 + e^-x) would lose it).
inline float reference_sigmoid(float x) {
    return x >= 0.0f ? 1.0f / (1.0f + std::exp(-x)) : std::exp(x) / (1.0f + std::exp(x));
}

// Fused activation, from attributes "activation" (string: "" none, "Relu", "Relu6", "Clip",
// "LeakyRelu", "HardSwish", "HardSigmoid", "Sigmoid", "Tanh", "Swish"), "activation_min"/"activation_max"
// (Clip), "activation_alpha"/"activation_beta" (LeakyRelu, HardSigmoid). Swish is x · Sigmoid(x) (SiLU),
// which PyTorch exports as Sigmoid and Mul: computed in that order, so fusing it changes no bit.
struct Activation {
    enum class Kind : uint8_t { None, Relu, Clip, LeakyRelu, HardSwish, HardSigmoid, Sigmoid, Tanh, Swish };
    Kind kind = Kind::None;
    float min = 0.0f, max = 0.0f, alpha = 0.0f, beta = 0.0f;

    static Activation from_attrs(const Attrs& attrs);  // throws INVALID_ARGUMENT for an unknown name
    static void to_attrs(const Activation& act, Attrs& attrs);
    float apply(float x) const;
    void apply(float* data, size_t count) const;
};

}  // namespace kes
