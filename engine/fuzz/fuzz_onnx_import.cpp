// Fuzz target for the ONNX importer (convert/onnx_import.cpp and its protobuf reader): any bytes must
// import or fail with a kes::Error, never crash, hang or read outside the input. Whatever imports then
// goes through the converter's first passes as convert.cpp runs them — constant folding keeping
// DequantizeLinear, shape inference (which run the ops' create() and, for constant nodes, their
// kernels), the QDQ fusion and the second folding — with a small folding budget so runs stay fast.
// Seeds (fuzz/seeds_onnx): tiny models written with python3-onnx (onnx.helper) covering initializers in
// raw and typed form, Constant/ConstantOfShape tensor attributes, a Shape → Gather → Concat → Reshape
// chain and opset-6/9 forms (Clip, Slice, Squeeze, Upsample), quantized models (QDQ per channel,
// QOperator with com.microsoft ops, dynamic: engine/tests/models/quant/), plus regress_* inputs
// libFuzzer found.
#include <cstddef>
#include <cstdint>

#include "convert/fusion.hpp"
#include "convert/importers.hpp"
#include "convert/passes.hpp"
#include "kes/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        kes::ir::Graph g = kes::ir::import_onnx(data, size);
        kes::ir::fold_constants(g, size_t{1} << 20, /*keep_quantized=*/true);
        kes::ir::infer_shapes(g);
        kes::ir::fuse_qdq(g);
        kes::ir::fold_constants(g, size_t{1} << 20);
        kes::ir::infer_shapes(g);
    } catch (const kes::Error&) {
        // rejected with a status: what a hostile file must get
    }
    return 0;
}
