// quantize.cpp — quantize_int8 (quantize.hpp): calibration, the QDQ rewrite and the per-layer report.
//
// Choices:
// - Quantized layers: Conv (1-D/2-D, either data layout), Gemm (alpha = beta = 1, no transA) and MatMul
//   with a constant 2-D B — the ops that carry the work; everything else stays f32 between a
//   DequantizeLinear and a QuantizeLinear (fusion_qdq.cpp turns what it can into integer ops).
// - Tensors quantized: each such layer's input and its output, taken after a Relu or Clip that alone
//   reads it (fused into the QLinear op, as ONNX Runtime's quantizer sees Conv+Relu as one).
// - Activations u8 with a zero point over [min(lo, 0), max(hi, 0)] (ONNX Runtime's default QDQ format;
//   the fast kernels widen either type to int16, so u8 costs nothing); weights int8 symmetric per output
//   channel, scale max|w| / 127; biases int32 with scale x_scale · w_scale, as quantize_static writes them.
// - Calibration statistics: min and max always; percentile and entropy clip both ends at a threshold T
//   found on a 2048-bin histogram of |x| (a second pass, once the largest |x| is known); a tensor
//   with fewer values than bins over the whole set keeps min and max.
// - TFLite's NHWC Convs become NCHW between Transposes (make_convs_nchw), and conv inputs and outputs
//   are equalized per channel (equalizable_plane, equalizable_output_plane): both exact in float.
// - The float model that calibration runs is the converted graph with every measured tensor made an
//   output (passes keep outputs by name and in their layout, so each is found and read as it is in the
//   float graph); the report runs the quantized graph the same way.
#include "quantize.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "convert.hpp"
#include "fusion.hpp"
#include "kes/error.hpp"
#include "kes/logging.hpp"
#include "kes/tensor_compare.hpp"
#include "kestrel/engine.h"
#include "passes.hpp"

