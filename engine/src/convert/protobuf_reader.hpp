// protobuf_reader.hpp — a small, hardened reader of the protobuf wire format (enough for ONNX files),
// so the converter needs no libprotobuf and no generated code.
//
// A Reader walks the fields of one message in [data, data + size): varints, fixed32/64 and
// length-delimited fields (sub-messages, strings, bytes, packed repeated scalars). Every read is
// bounds-checked; a malformed message (truncated varint, length past the end, a group or unknown wire
// type, nesting deeper than kMaxDepth) throws kes::Error(KES_ERR_CORRUPT_DATA) naming what was being read
// and the byte offset from the start of the file. Nothing is copied: fields point into the input, which
// must outlive the reader and its fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kes::pb {

enum class WireType : uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

// ONNX nests model → graph → node → attribute → tensor/graph (subgraphs of If/Loop nest further).
constexpr int kMaxDepth = 32;

struct Field {
    uint32_t number = 0;
    WireType type = WireType::Varint;
    uint64_t value = 0;             // Varint, Fixed32, Fixed64: the raw bits
    const uint8_t* data = nullptr;  // Bytes: the payload
    size_t size = 0;
    size_t offset = 0;  // of the payload / value, from the start of the file (for messages)

    int64_t as_int64() const { return static_cast<int64_t>(value); }
    int32_t as_int32() const { return static_cast<int32_t>(static_cast<uint32_t>(value)); }
    float as_float() const;    // Fixed32
    double as_double() const;  // Fixed64
    std::string_view as_string() const { return {reinterpret_cast<const char*>(data), size}; }
};

class Reader {
public:
    // `base_offset`: where data starts in the file (for messages); `what`: the message kind, e.g.
    // "GraphProto", used in error messages.
    Reader(const uint8_t* data, size_t size, const char* what, size_t base_offset = 0, int depth = 0);

    // The next field, or false at the end of the message. Throws CORRUPT_DATA for malformed input.
    bool next(Field& field);

    // The message in a length-delimited field (one level deeper). Throws CORRUPT_DATA when `field` is
    // not length-delimited or the nesting is too deep.
    Reader message(const Field& field, const char* what) const;

    const char* what() const { return what_; }
    int depth() const { return depth_; }

    // Throws CORRUPT_DATA naming this message, the field and `problem`.
    [[noreturn]] void fail_field(const Field& field, const char* problem) const;

private:
    uint64_t read_varint();
    const uint8_t* begin_;
    const uint8_t* pos_;
    const uint8_t* end_;
    const char* what_;
    size_t base_offset_;
    int depth_;
};

// Repeated scalar fields arrive either packed (one length-delimited field) or one value per field;
// these append the values of one field in either form (checked against the wire type).
void append_varints(const Reader& r, const Field& field, std::vector<int64_t>& out);
void append_fixed32(const Reader& r, const Field& field, std::vector<uint32_t>& out);
void append_fixed64(const Reader& r, const Field& field, std::vector<uint64_t>& out);
void append_floats(const Reader& r, const Field& field, std::vector<float>& out);  // fixed32 as float

// Checks a field's wire type (CORRUPT_DATA naming the field otherwise).
void expect_type(const Reader& r, const Field& field, WireType type);

}  // namespace kes::pb
