// onnx_import.cpp — ONNX ModelProto → ir::Graph (importers.hpp), read with Kestrel's own protobuf reader
// (protobuf_reader.hpp; field numbers from onnx.proto, ONNX 1.12).
//
// What is read: ModelProto (opset_import, graph), GraphProto (node, initializer, input, output,
// value_info), NodeProto, AttributeProto (f, i, s, t, floats, ints, strings), TensorProto (dims,
// data_type, raw_data and the typed *_data fields) and ValueInfoProto (tensor elem_type and shape;
// a dim_param or a missing dim is unknown, -1).
//
// Node order: nodes are converted in topological order (import_order below: ONNX Runtime sorts, and
// the float16 conversion tool appends Casts at the end), the file's own where it is valid; a real cycle
// is refused naming its nodes.
//
// fp16 models compute in f32 (compute_f16_in_f32 below; kestrel/convert.h "fp16 ONNX models").
//
// Normalisation to Kestrel's op set (op.hpp: ONNX names, opset-17 semantics), done here so the ops
// only know one form of each op:
// - Constant nodes and initializers become constants; an initializer also listed as a graph input is a
//   constant (ONNX < IR 4 listed weights as inputs; their "default" is what every converter uses).
// - Identity and inference Dropout are removed (their output names refer to their input), except where
//   the output is a graph output (the node stays so the output keeps its name).
// - Attributes that later opsets made inputs become constant inputs: Clip min/max (< 11), Slice
//   starts/ends/axes (< 10), Squeeze/Unsqueeze axes (< 13), Split split (< 13), Pad pads/value (< 11),
//   ReduceSum axes (< 13), Reshape shape (< 5), TopK k (< 10).
// - Reduce* other than ReduceSum keep their "axes" attribute (opset 18's axes input is passed through:
//   the kernels take either form).
// - Upsample (7–9) and Resize 10 become Resize with coordinate_transformation_mode "asymmetric" and
//   nearest_mode "floor" (what those opsets compute).
// - Softmax/LogSoftmax/Hardmax < 13 (which flatten to 2-d at `axis`) become Flatten → op(axis -1) →
//   Reshape to the input's Shape; constant folding removes the Shape.
// - BatchNormalization drops spatial (spatial = 0 is unsupported), is_test and consumed_inputs;
//   legacy broadcast attributes of Gemm and the arithmetic ops (< 7) are dropped (an axis is
//   unsupported).
// - LSTM/GRU/RNN "activations" (a string list) becomes one String attribute, the names joined by
//   commas (ops/rnn.cpp).
// - Tensor attributes: Constant's value, ConstantOfShape's value (→ attribute "value", a Float or an
//   Int by the tensor's dtype, plus "dtype" = the kes_dtype). Other tensor, graph or string-list
//   attributes are KES_ERR_UNSUPPORTED.
// - com.microsoft's QGemm (alpha 1, a quantized output) becomes QLinearMatMul with the bias as input 8,
//   transA/transB as Transposes; QLinearAdd, QLinearMul, QLinearGlobalAveragePool and QLinearConcat
//   (com.microsoft) are Kestrel ops of those names.
// - Cast / EyeLike "to"/"dtype" and similar type attributes stay ONNX TensorProto numbers (Cast-1's type
//   name string becomes the number).
// Nothing is written while importing; any problem throws (importers.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "convert.hpp"
#include "importers.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "protobuf_reader.hpp"

