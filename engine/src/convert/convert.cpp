// convert.cpp — the conversion pipeline (convert.hpp) and the C API of kestrel/convert.h.
#include "convert.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "fusion.hpp"
#include "importers.hpp"
#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"
#include "kes/npy.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/convert.h"
#ifdef KES_ENGINE_HAVE_AIPP
#include "kestrel/aipp.h"
#endif
#include "kestrel/version.h"
#include "pass_layout.hpp"
#ifdef KES_HAVE_TFLITE_IMPORT
#include "pass_prelu.hpp"
#endif

namespace kes::convert {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= s.size()) {
        const size_t end = s.find(sep, start);
        const std::string part = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!part.empty()) parts.push_back(part);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return parts;
}

// The items of a comma-separated number list: every item must be there ("1,,2" and "1,2," are typos that
// would otherwise drop a gear or a dimension silently).
std::vector<std::string> split_numbers(const std::string& s, const char* what) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (;;) {
        const size_t end = s.find(',', start);
        const std::string part = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (part.find_first_not_of(" \t") == std::string::npos)
            fail(KES_ERR_INVALID_ARGUMENT, "%s: '%s' has an empty item", what, s.c_str());
        parts.push_back(part);
        if (end == std::string::npos) return parts;
        start = end + 1;
    }
}

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    const size_t e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

// A decimal integer, an optional '-' then digits (blanks around it allowed); strtoll alone would also
// take a '+' or blanks inside the text.
int64_t parse_int(const std::string& text, const char* what) {
    const std::string t = trim(text);
    const size_t digits = !t.empty() && t[0] == '-' ? 1 : 0;
    const bool shaped = t.size() > digits && t.find_first_not_of("0123456789", digits) == std::string::npos;
    char* end = nullptr;
    errno = 0;
    const long long v = shaped ? std::strtoll(t.c_str(), &end, 10) : 0;
    if (!shaped || *end != '\0' || errno == ERANGE)
        fail(KES_ERR_INVALID_ARGUMENT, "%s: '%s' is not an integer", what, text.c_str());
    return v;
}

int32_t find_input(const ir::Graph& g, const std::string& name, const char* option) {
    for (int32_t t : g.inputs)
        if (g.tensors[static_cast<size_t>(t)].name == name) return t;
    std::string names;
    for (int32_t t : g.inputs) names += (names.empty() ? "'" : ", '") + g.tensors[static_cast<size_t>(t)].name + "'";
    fail(KES_ERR_INVALID_ARGUMENT, "%s: the model has no input '%s' (inputs: %s)", option, name.c_str(),
         names.empty() ? "none" : names.c_str());
}

// ATC aipp_op blocks: one per model input, chosen by related_input_rank (default 0).
void attach_aipp(ir::Graph& g, const std::string& text) {
    std::string clean;  // '#' comments removed
    for (const std::string& line : split(text, '\n')) clean += line.substr(0, line.find('#')) + "\n";
    std::set<int64_t> ranks;
    size_t pos = 0;
    while ((pos = clean.find("aipp_op", pos)) != std::string::npos) {
        const size_t open = clean.find('{', pos);
        const size_t close = open == std::string::npos ? open : clean.find('}', open);
        if (close == std::string::npos)
            fail(KES_ERR_INVALID_ARGUMENT, "--insert-op-conf: an aipp_op block is not closed with '}'");
        const std::string block = clean.substr(pos, close + 1 - pos);
        int64_t rank = 0;
        const size_t r = block.find("related_input_rank");
        if (r != std::string::npos) {
            const size_t colon = block.find(':', r);
            size_t end = colon == std::string::npos ? colon : block.find_first_of("\n}", colon);
            if (colon == std::string::npos)
                fail(KES_ERR_INVALID_ARGUMENT, "--insert-op-conf: related_input_rank has no ':' value");
            rank = parse_int(block.substr(colon + 1, end - colon - 1), "--insert-op-conf related_input_rank");
        }
        if (rank < 0 || rank >= static_cast<int64_t>(g.inputs.size()))
            fail(KES_ERR_INVALID_ARGUMENT, "--insert-op-conf: related_input_rank %lld, but the model has %zu inputs",
                 static_cast<long long>(rank), g.inputs.size());
        if (!ranks.insert(rank).second)
            fail(KES_ERR_INVALID_ARGUMENT, "--insert-op-conf: two aipp_op blocks for input %lld",
                 static_cast<long long>(rank));
        g.aipp.push_back({g.inputs[static_cast<size_t>(rank)], block});
        pos = close + 1;
    }
    if (ranks.empty()) fail(KES_ERR_INVALID_ARGUMENT, "--insert-op-conf: no aipp_op block in the file");
#ifdef KES_ENGINE_HAVE_AIPP
    // Validated as ATC does, so a model never carries a config its loader would refuse.
    kes_aipp_config* parsed = nullptr;
    if (kes_aipp_config_parse(text.data(), text.size(), "--insert-op-conf", &parsed) != KES_OK)
        fail(KES_ERR_INVALID_ARGUMENT, "%s", kes_last_error());
    kes_aipp_config_destroy(parsed);
#endif
}

