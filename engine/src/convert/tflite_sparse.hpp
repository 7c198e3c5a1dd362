// tflite_sparse.hpp — TFLite's sparse constants made dense (the DENSIFY operator, folded at import).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../op.hpp"
#include "tflite_subset_generated.h"

namespace kes::ir {

// The dense row-major bytes of a constant of `shape` (elem_size bytes an element) that TFLite stores in
// its sparse format: `values` holds the stored elements in traversal order, `sparsity` says which
// dimensions (in which order, blocked how) are dense or compressed (CSR). Every index, segment and
// size is checked against the shape and the values; a violation is KES_ERR_CORRUPT_DATA naming `what`.
std::vector<uint8_t> densify_tflite_constant(const tflite::SparsityParameters& sparsity, const Shape& shape,
                                             size_t elem_size, const uint8_t* values, size_t value_bytes,
                                             const std::string& what);

}  // namespace kes::ir
