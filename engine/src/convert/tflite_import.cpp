// tflite_import.cpp — a .tflite FlatBuffer → ir::Graph in Kestrel's op set (importers.hpp).
//
// The file is read through Kestrel's own schema (engine/schema/tflite_subset.fbs). Two layers of
// checks, as for .kom files: flatbuffers::Verifier proves every offset, vector and string lies inside
// the buffer; then this file checks what the schema cannot say (tensor and buffer indices in range,
// constant sizes matching their shapes, option tables of the right type) while it converts. Any
// violation is KES_ERR_CORRUPT_DATA naming the operator/tensor and the problem.
//
// Mapping choices (TFLite semantics → op.hpp, ONNX opset 17 names):
//   - activations stay NHWC: Conv and pools carry data_layout "NHWC" and take OHWI filters, which is
//     TFLite's CONV_2D layout already; DEPTHWISE_CONV_2D's [1,KH,KW,C·M] filter becomes OHWI
//     [C·M,KH,KW,1] with group C (transposed at import when constant, else by a Transpose node).
//   - padding SAME becomes auto_pad SAME_UPPER (TF rule: the odd pixel goes to the bottom/right), so
//     it follows the input size (--input-shape, --dynamic-image-size); make_padding_explicit then
//     writes explicit pads for static shapes. RESIZE_* by an integer factor becomes scales (it then
//     follows the input size too); another ratio keeps the file's sizes with Kestrel's Resize attribute
//     kes_size_ratio (kernels/ref/resize.cpp), so it follows the input at that ratio, where whole.
//   - fused activations become op.hpp's Activation attributes on Conv, Gemm, Add, Sub, Mul and Div,
//     and a separate node after ops that do not read them (pools, Concat).
//   - DEQUANTIZE of a constant (fp16 weights, int8/uint8/int16 with scale/zero point, per tensor or per
//     axis) is folded at import into an f32 constant; of an fp16 activation it becomes a Cast.
//   - fully quantized models (int8/uint8 activations with their scale and zero point) stay quantized:
//     CONV_2D / DEPTHWISE_CONV_2D become NHWC QLinearConv (per-channel weights), FULLY_CONNECTED
//     QLinearMatMul, ADD / MUL QLinearAdd / QLinearMul, CONCATENATION QLinearConcat, QUANTIZE /
//     DEQUANTIZE QuantizeLinear / DequantizeLinear; MAX_POOL_2D, PAD (with the zero point) and the view
//     ops run on the integers.
//     Each carries kes_requantization "tflite" (TFLite's fixed-point arithmetic, ops/quant.hpp). An op
//     with no quantized form runs in f32 between a DequantizeLinear and a QuantizeLinear (fuse_qdq
//     logs them). The activations' parameters are checked here, naming the tensor.
//   - RESHAPE keeps the batch dimension symbolic (0 = "copy dim 0", ONNX semantics) when the new shape
//     starts with the input's batch, so a graph made batch-dynamic later still reshapes correctly.
//   - FULLY_CONNECTED flattens its input to [-1, K] like TFLite, runs Gemm(transB=1) and, with
//     keep_num_dims, restores the leading dims.
//   - DENSIFY of a sparse constant (pruned weights) is folded at import into the dense constant
//     (tflite_sparse.cpp); DEPTH_TO_SPACE (NHWC) becomes Reshape, Transpose, Reshape.
//   - MediaPipe's custom operators: Convolution2DTransposeBias becomes an NHWC ConvTranspose with a
//     bias; MaxPoolingWithArgmax2D, MaxUnpooling2D and the version-2 landmark ops
//     (Landmarks2TransformMatrix, TransformLandmarks, TransformTensorBilinear) become Kestrel's ops of
//     those names (kernels/ref/mediapipe_ops.cpp), their options (a C struct or a FlexBuffer map)
//     attributes. Any other custom op is KES_ERR_UNSUPPORTED, naming it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_set>

#include <flatbuffers/flexbuffers.h>

#include "../ops/dtype_codes.hpp"
#include "../ops/geometry.hpp"
#include "../ops/quant.hpp"
#include "importers.hpp"
#include "kes/error.hpp"
#include "kestrel/tensor.h"
#include "tflite_sparse.hpp"
#include "tflite_subset_generated.h"

namespace kes::ir {

namespace {

namespace tfl = kes::tflite;
using tfl::BuiltinOperator;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// a + b clamped to int64's range (slice bounds come from the file and may be anything).
int64_t saturating_add(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? kInt64Max : kInt64Min;
}

std::string builtin_name(int32_t code) {
    const char* name = (code >= 0 && code <= static_cast<int32_t>(BuiltinOperator::MAX))
                           ? tfl::EnumNameBuiltinOperator(static_cast<BuiltinOperator>(code))
                           : "";
    if (name && *name) return name;
    return "builtin code " + std::to_string(code);
}

// TF's SAME puts the odd padding pixel after, which is ONNX's auto_pad SAME_UPPER; the op resolves it
// from the input shape at create(), so the pads follow the input size (dynamic image gears), and the
// make_padding_explicit pass writes them out when the shapes are static.
void set_padding(Attrs& attrs, tfl::Padding padding) {
    attrs.set_string("auto_pad", padding == tfl::Padding::SAME ? "SAME_UPPER" : "VALID");
}

class Importer {
public:
    Importer(const uint8_t* data, size_t size) : file_(data), file_size_(size) {}

    Graph run() {
        verify();
        const tfl::SubGraph* sg = model_->subgraphs()->Get(0);
        sg_ = sg;
        const size_t tensor_count = sg->tensors() ? sg->tensors()->size() : 0;
        tensor_map_.assign(tensor_count, -1);
        produced_.assign(tensor_count, false);
        g_.metadata.source_format = "tflite";

        if (!sg->inputs() || !sg->outputs() || sg->outputs()->size() == 0)
            fail(KES_ERR_CORRUPT_DATA, "TFLite subgraph 0 declares no %s", sg->inputs() ? "outputs" : "inputs");
        for (int32_t t : *sg->inputs()) {
            check_tensor_index(t, "subgraph 0 input");
            const int32_t id = g_.add_activation(unique_name(t), dtype_of(t), file_shape(t), true);
            Tensor& in = g_.tensors[static_cast<size_t>(id)];
            in.quant = quant_of(t);
            if (in.shape.size() == 4) in.layout = KES_LAYOUT_NHWC;
            tensor_map_[static_cast<size_t>(t)] = id;
            produced_[static_cast<size_t>(t)] = true;
        }
        if (const auto* ops = sg->operators()) {
            for (uint32_t i = 0; i < ops->size(); ++i) {
                op_index_ = i;
                convert_operator(*ops->Get(i));
            }
        }
        for (int32_t t : *sg->outputs()) {
            check_tensor_index(t, "subgraph 0 output");
            const int32_t id = ref(t);
            Tensor& out = g_.tensors[static_cast<size_t>(id)];
            if (out.shape.size() == 4 && !out.is_const) out.layout = KES_LAYOUT_NHWC;
            g_.outputs.push_back(id);
        }
        for (int32_t t : *sg->inputs()) g_.inputs.push_back(tensor_map_[static_cast<size_t>(t)]);
        g_.compact();  // drops constants only folded ops read (e.g. fp16 weights behind DEQUANTIZE)
        return std::move(g_);
    }

private:
    // ---- file structure --------------------------------------------------------------------------------

