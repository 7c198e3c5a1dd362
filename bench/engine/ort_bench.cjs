// ort_bench.cjs — the ONNX Runtime peer of bench/engine/run.sh: times one ONNX model the way
// kes-model-bench times its .kom (same iterations, warm-up, thread count, random inputs in [-1, 1]),
// and prints one line of JSON.
//
//   NODE_PATH=$CACHE/ort/node_modules node ort_bench.cjs MODEL.onnx THREADS ITERATIONS WARMUP
'use strict';
const ort = require('onnxruntime-node');

async function main() {
    const [model, threads, iterations, warmup] = process.argv.slice(2);
    const t0 = process.hrtime.bigint();
    const session = await ort.InferenceSession.create(model, {
        intraOpNumThreads: Number(threads),
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
    });
    const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const feeds = {};
    for (const name of session.inputNames) {
        const meta = session.inputMetadata ? session.inputMetadata.find((m) => m.name === name) : null;
        const dims = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1)) : null;
        if (!dims) throw new Error(`input ${name}: no static shape`);
        const n = dims.reduce((a, b) => a * b, 1);
        const data = new Float32Array(n);
        let seed = 1;
        for (let i = 0; i < n; i++) {
            seed = (seed * 1103515245 + 12345) & 0x7fffffff;
            data[i] = (seed / 0x7fffffff) * 2 - 1;
        }
        feeds[name] = new ort.Tensor('float32', data, dims);
    }
    for (let i = 0; i < Number(warmup); i++) await session.run(feeds);
    const ms = [];
    for (let i = 0; i < Number(iterations); i++) {
        const s = process.hrtime.bigint();
        await session.run(feeds);
        ms.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    ms.sort((a, b) => a - b);
    const pct = (p) => ms[Math.max(0, Math.min(ms.length - 1, Math.ceil((p / 100) * ms.length) - 1))];
    console.log(JSON.stringify({
        peer: 'onnxruntime-node 1.30.0', model, threads: Number(threads), load_ms: loadMs,
        min_ms: ms[0], median_ms: pct(50), p99_ms: pct(99), rss_kib: Math.round(process.memoryUsage().rss / 1024),
    }));
}
main().catch((e) => { console.error(`ort_bench: ${e.message}`); process.exit(1); });
