// The VPC's SIMD kernel tables (SSE2 and AVX2 on x86, NEON on aarch64) against its scalar table, bit for
// bit, over a few hundred random shapes and scales: each table this CPU runs (kes::vpc::kernels_available())
// is passed to the internal calls directly, in one process. The resize results are also checked against
// the plain per-pixel statement of OpenCV's algorithm (test_vpc_reference.hpp), so a bug shared by all
// tables fails too. Under KES_CPU_DISABLE=all only the scalar table is left.
#include <algorithm>
#include <random>
#include <string>

#include "dispatch_expect.hpp"
#include "dvpp_test_util.hpp"
#include "test_vpc_reference.hpp"
#include "vpc_internal.hpp"

using namespace kes_test;

namespace {

constexpr uint8_t kGuard = 0xA5;

// A w × h plane of cn-byte pixels stored with `pad` spare bytes after each row and starting `shift`
// bytes past an aligned address, as an ROI inside a larger image does.
struct PaddedPlane {
    std::vector<uint8_t> buf;
    size_t stride = 0, shift = 0, row_bytes = 0;
    uint32_t h = 0;

    PaddedPlane(uint32_t w, uint32_t rows, uint32_t cn, size_t pad, size_t start)
        : stride(size_t(w) * cn + pad), shift(start), row_bytes(size_t(w) * cn), h(rows) {
        buf.assign(shift + stride * rows, kGuard);
    }
    uint8_t* row(uint32_t y) { return buf.data() + shift + stride * y; }
};

struct Shape {
    uint32_t sw, sh, dw, dh, cn;
    std::string str() const {
        return std::to_string(sw) + "x" + std::to_string(sh) + " -> " + std::to_string(dw) + "x" + std::to_string(dh) +
               " cn " + std::to_string(cn);
    }
};

// Up- and downscales (also far enough for the 16- and 32-byte windows to fail), exact 2× (the area
// shortcut), near-equal sizes and unrelated sizes; widths on and off every vector multiple.
Shape random_shape(std::mt19937& rng, int k) {
    auto uniform = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
    static const uint32_t kChannels[] = {1, 2, 1, 2, 1, 2, 3, 4};
    Shape s{uniform(1, 150), uniform(1, 40), 0, 0, kChannels[k % 8]};
    auto scaled = [&](uint32_t v, double f) { return std::max<uint32_t>(1, uint32_t(std::lround(v * f))); };
    switch (k % 5) {
        case 0: {  // upscale up to 6×
            const double f = std::uniform_real_distribution<double>(1.0, 6.0)(rng);
            s.dw = scaled(s.sw, f);
            s.dh = scaled(s.sh, std::uniform_real_distribution<double>(0.5, 3.0)(rng));
            break;
        }
        case 1: {  // downscale up to 12×
            s.sw = uniform(16, 480);
            const double f = std::uniform_real_distribution<double>(1.0, 12.0)(rng);
            s.dw = scaled(s.sw, 1.0 / f);
            s.dh = scaled(s.sh, std::uniform_real_distribution<double>(0.3, 2.0)(rng));
            break;
        }
        case 2:  // exact 2× on both axes
            s.sw = 2 * uniform(1, 120);
            s.sh = 2 * uniform(1, 20);
            s.dw = s.sw / 2;
            s.dh = s.sh / 2;
            break;
        case 3:  // within a few pixels
            s.dw = std::max<int>(1, int(s.sw) + int(uniform(0, 6)) - 3);
            s.dh = std::max<int>(1, int(s.sh) + int(uniform(0, 4)) - 2);
            break;
        default:
            s.dw = uniform(1, 300);
            s.dh = uniform(1, 40);
            break;
    }
    return s;
}

// resize_plane from a padded, shifted source into a padded, shifted destination; every byte outside
// the dw × dh pixels must keep its guard value.
std::vector<uint8_t> resize_padded(const RefPlane& src, const Shape& s, kes::vpc::Filter f, size_t shift,
                                   const kes::vpc::Kernels& k) {
    PaddedPlane in(s.sw, s.sh, s.cn, 7 + shift, shift);
    for (uint32_t y = 0; y < s.sh; ++y) std::memcpy(in.row(y), &src.px[size_t(y) * in.row_bytes], in.row_bytes);
    PaddedPlane out(s.dw, s.dh, s.cn, 5 + shift, 3 - shift % 3);
    kes::vpc::resize_plane({in.row(0), in.stride, s.sw, s.sh}, s.cn, out.row(0), out.stride, s.dw, s.dh, f, k);
    std::vector<uint8_t> px;
    px.reserve(out.row_bytes * s.dh);
    for (uint32_t y = 0; y < s.dh; ++y) px.insert(px.end(), out.row(y), out.row(y) + out.row_bytes);
    size_t stray = 0;
    for (size_t i = 0; i < out.buf.size(); ++i) {
        const bool inside = i >= out.shift && (i - out.shift) % out.stride < out.row_bytes;
        if (!inside && out.buf[i] != kGuard) ++stray;
    }
    EXPECT_EQ(stray, 0u) << "bytes written outside the output rows for " << s.str() << " on " << k.name;
    return px;
}

}  // namespace