namespace kes::ir {

namespace {

using pb::Field;
using pb::Reader;
using pb::WireType;

// ---- raw ONNX structures ---------------------------------------------------------------------------

struct OnnxTensor {
    std::string name;
    kes_dtype dtype = KES_F32;
    int32_t onnx_type = 1;  // TensorProto.DataType as in the file
    Shape dims;
    std::vector<uint8_t> data;
};

struct OnnxAttr {
    enum Type : int32_t {
        Undefined = 0,
        Float = 1,
        Int = 2,
        String = 3,
        TensorT = 4,
        GraphT = 5,
        Floats = 6,
        Ints = 7,
        Strings = 8,
        Tensors = 9,
        Graphs = 10,
        SparseTensor = 11,
        SparseTensors = 12,
        TypeProto = 13,
        TypeProtos = 14
    };
    std::string name;
    int32_t type = Undefined;
    float f = 0.0f;
    int64_t i = 0;
    std::string s;
    std::vector<float> floats;
    std::vector<int64_t> ints;
    std::vector<std::string> strings;
    bool has_f = false, has_i = false, has_s = false, has_t = false, has_g = false, has_other = false;
    OnnxTensor t;
};

struct OnnxNode {
    std::string name, op, domain;
    std::vector<std::string> inputs, outputs;
    std::vector<OnnxAttr> attrs;
};

struct OnnxValueInfo {
    std::string name;
    bool has_type = false;
    int32_t elem_type = 0;
    bool has_shape = false;
    Shape shape;
};

struct OnnxGraph {
    std::vector<OnnxNode> nodes;
    std::vector<OnnxTensor> initializers;
    std::vector<OnnxValueInfo> inputs, outputs, value_info;
};

// ONNX TensorProto.DataType → kes_dtype.
bool onnx_dtype(int32_t t, kes_dtype* out) {
    switch (t) {
        case 1: *out = KES_F32; return true;
        case 2: *out = KES_U8; return true;
        case 3: *out = KES_I8; return true;
        case 4: *out = KES_U16; return true;
        case 5: *out = KES_I16; return true;
        case 6: *out = KES_I32; return true;
        case 7: *out = KES_I64; return true;
        case 9: *out = KES_BOOL; return true;
        case 10: *out = KES_F16; return true;
        case 11: *out = KES_F64; return true;
        case 12: *out = KES_U32; return true;
        case 13: *out = KES_U64; return true;
        default: return false;
    }
}

const char* onnx_dtype_name(int32_t t) {
    static const char* names[] = {"UNDEFINED", "FLOAT",  "UINT8",     "INT8",       "UINT16",  "INT16",
                                  "INT32",     "INT64",  "STRING",    "BOOL",       "FLOAT16", "DOUBLE",
                                  "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    return t >= 0 && t < 17 ? names[t] : "unknown";
}

kes_dtype require_dtype_of(int32_t t, const std::string& what) {
    kes_dtype d;
    if (!onnx_dtype(t, &d))
        fail(KES_ERR_UNSUPPORTED, "onnx: %s has data type %s (%d), which Kestrel does not support", what.c_str(),
             onnx_dtype_name(t), t);
    return d;
}

std::string str(const Field& f, const Reader& r) {
    pb::expect_type(r, f, WireType::Bytes);
    return std::string(f.as_string());
}

// Element count of dims; CORRUPT_DATA for a negative dim or an absurd size.
int64_t checked_elements(const Shape& dims, const std::string& what) {
    uint64_t n = 1;
    for (int64_t d : dims) {
        if (d < 0) fail(KES_ERR_CORRUPT_DATA, "onnx: %s has a negative dimension", what.c_str());
        if (!checked_mul(n, static_cast<uint64_t>(d), &n) || n > (uint64_t{1} << 40))
            fail(KES_ERR_CORRUPT_DATA, "onnx: %s has too many elements", what.c_str());
    }
    return static_cast<int64_t>(n);
}

OnnxTensor parse_tensor(Reader r, const std::string& context) {
    OnnxTensor t;
    int32_t data_type = 0;
    bool has_type = false;
    const uint8_t* raw = nullptr;
    size_t raw_size = 0;
    bool has_raw = false, external = false;
    std::vector<float> float_data;
    std::vector<int64_t> int_data;  // int32_data and int64_data (both varints)
    std::vector<uint64_t> u64_data, f64_data;
    Field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: pb::append_varints(r, f, t.dims); break;
            case 2:
                pb::expect_type(r, f, WireType::Varint);
                data_type = f.as_int32(), has_type = true;
                break;
            case 4: pb::append_floats(r, f, float_data); break;
            case 5: pb::append_varints(r, f, int_data); break;
            case 6: fail(KES_ERR_UNSUPPORTED, "onnx: %s: string tensors are not supported", context.c_str());
            case 7: pb::append_varints(r, f, int_data); break;
            case 8: t.name = str(f, r); break;
            case 9:
                pb::expect_type(r, f, WireType::Bytes);
                raw = f.data, raw_size = f.size, has_raw = true;
                break;
            case 10: pb::append_fixed64(r, f, f64_data); break;
            case 11: pb::append_varints(r, f, int_data); break;  // uint64_data (varint)
            case 13: external = true; break;
            case 14:
                pb::expect_type(r, f, WireType::Varint);
                if (f.value == 1) external = true;
                break;
            case 3: fail(KES_ERR_UNSUPPORTED, "onnx: %s: segmented tensors are not supported", context.c_str());
            default: break;  // doc_string and future fields
        }
    }
    const std::string what = context + (t.name.empty() ? std::string() : " '" + t.name + "'");
    if (external)
        fail(KES_ERR_UNSUPPORTED, "onnx: %s keeps its data in an external file; save the model with the weights inside",
             what.c_str());
    if (!has_type) fail(KES_ERR_CORRUPT_DATA, "onnx: %s has no data_type", what.c_str());
    t.dtype = require_dtype_of(data_type, what);
    t.onnx_type = data_type;
    const int64_t n = checked_elements(t.dims, what);
    const size_t esize = kes_dtype_size(t.dtype);
    const size_t bytes = static_cast<size_t>(n) * esize;
    if (has_raw) {
        if (raw_size != bytes)
            fail(KES_ERR_CORRUPT_DATA, "onnx: %s: raw_data has %zu bytes, expected %zu for %s elements of %s",
                 what.c_str(), raw_size, bytes, shape_string(t.dims).c_str(), kes_dtype_name(t.dtype));
        t.data.assign(raw, raw + raw_size);
        return t;
    }
    auto count_check = [&](size_t count, const char* field) {
        if (count != static_cast<size_t>(n))
            fail(KES_ERR_CORRUPT_DATA, "onnx: %s: %s has %zu values, expected %lld", what.c_str(), field, count,
                 static_cast<long long>(n));
    };
    // Counts are checked before anything is allocated: a few bytes of dims must not reserve gigabytes.
    const size_t provided =
        t.dtype == KES_F32 ? float_data.size() : (t.dtype == KES_F64 ? f64_data.size() : int_data.size());
    count_check(provided, t.dtype == KES_F32 ? "float_data" : (t.dtype == KES_F64 ? "double_data" : "the typed data"));
    t.data.resize(bytes);
    uint8_t* out = t.data.data();
    switch (t.dtype) {
        case KES_F32:
            count_check(float_data.size(), "float_data");
            if (bytes) std::memcpy(out, float_data.data(), bytes);
            break;
        case KES_F64:
            count_check(f64_data.size(), "double_data");
            if (bytes) std::memcpy(out, f64_data.data(), bytes);
            break;
        case KES_I64:
        case KES_U64:
            count_check(int_data.size(), t.dtype == KES_I64 ? "int64_data" : "uint64_data");
            if (bytes) std::memcpy(out, int_data.data(), bytes);
            break;
        case KES_U32:
            count_check(int_data.size(), "uint64_data");
            for (size_t i = 0; i < int_data.size(); ++i) {
                const uint32_t v = static_cast<uint32_t>(int_data[i]);
                std::memcpy(out + i * 4, &v, 4);
            }
            break;
        default:  // i32, i16, u16, i8, u8, bool, f16: int32_data, one value per element
            count_check(int_data.size(), "int32_data");
            for (size_t i = 0; i < int_data.size(); ++i) {
                const int64_t v = int_data[i];
                if (esize == 4) {
                    const int32_t x = static_cast<int32_t>(v);
                    std::memcpy(out + i * 4, &x, 4);
                } else if (esize == 2) {
                    const uint16_t x = static_cast<uint16_t>(v);
                    std::memcpy(out + i * 2, &x, 2);
                } else {
                    out[i] = t.dtype == KES_BOOL ? (v != 0) : static_cast<uint8_t>(v);
                }
            }
            break;
    }
    return t;
}

void parse_shape(Reader r, OnnxValueInfo& vi) {
    Field f;
    while (r.next(f)) {
        if (f.number != 1) continue;
        Reader dim = r.message(f, "TensorShapeProto.Dimension");
        int64_t value = -1;
        Field d;
        while (dim.next(d)) {
            if (d.number == 1) {
                pb::expect_type(dim, d, WireType::Varint);
                value = d.as_int64();
                if (value < 0) value = -1;
            } else if (d.number == 2) {
                pb::expect_type(dim, d, WireType::Bytes);
                value = -1;
            }
        }
        vi.shape.push_back(value);
        if (vi.shape.size() > 64) fail(KES_ERR_CORRUPT_DATA, "onnx: value '%s' has more than 64 dims", vi.name.c_str());
    }
    vi.has_shape = true;
}

OnnxValueInfo parse_value_info(Reader r) {
    OnnxValueInfo vi;
    Field f;
    while (r.next(f)) {
        if (f.number == 1) {
            vi.name = str(f, r);
        } else if (f.number == 2) {
            Reader type = r.message(f, "TypeProto");
            Field tf;
            while (type.next(tf)) {
                if (tf.number != 1) continue;  // sequence/map/optional types: no tensor type, left unknown
                Reader tensor = type.message(tf, "TypeProto.Tensor");
                Field x;
                vi.has_type = true;
                while (tensor.next(x)) {
                    if (x.number == 1) {
                        pb::expect_type(tensor, x, WireType::Varint);
                        vi.elem_type = x.as_int32();
                    } else if (x.number == 2) {
                        parse_shape(tensor.message(x, "TensorShapeProto"), vi);
                    }
                }
            }
        }
    }
    return vi;
}

OnnxAttr parse_attr(Reader r, const std::string& node) {
    OnnxAttr a;
    Field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: a.name = str(f, r); break;
            case 20:
                pb::expect_type(r, f, WireType::Varint);
                a.type = f.as_int32();
                break;
            case 2:
                pb::expect_type(r, f, WireType::Fixed32);
                a.f = f.as_float(), a.has_f = true;
                break;
            case 3:
                pb::expect_type(r, f, WireType::Varint);
                a.i = f.as_int64(), a.has_i = true;
                break;
            case 4: a.s = str(f, r), a.has_s = true; break;
            case 5:
                a.t = parse_tensor(r.message(f, "TensorProto"), "tensor attribute of node '" + node + "'");
                a.has_t = true;
                break;
            case 6: a.has_g = true; break;
            case 7: pb::append_floats(r, f, a.floats); break;
            case 8: pb::append_varints(r, f, a.ints); break;
            case 9: a.strings.push_back(str(f, r)); break;
            case 10:
            case 11:
            case 14:
            case 15:
            case 22:
            case 23: a.has_other = true; break;
            default: break;
        }
    }
    if (a.type == OnnxAttr::Undefined) {  // IR < 3 files carry no type: infer it from the field present
        if (a.has_t)
            a.type = OnnxAttr::TensorT;
        else if (a.has_g)
            a.type = OnnxAttr::GraphT;
        else if (a.has_f)
            a.type = OnnxAttr::Float;
        else if (a.has_i)
            a.type = OnnxAttr::Int;
        else if (a.has_s)
            a.type = OnnxAttr::String;
        else if (!a.floats.empty())
            a.type = OnnxAttr::Floats;
        else if (!a.ints.empty())
            a.type = OnnxAttr::Ints;
        else if (!a.strings.empty())
            a.type = OnnxAttr::Strings;
    }
    return a;
}

