// dvpp benchmarks (issue 3): P1 1080p JPEG → NV12 (raw tjDecompressToYUV2, cv::imdecode), P2 1080p
// JPEG → 224×224 (cv::imdecode + cv::resize), P3 NV12 1080p → 416×416 bilinear (libyuv NV12Scale,
// cv::resize on the Y and UV planes). One thread each: a DVPP channel is single-threaded, so OpenCV
// runs with cv::setNumThreads(1). The JPEG is a synthetic 1920×1080 4:2:0 q90 image unless
// KES_BENCH_JPEG names a real 1080p photo.
#include <benchmark/benchmark.h>
#include <libyuv.h>
#include <turbojpeg.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <vector>

#include "kestrel/dvpp.h"

namespace {

std::vector<uint8_t> make_jpeg() {
    if (const char* path = std::getenv("KES_BENCH_JPEG")) {
        std::ifstream in(path, std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!bytes.empty()) return bytes;
        std::fprintf(stderr, "KES_BENCH_JPEG=%s unreadable; using the synthetic image\n", path);
    }
    const int w = 1920, h = 1080;
    std::vector<uint8_t> rgb(size_t(w) * h * 3);
    // Smooth gradients plus texture, so the entropy coder has photo-like work.
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            uint8_t* p = &rgb[(size_t(y) * w + x) * 3];
            const double t = std::sin(x * 0.031) * std::cos(y * 0.027) + std::sin((x + y) * 0.11) * 0.3;
            p[0] = uint8_t(x * 255 / w);
            p[1] = uint8_t(127 + 120 * t / 1.3);
            p[2] = uint8_t(((x ^ y) & 63) + y * 180 / h);
        }
    tjhandle c = tjInitCompress();
    unsigned char* out = nullptr;
    unsigned long size = 0;
    tjCompress2(c, rgb.data(), w, 0, h, TJPF_RGB, &out, &size, TJSAMP_420, 90, 0);
    std::vector<uint8_t> jpeg(out, out + size);
    tjFree(out);
    tjDestroy(c);
    return jpeg;
}

const std::vector<uint8_t>& jpeg() {
    static const std::vector<uint8_t> j = make_jpeg();
    return j;
}

struct Kestrel {
    kes_mem_pool* pool = nullptr;
    kes_dvpp_channel* ch = nullptr;
    Kestrel() {
        kes_mem_pool_config pc;
        kes_mem_pool_config_init(&pc);
        pc.initial_bytes = size_t(64) << 20;
        kes_mem_pool_create(&pc, &pool);
        kes_dvpp_channel_config cc;
        kes_dvpp_channel_config_init(&cc);
        cc.board_profile = kes_board_get_profile(KES_BOARD_310B);
        cc.pool = pool;
        kes_dvpp_channel_create(&cc, &ch);
    }
    ~Kestrel() {
        kes_dvpp_channel_destroy(ch);
        kes_mem_pool_destroy(pool);
    }
};

void check(benchmark::State& state, kes_status st) {
    if (st != KES_OK) state.SkipWithError(kes_last_error());
}

// ---- P1: JPEG → NV12 ---------------------------------------------------------------------------------

void p1_kestrel(benchmark::State& state) {
    Kestrel k;
    for (auto _ : state) {
        kes_image img;
        check(state, kes_jpeg_decode(k.ch, jpeg().data(), jpeg().size(), KES_PIXEL_NV12, nullptr, &img));
        kes_image_release(&img);
    }
}

void p1_turbojpeg(benchmark::State& state) {
    tjhandle d = tjInitDecompress();
    int w = 0, h = 0, samp = 0, cs = 0;
    tjDecompressHeader3(d, jpeg().data(), jpeg().size(), &w, &h, &samp, &cs);
    std::vector<uint8_t> out(tjBufSizeYUV2(w, 1, h, samp));
    for (auto _ : state)
        if (tjDecompressToYUV2(d, jpeg().data(), jpeg().size(), out.data(), w, 1, h, 0) != 0)
            state.SkipWithError(tjGetErrorStr2(d));
    tjDestroy(d);
}

void p1_opencv(benchmark::State& state) {
    cv::setNumThreads(1);
    const cv::Mat buf(1, int(jpeg().size()), CV_8UC1, const_cast<uint8_t*>(jpeg().data()));
    for (auto _ : state) benchmark::DoNotOptimize(cv::imdecode(buf, cv::IMREAD_COLOR).data);
}

