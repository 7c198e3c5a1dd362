// make_quant_reference.cjs — ONNX Runtime's outputs for the quantized models of make_quant_models.py
// (the reference of engine/tests/test_quant_models.cpp), and the float activations it calibrates from.
//
//   NODE_PATH=$CACHE/ort/node_modules node make_quant_reference.cjs MODEL.onnx INPUT.f32 DIMS OUT_PREFIX [LEVEL]
//
// Runs MODEL on the float32 input (raw little-endian, shape DIMS, e.g. 1,3,16,16) and writes every output
// k, in the model's order, as OUT_PREFIX_out<k>.<f32|u8|i8|i32> (raw little-endian); prints one JSON line
// {"outputs": [{"name", "type", "dims"}...]}. LEVEL is ONNX Runtime's graph optimisation level: "all"
// (default: what users run; a QDQ model's DequantizeLinear → op → QuantizeLinear groups become its
// integer kernels QLinearConv, QLinearMatMul, QLinearAdd, ...) or "disabled" (every op as written).
// ONNX Runtime 1.30 (npm onnxruntime-node), one thread.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

const [model, input, dimsText, prefix, level = 'all'] = process.argv.slice(2);
if (!prefix) {
    console.error('usage: node make_quant_reference.cjs MODEL.onnx INPUT.f32 DIMS OUT_PREFIX [all|disabled]');
    process.exit(2);
}
const extension = {float32: 'f32', uint8: 'u8', int8: 'i8', int32: 'i32'};

(async () => {
    const session = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, graphOptimizationLevel: level,
                                                              logSeverityLevel: 3});
    const b = fs.readFileSync(input);
    const data = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    const dims = dimsText.split(',').map(Number);
    const result = await session.run({[session.inputNames[0]]: new ort.Tensor('float32', data, dims)});
    const outputs = session.outputNames.map((name, k) => {
        const t = result[name];
        if (!(t.type in extension)) throw new Error(`output ${name}: type ${t.type} is not written`);
        fs.writeFileSync(`${prefix}_out${k}.${extension[t.type]}`, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
        return {name, type: t.type, dims: t.dims};
    });
    console.log(JSON.stringify({outputs}));
})().catch((e) => {
    console.error(`make_quant_reference: ${e.stack || e}`);
    process.exit(1);
});