void freeze_input(ir::Graph& g, const std::string& name, const ir::Tensor& value) {
    const int32_t t = find_input(g, name, "--freeze-input");
    ir::Tensor& in = g.tensors[static_cast<size_t>(t)];
    if (value.dtype != in.dtype)
        fail(KES_ERR_INVALID_ARGUMENT, "--freeze-input %s: the value is %s, the input is %s", name.c_str(),
             kes_dtype_name(value.dtype), kes_dtype_name(in.dtype));
    bool fits = !in.has_shape || in.shape.size() == value.shape.size();
    for (size_t d = 0; fits && in.has_shape && d < in.shape.size(); ++d)
        fits = in.shape[d] < 0 || in.shape[d] == value.shape[d];
    if (!fits)
        fail(KES_ERR_INVALID_ARGUMENT, "--freeze-input %s: the value has shape %s, the input %s", name.c_str(),
             shape_string(value.shape).c_str(), shape_string(in.shape).c_str());
    in.shape = value.shape;
    in.has_shape = true;
    in.is_const = true;
    in.data = value.data;
    g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), t));
    g.aipp.erase(std::remove_if(g.aipp.begin(), g.aipp.end(), [&](const ir::InputAipp& a) { return a.input == t; }),
                 g.aipp.end());
}

// --weight-type f16 (kestrel/convert.h): W → Cast(W_f16) right before the consumer.
size_t store_weights_f16(ir::Graph& g) {
    constexpr int64_t kMinElements = 256;
    size_t converted = 0;
    for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
        const std::string op = g.nodes[ni].op;
        if (op != "Conv" && op != "ConvTranspose" && op != "Gemm" && op != "MatMul") continue;
        if (g.nodes[ni].inputs.size() < 2) continue;
        const int32_t w = g.nodes[ni].inputs[1];
        if (w < 0) continue;
        const ir::Tensor& wt = g.tensors[static_cast<size_t>(w)];
        if (!wt.is_const || wt.dtype != KES_F32 || wt.elements() < kMinElements) continue;
        std::vector<uint16_t> half(static_cast<size_t>(wt.elements()));
        kes_fp16_from_f32(wt.as<float>(), half.data(), half.size());
        const std::string name = wt.name;
        const Shape shape = wt.shape;
        const int32_t h = g.add_constant(name + "_f16", KES_F16, shape, half.data());
        const int32_t f = g.add_activation(name + "_f32", KES_F32, shape, true);
        // Only this consumer switches to the Cast; other readers keep the f32 constant (if any).
        g.nodes[ni].inputs[1] = f;
        ir::Node cast;
        cast.name = g.nodes[ni].name + "_weight_cast";
        cast.op = "Cast";
        cast.inputs = {h};
        cast.outputs = {f};
        cast.attrs.set_int("to", 1);  // ONNX FLOAT (misc.cpp: Cast takes TensorProto codes)
        g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(ni), std::move(cast));
        ++ni;
        ++converted;
    }
    g.compact();
    return converted;
}

void add_stats(ir::PassStats& total, const ir::PassStats& s) {
    total.nodes_folded += s.nodes_folded;
    total.nodes_fused += s.nodes_fused;
    total.nodes_removed += s.nodes_removed;
}

}  // namespace

std::vector<std::pair<std::string, Shape>> parse_input_shapes(const std::string& text) {
    std::vector<std::pair<std::string, Shape>> out;
    for (const std::string& item : split(text, ';')) {
        const size_t colon = item.rfind(':');  // names may hold ':' themselves ("input:0")
        if (colon == std::string::npos || colon == 0)
            fail(KES_ERR_INVALID_ARGUMENT, "--input-shape: '%s' is not name:d0,d1,...", item.c_str());
        Shape dims;
        for (const std::string& d : split_numbers(item.substr(colon + 1), "--input-shape")) {
            const int64_t v = parse_int(d, "--input-shape");
            // -1 (ATC's dynamic dim) marks height and width for --dynamic-image-size.
            if (v < -1)
                fail(KES_ERR_INVALID_ARGUMENT, "--input-shape: dimension %lld of '%s' must be >= 0 (or -1)",
                     static_cast<long long>(v), item.c_str());
            dims.push_back(v);
        }
        out.emplace_back(trim(item.substr(0, colon)), dims);
    }
    if (out.empty()) fail(KES_ERR_INVALID_ARGUMENT, "--input-shape: no shapes in '%s'", text.c_str());
    return out;
}

std::vector<int64_t> parse_batch_gears(const std::string& text) {
    std::vector<int64_t> gears;
    for (const std::string& part : split_numbers(text, "--dynamic-batch")) {
        const int64_t v = parse_int(part, "--dynamic-batch");
        if (v < 1 || v > 65536)
            fail(KES_ERR_INVALID_ARGUMENT, "--dynamic-batch: gear %lld must be in 1..65536", static_cast<long long>(v));
        gears.push_back(v);
    }
    std::sort(gears.begin(), gears.end());
    gears.erase(std::unique(gears.begin(), gears.end()), gears.end());
    if (gears.empty() || gears.size() > 100)
        fail(KES_ERR_INVALID_ARGUMENT, "--dynamic-batch: give 1 to 100 batch sizes (got '%s')", text.c_str());
    return gears;
}