TEST(VpcSimd, ActiveTableIsTheFastestThisCpuAllows) {
    // SSE2 is x86-64's baseline but goes with SSE4.1's bit, so KES_CPU_DISABLE=all reaches it too.
    const std::initializer_list<kes_test::TableGate> gates = {
        {KES_CPU_AVX2, "avx2"}, {KES_CPU_NEON, "neon"}, {KES_CPU_SSE41, "sse2"}};
    const std::string want = kes_test::expected_table(gates, "scalar");
    kes_test::record_table("vpc", want);
    EXPECT_EQ(kes_vpc_kernels_name(), want);
    EXPECT_EQ(kes_test::names_of(kes::vpc::kernels_available()), kes_test::expected_usable(gates, "scalar"));
}

// The chroma row steps of VDEC (planar U, V → interleaved) and JPEGD (one component into every other
// byte) on every table, for every length up to a few vectors: the plain loop's bytes, nothing written
// past the row (the guard bytes after it stay).
TEST(VpcSimd, ChromaRowStepsMatchThePlainLoopOnEveryTable) {
    std::mt19937 rng(5);
    for (const kes::vpc::Kernels* k : kes::vpc::kernels_available()) {
        for (size_t n = 0; n <= 70; ++n) {
            std::vector<uint8_t> a(n), b(n);
            for (auto& v : a) v = static_cast<uint8_t>(rng());
            for (auto& v : b) v = static_cast<uint8_t>(rng());
            std::vector<uint8_t> got(2 * n + 8, 0xA5), want(2 * n + 8, 0xA5);
            kes::vpc::interleave_row(a.data(), b.data(), got.data(), n, *k);
            for (size_t i = 0; i < n; ++i) want[2 * i] = a[i], want[2 * i + 1] = b[i];
            EXPECT_EQ(got, want) << k->name << " interleave_row n=" << n;
            // spread_row keeps the odd bytes (the other component) and the guard.
            std::vector<uint8_t> got2(2 * n + 8), want2;
            for (auto& v : got2) v = static_cast<uint8_t>(rng());
            want2 = got2;
            kes::vpc::spread_row(a.data(), got2.data(), n, *k);
            for (size_t i = 0; i < n; ++i) want2[2 * i] = a[i];
            EXPECT_EQ(got2, want2) << k->name << " spread_row n=" << n;
        }
    }
}

TEST(VpcSimd, ResizePlaneMatchesScalarPathOnRandomShapes) {
    std::mt19937 rng(20240611);
    RecordProperty("simd_path", kes::vpc::kernels_active().name);
    const kes::vpc::Kernels& scalar_k = kes::vpc::kernels_scalar();
    for (int k = 0; k < 240; ++k) {
        const Shape s = random_shape(rng, k);
        const RefPlane src = random_plane(s.sw, s.sh, s.cn, 1000 + uint32_t(k));
        for (kes::vpc::Filter f : {kes::vpc::Filter::bilinear, kes::vpc::Filter::nearest}) {
            const bool linear = f == kes::vpc::Filter::bilinear;
            const size_t shift = size_t(k) % 5;
            const std::vector<uint8_t> scalar = resize_padded(src, s, f, shift, scalar_k);
            const RefPlane want = linear ? ref_resize_linear(src, s.dw, s.dh) : ref_resize_nearest(src, s.dw, s.dh);
            ASSERT_EQ(scalar, want.px) << "scalar vs reference, " << (linear ? "bilinear " : "nearest ") << s.str();
            for (const kes::vpc::Kernels* table : kes::vpc::kernels_available()) {
                if (table == &scalar_k) continue;
                const std::vector<uint8_t> fast = resize_padded(src, s, f, shift, *table);
                ASSERT_EQ(fast.size(), scalar.size());
                const auto diff = std::mismatch(fast.begin(), fast.end(), scalar.begin());
                ASSERT_TRUE(diff.first == fast.end())
                    << table->name << " vs scalar, " << (linear ? "bilinear " : "nearest ") << s.str() << ": byte "
                    << (diff.first - fast.begin()) << " is " << int(*diff.first) << ", scalar " << int(*diff.second);
            }
        }
    }
}

