// npy.cpp — the .npy reader and writer of npy.hpp.
#include "npy.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "kes/error.hpp"
#include "op.hpp"

namespace kes {
namespace npy {

namespace {

const struct {
    const char* code;
    kes_dtype dtype;
} kTypes[] = {{"f4", KES_F32}, {"f2", KES_F16}, {"f8", KES_F64}, {"i1", KES_I8},  {"i2", KES_I16}, {"i4", KES_I32},
              {"i8", KES_I64}, {"u1", KES_U8},  {"u2", KES_U16}, {"u4", KES_U32}, {"u8", KES_U64}, {"b1", KES_BOOL}};

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

Array parse(const uint8_t* data, size_t size) {
    if (!data || size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0)
        fail(KES_ERR_CORRUPT_DATA, "npy: no \\x93NUMPY magic");
    const uint8_t major = data[6];
    size_t header_len, offset;
    if (major == 1) {
        header_len = data[8] | (size_t{data[9]} << 8), offset = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) fail(KES_ERR_CORRUPT_DATA, "npy: truncated header");
        header_len = data[8] | (size_t{data[9]} << 8) | (size_t{data[10]} << 16) | (size_t{data[11]} << 24);
        offset = 12;
    } else {
        fail(KES_ERR_UNSUPPORTED, "npy: format version %u", major);
    }
    if (header_len > size - offset) fail(KES_ERR_CORRUPT_DATA, "npy: header runs past the end of the file");
    const std::string header(reinterpret_cast<const char*>(data + offset), header_len);
    auto value_of = [&](const char* key) {
        const size_t k = header.find(key);
        if (k == std::string::npos) fail(KES_ERR_CORRUPT_DATA, "npy: header has no %s", key);
        const size_t colon = header.find(':', k);
        if (colon == std::string::npos) fail(KES_ERR_CORRUPT_DATA, "npy: malformed header");
        return header.substr(colon + 1);
    };
    std::string descr = trim(value_of("'descr'"));
    if (descr.size() < 5 || (descr[0] != '\'' && descr[0] != '"')) fail(KES_ERR_CORRUPT_DATA, "npy: malformed descr");
    const size_t quote = descr.find(descr[0], 1);
    if (quote == std::string::npos) fail(KES_ERR_CORRUPT_DATA, "npy: malformed descr");
    descr = descr.substr(1, quote - 1);
    if (trim(value_of("'fortran_order'")).rfind("False", 0) != 0)
        fail(KES_ERR_UNSUPPORTED, "npy: Fortran-order arrays are not supported");
    const std::string shape_text = value_of("'shape'");
    const size_t open = shape_text.find('('), close = shape_text.find(')');
    if (open == std::string::npos || close == std::string::npos || close < open)
        fail(KES_ERR_CORRUPT_DATA, "npy: malformed shape");
    Array a;
    const std::string dims = shape_text.substr(open + 1, close - open - 1);
    for (size_t at = 0; at <= dims.size();) {
        size_t comma = dims.find(',', at);
        if (comma == std::string::npos) comma = dims.size();
        const std::string d = trim(dims.substr(at, comma - at));
        at = comma + 1;
        if (d.empty()) continue;
        if (d.size() > 15 || d.find_first_not_of("0123456789") != std::string::npos)
            fail(KES_ERR_CORRUPT_DATA, "npy: shape dimension '%s' is not a number", d.c_str());
        a.shape.push_back(std::stoll(d));
        if (a.shape.size() > KES_TENSOR_MAX_DIMS)
            fail(KES_ERR_UNSUPPORTED, "npy: more than %d dimensions", KES_TENSOR_MAX_DIMS);
    }
    if (descr.size() != 3 || descr[0] == '>')
        fail(KES_ERR_UNSUPPORTED, "npy: dtype '%s' is not supported (little-endian numbers and bools only)",
             descr.c_str());
    bool found = false;
    for (const auto& k : kTypes)
        if (descr.compare(1, 2, k.code) == 0) a.dtype = k.dtype, found = true;
    if (!found) fail(KES_ERR_UNSUPPORTED, "npy: dtype '%s' is not supported", descr.c_str());
    const uint64_t bytes = static_cast<uint64_t>(shape_elements(a.shape)) * kes_dtype_size(a.dtype);
    a.data_offset = offset + header_len;
    a.data_bytes = size - a.data_offset;
    if (bytes != a.data_bytes)
        fail(KES_ERR_CORRUPT_DATA, "npy: %zu data bytes for shape %s of %s (expected %llu)", a.data_bytes,
             shape_string(a.shape).c_str(), kes_dtype_name(a.dtype), static_cast<unsigned long long>(bytes));
    return a;
}

std::vector<uint8_t> encode(kes_dtype dtype, const std::vector<int64_t>& shape, const void* data, size_t bytes) {
    const char* code = nullptr;
    for (const auto& k : kTypes)
        if (k.dtype == dtype) code = k.code;
    if (!code) fail(KES_ERR_UNSUPPORTED, "npy: %s has no .npy dtype", kes_dtype_name(dtype));
    std::string dims;
    for (int64_t d : shape) dims += std::to_string(d) + ",";
    if (shape.size() > 1) dims.pop_back();  // (n,) for one dimension, (a,b) for more
    std::string header = std::string("{'descr': '") + (code[0] == 'b' || code[1] == '1' ? "|" : "<") + code +
                         "', 'fortran_order': False, 'shape': (" + dims + "), }";
    // The data starts 64-byte aligned, as NumPy writes it; the header ends with a newline.
    const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
    header.append(total - 10 - header.size() - 1, ' ');
    header += '\n';
    const uint8_t preamble[10] = {0x93,
                                  'N',
                                  'U',
                                  'M',
                                  'P',
                                  'Y',
                                  1,
                                  0,
                                  static_cast<uint8_t>(header.size() & 0xff),
                                  static_cast<uint8_t>(header.size() >> 8)};
    std::vector<uint8_t> out(sizeof preamble + header.size() + bytes);
    std::memcpy(out.data(), preamble, sizeof preamble);
    std::memcpy(out.data() + sizeof preamble, header.data(), header.size());
    if (bytes) std::memcpy(out.data() + sizeof preamble + header.size(), data, bytes);
    return out;
}

void write_file(const std::string& path, kes_dtype dtype, const std::vector<int64_t>& shape, const void* data,
                size_t bytes) {
    const std::vector<uint8_t> file = encode(dtype, shape, data, bytes);
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
    if (!f) fail(KES_ERR_IO, "cannot write '%s': %s", path.c_str(), std::strerror(errno));
    if (std::fwrite(file.data(), 1, file.size(), f.get()) != file.size() || std::fflush(f.get()) != 0)
        fail(KES_ERR_IO, "cannot write '%s': %s", path.c_str(), std::strerror(errno));
}

}  // namespace npy
}  // namespace kes