std::vector<ir::ImageSize> parse_image_sizes(const std::string& text) {
    std::vector<ir::ImageSize> sizes;
    for (const std::string& part : split(text, ';')) {
        const std::vector<std::string> hw = split_numbers(part, "--dynamic-image-size");
        if (hw.size() != 2)
            fail(KES_ERR_INVALID_ARGUMENT, "--dynamic-image-size: '%s' is not height,width", part.c_str());
        ir::ImageSize s{parse_int(hw[0], "--dynamic-image-size"), parse_int(hw[1], "--dynamic-image-size")};
        if (s.height < 1 || s.width < 1 || s.height > 65536 || s.width > 65536)
            fail(KES_ERR_INVALID_ARGUMENT, "--dynamic-image-size: %lldx%lld must be in 1..65536 each",
                 static_cast<long long>(s.height), static_cast<long long>(s.width));
        sizes.push_back(s);
    }
    // Ascending by area then height: the last is the gear the graph is written (and folded) at.
    std::sort(sizes.begin(), sizes.end(), [](const ir::ImageSize& a, const ir::ImageSize& b) {
        const int64_t aa = a.height * a.width, ba = b.height * b.width;
        return aa != ba ? aa < ba : a.height < b.height;
    });
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    if (sizes.empty() || sizes.size() > 100)
        fail(KES_ERR_INVALID_ARGUMENT, "--dynamic-image-size: give 1 to 100 height,width pairs (got '%s')",
             text.c_str());
    return sizes;
}

namespace {

// An ONNX file is a protobuf ModelProto with no magic number; its first field is a tag of one of
// ModelProto's fields with that field's wire type, and that field fits in the file. A JPEG (0xff), a
// text file or an empty file fails this at once, so the user reads "not an ONNX or TFLite file"
// instead of a protobuf decoding error about bytes that were never a model.
bool looks_like_onnx(const uint8_t* data, size_t size) {
    size_t pos = 0;
    auto varint = [&](uint64_t* v) {
        *v = 0;
        for (int shift = 0; shift < 64 && pos < size; shift += 7) {
            const uint8_t b = data[pos++];
            *v |= uint64_t{b & 0x7fu} << shift;
            if ((b & 0x80) == 0) return true;
        }
        return false;
    };
    uint64_t tag = 0;
    if (!varint(&tag)) return false;
    const uint64_t field = tag >> 3, wire = tag & 7;
    // ModelProto (onnx.proto3): varints ir_version 1, model_version 5; the rest length-delimited.
    const bool is_varint_field = field == 1 || field == 5;
    const bool is_bytes_field = field == 2 || field == 3 || field == 4 || field == 6 || field == 7 || field == 8 ||
                                field == 14 || field == 20 || field == 25;
    uint64_t value = 0;
    if (is_varint_field && wire == 0) return varint(&value);
    if (is_bytes_field && wire == 2) return varint(&value) && value <= size - pos;
    return false;
}

}  // namespace

Format detect_format(const uint8_t* data, size_t size) {
    if (size >= 8 && std::memcmp(data + 4, "TFL3", 4) == 0) return Format::Tflite;
    if (size == 0) fail(KES_ERR_CORRUPT_DATA, "not an ONNX or TFLite file (it is empty)");
    if (!looks_like_onnx(data, size))
        fail(KES_ERR_CORRUPT_DATA,
             "not an ONNX or TFLite file (first bytes %02x %02x %02x %02x; --format to force one)", data[0],
             size > 1 ? data[1] : 0, size > 2 ? data[2] : 0, size > 3 ? data[3] : 0);
    return Format::Onnx;
}

