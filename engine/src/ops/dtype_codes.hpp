// dtype_codes.hpp — ONNX's TensorProto data type numbers, as op attributes carry them (Cast's "to",
// ConstantOfShape's "dtype"): the op layer's one mapping, read by op definitions and importers alike.
#pragma once

#include <cstdint>

#include "kestrel/tensor.h"

namespace kes {

// ONNX TensorProto data type codes (Cast's "to", ConstantOfShape's "dtype") ↔ kes_dtype.
// Both throw KES_ERR_UNSUPPORTED for a type Kestrel does not have.
kes_dtype onnx_to_kes_dtype(int64_t onnx_type);
int64_t kes_dtype_to_onnx(kes_dtype dtype);

}  // namespace kes
