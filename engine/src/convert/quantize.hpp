// quantize.hpp — post-training int8 quantization (kes-convert --quantize int8, kestrel/convert.h):
// calibration runs the float model on the user's inputs and measures the activations around each
// quantizable layer; the graph is then rewritten into the QDQ form ONNX Runtime's quantize_static
// writes (per-channel symmetric int8 weights, per-tensor asymmetric u8 activations, int32 biases), so
// the converter's QDQ fusion (fusion_qdq.cpp) makes the QLinear* ops, as for a model quantized
// elsewhere. One path for quantized models, whoever quantized them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir.hpp"

namespace kes::convert {

enum class CalibrationMethod : uint8_t { MinMax, Percentile, Entropy };

struct QuantizeOptions {
    bool int8 = false;            // --quantize int8
    std::string calibration_dir;  // --calibration DIR: .npy inputs, one per sample
    CalibrationMethod method = CalibrationMethod::MinMax;
    double percentile = 99.99;            // --calibration-percentile, in (0, 100]
    std::vector<std::string> keep_float;  // --keep-float: node names left in f32
    bool report = true;                   // run the quantized model on the calibration set for the per-layer report
};

// One quantized layer of the report: its output compared with the float model's, over the whole
// calibration set (kes/tensor_compare.hpp, the comparison kes-compare prints).
struct LayerReport {
    std::string layer, op, tensor;
    double cosine = 0, max_abs = 0;
};

// Option parsers (KES_ERR_INVALID_ARGUMENT naming the bad value).
CalibrationMethod parse_calibration_method(const std::string& text);  // minmax | percentile | entropy
std::vector<std::string> parse_keep_float(const std::string& text);   // "a,b,c"

// Quantizes g (float, NCHW, BatchNorm folded: build_graph calls it before the layout pass) in place.
// `finish` runs the converter's remaining passes on a copy, for the float and quantized models that
// calibration and the report execute. Returns the report, one row per quantized layer in graph order
// (empty without options.report: that run costs about twice the calibration's).
// Errors: KES_ERR_INVALID_ARGUMENT for an empty or unreadable calibration directory, a file that is not
// a .npy array of the input's dtype and shape, an unknown --keep-float layer; KES_ERR_UNSUPPORTED for a
// model with several inputs or nothing quantizable.
std::vector<LayerReport> quantize_int8(ir::Graph& g, const QuantizeOptions& options,
                                       const std::function<void(ir::Graph&)>& finish);

// The clipping threshold of a histogram of |x| (bins of bin_width from 0) that minimises the KL
// divergence between the clipped distribution and its quantization to `levels` levels (TensorRT's
// entropy calibration). Exposed for the tests.
double entropy_threshold(const std::vector<double>& histogram, double bin_width, int levels);

}  // namespace kes::convert
