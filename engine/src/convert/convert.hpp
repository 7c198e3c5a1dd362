// convert.hpp — the conversion pipeline behind kestrel/convert.h and kes-convert, in C++ (the tests and
// the conformance runner use it directly). Order and choices: see kestrel/convert.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ir.hpp"
#include "kom_writer.hpp"
#include "passes.hpp"
#include "quantize.hpp"

namespace kes::convert {

enum class Format : uint8_t { Auto, Onnx, Tflite };

// The largest activation tensor, and activation arena, a conversion accepts by default: 4 GiB, far
// above any edge model (BlazeFace's arena is under 2 MiB) and below what an input shape typed with a
// digit too many asks for (1x100000x100000x3 planned a 553 GB arena).
constexpr uint64_t kDefaultMaxTensorBytes = uint64_t{4} << 30;

struct Options {
    Format format = Format::Auto;
    std::vector<std::pair<std::string, Shape>> input_shapes;    // --input-shape
    std::vector<int64_t> dynamic_batch;                         // --dynamic-batch, ascending
    std::vector<ir::ImageSize> dynamic_image_sizes;             // --dynamic-image-size, ascending by area
    std::string input_format;                                   // --input-format NCHW|NHWC|ND, "" = keep
    std::string aipp_config;                                    // --insert-op-conf file contents
    bool f16_weights = false;                                   // --weight-type f16
    std::string board = "host";                                 // --board
    std::vector<std::pair<std::string, ir::Tensor>> frozen;     // --freeze-input (name, value)
    std::function<void(const char*, size_t, size_t)> progress;  // stage, done, total
    uint64_t max_tensor_bytes = kDefaultMaxTensorBytes;         // --max-tensor-bytes: per tensor and arena
    QuantizeOptions quantize;                                   // --quantize int8 and its calibration
};

struct Result {
    ir::KomImage image;
    uint64_t ops = 0, parameters = 0;
    ir::PassStats stats;
    std::vector<LayerReport> quantization;  // --quantize: each quantized layer against the float model
};

// Option parsers (KES_ERR_INVALID_ARGUMENT naming the bad part).
std::vector<std::pair<std::string, Shape>> parse_input_shapes(const std::string& text);  // "a:1,3;b:2"
std::vector<int64_t> parse_batch_gears(const std::string& text);                         // "1,2,4,8"
std::vector<ir::ImageSize> parse_image_sizes(const std::string& text);  // "224,224;416,416" (height,width)
Format detect_format(const uint8_t* data, size_t size);
// "name=path;name2=path2": reads each file (read_tensor_file).
std::vector<std::pair<std::string, ir::Tensor>> parse_freeze_inputs(const std::string& text);

// A tensor from a file: an ONNX TensorProto (.pb) or a NumPy array (.npy, little-endian, C order;
// dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1). KES_ERR_CORRUPT_DATA / KES_ERR_UNSUPPORTED otherwise.
ir::Tensor read_tensor_file(const std::string& path);
ir::Tensor parse_npy(const uint8_t* data, size_t size);
ir::Tensor import_onnx_tensor(const uint8_t* data, size_t size);  // TensorProto bytes (onnx_import.cpp)

// The graph the .kom is written from: import, overrides, passes, weight type, AIPP, metadata.
// With options.quantize.int8, the float graph is quantized (quantize.hpp) before the layout pass, and
// *quantization (when given) receives the per-layer report.
ir::Graph build_graph(const uint8_t* data, size_t size, const Options& options, ir::PassStats* stats = nullptr,
                      std::vector<LayerReport>* quantization = nullptr);
// Infers shapes at every gear of g other than the written one (a copy per gear) and returns, per
// tensor, the most bytes any gear needs (empty for a graph without gears). Throws KES_ERR_UNSUPPORTED
// naming the gear and the node when the graph cannot take a gear, or a batch gear's output loses the
// batch as dim 0.
std::vector<uint64_t> check_gears(const ir::Graph& g);
// build_graph + check_gears + write_kom + summary numbers.
Result convert(const uint8_t* data, size_t size, const Options& options);

// Writes `bytes` to `path` through a temporary file in the same folder, renamed when complete, so an
// error never leaves a partial file (KES_ERR_IO naming the path).
void write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes);

std::string sha256_hex(const uint8_t* data, size_t size);

}  // namespace kes::convert
