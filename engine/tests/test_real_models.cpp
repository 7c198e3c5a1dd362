// Real models end to end (issue 5): BlazeFace 256/128 (ONNX) and MobileFaceNet (TFLite) are converted
// with the public converter API (kestrel/convert.h, what kes-convert runs), loaded into memory from a
// kes_mem_pool, executed through kestrel/engine.h and checked against references:
//   - BlazeFace: ONNX Runtime's outputs on the same input tensors (engine/tests/models/make_reference.cjs)
//     within |Δ| ≤ 1e-3·(1 + |ref|), and the faces decoded from Kestrel's outputs (anchors → boxes,
//     score ≥ 0.75, NMS) at the places ONNX Runtime's outputs put them (same count, IoU ≥ 0.9).
//   - MTCNN P-Net: an image pyramid through dynamic image size gears, each equal to a static conversion.
//   - MobileFaceNet (ONNX Runtime cannot run TFLite; OpenCV 4.6 has no TFLite reader): the embedding
//     properties on faces BlazeFace finds in the photos — the same face shifted or mirrored has cosine
//     > 0.7, two people of one group photo < 0.6 — and batch gears 1 and 2 agreeing.
// The models, photos and references live in ${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}, filled
// by engine/tests/models/fetch_models.sh (npm); without them every test here skips, saying so.
// Every build runs them, the emulated aarch64 board included (on fewer photos and faces there, as in
// sanitizer builds).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kes/npy.hpp"
#include "kestrel/convert.h"
#include "kestrel/engine.h"
#include "kestrel/memory.h"
#include "kestrel/tensor.h"
#include "model_cache.hpp"
#include "test_deps.hpp"

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(NDEBUG) || defined(KES_REAL_MODELS_SMALL)
constexpr bool kSlowBuild = true;  // sanitizers / -O0 / qemu: the reference kernels run ~10× slower
#else
constexpr bool kSlowBuild = false;
#endif

using kes_test::cache_dir;
using kes_test::read_bytes;

bool read_floats(const std::string& path, std::vector<float>& out) {
    std::vector<uint8_t> b;
    if (!read_bytes(path, b) || b.size() % 4) return false;
    out.resize(b.size() / 4);
    if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
    return true;
}

#define SKIP_UNLESS_FETCHED(path)                                                                             \
    do {                                                                                                      \
        if (!std::ifstream(path)) {                                                                           \
            KES_TEST_SKIP("real models not fetched ("                                                         \
                          << (path)                                                                           \
                          << " missing): run engine/tests/models/fetch_models.sh, which needs npm and node"); \
        }                                                                                                     \
    } while (0)

// A converted model loaded into work and weight memory taken from one kes_mem_pool.
struct LoadedModel {
    kes_mem_pool* pool = nullptr;
    void* work = nullptr;
    void* weight = nullptr;
    kes_model* model = nullptr;
    kes_model_context* ctx = nullptr;
    kes_convert_summary summary{};
    const char* calibration = nullptr;  // set: converted with --quantize int8 on this folder of .npy inputs

    ~LoadedModel() {
        kes_model_context_destroy(ctx);
        kes_model_unload(model);
        if (pool) {
            kes_mem_pool_free(pool, work);
            kes_mem_pool_free(pool, weight);
        }
        kes_mem_pool_destroy(pool);
    }

