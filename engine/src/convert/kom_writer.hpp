// kom_writer.hpp — serialises a shape-inferred ir::Graph into a .kom image (engine/schema/kom.fbs):
// plans the activation arena (memory_plan.hpp), lays the constants out in 128-byte aligned weight
// sections and writes attributes, AIPP configs, gears and metadata.
#pragma once

#include <cstdint>
#include <vector>

#include "ir.hpp"

namespace kes::ir {

struct KomImage {
    std::vector<uint8_t> bytes;
    uint64_t arena_size = 0;
    uint64_t ideal_size = 0;
    uint64_t weights_size = 0;
};

struct WriteOptions {
    bool alias_reshapes = true;  // Reshape/Flatten/Squeeze/Unsqueeze outputs share their input's bytes
    bool alias_inplace = true;   // elementwise outputs may overwrite a dying input (share_buffers)
    // Bytes to reserve per tensor (empty: each tensor's bytes at its written shape). Dynamic image
    // gears need more for some tensors than the written (largest-area) gear; see gear_capacity().
    std::vector<uint64_t> tensor_capacity;
};

// Every tensor must have a known shape (run infer_shapes first). Throws kes::Error
// (KES_ERR_INVALID_ARGUMENT) for an index out of range or a tensor without a shape; other
// inconsistencies are written as given, so tests can build hostile files (the loader refuses them).
KomImage write_kom(const Graph& g, const WriteOptions& options = {});

}  // namespace kes::ir
