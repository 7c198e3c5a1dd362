// Test support for the TFLite importer: writes small .tflite files with FlatBuffers' builder and
// Kestrel's schema (engine/schema/tflite_subset.fbs), and runs converted graphs through the C API.
// Shared by test_tflite_import.cpp, test_tflite_prelu.cpp and the fuzz seed writer test.
#pragma once

#include <flatbuffers/flexbuffers.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "convert/importers.hpp"
#include "convert/kom_writer.hpp"
#include "convert/passes.hpp"
#include "kes/error.hpp"
#include "kestrel/engine.h"
#include "kestrel/status.h"
#include "tflite_subset_generated.h"

namespace kes_test {

namespace tfl = kes::tflite;

class TfliteBuilder {
public:
    TfliteBuilder() { buffers_.push_back(tfl::CreateBuffer(fb_)); }  // buffer 0: the empty sentinel

    // A tensor; `data` (raw little-endian bytes) makes it a constant.
    int32_t tensor(const std::string& name, std::vector<int32_t> shape, tfl::TensorType type = tfl::TensorType::FLOAT32,
                   const std::vector<uint8_t>& data = {}, flatbuffers::Offset<tfl::QuantizationParameters> q = 0) {
        uint32_t buffer = 0;
        if (!data.empty()) {
            fb_.ForceVectorAlignment(data.size(), 1, 16);
            const auto bytes = fb_.CreateVector(data);
            buffers_.push_back(tfl::CreateBuffer(fb_, bytes));
            buffer = static_cast<uint32_t>(buffers_.size() - 1);
        }
        // One builder call per statement: argument evaluation order differs between compilers, and the
        // committed fuzz seeds must come out byte-identical everywhere.
        const auto shape_vector = fb_.CreateVector(shape);
        const auto name_string = fb_.CreateString(name);
        tensors_.push_back(tfl::CreateTensor(fb_, shape_vector, type, buffer, name_string, q));
        return static_cast<int32_t>(tensors_.size() - 1);
    }
    int32_t f32(const std::string& name, std::vector<int32_t> shape, const std::vector<float>& v) {
        return tensor(name, std::move(shape), tfl::TensorType::FLOAT32, bytes_of(v));
    }
    // A constant in TFLite's sparse format: `values` the stored elements, `sparsity` where they lie.
    int32_t sparse_f32(const std::string& name, std::vector<int32_t> shape, const std::vector<float>& values,
                       flatbuffers::Offset<tfl::SparsityParameters> sparsity) {
        const std::vector<uint8_t> data = bytes_of(values);
        fb_.ForceVectorAlignment(data.size(), 1, 16);
        const auto bytes = fb_.CreateVector(data);
        buffers_.push_back(tfl::CreateBuffer(fb_, bytes));
        const auto shape_vector = fb_.CreateVector(shape);
        const auto name_string = fb_.CreateString(name);
        tensors_.push_back(tfl::CreateTensor(fb_, shape_vector, tfl::TensorType::FLOAT32,
                                             static_cast<uint32_t>(buffers_.size() - 1), name_string, 0, false,
                                             sparsity));
        return static_cast<int32_t>(tensors_.size() - 1);
    }
    int32_t i32(const std::string& name, std::vector<int32_t> shape, const std::vector<int32_t>& v) {
        return tensor(name, std::move(shape), tfl::TensorType::INT32, bytes_of(v));
    }

    template <class T>
    static std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
        std::vector<uint8_t> b(v.size() * sizeof(T));
        if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
        return b;
    }

