// make_reference.cjs — reference inputs and outputs for the engine's real-model tests
// (engine/tests/test_real_models.cpp), made with ONNX Runtime (npm onnxruntime-node 1.30.0).
//
//   NODE_PATH=$CACHE/ort/node_modules node make_reference.cjs $CACHE      (fetch_models.sh runs it)
//
// Reads $CACHE/files/{blazeface_256.onnx, blazeface_128.onnx, photo1..6.ppm} and writes to
// $CACHE/reference/:
//   blazeface_<S>_photo<i>_input.f32        the input tensor [1,S,S,3]: the photo letterboxed (centred,
//                                           black bars) to a square, bilinear-resized, RGB/127.5 − 1
//   blazeface_<S>_photo<i>_out<k>.f32       ONNX Runtime's 4 outputs (scores 512, 384; boxes 512×16, 384×16)
//   blazeface_<S>_faces.txt                 decoded faces: "photo score cx cy w h" (of the square, 0..1)
//   faces_112.f32, faces_112.txt            MobileFaceNet inputs at the faces BlazeFace-256 finds, aligned
//                                           by its eye/nose/mouth keypoints onto ArcFace's 112×112 template:
//                                           per face 3 crops [112,112,3] ((v − 127.5)/128): the aligned
//                                           face, the same shifted by (4, 3) pixels, the mirror image;
//                                           the .txt lists "photo cx cy size" (box, photo pixels) per face.
// Plain little-endian float32 files; the C++ test decodes the Kestrel outputs with the same rules.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const cache = process.argv[2];
const files = path.join(cache, 'files');
const out = path.join(cache, 'reference');
fs.mkdirSync(out, {recursive: true});

function readPpm(file) {
    const buf = fs.readFileSync(file);
    let pos = 0;
    const tokens = [];
    while (tokens.length < 4) {
        while (/\s/.test(String.fromCharCode(buf[pos]))) pos++;
        if (buf[pos] === 0x23) {  // comment
            while (buf[pos] !== 0x0a) pos++;
            continue;
        }
        let t = '';
        while (!/\s/.test(String.fromCharCode(buf[pos]))) t += String.fromCharCode(buf[pos++]);
        tokens.push(t);
    }
    pos++;
    if (tokens[0] !== 'P6' || tokens[3] !== '255') throw new Error(`${file}: not an 8-bit P6 PPM`);
    return {w: +tokens[1], h: +tokens[2], px: buf.subarray(pos)};
}

// Bilinear sample of channel c at (x, y) in pixel-centre coordinates; outside the image is black.
function sample(img, x, y, c) {
    const x0 = Math.floor(x), y0 = Math.floor(y), tx = x - x0, ty = y - y0;
    const at = (xx, yy) => (xx < 0 || yy < 0 || xx >= img.w || yy >= img.h) ? 0 : img.px[(yy * img.w + xx) * 3 + c];
    const top = at(x0, y0) + (at(x0 + 1, y0) - at(x0, y0)) * tx;
    const bottom = at(x0, y0 + 1) + (at(x0 + 1, y0 + 1) - at(x0, y0 + 1)) * tx;
    return top + (bottom - top) * ty;
}

// A size×size tensor of the square region (left, top, side) of img.
function crop(img, left, top, side, size, scale, bias) {
    const step = side / size;
    return warp(img, [step, 0, left + 0.5 * step - 0.5, 0, step, top + 0.5 * step - 0.5], size, scale, bias, false);
}

// A size×size tensor sampled through the affine map (u, v) → (m[0]u + m[1]v + m[2], m[3]u + m[4]v + m[5])
// from output pixel centres to photo pixel centres, optionally mirrored.
function warp(img, m, size, scale, bias, mirror) {
    const t = new Float32Array(size * size * 3);
    for (let v = 0; v < size; v++)
        for (let u = 0; u < size; u++) {
            const us = mirror ? size - 1 - u : u;
            const sx = m[0] * us + m[1] * v + m[2], sy = m[3] * us + m[4] * v + m[5];
            for (let c = 0; c < 3; c++) t[(v * size + u) * 3 + c] = sample(img, sx, sy, c) * scale + bias;
        }
    return t;
}

// The similarity transform (least squares, no reflection) taking template points to image points:
// returns the affine map from 112×112 template pixels to photo pixels.
function similarity(template, points) {
    const n = template.length;
    let tx = 0, ty = 0, px = 0, py = 0;
    for (let i = 0; i < n; i++) tx += template[i][0] / n, ty += template[i][1] / n, px += points[i][0] / n, py += points[i][1] / n;
    let num_a = 0, num_b = 0, den = 0;
    for (let i = 0; i < n; i++) {
        const ax = template[i][0] - tx, ay = template[i][1] - ty, bx = points[i][0] - px, by = points[i][1] - py;
        num_a += ax * bx + ay * by;
        num_b += ax * by - ay * bx;
        den += ax * ax + ay * ay;
    }
    const a = num_a / den, b = num_b / den;
    return [a, -b, px - (a * tx - b * ty), b, a, py - (b * tx + a * ty)];
}