    // Converts model_path with `dynamic_batch` or `image_sizes` gears (or none) and loads it; records
    // failures.
    bool load(const std::string& model_path, const char* dynamic_batch, const char* image_sizes = nullptr,
              const char* input_shape = nullptr) {
        std::vector<uint8_t> source;
        EXPECT_TRUE(read_bytes(model_path, source)) << model_path;
        kes_convert_options options;
        EXPECT_EQ(kes_convert_options_init(&options), KES_OK);
        options.dynamic_batch = dynamic_batch;
        options.dynamic_image_size = image_sizes;
        options.input_shape = input_shape;
        options.quantize = calibration ? "int8" : nullptr;
        options.calibration = calibration;
        summary.struct_size = sizeof(summary);
        void* kom = nullptr;
        size_t kom_size = 0;
        const kes_status converted =
            kes_convert_memory(source.data(), source.size(), &options, &kom, &kom_size, &summary);
        EXPECT_EQ(converted, KES_OK) << kes_last_error();
        if (converted != KES_OK) return false;
        std::unique_ptr<void, void (*)(void*)> kom_owner(kom, kes_convert_free);

        size_t work_bytes = 0, weight_bytes = 0;
        EXPECT_EQ(kes_model_query_size(kom, kom_size, &work_bytes, &weight_bytes), KES_OK) << kes_last_error();
        kes_mem_pool_config cfg;
        kes_mem_pool_config_init(&cfg);
        cfg.initial_bytes = work_bytes + weight_bytes + 256;
        cfg.name = "real-model";
        EXPECT_EQ(kes_mem_pool_create(&cfg, &pool), KES_OK) << kes_last_error();
        if (!pool) return false;
        EXPECT_EQ(kes_mem_pool_alloc(pool, work_bytes, &work), KES_OK) << kes_last_error();
        EXPECT_EQ(kes_mem_pool_alloc(pool, weight_bytes, &weight), KES_OK) << kes_last_error();
        EXPECT_EQ(kes_model_load_from_memory_with_mem(kom, kom_size, work, work_bytes, weight, weight_bytes, &model),
                  KES_OK)
            << kes_last_error();
        if (!model) return false;
        EXPECT_EQ(kes_model_context_create(model, nullptr, 0, &ctx), KES_OK) << kes_last_error();
        size_t arena = 0, ideal = 0;
        EXPECT_EQ(kes_model_get_memory_plan(model, &arena, &ideal), KES_OK);
        std::cout << "[ model    ] " << model_path.substr(model_path.find_last_of('/') + 1) << ": " << summary.ops
                  << " ops, " << summary.parameters << " parameters, arena " << arena << " B vs ideal " << ideal
                  << " B (" << (ideal ? static_cast<double>(arena) / static_cast<double>(ideal) : 0.0) << "x), weights "
                  << weight_bytes << " B\n";
        ::testing::Test::RecordProperty("arena_bytes", std::to_string(arena));
        ::testing::Test::RecordProperty("ideal_bytes", std::to_string(ideal));
        EXPECT_GE(arena, ideal);
        if (!ctx) return false;
        // The memory goal of the fast kernels: packed weights at most 1.1x the raw weights of the layers
        // that pack theirs (the ctest reruns under KES_CPU_DISABLE hold every table to it).
        size_t layers = 0;
        EXPECT_EQ(kes_model_layer_count(model, &layers), KES_OK);
        uint64_t raw = 0, packed = 0;
        for (size_t l = 0; l < layers; ++l) {
            kes_model_layer_profile lp;
            std::memset(&lp, 0, sizeof lp);
            lp.struct_size = sizeof lp;
            EXPECT_EQ(kes_model_context_layer_profile(ctx, l, &lp), KES_OK);
            if (lp.packed_bytes) raw += lp.weight_bytes, packed += lp.packed_bytes;
        }
        // (The int8 kernels widen their weights to int16 when they pack them: twice the bytes.)
        if (!calibration) {
            EXPECT_LE(static_cast<double>(packed), 1.1 * static_cast<double>(raw)) << packed << " B packed for " << raw;
        }
        return true;
    }

    // Executes on f32 inputs (shapes from the context's descriptors at its current gear).
    bool run(const std::vector<std::vector<float>*>& inputs, std::vector<std::vector<float>>& outputs) {
        size_t n_in = 0, n_out = 0;
        kes_model_input_count(model, &n_in);
        kes_model_output_count(model, &n_out);
        EXPECT_EQ(n_in, inputs.size());
        if (n_in != inputs.size()) return false;
        std::vector<kes_tensor> ins(n_in), outs(n_out);
        outputs.resize(n_out);
        for (size_t i = 0; i < n_in + n_out; ++i) {
            kes_tensor& t = i < n_in ? ins[i] : outs[i - n_in];
            EXPECT_EQ(
                i < n_in ? kes_model_context_input_desc(ctx, i, &t) : kes_model_context_output_desc(ctx, i - n_in, &t),
                KES_OK);
            size_t elements = 1;
            for (uint32_t d = 0; d < t.ndim; ++d) elements *= static_cast<size_t>(t.shape[d]);
            std::vector<float>& buf = i < n_in ? *inputs[i] : outputs[i - n_in];
            if (i < n_in) {
                EXPECT_EQ(buf.size(), elements) << "input " << i;
                if (buf.size() != elements) return false;
            } else {
                buf.assign(elements, 0.0f);
            }
            const kes_tensor desc = t;  // wrap rewrites t: read the shape from a copy
            EXPECT_EQ(
                kes_tensor_wrap(&t, KES_F32, desc.layout, desc.ndim, desc.shape, buf.data(), elements * sizeof(float)),
                KES_OK);
        }
        const kes_status st = kes_model_execute(ctx, ins.data(), n_in, outs.data(), n_out);
        EXPECT_EQ(st, KES_OK) << kes_last_error();
        return st == KES_OK;
    }
};