namespace kes::convert {

namespace {

constexpr size_t kHistogramBins = 2048;  // TensorRT's entropy calibration uses 2048 bins

const ir::Tensor& tensor_at(const ir::Graph& g, int32_t t) {
    return g.tensors[static_cast<size_t>(t)];
}

bool is_f32_const(const ir::Graph& g, int32_t t) {
    return t >= 0 && tensor_at(g, t).is_const && tensor_at(g, t).dtype == KES_F32;
}

bool is_f32_activation(const ir::Graph& g, int32_t t) {
    return t >= 0 && !tensor_at(g, t).is_const && tensor_at(g, t).dtype == KES_F32 && tensor_at(g, t).has_shape;
}

// The axis of a layer's weight that holds its output channels (the per-channel quantization axis), or
// -1 when the layer is not one quantize_int8 quantizes.
int64_t weight_channel_axis(const ir::Graph& g, const ir::Node& n) {
    if (n.inputs.size() < 2 || n.outputs.size() != 1 || !is_f32_activation(g, n.inputs[0]) ||
        !is_f32_const(g, n.inputs[1]))
        return -1;
    const ir::Tensor& w = tensor_at(g, n.inputs[1]);
    const int32_t bias = n.inputs.size() > 2 ? n.inputs[2] : -1;
    if (n.op == "Conv") {
        if (n.inputs.size() > 3 || (w.shape.size() != 3 && w.shape.size() != 4)) return -1;
        if (bias >= 0 && (!is_f32_const(g, bias) || tensor_at(g, bias).shape != Shape{w.shape[0]})) return -1;
        return 0;  // OIHW and TFLite's OHWI both lead with the output channels
    }
    if (w.shape.size() != 2) return -1;
    if (n.op == "MatMul") return n.inputs.size() == 2 ? 1 : -1;
    if (n.op != "Gemm" || n.attrs.get_float("alpha", 1.0f) != 1.0f || n.attrs.get_float("beta", 1.0f) != 1.0f ||
        n.attrs.get_int("transA", 0) != 0 || n.inputs.size() > 3)
        return -1;
    const int64_t axis = n.attrs.get_int("transB", 0) != 0 ? 0 : 1;
    if (bias >= 0 && (!is_f32_const(g, bias) || tensor_at(g, bias).shape != Shape{w.shape[static_cast<size_t>(axis)]}))
        return -1;
    return axis;
}

// The tensor a layer's output is quantized at: after a Relu or constant-bound Clip that alone reads it.
int32_t quantized_output(const ir::Graph& g, const ir::Node& n) {
    const int32_t out = n.outputs[0];
    if (g.is_graph_output(out)) return out;
    const std::vector<int32_t> readers = g.consumers(out);
    if (readers.size() != 1) return out;
    const ir::Node& r = g.nodes[static_cast<size_t>(readers[0])];
    if (r.outputs.size() != 1 || r.inputs.empty() || r.inputs[0] != out) return out;
    if (r.op == "Relu") return r.outputs[0];
    if (r.op != "Clip") return out;
    for (size_t k = 1; k < r.inputs.size(); ++k)
        if (r.inputs[k] >= 0 && (!is_f32_const(g, r.inputs[k]) || tensor_at(g, r.inputs[k]).elements() != 1))
            return out;
    return r.outputs[0];
}

std::string unique_name(const ir::Graph& g, const std::string& base) {
    std::string name = base;
    for (int k = 1; g.find_tensor(name) >= 0; ++k) name = base + "_" + std::to_string(k);
    return name;
}

// ---- calibration inputs ----------------------------------------------------------------------------

struct Sample {
    std::string path;
    ir::Tensor value;
};

std::vector<Sample> read_calibration_set(const std::string& dir, const ir::Graph& g) {
    if (g.inputs.size() != 1)
        fail(KES_ERR_UNSUPPORTED,
             "--quantize: the model has %zu inputs; calibration (one .npy per sample) takes models with one input",
             g.inputs.size());
    const ir::Tensor& input = tensor_at(g, g.inputs[0]);
    if (dir.empty())
        fail(KES_ERR_INVALID_ARGUMENT, "--quantize int8 needs --calibration DIR (a folder of .npy inputs)");
    DIR* d = opendir(dir.c_str());
    if (!d)
        fail(errno == ENOENT ? KES_ERR_NOT_FOUND : KES_ERR_IO, "--calibration: cannot open folder '%s': %s",
             dir.c_str(), std::strerror(errno));
    std::vector<std::string> names;
    while (const dirent* e = readdir(d))
        if (e->d_name[0] != '.') names.emplace_back(e->d_name);  // hidden files and . / ..
    closedir(d);
    std::sort(names.begin(), names.end());  // a stable order: the same thresholds on every run
    std::vector<Sample> samples;
    for (const std::string& name : names) {
        const std::string path = dir + "/" + name;
        struct stat st {};
        if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0)
            fail(KES_ERR_INVALID_ARGUMENT,
                 "--calibration: '%s' is not a .npy file (calibration inputs are NumPy arrays of input '%s', %s %s)",
                 path.c_str(), input.name.c_str(), kes_dtype_name(input.dtype), shape_string(input.shape).c_str());
        Sample s{path, read_tensor_file(path)};
        if (s.value.dtype != input.dtype || s.value.shape != input.shape)
            fail(KES_ERR_INVALID_ARGUMENT, "--calibration: '%s' is %s %s, input '%s' is %s %s", path.c_str(),
                 kes_dtype_name(s.value.dtype), shape_string(s.value.shape).c_str(), input.name.c_str(),
                 kes_dtype_name(input.dtype), shape_string(input.shape).c_str());
        samples.push_back(std::move(s));
    }
    if (samples.empty()) fail(KES_ERR_INVALID_ARGUMENT, "--calibration: no .npy files in '%s'", dir.c_str());
    return samples;
}

// ---- running a converted graph ---------------------------------------------------------------------

void check_call(kes_status status, const char* what) {
    if (status != KES_OK) fail(status, "--quantize: %s: %s", what, kes_last_error());
}

// A graph written to a .kom and loaded into the engine, run one sample at a time; every output is kept
// (by name) until the next run.
class Executable {
public:
    explicit Executable(ir::Graph g) {
        g.aipp.clear();  // calibration inputs are the model's input tensors, AIPP already applied
        g.dynamic_batch.clear();
        g.dynamic_image_sizes.clear();
        g.image_inputs.clear();
        ir::infer_shapes(g);
        const ir::KomImage image = ir::write_kom(g, ir::WriteOptions{});
        kes_model* model = nullptr;
        check_call(kes_model_load_from_memory(image.bytes.data(), image.bytes.size(), &model), "loading the model");
        model_.reset(model);
        kes_model_context* ctx = nullptr;
        check_call(kes_model_context_create(model, nullptr, 0, &ctx), "creating a context");
        ctx_.reset(ctx);
        size_t count = 0;
        check_call(kes_model_output_count(model, &count), "counting outputs");
        outputs_.resize(count);
        buffers_.resize(count);
        for (size_t i = 0; i < count; ++i) {
            check_call(kes_model_context_output_desc(ctx, i, &outputs_[i]), "reading an output");
            size_t bytes = 0;
            check_call(kes_tensor_byte_size(&outputs_[i], &bytes), "sizing an output");
            buffers_[i].resize(std::max<size_t>(bytes, 1));
            outputs_[i].data = buffers_[i].data();
            outputs_[i].size = bytes;
            const char* name = nullptr;
            check_call(kes_model_output_name(model, i, &name), "naming an output");
            index_[name] = i;
        }
    }

    void run(const Sample& s) {
        kes_tensor in{};
        check_call(kes_model_context_input_desc(ctx_.get(), 0, &in), "reading the input");
        in.data = const_cast<uint8_t*>(s.value.data.data());  // read only
        in.size = s.value.data.size();
        try {
            check_call(kes_model_execute(ctx_.get(), &in, 1, outputs_.data(), outputs_.size()), "running");
        } catch (const Error& e) {
            throw Error(e.status(), format("%s (calibration input %s)", e.what(), s.path.c_str()));
        }
    }

    // Output `name` as f32 values (u8 dequantized with scale and zero point); empty if there is none.
    std::vector<float> values(const std::string& name, float scale = 1.0f, int32_t zero_point = 0) const {
        const auto it = index_.find(name);
        if (it == index_.end()) return {};
        const kes_tensor& t = outputs_[it->second];
        std::vector<float> v;
        if (t.dtype == KES_F32) {
            v.resize(t.size / sizeof(float));
            if (!v.empty()) std::memcpy(v.data(), t.data, v.size() * sizeof(float));
        } else if (t.dtype == KES_U8) {
            const uint8_t* q = static_cast<const uint8_t*>(t.data);
            v.resize(t.size);
            for (size_t i = 0; i < v.size(); ++i)
                v[i] = (static_cast<float>(q[i]) - static_cast<float>(zero_point)) * scale;
        }
        return v;
    }

private:
    struct Deleter {
        void operator()(kes_model* m) const { kes_model_unload(m); }
        void operator()(kes_model_context* c) const { kes_model_context_destroy(c); }
    };
    std::unique_ptr<kes_model, Deleter> model_;
    std::unique_ptr<kes_model_context, Deleter> ctx_;  // destroyed before the model (declared after)
    std::vector<kes_tensor> outputs_;
    std::vector<std::vector<uint8_t>> buffers_;
    std::map<std::string, size_t> index_;
};

// ---- statistics -----------------------------------------------------------------------------------

struct Range {
    float lo = 0, hi = 0;
};

struct Statistics {
    float min = std::numeric_limits<float>::infinity(), max = -std::numeric_limits<float>::infinity();
    std::vector<double> histogram;  // of |x|, kHistogramBins bins over [0, max |x|]