std::vector<std::pair<std::string, ir::Tensor>> parse_freeze_inputs(const std::string& text) {
    std::vector<std::pair<std::string, ir::Tensor>> out;
    for (const std::string& item : split(text, ';')) {
        const size_t eq = item.rfind('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
            fail(KES_ERR_INVALID_ARGUMENT, "--freeze-input: '%s' is not name=file", item.c_str());
        out.emplace_back(item.substr(0, eq), read_tensor_file(item.substr(eq + 1)));
    }
    return out;
}

ir::Tensor parse_npy(const uint8_t* data, size_t size) {
    const npy::Array a = npy::parse(data, size);
    ir::Tensor t;
    t.dtype = a.dtype;
    t.shape = a.shape;
    t.data.assign(data + a.data_offset, data + size);
    t.has_shape = true;
    t.is_const = true;
    return t;
}

ir::Tensor read_tensor_file(const std::string& path) {
    const std::vector<uint8_t> bytes = read_file(path.c_str());
    try {
        if (bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0)
            return parse_npy(bytes.data(), bytes.size());
        return import_onnx_tensor(bytes.data(), bytes.size());
    } catch (const Error& e) {
        throw Error(e.status(), format("%s: %s", path.c_str(), e.what()));
    }
}

namespace {

// The image inputs (kestrel/convert.h "Gears") take the largest gear; the graph is folded there.
void set_image_gears(ir::Graph& g, const std::vector<ir::ImageSize>& sizes) {
    if (!g.dynamic_batch.empty())
        fail(KES_ERR_INVALID_ARGUMENT, "--dynamic-batch and --dynamic-image-size exclude each other (as in ATC)");
    for (int32_t t : g.inputs) {
        const ir::Tensor& in = g.tensors[static_cast<size_t>(t)];
        std::vector<int32_t> unknown;
        for (size_t d = 0; d < in.shape.size(); ++d)
            if (in.shape[d] < 0) unknown.push_back(static_cast<int32_t>(d));
        if (unknown.empty()) continue;
        if (unknown.size() != 2)
            fail(KES_ERR_INVALID_ARGUMENT,
                 "--dynamic-image-size: input '%s' %s has %zu unknown dims; give it height and width as the only "
                 "-1 dims (--input-shape)",
                 in.name.c_str(), shape_string(in.shape).c_str(), unknown.size());
        g.image_inputs.push_back(ir::ImageInput{t, unknown[0], unknown[1]});
    }
    if (g.image_inputs.empty()) {
        for (int32_t t : g.inputs) {
            const ir::Tensor& in = g.tensors[static_cast<size_t>(t)];
            if (in.shape.size() != 4) continue;
            const bool nhwc = in.layout == KES_LAYOUT_NHWC;
            g.image_inputs.push_back(ir::ImageInput{t, nhwc ? 1 : 2, nhwc ? 2 : 3});
        }
    }
    if (g.image_inputs.empty())
        fail(KES_ERR_INVALID_ARGUMENT, "--dynamic-image-size: the model has no 4-d input and no input with -1 dims");
    for (const ir::ImageInput& a : g.image_inputs) {
        ir::Tensor& in = g.tensors[static_cast<size_t>(a.input)];
        in.shape[static_cast<size_t>(a.h_dim)] = sizes.back().height;
        in.shape[static_cast<size_t>(a.w_dim)] = sizes.back().width;
        in.has_shape = true;
    }
    g.dynamic_image_sizes = sizes;
}

// Gear k's name for messages: "batch gear 4", "image gear 224x224" (height x width).
std::string gear_name(const ir::Graph& g, size_t k) {
    if (!g.dynamic_batch.empty()) return format("batch gear %lld", static_cast<long long>(g.dynamic_batch[k]));
    const ir::ImageSize& s = g.dynamic_image_sizes[k];
    return format("image gear %lldx%lld", static_cast<long long>(s.height), static_cast<long long>(s.width));
}

// The input shapes of gear k of g (not the written one); returns the gear's name for messages.
std::string set_gear(ir::Graph& g, size_t k) {
    if (!g.dynamic_batch.empty()) {
        for (int32_t t : g.inputs) g.tensors[static_cast<size_t>(t)].shape[0] = g.dynamic_batch[k];
        return gear_name(g, k);
    }
    const ir::ImageSize& s = g.dynamic_image_sizes[k];
    for (const ir::ImageInput& a : g.image_inputs) {
        Shape& shape = g.tensors[static_cast<size_t>(a.input)].shape;
        shape[static_cast<size_t>(a.h_dim)] = s.height;
        shape[static_cast<size_t>(a.w_dim)] = s.width;
    }
    return gear_name(g, k);
}

size_t gear_count(const ir::Graph& g) {
    return std::max(g.dynamic_batch.size(), g.dynamic_image_sizes.size());
}

// Constant folding happens at the largest gear, and one graph serves every gear, so every folded value
// must be the same at every gear: folds `unfolded` at each other gear and compares with `folded`. A
// value computed from the input's size (a Reshape target holding the batch, a divisor H·W) differs and
// is refused, naming the gear and the tensor.
void check_folding_is_gear_invariant(const ir::Graph& unfolded, const ir::Graph& folded) {
    for (size_t k = 0; k + 1 < gear_count(unfolded); ++k) {
        ir::Graph at = unfolded;
        const std::string gear = set_gear(at, k);
        try {
            ir::fold_constants(at, size_t{64} << 20, /*keep_quantized=*/true);
        } catch (const Error& e) {
            fail(KES_ERR_UNSUPPORTED, "%s: the graph does not take this gear: %s", gear.c_str(), e.what());
        }
        bool same = at.tensors.size() == folded.tensors.size() && at.nodes.size() == folded.nodes.size();
        for (size_t t = 0; same && t < at.tensors.size(); ++t) {
            const ir::Tensor& a = at.tensors[t];
            const ir::Tensor& b = folded.tensors[t];
            if (a.name != b.name) {
                same = false;
            } else if (a.is_const != b.is_const || (a.is_const && (a.shape != b.shape || a.data != b.data))) {
                fail(KES_ERR_UNSUPPORTED,
                     "%s: tensor '%s' is computed from the input's shape and differs from its value at the largest "
                     "gear; one graph serves every gear, so such a model cannot have these gears",
                     gear.c_str(), a.name.c_str());
            }
        }
        if (!same)
            fail(KES_ERR_UNSUPPORTED,
                 "%s: constant folding gives a different graph than at the largest gear (the graph depends on the "
                 "input's shape)",
                 gear.c_str());
    }
}

}  // namespace

std::vector<uint64_t> check_gears(const ir::Graph& g) {
    const size_t gears = gear_count(g);
    if (gears == 0) return {};
    std::vector<uint64_t> capacity(g.tensors.size());
    auto record = [&](const ir::Graph& at) {
        for (size_t t = 0; t < at.tensors.size(); ++t)
            if (!at.tensors[t].is_const)
                capacity[t] = std::max<uint64_t>(
                    capacity[t], static_cast<uint64_t>(at.tensors[t].elements()) * kes_dtype_size(at.tensors[t].dtype));
    };
    record(g);
    for (size_t k = 0; k + 1 < gears; ++k) {
        ir::Graph at = g;
        const std::string gear = set_gear(at, k);
        try {
            ir::infer_shapes(at);
        } catch (const Error& e) {
            fail(KES_ERR_UNSUPPORTED, "%s: the graph does not take this gear: %s", gear.c_str(), e.what());
        }
        if (!g.dynamic_batch.empty()) {
            for (int32_t t : g.outputs) {
                Shape expected = g.tensors[static_cast<size_t>(t)].shape;
                if (!expected.empty()) expected[0] = g.dynamic_batch[k];
                const ir::Tensor& out = at.tensors[static_cast<size_t>(t)];
                if (out.shape != expected)
                    fail(KES_ERR_UNSUPPORTED, "%s: output '%s' is %s, not %s (every output keeps the batch as dim 0)",
                         gear.c_str(), out.name.c_str(), shape_string(out.shape).c_str(),
                         shape_string(expected).c_str());
            }
        }
        record(at);
    }
    return capacity;
}

namespace {

// Whether graph input t is read as channels-last: a tf2onnx-style export turns its NHWC input into
// the NCHW its Conv takes with Transpose(perm=0,3,1,2), the pattern the layout pass removes
// (pass_layout.hpp). Every Transpose reading t must have that perm, and one must. A Cast in between (an
// fp16 model's input, onnx_import.cpp) is looked through.
// transposes_reading: 1 when only such Transposes read t (one at least), 0 when none, -1 another perm.
int transposes_reading(const ir::Graph& g, int32_t t) {
    int found = 0;
    for (int32_t n : g.consumers(t)) {
        const ir::Node& node = g.nodes[static_cast<size_t>(n)];
        if (node.op == "Cast" && node.outputs.size() == 1) {
            const int through = transposes_reading(g, node.outputs[0]);
            if (through < 0) return -1;
            found = std::max(found, through);
            continue;
        }
        if (node.op != "Transpose") continue;
        if (node.attrs.get_ints("perm") != std::vector<int64_t>{0, 3, 1, 2}) return -1;
        found = 1;
    }
    return found;
}

bool feeds_nhwc_to_nchw_transpose(const ir::Graph& g, int32_t t) {
    return transposes_reading(g, t) == 1;
}

// Records a definite layout for the 4-d inputs the model says it of, from facts: --input-format (ATC's
// option, already applied); a TFLite input (NHWC by definition, set by the importer); an ONNX input the
// graph reads as channels-last (above). Never from the shape, which cannot tell [1,3,3,3] apart. An
// input that carries AIPP must have one (AIPP writes its output in it): with none of these facts it
// gets ATC's default input_format, NCHW, and a warning saying so. Other inputs the model says nothing
// of stay ND. Each choice for an AIPP input and its reason are logged.
void record_input_layouts(ir::Graph& g, bool input_format_given, Format format) {
    for (int32_t t : g.inputs) {
        ir::Tensor& in = g.tensors[static_cast<size_t>(t)];
        const bool aipp =
            std::any_of(g.aipp.begin(), g.aipp.end(), [&](const ir::InputAipp& a) { return a.input == t; });
        if (in.shape.size() != 4) continue;  // an AIPP input that is not 4-d: the aipp module refuses it, by name
        const char* why = nullptr;
        if (in.layout != KES_LAYOUT_ND) {
            why = input_format_given ? "--input-format" : "TFLite inputs are NHWC";
        } else if (format != Format::Tflite && feeds_nhwc_to_nchw_transpose(g, t)) {
            in.layout = KES_LAYOUT_NHWC;
            why = "the graph reads it through Transpose(perm=0,3,1,2): a channels-last, tf2onnx-style input";
        } else if (aipp) {
            in.layout = KES_LAYOUT_NCHW;
            KES_LOGW("convert",
                     "input '%s' carries AIPP and the model does not say its layout: NCHW, ATC's default "
                     "input_format (give --input-format NHWC if it is channels-last)",
                     in.name.c_str());
            continue;
        } else {
            continue;
        }
        KES_LOGI("convert", "input '%s'%s: layout %s (%s)", in.name.c_str(), aipp ? " carries AIPP" : "",
                 kes_layout_name(in.layout), why);
    }
}

}  // namespace

ir::Graph build_graph(const uint8_t* data, size_t size, const Options& options, ir::PassStats* stats_out,
                      std::vector<LayerReport>* quantization) {
    auto progress = [&](const char* stage, size_t done, size_t total) {
        if (options.progress) options.progress(stage, done, total);
    };
    if (options.board != "host" && options.board != "310" && options.board != "310B")
        fail(KES_ERR_INVALID_ARGUMENT, "--board: '%s' is not 310, 310B or host", options.board.c_str());
    const Format format = options.format == Format::Auto ? detect_format(data, size) : options.format;
    progress("import", 0, 0);
    ir::Graph g;
    if (format == Format::Tflite) {
#ifdef KES_HAVE_TFLITE_IMPORT
        g = ir::import_tflite(data, size);
#else
        fail(KES_ERR_UNSUPPORTED, "this build of Kestrel has no TFLite importer");
#endif
    } else {
        g = ir::import_onnx(data, size);
    }
    const size_t imported_nodes = g.nodes.size();
    progress("import", imported_nodes, imported_nodes);

    if (!options.aipp_config.empty()) attach_aipp(g, options.aipp_config);
    for (const auto& [name, value] : options.frozen) freeze_input(g, name, value);
    for (const auto& [name, shape] : options.input_shapes) {
        ir::Tensor& in = g.tensors[static_cast<size_t>(find_input(g, name, "--input-shape"))];
        if (in.has_shape && !in.shape.empty() && in.shape.size() != shape.size())
            fail(KES_ERR_INVALID_ARGUMENT, "--input-shape %s: %s has rank %zu, the model's input has rank %zu",
                 name.c_str(), shape_string(shape).c_str(), shape.size(), in.shape.size());
        in.shape = shape;
        in.has_shape = true;
    }
    if (!options.dynamic_batch.empty()) {
        // The graph is described at the largest gear (kestrel/engine.h); every input's dim 0 is the batch.
        for (int32_t t : g.inputs) {
            ir::Tensor& in = g.tensors[static_cast<size_t>(t)];
            if (!in.has_shape || in.shape.empty())
                fail(KES_ERR_INVALID_ARGUMENT, "--dynamic-batch: input '%s' has no batch dimension", in.name.c_str());
            in.shape[0] = options.dynamic_batch.back();
        }
        g.dynamic_batch = options.dynamic_batch;
    }
    if (!options.input_format.empty()) {
        // ATC's --input_format: how the 4-d graph inputs are laid out (an ONNX file does not say).
        const std::string& f = options.input_format;
        if (f != "NCHW" && f != "NHWC" && f != "ND")
            fail(KES_ERR_INVALID_ARGUMENT, "--input-format: '%s' is not NCHW, NHWC or ND", f.c_str());
        for (int32_t t : g.inputs) {
            ir::Tensor& in = g.tensors[static_cast<size_t>(t)];
            if (in.shape.size() == 4)
                in.layout = f == "NCHW" ? KES_LAYOUT_NCHW : f == "NHWC" ? KES_LAYOUT_NHWC : KES_LAYOUT_ND;
        }
    }
    record_input_layouts(g, !options.input_format.empty(), format);
    if (!options.dynamic_image_sizes.empty()) set_image_gears(g, options.dynamic_image_sizes);

    ir::PassStats stats;
    progress("fold", 0, g.nodes.size());
    const ir::Graph unfolded = gear_count(g) > 1 ? g : ir::Graph{};
    // The graph is folded and its shapes inferred at the largest gear: a failure there names that gear
    // (a model that does not take its image sizes said only which node failed).
    const auto at_largest_gear = [&](const auto& step) {
        try {
            step();
        } catch (const Error& e) {
            if (gear_count(g) == 0) throw;
            fail(e.status(), "%s (the largest, at which the model is planned): %s",
                 gear_name(g, gear_count(g) - 1).c_str(), e.what());
        }
    };
    at_largest_gear([&] { add_stats(stats, ir::fold_constants(g, size_t{64} << 20, /*keep_quantized=*/true)); });
    if (gear_count(g) > 1) check_folding_is_gear_invariant(unfolded, g);
    at_largest_gear([&] { ir::infer_shapes(g); });
    // Quantized (QDQ) models stay quantized: their groups become QLinear* ops; then the DequantizeLinear
    // of weights no group took folds into f32 weights, which the float passes below expect.
    add_stats(stats, ir::fuse_qdq(g));
    at_largest_gear([&] { add_stats(stats, ir::fold_constants(g)); });
    add_stats(stats, ir::remove_noop_casts(g));  // an fp16 ONNX model's Casts, now f32 to f32
    // BatchNormalization and per-channel Mul/Add fold into an NCHW Conv here, before the layout pass
    // switches it: the folding of BatchNormalization takes only NCHW (fusion.cpp).
    add_stats(stats, ir::fuse_channel_affine(g));
    add_stats(stats, ir::fuse_channel_shuffle(g));  // before the layout pass, which renumbers its axis
    // The rest of the pipeline, also run on the copies that quantization executes (float and quantized).
    const auto finish = [&](ir::Graph& graph, ir::PassStats& finish_stats) {
        // Not in the stats: its count is ops switched to NHWC, which are neither fused nor removed.
        ir::choose_layout(graph);  // Conv/pool regions → NHWC ops where that pays (pass_layout.hpp)
#ifdef KES_HAVE_TFLITE_IMPORT
        add_stats(finish_stats, ir::fuse_prelu_pattern(graph));
#endif
        add_stats(finish_stats, ir::run_fusions(graph));
        add_stats(finish_stats, ir::remove_dead_nodes(graph));
    };
    if (options.quantize.int8) {
        // Quantized here: BatchNorm is folded into the weights, and the graph is still NCHW, the form
        // fuse_qdq reads.
        std::vector<LayerReport> report = quantize_int8(g, options.quantize, [&](ir::Graph& copy) {
            ir::PassStats ignored;
            finish(copy, ignored);
        });
        if (quantization) *quantization = std::move(report);
    }
    progress("fuse", 0, g.nodes.size());
    finish(g, stats);
    if (options.f16_weights) store_weights_f16(g);
    ir::infer_shapes(g);
    stats.nodes_removed = imported_nodes >= g.nodes.size() ? imported_nodes - g.nodes.size() : 0;

    g.metadata.source_format = format == Format::Tflite ? "tflite" : "onnx";
    g.metadata.source_hash = sha256_hex(data, size);
    g.metadata.converter_version = std::string("kes-convert ") + kes_version_string();
    g.metadata.target_board = options.board;
    if (stats_out) *stats_out = stats;
    return g;
}

namespace {

std::string gib(uint64_t bytes) {
    return format("%.2f GiB", static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << 30));
}

// Refuses an activation tensor (at its largest gear: `capacity`, from check_gears) above the limit,
// before anything is planned or written.
void check_tensor_sizes(const ir::Graph& g, const std::vector<uint64_t>& capacity, uint64_t limit) {
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        const ir::Tensor& x = g.tensors[t];
        if (x.is_const || !x.has_shape) continue;
        const uint64_t bytes = t < capacity.size() && capacity[t]
                                   ? capacity[t]
                                   : static_cast<uint64_t>(x.elements()) * kes_dtype_size(x.dtype);
        if (bytes > limit)
            fail(KES_ERR_INVALID_ARGUMENT,
                 "tensor '%s' %s %s needs %s, more than the %s a tensor may take: check the input shapes "
                 "(--input-shape), or raise the limit with --max-tensor-bytes "
                 "(kes_convert_options.max_tensor_bytes)",
                 x.name.c_str(), shape_string(x.shape).c_str(), kes_dtype_name(x.dtype), gib(bytes).c_str(),
                 gib(limit).c_str());
    }
}

}  // namespace

