// vector_files.hpp — readers of the float-matrix files embeddings come in: NumPy .npy (float32, C
// order, 2-D; the format itself is the sdk's kes/npy.hpp, which kes-fv also writes with), .fvecs (per
// row: int32 dim, then dim float32) and headerless raw f32.
// Internal C++ API for the kes-fv CLI (fv/cli) and the fuzz targets; not installed.
//
// The readers parse outside data: they check every size against the bytes given before reading or
// allocating, never read past `size`, and throw kes::Error naming the problem
// (KES_ERR_CORRUPT_DATA, or KES_ERR_UNSUPPORTED as said below).
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

// A .npy file (kes/npy.hpp: versions 1.0 to 3.0, C order) of float32 with shape (rows, cols),
// 1 ≤ cols ≤ KES_FV_DIM_MAX. A valid .npy file of another dtype or shape: KES_ERR_CORRUPT_DATA here
// (not a matrix of embeddings); one kes/npy.hpp does not read (big-endian, Fortran order):
// KES_ERR_UNSUPPORTED.
MatrixLayout parse_npy(const uint8_t* data, size_t size);
// .fvecs: every record has the same dim in [1, KES_FV_DIM_MAX]; the file is a whole number of
// records. An empty file has 0 rows and 0 cols.
MatrixLayout parse_fvecs(const uint8_t* data, size_t size);
// Raw float32 rows of `dim` floats (dim given by the caller); size must be a multiple of dim × 4.
MatrixLayout parse_raw_f32(size_t size, uint32_t dim);

// Copies rows [first, first + count) of a layout from the parsed buffer into out (count × cols).
void copy_rows(const uint8_t* data, const MatrixLayout& m, uint64_t first, uint64_t count, float* out);

}  // namespace fv
}  // namespace kes