OnnxNode parse_node(Reader r) {
    OnnxNode n;
    Field f;
    std::vector<Field> attr_fields;
    while (r.next(f)) {
        switch (f.number) {
            case 1: n.inputs.push_back(str(f, r)); break;
            case 2: n.outputs.push_back(str(f, r)); break;
            case 3: n.name = str(f, r); break;
            case 4: n.op = str(f, r); break;
            case 7: n.domain = str(f, r); break;
            case 5: attr_fields.push_back(f); break;
            default: break;
        }
    }
    for (const Field& af : attr_fields) n.attrs.push_back(parse_attr(r.message(af, "AttributeProto"), n.name));
    return n;
}

OnnxGraph parse_graph(Reader r) {
    OnnxGraph g;
    Field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: g.nodes.push_back(parse_node(r.message(f, "NodeProto"))); break;
            case 5: g.initializers.push_back(parse_tensor(r.message(f, "TensorProto"), "initializer")); break;
            case 11: g.inputs.push_back(parse_value_info(r.message(f, "ValueInfoProto"))); break;
            case 12: g.outputs.push_back(parse_value_info(r.message(f, "ValueInfoProto"))); break;
            case 13: g.value_info.push_back(parse_value_info(r.message(f, "ValueInfoProto"))); break;
            case 15: fail(KES_ERR_UNSUPPORTED, "onnx: sparse initializers are not supported");
            default: break;
        }
    }
    return g;
}

// ---- import order --------------------------------------------------------------------------------------

// The name a node goes by in messages: its own, or op_index as Builder::convert_node names it.
std::string display_name(const OnnxNode& n, size_t index) {
    return n.name.empty() ? n.op + "_" + std::to_string(index) : n.name;
}