// ---- BlazeFace ------------------------------------------------------------------------------------------

struct Face {
    int photo = 0;
    float score = 0, cx = 0, cy = 0, w = 0, h = 0;
};

float iou(const Face& a, const Face& b) {
    const float ix =
        std::max(0.0f, std::min(a.cx + a.w / 2, b.cx + b.w / 2) - std::max(a.cx - a.w / 2, b.cx - b.w / 2));
    const float iy =
        std::max(0.0f, std::min(a.cy + a.h / 2, b.cy + b.h / 2) - std::max(a.cy - a.h / 2, b.cy - b.h / 2));
    return ix * iy / (a.w * a.h + b.w * b.h - ix * iy);
}

// MediaPipe BlazeFace decoding (as make_reference.cjs): 16×16 cells × 2 anchors then 8×8 × 6,
// centre = anchor + (dx, dy)/size, size = (w, h)/size; sigmoid score ≥ 0.75; NMS at IoU 0.3.
std::vector<Face> decode(const std::vector<std::vector<float>>& out, int size, int photo) {
    std::vector<Face> faces;
    const struct {
        int cells, per;
        const std::vector<float>& scores;
        const std::vector<float>& boxes;
    } grids[2] = {{16, 2, out[0], out[2]}, {8, 6, out[1], out[3]}};
    for (const auto& g : grids) {
        for (int i = 0; i < g.cells * g.cells * g.per; ++i) {
            const float score = 1.0f / (1.0f + std::exp(-g.scores[static_cast<size_t>(i)]));
            if (score < 0.75f) continue;
            const int cell = i / g.per;
            const float ax = (static_cast<float>(cell % g.cells) + 0.5f) / static_cast<float>(g.cells);
            const float ay = (static_cast<float>(cell / g.cells) + 0.5f) / static_cast<float>(g.cells);
            const float* b = &g.boxes[static_cast<size_t>(i) * 16];
            const float s = static_cast<float>(size);
            faces.push_back({photo, score, ax + b[0] / s, ay + b[1] / s, b[2] / s, b[3] / s});
        }
    }
    std::stable_sort(faces.begin(), faces.end(), [](const Face& a, const Face& b) { return a.score > b.score; });
    std::vector<Face> kept;
    for (const Face& f : faces)
        if (std::all_of(kept.begin(), kept.end(), [&](const Face& k) { return iou(k, f) < 0.3f; })) kept.push_back(f);
    return kept;
}

std::vector<Face> read_faces(const std::string& path) {
    std::vector<Face> faces;
    std::ifstream f(path);
    Face face;
    while (f >> face.photo >> face.score >> face.cx >> face.cy >> face.w >> face.h) faces.push_back(face);
    return faces;
}