    // A depthwise conv's equalized input (equalize_depthwise_inputs): each channel's range, then the
    // divisor applied to each channel.
    std::vector<float> channel_min, channel_max, channel_scale;

    float abs_max() const { return std::max(std::fabs(min), std::fabs(max)); }
    // NCHW values of `channels` channels: each channel's range.
    void add_channel_ranges(const std::vector<float>& v, size_t channels, size_t plane) {
        channel_min.resize(channels, std::numeric_limits<float>::infinity());
        channel_max.resize(channels, -std::numeric_limits<float>::infinity());
        for (size_t i = 0; i < v.size(); ++i) {
            const size_t c = (i / plane) % channels;
            channel_min[c] = std::min(channel_min[c], v[i]), channel_max[c] = std::max(channel_max[c], v[i]);
        }
    }
    // Each channel is divided by its range over the largest (at least 1/1024 of it), so that all span
    // the same range: the tensor's range is then that of the divided values.
    void equalize_channels(double exponent) {
        float largest = 0;
        for (size_t c = 0; c < channel_min.size(); ++c)
            largest = std::max({largest, std::fabs(channel_min[c]), std::fabs(channel_max[c])});
        channel_scale.assign(channel_min.size(), 1.0f);
        if (largest == 0) return;
        min = 0, max = 0;
        for (size_t c = 0; c < channel_min.size(); ++c) {
            const float range = std::max(std::fabs(channel_min[c]), std::fabs(channel_max[c]));
            channel_scale[c] = std::max(static_cast<float>(std::pow(range / largest, exponent)), 1.0f / 1024);
            min = std::min(min, channel_min[c] / channel_scale[c]);
            max = std::max(max, channel_max[c] / channel_scale[c]);
        }
    }
    void divide_channels(std::vector<float>& v, size_t plane) const {
        for (size_t i = 0; i < v.size(); ++i) v[i] /= channel_scale[(i / plane) % channel_scale.size()];
    }
    static void check_finite(const std::vector<float>& v, const std::string& tensor, const std::string& sample) {
        for (float x : v)
            if (!std::isfinite(x))
                fail(KES_ERR_INVALID_ARGUMENT, "--calibration: %s: the float model computes %g in tensor '%s'",
                     sample.c_str(), static_cast<double>(x), tensor.c_str());
    }
    void add_range(const std::vector<float>& v) {
        for (float x : v) min = std::min(min, x), max = std::max(max, x);
    }
    void add_histogram(const std::vector<float>& v) {
        histogram.resize(kHistogramBins);
        const float top = abs_max();
        if (top == 0) return;
        const double per_unit = kHistogramBins / static_cast<double>(top);
        // Exact zeros (a Relu's output is mostly zeros) are left out: the zero point represents them at
        // any threshold, and in bin 0 their spike, spread over bin 0's group by the entropy search, made
        // it choose thresholds far below the values that matter.
        for (float x : v)
            if (x != 0) histogram[std::min(kHistogramBins - 1, static_cast<size_t>(std::fabs(x) * per_unit))] += 1;
    }
};

double percentile_threshold(const std::vector<double>& histogram, double bin_width, double percentile) {
    double total = 0;
    for (double c : histogram) total += c;
    const double wanted = total * percentile / 100.0;
    double seen = 0;
    for (size_t i = 0; i < histogram.size(); ++i) {
        seen += histogram[i];
        if (seen >= wanted) return static_cast<double>(i + 1) * bin_width;
    }
    return static_cast<double>(histogram.size()) * bin_width;
}

Range calibrated_range(const Statistics& s, const QuantizeOptions& o) {
    Range r{std::min(s.min, 0.0f), std::max(s.max, 0.0f)};
    if (o.method == CalibrationMethod::MinMax || s.abs_max() == 0) return r;
    // Fewer values than bins (a small head, a few samples) describe no distribution to clip: min/max.
    double values = 0;
    for (double c : s.histogram) values += c;
    if (values < static_cast<double>(kHistogramBins)) return r;
    const double bin_width = s.abs_max() / static_cast<double>(kHistogramBins);
    // A one-sided tensor (after a Relu) spends all 255 steps of u8 on [0, T]; a two-sided one about
    // half on each side: the levels the entropy search quantizes to.
    const int levels = s.min >= 0 || s.max <= 0 ? 255 : 128;
    const double t = o.method == CalibrationMethod::Percentile
                         ? percentile_threshold(s.histogram, bin_width, o.percentile)
                         : entropy_threshold(s.histogram, bin_width, levels);
    r.lo = std::max(r.lo, static_cast<float>(-t));
    r.hi = std::min(r.hi, static_cast<float>(t));
    return r;
}

// ---- the QDQ rewrite ------------------------------------------------------------------------------

struct Activation {
    float scale = 1;
    uint8_t zero_point = 0;
};

Activation u8_parameters(Range r) {
    Activation a;
    const double span = static_cast<double>(r.hi) - static_cast<double>(r.lo);
    if (!(span > 0)) return a;  // a constant 0: any scale represents it
    a.scale = static_cast<float>(span / 255.0);
    const double zp = std::nearbyint(-static_cast<double>(r.lo) / static_cast<double>(a.scale));
    a.zero_point = static_cast<uint8_t>(std::clamp(zp, 0.0, 255.0));
    return a;
}

struct Rewriter {
    ir::Graph& g;

