// protobuf_reader.cpp — the wire-format reader of protobuf_reader.hpp.
#include "protobuf_reader.hpp"

#include <cstring>

#include "kes/error.hpp"

namespace kes::pb {

namespace {

const char* wire_type_name(WireType t) {
    switch (t) {
        case WireType::Varint: return "varint";
        case WireType::Fixed64: return "fixed64";
        case WireType::Bytes: return "length-delimited";
        case WireType::Fixed32: return "fixed32";
    }
    return "?";
}

// A packed payload is a sequence of values with no tags; walked with the same bounds rules.
uint64_t read_varint_at(const uint8_t*& p, const uint8_t* end, bool& ok) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p >= end) {
            ok = false;
            return 0;
        }
        const uint8_t b = *p++;
        v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    ok = false;  // more than 10 bytes
    return 0;
}

}  // namespace

float Field::as_float() const {
    const uint32_t bits = static_cast<uint32_t>(value);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

double Field::as_double() const {
    double d;
    std::memcpy(&d, &value, 8);
    return d;
}

Reader::Reader(const uint8_t* data, size_t size, const char* what, size_t base_offset, int depth)
    : begin_(data), pos_(data), end_(data + size), what_(what), base_offset_(base_offset), depth_(depth) {
    if (depth > kMaxDepth)
        fail(KES_ERR_CORRUPT_DATA, "protobuf: %s at byte %zu is nested deeper than %d messages", what, base_offset,
             kMaxDepth);
    if (!data && size) fail(KES_ERR_CORRUPT_DATA, "protobuf: %s has no data", what);
}

uint64_t Reader::read_varint() {
    bool ok = true;
    const size_t at = base_offset_ + static_cast<size_t>(pos_ - begin_);
    const uint64_t v = read_varint_at(pos_, end_, ok);
    if (!ok) fail(KES_ERR_CORRUPT_DATA, "protobuf: %s: truncated or over-long varint at byte %zu", what_, at);
    return v;
}

bool Reader::next(Field& f) {
    if (pos_ >= end_) return false;
    const size_t tag_at = base_offset_ + static_cast<size_t>(pos_ - begin_);
    const uint64_t tag = read_varint();
    const uint64_t number = tag >> 3;
    const unsigned wire = static_cast<unsigned>(tag & 7);
    if (number == 0 || number > 0x1fffffff)
        fail(KES_ERR_CORRUPT_DATA, "protobuf: %s: invalid field number %llu at byte %zu", what_,
             static_cast<unsigned long long>(number), tag_at);
    f = Field{};
    f.number = static_cast<uint32_t>(number);
    const size_t left = static_cast<size_t>(end_ - pos_);
    switch (wire) {
        case 0:
            f.type = WireType::Varint;
            f.offset = base_offset_ + static_cast<size_t>(pos_ - begin_);
            f.value = read_varint();
            break;
        case 1:
            f.type = WireType::Fixed64;
            if (left < 8)
                fail(KES_ERR_CORRUPT_DATA, "protobuf: %s: field %u (fixed64) at byte %zu runs past the end", what_,
                     f.number, tag_at);
            f.offset = base_offset_ + static_cast<size_t>(pos_ - begin_);
            std::memcpy(&f.value, pos_, 8);  // little-endian on every target Kestrel builds for
            pos_ += 8;
            break;
        case 5: {
            f.type = WireType::Fixed32;
            if (left < 4)
                fail(KES_ERR_CORRUPT_DATA, "protobuf: %s: field %u (fixed32) at byte %zu runs past the end", what_,
                     f.number, tag_at);
            uint32_t v;
            f.offset = base_offset_ + static_cast<size_t>(pos_ - begin_);
            std::memcpy(&v, pos_, 4);
            f.value = v;
            pos_ += 4;
            break;
        }
        case 2: {
            f.type = WireType::Bytes;
            const uint64_t len = read_varint();
            const size_t avail = static_cast<size_t>(end_ - pos_);
            if (len > avail)
                fail(KES_ERR_CORRUPT_DATA,
                     "protobuf: %s: field %u at byte %zu declares %llu bytes but only %zu remain (truncated file?)",
                     what_, f.number, tag_at, static_cast<unsigned long long>(len), avail);
            f.data = pos_;
            f.size = static_cast<size_t>(len);
            f.offset = base_offset_ + static_cast<size_t>(pos_ - begin_);
            pos_ += len;
            break;
        }
        default:
            fail(KES_ERR_CORRUPT_DATA,
                 "protobuf: %s: field %u at byte %zu has wire type %u (groups and unknown types "
                 "are not valid here)",
                 what_, f.number, tag_at, wire);
    }
    return true;
}

Reader Reader::message(const Field& field, const char* what) const {
    if (field.type != WireType::Bytes)
        fail(KES_ERR_CORRUPT_DATA, "protobuf: %s: field %u (a %s) is %s, expected a message", what_, field.number, what,
             wire_type_name(field.type));
    return Reader(field.data, field.size, what, field.offset, depth_ + 1);
}

void Reader::fail_field(const Field& field, const char* problem) const {
    fail(KES_ERR_CORRUPT_DATA, "protobuf: %s: field %u at byte %zu: %s", what_, field.number, field.offset, problem);
}

void expect_type(const Reader& r, const Field& field, WireType type) {
    if (field.type != type) {
        const std::string msg = format("is %s, expected %s", wire_type_name(field.type), wire_type_name(type));
        r.fail_field(field, msg.c_str());
    }
}

void append_varints(const Reader& r, const Field& field, std::vector<int64_t>& out) {
    if (field.type == WireType::Varint) {
        out.push_back(field.as_int64());
        return;
    }
    expect_type(r, field, WireType::Bytes);
    const uint8_t* p = field.data;
    const uint8_t* end = field.data + field.size;
    while (p < end) {
        bool ok = true;
        const uint64_t v = read_varint_at(p, end, ok);
        if (!ok) r.fail_field(field, "truncated varint in a packed list");
        out.push_back(static_cast<int64_t>(v));
    }
}

void append_fixed32(const Reader& r, const Field& field, std::vector<uint32_t>& out) {
    if (field.type == WireType::Fixed32) {
        out.push_back(static_cast<uint32_t>(field.value));
        return;
    }
    expect_type(r, field, WireType::Bytes);
    if (field.size % 4) r.fail_field(field, "packed fixed32 list is not a multiple of 4 bytes");
    const size_t n = field.size / 4;
    const size_t at = out.size();
    out.resize(at + n);
    if (n) std::memcpy(out.data() + at, field.data, n * 4);
}

void append_fixed64(const Reader& r, const Field& field, std::vector<uint64_t>& out) {
    if (field.type == WireType::Fixed64) {
        out.push_back(field.value);
        return;
    }
    expect_type(r, field, WireType::Bytes);
    if (field.size % 8) r.fail_field(field, "packed fixed64 list is not a multiple of 8 bytes");
    const size_t n = field.size / 8;
    const size_t at = out.size();
    out.resize(at + n);
    if (n) std::memcpy(out.data() + at, field.data, n * 8);
}

void append_floats(const Reader& r, const Field& field, std::vector<float>& out) {
    if (field.type == WireType::Fixed32) {
        out.push_back(field.as_float());
        return;
    }
    expect_type(r, field, WireType::Bytes);
    if (field.size % 4) r.fail_field(field, "packed float list is not a multiple of 4 bytes");
    const size_t n = field.size / 4;
    const size_t at = out.size();
    out.resize(at + n);
    if (n) std::memcpy(out.data() + at, field.data, n * 4);
}

}  // namespace kes::pb