void check_blazeface(int size) {
    const std::string dir = cache_dir();
    const std::string model_path = dir + "/files/blazeface_" + std::to_string(size) + ".onnx";
    const std::string ref = dir + "/reference/blazeface_" + std::to_string(size);
    SKIP_UNLESS_FETCHED(model_path);
    SKIP_UNLESS_FETCHED(ref + "_faces.txt");
    LoadedModel m;
    ASSERT_TRUE(m.load(model_path, nullptr));
    const std::vector<Face> expected = read_faces(ref + "_faces.txt");
    ASSERT_FALSE(expected.empty());
    size_t found = 0;
    double worst = 0.0;
    const int photos = kSlowBuild ? 2 : 6;
    for (int p = 1; p <= photos; ++p) {
        const std::string base = ref + "_photo" + std::to_string(p);
        std::vector<float> input;
        ASSERT_TRUE(read_floats(base + "_input.f32", input)) << base;
        std::vector<std::vector<float>> got;
        ASSERT_TRUE(m.run({&input}, got));
        ASSERT_EQ(got.size(), 4u);
        for (size_t k = 0; k < 4; ++k) {
            std::vector<float> want;
            ASSERT_TRUE(read_floats(base + "_out" + std::to_string(k) + ".f32", want));
            ASSERT_EQ(got[k].size(), want.size()) << "output " << k;
            size_t bad = 0;
            for (size_t i = 0; i < want.size(); ++i) {
                const double err = std::fabs(got[k][i] - want[i]) / (1.0 + std::fabs(want[i]));
                worst = std::max(worst, err);
                if (!(err <= 1e-3) && ++bad <= 3)
                    ADD_FAILURE() << "photo " << p << " output " << k << " [" << i << "]: " << got[k][i]
                                  << " vs ONNX Runtime " << want[i];
            }
        }
        const std::vector<Face> faces = decode(got, size, p);
        std::vector<Face> want_faces;
        for (const Face& f : expected)
            if (f.photo == p) want_faces.push_back(f);
        EXPECT_EQ(faces.size(), want_faces.size()) << "photo " << p;
        for (const Face& w : want_faces) {
            float best = 0.0f;
            for (const Face& f : faces) best = std::max(best, iou(f, w));
            EXPECT_GE(best, 0.9f) << "photo " << p << ": the face ONNX Runtime finds at (" << w.cx << ", " << w.cy
                                  << ") is not found by Kestrel";
            found += best >= 0.9f;
        }
    }
    std::cout << "[ blazeface] " << size << ": " << found << " faces at ONNX Runtime's places on " << photos
              << " photos; worst relative output difference " << worst << "\n";
}

TEST(RealModels, BlazeFace256MatchesOnnxRuntime) {
    check_blazeface(256);
}

TEST(RealModels, BlazeFace128MatchesOnnxRuntime) {
    check_blazeface(128);
}

// ---- MobileFaceNet --------------------------------------------------------------------------------------

double cosine(const float* a, const float* b, size_t n) {
    double d = 0, na = 0, nb = 0;
    for (size_t i = 0; i < n; ++i) d += a[i] * b[i], na += a[i] * a[i], nb += b[i] * b[i];
    return d / std::sqrt(na * nb);
}