// ArcFace's 112×112 landmark template (eyes, nose tip, mouth centre), the alignment MobileFaceNet
// was trained with; BlazeFace gives the same four points (its keypoints 0..3).
const kTemplate = [[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [56.1396, 92.2848]];

const sigmoid = (v) => 1 / (1 + Math.exp(-v));

// MediaPipe BlazeFace anchors: 16×16 cells × 2 then 8×8 cells × 6, centre (cell + 0.5) / cells.
function decode(outputs, size, threshold) {
    const [s0, s1, b0, b1] = outputs;
    const faces = [];
    const grids = [[16, 2, s0, b0], [8, 6, s1, b1]];
    for (const [cells, per, scores, boxes] of grids) {
        for (let i = 0; i < cells * cells * per; i++) {
            const cell = Math.floor(i / per), ax = (cell % cells + 0.5) / cells, ay = (Math.floor(cell / cells) + 0.5) / cells;
            const score = sigmoid(scores[i]);
            if (score < threshold) continue;
            const b = boxes.subarray(i * 16, i * 16 + 16);
            const keypoints = [];
            for (let k = 0; k < 6; k++) keypoints.push([ax + b[4 + 2 * k] / size, ay + b[5 + 2 * k] / size]);
            faces.push({score, cx: ax + b[0] / size, cy: ay + b[1] / size, w: b[2] / size, h: b[3] / size, keypoints});
        }
    }
    faces.sort((a, b) => b.score - a.score);
    const iou = (a, b) => {
        const ix = Math.max(0, Math.min(a.cx + a.w / 2, b.cx + b.w / 2) - Math.max(a.cx - a.w / 2, b.cx - b.w / 2));
        const iy = Math.max(0, Math.min(a.cy + a.h / 2, b.cy + b.h / 2) - Math.max(a.cy - a.h / 2, b.cy - b.h / 2));
        return ix * iy / (a.w * a.h + b.w * b.h - ix * iy);
    };
    const kept = [];
    for (const f of faces) if (kept.every((k) => iou(k, f) < 0.3)) kept.push(f);
    return kept;
}

const write = (name, arr) => fs.writeFileSync(path.join(out, name), Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength));

(async () => {
    const photos = [1, 2, 3, 4, 5, 6].map((i) => readPpm(path.join(files, `photo${i}.ppm`)));
    const faceCrops = [];
    const faceLines = [];
    for (const size of [256, 128]) {
        const session = await ort.InferenceSession.create(path.join(files, `blazeface_${size}.onnx`),
                                                          {intraOpNumThreads: 1, graphOptimizationLevel: 'disabled'});
        const lines = [];
        for (let p = 0; p < photos.length; p++) {
            const img = photos[p];
            const side = Math.max(img.w, img.h);
            const left = (img.w - side) / 2, top = (img.h - side) / 2;
            const input = crop(img, left, top, side, size, 1 / 127.5, -1);
            write(`blazeface_${size}_photo${p + 1}_input.f32`, input);
            const result = await session.run({'input:0': new ort.Tensor('float32', input, [1, size, size, 3])});
            const outputs = ['Identity:0', 'Identity_1:0', 'Identity_2:0', 'Identity_3:0'].map((n) => result[n].data);
            outputs.forEach((o, k) => write(`blazeface_${size}_photo${p + 1}_out${k}.f32`, o));
            const faces = decode(outputs, size, 0.75);
            for (const f of faces) lines.push(`${p + 1} ${f.score.toFixed(6)} ${f.cx.toFixed(6)} ${f.cy.toFixed(6)} ${f.w.toFixed(6)} ${f.h.toFixed(6)}`);
            if (size !== 256) continue;
            for (const f of faces) {
                // Aligned as MobileFaceNet expects: eyes, nose and mouth onto the template.
                const points = f.keypoints.slice(0, 4).map(([x, y]) => [left + x * side, top + y * side]);
                const m = similarity(kTemplate, points);
                const shifted = m.slice();  // the same face 4 template pixels right and 3 down
                shifted[2] += 4 * m[0] + 3 * m[1];
                shifted[5] += 4 * m[3] + 3 * m[4];
                faceCrops.push(warp(img, m, 112, 1 / 128, -127.5 / 128, false));
                faceCrops.push(warp(img, shifted, 112, 1 / 128, -127.5 / 128, false));
                faceCrops.push(warp(img, m, 112, 1 / 128, -127.5 / 128, true));
                faceLines.push(`${p + 1} ${(left + f.cx * side).toFixed(2)} ${(top + f.cy * side).toFixed(2)} ${(Math.max(f.w, f.h) * side).toFixed(2)}`);
            }
        }
        fs.writeFileSync(path.join(out, `blazeface_${size}_faces.txt`), lines.join('\n') + '\n');
        console.log(`make_reference: BlazeFace ${size}: ${lines.length} faces on ${photos.length} photos`);
    }
    const all = new Float32Array(faceCrops.length * 112 * 112 * 3);
    faceCrops.forEach((c, i) => all.set(c, i * c.length));
    write('faces_112.f32', all);
    fs.writeFileSync(path.join(out, 'faces_112.txt'), faceLines.join('\n') + '\n');
    console.log(`make_reference: ${faceLines.length} face crops for MobileFaceNet in ${out}`);
})().catch((e) => {
    console.error(`make_reference: ${e.stack || e}`);
    process.exit(1);
});