Result convert(const uint8_t* data, size_t size, const Options& options) {
    Result r;
    ir::Graph g = build_graph(data, size, options, &r.stats, &r.quantization);
    if (options.progress) options.progress("write", 0, g.nodes.size());
    ir::WriteOptions write_options;
    write_options.tensor_capacity = check_gears(g);
    check_tensor_sizes(g, write_options.tensor_capacity, options.max_tensor_bytes);
    r.image = ir::write_kom(g, write_options);
    if (r.image.arena_size > options.max_tensor_bytes)
        fail(KES_ERR_INVALID_ARGUMENT,
             "the activation arena needs %s, more than the %s allowed: check the input shapes (--input-shape), "
             "or raise the limit with --max-tensor-bytes (kes_convert_options.max_tensor_bytes)",
             gib(r.image.arena_size).c_str(), gib(options.max_tensor_bytes).c_str());
    if (options.progress) options.progress("write", g.nodes.size(), g.nodes.size());
    r.ops = g.nodes.size();
    for (const ir::Tensor& t : g.tensors)
        if (t.is_const) r.parameters += static_cast<uint64_t>(t.elements());
    return r;
}

void write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes) {
    // The sdk's one writer: temporary file, fsync, rename, directory fsync (a crash leaves the old
    // model or the new one, never half of either).
    AtomicFile file(path);
    file.write(bytes.data(), bytes.size());
    file.commit();
}