TEST(RealModels, MobileFaceNetEmbeddingsSeparateFaces) {
    const std::string dir = cache_dir();
    const std::string model_path = dir + "/files/mobilefacenet.tflite";
    SKIP_UNLESS_FETCHED(model_path);
    SKIP_UNLESS_FETCHED(dir + "/reference/faces_112.txt");
    std::vector<float> crops;
    ASSERT_TRUE(read_floats(dir + "/reference/faces_112.f32", crops));
    std::vector<int> photo_of;
    {
        std::ifstream f(dir + "/reference/faces_112.txt");
        int p;
        float cx, cy, s;
        while (f >> p >> cx >> cy >> s) photo_of.push_back(p);
    }
    constexpr size_t kPixels = 112 * 112 * 3, kDim = 192;
    ASSERT_EQ(crops.size(), photo_of.size() * 3 * kPixels);

    LoadedModel m;
    ASSERT_TRUE(m.load(model_path, "1,2"));  // the file says batch 2; gears 1 and 2
    int64_t gears[4] = {};
    size_t gear_count = 0;
    ASSERT_EQ(kes_model_batch_gears(m.model, gears, 4, &gear_count), KES_OK) << kes_last_error();
    ASSERT_EQ(gear_count, 2u);

    // Slow builds check the faces of one group photo (5 people); optimised builds all 20.
    std::vector<size_t> faces;
    for (size_t f = 0; f < photo_of.size(); ++f)
        if (!kSlowBuild || photo_of[f] == 5) faces.push_back(f);
    ASSERT_GE(faces.size(), 3u);

    // Embeddings of (face, variant) pairs, two per batch-2 execution.
    std::vector<float> emb(faces.size() * 3 * kDim);
    std::vector<std::pair<size_t, size_t>> jobs;  // (index into faces, variant)
    for (size_t i = 0; i < faces.size(); ++i)
        for (size_t v = 0; v < 3; ++v) jobs.emplace_back(i, v);
    ASSERT_EQ(kes_model_context_set_batch(m.ctx, 2), KES_OK) << kes_last_error();
    for (size_t j = 0; j < jobs.size(); j += 2) {
        std::vector<float> input(2 * kPixels);
        for (size_t k = 0; k < 2; ++k) {
            const auto [i, v] = jobs[std::min(j + k, jobs.size() - 1)];
            std::memcpy(&input[k * kPixels], &crops[(faces[i] * 3 + v) * kPixels], kPixels * sizeof(float));
        }
        std::vector<std::vector<float>> out;
        ASSERT_TRUE(m.run({&input}, out));
        ASSERT_EQ(out.size(), 1u);
        ASSERT_EQ(out[0].size(), 2 * kDim);
        for (size_t k = 0; k < 2 && j + k < jobs.size(); ++k) {
            const auto [i, v] = jobs[j + k];
            std::memcpy(&emb[(i * 3 + v) * kDim], &out[0][k * kDim], kDim * sizeof(float));
        }
    }
    auto e = [&](size_t i, size_t v) { return &emb[(i * 3 + v) * kDim]; };
    double min_same = 1.0, max_other = -1.0;
    for (size_t i = 0; i < faces.size(); ++i) {
        const double shifted = cosine(e(i, 0), e(i, 1), kDim), mirrored = cosine(e(i, 0), e(i, 2), kDim);
        EXPECT_GT(shifted, 0.7) << "face " << faces[i] << " (photo " << photo_of[faces[i]] << ") shifted";
        EXPECT_GT(mirrored, 0.7) << "face " << faces[i] << " (photo " << photo_of[faces[i]] << ") mirrored";
        min_same = std::min({min_same, shifted, mirrored});
        for (size_t k = i + 1; k < faces.size(); ++k) {
            if (photo_of[faces[i]] != photo_of[faces[k]]) continue;  // people may recur across photos
            const double other = cosine(e(i, 0), e(k, 0), kDim);
            EXPECT_LT(other, 0.6) << "faces " << faces[i] << " and " << faces[k] << " of photo " << photo_of[faces[i]];
            max_other = std::max(max_other, other);
        }
    }
    std::cout << "[ embedding] " << faces.size() << " faces: same face (shifted/mirrored) cosine >= " << min_same
              << ", different people of one photo <= " << max_other << "\n";

    // Gear 1 gives the first face's embedding as gear 2 did.
    ASSERT_EQ(kes_model_context_set_batch(m.ctx, 1), KES_OK) << kes_last_error();
    std::vector<float> single(&crops[faces[0] * 3 * kPixels], &crops[faces[0] * 3 * kPixels] + kPixels);
    std::vector<std::vector<float>> out;
    ASSERT_TRUE(m.run({&single}, out));
    ASSERT_EQ(out[0].size(), kDim);
    for (size_t d = 0; d < kDim; ++d) EXPECT_NEAR(out[0][d], e(0, 0)[d], 1e-5f * (1.0f + std::fabs(e(0, 0)[d])));
}

// ---- int8: kes-convert --quantize against the float model (issue 25 §2) --------------------------------

// A calibration folder: each sample (`per_sample` floats, shape `shape`) as a .npy in a folder of its
// own under the test directory, removed with the object.
struct CalibrationSet {
    std::string dir;
    size_t count = 0;
    CalibrationSet(const std::string& name, const std::vector<const float*>& samples, size_t per_sample,
                   const std::vector<int64_t>& shape)
        : dir(std::string(KES_TEST_TMPDIR) + "/real_models_" + name + "_" + std::to_string(::getpid())),
          count(samples.size()) {
        ::mkdir(KES_TEST_TMPDIR, 0755);
        ::mkdir(dir.c_str(), 0755);
        for (size_t k = 0; k < count; ++k)
            kes::npy::write_file(file(k), KES_F32, shape, samples[k], per_sample * sizeof(float));
    }
    ~CalibrationSet() {
        for (size_t k = 0; k < count; ++k) std::remove(file(k).c_str());
        ::rmdir(dir.c_str());
    }
    std::string file(size_t k) const { return dir + "/sample" + std::to_string(k) + ".npy"; }
};