    void op(int32_t builtin, std::vector<int32_t> ins, std::vector<int32_t> outs,
            tfl::BuiltinOptions type = tfl::BuiltinOptions::NONE, flatbuffers::Offset<void> options = 0) {
        uint32_t code = 0;
        for (; code < codes_.size(); ++code)
            if (codes_[code] == builtin) break;
        if (code == codes_.size()) codes_.push_back(builtin);
        const auto in_vector = fb_.CreateVector(ins);
        const auto out_vector = fb_.CreateVector(outs);
        ops_.push_back(tfl::CreateOperator(fb_, code, in_vector, out_vector, type, options));
    }
    void op(tfl::BuiltinOperator builtin, std::vector<int32_t> ins, std::vector<int32_t> outs,
            tfl::BuiltinOptions type = tfl::BuiltinOptions::NONE, flatbuffers::Offset<void> options = 0) {
        op(static_cast<int32_t>(builtin), std::move(ins), std::move(outs), type, options);
    }

    // A CUSTOM operator `name` (of that op `version`) with its raw custom_options (MediaPipe's ops: a C
    // struct or a FlexBuffer map).
    void custom_op(const std::string& name, std::vector<int32_t> ins, std::vector<int32_t> outs,
                   const std::vector<uint8_t>& custom_options, int32_t version = 1) {
        const int32_t code = kCustomBase - static_cast<int32_t>(custom_names_.size());
        custom_names_.emplace_back(name, version);
        codes_.push_back(code);
        const auto in_vector = fb_.CreateVector(ins);
        const auto out_vector = fb_.CreateVector(outs);
        const auto options = custom_options.empty() ? 0 : fb_.CreateVector(custom_options);
        ops_.push_back(tfl::CreateOperator(fb_, static_cast<uint32_t>(codes_.size() - 1), in_vector, out_vector,
                                           tfl::BuiltinOptions::NONE, 0, options));
    }

    flatbuffers::FlatBufferBuilder& fb() { return fb_; }

    // legacy_codes: write only the byte code, as converters before TF 2.4 did (builtin_code left 0).
    std::vector<uint8_t> finish(std::vector<int32_t> inputs, std::vector<int32_t> outputs, uint32_t version = 3,
                                bool legacy_codes = false) {
        std::vector<flatbuffers::Offset<tfl::OperatorCode>> codes;
        for (int32_t c : codes_) {  // as TF ≥ 2.4 writes them: the byte saturates at 127
            if (c <= kCustomBase) {
                const auto& [custom_name, custom_version] = custom_names_[static_cast<size_t>(kCustomBase - c)];
                const auto name = fb_.CreateString(custom_name);
                const int32_t custom = static_cast<int32_t>(tfl::BuiltinOperator::CUSTOM);
                codes.push_back(tfl::CreateOperatorCode(fb_, static_cast<int8_t>(custom), name, custom_version,
                                                        static_cast<tfl::BuiltinOperator>(legacy_codes ? 0 : custom)));
                continue;
            }
            codes.push_back(tfl::CreateOperatorCode(fb_, static_cast<int8_t>(c < 127 ? c : 127), 0, 1,
                                                    static_cast<tfl::BuiltinOperator>(legacy_codes ? 0 : c)));
        }
        const auto tensors = fb_.CreateVector(tensors_);
        const auto in_vector = fb_.CreateVector(inputs);
        const auto out_vector = fb_.CreateVector(outputs);
        const auto op_vector = fb_.CreateVector(ops_);
        const auto sg_name = fb_.CreateString("main");
        const auto sg = tfl::CreateSubGraph(fb_, tensors, in_vector, out_vector, op_vector, sg_name);
        const auto code_vector = fb_.CreateVector(codes);
        const auto sg_vector = fb_.CreateVector(&sg, 1);
        const auto description = fb_.CreateString("kestrel test");
        const auto buffer_vector = fb_.CreateVector(buffers_);
        const auto model = tfl::CreateModel(fb_, version, code_vector, sg_vector, description, buffer_vector);
        tfl::FinishModelBuffer(fb_, model);
        return {fb_.GetBufferPointer(), fb_.GetBufferPointer() + fb_.GetSize()};
    }

private:
    flatbuffers::FlatBufferBuilder fb_;
    std::vector<flatbuffers::Offset<tfl::Buffer>> buffers_;
    std::vector<flatbuffers::Offset<tfl::Tensor>> tensors_;
    std::vector<flatbuffers::Offset<tfl::Operator>> ops_;
    std::vector<int32_t> codes_;  // builtin codes; kCustomBase - i: custom op custom_names_[i]
    std::vector<std::pair<std::string, int32_t>> custom_names_;  // name, version
    static constexpr int32_t kCustomBase = -1;
};