    int32_t scalar(const std::string& base, kes_dtype dtype, const void* value) {
        return g.add_constant(unique_name(g, base), dtype, Shape{}, value);
    }

    // t (f32) becomes DequantizeLinear(QuantizeLinear(t)): its readers see the quantized values. A node's
    // output keeps its name on the DequantizeLinear (the producer writes a new tensor), so readers, graph
    // outputs and the report find it; a graph input's readers move to the DequantizeLinear's output.
    // Returns the u8 tensor's name.
    std::string insert_qdq(int32_t t, Activation a) {
        const std::string name = tensor_at(g, t).name;
        const Shape shape = tensor_at(g, t).shape;
        const int32_t scale = scalar(name + "_scale", KES_F32, &a.scale);
        const int32_t zero_point = scalar(name + "_zero_point", KES_U8, &a.zero_point);
        const std::string q_name = unique_name(g, name + "_quantized");
        const int32_t q = g.add_activation(q_name, KES_U8, shape, true);
        const int32_t producer = g.producer(t);
        int32_t from = t, to = -1;
        if (producer >= 0) {
            from = g.add_activation(unique_name(g, name + "_float"), KES_F32, shape, true);
            for (int32_t& o : g.nodes[static_cast<size_t>(producer)].outputs)
                if (o == t) o = from;
            to = t;
        } else {
            const std::vector<int32_t> readers = g.consumers(t);
            to = g.add_activation(unique_name(g, name + "_dequantized"), KES_F32, shape, true);
            for (int32_t r : readers)
                for (int32_t& in : g.nodes[static_cast<size_t>(r)].inputs)
                    if (in == t) in = to;
        }
        g.add_node("QuantizeLinear", {from, scale, zero_point}, {q}, name + "_quantize");
        g.add_node("DequantizeLinear", {q, scale, zero_point}, {to}, name + "_dequantize");
        return q_name;
    }

    // The depthwise layer reads its input divided by `scale` per channel (a Mul), with its weights of
    // channel c multiplied by scale[c]. Returns the divided tensor.
    int32_t equalize(size_t layer, const std::vector<float>& scale) {
        const int32_t x = g.nodes[layer].inputs[0], w = g.nodes[layer].inputs[1];
        const int64_t channels = static_cast<int64_t>(scale.size());
        std::vector<float> weights(tensor_at(g, w).as<float>(),
                                   tensor_at(g, w).as<float>() + tensor_at(g, w).elements());
        // OIHW: input channel c is (i / (H·W)) % C of a dense conv, output channel i / (H·W) of a depthwise.
        const Shape& ws = tensor_at(g, w).shape;
        const size_t taps = static_cast<size_t>(ws[2] * ws[3]);
        for (size_t i = 0; i < weights.size(); ++i) weights[i] *= scale[(i / taps) % scale.size()];
        std::vector<float> inverse(scale.size());
        for (size_t c = 0; c < scale.size(); ++c) inverse[c] = 1.0f / scale[c];
        const std::string name = tensor_at(g, x).name;
        const Shape x_shape = tensor_at(g, x).shape, w_shape = tensor_at(g, w).shape;
        const int32_t scaled_w =
            g.add_constant(unique_name(g, tensor_at(g, w).name + "_equalized"), KES_F32, w_shape, weights.data());
        const int32_t divisor =
            g.add_constant(unique_name(g, name + "_equalization"), KES_F32, Shape{1, channels, 1, 1}, inverse.data());
        const int32_t y = g.add_activation(unique_name(g, name + "_equalized"), KES_F32, x_shape, true);
        g.add_node("Mul", {x, divisor}, {y}, g.nodes[layer].name + "_equalize");
        g.nodes[layer].inputs[0] = y;
        g.nodes[layer].inputs[1] = scaled_w;
        return y;
    }

    // The conv writes its output divided by `scale` per channel (weights and bias of channel c divided
    // by scale[c]); a Mul restores the original tensor. Returns the divided tensor.
    int32_t equalize_output(size_t layer, const std::vector<float>& scale) {
        const int32_t y = g.nodes[layer].outputs[0], w = g.nodes[layer].inputs[1];
        const int32_t b = g.nodes[layer].inputs.size() > 2 ? g.nodes[layer].inputs[2] : -1;
        const int64_t channels = static_cast<int64_t>(scale.size());
        const std::string name = tensor_at(g, y).name;
        std::vector<float> weights(tensor_at(g, w).as<float>(),
                                   tensor_at(g, w).as<float>() + tensor_at(g, w).elements());
        const size_t per_channel = weights.size() / scale.size();
        for (size_t i = 0; i < weights.size(); ++i) weights[i] /= scale[i / per_channel];
        const int32_t scaled_w = g.add_constant(unique_name(g, tensor_at(g, w).name + "_equalized"), KES_F32,
                                                tensor_at(g, w).shape, weights.data());
        g.nodes[layer].inputs[1] = scaled_w;
        if (b >= 0) {
            std::vector<float> bias(tensor_at(g, b).as<float>(), tensor_at(g, b).as<float>() + scale.size());
            for (size_t c = 0; c < scale.size(); ++c) bias[c] /= scale[c];
            g.nodes[layer].inputs[2] = g.add_constant(unique_name(g, tensor_at(g, b).name + "_equalized"), KES_F32,
                                                      Shape{channels}, bias.data());
        }
        const Shape shape = tensor_at(g, y).shape;
        const int32_t divided = g.add_activation(unique_name(g, name + "_equalized"), KES_F32, shape, true);
        const int32_t factor =
            g.add_constant(unique_name(g, name + "_equalization"), KES_F32, Shape{1, channels, 1, 1}, scale.data());
        g.nodes[layer].outputs[0] = divided;
        g.add_node("Mul", {divided, factor}, {y}, g.nodes[layer].name + "_unequalize");
        return divided;
    }