// BlazeFace 128 calibrated on the demo photos: every face the f32 model finds, the int8 model finds at
// IoU >= 0.9.
TEST(RealModels, BlazeFace128Int8BoxesMatchFloat) {
    const std::string dir = cache_dir();
    const std::string model_path = dir + "/files/blazeface_128.onnx";
    const std::string ref = dir + "/reference/blazeface_128";
    SKIP_UNLESS_FETCHED(model_path);
    SKIP_UNLESS_FETCHED(ref + "_photo1_input.f32");
    const int photos = kSlowBuild ? 2 : 6;
    std::vector<std::vector<float>> inputs(static_cast<size_t>(photos));
    std::vector<const float*> samples;
    for (int p = 1; p <= photos; ++p) {
        ASSERT_TRUE(read_floats(ref + "_photo" + std::to_string(p) + "_input.f32", inputs[static_cast<size_t>(p - 1)]));
        samples.push_back(inputs[static_cast<size_t>(p - 1)].data());
    }
    const CalibrationSet calibration("blazeface_128", samples, inputs[0].size(), {1, 128, 128, 3});
    LoadedModel f32, int8;
    ASSERT_TRUE(f32.load(model_path, nullptr));
    int8.calibration = calibration.dir.c_str();
    ASSERT_TRUE(int8.load(model_path, nullptr));
    float worst_iou = 1.0f;
    size_t faces = 0;
    for (int p = 1; p <= photos; ++p) {
        std::vector<std::vector<float>> want, got;
        ASSERT_TRUE(f32.run({&inputs[static_cast<size_t>(p - 1)]}, want));
        ASSERT_TRUE(int8.run({&inputs[static_cast<size_t>(p - 1)]}, got));
        const std::vector<Face> want_faces = decode(want, 128, p), got_faces = decode(got, 128, p);
        EXPECT_EQ(got_faces.size(), want_faces.size()) << "photo " << p;
        for (const Face& w : want_faces) {
            float best = 0.0f;
            for (const Face& f : got_faces) best = std::max(best, iou(f, w));
            EXPECT_GE(best, 0.9f) << "photo " << p << ": the f32 face at (" << w.cx << ", " << w.cy << ")";
            worst_iou = std::min(worst_iou, best);
            ++faces;
        }
    }
    EXPECT_GT(faces, 0u);
    std::cout << "[ int8     ] blazeface_128: " << faces << " faces on " << photos << " photos, lowest IoU int8 vs f32 "
              << worst_iou << "\n";
}

// MobileFaceNet calibrated on the shifted and mirrored crops of the demo faces: each face's int8
// embedding (of the crop itself) has cosine >= 0.99 with its f32 one.
TEST(RealModels, MobileFaceNetInt8EmbeddingsMatchFloat) {
    const std::string dir = cache_dir();
    const std::string model_path = dir + "/files/mobilefacenet.tflite";
    SKIP_UNLESS_FETCHED(model_path);
    SKIP_UNLESS_FETCHED(dir + "/reference/faces_112.txt");
    std::vector<float> crops;
    ASSERT_TRUE(read_floats(dir + "/reference/faces_112.f32", crops));
    constexpr size_t kPixels = 112 * 112 * 3, kDim = 192;
    const size_t count = crops.size() / (3 * kPixels);
    ASSERT_GE(count, 4u);
    // The model takes pairs (batch 2). Calibration: the shifted and mirrored crops of the faces checked
    // (every face; 2 in slow builds): min/max calibration on fewer faces clips the faces it never saw
    // (8 faces: cosine 0.96 on the others).
    const size_t faces = kSlowBuild ? 2 : count - count % 2;
    std::vector<std::vector<float>> pairs;
    for (size_t f = 0; f < faces; f += 2)
        for (size_t variant : {1, 2}) {
            std::vector<float> pair(2 * kPixels);
            for (size_t k = 0; k < 2; ++k)
                std::memcpy(&pair[k * kPixels], &crops[((f + k) * 3 + variant) * kPixels], kPixels * sizeof(float));
            pairs.push_back(std::move(pair));
        }
    std::vector<const float*> samples;
    for (const std::vector<float>& p : pairs) samples.push_back(p.data());
    const CalibrationSet calibration("mobilefacenet", samples, 2 * kPixels, {2, 112, 112, 3});
    LoadedModel f32, int8;
    ASSERT_TRUE(f32.load(model_path, nullptr));
    int8.calibration = calibration.dir.c_str();
    ASSERT_TRUE(int8.load(model_path, nullptr));
    double worst = 1.0;
    for (size_t f = 0; f < faces; f += 2) {
        std::vector<float> input(2 * kPixels);
        for (size_t k = 0; k < 2; ++k)
            std::memcpy(&input[k * kPixels], &crops[(f + k) * 3 * kPixels], kPixels * sizeof(float));
        std::vector<std::vector<float>> want, got;
        ASSERT_TRUE(f32.run({&input}, want));
        ASSERT_TRUE(int8.run({&input}, got));
        ASSERT_EQ(got[0].size(), 2 * kDim);
        for (size_t k = 0; k < 2; ++k) {
            const double c = cosine(&got[0][k * kDim], &want[0][k * kDim], kDim);
            EXPECT_GE(c, 0.99) << "face " << f + k;
            worst = std::min(worst, c);
        }
    }
    std::cout << "[ int8     ] mobilefacenet: " << faces << " faces, lowest embedding cosine int8 vs f32 " << worst
              << "\n";
}

}  // namespace