// FIPS 180-4 SHA-256 (metadata source hash; not security relevant).
std::string sha256_hex(const uint8_t* data, size_t size) {
    static const uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    auto rotr = [](uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
    auto block = [&](const uint8_t* p) {
        uint32_t w[64];
        for (int i = 0; i < 16; ++i)
            w[i] = uint32_t{p[4 * i]} << 24 | uint32_t{p[4 * i + 1]} << 16 | uint32_t{p[4 * i + 2]} << 8 | p[4 * i + 3];
        for (int i = 16; i < 64; ++i) {
            const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int i = 0; i < 64; ++i) {
            const uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
            const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
    };
    size_t i = 0;
    for (; i + 64 <= size; i += 64) block(data + i);
    uint8_t tail[128] = {};
    const size_t rest = size - i;
    if (rest) std::memcpy(tail, data + i, rest);
    tail[rest] = 0x80;
    const size_t tail_len = rest + 9 <= 64 ? 64 : 128;
    const uint64_t bits = static_cast<uint64_t>(size) * 8;
    for (int b = 0; b < 8; ++b) tail[tail_len - 1 - b] = static_cast<uint8_t>(bits >> (8 * b));
    block(tail);
    if (tail_len == 128) block(tail + 64);
    std::string hex;
    char buf[9];
    for (uint32_t v : h) {
        std::snprintf(buf, sizeof buf, "%08x", v);
        hex += buf;
    }
    return hex;
}

}  // namespace kes::convert

// ---- C API ------------------------------------------------------------------------------------------------

namespace {

// The first released kes_convert_options ended with the progress callback's user data (the image size
// gears and the input format came later), kes_convert_summary with nodes_removed.
constexpr size_t kConvertOptionsV1 = KES_STRUCT_SIZE_THROUGH(kes_convert_options, progress_user_data);
constexpr size_t kConvertSummaryV1 = KES_STRUCT_SIZE_THROUGH(kes_convert_summary, nodes_removed);

kes::convert::Options to_options(const kes_convert_options* given) {
    using kes::convert::Format;
    kes::convert::Options opt;
    if (!given) return opt;
    kes_convert_options options = {};  // kes_convert_options_init's defaults
    options.struct_size = sizeof options;
    kes::read_struct(given, kConvertOptionsV1, "options", "kes_convert_options", &options);
    const kes_convert_options* o = &options;
    const int64_t format = kes::enum_value(o->format);
    KES_REQUIRE(format >= 0 && format <= 2, "options->format %lld is not a kes_convert_format",
                static_cast<long long>(format));
    opt.format = format == 1 ? Format::Onnx : (format == 2 ? Format::Tflite : Format::Auto);
    if (o->input_shape && *o->input_shape) opt.input_shapes = kes::convert::parse_input_shapes(o->input_shape);
    if (o->dynamic_batch && *o->dynamic_batch) opt.dynamic_batch = kes::convert::parse_batch_gears(o->dynamic_batch);
    if (o->dynamic_image_size && *o->dynamic_image_size)
        opt.dynamic_image_sizes = kes::convert::parse_image_sizes(o->dynamic_image_size);
    if (o->input_format && *o->input_format) opt.input_format = o->input_format;
    if (o->insert_op_conf && *o->insert_op_conf) {
        const std::vector<uint8_t> text = kes::read_file(o->insert_op_conf);
        opt.aipp_config.assign(text.begin(), text.end());
        KES_REQUIRE(!opt.aipp_config.empty(), "--insert-op-conf: '%s' is empty", o->insert_op_conf);
    }
    const int64_t weights = kes::enum_value(o->weight_type);
    KES_REQUIRE(weights == 0 || weights == 1, "options->weight_type %lld is not a kes_convert_weights",
                static_cast<long long>(weights));
    opt.f16_weights = weights == 1;
    if (o->board) opt.board = o->board;
    if (o->freeze_input && *o->freeze_input) opt.frozen = kes::convert::parse_freeze_inputs(o->freeze_input);
    if (o->max_tensor_bytes) opt.max_tensor_bytes = o->max_tensor_bytes;
    if (o->quantize && *o->quantize) {
        KES_REQUIRE(std::strcmp(o->quantize, "int8") == 0, "--quantize: '%s' is not int8", o->quantize);
        opt.quantize.int8 = true;
        if (o->calibration) opt.quantize.calibration_dir = o->calibration;
        if (o->calibration_method && *o->calibration_method)
            opt.quantize.method = kes::convert::parse_calibration_method(o->calibration_method);
        if (o->calibration_percentile != 0) opt.quantize.percentile = o->calibration_percentile;
        if (o->keep_float && *o->keep_float) opt.quantize.keep_float = kes::convert::parse_keep_float(o->keep_float);
        opt.quantize.report = o->layer_report != nullptr;
    }
    if (o->progress) {
        const kes_convert_progress_fn fn = o->progress;
        void* user = o->progress_user_data;
        opt.progress = [fn, user](const char* stage, size_t done, size_t total) { fn(stage, done, total, user); };
    }
    return opt;
}

void fill_summary(const kes::convert::Result& r, kes_convert_summary* s) {
    if (!s) return;
    kes_convert_summary full = {};
    full.struct_size = sizeof full;
    full.ops = r.ops;
    full.parameters = r.parameters;
    full.arena_bytes = r.image.arena_size;
    full.ideal_bytes = r.image.ideal_size;
    full.weight_bytes = r.image.weights_size;
    full.file_bytes = r.image.bytes.size();
    full.nodes_folded = r.stats.nodes_folded;
    full.nodes_fused = r.stats.nodes_fused;
    full.nodes_removed = r.stats.nodes_removed;
    kes::write_struct(full, s);
}

// The quantization report, through the caller's callback (a field the caller's struct may predate).
void report_layers(const kes::convert::Result& r, const kes_convert_options* given) {
    if (!given || r.quantization.empty()) return;
    kes_convert_options options = {};
    options.struct_size = sizeof options;
    kes::read_struct(given, kConvertOptionsV1, "options", "kes_convert_options", &options);
    if (!options.layer_report) return;
    for (const kes::convert::LayerReport& l : r.quantization)
        options.layer_report(l.layer.c_str(), l.op.c_str(), l.tensor.c_str(), l.cosine, l.max_abs,
                             options.layer_report_user_data);
}

void check_summary(const kes_convert_summary* s) {
    if (s) kes::check_out_struct(s, kConvertSummaryV1, "summary", "kes_convert_summary");
}

}  // namespace

kes_status kes_convert_options_init(kes_convert_options* options) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(options);
        *options = kes_convert_options{};
        options->struct_size = sizeof(kes_convert_options);
        return KES_OK;
    });
}

