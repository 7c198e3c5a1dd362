// Fuzz target for the TFLite importer: any bytes must import or fail with a kes::Error (a status and a
// message), never crash, hang or read outside the buffer. Graphs that import also go through shape
// inference, as kes-convert would run them next, and, as it does, through fuse_qdq (a quantized model's
// ops computed in f32 between DequantizeLinear and QuantizeLinear).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "convert/fusion.hpp"
#include "convert/importers.hpp"
#include "convert/passes.hpp"
#include "kes/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // An exact-size heap copy: reads past the end are caught by ASan, and FlatBuffers' relative
    // alignment checks see the file as a reader would (malloc alignment).
    std::vector<uint8_t> bytes(data, data + size);
    try {
        kes::ir::Graph g = kes::ir::import_tflite(bytes.data(), bytes.size());
        // Keep runs fast: shape inference only for small graphs. Integer constants are sizes, shapes,
        // pads and slice bounds; a huge one (a Resize to 2^31 pixels) makes op creation legitimately
        // slow, which is not what this target looks for.
        int64_t elements = 0, largest_int = 0;
        for (const kes::ir::Tensor& t : g.tensors) {
            int64_t n = 1;
            for (int64_t d : t.shape) n = (d > 0 && n < (int64_t{1} << 24)) ? n * d : n;
            elements += n;
            if (t.is_const && (t.dtype == KES_I64 || t.dtype == KES_I32)) {
                const size_t width = t.dtype == KES_I64 ? 8 : 4;
                for (size_t i = 0; i + width <= t.data.size(); i += width) {
                    int64_t v = 0;
                    if (width == 8) {
                        std::memcpy(&v, &t.data[i], 8);
                    } else {
                        int32_t w;
                        std::memcpy(&w, &t.data[i], 4);
                        v = w;
                    }
                    if (v != INT64_MIN && v != INT64_MAX) largest_int = std::max(largest_int, v < 0 ? -v : v);
                }
            }
        }
        if (elements < (int64_t{1} << 22) && largest_int <= 4096) {
            kes::ir::infer_shapes(g);
            kes::ir::fuse_qdq(g);
        }
    } catch (const kes::Error&) {
    }
    return 0;
}