// ---- MTCNN P-Net: an image pyramid through dynamic image size gears --------------------------------

// P-Net is fully convolutional: MTCNN runs it on every level of an image pyramid. One model converted
// with --dynamic-image-size runs each level at its gear; every gear must give exactly what a static
// conversion at that size gives (explicit pads written at conversion: the independent path).
TEST(RealModels, MtcnnPnetRunsAnImagePyramidThroughImageGears) {
    const std::string path = cache_dir() + "/files/mtcnn_pnet.tflite";
    SKIP_UNLESS_FETCHED(path);
    // Odd sizes on purpose: TF SAME padding splits differently per size.
    const int64_t levels[][2] = {{12, 12}, {24, 32}, {49, 65}, {97, 130}};
    LoadedModel pyramid;
    ASSERT_TRUE(pyramid.load(path, nullptr, "12,12;24,32;49,65;97,130"));
    const char* input_name = nullptr;
    ASSERT_EQ(kes_model_input_name(pyramid.model, 0, &input_name), KES_OK);
    for (const auto& hw : levels) {
        SCOPED_TRACE(std::to_string(hw[0]) + "x" + std::to_string(hw[1]));
        ASSERT_EQ(kes_model_context_set_image_size(pyramid.ctx, hw[0], hw[1]), KES_OK) << kes_last_error();
        std::vector<float> image(static_cast<size_t>(hw[0] * hw[1] * 3));
        for (size_t i = 0; i < image.size(); ++i)
            image[i] = 0.8f * std::sin(0.013f * static_cast<float>(i)) * std::cos(0.0071f * static_cast<float>(i));
        std::vector<std::vector<float>> got, want;
        ASSERT_TRUE(pyramid.run({&image}, got));

        const std::string shape =
            std::string(input_name) + ":1," + std::to_string(hw[0]) + "," + std::to_string(hw[1]) + ",3";
        LoadedModel fixed;
        ASSERT_TRUE(fixed.load(path, nullptr, nullptr, shape.c_str()));
        ASSERT_TRUE(fixed.run({&image}, want));
        ASSERT_EQ(got.size(), want.size());
        for (size_t o = 0; o < got.size(); ++o) {
            ASSERT_EQ(got[o].size(), want[o].size()) << "output " << o;
            EXPECT_EQ(std::memcmp(got[o].data(), want[o].data(), got[o].size() * sizeof(float)), 0) << "output " << o;
        }
    }
}

// ---- MediaPipe's TFLite models ---------------------------------------------------------------------------
// Each model (fetch_models.sh takes them from the @mediapipe npm packages) converted, run on photo 1 and
// compared output by output with Arm NN's CpuRef on the same input (make_tflite_reference.py, which
// rewrites what Arm NN 20.08 cannot read into exact equivalents and runs MediaPipe's landmark ops in
// numpy). Both compute in f32 from the same fp16 weights; the bound is on each output's cosine and on
// its largest difference relative to its largest value.

// The pose landmark models' references take minutes each on Arm NN's reference backend, so fetch_models.sh
// makes them only with KES_MEDIAPIPE_REFERENCE=all; their tests skip without them, under CI too.
enum class Reference { made_by_default, on_request };