    // The layer's weight as DequantizeLinear(int8, per-channel scale); its bias as int32 with scale
    // x_scale · w_scale. Returns nothing: the layer reads the new tensors.
    void quantize_weights(size_t layer, int64_t axis, float x_scale) {
        const int32_t w = g.nodes[layer].inputs[1];
        const Shape shape = tensor_at(g, w).shape;
        const std::string name = tensor_at(g, w).name;
        const int64_t channels = shape[static_cast<size_t>(axis)];
        KES_LOGD("convert", "--quantize: %s: weight '%s' %s, %lld channels", g.nodes[layer].name.c_str(), name.c_str(),
                 shape_string(shape).c_str(), static_cast<long long>(channels));
        int64_t inner = 1;
        for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
        const int64_t count = tensor_at(g, w).elements();
        const float* values = tensor_at(g, w).as<float>();
        std::vector<float> scales(static_cast<size_t>(channels), 0.0f);
        for (int64_t i = 0; i < count; ++i) {
            float& s = scales[static_cast<size_t>((i / inner) % channels)];
            s = std::max(s, std::fabs(values[i]));
        }
        for (float& s : scales) s = s > 0 ? s / 127.0f : 1.0f;  // an all-zero channel: any scale
        std::vector<int8_t> q(static_cast<size_t>(count));
        for (int64_t i = 0; i < count; ++i) {
            const float v = std::nearbyint(values[i] / scales[static_cast<size_t>((i / inner) % channels)]);
            q[static_cast<size_t>(i)] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
        }
        const std::vector<int8_t> zeros(static_cast<size_t>(channels), 0);
        const int32_t wq = g.add_constant(unique_name(g, name + "_int8"), KES_I8, shape, q.data());
        const int32_t ws = g.add_constant(unique_name(g, name + "_scale"), KES_F32, Shape{channels}, scales.data());
        const int32_t wz = g.add_constant(unique_name(g, name + "_zero_point"), KES_I8, Shape{channels}, zeros.data());
        const int32_t wd = g.add_activation(unique_name(g, name + "_dequantized"), KES_F32, shape, true);
        g.add_node("DequantizeLinear", {wq, ws, wz}, {wd}, name + "_dequantize").attrs.set_int("axis", axis);
        g.nodes[layer].inputs[1] = wd;

        const int32_t b = g.nodes[layer].inputs.size() > 2 ? g.nodes[layer].inputs[2] : -1;
        if (b < 0) return;
        const std::string bias_name = tensor_at(g, b).name;
        const float* bias = tensor_at(g, b).as<float>();
        std::vector<float> bias_scales(static_cast<size_t>(channels));
        std::vector<int32_t> bq(static_cast<size_t>(channels));
        for (size_t c = 0; c < bq.size(); ++c) {
            bias_scales[c] = x_scale * scales[c];  // exactly the product fusion_qdq.cpp checks
            const double v = std::nearbyint(static_cast<double>(bias[c]) / static_cast<double>(bias_scales[c]));
            bq[c] = static_cast<int32_t>(std::clamp(v, -2147483647.0, 2147483647.0));
        }
        const int32_t bi = g.add_constant(unique_name(g, bias_name + "_int32"), KES_I32, Shape{channels}, bq.data());
        const int32_t bs =
            g.add_constant(unique_name(g, bias_name + "_scale"), KES_F32, Shape{channels}, bias_scales.data());
        const int32_t bd = g.add_activation(unique_name(g, bias_name + "_dequantized"), KES_F32, Shape{channels}, true);
        g.add_node("DequantizeLinear", {bi, bs}, {bd}, bias_name + "_dequantize").attrs.set_int("axis", 0);
        g.nodes[layer].inputs[2] = bd;
    }
};

// The 2-D NHWC Convs (TFLite's) of the layers to quantize become NCHW between two Transposes: the
// fast int8 convolutions are NCHW (kernels/common/qconv_nchw.cpp); an NHWC QLinearConv runs the
// reference kernel, ~20x slower (MobileFaceNet: 5 s per pair of faces). The Transposes run on the
// quantized bytes (fusion_qdq.cpp), and the layout pass cancels pairs of them across the float ops.
void make_convs_nchw(ir::Graph& g, const std::set<std::string>& kept) {
    const size_t count = g.nodes.size();
    for (size_t i = 0; i < count; ++i) {
        ir::Node& n = g.nodes[i];
        if (n.op != "Conv" || n.attrs.get_string("data_layout", "NCHW") != "NHWC" || kept.count(n.name) ||
            weight_channel_axis(g, n) < 0 || tensor_at(g, n.inputs[1]).shape.size() != 4 ||
            tensor_at(g, n.inputs[0]).shape.size() != 4 || tensor_at(g, n.outputs[0]).shape.size() != 4)
            continue;
        const ir::Tensor& w = tensor_at(g, n.inputs[1]);  // OHWI
        const int64_t o = w.shape[0], kh = w.shape[1], kw = w.shape[2], ci = w.shape[3];
        std::vector<float> oihw(static_cast<size_t>(w.elements()));
        const float* src = w.as<float>();
        for (int64_t a = 0; a < o; ++a)
            for (int64_t y = 0; y < kh; ++y)
                for (int64_t x = 0; x < kw; ++x)
                    for (int64_t c = 0; c < ci; ++c)
                        oihw[static_cast<size_t>(((a * ci + c) * kh + y) * kw + x)] =
                            src[static_cast<size_t>(((a * kh + y) * kw + x) * ci + c)];
        const std::string name = n.name;
        const int32_t weight =
            g.add_constant(unique_name(g, w.name + "_oihw"), KES_F32, Shape{o, ci, kh, kw}, oihw.data());
        const Shape in_shape = tensor_at(g, n.inputs[0]).shape, out_shape = tensor_at(g, n.outputs[0]).shape;
        const std::string in_name = tensor_at(g, n.inputs[0]).name, out_name = tensor_at(g, n.outputs[0]).name;
        const int32_t x_nchw = g.add_activation(unique_name(g, in_name + "_nchw"), KES_F32,
                                                Shape{in_shape[0], in_shape[3], in_shape[1], in_shape[2]}, true);
        const int32_t y_nchw = g.add_activation(unique_name(g, out_name + "_nchw"), KES_F32,
                                                Shape{out_shape[0], out_shape[3], out_shape[1], out_shape[2]}, true);
        const int32_t x = g.nodes[i].inputs[0], y = g.nodes[i].outputs[0];
        g.add_node("Transpose", {x}, {x_nchw}, name + "_to_nchw").attrs.set_ints("perm", {0, 3, 1, 2});
        g.add_node("Transpose", {y_nchw}, {y}, name + "_to_nhwc").attrs.set_ints("perm", {0, 2, 3, 1});
        ir::Node& conv = g.nodes[i];  // add_node may have moved the nodes
        conv.attrs.erase("data_layout");
        conv.inputs[0] = x_nchw;
        conv.inputs[1] = weight;
        conv.outputs[0] = y_nchw;
    }
    if (g.nodes.size() != count) {
        g.toposort();
        ir::infer_shapes(g);
    }
}

struct Layer {
    size_t node = 0;
    int64_t axis = 0;
    std::string name, op;
    int32_t input = -1, output = -1;    // the tensors quantized around it
    size_t equalized_plane = 0;         // > 0: a conv whose input channels are equalized (H·W)
    size_t equalized_output_plane = 0;  // > 0: a conv whose output channels are equalized (H·W)
};

// An NCHW conv whose output (no activation fused) is read by no quantized layer and is no graph output
// (a PReLU reads it in float): its output channels are divided by their ranges before quantizing (the
// conv's weights and bias of channel c divided by s_c, whose int8 weights and int32 bias have a scale
// per channel anyway) and multiplied back after the DequantizeLinear (a float Mul): each channel is
// quantized at its own resolution, as the inputs above.
size_t equalizable_output_plane(const ir::Graph& g, const Layer& l, const std::vector<Layer>& layers) {
    const ir::Node& n = g.nodes[l.node];
    const ir::Tensor& y = tensor_at(g, l.output);
    if (n.op != "Conv" || n.attrs.get_string("data_layout", "NCHW") != "NCHW" || y.shape.size() != 4 ||
        n.outputs[0] != l.output || g.is_graph_output(l.output))
        return 0;
    for (const Layer& other : layers)
        if (other.input == l.output) return 0;
    return static_cast<size_t>(y.shape[2] * y.shape[3]);
}

// NCHW convs, depthwise or with one group, whose input only they read and is no quantized layer's
// output. Their input's channels can differ in range by 100x (after a PReLU with large slopes:
// MobileFaceNet), which one per-tensor scale represents badly. Dividing input channel c by s_c before
// quantizing and multiplying the conv's weights that read it by s_c is exact. A depthwise conv's
// output channel c reads input channel c only, and its int8 weights have a scale per channel, so
// s_c = range_c / largest costs its weights nothing: every channel is quantized at its own resolution.
// In a dense conv every output channel's weights read every input channel, so the imbalance moves into
// the weights: s_c = sqrt(range_c / largest) splits it between the two (SmoothQuant's migration with
// alpha 0.5). The division is a float Mul before the QuantizeLinear.
size_t equalizable_plane(const ir::Graph& g, const Layer& l, const std::vector<Layer>& layers) {
    const ir::Node& n = g.nodes[l.node];
    const ir::Tensor& x = tensor_at(g, l.input);
    const ir::Tensor& w = tensor_at(g, n.inputs[1]);
    const int64_t group = n.attrs.get_int("group", 1);
    const bool depthwise = w.shape.size() == 4 && w.shape[1] == 1 && w.shape[0] == x.shape[1] && group == x.shape[1];
    if (n.op != "Conv" || n.attrs.get_string("data_layout", "NCHW") != "NCHW" || x.shape.size() != 4 ||
        w.shape.size() != 4 || (!depthwise && group != 1))
        return 0;
    if (g.producer(l.input) < 0 || g.is_graph_output(l.input) || g.consumers(l.input).size() != 1) return 0;
    for (const Layer& other : layers)
        if (other.output == l.input) return 0;
    return static_cast<size_t>(x.shape[2] * x.shape[3]);
}

}  // namespace

