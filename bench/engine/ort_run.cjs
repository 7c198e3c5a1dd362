// ort_run.cjs — the ONNX Runtime side of qemu_ort_insns.sh: one session (1 thread, sequential, all graph
// optimisations, as ort_bench.cjs), the given inputs from .npy files, N runs back to back, then the
// outputs of the last run written to OUTDIR/<tensor>.npy (characters outside [A-Za-z0-9._-] as '_', the
// names kes-model-bench --dump gives). Nothing is timed: the caller counts instructions of N = 1 and
// N = 3, so start-up, session creation and the writing of the outputs cancel out.
//
//   NODE_PATH=$CACHE/ort/node_modules node ort_run.cjs MODEL.onnx N OUTDIR NAME=FILE.npy ...
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const safe = (name) => name.replace(/[^A-Za-z0-9._-]/g, '_');

function readNpy(file) {
    const b = fs.readFileSync(file);
    if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
    const headerLen = b[6] === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
    const start = b[6] === 1 ? 10 : 12;
    const header = b.toString('latin1', start, start + headerLen);
    if (!/'descr': '<f4'/.test(header) || /'fortran_order': True/.test(header))
        throw new Error(`${file}: float32 C-order arrays only (${header.trim()})`);
    const dims = header.match(/'shape': \(([^)]*)\)/)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
    const body = b.subarray(start + headerLen);
    const data = new Float32Array(body.byteLength / 4);
    new Uint8Array(data.buffer).set(body);
    return new ort.Tensor('float32', data, dims);
}

function writeNpy(file, dims, data) {
    let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
    header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
    const head = Buffer.alloc(10);
    head.write('\x93NUMPY', 0, 'latin1');
    head[6] = 1;
    head.writeUInt16LE(header.length, 8);
    fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'),
                                          Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
    const [model, n, out, ...inputs] = process.argv.slice(2);
    if (!model || !/^[1-9][0-9]*$/.test(n || '') || !out) throw new Error('usage: ort_run.cjs MODEL.onnx N OUTDIR NAME=FILE.npy ...');
    const session = await ort.InferenceSession.create(model, {
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
        logSeverityLevel: 3, // its warnings about unused initialisers in the BlazeFace files are noise here
    });
    const feeds = {};
    for (const arg of inputs) {
        const eq = arg.lastIndexOf('=');
        feeds[arg.slice(0, eq)] = readNpy(arg.slice(eq + 1));
    }
    for (const name of session.inputNames) if (!(name in feeds)) throw new Error(`no file for input '${name}'`);
    let result;
    for (let i = 0; i < Number(n); i++) result = await session.run(feeds);
    fs.mkdirSync(out, {recursive: true});
    for (const name of session.outputNames) writeNpy(path.join(out, `${safe(name)}.npy`), result[name].dims, result[name].data);
}
main().catch((e) => { console.error(`ort_run: ${e.message}`); process.exit(1); });
