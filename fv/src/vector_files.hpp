// vector_files.hpp — readers and writers of the float-matrix files embeddings come in: NumPy .npy
// (float32, C order, 2-D), .fvecs (per row: int32 dim, then dim float32) and headerless raw f32.
// Internal C++ API for the kes-fv CLI (fv/cli) and the fuzz targets; not installed.
//
// The readers parse outside data: they check every size against the bytes given before reading or
// allocating, never read past `size`, and throw kes::Error(KES_ERR_CORRUPT_DATA) naming the problem.
// They do not check the values (kes_fv_repo_add and kes_fv_pq_* refuse non-finite ones).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kes {
namespace fv {

// Where the rows of a parsed file are: row r is `cols` little-endian float32 at byte
// offset + r × row_stride of the buffer that was parsed.
struct MatrixLayout {
    uint64_t rows = 0;
    uint32_t cols = 0;
    uint64_t offset = 0;
    uint64_t row_stride = 0;
};

// .npy versions 1.0, 2.0 and 3.0; descr '<f4' (or '=f4'/'f4'), fortran_order False, shape (rows,
// cols) with 1 ≤ cols ≤ KES_FV_DIM_MAX; the data must fill the rest of the file exactly.
MatrixLayout parse_npy(const uint8_t* data, size_t size);
// .fvecs: every record has the same dim in [1, KES_FV_DIM_MAX]; the file is a whole number of
// records. An empty file has 0 rows and 0 cols.
MatrixLayout parse_fvecs(const uint8_t* data, size_t size);
// Raw float32 rows of `dim` floats (dim given by the caller); size must be a multiple of dim × 4.
MatrixLayout parse_raw_f32(size_t size, uint32_t dim);

// Copies rows [first, first + count) of a layout from the parsed buffer into out (count × cols).
void copy_rows(const uint8_t* data, const MatrixLayout& m, uint64_t first, uint64_t count, float* out);

// The bytes of a version 1.0 .npy header for a C-order (rows, cols) array of `descr` elements
// (default float32; "<u4" for the id maps); the data follows.
std::vector<uint8_t> npy_header(uint64_t rows, uint32_t cols, const char* descr = "<f4");

}  // namespace fv
}  // namespace kes
