// test_onnx_builder.hpp — writes small ONNX files in memory for the converter tests (a minimal
// protobuf writer plus ModelProto/GraphProto/NodeProto helpers; field numbers as in onnx.proto), so the
// tests need neither python nor data files and can build malformed files on purpose.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kes_test {

class Pb {
public:
    std::vector<uint8_t> bytes;

    Pb& varint(uint32_t field, uint64_t v) {
        tag(field, 0);
        put_varint(v);
        return *this;
    }
    Pb& fixed32(uint32_t field, float f) {
        tag(field, 5);
        uint8_t b[4];
        std::memcpy(b, &f, 4);
        bytes.insert(bytes.end(), b, b + 4);
        return *this;
    }
    Pb& str(uint32_t field, const std::string& s) { return raw(field, s.data(), s.size()); }
    Pb& msg(uint32_t field, const Pb& m) { return raw(field, m.bytes.data(), m.bytes.size()); }
    Pb& raw(uint32_t field, const void* data, size_t n) {
        tag(field, 2);
        put_varint(n);
        const uint8_t* p = static_cast<const uint8_t*>(data);
        bytes.insert(bytes.end(), p, p + n);
        return *this;
    }
    Pb& packed_varints(uint32_t field, const std::vector<int64_t>& v) {
        Pb inner;
        for (int64_t x : v) inner.put_varint(static_cast<uint64_t>(x));
        return msg(field, inner);
    }
    Pb& packed_floats(uint32_t field, const std::vector<float>& v) { return raw(field, v.data(), v.size() * 4); }

    void put_varint(uint64_t v) {
        while (v >= 0x80) {
            bytes.push_back(static_cast<uint8_t>(v | 0x80));
            v >>= 7;
        }
        bytes.push_back(static_cast<uint8_t>(v));
    }

private:
    void tag(uint32_t field, uint32_t wire) { put_varint((uint64_t{field} << 3) | wire); }
};

// TensorProto data types.
enum OnnxType : int {
    kFloat = 1,
    kUint8 = 2,
    kInt8 = 3,
    kInt32 = 6,
    kInt64 = 7,
    kBool = 9,
    kFloat16 = 10,
    kDouble = 11
};

inline Pb tensor_f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v,
                     bool raw = true) {
    Pb t;
    for (int64_t d : dims) t.varint(1, static_cast<uint64_t>(d));  // unpacked dims: both forms must read
    t.varint(2, kFloat).str(8, name);
    if (raw)
        t.raw(9, v.data(), v.size() * 4);
    else
        t.packed_floats(4, v);
    return t;
}

inline Pb tensor_i64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v,
                     bool raw = false) {
    Pb t;
    t.packed_varints(1, dims).varint(2, kInt64).str(8, name);
    if (raw)
        t.raw(9, v.data(), v.size() * 8);
    else
        t.packed_varints(7, v);
    return t;
}

// ValueInfoProto of a tensor; a dim < 0 is written as a dim_param.
inline Pb value_info(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
    Pb shape;
    for (int64_t d : dims) {
        Pb dim;
        if (d >= 0)
            dim.varint(1, static_cast<uint64_t>(d));
        else
            dim.str(2, "N");
        shape.msg(1, dim);
    }
    Pb tensor_type;
    tensor_type.varint(1, static_cast<uint64_t>(elem_type)).msg(2, shape);
    Pb type;
    type.msg(1, tensor_type);
    Pb vi;
    vi.str(1, name).msg(2, type);
    return vi;
}

inline Pb attr_int(const std::string& name, int64_t v) {
    Pb a;
    a.str(1, name).varint(20, 2).varint(3, static_cast<uint64_t>(v));
    return a;
}
inline Pb attr_float(const std::string& name, float v) {
    Pb a;
    a.str(1, name).varint(20, 1).fixed32(2, v);
    return a;
}
inline Pb attr_ints(const std::string& name, const std::vector<int64_t>& v) {
    Pb a;
    a.str(1, name).varint(20, 7);
    for (int64_t x : v) a.varint(8, static_cast<uint64_t>(x));  // unpacked, as onnx's python writes
    return a;
}
inline Pb attr_floats(const std::string& name, const std::vector<float>& v) {
    Pb a;
    a.str(1, name).varint(20, 6).packed_floats(7, v);
    return a;
}
inline Pb attr_string(const std::string& name, const std::string& v) {
    Pb a;
    a.str(1, name).varint(20, 3).str(4, v);
    return a;
}
inline Pb attr_strings(const std::string& name, const std::vector<std::string>& v) {
    Pb a;
    a.str(1, name).varint(20, 8);
    for (const std::string& x : v) a.str(9, x);
    return a;
}
inline Pb attr_tensor(const std::string& name, const Pb& t) {
    Pb a;
    a.str(1, name).varint(20, 4).msg(5, t);
    return a;
}

inline Pb node(const std::string& op, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
               const std::vector<Pb>& attrs = {}, const std::string& name = {}) {
    Pb n;
    for (const std::string& s : inputs) n.str(1, s);
    for (const std::string& s : outputs) n.str(2, s);
    if (!name.empty()) n.str(3, name);
    n.str(4, op);
    for (const Pb& a : attrs) n.msg(5, a);
    return n;
}

struct OnnxGraphSpec {
    std::vector<Pb> nodes, initializers, inputs, outputs;
};

inline std::vector<uint8_t> onnx_model(const OnnxGraphSpec& s, int64_t opset = 13) {
    Pb graph;
    for (const Pb& n : s.nodes) graph.msg(1, n);
    graph.str(2, "test");
    for (const Pb& t : s.initializers) graph.msg(5, t);
    for (const Pb& i : s.inputs) graph.msg(11, i);
    for (const Pb& o : s.outputs) graph.msg(12, o);
    Pb opset_id;
    opset_id.str(1, "").varint(2, static_cast<uint64_t>(opset));
    Pb model;
    model.varint(1, 8).str(2, "kestrel-test").msg(7, graph).msg(8, opset_id);
    return model.bytes;
}

}  // namespace kes_test
