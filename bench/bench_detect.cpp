// Detector post-processing (issue 14 §1): kestrel/detect.h beside the loops apps write today, one thread.
//   detect_blazeface_896[_dense]  BlazeFace-256 outputs (896 anchors) → faces in source pixels: decode at
//                                 0.75, hard NMS at 0.3, letterbox map. Peers: face-search's decode_faces
//                                 (sigmoid per anchor, O(n²) selection NMS) and our own scalar table.
//                                 Sparse: 3 faces (~40 candidates); dense: 12 large faces (~300).
//   detect_yolov8_decode          YOLOv8 [84, 8400] planar outputs, 80 classes, threshold 0.25: the
//                                 threshold pass + decode. Peers: the per-anchor max-over-classes loop,
//                                 our scalar table.
//   detect_nms/N                  hard NMS of N clustered boxes at 0.5 (the detections a YOLO head gives
//                                 before NMS). Peers: OpenCV 4.6 cv::dnn::NMSBoxes (when built with it),
//                                 our scalar table. The kestrel side copies its input each iteration
//                                 (NMS is in place); the copy is included in its time.
// Every case checks, before timing, that its peers find the same detections.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#if KES_BENCH_DETECT_VS_OPENCV
#include <opencv2/dnn/dnn.hpp>
#endif

#include "detect/detect.hpp"
#include "kestrel/detect.h"
#include "kestrel/status.h"

namespace {

void check(kes_status st, const char* what) {
    if (st != KES_OK) {
        std::fprintf(stderr, "bench_detect: %s: %s\n", what, kes_last_error());
        std::abort();
    }
}

// The "scalar" peer runs the C API's work on the scalar table (the KES_CPU_DISABLE=all path) by calling
// detect.hpp with it; every other case calls the C API (the active table). nullptr: the C API.
using Table = const kes::detect::Kernels*;

size_t decode(Table table, const kes_detect_decode_config& c, const kes_detect_head* heads, size_t head_count,
              const kes_anchor* anchors, size_t anchor_count, kes_detection* out, size_t capacity) {
    if (table) return kes::detect::decode(*table, c, heads, head_count, anchors, anchor_count, out, capacity);
    size_t found = 0;
    check(kes_detect_decode(&c, heads, head_count, anchors, anchor_count, out, capacity, &found), "decode");
    return found;
}

size_t nms(Table table, const kes_detect_nms_config& c, kes_detection* dets, size_t count, void* scratch,
           size_t scratch_size) {
    if (table) return kes::detect::nms(*table, c, dets, count, scratch, scratch_size);
    size_t kept = 0;
    check(kes_detect_nms(&c, dets, count, scratch, scratch_size, &kept), "nms");
    return kept;
}

Table scalar_if(bool scalar) {
    return scalar ? &kes::detect::kernels_scalar() : nullptr;
}

// ---- BlazeFace -----------------------------------------------------------------------------------------

struct Blaze {
    std::vector<kes_anchor> anchors = std::vector<kes_anchor>(896);
    std::vector<float> s = std::vector<float>(896), b = std::vector<float>(896 * 16);
    size_t expect_faces = 0;