// The order in which to import og's nodes: each after the producers of its inputs. ONNX requires the
// file's nodes in that order, but exporters do not all keep to it (onnxconverter-common's float16
// conversion appends the Casts of the graph inputs and outputs at the end of the list) and ONNX Runtime
// sorts, so the importer does too. Among the nodes ready to run the earliest in the file goes first, so
// a file already in order keeps its order, and an out-of-order one moves only what it must.
// An input that is a graph input or an initializer, or that no node produces, adds no edge: the latter
// still gets its own error, naming the name, from Builder::lookup_input. Only the first producer of a
// name counts (a second one is Builder's "produced twice" error). A real cycle is refused, naming its
// nodes in order. Subgraphs (If/Loop bodies) are refused by the importer, so none are sorted here.
std::vector<size_t> import_order(const OnnxGraph& og) {
    std::unordered_set<std::string> available;
    for (const OnnxTensor& t : og.initializers) available.insert(t.name);
    for (const OnnxValueInfo& in : og.inputs) available.insert(in.name);
    const size_t n = og.nodes.size();
    std::unordered_map<std::string, size_t> producer;
    for (size_t i = 0; i < n; ++i)
        for (const std::string& o : og.nodes[i].outputs)
            if (!o.empty() && !available.count(o)) producer.emplace(o, i);
    std::vector<std::vector<size_t>> preds(n), succs(n);
    for (size_t i = 0; i < n; ++i) {
        for (const std::string& s : og.nodes[i].inputs) {
            const auto it = s.empty() ? producer.end() : producer.find(s);
            if (it == producer.end()) continue;
            std::vector<size_t>& p = preds[i];
            if (std::find(p.begin(), p.end(), it->second) != p.end()) continue;
            p.push_back(it->second);
            succs[it->second].push_back(i);
        }
    }
    std::vector<size_t> waiting(n);
    std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
    for (size_t i = 0; i < n; ++i)
        if ((waiting[i] = preds[i].size()) == 0) ready.push(i);
    std::vector<size_t> order;
    order.reserve(n);
    while (!ready.empty()) {
        const size_t i = ready.top();
        ready.pop();
        order.push_back(i);
        for (size_t s : succs[i])
            if (--waiting[s] == 0) ready.push(s);
    }
    if (order.size() == n) return order;

    // Every node left waits for another node left: walking from one to a waiting predecessor must come
    // back to a node already seen, and the nodes from there on form a cycle.
    std::vector<char> sorted(n, 0);
    for (size_t i : order) sorted[i] = 1;
    size_t at = 0;
    while (sorted[at]) ++at;
    std::vector<size_t> walk;
    std::vector<size_t> seen_at(n, SIZE_MAX);
    while (seen_at[at] == SIZE_MAX) {
        seen_at[at] = walk.size();
        walk.push_back(at);
        for (size_t p : preds[at])
            if (!sorted[p]) {
                at = p;
                break;
            }
    }
    std::vector<size_t> cycle(walk.begin() + static_cast<std::ptrdiff_t>(seen_at[at]), walk.end());
    std::reverse(cycle.begin(), cycle.end());  // the walk went from readers to producers
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());  // file order first
    std::string path;
    for (size_t i : cycle) path += "'" + display_name(og.nodes[i], i) + "' (" + og.nodes[i].op + ") -> ";
    path += "'" + display_name(og.nodes[cycle[0]], cycle[0]) + "'";
    fail(KES_ERR_CORRUPT_DATA, "onnx: the graph has a cycle (each node reads the one before): %s", path.c_str());
}

// ---- graph building and normalisation ----------------------------------------------------------------

class Builder {
public:
    Builder(int64_t opset, Graph& g) : opset_(opset), g_(g) {}

    void build(OnnxGraph& og) {
        for (const OnnxNode& n : og.nodes) {
            for (const std::string& s : n.inputs) consumed_.insert(s);
        }
        for (const OnnxValueInfo& o : og.outputs) consumed_.insert(o.name), outputs_.insert(o.name);

        for (OnnxTensor& t : og.initializers) {
            if (t.name.empty()) fail(KES_ERR_CORRUPT_DATA, "onnx: an initializer has no name");
            if (names_.count(t.name))
                fail(KES_ERR_CORRUPT_DATA, "onnx: initializer '%s' is defined twice", t.name.c_str());
            names_[t.name] = add_constant_tensor(t.name, t);
        }
        for (const OnnxValueInfo& in : og.inputs) {
            if (in.name.empty()) fail(KES_ERR_CORRUPT_DATA, "onnx: a graph input has no name");
            if (names_.count(in.name)) continue;  // an initializer: a constant (see the top of the file)
            if (!in.has_type) fail(KES_ERR_UNSUPPORTED, "onnx: graph input '%s' is not a tensor", in.name.c_str());
            const kes_dtype dtype = require_dtype_of(in.elem_type, "graph input '" + in.name + "'");
            const int32_t t = g_.add_activation(in.name, dtype, in.shape, in.has_shape);
            names_[in.name] = t;
            g_.inputs.push_back(t);
        }
        for (size_t i : import_order(og)) convert_node(og.nodes[i], i);
        for (const OnnxValueInfo& out : og.outputs) {
            const auto it = names_.find(out.name);
            if (it == names_.end())
                fail(KES_ERR_CORRUPT_DATA, "onnx: graph output '%s' is not produced by any node", out.name.c_str());
            int32_t t = it->second;
            const Tensor& x = g_.tensors[static_cast<size_t>(t)];
            const bool is_input = std::find(g_.inputs.begin(), g_.inputs.end(), t) != g_.inputs.end();
            if (x.name != out.name || x.is_const || is_input || g_.is_graph_output(t)) {
                // The name is an alias (a removed Identity) of another tensor, a constant, a graph input or
                // an output listed twice: an Identity node produces the output under its own name.
                if (x.name == out.name) {  // the output name moves to the Identity's output
                    if (is_input || g_.is_graph_output(t))
                        fail(KES_ERR_UNSUPPORTED, "onnx: graph output '%s' is a graph input or listed twice",
                             out.name.c_str());
                    g_.tensors[static_cast<size_t>(t)].name = unique_tensor_name(out.name + "_value");
                }
                const int32_t y = g_.add_activation(out.name);
                g_.add_node("Identity", {t}, {y}, unique_node_name("Identity_" + out.name));
                t = y;
            }
            g_.outputs.push_back(t);
        }
        if (g_.outputs.empty()) fail(KES_ERR_CORRUPT_DATA, "onnx: the graph has no outputs");
        compute_f16_in_f32(og);
    }

private:
    int64_t opset_;
    Graph& g_;
    std::unordered_map<std::string, int32_t> names_;
    std::unordered_set<std::string> consumed_, outputs_, node_names_;
    size_t const_counter_ = 0;

