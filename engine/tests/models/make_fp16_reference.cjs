// make_fp16_reference.cjs — ONNX Runtime's outputs for the fp16 models of make_fp16_models.py, the
// reference of engine/tests/test_fp16_models.cpp.
//
//   NODE_PATH=$CACHE/ort/node_modules node make_fp16_reference.cjs DIR STEM...
//
// For each STEM (e.g. convnet, blazeface_128) it runs DIR/STEM_float.onnx, STEM_fp16_io32.onnx and
// STEM_fp16_io16.onnx on DIR/STEM_input.f32 (the io16 model on STEM_input.f16, the same values rounded
// to f16 by numpy) and writes every output k, in the model's output order, as DIR/<model>_out<k>.f32 or
// .f16 (raw little-endian, f16 as IEEE half bits). ONNX Runtime 1.30 (npm onnxruntime-node), one thread,
// graph optimisations off (as make_reference.cjs); where its CPU provider has no fp16 kernel for an op
// it computes that op in f32 between Casts of its own.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const [dir, ...stems] = process.argv.slice(2);
if (!dir || stems.length === 0) {
    console.error('usage: node make_fp16_reference.cjs DIR STEM...');
    process.exit(2);
}

function readTyped(file, Type) {
    const b = fs.readFileSync(file);
    return new Type(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

(async () => {
    for (const stem of stems) {
        for (const variant of ['float', 'fp16_io32', 'fp16_io16']) {
            const name = `${stem}_${variant}`;
            const session = await ort.InferenceSession.create(path.join(dir, `${name}.onnx`),
                                                              {intraOpNumThreads: 1, graphOptimizationLevel: 'disabled', logSeverityLevel: 3});
            const half = variant === 'fp16_io16';
            const data = half ? readTyped(path.join(dir, `${stem}_input.f16`), Uint16Array)
                              : readTyped(path.join(dir, `${stem}_input.f32`), Float32Array);
            const inputName = session.inputNames[0];
            // The input's shape: NCHW conv net [1,3,16,16]; BlazeFace NHWC [1,S,S,3].
            const side = Math.round(Math.sqrt(data.length / 3));
            const dims = stem === 'convnet' ? [1, 3, side, side] : [1, side, side, 3];
            const result = await session.run({[inputName]: new ort.Tensor(half ? 'float16' : 'float32', data, dims)});
            session.outputNames.forEach((o, k) => {
                const t = result[o];
                const ext = t.type === 'float16' ? 'f16' : 'f32';
                const bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
                fs.writeFileSync(path.join(dir, `${name}_out${k}.${ext}`), bytes);
            });
            console.log(`make_fp16_reference: ${name}: ${session.outputNames.length} outputs`);
        }
    }
})().catch((e) => {
    console.error(`make_fp16_reference: ${e.stack || e}`);
    process.exit(1);
});