CalibrationMethod parse_calibration_method(const std::string& text) {
    if (text == "minmax") return CalibrationMethod::MinMax;
    if (text == "percentile") return CalibrationMethod::Percentile;
    if (text == "entropy") return CalibrationMethod::Entropy;
    fail(KES_ERR_INVALID_ARGUMENT, "--calibration-method: '%s' is not minmax, percentile or entropy", text.c_str());
}

std::vector<std::string> parse_keep_float(const std::string& text) {
    std::vector<std::string> names;
    size_t start = 0;
    for (;;) {
        const size_t end = text.find(',', start);
        const std::string name = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (name.empty()) fail(KES_ERR_INVALID_ARGUMENT, "--keep-float: '%s' has an empty layer name", text.c_str());
        names.push_back(name);
        if (end == std::string::npos) return names;
        start = end + 1;
    }
}

double entropy_threshold(const std::vector<double>& histogram, double bin_width, int levels) {
    const size_t bins = histogram.size();
    const size_t first = static_cast<size_t>(std::max(levels, 1));
    if (bins <= first) return static_cast<double>(bins) * bin_width;
    std::vector<double> tail(bins + 1, 0.0);  // tail[i]: counts at bins i.. (clipped into bin i-1)
    for (size_t i = bins; i-- > 0;) tail[i] = tail[i + 1] + histogram[i];
    double best = std::numeric_limits<double>::infinity();
    size_t best_bins = bins;
    std::vector<double> q;
    for (size_t i = first; i <= bins; ++i) {
        // p: the first i bins with everything beyond clipped into the last; q: the same i bins (without
        // the clipped mass) merged into `levels` groups, each group's count spread evenly over the bins
        // where p is non-zero (MXNet's and TensorRT's construction: the clipped mass is what q misses).
        const auto p_count = [&](size_t k) { return histogram[k] + (k + 1 == i ? tail[i] : 0.0); };
        q.assign(i, 0.0);
        for (size_t j = 0; j < first; ++j) {
            const size_t start = j * i / first, stop = (j + 1) * i / first;
            double total = 0;
            size_t nonzero = 0;
            for (size_t k = start; k < stop; ++k) total += histogram[k], nonzero += p_count(k) != 0;
            if (nonzero == 0) continue;
            for (size_t k = start; k < stop; ++k)
                if (p_count(k) != 0) q[k] = total / static_cast<double>(nonzero);
        }
        const double p_sum = tail[0];
        double q_sum = 0;
        for (double v : q) q_sum += v;
        if (p_sum == 0 || q_sum == 0) continue;
        double kl = 0;
        for (size_t k = 0; k < i; ++k) {
            const double p = p_count(k) / p_sum;
            if (p == 0) continue;
            const double qk = q[k] / q_sum;
            kl += qk > 0 ? p * std::log(p / qk) : p * std::log(p / 1e-12);  // an unrepresented bin: a large cost
        }
        if (kl < best) best = kl, best_bins = i;
    }
    return static_cast<double>(best_bins) * bin_width;
}