    // fp16 models (kestrel/convert.h "fp16 ONNX models"): every float16 value is computed in f32 and
    // the graph keeps its fp16 inputs and outputs. f16 constants widen to f32 (exactly); EyeLike and
    // ConstantOfShape that make float16 make f32 instead; a Cast to float16 keeps its rounding and is
    // followed by a Cast back to f32 (a later Cast to float of that value becomes a no-op, which
    // remove_noop_casts drops); an f16 graph input is read through a Cast to f32 placed first, an output
    // the file declares FLOAT16 gets a Cast to f16 placed last. The kernels then see f32 only, so an fp16
    // model runs on the fast f32 kernels, and its results differ from an fp16 runtime's by that runtime's
    // rounding of the ops' results to f16.
    void compute_f16_in_f32(const OnnxGraph& og) {
        constexpr int64_t kOnnxFloat = 1, kOnnxFloat16 = 10;
        for (Tensor& t : g_.tensors) {
            if (!t.is_const || t.dtype != KES_F16) continue;
            std::vector<uint16_t> half(t.data.size() / 2);
            std::vector<float> wide(half.size());
            if (!half.empty()) std::memcpy(half.data(), t.data.data(), half.size() * 2);
            kes_fp16_to_f32(half.data(), wide.data(), half.size());
            t.data.resize(wide.size() * 4);
            if (!wide.empty()) std::memcpy(t.data.data(), wide.data(), t.data.size());
            t.dtype = KES_F32;
        }
        std::vector<Node> nodes;
        nodes.reserve(g_.nodes.size());
        for (Node& n : g_.nodes) {
            if (n.op == "Cast" && n.attrs.get_int("to", 0) == kOnnxFloat16 && n.outputs.size() == 1) {
                // The model rounds here (the tool's Cast of a float input, or after an op it keeps in
                // float): so does Kestrel, then widens again.
                const int32_t wide = n.outputs[0];
                const int32_t half = new_activation(g_.tensors[static_cast<size_t>(wide)].name + "_f16");
                n.outputs[0] = half;
                Node back;
                back.op = "Cast";
                back.name = unique_node_name(n.name + "_to_f32");
                back.inputs = {half};
                back.outputs = {wide};
                back.attrs.set_int("to", kOnnxFloat);
                nodes.push_back(std::move(n));
                nodes.push_back(std::move(back));
                continue;
            }
            if ((n.op == "EyeLike" || n.op == "ConstantOfShape") && n.attrs.get_int("dtype", 0) == kOnnxFloat16)
                n.attrs.set_int("dtype", kOnnxFloat);
            nodes.push_back(std::move(n));
        }
        g_.nodes = std::move(nodes);
        std::vector<Node> first;
        for (int32_t in : g_.inputs) {
            if (g_.tensors[static_cast<size_t>(in)].dtype != KES_F16) continue;
            const std::string name = g_.tensors[static_cast<size_t>(in)].name;
            const int32_t wide = new_activation(name + "_f32");
            for (Node& n : g_.nodes) std::replace(n.inputs.begin(), n.inputs.end(), in, wide);
            Node cast;
            cast.op = "Cast";
            cast.name = unique_node_name(name + "_to_f32");
            cast.inputs = {in};
            cast.outputs = {wide};
            cast.attrs.set_int("to", kOnnxFloat);
            first.push_back(std::move(cast));
        }
        g_.nodes.insert(g_.nodes.begin(), std::make_move_iterator(first.begin()), std::make_move_iterator(first.end()));
        for (size_t i = 0; i < og.outputs.size() && i < g_.outputs.size(); ++i) {
            const OnnxValueInfo& declared = og.outputs[i];
            if (!declared.has_type || declared.elem_type != kOnnxFloat16) continue;
            const int32_t out = g_.outputs[i];
            const int32_t wide = new_activation(declared.name + "_f32");
            for (Node& n : g_.nodes) {
                std::replace(n.inputs.begin(), n.inputs.end(), out, wide);
                std::replace(n.outputs.begin(), n.outputs.end(), out, wide);
            }
            g_.add_node("Cast", {wide}, {out}, unique_node_name(declared.name + "_to_f16"))
                .attrs.set_int("to", kOnnxFloat16);
        }
    }

    int32_t add_constant_tensor(const std::string& name, const OnnxTensor& t) {
        Tensor x;
        x.name = name;
        x.dtype = t.dtype;
        x.shape = t.dims;
        x.has_shape = true;
        x.is_const = true;
        x.data = t.data;
        return g_.add_tensor(std::move(x));
    }

    std::string unique_node_name(std::string base) {
        std::string name = base;
        for (int k = 1; node_names_.count(name); ++k) name = base + "_" + std::to_string(k);
        node_names_.insert(name);
        return name;
    }

    std::string unique_tensor_name(const std::string& base) {
        std::string name = base;
        while (names_.count(name)) name = base + "_" + std::to_string(++const_counter_);
        return name;
    }

    int32_t const_i64(const std::string& base, const std::vector<int64_t>& v, bool scalar = false) {
        const std::string name = unique_tensor_name(base);
        const int32_t t = g_.add_constant_i64(name, scalar ? Shape{} : Shape{static_cast<int64_t>(v.size())}, v);
        names_[name] = t;
        return t;
    }

    int32_t const_f32(const std::string& base, float v) {
        const std::string name = unique_tensor_name(base);
        const int32_t t = g_.add_constant_f32(name, Shape{}, {v});
        names_[name] = t;
        return t;
    }

    int32_t new_activation(const std::string& base) {
        const std::string name = unique_tensor_name(base);
        const int32_t t = g_.add_activation(name);
        names_[name] = t;
        return t;
    }

    [[noreturn]] void unsupported(const OnnxNode& n, const std::string& node_name, const std::string& why) {
        fail(KES_ERR_UNSUPPORTED, "onnx: node '%s' (%s, opset %lld): %s", node_name.c_str(), n.op.c_str(),
             static_cast<long long>(opset_), why.c_str());
    }

    int32_t lookup_input(const OnnxNode& n, const std::string& node_name, const std::string& name) {
        if (name.empty()) return -1;
        const auto it = names_.find(name);
        if (it == names_.end())
            fail(KES_ERR_CORRUPT_DATA,
                 "onnx: node '%s' (%s) reads '%s', which is neither a graph input, an initializer "
                 "nor the output of an earlier node",
                 node_name.c_str(), n.op.c_str(), name.c_str());
        return it->second;
    }

