// importers.hpp — source formats → ir::Graph. Each importer produces a graph in Kestrel's op set
// (op.hpp: ONNX names, latest-opset semantics), with constants, graph inputs/outputs and whatever
// shapes the file declares; shape inference and the passes run afterwards (convert.cpp).
// Both throw kes::Error: KES_ERR_CORRUPT_DATA for a malformed file (naming what is wrong and where),
// KES_ERR_UNSUPPORTED for an op or feature Kestrel cannot convert (naming the op, the node and, for
// ONNX, the opset). Neither reads outside [data, data + size).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ir.hpp"

namespace kes::ir {

Graph import_onnx(const uint8_t* data, size_t size);    // convert/onnx_import.cpp
Graph import_tflite(const uint8_t* data, size_t size);  // convert/tflite_import.cpp

}  // namespace kes::ir