std::vector<LayerReport> quantize_int8(ir::Graph& g, const QuantizeOptions& options,
                                       const std::function<void(ir::Graph&)>& finish) {
    if (options.method == CalibrationMethod::Percentile && !(options.percentile > 0 && options.percentile <= 100))
        fail(KES_ERR_INVALID_ARGUMENT, "--calibration-percentile: %g is not in (0, 100]", options.percentile);
    const std::vector<Sample> samples = read_calibration_set(options.calibration_dir, g);

    // The layers and the tensors around them.
    std::vector<Layer> layers;
    const std::set<std::string> kept(options.keep_float.begin(), options.keep_float.end());
    make_convs_nchw(g, kept);
    std::set<std::string> known;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const ir::Node& n = g.nodes[i];
        known.insert(n.name);
        const int64_t axis = weight_channel_axis(g, n);
        if (axis < 0 || kept.count(n.name)) continue;
        layers.push_back(Layer{i, axis, n.name, n.op, n.inputs[0], quantized_output(g, n)});
    }
    for (const std::string& name : options.keep_float)
        if (!known.count(name))
            fail(KES_ERR_INVALID_ARGUMENT,
                 "--keep-float: the model has no layer '%s' (kes-convert --quantize lists them)", name.c_str());
    if (layers.empty())
        fail(KES_ERR_UNSUPPORTED, "--quantize: no Conv, Gemm or MatMul with constant weights to quantize%s",
             options.keep_float.empty() ? "" : " (besides those of --keep-float)");
    for (Layer& l : layers) {
        l.equalized_plane = equalizable_plane(g, l, layers);
        l.equalized_output_plane = equalizable_output_plane(g, l, layers);
    }
    std::map<int32_t, size_t> equalized;  // tensor → its plane
    for (const Layer& l : layers) {
        if (l.equalized_plane) equalized[l.input] = l.equalized_plane;
        if (l.equalized_output_plane) equalized[l.output] = l.equalized_output_plane;
    }
    std::vector<int32_t> measured;  // unique, in graph order
    for (const Layer& l : layers)
        for (int32_t t : {l.input, l.output})
            if (std::find(measured.begin(), measured.end(), t) == measured.end()) measured.push_back(t);

    // Calibration: the float model with every measured tensor an output.
    std::vector<std::string> measured_names;
    for (int32_t t : measured) measured_names.push_back(tensor_at(g, t).name);
    std::vector<std::string> output_names;  // each layer's quantized output, by name (indices change below)
    for (const Layer& l : layers) output_names.push_back(tensor_at(g, l.output).name);
    std::map<int32_t, Statistics> stats;
    ir::Graph calibration = g;
    for (int32_t t : measured)
        if (!calibration.is_graph_output(t) && calibration.producer(t) >= 0) calibration.outputs.push_back(t);
    finish(calibration);
    Executable float_model(std::move(calibration));
    const bool histogram = options.method != CalibrationMethod::MinMax;
    for (int pass = 0; pass < (histogram ? 2 : 1); ++pass) {
        for (const Sample& s : samples) {
            float_model.run(s);
            for (int32_t t : measured) {
                std::vector<float> v;
                if (g.producer(t) < 0) {  // the graph input: the sample itself
                    v.resize(s.value.data.size() / sizeof(float));
                    if (!v.empty()) std::memcpy(v.data(), s.value.data.data(), v.size() * sizeof(float));
                } else {
                    v = float_model.values(tensor_at(g, t).name);
                }
                if (v.empty())
                    fail(KES_ERR_INTERNAL, "--quantize: tensor '%s' is not an output of the calibration model",
                         tensor_at(g, t).name.c_str());
                if (pass == 0) Statistics::check_finite(v, tensor_at(g, t).name, s.path);
                const auto eq = equalized.find(t);
                if (pass == 0 && eq != equalized.end()) {
                    stats[t].add_channel_ranges(v, static_cast<size_t>(tensor_at(g, t).shape[1]), eq->second);
                } else if (pass == 0) {
                    stats[t].add_range(v);
                } else {
                    if (eq != equalized.end()) stats[t].divide_channels(v, eq->second);
                    stats[t].add_histogram(v);
                }
            }
        }
        if (pass == 0)
            for (const Layer& l : layers) {
                if (l.equalized_plane)
                    stats[l.input].equalize_channels(tensor_at(g, g.nodes[l.node].inputs[1]).shape[1] == 1 ? 1.0 : 0.5);
                if (l.equalized_output_plane) stats[l.output].equalize_channels(1.0);
            }
    }

    // The rewrite, then the QDQ fusion and the folding of the weights no group took.
    std::map<std::string, Activation> params;
    for (size_t k = 0; k < measured.size(); ++k) {
        const Statistics& st = stats[measured[k]];
        const Range r = calibrated_range(st, options);
        params[measured_names[k]] = u8_parameters(r);
        KES_LOGD("convert", "--quantize: '%s' seen in [%g, %g], quantized over [%g, %g]", measured_names[k].c_str(),
                 static_cast<double>(st.min), static_cast<double>(st.max), static_cast<double>(r.lo),
                 static_cast<double>(r.hi));
    }
    Rewriter rw{g};
    for (Layer& l : layers) {
        if (!l.equalized_plane) continue;
        const std::string x_name = tensor_at(g, l.input).name;
        const int32_t eq = rw.equalize(l.node, stats[l.input].channel_scale);
        const std::string eq_name = tensor_at(g, eq).name;
        params[eq_name] = params[x_name];
        for (size_t k = 0; k < measured.size(); ++k)
            if (measured[k] == l.input) measured[k] = eq, measured_names[k] = eq_name;
        l.input = eq;
    }
    std::map<std::string, std::string> report_tensor;  // a layer's float output → what the report reads
    for (Layer& l : layers) {
        if (!l.equalized_output_plane) continue;
        const std::string y_name = tensor_at(g, l.output).name;
        const int32_t eq = rw.equalize_output(l.node, stats[l.output].channel_scale);
        const std::string eq_name = tensor_at(g, eq).name;
        params[eq_name] = params[y_name];
        for (size_t k = 0; k < measured.size(); ++k)
            if (measured[k] == l.output) measured[k] = eq, measured_names[k] = eq_name;
        report_tensor[y_name] = y_name;  // the Mul's f32 output: the channels multiplied back
        l.output = eq;
    }
    for (const Layer& l : layers) rw.quantize_weights(l.node, l.axis, params[tensor_at(g, l.input).name].scale);
    std::map<std::string, std::string> quantized_name;  // float tensor → its u8 tensor
    for (size_t k = 0; k < measured.size(); ++k)
        quantized_name[measured_names[k]] = rw.insert_qdq(measured[k], params[measured_names[k]]);
    g.toposort();
    ir::infer_shapes(g);
    ir::fuse_qdq(g);
    ir::fold_constants(g);

    KES_LOGI("convert", "--quantize: %zu layers quantized to int8 on %zu calibration inputs", layers.size(),
             samples.size());
    if (!options.report) return {};

    // The report: the quantized graph with each layer's u8 output an output, against the float model.
    ir::Graph quantized = g;
    for (const std::string& out : output_names) {
        const int32_t t = quantized.find_tensor(report_tensor.count(out) ? out : quantized_name[out]);
        if (t >= 0 && !quantized.is_graph_output(t) && quantized.producer(t) >= 0) quantized.outputs.push_back(t);
    }
    finish(quantized);
    Executable quantized_model(std::move(quantized));
    std::vector<TensorComparison> comparisons(layers.size());
    for (const Sample& s : samples) {
        float_model.run(s);
        quantized_model.run(s);
        for (size_t k = 0; k < layers.size(); ++k) {
            const std::vector<float> f = float_model.values(output_names[k]);
            const auto direct = report_tensor.find(output_names[k]);
            const Activation& a = params[output_names[k]];  // (tensor indices changed with the fusion)
            const std::vector<float> q =
                direct != report_tensor.end()
                    ? quantized_model.values(direct->second)
                    : quantized_model.values(quantized_name[output_names[k]], a.scale, a.zero_point);
            if (f.size() != q.size()) continue;  // not measured: left out of the report
            for (size_t i = 0; i < f.size(); ++i) comparisons[k].add(q[i], f[i], 0, 0);
        }
    }
    std::vector<LayerReport> report;
    for (size_t k = 0; k < layers.size(); ++k) {
        if (comparisons[k].elements == 0) continue;
        report.push_back(LayerReport{layers[k].name, layers[k].op, output_names[k], comparisons[k].cosine(),
                                     comparisons[k].max_abs});
    }
    return report;
}

}  // namespace kes::convert