    // Nodes come in import_order(), so the producers of the inputs are known here.
    void convert_node(const OnnxNode& n, size_t index) {
        const std::string node_name = unique_node_name(n.name.empty() ? n.op + "_" + std::to_string(index) : n.name);
        // com.microsoft: the quantized contrib ops ONNX Runtime's quantizer writes (QOperator format).
        static const std::set<std::string> microsoft_ops = {"QLinearAdd", "QLinearMul", "QLinearGlobalAveragePool",
                                                            "QLinearConcat", "QGemm"};
        if (!n.domain.empty() && n.domain != "ai.onnx" && !(n.domain == "com.microsoft" && microsoft_ops.count(n.op)))
            unsupported(n, node_name,
                        "domain '" + n.domain +
                            "' is not supported (only the default ONNX domain, and com.microsoft's QLinearAdd, "
                            "QLinearMul, QLinearGlobalAveragePool, QLinearConcat and QGemm)");
        if (n.op.empty()) fail(KES_ERR_CORRUPT_DATA, "onnx: node '%s' has no op_type", node_name.c_str());

        std::vector<int32_t> inputs;
        for (const std::string& s : n.inputs) inputs.push_back(lookup_input(n, node_name, s));
        while (!inputs.empty() && inputs.back() == -1) inputs.pop_back();

        Attrs attrs;
        const OnnxAttr* tensor_attr = nullptr;
        for (const OnnxAttr& a : n.attrs) {
            switch (a.type) {
                case OnnxAttr::Float: attrs.set_float(a.name, a.f); break;
                case OnnxAttr::Int: attrs.set_int(a.name, a.i); break;
                case OnnxAttr::String:
                    if (n.op == "Cast" && a.name == "to") {  // opset 1 spelled the type as a string
                        attrs.set_int("to", onnx_type_from_name(a.s, n, node_name));
                        break;
                    }
                    attrs.set_string(a.name, a.s);
                    break;
                case OnnxAttr::Floats: attrs.set_floats(a.name, a.floats); break;
                case OnnxAttr::Ints: attrs.set_ints(a.name, a.ints); break;
                case OnnxAttr::TensorT:
                    if (!a.has_t)
                        fail(KES_ERR_CORRUPT_DATA, "onnx: node '%s': tensor attribute '%s' holds no tensor",
                             node_name.c_str(), a.name.c_str());
                    tensor_attr = &a;
                    break;
                case OnnxAttr::Strings:
                    if (n.op == "Cast" || n.op == "Constant") break;
                    if ((n.op == "LSTM" || n.op == "GRU" || n.op == "RNN") && a.name == "activations") {
                        std::string names;
                        for (size_t k = 0; k < a.strings.size(); ++k) names += (k ? "," : "") + a.strings[k];
                        attrs.set_string(a.name, names);
                        break;
                    }
                    unsupported(n, node_name, "string-list attribute '" + a.name + "' is not supported");
                case OnnxAttr::GraphT:
                case OnnxAttr::Graphs:
                    unsupported(n, node_name, "subgraph attribute '" + a.name + "' (control flow) is not supported");
                case OnnxAttr::Undefined:
                    if (a.name.empty())
                        fail(KES_ERR_CORRUPT_DATA, "onnx: node '%s' has an unnamed attribute", node_name.c_str());
                    break;  // an attribute with no value: ignore, as onnx's checker would have refused it
                default: unsupported(n, node_name, "attribute '" + a.name + "' has an unsupported type");
            }
        }
        attrs.erase("consumed_inputs");  // opset < 6 memory hints

        // Output names: "" marks an omitted optional output; trailing ones are dropped.
        std::vector<std::string> outs = n.outputs;
        while (!outs.empty() && outs.back().empty()) outs.pop_back();
        if (outs.empty())
            fail(KES_ERR_CORRUPT_DATA, "onnx: node '%s' (%s) has no outputs", node_name.c_str(), n.op.c_str());
        for (const std::string& o : outs)
            if (!o.empty() && names_.count(o))
                fail(KES_ERR_CORRUPT_DATA, "onnx: tensor '%s' is produced twice (node '%s')", o.c_str(),
                     node_name.c_str());

        std::string op = n.op;
        auto alias = [&](const std::string& out, int32_t t) { names_[out] = t; };
        auto has_attr_input = [&](size_t i) { return i < inputs.size() && inputs[i] >= 0; };
        auto set_input = [&](size_t i, int32_t t) {
            if (inputs.size() <= i) inputs.resize(i + 1, -1);
            inputs[i] = t;
        };

        // ---- per-op normalisation ----
        if (op == "Constant") {
            OnnxTensor value;
            if (tensor_attr) {
                value = tensor_attr->t;
            } else if (const Attr* vf = attrs.find("value_float")) {
                const float v = vf->kind == AttrKind::Float ? vf->f : static_cast<float>(vf->i);
                value.dtype = KES_F32, value.data.resize(4), std::memcpy(value.data.data(), &v, 4);
            } else if (const Attr* vfs = attrs.find("value_floats")) {
                value.dtype = KES_F32, value.dims = {static_cast<int64_t>(vfs->floats.size())};
                value.data.resize(vfs->floats.size() * 4);
                if (!vfs->floats.empty()) std::memcpy(value.data.data(), vfs->floats.data(), value.data.size());
            } else if (const Attr* vi = attrs.find("value_int")) {
                value.dtype = KES_I64, value.onnx_type = 7, value.data.resize(8);
                std::memcpy(value.data.data(), &vi->i, 8);
            } else if (const Attr* vis = attrs.find("value_ints")) {
                value.dtype = KES_I64, value.onnx_type = 7, value.dims = {static_cast<int64_t>(vis->ints.size())};
                value.data.resize(vis->ints.size() * 8);
                if (!vis->ints.empty()) std::memcpy(value.data.data(), vis->ints.data(), value.data.size());
            } else {
                unsupported(n, node_name, "only tensor, float(s) and int(s) values are supported");
            }
            if (outs[0].empty()) return;
            names_[outs[0]] = add_constant_tensor(outs[0], value);
            return;
        }
        if (tensor_attr && op != "ConstantOfShape")
            unsupported(n, node_name, "tensor attribute '" + tensor_attr->name + "' is not supported");

        if (op == "Identity" || op == "Dropout") {
            if (inputs.empty() || inputs[0] < 0)
                fail(KES_ERR_CORRUPT_DATA, "onnx: node '%s' (%s) has no input", node_name.c_str(), op.c_str());
            const bool mask_used = outs.size() > 1 && !outs[1].empty() && consumed_.count(outs[1]);
            if (op == "Dropout") {
                attrs.erase("is_test"), attrs.erase("ratio");
                if (attrs.get_int("training_mode", 0) != 0) unsupported(n, node_name, "training mode");
            }
            if (!mask_used && !outputs_.count(outs[0])) {
                alias(outs[0], inputs[0]);
                return;
            }
            if (!mask_used) outs.resize(1);
        } else if (op == "Clip" && opset_ < 11) {
            const float lo = attrs.get_float("min", -INFINITY), hi = attrs.get_float("max", INFINITY);
            attrs.erase("min"), attrs.erase("max");
            inputs.resize(1);
            inputs.push_back(const_f32(node_name + "_min", lo));
            inputs.push_back(const_f32(node_name + "_max", hi));
        } else if (op == "Slice" && opset_ < 10) {
            inputs.resize(1);
            inputs.push_back(const_i64(node_name + "_starts", attrs.require_ints("starts")));
            inputs.push_back(const_i64(node_name + "_ends", attrs.require_ints("ends")));
            if (attrs.has("axes")) inputs.push_back(const_i64(node_name + "_axes", attrs.get_ints("axes")));
            attrs.erase("starts"), attrs.erase("ends"), attrs.erase("axes");
        } else if ((op == "Squeeze" || op == "Unsqueeze") && opset_ < 13) {
            if (attrs.has("axes")) set_input(1, const_i64(node_name + "_axes", attrs.get_ints("axes")));
            attrs.erase("axes");
        } else if (op == "Split" && opset_ < 13) {
            if (attrs.has("split") && !has_attr_input(1))
                set_input(1, const_i64(node_name + "_split", attrs.get_ints("split")));
            attrs.erase("split");
        } else if (op == "Pad" && opset_ < 11) {
            std::vector<int64_t> pads = attrs.has("pads") ? attrs.get_ints("pads") : attrs.get_ints("paddings");
            const float value = attrs.get_float("value", 0.0f);
            attrs.erase("pads"), attrs.erase("paddings"), attrs.erase("value");
            inputs.resize(1);
            inputs.push_back(const_i64(node_name + "_pads", pads));
            inputs.push_back(const_f32(node_name + "_value", value));
        } else if (op == "ReduceSum" && opset_ < 13) {
            if (attrs.has("axes")) set_input(1, const_i64(node_name + "_axes", attrs.get_ints("axes")));
            attrs.erase("axes");
        } else if (op == "Reshape" && opset_ < 5) {
            inputs.resize(1);
            inputs.push_back(const_i64(node_name + "_shape", attrs.require_ints("shape")));
            attrs.erase("shape");
        } else if (op == "TopK" && opset_ < 10) {
            inputs.resize(1);
            inputs.push_back(const_i64(node_name + "_k", {attrs.require_int("k")}));
            attrs.erase("k");
        } else if (op == "Upsample" || (op == "Resize" && opset_ < 11)) {
            if (inputs.empty() || inputs[0] < 0)
                fail(KES_ERR_CORRUPT_DATA, "onnx: node '%s' (%s) has no input", node_name.c_str(), op.c_str());
            int32_t scales = -1;
            if (op == "Upsample" && opset_ < 9) {
                const std::vector<float> s = attrs.get_floats("scales");
                if (s.empty()) unsupported(n, node_name, "Upsample needs the scales attribute");
                const std::string name = unique_tensor_name(node_name + "_scales");
                scales = g_.add_constant_f32(name, Shape{static_cast<int64_t>(s.size())}, s);
                names_[name] = scales;
            } else {
                if (inputs.size() < 2 || inputs[1] < 0) unsupported(n, node_name, "the scales input is missing");
                scales = inputs[1];
            }
            std::string mode = attrs.get_string("mode", "nearest");
            if (mode == "bilinear") mode = "linear";
            attrs = Attrs();
            attrs.set_string("mode", mode);
            attrs.set_string("coordinate_transformation_mode", "asymmetric");
            attrs.set_string("nearest_mode", "floor");
            inputs = {inputs[0], -1, scales};
            op = "Resize";
        } else if (op == "BatchNormalization") {
            if (attrs.get_int("spatial", 1) == 0) unsupported(n, node_name, "spatial = 0 is not supported");
            attrs.erase("spatial"), attrs.erase("is_test");
            // Training outputs (mean, var, saved_*) are only valid in training mode; drop unused ones.
            while (outs.size() > 1 && (outs.back().empty() || !consumed_.count(outs.back()))) outs.pop_back();
        } else if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && opset_ < 13) {
            const int64_t axis = attrs.get_int("axis", 1);
            if (axis != -1) {
                if (inputs.empty() || inputs[0] < 0)
                    fail(KES_ERR_CORRUPT_DATA, "onnx: node '%s' has no input", node_name.c_str());
                const int32_t x = inputs[0];
                const int32_t flat = new_activation(node_name + "_flat");
                g_.add_node("Flatten", {x}, {flat}, unique_node_name(node_name + "_flatten"))
                    .attrs.set_int("axis", axis);
                const int32_t soft = new_activation(node_name + "_2d");
                g_.add_node(op, {flat}, {soft}, node_name).attrs.set_int("axis", -1);
                const int32_t shape = new_activation(node_name + "_shape");
                g_.add_node("Shape", {x}, {shape}, unique_node_name(node_name + "_shape"));
                const int32_t y = g_.add_activation(outs[0]);
                names_[outs[0]] = y;
                g_.add_node("Reshape", {soft, shape}, {y}, unique_node_name(node_name + "_reshape"));
                check_registered(n, node_name, op);
                return;
            }
        } else if (op == "Gemm" || op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" ||
                   op == "And" || op == "Or" || op == "Xor" || op == "Equal" || op == "Greater" || op == "Less") {
            if (opset_ < 7) {
                if (attrs.has("axis")) unsupported(n, node_name, "legacy broadcast with an axis is not supported");
                attrs.erase("broadcast");
            }
        } else if (op == "QGemm") {
            // com.microsoft's QGemm (ONNX Runtime's QOperator form of Gemm): QLinearMatMul with the int32
            // bias as its input 8, transA/transB as Transposes (folded for a constant B). Alpha is part
            // of ONNX Runtime's requantization multiplier, whose f32 rounding Kestrel's does not repeat.
            if (attrs.get_float("alpha", 1.0f) != 1.0f) unsupported(n, node_name, "alpha other than 1");
            if (inputs.size() < 8 || inputs[7] < 0)
                unsupported(n, node_name, "a float output (no y_scale) is not supported");
            for (const auto& [axis_input, attr] : {std::pair<size_t, const char*>{0, "transA"}, {3, "transB"}}) {
                if (attrs.get_int(attr, 0) == 0) continue;
                const int32_t t = new_activation(node_name + "_" + attr);
                g_.add_node("Transpose", {inputs[axis_input]}, {t}, unique_node_name(node_name + "_" + attr))
                    .attrs.set_ints("perm", {1, 0});
                inputs[axis_input] = t;
            }
            const int32_t bias = inputs.size() > 6 ? inputs[6] : -1;
            inputs = {inputs[0], inputs[1], inputs[2], inputs[3],
                      inputs[4], inputs[5], inputs[7], inputs.size() > 8 ? inputs[8] : -1,
                      bias};
            while (!inputs.empty() && inputs.back() == -1) inputs.pop_back();
            attrs = Attrs{};
            op = "QLinearMatMul";
        } else if (op == "Concat" && opset_ < 4 && !attrs.has("axis")) {
            attrs.set_int("axis", 1);
        } else if (op == "ConstantOfShape") {
            if (tensor_attr) {
                const OnnxTensor& v = tensor_attr->t;
                if (checked_elements(v.dims, "ConstantOfShape value") != 1)
                    fail(KES_ERR_CORRUPT_DATA, "onnx: node '%s': ConstantOfShape value must hold one element",
                         node_name.c_str());
                attrs.set_int("dtype", v.onnx_type);  // misc.cpp: TensorProto codes
                set_scalar_value_attr(attrs, v);
            }
        }

