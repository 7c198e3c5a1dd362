// The .npy reader and writer of kes/npy.hpp.
#include "kes/npy.hpp"

#include <cstring>

#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/math.hpp"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the reader hands out little-endian numbers as they are; a big-endian port needs byte swaps here"
#endif

namespace kes {
namespace npy {
namespace {

const struct {
    const char* code;
    kes_dtype dtype;
} kTypes[] = {{"f4", KES_F32}, {"f2", KES_F16}, {"f8", KES_F64}, {"i1", KES_I8},  {"i2", KES_I16}, {"i4", KES_I32},
              {"i8", KES_I64}, {"u1", KES_U8},  {"u2", KES_U16}, {"u4", KES_U32}, {"u8", KES_U64}, {"b1", KES_BOOL}};

[[noreturn]] void corrupt(const char* what) {
    KES_FAIL(KES_ERR_CORRUPT_DATA, "npy: %s", what);
}

// A cursor over the Python dict literal of a header, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1000, 128), }
class DictParser {
public:
    DictParser(const char* p, size_t n) : p_(p), end_(p + n) {}

    void ws() {
        while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
    }
    bool eat(char c) {
        ws();
        if (p_ < end_ && *p_ == c) {
            ++p_;
            return true;
        }
        return false;
    }
    bool next_is(char c) {
        ws();
        return p_ < end_ && *p_ == c;
    }
    void expect(char c, const char* what) {
        if (!eat(c)) KES_FAIL(KES_ERR_CORRUPT_DATA, "npy: malformed header (%s)", what);
    }
    std::string str() {
        ws();
        if (p_ >= end_ || (*p_ != '\'' && *p_ != '"')) corrupt("malformed header (expected a string)");
        const char q = *p_++;
        std::string s;
        while (p_ < end_ && *p_ != q) {
            if (s.size() >= 64) corrupt("header string longer than 64 characters");
            s.push_back(*p_++);
        }
        if (p_ >= end_) corrupt("unterminated string in the header");
        ++p_;
        return s;
    }
    bool boolean() {
        ws();
        if (end_ - p_ >= 4 && std::memcmp(p_, "True", 4) == 0) {
            p_ += 4;
            return true;
        }
        if (end_ - p_ >= 5 && std::memcmp(p_, "False", 5) == 0) {
            p_ += 5;
            return false;
        }
        corrupt("fortran_order must be True or False");
    }
    int64_t integer() {
        ws();
        if (p_ >= end_ || *p_ < '0' || *p_ > '9') corrupt("shape holds something other than a non-negative integer");
        uint64_t v = 0;
        while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
            if (!checked_mul<uint64_t>(v, 10, &v) || !checked_add<uint64_t>(v, uint64_t(*p_++ - '0'), &v) ||
                v > uint64_t{INT64_MAX})
                corrupt("shape dimension overflows");
        }
        if (p_ < end_ && *p_ == 'L') ++p_;  // Python 2's long, in files NumPy wrote under Python 2
        return static_cast<int64_t>(v);
    }
    std::vector<int64_t> tuple() {
        expect('(', "shape must be a tuple");
        std::vector<int64_t> v;
        while (!eat(')')) {
            if (v.size() == KES_TENSOR_MAX_DIMS)
                KES_FAIL(KES_ERR_UNSUPPORTED, "npy: more than %d dimensions", KES_TENSOR_MAX_DIMS);
            v.push_back(integer());
            if (!eat(',')) {
                expect(')', "shape tuple");
                break;
            }
        }
        return v;
    }
    bool at_end() {
        ws();
        return p_ == end_;
    }

private:
    const char* p_;
    const char* end_;
};

kes_dtype dtype_of(const std::string& descr) {
    // A byte order ('<' little, '=' native, '|' not applicable, none) then a kind and an item size.
    const bool has_order = !descr.empty() && std::strchr("<>=|", descr[0]) != nullptr;
    const std::string code = has_order ? descr.substr(1) : descr;
    for (const auto& k : kTypes)
        if (code == k.code) {
            if (has_order && descr[0] == '>' && kes_dtype_size(k.dtype) > 1)
                KES_FAIL(KES_ERR_UNSUPPORTED, "npy: dtype '%s' is big-endian; save arr.astype('<%s')", descr.c_str(),
                         k.code);
            return k.dtype;
        }
    KES_FAIL(KES_ERR_UNSUPPORTED, "npy: dtype '%s' is not supported (f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1)",
             descr.c_str());
}

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

const char* code_of(kes_dtype dtype) {
    for (const auto& k : kTypes)
        if (k.dtype == dtype) return k.code;
    KES_FAIL(KES_ERR_UNSUPPORTED, "npy: %s has no .npy dtype", kes_dtype_name(dtype));
}

// product(shape) × dtype size; false when it overflows.
bool byte_count(kes_dtype dtype, const std::vector<int64_t>& shape, uint64_t* out) {
    uint64_t n = kes_dtype_size(dtype);
    for (int64_t d : shape)
        if (d < 0 || !checked_mul<uint64_t>(n, static_cast<uint64_t>(d), &n)) return false;
    *out = n;
    return true;
}

}  // namespace

Array parse(const uint8_t* data, size_t size) {
    static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (!data || size < 10 || std::memcmp(data, kMagic, 6) != 0) corrupt("not a .npy file (no \\x93NUMPY magic)");
    const uint8_t major = data[6];
    size_t header_len = 0, header_at = 0;
    if (major == 1) {
        header_len = size_t{data[8]} | size_t{data[9]} << 8;
        header_at = 10;
    } else if (major == 2 || major == 3) {  // 3.0: the same with a UTF-8 header, which we read as bytes
        if (size < 12) corrupt("truncated header length");
        header_len = size_t{data[8]} | size_t{data[9]} << 8 | size_t{data[10]} << 16 | size_t{data[11]} << 24;
        header_at = 12;
    } else {
        KES_FAIL(KES_ERR_UNSUPPORTED, "npy: format version %u.%u (this reader knows 1.0, 2.0 and 3.0)", major, data[7]);
    }
    if (header_len > size - header_at)
        KES_FAIL(KES_ERR_CORRUPT_DATA, "npy: header of %zu bytes, but only %zu bytes follow", header_len,
                 size - header_at);
    DictParser d(reinterpret_cast<const char*>(data + header_at), header_len);
    d.expect('{', "opening brace");
    bool have_descr = false, have_order = false, have_shape = false, fortran = false;
    std::string descr;
    Array a;
    while (!d.eat('}')) {
        const std::string key = d.str();
        d.expect(':', "colon after a key");
        if (key == "descr" && !have_descr) {
            if (d.next_is('[')) KES_FAIL(KES_ERR_UNSUPPORTED, "npy: structured dtypes are not supported");
            descr = d.str();
            have_descr = true;
        } else if (key == "fortran_order" && !have_order) {
            fortran = d.boolean();
            have_order = true;
        } else if (key == "shape" && !have_shape) {
            a.shape = d.tuple();
            have_shape = true;
        } else {
            KES_FAIL(KES_ERR_CORRUPT_DATA, "npy: header has an unexpected or repeated key '%s'", key.c_str());
        }
        if (!d.eat(',')) {
            d.expect('}', "closing brace");
            break;
        }
    }
    if (!d.at_end()) corrupt("text after the header's dictionary");
    if (!have_descr || !have_order || !have_shape) corrupt("header needs descr, fortran_order and shape");
    a.dtype = dtype_of(descr);
    if (fortran && a.shape.size() > 1)  // one dimension is the same in either order
        KES_FAIL(KES_ERR_UNSUPPORTED, "npy: Fortran-order arrays are not supported; save np.ascontiguousarray(arr)");
    a.data_offset = header_at + header_len;
    a.data_bytes = size - a.data_offset;
    // A zero dimension makes the byte count 0 whatever the others are: they must still be usable in
    // stride arithmetic, so their product (the size with the zeros taken out) must not overflow either.
    uint64_t nonzero = kes_dtype_size(a.dtype);
    for (int64_t dim : a.shape)
        if (dim && !checked_mul<uint64_t>(nonzero, static_cast<uint64_t>(dim), &nonzero))
            KES_FAIL(KES_ERR_CORRUPT_DATA, "npy: shape %s of %s overflows 64 bits", shape_text(a.shape).c_str(),
                     kes_dtype_name(a.dtype));
    uint64_t bytes = 0;
    byte_count(a.dtype, a.shape, &bytes);  // ≤ nonzero: cannot overflow
    if (bytes != a.data_bytes)
        KES_FAIL(KES_ERR_CORRUPT_DATA, "npy: shape %s of %s needs %llu data bytes, the file has %zu",
                 shape_text(a.shape).c_str(), kes_dtype_name(a.dtype), static_cast<unsigned long long>(bytes),
                 a.data_bytes);
    return a;
}

std::vector<uint8_t> header(kes_dtype dtype, const std::vector<int64_t>& shape) {
    const char* code = code_of(dtype);
    for (int64_t d : shape) KES_REQUIRE(d >= 0, "npy: shape %s has a negative dimension", shape_text(shape).c_str());
    KES_REQUIRE(shape.size() <= KES_TENSOR_MAX_DIMS, "npy: %zu dimensions (at most %d)", shape.size(),
                KES_TENSOR_MAX_DIMS);
    std::string dict = std::string("{'descr': '") + (kes_dtype_size(dtype) == 1 ? "|" : "<") + code +
                       "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
    // Magic (6) + version (2) + length (2) + dict + padding + '\n' is a multiple of 64 (NEP 1).
    const size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
    dict.append(total - 10 - dict.size() - 1, ' ');
    dict.push_back('\n');
    // Built as one string (GCC 12's -O3 -Warray-bounds misfires on vector::insert into a short vector).
    std::string out("\x93NUMPY\x01\x00", 8);
    out.push_back(static_cast<char>(dict.size() & 0xff));
    out.push_back(static_cast<char>(dict.size() >> 8));
    out += dict;
    return std::vector<uint8_t>(out.begin(), out.end());
}

std::vector<uint8_t> encode(kes_dtype dtype, const std::vector<int64_t>& shape, const void* data, size_t bytes) {
    std::vector<uint8_t> out = header(dtype, shape);
    uint64_t need = 0;
    KES_REQUIRE(byte_count(dtype, shape, &need) && need <= bytes, "npy: %zu bytes for %s %s (needs %llu)", bytes,
                kes_dtype_name(dtype), shape_text(shape).c_str(), static_cast<unsigned long long>(need));
    KES_REQUIRE(data != nullptr || need == 0, "npy: data is NULL");
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(need));
    if (need) std::memcpy(out.data() + at, data, static_cast<size_t>(need));
    return out;
}

void write_file(const std::string& path, kes_dtype dtype, const std::vector<int64_t>& shape, const void* data,
                size_t bytes) {
    const std::vector<uint8_t> file = encode(dtype, shape, data, bytes);
    AtomicFile out(path);
    out.write(file.data(), file.size());
    out.commit();
}

}  // namespace npy
}  // namespace kes