// The status and message of import_tflite on these bytes (KES_OK, "" when it succeeds).
inline std::pair<kes_status, std::string> import_error(const std::vector<uint8_t>& bytes) {
    try {
        kes::ir::import_tflite(bytes.data(), bytes.size());
        return {KES_OK, ""};
    } catch (const kes::Error& e) {
        return {e.status(), e.what()};
    }
}

// Shape-infers g, writes it to a .kom image, loads and executes it once on f32 inputs; returns the
// f32 outputs (empty on failure, with a test failure recorded).
inline std::vector<std::vector<float>> run_graph(kes::ir::Graph g, const std::vector<std::vector<float>>& inputs) {
    std::vector<std::vector<float>> results;
    kes::ir::infer_shapes(g);
    const kes::ir::KomImage image = kes::ir::write_kom(g);
    kes_model* model = nullptr;
    EXPECT_EQ(kes_model_load_from_memory(image.bytes.data(), image.bytes.size(), &model), KES_OK) << kes_last_error();
    if (!model) return results;
    kes_model_context* ctx = nullptr;
    EXPECT_EQ(kes_model_context_create(model, nullptr, 0, &ctx), KES_OK) << kes_last_error();
    std::vector<kes_tensor> ins(g.inputs.size()), outs(g.outputs.size());
    std::vector<std::vector<float>> in_copy = inputs;
    EXPECT_EQ(in_copy.size(), ins.size());
    for (size_t i = 0; i < ins.size() && i < in_copy.size(); ++i) {
        const kes::ir::Tensor& t = g.tensors[static_cast<size_t>(g.inputs[i])];
        EXPECT_EQ(static_cast<int64_t>(in_copy[i].size()), t.elements()) << "input " << i;
        in_copy[i].resize(static_cast<size_t>(t.elements()));
        EXPECT_EQ(kes_tensor_wrap(&ins[i], KES_F32, KES_LAYOUT_ND, static_cast<uint32_t>(t.shape.size()),
                                  t.shape.data(), in_copy[i].data(), in_copy[i].size() * sizeof(float)),
                  KES_OK);
    }
    results.resize(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
        const kes::ir::Tensor& t = g.tensors[static_cast<size_t>(g.outputs[i])];
        results[i].assign(static_cast<size_t>(t.elements()), -12345.0f);
        EXPECT_EQ(kes_tensor_wrap(&outs[i], KES_F32, KES_LAYOUT_ND, static_cast<uint32_t>(t.shape.size()),
                                  t.shape.data(), results[i].data(), results[i].size() * sizeof(float)),
                  KES_OK);
    }
    EXPECT_EQ(kes_model_execute(ctx, ins.data(), ins.size(), outs.data(), outs.size()), KES_OK) << kes_last_error();
    kes_model_context_destroy(ctx);
    kes_model_unload(model);
    return results;
}

inline std::vector<float> ramp(size_t n, float scale, float bias) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = scale * static_cast<float>((static_cast<int>(i * 7919 % 23) - 11)) / 11.0f + bias;
    return v;
}

inline void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float tol,
                            const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (!(std::fabs(got[i] - want[i]) <= tol * (1.0f + std::fabs(want[i])))) {
            if (++bad <= 5) ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << ", want " << want[i];
        }
    EXPECT_EQ(bad, 0u) << what;
}

// ---- fuzz seeds -------------------------------------------------------------------------------------
// The committed seeds of engine/fuzz/seeds_tflite are these models' bytes (FlatBufferBuilder output is
// deterministic); TfliteFuzzSeeds.CommittedBytesComeFromTheBuilder checks it and, with
// KES_WRITE_TFLITE_SEEDS=1 in the environment, rewrites them.
struct TfliteSeed {
    const char* file;
    std::vector<uint8_t> (*build)();
};