        check_registered(n, node_name, op);

        std::vector<int32_t> out_ids;
        for (size_t i = 0; i < outs.size(); ++i) {
            const std::string& o = outs[i];
            if (!o.empty() && names_.count(o))
                fail(KES_ERR_CORRUPT_DATA, "onnx: tensor '%s' is produced twice (node '%s')", o.c_str(),
                     node_name.c_str());
            const int32_t t =
                o.empty() ? new_activation(node_name + "_unused_output_" + std::to_string(i)) : g_.add_activation(o);
            if (!o.empty()) names_[o] = t;
            out_ids.push_back(t);
        }
        Node& node = g_.add_node(op, inputs, out_ids, node_name);
        node.attrs = std::move(attrs);
    }

    static void set_scalar_value_attr(Attrs& attrs, const OnnxTensor& v) {
        const uint8_t* p = v.data.data();
        switch (v.dtype) {
            case KES_F32: {
                float f;
                std::memcpy(&f, p, 4);
                attrs.set_float("value", f);
                break;
            }
            case KES_F64: {
                double d;
                std::memcpy(&d, p, 8);
                attrs.set_float("value", static_cast<float>(d));
                break;
            }
            case KES_F16: {
                uint16_t h;
                std::memcpy(&h, p, 2);
                attrs.set_float("value", kes_fp16_to_float(h));
                break;
            }
            case KES_I64:
            case KES_U64: {
                int64_t i;
                std::memcpy(&i, p, 8);
                attrs.set_int("value", i);
                break;
            }
            case KES_I32: {
                int32_t i;
                std::memcpy(&i, p, 4);
                attrs.set_int("value", i);
                break;
            }
            case KES_U32: {
                uint32_t i;
                std::memcpy(&i, p, 4);
                attrs.set_int("value", i);
                break;
            }
            case KES_I16: {
                int16_t i;
                std::memcpy(&i, p, 2);
                attrs.set_int("value", i);
                break;
            }
            case KES_U16: {
                uint16_t i;
                std::memcpy(&i, p, 2);
                attrs.set_int("value", i);
                break;
            }
            case KES_I8: attrs.set_int("value", static_cast<int8_t>(p[0])); break;
            default: attrs.set_int("value", p[0]); break;  // u8, bool
        }
    }

    int64_t onnx_type_from_name(const std::string& s, const OnnxNode& n, const std::string& node_name) {
        for (int32_t code = 1; code <= 16; ++code)
            if (s == onnx_dtype_name(code)) return code;
        unsupported(n, node_name, "unknown type name '" + s + "'");
    }

    void check_registered(const OnnxNode& n, const std::string& node_name, const std::string& op) {
        if (!find_op(op)) {
            if (op != n.op) unsupported(n, node_name, "becomes op '" + op + "', which this build does not implement");
            unsupported(n, node_name, "op '" + op + "' is not supported by Kestrel");
        }
    }
};

}  // namespace

