// npy.hpp — NumPy .npy arrays, the engine's one reader and writer of them: kes-convert's
// --freeze-input, kes-model-bench's inputs and --dump, kes-compare's references from any runtime.
//
// The reader parses outside data: it checks every size against the bytes given, never reads past
// `size`, and throws kes::Error naming the problem (KES_ERR_CORRUPT_DATA for a malformed file,
// KES_ERR_UNSUPPORTED for a valid one Kestrel does not read: big-endian, Fortran order, other dtypes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kestrel/tensor.h"

namespace kes {
namespace npy {

// Where the array of a parsed file is: `data_offset` bytes into the buffer, C order, little-endian.
struct Array {
    kes_dtype dtype = KES_F32;
    std::vector<int64_t> shape;  // empty: a scalar
    size_t data_offset = 0;
    size_t data_bytes = 0;
};

// .npy versions 1.0, 2.0 and 3.0; dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1; the data must fill the
// rest of the file exactly.
Array parse(const uint8_t* data, size_t size);

// A version 1.0 .npy file: header and data.
std::vector<uint8_t> encode(kes_dtype dtype, const std::vector<int64_t>& shape, const void* data, size_t bytes);

// Writes encode(...) to `path` (replacing it). Throws KES_ERR_IO naming the path and the reason.
void write_file(const std::string& path, kes_dtype dtype, const std::vector<int64_t>& shape, const void* data,
                size_t bytes);

}  // namespace npy
}  // namespace kes