    void verify() {
        if (file_ == nullptr || file_size_ < 8)
            fail(KES_ERR_CORRUPT_DATA, "TFLite model of %zu bytes is too small to be a FlatBuffer", file_size_);
        if (!flatbuffers::BufferHasIdentifier(file_, tfl::ModelIdentifier())) {
            char id[5] = {};
            for (int i = 0; i < 4; ++i) {
                const char c = static_cast<char>(file_[4 + i]);
                id[i] = (c >= 32 && c < 127) ? c : '?';
            }
            fail(KES_ERR_CORRUPT_DATA, "not a TFLite model: file identifier '%s', expected 'TFL3'", id);
        }
        // FlatBuffers offsets are 32-bit: a larger file cannot be verified (TFLite keeps >2 GB
        // weights outside the FlatBuffer and points at them with Buffer.offset).
        const size_t fb_size = std::min<size_t>(file_size_, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
        flatbuffers::Verifier verifier(file_, fb_size, 64, 10000000);
        if (!tfl::VerifyModelBuffer(verifier))
            fail(KES_ERR_CORRUPT_DATA, "TFLite model fails FlatBuffers verification (truncated or malformed)");
        model_ = tfl::GetModel(file_);
        if (model_->version() != 3)
            fail(KES_ERR_UNSUPPORTED, "TFLite schema version %u is not supported (expected 3)", model_->version());
        if (!model_->subgraphs() || model_->subgraphs()->size() == 0)
            fail(KES_ERR_CORRUPT_DATA, "TFLite model has no subgraph");
    }

    [[noreturn]] void corrupt_op(const std::string& what) const {
        fail(KES_ERR_CORRUPT_DATA, "TFLite operator %u (%s) of subgraph 0: %s", op_index_, op_name_.c_str(),
             what.c_str());
    }
    [[noreturn]] void unsupported_op(const std::string& what) const {
        fail(KES_ERR_UNSUPPORTED, "TFLite operator %u (%s) of subgraph 0: %s", op_index_, op_name_.c_str(),
             what.c_str());
    }

    const tfl::Tensor& tensor(int32_t t) const { return *sg_->tensors()->Get(static_cast<uint32_t>(t)); }

    void check_tensor_index(int32_t t, const char* what) const {
        const size_t n = sg_->tensors() ? sg_->tensors()->size() : 0;
        if (t < 0 || static_cast<size_t>(t) >= n)
            fail(KES_ERR_CORRUPT_DATA, "TFLite %s: tensor index %d out of range (subgraph 0 has %zu tensors)", what, t,
                 n);
    }

    std::string tensor_label(int32_t t) const {
        const auto* name = tensor(t).name();
        return "tensor " + std::to_string(t) + (name ? " '" + name->str() + "'" : std::string());
    }

    kes_dtype dtype_of(int32_t t) const {
        const tfl::TensorType type = tensor(t).type();
        switch (type) {
            case tfl::TensorType::FLOAT32: return KES_F32;
            case tfl::TensorType::FLOAT16: return KES_F16;
            case tfl::TensorType::INT32: return KES_I32;
            case tfl::TensorType::UINT8: return KES_U8;
            case tfl::TensorType::INT64: return KES_I64;
            case tfl::TensorType::BOOL: return KES_BOOL;
            case tfl::TensorType::INT16: return KES_I16;
            case tfl::TensorType::INT8: return KES_I8;
            case tfl::TensorType::FLOAT64: return KES_F64;
            case tfl::TensorType::UINT64: return KES_U64;
            case tfl::TensorType::UINT32: return KES_U32;
            case tfl::TensorType::UINT16: return KES_U16;
            default: break;
        }
        const char* name = tfl::EnumNameTensorType(type);
        fail(KES_ERR_UNSUPPORTED, "TFLite %s has element type %s, which Kestrel does not support",
             tensor_label(t).c_str(), (name && *name) ? name : std::to_string(static_cast<int>(type)).c_str());
    }

    Shape file_shape(int32_t t) const {
        Shape s;
        if (const auto* dims = tensor(t).shape()) {
            if (dims->size() > 8)
                fail(KES_ERR_UNSUPPORTED, "TFLite %s has rank %u (Kestrel supports up to 8)", tensor_label(t).c_str(),
                     dims->size());
            for (int32_t d : *dims) {
                if (d < 0) fail(KES_ERR_CORRUPT_DATA, "TFLite %s has a negative dim %d", tensor_label(t).c_str(), d);
                s.push_back(d);
            }
        }
        shape_elements(s);  // overflow check
        return s;
    }

    Quant quant_of(int32_t t) const {
        Quant q;
        const tfl::QuantizationParameters* qp = tensor(t).quantization();
        if (!qp) return q;
        if (qp->details_type() != tfl::QuantizationDetails::NONE)
            fail(KES_ERR_UNSUPPORTED, "TFLite %s uses custom quantization, which Kestrel does not support",
                 tensor_label(t).c_str());
        if (qp->scale() && qp->scale()->size() > 0) {
            q.scale.assign(qp->scale()->begin(), qp->scale()->end());
            if (qp->zero_point()) q.zero_point.assign(qp->zero_point()->begin(), qp->zero_point()->end());
            if (q.zero_point.empty()) q.zero_point.assign(q.scale.size(), 0);
            if (q.zero_point.size() != q.scale.size())
                fail(KES_ERR_CORRUPT_DATA, "TFLite %s: %zu quantization scales but %zu zero points",
                     tensor_label(t).c_str(), q.scale.size(), q.zero_point.size());
            q.axis = q.scale.size() > 1 ? qp->quantized_dimension() : -1;
        }
        return q;
    }

    // The constant bytes of tensor t, or {nullptr, 0} when it has none.
    std::pair<const uint8_t*, size_t> buffer_of(int32_t t) const {
        const uint32_t b = tensor(t).buffer();
        const auto* buffers = model_->buffers();
        if (b == 0) return {nullptr, 0};
        if (!buffers || b >= buffers->size())
            fail(KES_ERR_CORRUPT_DATA, "TFLite %s refers to buffer %u of %u", tensor_label(t).c_str(), b,
                 buffers ? buffers->size() : 0);
        const tfl::Buffer* buf = buffers->Get(b);
        if (buf->offset() > 1) {
            if (buf->offset() > file_size_ || buf->size() > file_size_ - buf->offset())
                fail(KES_ERR_CORRUPT_DATA, "TFLite buffer %u lies outside the file ([%llu, +%llu) of %zu bytes)", b,
                     static_cast<unsigned long long>(buf->offset()), static_cast<unsigned long long>(buf->size()),
                     file_size_);
            return {file_ + buf->offset(), static_cast<size_t>(buf->size())};
        }
        if (!buf->data() || buf->data()->size() == 0) return {nullptr, 0};
        return {buf->data()->data(), buf->data()->size()};
    }

    std::string unique_name(int32_t t) {
        const auto* n = tensor(t).name();
        std::string name = n && n->size() ? n->str() : "tensor_" + std::to_string(t);
        if (!names_.insert(name).second) {
            name += "_" + std::to_string(t);
            while (!names_.insert(name).second) name += "_";
        }
        return name;
    }

    std::string fresh_name(const std::string& base) {
        std::string name = base;
        for (int i = 1; !names_.insert(name).second; ++i) name = base + "_" + std::to_string(i);
        return name;
    }

    // The graph tensor of TFLite tensor t as an op input: a constant from its buffer, or the output of
    // an earlier operator / a graph input. TFLite lists operators in execution order, so reading a
    // tensor nothing produced and that has no data is a malformed file.
    int32_t ref(int32_t t) {
        int32_t& id = tensor_map_[static_cast<size_t>(t)];
        if (id >= 0) return id;
        const auto [bytes, size] = buffer_of(t);
        if (!bytes) {
            if (!tensor(t).is_variable())
                fail(KES_ERR_CORRUPT_DATA, "TFLite %s is read before any operator writes it and has no data",
                     tensor_label(t).c_str());
            fail(KES_ERR_UNSUPPORTED, "TFLite %s is a variable (stateful models are not supported)",
                 tensor_label(t).c_str());
        }
        if (tensor(t).sparsity())
            fail(KES_ERR_UNSUPPORTED, "TFLite %s is sparse (densify the model first)", tensor_label(t).c_str());
        const kes_dtype dt = dtype_of(t);
        Shape shape = file_shape(t);
        const size_t expected = static_cast<size_t>(shape_elements(shape)) * kes_dtype_size(dt);
        if (size != expected)
            fail(KES_ERR_CORRUPT_DATA, "TFLite %s: buffer holds %zu bytes, shape %s of %s needs %zu",
                 tensor_label(t).c_str(), size, shape_string(shape).c_str(), kes_dtype_name(dt), expected);
        id = g_.add_constant(unique_name(t), dt, std::move(shape), bytes);
        g_.tensors[static_cast<size_t>(id)].quant = quant_of(t);
        return id;
    }

    // The graph tensor an operator output t becomes (created once; a second writer is malformed).
    int32_t def(int32_t t) {
        if (produced_[static_cast<size_t>(t)])
            corrupt_op(tensor_label(t) + " is written by more than one operator (or is a graph input)");
        produced_[static_cast<size_t>(t)] = true;
        const int32_t id = g_.add_activation(unique_name(t), dtype_of(t), file_shape(t), true);
        g_.tensors[static_cast<size_t>(id)].quant = quant_of(t);
        tensor_map_[static_cast<size_t>(t)] = id;
        return id;
    }

    // Maps output t onto an existing graph tensor (ops folded at import, e.g. DEQUANTIZE of weights).
    void alias(int32_t t, int32_t id) {
        if (produced_[static_cast<size_t>(t)])
            corrupt_op(tensor_label(t) + " is written by more than one operator (or is a graph input)");
        produced_[static_cast<size_t>(t)] = true;
        tensor_map_[static_cast<size_t>(t)] = id;
    }

    int32_t temp(const std::string& base, kes_dtype dt = KES_F32) {
        return g_.add_activation(fresh_name(node_name_ + "/" + base), dt);
    }

    Node& node(std::string op, std::vector<int32_t> ins, std::vector<int32_t> outs, const std::string& suffix = {}) {
        return g_.add_node(std::move(op), std::move(ins), std::move(outs),
                           suffix.empty() ? node_name_ : node_name_ + "/" + suffix);
    }

    int32_t const_i64(const std::string& base, Shape shape, const std::vector<int64_t>& v) {
        return g_.add_constant_i64(fresh_name(node_name_ + "/" + base), std::move(shape), v);
    }
    int32_t const_f32(const std::string& base, Shape shape, const std::vector<float>& v) {
        return g_.add_constant_f32(fresh_name(node_name_ + "/" + base), std::move(shape), v);
    }

    // The graph constant TFLite tensor t is, or nullptr when it is an activation (a tensor with data
    // that an operator also writes counts as the activation, as in TFLite).
    const Tensor* constant_of(int32_t t) {
        const Tensor& c = g_.tensors[static_cast<size_t>(ref(t))];
        return c.is_const ? &c : nullptr;
    }

    // Integer values of a constant int32/int64 input (shapes, axes, paddings, slice bounds).
    std::vector<int64_t> const_ints_of(int32_t t, const char* what) {
        const Tensor* constant = constant_of(t);
        if (!constant) unsupported_op(std::string(what) + " must be a constant tensor");
        const Tensor& c = *constant;
        std::vector<int64_t> v(static_cast<size_t>(c.elements()));
        if (c.dtype == KES_I32) {
            for (size_t i = 0; i < v.size(); ++i) {
                int32_t x;
                std::memcpy(&x, c.data.data() + 4 * i, 4);
                v[i] = x;
            }
        } else if (c.dtype == KES_I64) {
            if (!v.empty()) std::memcpy(v.data(), c.data.data(), v.size() * 8);
        } else {
            corrupt_op(std::string(what) + " is " + kes_dtype_name(c.dtype) + ", expected int32 or int64");
        }
        return v;
    }

    // ---- operators -------------------------------------------------------------------------------------

    template <class Options>
    const Options* options(const tfl::Operator& op, bool required) const {
        if (op.builtin_options_type() == tfl::BuiltinOptions::NONE) {
            if (required) corrupt_op("its builtin options are missing");
            return nullptr;
        }
        const Options* o = op.builtin_options_as<Options>();
        if (!o) {
            const char* got = tfl::EnumNameBuiltinOptions(op.builtin_options_type());
            corrupt_op(std::string("its builtin options are ") + (got && *got ? got : "of an unknown type") +
                       ", expected " + tfl::EnumNameBuiltinOptions(tfl::BuiltinOptionsTraits<Options>::enum_value));
        }
        return o;
    }

    // TFLite fused activation → op.hpp Activation (NONE → Kind::None).
    Activation activation(tfl::ActivationFunctionType f) const {
        Activation a;
        switch (f) {
            case tfl::ActivationFunctionType::NONE: break;
            case tfl::ActivationFunctionType::RELU: a.kind = Activation::Kind::Relu; break;
            case tfl::ActivationFunctionType::RELU_N1_TO_1:
                a.kind = Activation::Kind::Clip, a.min = -1.0f, a.max = 1.0f;
                break;
            case tfl::ActivationFunctionType::RELU6: a.kind = Activation::Kind::Clip, a.min = 0.0f, a.max = 6.0f; break;
            case tfl::ActivationFunctionType::TANH: a.kind = Activation::Kind::Tanh; break;
            default: unsupported_op("fused activation " + std::to_string(static_cast<int>(f)) + " is not supported");
        }
        return a;
    }

    // For ops that cannot fuse `act`: the tensor the op should write (a temp when an activation
    // follows, else `out`); finish_activation then adds the activation node pre → out.
    int32_t pre_activation(const Activation& act, int32_t out) {
        if (act.kind == Activation::Kind::None) return out;
        return temp("pre_activation", g_.tensors[static_cast<size_t>(out)].dtype);
    }
    void finish_activation(const Activation& act, int32_t pre, int32_t out) {
        if (act.kind == Activation::Kind::None) return;
        if (act.kind == Activation::Kind::Relu) {
            node("Relu", {pre}, {out}, "activation");
        } else if (act.kind == Activation::Kind::Tanh) {
            node("Tanh", {pre}, {out}, "activation");
        } else {
            node("Clip", {pre, const_f32("min", {}, {act.min}), const_f32("max", {}, {act.max})}, {out}, "activation");
        }
    }

    void expect_io(const tfl::Operator& op, size_t min_in, size_t max_in, size_t outs) {
        const size_t ni = ins_.size(), no = outs_.size();
        if (ni < min_in || ni > max_in || no != outs)
            corrupt_op("has " + std::to_string(ni) + " inputs and " + std::to_string(no) + " outputs, expected " +
                       std::to_string(min_in) + (max_in != min_in ? ".." + std::to_string(max_in) : std::string()) +
                       " and " + std::to_string(outs));
        for (size_t i = 0; i < min_in; ++i)
            if (ins_[i] < 0) corrupt_op("required input " + std::to_string(i) + " is omitted (-1)");
        (void)op;
    }

    Shape in_shape(size_t i) const { return file_shape(ins_[i]); }

    void convert_operator(const tfl::Operator& op) {
        const auto* codes = model_->operator_codes();
        if (!codes || op.opcode_index() >= codes->size())
            fail(KES_ERR_CORRUPT_DATA, "TFLite operator %u of subgraph 0: opcode index %u out of range (%u codes)",
                 op_index_, op.opcode_index(), codes ? codes->size() : 0);
        const tfl::OperatorCode* code = codes->Get(op.opcode_index());
        // Schema 3a: the real code is the larger of the two fields (old files fill only the byte).
        const int32_t builtin =
            std::max(static_cast<int32_t>(code->builtin_code()), static_cast<int32_t>(code->deprecated_builtin_code()));
        op_name_ = builtin_name(builtin);
        node_name_ = op_name_ + "_" + std::to_string(op_index_);
        ins_.clear();
        outs_.clear();
        if (op.inputs())
            for (int32_t t : *op.inputs()) {
                if (t != -1) check_tensor_index(t, ("operator " + std::to_string(op_index_) + " input").c_str());
                ins_.push_back(t);
            }
        if (op.outputs())
            for (int32_t t : *op.outputs()) {
                check_tensor_index(t, ("operator " + std::to_string(op_index_) + " output").c_str());
                outs_.push_back(t);
            }
        if (builtin == static_cast<int32_t>(BuiltinOperator::CUSTOM))
            return custom_operator(op, code->custom_code() ? code->custom_code()->str() : std::string());

        if (reads_quantized(builtin)) return convert_quantized(op, builtin);
        dispatch(op, builtin);
    }

    void dispatch(const tfl::Operator& op, int32_t builtin) {
        switch (static_cast<BuiltinOperator>(builtin)) {
            case BuiltinOperator::CONV_2D: return conv(op, false);
            case BuiltinOperator::DEPTHWISE_CONV_2D: return conv(op, true);
            case BuiltinOperator::FULLY_CONNECTED: return fully_connected(op);
            case BuiltinOperator::AVERAGE_POOL_2D: return pool(op, "AveragePool");
            case BuiltinOperator::MAX_POOL_2D: return pool(op, "MaxPool");
            case BuiltinOperator::ADD: return binary(op, "Add", options<tfl::AddOptions>(op, false));
            case BuiltinOperator::SUB: return binary(op, "Sub", options<tfl::SubOptions>(op, false));
            case BuiltinOperator::MUL: return binary(op, "Mul", options<tfl::MulOptions>(op, false));
            case BuiltinOperator::DIV: return binary(op, "Div", options<tfl::DivOptions>(op, false));
            case BuiltinOperator::MAXIMUM: return simple(op, "Max", 2);
            case BuiltinOperator::MINIMUM: return simple(op, "Min", 2);
            case BuiltinOperator::POW: return simple(op, "Pow", 2);
            case BuiltinOperator::PRELU: return simple(op, "PRelu", 2);
            case BuiltinOperator::LESS: return simple(op, "Less", 2);
            case BuiltinOperator::LESS_EQUAL: return simple(op, "LessOrEqual", 2);
            case BuiltinOperator::GREATER: return simple(op, "Greater", 2);
            case BuiltinOperator::GREATER_EQUAL: return simple(op, "GreaterOrEqual", 2);
            case BuiltinOperator::EQUAL: return simple(op, "Equal", 2);
            case BuiltinOperator::NOT_EQUAL: return not_equal(op);
            case BuiltinOperator::LOGICAL_AND: return simple(op, "And", 2);
            case BuiltinOperator::LOGICAL_OR: return simple(op, "Or", 2);
            case BuiltinOperator::LOGICAL_NOT: return simple(op, "Not", 1);
            case BuiltinOperator::SELECT:
            case BuiltinOperator::SELECT_V2: return simple(op, "Where", 3);
            case BuiltinOperator::RELU: return simple(op, "Relu", 1);
            case BuiltinOperator::ABS: return simple(op, "Abs", 1);
            case BuiltinOperator::NEG: return simple(op, "Neg", 1);
            case BuiltinOperator::LOGISTIC: return simple(op, "Sigmoid", 1);
            case BuiltinOperator::TANH: return simple(op, "Tanh", 1);
            case BuiltinOperator::EXP: return simple(op, "Exp", 1);
            case BuiltinOperator::LOG: return simple(op, "Log", 1);
            case BuiltinOperator::SQRT: return simple(op, "Sqrt", 1);
            case BuiltinOperator::FLOOR: return simple(op, "Floor", 1);
            case BuiltinOperator::CEIL: return simple(op, "Ceil", 1);
            case BuiltinOperator::ROUND: return simple(op, "Round", 1);
            case BuiltinOperator::SIN: return simple(op, "Sin", 1);
            case BuiltinOperator::COS: return simple(op, "Cos", 1);
            case BuiltinOperator::HARD_SWISH: return simple(op, "HardSwish", 1);
            case BuiltinOperator::RSQRT: return rsqrt(op);
            case BuiltinOperator::SQUARE: return square(op);
            case BuiltinOperator::SQUARED_DIFFERENCE: return squared_difference(op);
            case BuiltinOperator::RELU6: return clip(op, 0.0f, 6.0f);
            case BuiltinOperator::RELU_N1_TO_1: return clip(op, -1.0f, 1.0f);
            case BuiltinOperator::LEAKY_RELU: return leaky_relu(op);
            case BuiltinOperator::SOFTMAX: return softmax(op);
            case BuiltinOperator::CONCATENATION: return concat(op);
            case BuiltinOperator::RESHAPE: return reshape(op);
            case BuiltinOperator::SQUEEZE: return squeeze(op);
            case BuiltinOperator::EXPAND_DIMS: return expand_dims(op);
            case BuiltinOperator::TRANSPOSE: return transpose(op);
            case BuiltinOperator::PAD:
            case BuiltinOperator::PADV2: return pad(op, "constant");
            case BuiltinOperator::MIRROR_PAD: return mirror_pad(op);
            case BuiltinOperator::STRIDED_SLICE: return strided_slice(op);
            case BuiltinOperator::SLICE: return slice(op);
            case BuiltinOperator::MEAN: return reduce(op, "ReduceMean");
            case BuiltinOperator::SUM: return reduce(op, "ReduceSum");
            case BuiltinOperator::REDUCE_MAX: return reduce(op, "ReduceMax");
            case BuiltinOperator::REDUCE_MIN: return reduce(op, "ReduceMin");
            case BuiltinOperator::REDUCE_PROD: return reduce(op, "ReduceProd");
            case BuiltinOperator::RESIZE_BILINEAR: return resize(op, true);
            case BuiltinOperator::RESIZE_NEAREST_NEIGHBOR: return resize(op, false);
            case BuiltinOperator::DEQUANTIZE: return dequantize(op);
            case BuiltinOperator::CAST: return cast(op);
            case BuiltinOperator::GATHER: return gather(op);
            case BuiltinOperator::DENSIFY: return densify(op);
            case BuiltinOperator::DEPTH_TO_SPACE: return depth_to_space(op);
            default: break;
        }
        unsupported_op("builtin op " + op_name_ + " is not supported by Kestrel");
    }

    // Same-named op with the TFLite inputs in order.
    void simple(const tfl::Operator& op, const char* onnx_op, size_t inputs) {
        expect_io(op, inputs, inputs, 1);
        std::vector<int32_t> in;
        for (int32_t t : ins_) in.push_back(ref(t));
        node(onnx_op, std::move(in), {def(outs_[0])});
    }

    template <class Options>
    void binary(const tfl::Operator& op, const char* onnx_op, const Options* o) {
        expect_io(op, 2, 2, 1);
        const int32_t a = ref(ins_[0]), b = ref(ins_[1]);
        Node& n = quantized_ ? quantized_node(std::string("QLinear") + onnx_op, a, b, -1, def(outs_[0]))
                             : node(onnx_op, {a, b}, {def(outs_[0])});
        if (o) Activation::to_attrs(activation(o->fused_activation_function()), n.attrs);
    }

    void clip(const tfl::Operator& op, float lo, float hi) {
        expect_io(op, 1, 1, 1);
        const int32_t x = ref(ins_[0]);
        node("Clip", {x, const_f32("min", {}, {lo}), const_f32("max", {}, {hi})}, {def(outs_[0])});
    }

    void not_equal(const tfl::Operator& op) {
        expect_io(op, 2, 2, 1);
        const int32_t eq = temp("equal", KES_BOOL);
        node("Equal", {ref(ins_[0]), ref(ins_[1])}, {eq}, "equal");
        node("Not", {eq}, {def(outs_[0])});
    }

    void rsqrt(const tfl::Operator& op) {
        expect_io(op, 1, 1, 1);
        const int32_t x = ref(ins_[0]);
        const int32_t s = temp("sqrt");
        node("Sqrt", {x}, {s}, "sqrt");
        node("Reciprocal", {s}, {def(outs_[0])});
    }

    void square(const tfl::Operator& op) {
        expect_io(op, 1, 1, 1);
        const int32_t x = ref(ins_[0]);
        node("Mul", {x, x}, {def(outs_[0])});
    }

    void squared_difference(const tfl::Operator& op) {
        expect_io(op, 2, 2, 1);
        const int32_t d = temp("difference");
        node("Sub", {ref(ins_[0]), ref(ins_[1])}, {d}, "sub");
        node("Mul", {d, d}, {def(outs_[0])});
    }

    void leaky_relu(const tfl::Operator& op) {
        expect_io(op, 1, 1, 1);
        const auto* o = options<tfl::LeakyReluOptions>(op, false);
        Node& n = node("LeakyRelu", {ref(ins_[0])}, {def(outs_[0])});
        n.attrs.set_float("alpha", o ? o->alpha() : 0.0f);
    }

    void conv(const tfl::Operator& op, bool depthwise) {
        expect_io(op, 2, 3, 1);
        int32_t stride_h, stride_w, dil_h, dil_w;
        tfl::Padding padding;
        tfl::ActivationFunctionType act;
        if (depthwise) {
            const auto* o = options<tfl::DepthwiseConv2DOptions>(op, true);
            stride_h = o->stride_h(), stride_w = o->stride_w(), dil_h = o->dilation_h_factor(),
            dil_w = o->dilation_w_factor(), padding = o->padding(), act = o->fused_activation_function();
        } else {
            const auto* o = options<tfl::Conv2DOptions>(op, true);
            stride_h = o->stride_h(), stride_w = o->stride_w(), dil_h = o->dilation_h_factor(),
            dil_w = o->dilation_w_factor(), padding = o->padding(), act = o->fused_activation_function();
        }
        if (stride_h < 1 || stride_w < 1 || dil_h < 1 || dil_w < 1)
            corrupt_op("strides " + std::to_string(stride_h) + "x" + std::to_string(stride_w) + " and dilations " +
                       std::to_string(dil_h) + "x" + std::to_string(dil_w) + " must be >= 1");
        if (padding != tfl::Padding::SAME && padding != tfl::Padding::VALID) corrupt_op("unknown padding type");
        const Shape xs = in_shape(0), ws = in_shape(1);
        if (xs.size() != 4 || ws.size() != 4)
            corrupt_op("input " + shape_string(xs) + " and filter " + shape_string(ws) + " must both be 4-d");
        const int64_t channels = xs[3];
        int64_t cout = ws[0], kh = ws[1], kw = ws[2], group = 1;
        int32_t filter = ref(ins_[1]);
        if (depthwise) {
            // [1, KH, KW, C·M] → OHWI [C·M, KH, KW, 1], group C.
            cout = ws[3];
            if (ws[0] != 1 || channels <= 0 || cout % channels != 0)
                corrupt_op("depthwise filter " + shape_string(ws) + " does not fit input " + shape_string(xs));
            group = channels;
            const Shape ohwi = {cout, kh, kw, 1};
            const Tensor& f = g_.tensors[static_cast<size_t>(filter)];
            // TFLite quantizes a depthwise filter per output channel along its last axis, which the
            // transposition below makes axis 0.
            if (f.quant.scale.size() > 1 && f.quant.axis != 3)
                unsupported_op("per-channel quantised depthwise filter quantized along axis " +
                               std::to_string(f.quant.axis) + " (TFLite's is 3)");
            if (f.is_const) {
                const size_t es = kes_dtype_size(f.dtype);
                std::vector<uint8_t> t(f.data.size());
                for (int64_t y = 0; y < kh; ++y)
                    for (int64_t x = 0; x < kw; ++x)
                        for (int64_t o = 0; o < cout; ++o)
                            std::memcpy(&t[static_cast<size_t>(((o * kh + y) * kw + x)) * es],
                                        &f.data[static_cast<size_t>(((y * kw + x) * cout + o)) * es], es);
                Tensor nt = f;
                nt.name = fresh_name(f.name + "/ohwi");
                nt.shape = ohwi;
                nt.data = std::move(t);
                if (nt.quant.scale.size() > 1) nt.quant.axis = 0;
                filter = g_.add_tensor(std::move(nt));
            } else {
                const int32_t tr = temp("filter_ohwi", f.dtype);
                Node& n = node("Transpose", {filter}, {tr}, "filter_ohwi");
                n.attrs.set_ints("perm", {3, 1, 2, 0});
                filter = tr;
            }
        } else {
            if (ws[3] <= 0 || channels % ws[3] != 0)
                corrupt_op("filter " + shape_string(ws) + " does not fit input " + shape_string(xs));
            group = channels / ws[3];
        }
        std::vector<int32_t> in = {ref(ins_[0]), filter};
        if (ins_.size() > 2 && ins_[2] >= 0) in.push_back(ref(ins_[2]));
        Node& n = quantized_ ? quantized_node("QLinearConv", in[0], in[1], in.size() > 2 ? in[2] : -1, def(outs_[0]))
                             : node("Conv", std::move(in), {def(outs_[0])});
        n.attrs.set_string("data_layout", "NHWC");
        n.attrs.set_ints("kernel_shape", {kh, kw});
        n.attrs.set_ints("strides", {stride_h, stride_w});
        n.attrs.set_ints("dilations", {dil_h, dil_w});
        set_padding(n.attrs, padding);
        n.attrs.set_int("group", group);
        Activation::to_attrs(activation(act), n.attrs);
    }

    void pool(const tfl::Operator& op, const char* onnx_op) {
        expect_io(op, 1, 1, 1);
        const auto* o = options<tfl::Pool2DOptions>(op, true);
        const Shape xs = in_shape(0);
        if (xs.size() != 4) corrupt_op("input " + shape_string(xs) + " must be 4-d");
        if (o->stride_h() < 1 || o->stride_w() < 1 || o->filter_height() < 1 || o->filter_width() < 1)
            corrupt_op("filter and strides must be >= 1");
        if (o->padding() != tfl::Padding::SAME && o->padding() != tfl::Padding::VALID)
            corrupt_op("unknown padding type");
        const int32_t x = ref(ins_[0]);
        const int32_t out = def(outs_[0]);
        const Activation act = activation(o->fused_activation_function());
        const int32_t pre = pre_activation(act, out);
        Node& n = node(onnx_op, {x}, {pre});
        n.attrs.set_string("data_layout", "NHWC");
        n.attrs.set_ints("kernel_shape", {o->filter_height(), o->filter_width()});
        n.attrs.set_ints("strides", {o->stride_h(), o->stride_w()});
        set_padding(n.attrs, o->padding());
        // TFLite averages over the valid pixels only.
        if (std::strcmp(onnx_op, "AveragePool") == 0) n.attrs.set_int("count_include_pad", 0);
        finish_activation(act, pre, out);
    }

    void fully_connected(const tfl::Operator& op) {
        expect_io(op, 2, 3, 1);
        const auto* o = options<tfl::FullyConnectedOptions>(op, false);
        if (o && o->weights_format() != tfl::FullyConnectedOptionsWeightsFormat::DEFAULT)
            unsupported_op("shuffled FULLY_CONNECTED weights are not supported");
        const Shape xs = in_shape(0), ws = in_shape(1);
        if (ws.size() != 2 || xs.empty() || ws[1] <= 0 || shape_elements(xs) % ws[1] != 0)
            corrupt_op("weights " + shape_string(ws) + " do not fit input " + shape_string(xs));
        const int64_t k = ws[1], units = ws[0];
        int32_t x = ref(ins_[0]);
        if (xs.size() != 2 || xs[1] != k) {
            const int32_t flat = like(x, "flatten");
            node("Reshape", {x, const_i64("flat_shape", {2}, {-1, k})}, {flat}, "flatten");
            x = flat;
        }
        std::vector<int32_t> in = {x, ref(ins_[1])};
        if (ins_.size() > 2 && ins_[2] >= 0) in.push_back(ref(ins_[2]));
        const int32_t out = def(outs_[0]);
        const bool restore = o && o->keep_num_dims() && xs.size() != 2;
        const int32_t gemm_out = restore ? like(out, "gemm") : out;
        Node& n = quantized_ ? quantized_node("QLinearMatMul", in[0], transposed_weights(in[1]),
                                              in.size() > 2 ? in[2] : -1, gemm_out)
                             : node("Gemm", std::move(in), {gemm_out});
        if (!quantized_) n.attrs.set_int("transB", 1);
        if (o) Activation::to_attrs(activation(o->fused_activation_function()), n.attrs);
        if (restore) {
            std::vector<int64_t> shape(xs.begin(), xs.end());
            shape.front() = -1;
            shape.back() = units;
            node("Reshape", {gemm_out, const_i64("shape", {static_cast<int64_t>(shape.size())}, shape)}, {out},
                 "restore_dims");
        }
    }

    void softmax(const tfl::Operator& op) {
        expect_io(op, 1, 1, 1);
        const auto* o = options<tfl::SoftmaxOptions>(op, false);
        const float beta = o ? o->beta() : 1.0f;
        int32_t x = ref(ins_[0]);
        if (beta != 1.0f) {
            const int32_t scaled = temp("scaled");
            node("Mul", {x, const_f32("beta", {}, {beta})}, {scaled}, "beta");
            x = scaled;
        }
        Node& n = node("Softmax", {x}, {def(outs_[0])});
        n.attrs.set_int("axis", -1);
    }

    void concat(const tfl::Operator& op) {
        if (ins_.empty() || outs_.size() != 1) expect_io(op, 1, 1 << 20, 1);
        for (size_t i = 0; i < ins_.size(); ++i)
            if (ins_[i] < 0) corrupt_op("input " + std::to_string(i) + " is omitted (-1)");
        const auto* o = options<tfl::ConcatenationOptions>(op, true);
        std::vector<int32_t> in;
        for (int32_t t : ins_) in.push_back(ref(t));
        const int32_t out = def(outs_[0]);
        if (quantized_) return quantized_concat(in, out, o->axis());
        const Activation act = activation(o->fused_activation_function());
        const int32_t pre = pre_activation(act, out);
        Node& n = node("Concat", std::move(in), {pre});
        n.attrs.set_int("axis", o->axis());
        finish_activation(act, pre, out);
    }

    void reshape(const tfl::Operator& op) {
        expect_io(op, 1, 2, 1);
        std::vector<int64_t> shape;
        bool have = false;
        // TFLite prefers the shape tensor when given, then the option, then the output's own shape.
        if (ins_.size() > 1 && ins_[1] >= 0 && constant_of(ins_[1])) {
            shape = const_ints_of(ins_[1], "shape");
            have = true;
        } else if (const auto* o = options<tfl::ReshapeOptions>(op, false); o && o->new_shape()) {
            shape.assign(o->new_shape()->begin(), o->new_shape()->end());
            have = true;
        }
        if (ins_.size() > 1 && ins_[1] >= 0 && !have) unsupported_op("a shape computed at run time is not supported");
        if (!have) {
            const Shape os = file_shape(outs_[0]);
            shape.assign(os.begin(), os.end());
        }
        const Shape xs = in_shape(0);
        const bool has_zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
        // Keep the batch symbolic (0 = copy dim 0) so a later dynamic batch reshapes correctly.
        if (!has_zero && !shape.empty() && !xs.empty() && shape[0] == xs[0] && xs[0] > 0) shape[0] = 0;
        const int32_t x = ref(ins_[0]);
        Node& n =
            node("Reshape", {x, const_i64("shape", {static_cast<int64_t>(shape.size())}, shape)}, {def(outs_[0])});
        if (has_zero) n.attrs.set_int("allowzero", 1);
    }

    void squeeze(const tfl::Operator& op) {
        expect_io(op, 1, 1, 1);
        const auto* o = options<tfl::SqueezeOptions>(op, false);
        std::vector<int64_t> axes;
        if (o && o->squeeze_dims()) axes.assign(o->squeeze_dims()->begin(), o->squeeze_dims()->end());
        if (axes.empty()) {
            const Shape xs = in_shape(0);
            for (size_t i = 0; i < xs.size(); ++i)
                if (xs[i] == 1) axes.push_back(static_cast<int64_t>(i));
        }
        const int32_t x = ref(ins_[0]);
        node("Squeeze", {x, const_i64("axes", {static_cast<int64_t>(axes.size())}, axes)}, {def(outs_[0])});
    }

    void expand_dims(const tfl::Operator& op) {
        expect_io(op, 2, 2, 1);
        const std::vector<int64_t> axis = const_ints_of(ins_[1], "axis");
        if (axis.size() != 1) corrupt_op("axis must hold one value");
        const int32_t x = ref(ins_[0]);
        node("Unsqueeze", {x, const_i64("axes", {1}, axis)}, {def(outs_[0])});
    }

    void transpose(const tfl::Operator& op) {
        expect_io(op, 2, 2, 1);
        const std::vector<int64_t> perm = const_ints_of(ins_[1], "perm");
        Node& n = node("Transpose", {ref(ins_[0])}, {def(outs_[0])});
        n.attrs.set_ints("perm", perm);
    }

    // paddings [rank, 2] (before, after per dim) → ONNX pads [b0..bn, e0..en].
    int32_t onnx_pads(int32_t paddings) {
        const std::vector<int64_t> p = const_ints_of(paddings, "paddings");
        if (p.size() % 2) corrupt_op("paddings must be [rank, 2]");
        const size_t rank = p.size() / 2;
        std::vector<int64_t> pads(p.size());
        for (size_t i = 0; i < rank; ++i) pads[i] = p[2 * i], pads[rank + i] = p[2 * i + 1];
        return const_i64("pads", {static_cast<int64_t>(pads.size())}, pads);
    }

    void pad(const tfl::Operator& op, const char* mode) {
        expect_io(op, 2, 3, 1);
        const int32_t x = ref(ins_[0]);
        std::vector<int32_t> in = {x, onnx_pads(ins_[1])};
        if (ins_.size() > 2 && ins_[2] >= 0)
            in.push_back(ref(ins_[2]));
        else if (quantized_)  // TFLite pads a quantized tensor with its zero point (real 0)
            in.push_back(zero_point_of(x));
        Node& n = node("Pad", std::move(in), {def(outs_[0])});
        n.attrs.set_string("mode", mode);
    }

    void mirror_pad(const tfl::Operator& op) {
        expect_io(op, 2, 2, 1);
        const auto* o = options<tfl::MirrorPadOptions>(op, false);
        if (o && o->mode() != tfl::MirrorPadMode::REFLECT)
            unsupported_op("MIRROR_PAD mode SYMMETRIC is not supported (REFLECT is)");
        pad(op, "reflect");
    }

    void strided_slice(const tfl::Operator& op) {
        expect_io(op, 4, 4, 1);
        const auto* o = options<tfl::StridedSliceOptions>(op, false);
        const int32_t begin_mask = o ? o->begin_mask() : 0, end_mask = o ? o->end_mask() : 0;
        const int32_t shrink = o ? o->shrink_axis_mask() : 0;
        if (o && (o->ellipsis_mask() || o->new_axis_mask()))
            unsupported_op("STRIDED_SLICE with ellipsis_mask or new_axis_mask is not supported");
        std::vector<int64_t> begin = const_ints_of(ins_[1], "begin"), end = const_ints_of(ins_[2], "end"),
                             steps = const_ints_of(ins_[3], "strides");
        const Shape xs = in_shape(0);
        if (begin.size() != end.size() || begin.size() != steps.size() || begin.size() > xs.size() || begin.size() > 31)
            corrupt_op("begin/end/strides sizes " + std::to_string(begin.size()) + "/" + std::to_string(end.size()) +
                       "/" + std::to_string(steps.size()) + " do not fit input " + shape_string(xs));
        std::vector<int64_t> axes, squeeze_axes;
        for (size_t i = 0; i < begin.size(); ++i) {
            const int64_t s = steps[i];
            if (s == 0) corrupt_op("stride " + std::to_string(i) + " is 0");
            if (o && o->offset()) end[i] = saturating_add(end[i], begin[i]);
            if (begin_mask & (1 << i)) begin[i] = s > 0 ? 0 : kInt64Max;
            if (end_mask & (1 << i)) end[i] = s > 0 ? kInt64Max : kInt64Min;
            if (shrink & (1 << i)) {
                // One element at begin: TF ignores end and stride and the masks for this dim.
                if (begin_mask & (1 << i)) begin[i] = 0;
                end[i] = begin[i] == -1 ? kInt64Max : saturating_add(begin[i], 1);
                steps[i] = 1;
                squeeze_axes.push_back(static_cast<int64_t>(i));
            }
            axes.push_back(static_cast<int64_t>(i));
        }
        const int64_t n = static_cast<int64_t>(axes.size());
        const int32_t x = ref(ins_[0]);
        const int32_t out = def(outs_[0]);
        const int32_t sliced = squeeze_axes.empty() ? out : temp("sliced", g_.tensors[static_cast<size_t>(out)].dtype);
        node("Slice",
             {x, const_i64("starts", {n}, begin), const_i64("ends", {n}, end), const_i64("axes", {n}, axes),
              const_i64("steps", {n}, steps)},
             {sliced});
        if (!squeeze_axes.empty())
            node("Squeeze",
                 {sliced, const_i64("squeeze_axes", {static_cast<int64_t>(squeeze_axes.size())}, squeeze_axes)}, {out},
                 "shrink");
    }

    void slice(const tfl::Operator& op) {
        expect_io(op, 3, 3, 1);
        const std::vector<int64_t> begin = const_ints_of(ins_[1], "begin"), size = const_ints_of(ins_[2], "size");
        if (begin.size() != size.size()) corrupt_op("begin and size differ in length");
        std::vector<int64_t> end(begin.size()), axes(begin.size());
        for (size_t i = 0; i < begin.size(); ++i) {
            if (size[i] < -1 || begin[i] < 0) corrupt_op("negative begin or size below -1");
            end[i] = size[i] == -1 ? kInt64Max : saturating_add(begin[i], size[i]);
            axes[i] = static_cast<int64_t>(i);
        }
        const int64_t n = static_cast<int64_t>(begin.size());
        node("Slice",
             {ref(ins_[0]), const_i64("starts", {n}, begin), const_i64("ends", {n}, end), const_i64("axes", {n}, axes)},
             {def(outs_[0])});
    }

    void reduce(const tfl::Operator& op, const char* onnx_op) {
        expect_io(op, 2, 2, 1);
        const auto* o = options<tfl::ReducerOptions>(op, false);
        const bool keep = o && o->keep_dims();
        std::vector<int64_t> axes = const_ints_of(ins_[1], "axis");
        const int32_t x = ref(ins_[0]);
        if (axes.empty()) {  // TFLite reduces over nothing: the identity (ONNX would reduce everything)
            node("Identity", {x}, {def(outs_[0])});
            return;
        }
        std::sort(axes.begin(), axes.end());
        axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
        if (std::strcmp(onnx_op, "ReduceSum") == 0) {  // opset 13+: axes is an input
            Node& n = node(onnx_op, {x, const_i64("axes", {static_cast<int64_t>(axes.size())}, axes)}, {def(outs_[0])});
            n.attrs.set_int("keepdims", keep ? 1 : 0);
        } else {
            Node& n = node(onnx_op, {x}, {def(outs_[0])});
            n.attrs.set_ints("axes", axes);
            n.attrs.set_int("keepdims", keep ? 1 : 0);
        }
    }

    void resize(const tfl::Operator& op, bool bilinear) {
        expect_io(op, 2, 2, 1);
        bool align = false, half = false;
        if (bilinear) {
            if (const auto* o = options<tfl::ResizeBilinearOptions>(op, false))
                align = o->align_corners(), half = o->half_pixel_centers();
        } else if (const auto* o = options<tfl::ResizeNearestNeighborOptions>(op, false)) {
            align = o->align_corners(), half = o->half_pixel_centers();
        }
        if (align && half) corrupt_op("align_corners and half_pixel_centers are both set");
        const std::vector<int64_t> size = const_ints_of(ins_[1], "size");
        const Shape xs = in_shape(0);
        if (size.size() != 2 || xs.size() != 4 || size[0] <= 0 || size[1] <= 0)
            corrupt_op("size must be 2 positive values for a 4-d input");
        const int32_t x = ref(ins_[0]);
        // An integer upscale (an FPN's ×2) becomes scales [1, k, k', 1]: the same output (ONNX derives
        // the coordinate scale from sizes as out/in = k), but it follows the input's batch and size,
        // so batch and image gears work. Another ratio (×1.5, or a downscale) becomes sizes over axes
        // H and W with kes_size_ratio = size/in reduced, which the kernel applies to whatever input
        // size a gear gives (the file's own size gives the file's sizes).
        const bool known = xs[1] > 0 && xs[2] > 0;
        const bool integral = known && size[0] % xs[1] == 0 && size[1] % xs[2] == 0;
        Node* resize = nullptr;
        if (integral) {
            const int32_t scales = const_f32(
                "scales", {4}, {1.0f, static_cast<float>(size[0] / xs[1]), static_cast<float>(size[1] / xs[2]), 1.0f});
            resize = &node("Resize", {x, -1, scales}, {def(outs_[0])});
        } else if (known) {
            const int64_t gh = std::gcd(size[0], xs[1]), gw = std::gcd(size[1], xs[2]);
            resize = &node("Resize", {x, -1, -1, const_i64("sizes", {2}, {size[0], size[1]})}, {def(outs_[0])});
            resize->attrs.set_ints("axes", {1, 2});
            resize->attrs.set_ints("kes_size_ratio", {size[0] / gh, xs[1] / gh, size[1] / gw, xs[2] / gw});
        } else {
            resize = &node("Resize", {x, -1, -1, const_i64("sizes", {4}, {xs[0], size[0], size[1], xs[3]})},
                           {def(outs_[0])});
        }
        Node& n = *resize;
        n.attrs.set_string("mode", bilinear ? "linear" : "nearest");
        if (bilinear) {
            n.attrs.set_string("coordinate_transformation_mode",
                               align ? "align_corners" : (half ? "half_pixel" : "asymmetric"));
        } else {
            // TF nearest: align_corners rounds half up; half_pixel_centers floors (x+0.5)·scale; the
            // default floors x·scale.
            n.attrs.set_string("coordinate_transformation_mode",
                               align ? "align_corners" : (half ? "tf_half_pixel_for_nn" : "asymmetric"));
            n.attrs.set_string("nearest_mode", align ? "round_prefer_ceil" : "floor");
        }
    }

    void dequantize(const tfl::Operator& op) {
        expect_io(op, 1, 1, 1);
        const int32_t in = ins_[0], out = outs_[0];
        if (dtype_of(out) != KES_F32) unsupported_op("DEQUANTIZE to a type other than float32");
        if (!constant_of(in)) {
            if (quantized_) {
                node("DequantizeLinear", {ref(in), scale_of(ref(in)), zero_point_of(ref(in))}, {def(out)});
                return;
            }
            if (dtype_of(in) != KES_F16)
                unsupported_op("DEQUANTIZE of a quantised activation is not supported (only constants and fp16)");
            Node& n = node("Cast", {ref(in)}, {def(out)});
            n.attrs.set_int("to", 1);
            return;
        }
        const Tensor& c = *constant_of(in);
        const size_t count = static_cast<size_t>(c.elements());
        std::vector<float> v(count);
        if (c.dtype == KES_F16) {
            std::vector<uint16_t> h(count);
            if (count) std::memcpy(h.data(), c.data.data(), count * 2);
            kes_fp16_to_f32(h.data(), v.data(), count);
        } else if (c.dtype == KES_I8 || c.dtype == KES_U8 || c.dtype == KES_I16 || c.dtype == KES_I32) {
            const Quant& q = c.quant;
            if (q.empty()) corrupt_op("quantised " + tensor_label(in) + " has no scale");
            size_t axis_len = 1, inner = 1;
            if (q.scale.size() > 1) {
                const int64_t axis = q.axis;
                if (axis < 0 || axis >= static_cast<int64_t>(c.shape.size()) ||
                    c.shape[static_cast<size_t>(axis)] != static_cast<int64_t>(q.scale.size()))
                    corrupt_op("per-axis quantisation of " + tensor_label(in) + " does not fit its shape");
                axis_len = q.scale.size();
                inner = static_cast<size_t>(split_at_axis(c.shape, axis).inner);
            }
            for (size_t i = 0; i < count; ++i) {
                int64_t qv = 0;
                switch (c.dtype) {
                    case KES_I8: qv = static_cast<int8_t>(c.data[i]); break;
                    case KES_U8: qv = c.data[i]; break;
                    case KES_I16: {
                        int16_t s;
                        std::memcpy(&s, &c.data[2 * i], 2);
                        qv = s;
                        break;
                    }
                    default: {
                        int32_t s;
                        std::memcpy(&s, &c.data[4 * i], 4);
                        qv = s;
                        break;
                    }
                }
                const size_t k = axis_len > 1 ? (i / inner) % axis_len : 0;
                v[i] = q.scale[k] * static_cast<float>(qv - q.zero_point[k]);
            }
        } else if (c.dtype == KES_F32) {
            if (count) std::memcpy(v.data(), c.data.data(), count * 4);
        } else {
            unsupported_op(std::string("DEQUANTIZE of ") + kes_dtype_name(c.dtype) + " is not supported");
        }
        const Shape shape = c.shape;
        alias(out, g_.add_constant_f32(fresh_name(unique_name(out)), shape, v));
    }

    void cast(const tfl::Operator& op) {
        expect_io(op, 1, 1, 1);
        const int32_t x = ref(ins_[0]);
        const int32_t out = def(outs_[0]);
        Node& n = node("Cast", {x}, {out});
        n.attrs.set_int("to", kes_dtype_to_onnx(g_.tensors[static_cast<size_t>(out)].dtype));
    }

    void gather(const tfl::Operator& op) {
        expect_io(op, 2, 2, 1);
        const auto* o = options<tfl::GatherOptions>(op, false);
        if (o && o->batch_dims() != 0) unsupported_op("GATHER with batch_dims is not supported");
        Node& n = node("Gather", {ref(ins_[0]), ref(ins_[1])}, {def(outs_[0])});
        n.attrs.set_int("axis", o ? o->axis() : 0);
    }

    // ---- MediaPipe's custom operators (mediapipe/util/tflite/operations) ----------------------------------

    void custom_operator(const tfl::Operator& op, const std::string& name) {
        op_name_ = "custom " + name;
        if (name == "Convolution2DTransposeBias") return transpose_conv_bias(op);
        if (name == "MaxPoolingWithArgmax2D") return max_pool_argmax(op);
        if (name == "MaxUnpooling2D") return max_unpool(op);
        if (name == "Landmarks2TransformMatrix" || name == "TransformLandmarks" || name == "TransformTensorBilinear")
            return landmark_op(op, name);
        unsupported_op("custom op '" + name + "' is not supported by Kestrel");
    }

    // The custom options as a FlexBuffer map (MediaPipe's landmark ops), verified before it is read.
    flexbuffers::Map custom_map(const tfl::Operator& op) const {
        const auto* o = op.custom_options();
        if (!o || o->size() == 0) corrupt_op("its custom options (a FlexBuffer map) are missing");
        if (!flexbuffers::VerifyBuffer(o->data(), o->size()))
            corrupt_op("its custom options are not a valid FlexBuffer");
        const flexbuffers::Reference root = flexbuffers::GetRoot(o->data(), o->size());
        if (!root.IsMap()) corrupt_op("its custom options are not a FlexBuffer map");
        return root.AsMap();
    }
    int64_t custom_int(const flexbuffers::Map& m, const char* key) const {
        const flexbuffers::Reference v = m[key];
        if (!v.IsIntOrUint()) corrupt_op(std::string("custom option '") + key + "' is missing or not an integer");
        return v.AsInt64();
    }
    float custom_float(const flexbuffers::Map& m, const char* key) const {
        const flexbuffers::Reference v = m[key];
        if (!v.IsNumeric()) corrupt_op(std::string("custom option '") + key + "' is missing or not a number");
        return static_cast<float>(v.AsDouble());
    }

    // MediaPipe's V2 landmark ops: options from the FlexBuffer map become the op's attributes.
    void landmark_op(const tfl::Operator& op, const std::string& name) {
        const tfl::OperatorCode* code = model_->operator_codes()->Get(op.opcode_index());
        if (code->version() != 2)
            unsupported_op("version " + std::to_string(code->version()) +
                           " is not supported (MediaPipe's version 2 is)");
        if (name == "Landmarks2TransformMatrix") {
            expect_io(op, 1, 1, 1);
            const flexbuffers::Map m = custom_map(op);
            std::vector<int64_t> subset;
            const flexbuffers::Reference idx = m["subset_idxs"];
            auto read_all = [&](const auto& v) {
                for (size_t i = 0; i < v.size(); ++i) {
                    if (!v[i].IsIntOrUint()) corrupt_op("custom option 'subset_idxs' holds a non-integer");
                    subset.push_back(v[i].AsInt64());
                }
            };
            if (idx.IsTypedVector())
                read_all(idx.AsTypedVector());
            else if (idx.IsVector())
                read_all(idx.AsVector());
            else
                corrupt_op("custom option 'subset_idxs' is not a vector");
            Node& n = node(name, {ref(ins_[0])}, {def(outs_[0])});
            n.attrs.set_int("left_rotation_idx", custom_int(m, "left_rotation_idx"));
            n.attrs.set_int("right_rotation_idx", custom_int(m, "right_rotation_idx"));
            n.attrs.set_int("output_height", custom_int(m, "output_height"));
            n.attrs.set_int("output_width", custom_int(m, "output_width"));
            n.attrs.set_float("scale_x", custom_float(m, "scale_x"));
            n.attrs.set_float("scale_y", custom_float(m, "scale_y"));
            n.attrs.set_float("target_rotation_radians", custom_float(m, "target_rotation_radians"));
            n.attrs.set_ints("subset_idxs", subset);
        } else if (name == "TransformLandmarks") {
            expect_io(op, 2, 2, 1);
            node(name, {ref(ins_[0]), ref(ins_[1])}, {def(outs_[0])});
        } else {
            expect_io(op, 2, 2, 1);
            const flexbuffers::Map m = custom_map(op);
            Node& n = node(name, {ref(ins_[0]), ref(ins_[1])}, {def(outs_[0])});
            n.attrs.set_int("output_height", custom_int(m, "output_height"));
            n.attrs.set_int("output_width", custom_int(m, "output_width"));
        }
    }

    // MediaPipe's pooling ops read TfLitePoolParams: padding, strides, filter size, fused activation.
    struct PoolParams {
        int32_t padding, stride_w, stride_h, filter_w, filter_h, activation;
    };
    PoolParams pool_params(const tfl::Operator& op) const {
        const PoolParams p = custom_struct<PoolParams>(op);
        if (p.padding != 1 && p.padding != 2)
            corrupt_op("padding " + std::to_string(p.padding) + " is not SAME or VALID");
        if (p.stride_w < 1 || p.stride_h < 1 || p.filter_w < 1 || p.filter_h < 1)
            corrupt_op("filter and strides must be >= 1");
        return p;
    }

    void max_pool_argmax(const tfl::Operator& op) {
        expect_io(op, 1, 1, 2);
        const PoolParams p = pool_params(op);
        Node& n = node("MaxPoolingWithArgmax2D", {ref(ins_[0])}, {def(outs_[0]), def(outs_[1])});
        n.attrs.set_ints("kernel_shape", {p.filter_h, p.filter_w});
        n.attrs.set_ints("strides", {p.stride_h, p.stride_w});
        n.attrs.set_string("auto_pad", p.padding == 1 ? "SAME_UPPER" : "VALID");
        Activation::to_attrs(activation(static_cast<tfl::ActivationFunctionType>(p.activation)), n.attrs);
    }

    void max_unpool(const tfl::Operator& op) {
        expect_io(op, 2, 2, 1);
        const PoolParams p = pool_params(op);
        Node& n = node("MaxUnpooling2D", {ref(ins_[0]), ref(ins_[1])}, {def(outs_[0])});
        n.attrs.set_ints("kernel_shape", {p.filter_h, p.filter_w});
        set_transposed_window(n.attrs, p.padding == 1, p.filter_h, p.filter_w, p.stride_h, p.stride_w);
    }

    // MediaPipe's transposed windows (Convolution2DTransposeBias, MaxUnpooling2D): SAME gives input·stride
    // outputs with the padding a forward window over that output would take, its smaller half first:
    // k − s split floor/ceil (none when k ≤ s: then no tap reaches the last s − k outputs); VALID gives
    // (input − 1)·stride + k.
    static void set_transposed_window(Attrs& attrs, bool same, int64_t kh, int64_t kw, int64_t sh, int64_t sw) {
        std::vector<int64_t> pads = {0, 0, 0, 0}, extra = {0, 0};
        if (same) {
            const int64_t total[2] = {kh - sh, kw - sw};
            for (size_t i = 0; i < 2; ++i) {
                if (total[i] > 0)
                    pads[i] = total[i] / 2, pads[i + 2] = total[i] - total[i] / 2;
                else
                    extra[i] = -total[i];
            }
        }
        attrs.set_ints("strides", {sh, sw});
        attrs.set_ints("pads", pads);
        attrs.set_ints("output_padding", extra);
    }

    // The custom options as the C struct `T` MediaPipe's kernel reads them as (its TfLite*Params).
    template <class T>
    T custom_struct(const tfl::Operator& op) const {
        T v;
        const auto* o = op.custom_options();
        if (!o || o->size() < sizeof v)
            corrupt_op("custom options hold " + std::to_string(o ? o->size() : 0) + " bytes, expected " +
                       std::to_string(sizeof v));
        std::memcpy(&v, o->data(), sizeof v);
        return v;
    }

    // Convolution2DTransposeBias(input NHWC, filter OHWI, bias [O]): TRANSPOSE_CONV plus a bias, options
    // {padding (1 SAME, 2 VALID), stride_w, stride_h} (set_transposed_window).
    void transpose_conv_bias(const tfl::Operator& op) {
        expect_io(op, 3, 3, 1);
        struct TransposeConvParams {
            int32_t padding, stride_w, stride_h;
        };
        const auto o = custom_struct<TransposeConvParams>(op);
        if (o.padding != 1 && o.padding != 2)
            corrupt_op("padding " + std::to_string(o.padding) + " is not SAME or VALID");
        if (o.stride_w < 1 || o.stride_h < 1) corrupt_op("strides must be >= 1");
        const Shape ws = in_shape(1);
        if (ws.size() != 4) corrupt_op("filter " + shape_string(ws) + " must be 4-d (OHWI)");
        const int32_t x = ref(ins_[0]), w = ref(ins_[1]), b = ref(ins_[2]);
        Node& n = node("ConvTranspose", {x, w, b}, {def(outs_[0])});
        n.attrs.set_string("data_layout", "NHWC");
        n.attrs.set_ints("kernel_shape", {ws[1], ws[2]});
        set_transposed_window(n.attrs, o.padding == 1, ws[1], ws[2], o.stride_h, o.stride_w);
    }

    // DENSIFY of a sparse constant (pruned weights) becomes the dense constant; the sparse tensor is
    // read only here (ref() refuses it anywhere else).
    void densify(const tfl::Operator& op) {
        expect_io(op, 1, 1, 1);
        const int32_t in = ins_[0];
        const tfl::SparsityParameters* sparsity = tensor(in).sparsity();
        const auto [bytes, size] = buffer_of(in);
        if (!sparsity || !bytes) unsupported_op("DENSIFY of " + tensor_label(in) + ", which is not a sparse constant");
        const kes_dtype dt = dtype_of(in);
        Shape shape = file_shape(in);
        std::vector<uint8_t> dense =
            densify_tflite_constant(*sparsity, shape, kes_dtype_size(dt), bytes, size, "TFLite " + tensor_label(in));
        const int32_t id = g_.add_constant(fresh_name(unique_name(outs_[0])), dt, std::move(shape), dense.data());
        g_.tensors[static_cast<size_t>(id)].quant = quant_of(in);
        alias(outs_[0], id);
    }

    // NHWC DEPTH_TO_SPACE: [N,H,W,b·b·C] viewed as [N,H,W,b,b,C], the two block axes moved beside H and W.
    void depth_to_space(const tfl::Operator& op) {
        expect_io(op, 1, 1, 1);
        const auto* o = options<tfl::DepthToSpaceOptions>(op, true);
        const int64_t b = o->block_size();
        const Shape xs = in_shape(0);
        if (xs.size() != 4 || b < 1 || xs[3] % (b * b) != 0)
            corrupt_op("block size " + std::to_string(b) + " does not fit input " + shape_string(xs));
        const int64_t c = xs[3] / (b * b);
        const int32_t blocks = temp("blocks"), moved = temp("moved");
        node("Reshape", {ref(ins_[0]), const_i64("block_shape", {6}, {0, xs[1], xs[2], b, b, c})}, {blocks}, "blocks");
        Node& t = node("Transpose", {blocks}, {moved}, "move");
        t.attrs.set_ints("perm", {0, 1, 3, 2, 4, 5});
        node("Reshape", {moved, const_i64("shape", {4}, {0, xs[1] * b, xs[2] * b, c})}, {def(outs_[0])});
    }

    // ---- fully quantized operators ---------------------------------------------------------------------

    // A u8/i8 tensor with a scale: a quantized activation (or a quantized constant an op reads).
    bool is_quantized_tensor(int32_t t) const {
        const tfl::TensorType type = tensor(t).type();
        const auto* qp = tensor(t).quantization();
        return (type == tfl::TensorType::INT8 || type == tfl::TensorType::UINT8) && qp && qp->scale() &&
               qp->scale()->size() > 0;
    }

    // Whether the operator takes the quantized path: it reads a quantized activation, or quantizes.
    bool reads_quantized(int32_t builtin) {
        if (builtin == static_cast<int32_t>(BuiltinOperator::QUANTIZE)) return true;
        bool quantized = false;
        for (int32_t t : ins_) {
            if (t < 0 || buffer_of(t).first) continue;
            const auto* qp = tensor(t).quantization();
            if (tensor(t).type() == tfl::TensorType::INT16 && qp && qp->scale() && qp->scale()->size() > 0)
                unsupported_op("int16 activations (TFLite's 16x8 quantization) are not supported, in " +
                               tensor_label(t));
            quantized = quantized || is_quantized_tensor(t);
        }
        return quantized;
    }

    // A quantized tensor's parameters as TFLite's kernels assume them: scales finite and > 0, zero points
    // inside the type; one scale for an activation (`per_tensor`), one or one per channel for a
    // constant. INVALID_ARGUMENT naming the tensor otherwise.
    void check_quant(int32_t t, bool per_tensor) const {
        const Quant q = quant_of(t);
        const QuantRange r = quantized_range(dtype_of(t));
        if (per_tensor && q.scale.size() != 1)
            fail(KES_ERR_INVALID_ARGUMENT, "TFLite %s: %zu quantization scales; an activation has one (per tensor)",
                 tensor_label(t).c_str(), q.scale.size());
        for (size_t i = 0; i < q.scale.size(); ++i) {
            if (!(q.scale[i] > 0.0f) || !std::isfinite(q.scale[i]))
                fail(KES_ERR_INVALID_ARGUMENT, "TFLite %s: quantization scale %g must be finite and > 0",
                     tensor_label(t).c_str(), static_cast<double>(q.scale[i]));
            if (q.zero_point[i] < r.min || q.zero_point[i] > r.max)
                fail(KES_ERR_INVALID_ARGUMENT, "TFLite %s: zero point %lld is outside %s's [%d, %d]",
                     tensor_label(t).c_str(), static_cast<long long>(q.zero_point[i]), kes_dtype_name(dtype_of(t)),
                     r.min, r.max);
        }
    }

    // The quantized ops TFLite's integer kernels have here; any other operator reading quantized
    // tensors runs in f32 between DequantizeLinear and QuantizeLinear (within 1 LSB of TFLite's).
    void convert_quantized(const tfl::Operator& op, int32_t builtin) {
        for (int32_t t : ins_)
            if (t >= 0 && is_quantized_tensor(t)) check_quant(t, !buffer_of(t).first);
        for (int32_t t : outs_)
            if (is_quantized_tensor(t)) check_quant(t, true);
        const auto b = static_cast<BuiltinOperator>(builtin);
        const auto fused = [&](tfl::ActivationFunctionType f) {
            return f == tfl::ActivationFunctionType::NONE || f == tfl::ActivationFunctionType::RELU ||
                   f == tfl::ActivationFunctionType::RELU6 || f == tfl::ActivationFunctionType::RELU_N1_TO_1;
        };
        bool native = false;
        const bool quantized_out = !outs_.empty() && is_quantized_tensor(outs_[0]);
        switch (b) {
            case BuiltinOperator::QUANTIZE: return quantize(op);
            case BuiltinOperator::DEQUANTIZE: native = true; break;
            case BuiltinOperator::CONV_2D:
            case BuiltinOperator::DEPTHWISE_CONV_2D:
            case BuiltinOperator::FULLY_CONNECTED: native = quantized_out; break;
            case BuiltinOperator::ADD:
            case BuiltinOperator::MUL: {
                const auto* add = op.builtin_options_as<tfl::AddOptions>();
                const auto* mul = op.builtin_options_as<tfl::MulOptions>();
                native = quantized_out && (!add || fused(add->fused_activation_function())) &&
                         (!mul || fused(mul->fused_activation_function()));
                break;
            }
            case BuiltinOperator::CONCATENATION: {
                const auto* o = op.builtin_options_as<tfl::ConcatenationOptions>();
                native = quantized_out && o && o->fused_activation_function() == tfl::ActivationFunctionType::NONE;
                for (int32_t t : ins_) native = native && t >= 0 && dtype_of(t) == dtype_of(outs_[0]);
                break;
            }
            case BuiltinOperator::MAX_POOL_2D: {
                // The maximum of the integers, when the output keeps the input's quantization (as
                // TFLite's converter writes it) and no activation follows.
                const auto* o = op.builtin_options_as<tfl::Pool2DOptions>();
                native = quantized_out && o && o->fused_activation_function() == tfl::ActivationFunctionType::NONE &&
                         same_quant(ins_[0], outs_[0]);
                break;
            }
            case BuiltinOperator::RESHAPE:
            case BuiltinOperator::SQUEEZE:
            case BuiltinOperator::EXPAND_DIMS:
            case BuiltinOperator::TRANSPOSE:
            case BuiltinOperator::PAD: native = quantized_out && same_quant(ins_[0], outs_[0]); break;
            case BuiltinOperator::PADV2:  // its fill value quantized as the input, as TFLite requires
                native = quantized_out && same_quant(ins_[0], outs_[0]) &&
                         (ins_.size() < 3 || ins_[2] < 0 || same_quant(ins_[2], ins_[0]));
                break;
            default: break;
        }
        if (!native) return float_island(op, builtin);
        quantized_ = true;
        dispatch(op, builtin);
        quantized_ = false;
    }

    bool same_quant(int32_t a, int32_t b) const {
        const Quant qa = quant_of(a), qb = quant_of(b);
        return dtype_of(a) == dtype_of(b) && qa.scale == qb.scale && qa.zero_point == qb.zero_point;
    }

    // A tensor's scale and zero point as constant inputs of a quantized op (per axis when it has more).
    int32_t scale_of(int32_t id) {
        const Tensor& t = g_.tensors[static_cast<size_t>(id)];
        const std::vector<float> scale = t.quant.scale;
        const Shape shape = scale.size() == 1 ? Shape{} : Shape{static_cast<int64_t>(scale.size())};
        return g_.add_constant_f32(fresh_name(t.name + "/scale"), shape, scale);
    }
    int32_t zero_point_of(int32_t id) {
        const Tensor& t = g_.tensors[static_cast<size_t>(id)];
        const kes_dtype dt = t.dtype;
        std::vector<uint8_t> bytes;
        for (int64_t z : t.quant.zero_point) bytes.push_back(static_cast<uint8_t>(z));  // i8 as two's complement
        const Shape shape = bytes.size() == 1 ? Shape{} : Shape{static_cast<int64_t>(bytes.size())};
        return g_.add_constant(fresh_name(t.name + "/zero_point"), dt, shape, bytes.data());
    }

    // QLinearConv / QLinearMatMul (x, w, bias) or QLinearAdd / QLinearMul (a, b) → out, in ONNX's input
    // order, following TFLite's arithmetic.
    Node& quantized_node(const std::string& op, int32_t a, int32_t b, int32_t bias, int32_t out) {
        std::vector<int32_t> in = {a,           scale_of(a),      zero_point_of(a), b,
                                   scale_of(b), zero_point_of(b), scale_of(out),    zero_point_of(out)};
        if (bias >= 0) {
            if (g_.tensors[static_cast<size_t>(bias)].dtype != KES_I32)
                unsupported_op(std::string("a quantized op's bias of type ") +
                               kes_dtype_name(g_.tensors[static_cast<size_t>(bias)].dtype) + " (TFLite's is int32)");
            in.push_back(bias);
        }
        Node& n = node(op, std::move(in), {out});
        n.attrs.set_string("kes_requantization", "tflite");
        return n;
    }

    // FULLY_CONNECTED's constant [units, K] weights as QLinearMatMul's B, [K, units] (per-unit scales
    // then along axis 1).
    int32_t transposed_weights(int32_t w) {
        const Tensor& f = g_.tensors[static_cast<size_t>(w)];
        if (!f.is_const || f.shape.size() != 2) unsupported_op("quantized weights that are not a constant matrix");
        const int64_t units = f.shape[0], k = f.shape[1];
        const size_t es = kes_dtype_size(f.dtype);
        Tensor t = f;
        t.name = fresh_name(f.name + "/kn");
        t.shape = {k, units};
        for (int64_t u = 0; u < units; ++u)
            for (int64_t i = 0; i < k; ++i)
                std::memcpy(&t.data[static_cast<size_t>(i * units + u) * es],
                            &f.data[static_cast<size_t>(u * k + i) * es], es);
        if (t.quant.scale.size() > 1) t.quant.axis = 1;
        return g_.add_tensor(std::move(t));
    }

    // A temporary with the dtype and quantization of graph tensor `id` (a view of it).
    int32_t like(int32_t id, const std::string& base) {
        const Tensor& t = g_.tensors[static_cast<size_t>(id)];
        const kes_dtype dt = t.dtype;
        const Quant q = t.quant;
        const int32_t tmp = temp(base, dt);
        g_.tensors[static_cast<size_t>(tmp)].quant = q;
        return tmp;
    }

    void quantized_concat(const std::vector<int32_t>& in, int32_t out, int32_t axis) {
        std::vector<int32_t> args = {scale_of(out), zero_point_of(out)};
        for (int32_t x : in) args.insert(args.end(), {x, scale_of(x), zero_point_of(x)});
        Node& n = node("QLinearConcat", std::move(args), {out});
        n.attrs.set_int("axis", axis);
        n.attrs.set_string("kes_requantization", "tflite");
    }

    // QUANTIZE: f32 → u8/i8 as TFLite rounds; between quantized types (a uint8 model input to int8, or
    // a requantization) through f32: exact when the scales are equal, else within 1 LSB of TFLite's
    // fixed-point Requantize.
    void quantize(const tfl::Operator& op) {
        expect_io(op, 1, 1, 1);
        const int32_t in = ins_[0], out = outs_[0];
        if (!is_quantized_tensor(out)) unsupported_op("QUANTIZE to an output without a scale");
        int32_t x = ref(in);
        if (dtype_of(in) != KES_F32) {
            if (!is_quantized_tensor(in)) unsupported_op(std::string("QUANTIZE of ") + kes_dtype_name(dtype_of(in)));
            const int32_t real = temp("dequantized");
            node("DequantizeLinear", {x, scale_of(x), zero_point_of(x)}, {real}, "dequantize");
            x = real;
        }
        const int32_t y = def(out);
        Node& n = node("QuantizeLinear", {x, scale_of(y), zero_point_of(y)}, {y});
        n.attrs.set_string("kes_requantization", "tflite");
    }

    // An operator with no quantized form: its quantized inputs are dequantized, the float op runs, and
    // its quantized outputs are quantized again as TFLite rounds.
    void float_island(const tfl::Operator& op, int32_t builtin) {
        std::vector<std::pair<int32_t, int32_t>> saved;  // TFLite tensor, its quantized graph tensor
        for (int32_t t : ins_) {
            if (t < 0 || !is_quantized_tensor(t)) continue;
            if (std::any_of(saved.begin(), saved.end(), [&](const auto& p) { return p.first == t; })) continue;
            const int32_t q = ref(t);
            const int32_t real = temp(g_.tensors[static_cast<size_t>(q)].name + "/dequantized");
            const int64_t axis = g_.tensors[static_cast<size_t>(q)].quant.axis;
            Node& dq = node("DequantizeLinear", {q, scale_of(q), zero_point_of(q)}, {real}, "dequantize");
            if (axis >= 0) dq.attrs.set_int("axis", axis);
            saved.emplace_back(t, q);
            tensor_map_[static_cast<size_t>(t)] = real;
        }
        dispatch(op, builtin);
        for (const auto& [t, q] : saved) tensor_map_[static_cast<size_t>(t)] = q;
        for (int32_t t : outs_) {
            if (!is_quantized_tensor(t)) continue;
            const int32_t real = tensor_map_[static_cast<size_t>(t)];
            Tensor& r = g_.tensors[static_cast<size_t>(real)];
            const std::string name = r.name;
            r.name = fresh_name(name + "/real");
            r.dtype = KES_F32;
            r.quant = Quant{};
            const int32_t q = g_.add_activation(name, dtype_of(t), file_shape(t), true);
            g_.tensors[static_cast<size_t>(q)].quant = quant_of(t);
            Node& n = node("QuantizeLinear", {real, scale_of(q), zero_point_of(q)}, {q}, "quantize");
            n.attrs.set_string("kes_requantization", "tflite");
            tensor_map_[static_cast<size_t>(t)] = q;
        }
    }

    const uint8_t* file_;
    size_t file_size_;
    const tfl::Model* model_ = nullptr;
    const tfl::SubGraph* sg_ = nullptr;
    Graph g_;
    std::vector<int32_t> tensor_map_;  // TFLite tensor → graph tensor (-1: not yet)
    std::vector<bool> produced_;       // written by an operator (or a graph input)
    std::unordered_set<std::string> names_;
    uint32_t op_index_ = 0;
    bool quantized_ = false;  // the operator being converted takes the quantized ops
    std::string op_name_, node_name_;
    std::vector<int32_t> ins_, outs_;
};

}  // namespace

Graph import_tflite(const uint8_t* data, size_t size) {
    return Importer(data, size).run();
}

}  // namespace kes::ir