Graph import_onnx(const uint8_t* data, size_t size) {
    if (!data || size == 0) fail(KES_ERR_CORRUPT_DATA, "onnx: the file is empty");
    Reader model(data, size, "ModelProto");
    Field f;
    bool has_graph = false;
    Field graph_field;
    int64_t opset = -1;
    int64_t ir_version = 0;
    size_t opset_imports = 0;
    while (model.next(f)) {
        if (f.number == 1) {
            pb::expect_type(model, f, WireType::Varint);
            ir_version = f.as_int64();
        } else if (f.number == 7) {
            pb::expect_type(model, f, WireType::Bytes);
            if (has_graph) fail(KES_ERR_CORRUPT_DATA, "onnx: the model has two graphs");
            graph_field = f, has_graph = true;
        } else if (f.number == 8) {
            Reader os = model.message(f, "OperatorSetIdProto");
            std::string domain;
            int64_t version = 0;
            Field x;
            while (os.next(x)) {
                if (x.number == 1) domain = str(x, os);
                if (x.number == 2) {
                    pb::expect_type(os, x, WireType::Varint);
                    version = x.as_int64();
                }
            }
            if (domain.empty() || domain == "ai.onnx") opset = version;
            ++opset_imports;
        }
    }
    if (!has_graph) fail(KES_ERR_CORRUPT_DATA, "onnx: no graph in the file (is it an ONNX model?)");
    if (opset < 0) {
        // IR version 3 made opset_import mandatory; older files are opset 1.
        if (ir_version >= 3 && opset_imports == 0)
            fail(KES_ERR_CORRUPT_DATA, "onnx: the model imports no opset (opset_import)");
        opset = 1;  // only other domains imported: their nodes are refused by domain below
    }
    if (opset < 1 || opset > 18)
        fail(KES_ERR_UNSUPPORTED, "onnx: opset %lld is not supported (Kestrel reads opsets 1-18)",
             static_cast<long long>(opset));
    OnnxGraph og = parse_graph(model.message(graph_field, "GraphProto"));
    Graph g;
    g.metadata.source_format = "onnx";
    Builder(opset, g).build(og);
    return g;
}

}  // namespace kes::ir

namespace kes::convert {

ir::Tensor import_onnx_tensor(const uint8_t* data, size_t size) {
    if (!data && size) fail(KES_ERR_CORRUPT_DATA, "onnx: tensor file has no data");
    ir::OnnxTensor t = ir::parse_tensor(pb::Reader(data, size, "TensorProto"), "tensor");
    ir::Tensor x;
    x.name = t.name;
    x.dtype = t.dtype;
    x.shape = t.dims;
    x.has_shape = true;
    x.is_const = true;
    x.data = std::move(t.data);
    return x;
}

}  // namespace kes::convert