// conv + depthwise + prelu pattern + reshape (MobileFaceNet-like)
inline std::vector<uint8_t> seed_conv_prelu_dw_reshape() {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 4, 4, 2});
    const int32_t w = tb.f32("w", {3, 3, 3, 2}, ramp(54, 0.5f, 0.f)), b = tb.f32("b", {3}, {0.1f, 0.2f, 0.3f});
    const int32_t c1 = tb.tensor("c1", {1, 2, 2, 3});
    tb.op(tfl::BuiltinOperator::CONV_2D, {in, w, b}, {c1}, tfl::BuiltinOptions::Conv2DOptions,
          tfl::CreateConv2DOptions(tb.fb(), tfl::Padding::SAME, 2, 2).Union());
    const int32_t r = tb.tensor("r", {1, 2, 2, 3}), a = tb.tensor("a", {1, 2, 2, 3}), s = tb.tensor("s", {1, 2, 2, 3});
    const int32_t al = tb.f32("alpha", {3}, {0.1f, 0.2f, 0.3f}), m = tb.tensor("m", {1, 2, 2, 3}),
                  p = tb.tensor("p", {1, 2, 2, 3});
    tb.op(tfl::BuiltinOperator::RELU, {c1}, {r});
    tb.op(tfl::BuiltinOperator::ABS, {c1}, {a});
    tb.op(tfl::BuiltinOperator::SUB, {c1, a}, {s}, tfl::BuiltinOptions::SubOptions,
          tfl::CreateSubOptions(tb.fb()).Union());
    tb.op(tfl::BuiltinOperator::MUL, {al, s}, {m}, tfl::BuiltinOptions::MulOptions,
          tfl::CreateMulOptions(tb.fb()).Union());
    tb.op(tfl::BuiltinOperator::ADD, {r, m}, {p}, tfl::BuiltinOptions::AddOptions,
          tfl::CreateAddOptions(tb.fb()).Union());
    const int32_t dw = tb.f32("dw", {1, 2, 2, 3}, ramp(12, 1.f, 0.f)), d = tb.tensor("d", {1, 1, 1, 3});
    tb.op(tfl::BuiltinOperator::DEPTHWISE_CONV_2D, {p, dw, -1}, {d}, tfl::BuiltinOptions::DepthwiseConv2DOptions,
          tfl::CreateDepthwiseConv2DOptions(tb.fb(), tfl::Padding::VALID, 1, 1, 1).Union());
    const int32_t shape = tb.i32("shape", {2}, {1, 3}), out = tb.tensor("embeddings", {1, 3});
    tb.op(tfl::BuiltinOperator::RESHAPE, {d, shape}, {out}, tfl::BuiltinOptions::ReshapeOptions,
          tfl::CreateReshapeOptions(tb.fb(), tb.fb().CreateVector<int32_t>({1, 3})).Union());
    return tb.finish({in}, {out});
}