kes_status kes_convert_file(const char* model_path, const char* output_path, const kes_convert_options* options,
                            kes_convert_summary* summary) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model_path);
        KES_REQUIRE_NOT_NULL(output_path);
        check_summary(summary);
        const kes::convert::Options opt = to_options(options);
        const std::vector<uint8_t> bytes = kes::read_file(model_path);
        if (opt.format == kes::convert::Format::Auto) {
            // Detected here, where the path is known: "x.jpg: not an ONNX or TFLite file" names the file.
            try {
                kes::convert::detect_format(bytes.data(), bytes.size());
            } catch (const kes::Error& e) {
                throw kes::Error(e.status(), kes::format("%s: %s", model_path, e.what()));
            }
        }
        const kes::convert::Result r = kes::convert::convert(bytes.data(), bytes.size(), opt);
        kes::convert::write_file_atomically(output_path, r.image.bytes);
        fill_summary(r, summary);
        report_layers(r, options);
        return KES_OK;
    });
}

kes_status kes_convert_memory(const void* model, size_t model_size, const kes_convert_options* options, void** out_kom,
                              size_t* out_size, kes_convert_summary* summary) {
    if (out_kom) *out_kom = nullptr;
    if (out_size) *out_size = 0;
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_kom);
        KES_REQUIRE_NOT_NULL(out_size);
        check_summary(summary);
        const kes::convert::Options opt = to_options(options);
        const kes::convert::Result r = kes::convert::convert(static_cast<const uint8_t*>(model), model_size, opt);
        void* buf = std::malloc(std::max<size_t>(r.image.bytes.size(), 1));
        if (!buf) kes::fail(KES_ERR_OUT_OF_MEMORY, "no memory for a %zu-byte .kom image", r.image.bytes.size());
        if (!r.image.bytes.empty()) std::memcpy(buf, r.image.bytes.data(), r.image.bytes.size());
        *out_kom = buf;
        *out_size = r.image.bytes.size();
        fill_summary(r, summary);
        report_layers(r, options);
        return KES_OK;
    });
}

void kes_convert_free(void* kom) {
    std::free(kom);
}