TEST(VpcSimd, VerticalKernelMatchesTheFormulaAtTheExtremes) {
    // Largest horizontal sums (255 · 2048 >> 4) and the weight ends 0 and 2048: the kernels' 16-bit
    // arithmetic must neither wrap nor clip where the scalar int32 formula does not.
    std::mt19937 rng(7);
    const size_t n = 77;
    std::vector<int16_t> h0(n), h1(n);
    std::vector<uint8_t> got(n);
    for (int trial = 0; trial < 64; ++trial) {
        for (size_t i = 0; i < n; ++i) {
            h0[i] = int16_t(trial % 4 == 0 ? 32640 : rng() % 32641);
            h1[i] = int16_t(trial % 4 == 1 ? 32640 : rng() % 32641);
        }
        const int32_t b0 = trial % 8 == 2 ? 0 : trial % 8 == 3 ? 2048 : int32_t(rng() % 2049), b1 = 2048 - b0;
        for (const kes::vpc::Kernels* table : kes::vpc::kernels_available()) {
            if (!table->vresize_linear) continue;
            const size_t done = table->vresize_linear(h0.data(), h1.data(), b0, b1, got.data(), n);
            for (size_t i = 0; i < done; ++i) {
                const int32_t v = (((h0[i] * b0) >> 16) + ((h1[i] * b1) >> 16) + 2) >> 2;
                ASSERT_EQ(got[i], std::clamp(v, 0, 255)) << table->name << " element " << i << " b0 " << b0;
            }
        }
    }
}

TEST(VpcSimd, Nv12AndNv21CropResizeMatchScalarPath) {
    // The public call: luma as one plane, chroma as interleaved pairs, from ROIs at even offsets.
    std::mt19937 rng(99);
    auto uniform = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
    Channel ch(KES_BOARD_310B);
    for (int k = 0; k < 80; ++k) {
        const kes_pixel_format fmt = k % 2 ? KES_PIXEL_NV21 : KES_PIXEL_NV12;
        const uint32_t w = 2 * uniform(16, 200), h = 2 * uniform(16, 60);
        Image in;
        ASSERT_EQ(kes_image_alloc(&in, nullptr, fmt, w, h, 0, 0), KES_OK) << kes_last_error();
        for (uint32_t p = 0; p < 2; ++p) {
            kes_image_plane pl;
            ASSERT_EQ(kes_image_get_plane(&in, p, &pl), KES_OK);
            const RefPlane r = random_plane(w, p ? h / 2 : h, 1, uint32_t(k * 2 + p));
            for (uint32_t y = 0; y < (p ? h / 2 : h); ++y) std::memcpy(pl.data + y * pl.stride, &r.px[y * w], w);
        }
        kes_vpc_roi roi;
        roi.left = 2 * uniform(0, w / 4);
        roi.top = 2 * uniform(0, h / 4);
        roi.right = roi.left + 2 * uniform(8, (w - roi.left) / 2) - 1;
        roi.bottom = roi.top + 2 * uniform(8, (h - roi.top) / 2) - 1;
        const uint32_t rw = kes::vpc::roi_width(roi), rh = kes::vpc::roi_height(roi);
        const double fx = std::uniform_real_distribution<double>(0.15, 3.0)(rng);
        const double fy = std::uniform_real_distribution<double>(0.15, 3.0)(rng);
        const uint32_t ow = std::max<uint32_t>(16, uint32_t(rw * fx) & ~1u);
        const uint32_t oh = std::max<uint32_t>(16, uint32_t(rh * fy) & ~1u);
        for (kes_vpc_interp f : {KES_VPC_INTERP_BILINEAR, KES_VPC_INTERP_NEAREST}) {
            // The public call runs the active table; the scalar table runs the same region resize.
            Image fast, scalar;
            ASSERT_EQ(kes_vpc_crop_resize(ch.get(), &in, &roi, ow, oh, f, nullptr, &fast), KES_OK) << kes_last_error();
            ASSERT_EQ(kes_image_alloc(&scalar, nullptr, fmt, ow, oh, 0, 0), KES_OK) << kes_last_error();
            kes::vpc::resize_nv_region(
                in, roi, scalar, kes_vpc_roi{0, 0, ow - 1, oh - 1},
                f == KES_VPC_INTERP_NEAREST ? kes::vpc::Filter::nearest : kes::vpc::Filter::bilinear,
                kes::vpc::kernels_scalar());
            for (uint32_t p = 0; p < 2; ++p)
                for (uint32_t y = 0; y < (p ? oh / 2 : oh); ++y)
                    ASSERT_EQ(0, std::memcmp(fast.row(p, y), scalar.row(p, y), ow))
                        << kes::vpc::kernels_active().name << " vs scalar, " << kes_pixel_format_name(fmt) << " " << w
                        << "x" << h << " roi " << rw << "x" << rh << "+" << roi.left << "+" << roi.top << " -> " << ow
                        << "x" << oh << (f == KES_VPC_INTERP_NEAREST ? " nearest" : " bilinear") << ", plane " << p
                        << " row " << y;
        }
    }
}

