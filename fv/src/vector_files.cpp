// vector_files.cpp — .npy / .fvecs / raw f32 parsing with strict bounds checks (see vector_files.hpp);
// the .npy format itself is kes/npy.hpp's.
#include "vector_files.hpp"

#include <cstring>

#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kes/npy.hpp"
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

}  // namespace

MatrixLayout parse_npy(const uint8_t* data, size_t size) {
    const npy::Array a = npy::parse(data, size);
    if (a.dtype != KES_F32)
        KES_FAIL(KES_ERR_CORRUPT_DATA, ".npy: dtype %s is not float32; convert with arr.astype('<f4')",
                 kes_dtype_name(a.dtype));
    if (a.shape.size() != 2)
        KES_FAIL(KES_ERR_CORRUPT_DATA, ".npy: array has %zu dimensions, expected 2 (rows, dim)", a.shape.size());
    if (a.shape[1] < 1 || a.shape[1] > KES_FV_DIM_MAX)
        KES_FAIL(KES_ERR_CORRUPT_DATA, ".npy: dim %lld is outside [1, %u]", static_cast<long long>(a.shape[1]),
                 KES_FV_DIM_MAX);
    MatrixLayout m;  // npy::parse checked rows × dim × 4 against the bytes
    m.rows = static_cast<uint64_t>(a.shape[0]);
    m.cols = static_cast<uint32_t>(a.shape[1]);
    m.offset = a.data_offset;
    m.row_stride = uint64_t{m.cols} * 4;
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

}  // namespace fv
}  // namespace kes