// fp16 DEQUANTIZE + fully connected + pools + concat + strided slice + resize + softmax
inline std::vector<uint8_t> seed_pool_concat_resize_slice_fc16() {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 4, 4, 2});
    const int32_t mp = tb.tensor("mp", {1, 2, 2, 2}), ap = tb.tensor("ap", {1, 2, 2, 2}),
                  cat = tb.tensor("cat", {1, 2, 2, 4});
    tb.op(tfl::BuiltinOperator::MAX_POOL_2D, {in}, {mp}, tfl::BuiltinOptions::Pool2DOptions,
          tfl::CreatePool2DOptions(tb.fb(), tfl::Padding::SAME, 2, 2, 2, 2).Union());
    tb.op(
        tfl::BuiltinOperator::AVERAGE_POOL_2D, {in}, {ap}, tfl::BuiltinOptions::Pool2DOptions,
        tfl::CreatePool2DOptions(tb.fb(), tfl::Padding::VALID, 2, 2, 2, 2, tfl::ActivationFunctionType::RELU6).Union());
    tb.op(tfl::BuiltinOperator::CONCATENATION, {mp, ap}, {cat}, tfl::BuiltinOptions::ConcatenationOptions,
          tfl::CreateConcatenationOptions(tb.fb(), 3).Union());
    const int32_t sz = tb.i32("size", {2}, {3, 3}), rs = tb.tensor("rs", {1, 3, 3, 4});
    tb.op(tfl::BuiltinOperator::RESIZE_BILINEAR, {cat, sz}, {rs}, tfl::BuiltinOptions::ResizeBilinearOptions,
          tfl::CreateResizeBilinearOptions(tb.fb(), false, true).Union());
    const int32_t bgn = tb.i32("begin", {4}, {0, 0, 1, 0}), end = tb.i32("end", {4}, {1, 3, 3, 4}),
                  st = tb.i32("strides", {4}, {1, 2, 1, 1});
    const int32_t sl = tb.tensor("sl", {2, 2, 4});
    tb.op(tfl::BuiltinOperator::STRIDED_SLICE, {rs, bgn, end, st}, {sl}, tfl::BuiltinOptions::StridedSliceOptions,
          tfl::CreateStridedSliceOptions(tb.fb(), 0, 0, 0, 0, 1).Union());
    std::vector<float> wf = ramp(16 * 5, 0.3f, 0.f);
    std::vector<uint16_t> wh(wf.size());
    kes_fp16_from_f32(wf.data(), wh.data(), wf.size());
    const int32_t w16 = tb.tensor("w16", {5, 16}, tfl::TensorType::FLOAT16, TfliteBuilder::bytes_of(wh)),
                  w = tb.tensor("w", {5, 16});
    tb.op(tfl::BuiltinOperator::DEQUANTIZE, {w16}, {w});
    const int32_t fc = tb.tensor("fc", {1, 5}), out = tb.tensor("probs", {1, 5});
    tb.op(tfl::BuiltinOperator::FULLY_CONNECTED, {sl, w, -1}, {fc}, tfl::BuiltinOptions::FullyConnectedOptions,
          tfl::CreateFullyConnectedOptions(tb.fb()).Union());
    tb.op(tfl::BuiltinOperator::SOFTMAX, {fc}, {out}, tfl::BuiltinOptions::SoftmaxOptions,
          tfl::CreateSoftmaxOptions(tb.fb(), 1.0f).Union());
    return tb.finish({in}, {out});
}

// unsupported op (fails with a status)
inline std::vector<uint8_t> seed_unsupported_l2norm() {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("x", {1, 4}), out = tb.tensor("y", {1, 4});
    tb.op(tfl::BuiltinOperator::L2_NORMALIZATION, {in}, {out});
    return tb.finish({in}, {out});
}