// ---- P2: JPEG → 224×224 ------------------------------------------------------------------------------

void p2_kestrel(benchmark::State& state) {
    Kestrel k;
    for (auto _ : state) {
        kes_image small, out;
        check(state,
              kes_jpeg_decode_scaled(k.ch, jpeg().data(), jpeg().size(), KES_PIXEL_NV12, 224, 224, nullptr, &small));
        check(state, kes_vpc_crop_resize(k.ch, &small, nullptr, 224, 224, KES_VPC_INTERP_BILINEAR, nullptr, &out));
        kes_image_release(&out);
        kes_image_release(&small);
    }
}

void p2_opencv(benchmark::State& state) {
    cv::setNumThreads(1);
    const cv::Mat buf(1, int(jpeg().size()), CV_8UC1, const_cast<uint8_t*>(jpeg().data()));
    cv::Mat out;
    for (auto _ : state)
        cv::resize(cv::imdecode(buf, cv::IMREAD_COLOR), out, cv::Size(224, 224), 0, 0, cv::INTER_LINEAR);
}

// ---- P3: NV12 1080p → 416×416 ------------------------------------------------------------------------

struct Nv12Source {
    Kestrel k;
    kes_image img{};
    Nv12Source() { kes_jpeg_decode(k.ch, jpeg().data(), jpeg().size(), KES_PIXEL_NV12, nullptr, &img); }
    ~Nv12Source() { kes_image_release(&img); }
    const uint8_t* y() const { return static_cast<const uint8_t*>(img.data); }
    const uint8_t* uv() const { return y() + size_t(img.width_stride) * img.height_stride; }
};

void p3_kestrel(benchmark::State& state) {
    Nv12Source src;
    for (auto _ : state) {
        kes_image out;
        check(state,
              kes_vpc_crop_resize(src.k.ch, &src.img, nullptr, 416, 416, KES_VPC_INTERP_BILINEAR, nullptr, &out));
        kes_image_release(&out);
    }
}

void p3_libyuv(benchmark::State& state) {
    Nv12Source src;
    std::vector<uint8_t> y(416 * 416), uv(416 * 208);
    for (auto _ : state)
        libyuv::NV12Scale(src.y(), int(src.img.width_stride), src.uv(), int(src.img.width_stride), int(src.img.width),
                          int(src.img.height), y.data(), 416, uv.data(), 416, 416, 416, libyuv::kFilterBilinear);
}

void p3_opencv(benchmark::State& state) {
    cv::setNumThreads(1);
    Nv12Source src;
    const cv::Mat y(int(src.img.height), int(src.img.width), CV_8UC1, const_cast<uint8_t*>(src.y()),
                    src.img.width_stride);
    const cv::Mat uv(int(src.img.height / 2), int(src.img.width / 2), CV_8UC2, const_cast<uint8_t*>(src.uv()),
                     src.img.width_stride);
    cv::Mat oy, ouv;
    for (auto _ : state) {
        cv::resize(y, oy, cv::Size(416, 416), 0, 0, cv::INTER_LINEAR);
        cv::resize(uv, ouv, cv::Size(208, 208), 0, 0, cv::INTER_LINEAR);
    }
}

}  // namespace

BENCHMARK(p1_kestrel)->Name("dvpp/P1_jpeg1080p_to_nv12:kestrel")->Unit(benchmark::kMillisecond);
BENCHMARK(p1_turbojpeg)->Name("dvpp/P1_jpeg1080p_to_nv12:turbojpeg")->Unit(benchmark::kMillisecond);
BENCHMARK(p1_opencv)->Name("dvpp/P1_jpeg1080p_to_nv12:opencv")->Unit(benchmark::kMillisecond);
BENCHMARK(p2_kestrel)->Name("dvpp/P2_jpeg1080p_to_224:kestrel")->Unit(benchmark::kMillisecond);
BENCHMARK(p2_opencv)->Name("dvpp/P2_jpeg1080p_to_224:opencv")->Unit(benchmark::kMillisecond);
BENCHMARK(p3_kestrel)->Name("dvpp/P3_nv12_1080p_to_416:kestrel")->Unit(benchmark::kMicrosecond);
BENCHMARK(p3_libyuv)->Name("dvpp/P3_nv12_1080p_to_416:libyuv")->Unit(benchmark::kMicrosecond);
BENCHMARK(p3_opencv)->Name("dvpp/P3_nv12_1080p_to_416:opencv")->Unit(benchmark::kMicrosecond);
