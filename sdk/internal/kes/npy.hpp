// kes/npy.hpp — NumPy .npy arrays: Kestrel's one reader and writer of them (kes-convert's
// --freeze-input, kes-model-bench's inputs and --dump, kes-compare's references, kes-fv's import and
// export of embedding matrices, which add their own "2-d float32" check on top).
//
// The reader parses outside data: the header is read as the Python dict literal NumPy writes (three
// keys, each once, nothing after it), every size is checked against the bytes given with overflow-
// checked arithmetic before anything is read or allocated, and nothing past `size` is read. It throws
// kes::Error naming the problem: KES_ERR_CORRUPT_DATA for a malformed file, KES_ERR_UNSUPPORTED for a
// valid one Kestrel does not read (big-endian, Fortran order, structured or other dtypes, more than
// KES_TENSOR_MAX_DIMS dimensions, a format version after 3.0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kestrel/tensor.h"

namespace kes {
namespace npy {

// Where the array of a parsed file is: `data_offset` bytes into the buffer, C order, little-endian;
// data_bytes = product(shape) × kes_dtype_size(dtype) = size - data_offset.
struct Array {
    kes_dtype dtype = KES_F32;
    std::vector<int64_t> shape;  // empty: a scalar
    size_t data_offset = 0;
    size_t data_bytes = 0;
};

// .npy versions 1.0, 2.0 and 3.0; dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1 ('<', '=', '|' or no
// byte order; '>' only for one-byte types); the data must fill the rest of the file exactly.
Array parse(const uint8_t* data, size_t size);

// The version 1.0 header of a C-order array: magic, version, length, dict, padded with spaces and a
// newline so that the data starts 64-byte aligned, as NumPy writes it. For writers that stream the
// data after it (kes-fv export). KES_ERR_UNSUPPORTED for a dtype .npy has no code for,
// KES_ERR_INVALID_ARGUMENT for a negative dimension.
std::vector<uint8_t> header(kes_dtype dtype, const std::vector<int64_t>& shape);

// header(...) followed by the array's bytes: the first product(shape) × dtype size of `data`
// (`bytes` must be at least that: KES_ERR_INVALID_ARGUMENT otherwise).
std::vector<uint8_t> encode(kes_dtype dtype, const std::vector<int64_t>& shape, const void* data, size_t bytes);

// Replaces the file at `path` with encode(...) through kes::AtomicFile (crash-safe: the old file or
// the new one, whole). Throws KES_ERR_IO naming the path and the reason.
void write_file(const std::string& path, kes_dtype dtype, const std::vector<int64_t>& shape, const void* data,
                size_t bytes);

}  // namespace npy
}  // namespace kes