void check_mediapipe(const char* model, Reference reference = Reference::made_by_default) {
    const std::string dir = cache_dir();
    const std::string model_path = dir + "/files/mediapipe/" + model + ".tflite";
    const std::string ref = dir + "/reference/mediapipe/" + model;
    SKIP_UNLESS_FETCHED(model_path);
    if (reference == Reference::on_request && !std::ifstream(ref + "_out0.f32")) {
        GTEST_SKIP() << "no reference for " << model
                     << ": KES_MEDIAPIPE_REFERENCE=all engine/tests/models/fetch_models.sh";
    }
    SKIP_UNLESS_FETCHED(ref + "_out0.f32");
    LoadedModel m;
    ASSERT_TRUE(m.load(model_path, nullptr));
    std::vector<float> input;
    ASSERT_TRUE(read_floats(ref + "_input.f32", input));
    std::vector<std::vector<float>> got;
    ASSERT_TRUE(m.run({&input}, got));
    for (size_t k = 0; k < got.size(); ++k) {
        std::vector<float> want;
        ASSERT_TRUE(read_floats(ref + "_out" + std::to_string(k) + ".f32", want)) << "output " << k;
        ASSERT_EQ(got[k].size(), want.size()) << "output " << k;
        double max_err = 0.0, max_ref = 0.0;
        for (size_t i = 0; i < want.size(); ++i) {
            max_err = std::max(max_err, static_cast<double>(std::fabs(got[k][i] - want[i])));
            max_ref = std::max(max_ref, static_cast<double>(std::fabs(want[i])));
        }
        const double cos = cosine(got[k].data(), want.data(), want.size());
        std::cout << "[ mediapipe] " << model << " output " << k << " (" << want.size() << " values): cosine " << cos
                  << ", max |diff| " << max_err << " (largest |ref| " << max_ref << ")\n";
        EXPECT_GE(cos, 0.9999) << model << " output " << k;
        EXPECT_LE(max_err, 1e-3 * std::max(1.0, max_ref)) << model << " output " << k;
    }
}

TEST(RealModels, MediaPipeFaceDetectionShortRangeMatchesArmNN) {
    check_mediapipe("face_detection_short_range");
}
TEST(RealModels, MediaPipeFaceDetectionFullRangeMatchesArmNN) {
    check_mediapipe("face_detection_full_range");
}
TEST(RealModels, MediaPipeFaceLandmarkMatchesArmNN) {
    check_mediapipe("face_landmark");
}
TEST(RealModels, MediaPipeHandLandmarkLiteMatchesArmNN) {
    check_mediapipe("hand_landmark_lite");
}
TEST(RealModels, MediaPipeHandLandmarkFullMatchesArmNN) {
    check_mediapipe("hand_landmark_full");
}
TEST(RealModels, MediaPipePalmDetectionLiteMatchesArmNN) {
    check_mediapipe("palm_detection_lite");
}
TEST(RealModels, MediaPipePalmDetectionFullMatchesArmNN) {
    check_mediapipe("palm_detection_full");
}
TEST(RealModels, MediaPipePoseLandmarkLiteMatchesArmNN) {
    check_mediapipe("pose_landmark_lite", Reference::on_request);
}
TEST(RealModels, MediaPipePoseLandmarkFullMatchesArmNN) {
    check_mediapipe("pose_landmark_full", Reference::on_request);
}
TEST(RealModels, MediaPipePoseLandmarkHeavyMatchesArmNN) {
    // 4 s on the scalar kernels of an optimised build; sanitizer, -O0 and emulated builds (ten times
    // slower) check the lite and full variants of the same network instead.
    if (kSlowBuild) GTEST_SKIP() << "pose_landmark_heavy runs in optimised host builds only";
    check_mediapipe("pose_landmark_heavy", Reference::on_request);
}
// DENSIFY (pruned weights) and DEPTH_TO_SPACE:
TEST(RealModels, MediaPipeFaceDetectionFullRangeSparseMatchesArmNN) {
    check_mediapipe("face_detection_full_range_sparse");
}
TEST(RealModels, MediaPipePoseDetectionMatchesArmNN) {
    check_mediapipe("pose_detection");
}
// Convolution2DTransposeBias:
TEST(RealModels, MediaPipeSelfieSegmentationMatchesArmNN) {
    check_mediapipe("selfie_segmentation");
}
TEST(RealModels, MediaPipeSelfieSegmentationLandscapeMatchesArmNN) {
    check_mediapipe("selfie_segmentation_landscape");
}
// Landmarks2TransformMatrix, TransformTensorBilinear and TransformLandmarks (their reference in numpy):
TEST(RealModels, MediaPipeFaceLandmarkWithAttentionMatchesArmNN) {
    check_mediapipe("face_landmark_with_attention");
}