    Blaze(int faces, float size) {
        const uint32_t strides[4] = {16, 32, 32, 32};
        kes_detect_anchor_config c;
        kes_detect_anchor_config_init(&c);
        c.input_width = c.input_height = 256;
        c.num_layers = 4;
        c.strides = strides;
        c.min_scale = 0.15625f;
        c.max_scale = 0.75f;
        c.fixed_anchor_size = 1;
        size_t n = 0;
        check(kes_detect_anchors_generate(&c, anchors.data(), anchors.size(), &n), "anchors");
        std::mt19937 rng(42);
        std::uniform_real_distribution<float> u(0.0f, 1.0f);
        for (float& x : s) x = -10.0f + 9.0f * u(rng);
        for (float& x : b) x = (u(rng) - 0.5f) * 8;
        for (int f = 0; f < faces; ++f) {
            const float fx = 20 + u(rng) * 216, fy = 20 + u(rng) * 216, fw = size * (0.8f + 0.4f * u(rng));
            for (size_t i = 0; i < 896; ++i) {
                const float ax = anchors[i].cx * 256, ay = anchors[i].cy * 256;
                if (std::fabs(ax - fx) > fw / 2 || std::fabs(ay - fy) > fw / 2) continue;
                s[i] = 1.2f + 4.0f * u(rng);
                float* r = &b[i * 16];
                r[0] = fx - ax + (u(rng) - 0.5f) * 3, r[1] = fy - ay + (u(rng) - 0.5f) * 3;
                r[2] = fw * (0.95f + 0.1f * u(rng)), r[3] = fw * (0.95f + 0.1f * u(rng));
                for (int k = 0; k < 6; ++k)
                    r[4 + 2 * k] = fx - ax + (u(rng) - 0.5f) * fw, r[5 + 2 * k] = fy - ay + (u(rng) - 0.5f) * fw;
            }
        }
    }
};

const Blaze& blaze(bool dense) {
    static const Blaze sparse(3, 40.0f), many(12, 70.0f);
    return dense ? many : sparse;
}

// The face-search sample's own decode_faces, as it was before kestrel/detect.h.
struct SampleFace {
    float score, cx, cy, w, h;
    float kp[6][2];
};

size_t sample_decode_faces(const float* const out[4], int paste_left, int paste_top, float scale, SampleFace* faces) {
    const struct {
        int cells, per;
        const float* scores;
        const float* boxes;
    } grids[2] = {{16, 2, out[0], out[2]}, {8, 6, out[1], out[3]}};
    SampleFace found[1024];
    size_t n = 0;
    for (int g = 0; g < 2; ++g) {
        for (int i = 0; i < grids[g].cells * grids[g].cells * grids[g].per && n < 1024; ++i) {
            const float score = 1.0f / (1.0f + expf(-grids[g].scores[i]));
            if (score < 0.75f) continue;
            const int cell = i / grids[g].per;
            const float* b = grids[g].boxes + (size_t)i * 16;
            const float cx = ((float)(cell % grids[g].cells) + 0.5f) / grids[g].cells * 256 + b[0];
            const float cy = ((float)(cell / grids[g].cells) + 0.5f) / grids[g].cells * 256 + b[1];
            SampleFace f = {
                score, (cx - (float)paste_left) / scale, (cy - (float)paste_top) / scale, b[2] / scale, b[3] / scale,
                {{0}}};
            for (int k = 0; k < 6; ++k) {
                const float ax = ((float)(cell % grids[g].cells) + 0.5f) / grids[g].cells * 256;
                const float ay = ((float)(cell / grids[g].cells) + 0.5f) / grids[g].cells * 256;
                f.kp[k][0] = (ax + b[4 + 2 * k] - (float)paste_left) / scale;
                f.kp[k][1] = (ay + b[5 + 2 * k] - (float)paste_top) / scale;
            }
            found[n++] = f;
        }
    }
    auto iou = [](const SampleFace* a, const SampleFace* b) {
        const float ix = fminf(a->cx + a->w / 2, b->cx + b->w / 2) - fmaxf(a->cx - a->w / 2, b->cx - b->w / 2);
        const float iy = fminf(a->cy + a->h / 2, b->cy + b->h / 2) - fmaxf(a->cy - a->h / 2, b->cy - b->h / 2);
        if (ix <= 0 || iy <= 0) return 0.0f;
        return ix * iy / (a->w * a->h + b->w * b->h - ix * iy);
    };
    size_t kept = 0;
    while (kept < 64) {
        size_t best = n;
        for (size_t i = 0; i < n; ++i)
            if (found[i].score > 0 && (best == n || found[i].score > found[best].score)) best = i;
        if (best == n) break;
        int overlaps = 0;
        for (size_t k = 0; k < kept && !overlaps; ++k) overlaps = iou(&faces[k], &found[best]) >= 0.3f;
        if (!overlaps) faces[kept++] = found[best];
        found[best].score = 0;
    }
    return kept;
}

// A 1280×720 photo letterboxed into 256²: pasted at (0, 56), 256 × 144.
constexpr int kPasteLeft = 0, kPasteTop = 56;
constexpr float kScale = 256.0f / 1280.0f;

size_t kestrel_faces(Table table, const Blaze& in, kes_detection* dets, size_t capacity, void* scratch,
                     size_t scratch_size) {
    kes_detect_decode_config dc;
    kes_detect_decode_config_init(&dc);
    dc.score_threshold = 0.75f;
    dc.x_scale = dc.y_scale = dc.w_scale = dc.h_scale = 256.0f;
    dc.num_keypoints = 6;
    kes_detect_nms_config nc;
    kes_detect_nms_config_init(&nc);
    nc.iou_threshold = 0.3f;
    nc.max_detections = 64;
    kes_detect_transform t;
    check(kes_detect_transform_letterbox(256, 256, kPasteLeft, kPasteTop, 256, 144, 1280, 720, &t), "transform");
    const kes_detect_head heads[2] = {{in.s.data(), in.b.data(), 512},
                                      {in.s.data() + 512, in.b.data() + 512 * 16, 384}};
    const size_t found = decode(table, dc, heads, 2, in.anchors.data(), 896, dets, capacity);
    const size_t kept = nms(table, nc, dets, std::min(found, capacity), scratch, scratch_size);
    check(kes_detect_transform_apply(&t, dets, kept), "transform");
    return kept;
}

void bm_blaze_kestrel(benchmark::State& state, bool dense, bool scalar) {
    const Blaze& in = blaze(dense);
    std::vector<kes_detection> dets(1024);
    size_t bytes = 0;
    check(kes_detect_nms_scratch_size(dets.size(), &bytes), "scratch size");
    std::vector<unsigned char> scratch(bytes);
    const Table table = scalar_if(scalar);
    size_t kept = 0;
    for (auto _ : state) {
        kept = kestrel_faces(table, in, dets.data(), dets.size(), scratch.data(), bytes);
        benchmark::DoNotOptimize(dets.data());
    }
    state.counters["faces"] = static_cast<double>(kept);
}

void bm_blaze_sample(benchmark::State& state, bool dense) {
    const Blaze& in = blaze(dense);
    const float* outs[4] = {in.s.data(), in.s.data() + 512, in.b.data(), in.b.data() + 512 * 16};
    SampleFace faces[64];
    size_t kept = 0;
    for (auto _ : state) {
        kept = sample_decode_faces(outs, kPasteLeft, kPasteTop, kScale, faces);
        benchmark::DoNotOptimize(faces);
    }
    state.counters["faces"] = static_cast<double>(kept);
}

void verify_blaze(bool dense) {
    const Blaze& in = blaze(dense);
    const float* outs[4] = {in.s.data(), in.s.data() + 512, in.b.data(), in.b.data() + 512 * 16};
    SampleFace want[64];
    const size_t n = sample_decode_faces(outs, kPasteLeft, kPasteTop, kScale, want);
    std::vector<kes_detection> dets(1024);
    const size_t kept = kestrel_faces(nullptr, in, dets.data(), dets.size(), nullptr, 0);
    bool same = kept == n;
    for (size_t i = 0; same && i < n; ++i)
        same = std::fabs((dets[i].x0 + dets[i].x1) / 2 - want[i].cx) < 1e-2f && dets[i].score == want[i].score;
    if (!same || n == 0) {
        std::fprintf(stderr, "bench_detect: BlazeFace %s: kestrel kept %zu faces, the sample %zu\n",
                     dense ? "dense" : "sparse", kept, n);
        std::abort();
    }
}

// ---- YOLOv8 decode -------------------------------------------------------------------------------------

constexpr size_t kYoloN = 8400, kYoloC = 80;

const std::vector<float>& yolo() {
    static const std::vector<float> t = [] {
        std::vector<float> v((4 + kYoloC) * kYoloN);
        std::mt19937 rng(8);
        std::uniform_real_distribution<float> u(0.0f, 1.0f);
        for (size_t a = 0; a < kYoloN; ++a) {
            v[0 * kYoloN + a] = u(rng) * 640, v[1 * kYoloN + a] = u(rng) * 640;
            v[2 * kYoloN + a] = 10 + u(rng) * 200, v[3 * kYoloN + a] = 10 + u(rng) * 200;
            // Post-sigmoid class scores: mostly tiny, ~1% of anchors with one confident class.
            for (size_t c = 0; c < kYoloC; ++c) v[(4 + c) * kYoloN + a] = u(rng) * 0.05f;
            if (u(rng) < 0.01f) v[(4 + rng() % kYoloC) * kYoloN + a] = 0.3f + 0.7f * u(rng);
        }
        return v;
    }();
    return t;
}

size_t kestrel_yolo(Table table, kes_detection* out, size_t capacity) {
    const std::vector<float>& t = yolo();
    kes_detect_decode_config c;
    kes_detect_decode_config_init(&c);
    c.score_mode = KES_DETECT_SCORE_RAW;
    c.score_threshold = 0.25f;
    c.num_classes = kYoloC;
    c.x_scale = c.y_scale = c.w_scale = c.h_scale = 640;
    c.score_anchor_stride = 1, c.score_class_stride = kYoloN;
    c.box_anchor_stride = 1, c.box_value_stride = kYoloN;
    const kes_detect_head head{t.data() + 4 * kYoloN, t.data(), kYoloN};
    return decode(table, c, &head, 1, nullptr, 0, out, capacity);
}

// The loop a YOLOv8 app writes: per anchor, the best class over 80 strided reads, then the box.
size_t naive_yolo(kes_detection* out, size_t capacity) {
    const float* t = yolo().data();
    size_t n = 0;
    for (size_t a = 0; a < kYoloN; ++a) {
        size_t best = 0;
        for (size_t c = 1; c < kYoloC; ++c)
            if (t[(4 + c) * kYoloN + a] > t[(4 + best) * kYoloN + a]) best = c;
        const float score = t[(4 + best) * kYoloN + a];
        if (score < 0.25f || n == capacity) continue;
        const float cx = t[a] / 640, cy = t[kYoloN + a] / 640, w = t[2 * kYoloN + a] / 640, h = t[3 * kYoloN + a] / 640;
        kes_detection& d = out[n++];
        d.x0 = cx - w / 2, d.y0 = cy - h / 2, d.x1 = cx + w / 2, d.y1 = cy + h / 2;
        d.score = score, d.class_id = static_cast<int32_t>(best), d.anchor = static_cast<uint32_t>(a);
        d.num_keypoints = 0;
    }
    return n;
}

void verify_yolo() {
    std::vector<kes_detection> a(1000), b(1000);
    const size_t na = kestrel_yolo(nullptr, a.data(), a.size()), nb = naive_yolo(b.data(), b.size());
    bool same = na == nb && na > 0;
    for (size_t i = 0; same && i < na; ++i) same = a[i].anchor == b[i].anchor && a[i].class_id == b[i].class_id;
    if (!same) {
        std::fprintf(stderr, "bench_detect: YOLOv8 decode: kestrel found %zu, the naive loop %zu\n", na, nb);
        std::abort();
    }
}

void bm_yolo(benchmark::State& state, int impl) {
    std::vector<kes_detection> out(1000);
    const Table table = scalar_if(impl == 1);
    size_t n = 0;
    for (auto _ : state) {
        n = impl == 2 ? naive_yolo(out.data(), out.size()) : kestrel_yolo(table, out.data(), out.size());
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["detections"] = static_cast<double>(n);
}

// ---- NMS -----------------------------------------------------------------------------------------------

// N boxes in clusters of ~10 around N/10 objects on a 640² image (pixels), scores in (0, 1).
std::vector<kes_detection> nms_input(size_t n) {
    std::vector<kes_detection> d(n);
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    const size_t objects = std::max<size_t>(1, n / 10);
    std::vector<float> ox(objects), oy(objects), ow(objects);
    for (size_t o = 0; o < objects; ++o) ox[o] = u(rng) * 600, oy[o] = u(rng) * 600, ow[o] = 10 + u(rng) * 120;
    for (size_t i = 0; i < n; ++i) {
        const size_t o = rng() % objects;
        const float x = ox[o] + (u(rng) - 0.5f) * ow[o] * 0.3f, y = oy[o] + (u(rng) - 0.5f) * ow[o] * 0.3f;
        const float w = ow[o] * (0.8f + 0.4f * u(rng)), h = ow[o] * (0.8f + 0.4f * u(rng));
        d[i] = kes_detection{};
        d[i].x0 = x, d[i].y0 = y, d[i].x1 = x + w, d[i].y1 = y + h, d[i].score = u(rng);
        d[i].anchor = static_cast<uint32_t>(i);
    }
    return d;
}

size_t kestrel_nms(Table table, const std::vector<kes_detection>& in, std::vector<kes_detection>& work, void* scratch,
                   size_t bytes) {
    kes_detect_nms_config c;
    kes_detect_nms_config_init(&c);
    c.iou_threshold = 0.5f;
    std::copy(in.begin(), in.end(), work.begin());
    return nms(table, c, work.data(), work.size(), scratch, bytes);
}

void bm_nms_kestrel(benchmark::State& state, bool scalar) {
    const size_t n = static_cast<size_t>(state.range(0));
    const std::vector<kes_detection> in = nms_input(n);
    std::vector<kes_detection> work(n);
    size_t bytes = 0;
    check(kes_detect_nms_scratch_size(n, &bytes), "scratch size");
    std::vector<unsigned char> scratch(bytes);
    const Table table = scalar_if(scalar);
    size_t kept = 0;
    for (auto _ : state) {
        kept = kestrel_nms(table, in, work, scratch.data(), bytes);
        benchmark::DoNotOptimize(work.data());
    }
    state.counters["kept"] = static_cast<double>(kept);
}

#if KES_BENCH_DETECT_VS_OPENCV
struct CvInput {
    std::vector<cv::Rect2d> boxes;
    std::vector<float> scores;
};

CvInput cv_input(const std::vector<kes_detection>& d) {
    CvInput c;
    for (const kes_detection& e : d) {
        c.boxes.emplace_back(e.x0, e.y0, e.x1 - e.x0, e.y1 - e.y0);
        c.scores.push_back(e.score);
    }
    return c;
}

void bm_nms_opencv(benchmark::State& state) {
    const size_t n = static_cast<size_t>(state.range(0));
    const CvInput in = cv_input(nms_input(n));
    std::vector<int> keep;
    for (auto _ : state) {
        cv::dnn::NMSBoxes(in.boxes, in.scores, 0.0f, 0.5f, keep);
        benchmark::DoNotOptimize(keep.data());
    }
    state.counters["kept"] = static_cast<double>(keep.size());
}
#endif

void verify_nms(size_t n) {
    const std::vector<kes_detection> in = nms_input(n);
    std::vector<kes_detection> work(n);
    const size_t kept = kestrel_nms(nullptr, in, work, nullptr, 0);
#if KES_BENCH_DETECT_VS_OPENCV
    const CvInput c = cv_input(in);
    std::vector<int> keep;
    cv::dnn::NMSBoxes(c.boxes, c.scores, 0.0f, 0.5f, keep);
    // OpenCV computes IoU in double from (x, y, w, h): a pair at the threshold within rounding may differ.
    size_t same = 0;
    for (size_t i = 0; i < std::min(kept, keep.size()); ++i) same += work[i].anchor == static_cast<uint32_t>(keep[i]);
    if (keep.size() != kept || same + 2 < kept)
        std::fprintf(stderr, "bench_detect: NMS N=%zu: kestrel kept %zu, OpenCV %zu (%zu equal in order)\n", n, kept,
                     keep.size(), same);
#else
    (void)kept;
#endif
}

int register_all() {
    using benchmark::RegisterBenchmark;
    for (bool dense : {false, true}) {
        verify_blaze(dense);
        const std::string name = dense ? "detect_blazeface_896_dense" : "detect_blazeface_896";
        RegisterBenchmark((name + ":kestrel").c_str(), bm_blaze_kestrel, dense, false);
        RegisterBenchmark((name + ":sample").c_str(), bm_blaze_sample, dense);
        RegisterBenchmark((name + ":scalar").c_str(), bm_blaze_kestrel, dense, true);
    }
    verify_yolo();
    RegisterBenchmark("detect_yolov8_decode:kestrel", bm_yolo, 0);
    RegisterBenchmark("detect_yolov8_decode:naive", bm_yolo, 2);
    RegisterBenchmark("detect_yolov8_decode:scalar", bm_yolo, 1);
    for (int n : {1000, 5000}) {
        verify_nms(static_cast<size_t>(n));
        RegisterBenchmark("detect_nms:kestrel", bm_nms_kestrel, false)->Arg(n);
#if KES_BENCH_DETECT_VS_OPENCV
        RegisterBenchmark("detect_nms:opencv", bm_nms_opencv)->Arg(n);
#endif
        RegisterBenchmark("detect_nms:scalar", bm_nms_kestrel, true)->Arg(n);
    }
    return 0;
}

[[maybe_unused]] const int registered = register_all();

}  // namespace
