// vector_files.cpp — .npy / .fvecs / raw f32 parsing with strict bounds checks (see vector_files.hpp).
#include "vector_files.hpp"

#include <cstring>

#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kestrel/fv.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the readers copy little-endian floats as they are; a big-endian port needs byte swaps here"
#endif

namespace kes {
namespace fv {
namespace {

[[noreturn]] void corrupt(const char* fmt, const char* detail) {
    KES_FAIL(KES_ERR_CORRUPT_DATA, fmt, detail);
}

// A cursor over the Python dict literal of a .npy header, e.g.
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
    void expect(char c, const char* where) {
        if (!eat(c)) corrupt(".npy header: malformed dictionary (%s)", where);
    }
    std::string str() {
        ws();
        if (p_ >= end_ || (*p_ != '\'' && *p_ != '"')) corrupt(".npy header: expected a string (%s)", "key or descr");
        const char q = *p_++;
        std::string s;
        while (p_ < end_ && *p_ != q) {
            if (s.size() > 64) corrupt(".npy header: %s", "string too long");
            s.push_back(*p_++);
        }
        if (p_ >= end_) corrupt(".npy header: %s", "unterminated string");
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
        corrupt(".npy header: %s", "fortran_order must be True or False");
    }
    uint64_t integer() {
        ws();
        if (p_ >= end_ || *p_ < '0' || *p_ > '9') corrupt(".npy header: %s", "shape holds a non-integer");
        uint64_t v = 0;
        while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
            if (v > (UINT64_MAX - 9) / 10) corrupt(".npy header: %s", "shape dimension overflows");
            v = v * 10 + static_cast<uint64_t>(*p_++ - '0');
        }
        if (p_ < end_ && *p_ == 'L') ++p_;  // Python 2 long
        return v;
    }
    std::vector<uint64_t> tuple() {
        expect('(', "shape must be a tuple");
        std::vector<uint64_t> v;
        while (!eat(')')) {
            if (v.size() >= 8) corrupt(".npy header: %s", "shape has too many dimensions");
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

}  // namespace

MatrixLayout parse_npy(const uint8_t* data, size_t size) {
    static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (size < 10 || std::memcmp(data, kMagic, 6) != 0) corrupt("not a .npy file (%s)", "bad magic");
    const uint8_t major = data[6];
    size_t header_len = 0, header_at = 0;
    if (major == 1) {
        header_len = size_t{data[8]} | size_t{data[9]} << 8;
        header_at = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) corrupt(".npy: %s", "truncated header length");
        uint32_t n;
        std::memcpy(&n, data + 8, 4);
        header_len = n;
        header_at = 12;
    } else {
        KES_FAIL(KES_ERR_CORRUPT_DATA, ".npy: unsupported format version %u.%u", major, data[7]);
    }
    if (header_len > size - header_at)
        KES_FAIL(KES_ERR_CORRUPT_DATA, ".npy: header of %zu bytes but only %zu left", header_len, size - header_at);
    DictParser d(reinterpret_cast<const char*>(data + header_at), header_len);
    d.expect('{', "opening brace");
    bool have_descr = false, have_order = false, have_shape = false, fortran = false;
    std::string descr;
    std::vector<uint64_t> shape;
    while (!d.eat('}')) {
        const std::string key = d.str();
        d.expect(':', "colon after a key");
        if (key == "descr" && !have_descr) {
            descr = d.str();
            have_descr = true;
        } else if (key == "fortran_order" && !have_order) {
            fortran = d.boolean();
            have_order = true;
        } else if (key == "shape" && !have_shape) {
            shape = d.tuple();
            have_shape = true;
        } else {
            KES_FAIL(KES_ERR_CORRUPT_DATA, ".npy header: unexpected or repeated key '%s'", key.c_str());
        }
        if (!d.eat(',')) {
            d.expect('}', "closing brace");
            break;
        }
    }
    if (!d.at_end()) corrupt(".npy header: %s", "text after the dictionary");
    if (!have_descr || !have_order || !have_shape) corrupt(".npy header: %s", "needs descr, fortran_order and shape");
    if (descr != "<f4" && descr != "=f4" && descr != "f4")
        KES_FAIL(KES_ERR_CORRUPT_DATA,
                 ".npy: dtype '%s' is not little-endian float32 ('<f4'); convert with "
                 "arr.astype('<f4')",
                 descr.c_str());
    if (fortran) corrupt(".npy: %s", "Fortran-ordered arrays are not supported; save np.ascontiguousarray(arr)");
    if (shape.size() != 2)
        KES_FAIL(KES_ERR_CORRUPT_DATA, ".npy: array has %zu dimensions, expected 2 (rows, dim)", shape.size());
    if (shape[1] < 1 || shape[1] > KES_FV_DIM_MAX)
        KES_FAIL(KES_ERR_CORRUPT_DATA, ".npy: dim %llu is outside [1, %u]", static_cast<unsigned long long>(shape[1]),
                 KES_FV_DIM_MAX);
    MatrixLayout m;
    m.rows = shape[0];
    m.cols = static_cast<uint32_t>(shape[1]);
    m.offset = header_at + header_len;
    m.row_stride = uint64_t{m.cols} * 4;
    uint64_t bytes = 0;
    if (!checked_mul<uint64_t>(m.rows, m.row_stride, &bytes) || bytes != size - m.offset)
        KES_FAIL(KES_ERR_CORRUPT_DATA, ".npy: shape (%llu, %u) needs %llu data bytes, the file has %llu",
                 static_cast<unsigned long long>(m.rows), m.cols, static_cast<unsigned long long>(bytes),
                 static_cast<unsigned long long>(size - m.offset));
    return m;
}

MatrixLayout parse_fvecs(const uint8_t* data, size_t size) {
    MatrixLayout m;
    if (size == 0) return m;
    if (size < 4) corrupt(".fvecs: %s", "truncated first record");
    int32_t dim;
    std::memcpy(&dim, data, 4);
    if (dim < 1 || static_cast<uint32_t>(dim) > KES_FV_DIM_MAX)
        KES_FAIL(KES_ERR_CORRUPT_DATA, ".fvecs: first record has dim %d, expected [1, %u]", dim, KES_FV_DIM_MAX);
    m.cols = static_cast<uint32_t>(dim);
    m.row_stride = 4 + uint64_t{m.cols} * 4;
    m.offset = 4;
    if (size % m.row_stride != 0)
        KES_FAIL(KES_ERR_CORRUPT_DATA, ".fvecs: %zu bytes is not a whole number of %llu-byte records (dim %u)", size,
                 static_cast<unsigned long long>(m.row_stride), m.cols);
    m.rows = size / m.row_stride;
    for (uint64_t r = 1; r < m.rows; ++r) {
        int32_t d;
        std::memcpy(&d, data + r * m.row_stride, 4);
        if (d != dim)
            KES_FAIL(KES_ERR_CORRUPT_DATA, ".fvecs: record %llu has dim %d, the first has %d",
                     static_cast<unsigned long long>(r), d, dim);
    }
    return m;
}

MatrixLayout parse_raw_f32(size_t size, uint32_t dim) {
    KES_REQUIRE(dim >= 1 && dim <= KES_FV_DIM_MAX, "raw f32 dim must be in [1, %u] (got %u)", KES_FV_DIM_MAX, dim);
    MatrixLayout m;
    m.cols = dim;
    m.row_stride = uint64_t{dim} * 4;
    if (size % m.row_stride != 0)
        KES_FAIL(KES_ERR_CORRUPT_DATA, "raw f32: %zu bytes is not a whole number of %u-float rows", size, dim);
    m.rows = size / m.row_stride;
    return m;
}

void copy_rows(const uint8_t* data, const MatrixLayout& m, uint64_t first, uint64_t count, float* out) {
    KES_REQUIRE(first <= m.rows && count <= m.rows - first, "rows [%llu, +%llu) outside the %llu rows",
                static_cast<unsigned long long>(first), static_cast<unsigned long long>(count),
                static_cast<unsigned long long>(m.rows));
    for (uint64_t r = 0; r < count; ++r)
        std::memcpy(out + r * m.cols, data + m.offset + (first + r) * m.row_stride, size_t{m.cols} * 4);
}

std::vector<uint8_t> npy_header(uint64_t rows, uint32_t cols, const char* descr) {
    std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
    // Magic (6) + version (2) + length (2) + dict + padding + '\n' is a multiple of 64 (NEP 1).
    const size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
    dict.append(total - 10 - dict.size() - 1, ' ');
    dict.push_back('\n');
    std::string h("\x93NUMPY\x01\x00", 8);
    h.push_back(static_cast<char>(dict.size() & 0xFF));
    h.push_back(static_cast<char>(dict.size() >> 8));
    h += dict;
    return std::vector<uint8_t>(h.begin(), h.end());
}

}  // namespace fv
}  // namespace kes