TEST(VpcSimd, YuvToRgbMatchesScalarPath) {
    // Every 4:2:0 layout, both channel orders and all four matrices, widths around the 16-pixel step.
    std::mt19937 rng(5);
    Channel ch(KES_BOARD_310B);
    const kes_pixel_format ins[] = {KES_PIXEL_NV12, KES_PIXEL_NV21, KES_PIXEL_I420};
    const kes_pixel_format outs[] = {KES_PIXEL_RGB888, KES_PIXEL_BGR888};
    const kes_vpc_csc_matrix mats[] = {KES_VPC_CSC_BT601_WIDE, KES_VPC_CSC_BT601_NARROW, KES_VPC_CSC_BT709_WIDE,
                                       KES_VPC_CSC_BT709_NARROW};
    for (int k = 0; k < 48; ++k) {
        const uint32_t w = 2 * std::uniform_int_distribution<uint32_t>(5, 90)(rng);
        const uint32_t h = 2 * std::uniform_int_distribution<uint32_t>(5, 12)(rng);
        const kes_pixel_format fmt = ins[k % 3];
        Image in;
        ASSERT_EQ(kes_image_alloc(&in, nullptr, fmt, w, h, 0, 0), KES_OK) << kes_last_error();
        const uint32_t planes = fmt == KES_PIXEL_I420 ? 3 : 2;
        for (uint32_t p = 0; p < planes; ++p) {
            kes_image_plane pl;
            ASSERT_EQ(kes_image_get_plane(&in, p, &pl), KES_OK);
            const uint32_t pw = p == 0 || planes == 2 ? w : w / 2, ph = p == 0 ? h : h / 2;
            const RefPlane r = random_plane(pw, ph, 1, uint32_t(100 + k * 3 + p));
            for (uint32_t y = 0; y < ph; ++y) std::memcpy(pl.data + y * pl.stride, &r.px[y * pw], pw);
        }
        const kes_pixel_format of = outs[(k / 3) % 2];
        const kes_vpc_csc_matrix m = mats[(k / 6) % 4];
        // The public call runs the active table; the scalar table runs the same conversion.
        Image fast, scalar;
        ASSERT_EQ(kes_vpc_convert_color(ch.get(), &in, of, m, nullptr, &fast), KES_OK) << kes_last_error();
        ASSERT_EQ(kes_image_alloc(&scalar, nullptr, of, w, h, 0, 0), KES_OK) << kes_last_error();
        kes::vpc::yuv420_to_rgb(in, scalar, m, kes::vpc::kernels_scalar());
        for (uint32_t y = 0; y < h; ++y)
            ASSERT_EQ(0, std::memcmp(fast.row(0, y), scalar.row(0, y), size_t(w) * 3))
                << kes::vpc::kernels_active().name << " vs scalar, " << kes_pixel_format_name(fmt) << " -> "
                << kes_pixel_format_name(of) << " matrix " << int(m) << " " << w << "x" << h << " row " << y;
    }
}