// MediaPipe's extras: DENSIFY of CSR weights, DEPTH_TO_SPACE, Convolution2DTransposeBias (C struct
// options), MaxPoolingWithArgmax2D / MaxUnpooling2D, and TransformTensorBilinear (FlexBuffer options).
inline std::vector<uint8_t> seed_mediapipe_ops() {
    TfliteBuilder tb;
    flatbuffers::FlatBufferBuilder& fb = tb.fb();
    const auto order = fb.CreateVector(std::vector<int32_t>{0, 1});
    const auto segments_values = fb.CreateVector(std::vector<int32_t>{0, 1, 2, 2, 3});
    const auto segments = tfl::CreateInt32Vector(fb, segments_values);
    const auto indices_values = fb.CreateVector(std::vector<int32_t>{0, 3, 1});
    const auto indices = tfl::CreateInt32Vector(fb, indices_values);
    const std::vector<flatbuffers::Offset<tfl::DimensionMetadata>> meta = {
        tfl::CreateDimensionMetadata(fb, tfl::DimensionType::DENSE, 4),
        tfl::CreateDimensionMetadata(fb, tfl::DimensionType::SPARSE_CSR, 0, tfl::SparseIndexVector::Int32Vector,
                                     segments.Union(), tfl::SparseIndexVector::Int32Vector, indices.Union())};
    const auto meta_vector = fb.CreateVector(meta);
    const auto sparsity = tfl::CreateSparsityParameters(fb, order, 0, meta_vector);
    const int32_t in = tb.tensor("input", {1, 2, 2, 4});
    const int32_t sparse = tb.sparse_f32("w_sparse", {4, 4}, {1.0f, -1.0f, 0.5f}, sparsity);
    const int32_t w = tb.tensor("w", {4, 4}), fc = tb.tensor("fc", {4, 4}), shaped = tb.tensor("shaped", {1, 2, 2, 4});
    tb.op(tfl::BuiltinOperator::DENSIFY, {sparse}, {w});
    tb.op(tfl::BuiltinOperator::FULLY_CONNECTED, {in, w, -1}, {fc}, tfl::BuiltinOptions::FullyConnectedOptions,
          tfl::CreateFullyConnectedOptions(fb).Union());
    const int32_t shape = tb.i32("shape", {4}, {1, 2, 2, 4});
    tb.op(tfl::BuiltinOperator::RESHAPE, {fc, shape}, {shaped});
    const int32_t d2s = tb.tensor("d2s", {1, 4, 4, 1});
    tb.op(tfl::BuiltinOperator::DEPTH_TO_SPACE, {shaped}, {d2s}, tfl::BuiltinOptions::DepthToSpaceOptions,
          tfl::CreateDepthToSpaceOptions(fb, 2).Union());
    const int32_t pooled = tb.tensor("pooled", {1, 2, 2, 1}), where = tb.tensor("where", {1, 2, 2, 1});
    tb.custom_op("MaxPoolingWithArgmax2D", {d2s}, {pooled, where},
                 TfliteBuilder::bytes_of(std::vector<int32_t>{1, 2, 2, 2, 2, 0, 0, 0, 0, 0}));
    const int32_t unpooled = tb.tensor("unpooled", {1, 4, 4, 1});
    tb.custom_op("MaxUnpooling2D", {pooled, where}, {unpooled},
                 TfliteBuilder::bytes_of(std::vector<int32_t>{1, 2, 2, 2, 2, 0, 0, 0, 0, 0}));
    const int32_t kernel = tb.f32("kernel", {1, 2, 2, 1}, {1.0f, 2.0f, 3.0f, 4.0f}), bias = tb.f32("bias", {1}, {0.5f});
    const int32_t up = tb.tensor("up", {1, 8, 8, 1});
    tb.custom_op("Convolution2DTransposeBias", {unpooled, kernel, bias}, {up},
                 TfliteBuilder::bytes_of(std::vector<int32_t>{1, 2, 2}));
    const int32_t matrix = tb.f32("matrix", {1, 4, 4}, {2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
    const int32_t out = tb.tensor("out", {1, 4, 4, 1});
    flexbuffers::Builder fbb;
    const size_t map = fbb.StartMap();
    fbb.Int("output_height", 4);
    fbb.Int("output_width", 4);
    fbb.EndMap(map);
    fbb.Finish();
    tb.custom_op("TransformTensorBilinear", {up, matrix}, {out}, fbb.GetBuffer(), 2);
    return tb.finish({in}, {out});
}

inline std::vector<TfliteSeed> tflite_seeds() {
    return {{"conv_prelu_dw_reshape.tflite", seed_conv_prelu_dw_reshape},
            {"pool_concat_resize_slice_fc16.tflite", seed_pool_concat_resize_slice_fc16},
            {"unsupported_l2norm.tflite", seed_unsupported_l2norm},
            {"mediapipe_ops.tflite", seed_mediapipe_ops}};
}

}  // namespace kes_test
