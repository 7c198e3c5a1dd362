// GridSample, RoiAlign and MaxUnpool (ops/sampling.cpp) against double-precision references written
// from the ONNX spec and its reference implementation (onnx/reference/ops): GridSample gathers a 4x4
// (or 2x2) patch through the padding rule and interpolates rows then columns; RoiAlign follows the
// spec's sampling-grid description; MaxUnpool scatters into a zero tensor.
#include "op_test_util.hpp"

namespace kes_test {
namespace {

// ---- GridSample ---------------------------------------------------------------------------------------

struct GsRef {
    std::string mode, pad;
    bool align = false;
};

double gs_reflect(double x, double lo, double hi) {
    const double rng = hi - lo;
    if (rng <= 0) return lo;
    if (x < lo) {
        const double dx = lo - x;
        const long n = static_cast<long>(dx / rng);
        const double r = dx - static_cast<double>(n) * rng;
        return n % 2 == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        const double dx = x - hi;
        const long n = static_cast<long>(dx / rng);
        const double r = dx - static_cast<double>(n) * rng;
        return n % 2 == 0 ? hi - r : lo + r;
    }
    return x;
}

// Pixel (r, c) of one plane under the padding rule.
double gs_pixel(const std::vector<float>& x, int64_t off, int64_t H, int64_t W, int64_t r, int64_t c, const GsRef& p) {
    const double lo_x = p.align ? 0 : -0.5, hi_x = p.align ? W - 1.0 : W - 0.5;
    const double lo_y = p.align ? 0 : -0.5, hi_y = p.align ? H - 1.0 : H - 0.5;
    if (p.pad == "zeros") {
        if (r < 0 || r >= H || c < 0 || c >= W) return 0.0;
    } else if (p.pad == "border") {
        r = std::min(std::max<int64_t>(r, 0), H - 1);
        c = std::min(std::max<int64_t>(c, 0), W - 1);
    } else {
        r = static_cast<int64_t>(gs_reflect(static_cast<double>(r), lo_y, hi_y));
        c = static_cast<int64_t>(gs_reflect(static_cast<double>(c), lo_x, hi_x));
    }
    return x[static_cast<size_t>(off + r * W + c)];
}

void gs_cubic(double t, double* c) {
    const double a = -0.75, x = std::fabs(t);
    auto far = [&](double s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };
    auto near = [&](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };
    c[0] = far(x + 1), c[1] = near(x), c[2] = near(1 - x), c[3] = far(2 - x);
}

std::vector<double> grid_sample_ref(const std::vector<float>& x, const Shape& xs, const std::vector<float>& grid,
                                    const Shape& gs, const GsRef& p) {
    const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], Ho = gs[1], Wo = gs[2];
    std::vector<double> y(static_cast<size_t>(N * C * Ho * Wo));
    // denormalize, round (nearest), then bring an outside coordinate back (border / reflection)
    auto coord = [&](double n, int64_t d) {
        double v = static_cast<float>(p.align ? (n + 1) / 2 * (d - 1) : ((n + 1) * d - 1) / 2);
        if (p.mode == "nearest") v = std::nearbyint(v);
        const double lo = p.align ? 0 : -0.5, hi = p.align ? d - 1.0 : d - 0.5;
        if (v < lo || v > hi) {
            if (p.pad == "border") v = std::min(std::max(v, 0.0), d - 1.0);
            if (p.pad == "reflection") v = gs_reflect(v, lo, hi);
        }
        return v;
    };
    for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t oy = 0; oy < Ho; ++oy)
                for (int64_t ox = 0; ox < Wo; ++ox) {
                    const size_t g = static_cast<size_t>(((n * Ho + oy) * Wo + ox) * 2);
                    const double fx = coord(grid[g], W), fy = coord(grid[g + 1], H);
                    const int64_t off = (n * C + c) * H * W;
                    double v = 0;
                    if (p.mode == "nearest") {
                        v = gs_pixel(x, off, H, W, static_cast<int64_t>(fy), static_cast<int64_t>(fx), p);
                    } else if (p.mode == "bilinear") {
                        const int64_t x1 = static_cast<int64_t>(std::floor(fx)),
                                      y1 = static_cast<int64_t>(std::floor(fy));
                        const double dx = fx - x1, dy = fy - y1;
                        const double top =
                            (1 - dx) * gs_pixel(x, off, H, W, y1, x1, p) + dx * gs_pixel(x, off, H, W, y1, x1 + 1, p);
                        const double bot = (1 - dx) * gs_pixel(x, off, H, W, y1 + 1, x1, p) +
                                           dx * gs_pixel(x, off, H, W, y1 + 1, x1 + 1, p);
                        v = (1 - dy) * top + dy * bot;
                    } else {
                        const int64_t x0 = static_cast<int64_t>(std::floor(fx)) - 1;
                        const int64_t y0 = static_cast<int64_t>(std::floor(fy)) - 1;
                        double cx[4], cy[4];
                        gs_cubic(fx - x0 - 1, cx);
                        gs_cubic(fy - y0 - 1, cy);
                        for (int i = 0; i < 4; ++i) {
                            double row = 0;
                            for (int j = 0; j < 4; ++j) row += cx[j] * gs_pixel(x, off, H, W, y0 + i, x0 + j, p);
                            v += cy[i] * row;
                        }
                    }
                    y[static_cast<size_t>(((n * C + c) * Ho + oy) * Wo + ox)] = v;
                }
    return y;
}

TEST(OpsGridSample, MatchesReferenceForEveryModePaddingAndAlignment) {
    const Shape xs{2, 3, 5, 6}, gs{2, 4, 7, 2};
    const TT x = f32(xs, random_floats(static_cast<size_t>(product(xs)), 11));
    const TT grid = f32(gs, random_floats(static_cast<size_t>(product(gs)), 12, -1.6f, 1.6f));  // some outside
    for (const char* mode : {"bilinear", "nearest", "bicubic"})
        for (const char* pad : {"zeros", "border", "reflection"})
            for (int align : {0, 1}) {
                const GsRef p{mode, pad, align == 1};
                const TT y = run1("GridSample", A().s("mode", mode).s("padding_mode", pad).i("align_corners", align),
                                  {&x, &grid});
                EXPECT_EQ(y.shape, (Shape{2, 3, 4, 7}));
                const std::string what = std::string(mode) + "/" + pad + "/" + std::to_string(align);
                expect_near_all(y.f(), grid_sample_ref(x.f(), xs, grid.f(), gs, p), 1e-5, what.c_str());
            }
}

TEST(OpsGridSample, FarOutsideGridReflectsRepeatedly) {
    const Shape xs{1, 2, 3, 4}, gs{1, 3, 5, 2};
    const TT x = f32(xs, random_floats(static_cast<size_t>(product(xs)), 21));
    const TT grid = f32(gs, random_floats(static_cast<size_t>(product(gs)), 22, -7.0f, 7.0f));
    for (const char* mode : {"bilinear", "nearest", "bicubic"})
        for (const char* pad : {"zeros", "border", "reflection"}) {
            const TT y = run1("GridSample", A().s("mode", mode).s("padding_mode", pad), {&x, &grid});
            expect_near_all(y.f(), grid_sample_ref(x.f(), xs, grid.f(), gs, GsRef{mode, pad, false}), 1e-5, mode);
        }
}

TEST(OpsGridSample, NonFiniteCoordinatesAreDefined) {
    // NaN samples zeros everywhere; ±inf clamps to the border with border padding, samples zeros with
    // reflection (no mirrored point) and with zeros padding. No mode may read outside X (UBSan/ASan).
    const TT x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const TT grid = f32({1, 1, 3, 2}, {nan, 0, inf, inf, -inf, -inf});
    for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
        SCOPED_TRACE(mode);
        const std::vector<float> reflection =
            run1("GridSample", A().s("mode", mode).s("padding_mode", "reflection"), {&x, &grid}).f();
        EXPECT_EQ(reflection, (std::vector<float>{0, 0, 0}));
        const std::vector<float> zeros = run1("GridSample", A().s("mode", mode), {&x, &grid}).f();
        EXPECT_EQ(zeros, (std::vector<float>{0, 0, 0}));
        const std::vector<float> border =
            run1("GridSample", A().s("mode", mode).s("padding_mode", "border"), {&x, &grid}).f();
        EXPECT_EQ(border[0], 0.0f);  // NaN
        EXPECT_EQ(border[1], 4.0f);  // +inf, +inf: the bottom-right pixel
        EXPECT_EQ(border[2], 1.0f);  // -inf, -inf: the top-left pixel
    }
}

TEST(OpsGridSample, NearestRoundsHalfToEven) {
    // W = 4, align_corners 0: x = ((n + 1) * 4 - 1) / 2, so n = -0.5, 0, 0.5 land on 0.5, 1.5, 2.5
    // exactly; half to even picks columns 0, 2, 2.
    const TT x = f32({1, 1, 1, 4}, {10, 20, 30, 40});
    const TT grid = f32({1, 1, 3, 2}, {-0.5f, 0, 0, 0, 0.5f, 0});
    EXPECT_EQ(run1("GridSample", A().s("mode", "nearest"), {&x, &grid}).f(), (std::vector<float>{10, 30, 30}));
}

TEST(OpsGridSample, OpsetTwentyModeNamesAreAccepted) {
    const Shape xs{1, 1, 4, 4}, gs{1, 2, 2, 2};
    const TT x = f32(xs, random_floats(16, 31));
    const TT grid = f32(gs, random_floats(8, 32));
    expect_near_all(run1("GridSample", A().s("mode", "linear"), {&x, &grid}).f(),
                    grid_sample_ref(x.f(), xs, grid.f(), gs, GsRef{"bilinear", "zeros", false}), 1e-5);
    expect_near_all(run1("GridSample", A().s("mode", "cubic"), {&x, &grid}).f(),
                    grid_sample_ref(x.f(), xs, grid.f(), gs, GsRef{"bicubic", "zeros", false}), 1e-5);
}

TEST(OpsGridSample, RejectsBadShapesAndAttributes) {
    const TT x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const TT grid = f32({1, 1, 1, 2}, {0, 0});
    const TT grid3 = f32({1, 1, 1, 3}, {0, 0, 0});
    const TT grid_n = f32({2, 1, 1, 2}, {0, 0, 0, 0});
    const TT x5 = f32({1, 1, 1, 2, 2}, {1, 2, 3, 4});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "grid", "GridSample", A(), {&x, &grid3});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "grid", "GridSample", A(), {&x, &grid_n});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "4-d", "GridSample", A(), {&x5, &grid});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "mode", "GridSample", A().s("mode", "area"), {&x, &grid});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "padding_mode", "GridSample", A().s("padding_mode", "wrap"),
                        {&x, &grid});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "align_corners", "GridSample", A().i("align_corners", 2),
                        {&x, &grid});
    const TT xi = i32({1, 1, 2, 2}, {1, 2, 3, 4});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "X", "GridSample", A(), {&xi, &grid});
}

// ---- RoiAlign -----------------------------------------------------------------------------------------

struct RoiCase {
    std::string mode = "avg", ctm = "half_pixel";
    int64_t out_h = 3, out_w = 2, sampling_ratio = 0;
    float scale = 1.0f;
};

// Spec: each output bin is split into a grid of sampling points (sampling_ratio per axis, or
// ceil(roi extent / output extent)); each point is bilinearly interpolated (zero outside [-1, extent],
// clamped to the edge inside) and the bin is their average, or for max the largest weighted corner.
std::vector<double> roi_align_ref(const std::vector<float>& x, const Shape& xs, const std::vector<float>& rois,
                                  const std::vector<int64_t>& batch, const RoiCase& c) {
    const int64_t C = xs[1], H = xs[2], W = xs[3], R = static_cast<int64_t>(batch.size());
    std::vector<double> y;
    for (int64_t r = 0; r < R; ++r) {
        const double off = c.ctm == "half_pixel" ? 0.5 : 0.0;
        const double x0 = rois[static_cast<size_t>(r * 4)] * static_cast<double>(c.scale) - off;
        const double y0 = rois[static_cast<size_t>(r * 4 + 1)] * static_cast<double>(c.scale) - off;
        const double x1 = rois[static_cast<size_t>(r * 4 + 2)] * static_cast<double>(c.scale) - off;
        const double y1 = rois[static_cast<size_t>(r * 4 + 3)] * static_cast<double>(c.scale) - off;
        double rw = x1 - x0, rh = y1 - y0;
        if (c.ctm != "half_pixel") rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
        const double bh = rh / c.out_h, bw = rw / c.out_w;
        const int64_t gh = c.sampling_ratio > 0 ? c.sampling_ratio : static_cast<int64_t>(std::ceil(rh / c.out_h));
        const int64_t gw = c.sampling_ratio > 0 ? c.sampling_ratio : static_cast<int64_t>(std::ceil(rw / c.out_w));
        for (int64_t ch = 0; ch < C; ++ch) {
            const int64_t base = (batch[static_cast<size_t>(r)] * C + ch) * H * W;
            auto px = [&](int64_t yy, int64_t xx) {
                return static_cast<double>(x[static_cast<size_t>(base + yy * W + xx)]);
            };
            for (int64_t ph = 0; ph < c.out_h; ++ph)
                for (int64_t pw = 0; pw < c.out_w; ++pw) {
                    std::vector<double> samples;  // avg: interpolated value; max: largest weighted corner
                    for (int64_t iy = 0; iy < gh; ++iy)
                        for (int64_t ix = 0; ix < gw; ++ix) {
                            double sy = y0 + ph * bh + (iy + 0.5) * bh / gh;
                            double sx = x0 + pw * bw + (ix + 0.5) * bw / gw;
                            if (sy < -1.0 || sy > H || sx < -1.0 || sx > W) {
                                samples.push_back(0.0);
                                continue;
                            }
                            sy = std::max(sy, 0.0), sx = std::max(sx, 0.0);
                            int64_t ylo = static_cast<int64_t>(std::floor(sy)),
                                    xlo = static_cast<int64_t>(std::floor(sx));
                            if (ylo >= H - 1) ylo = H - 1, sy = static_cast<double>(ylo);
                            if (xlo >= W - 1) xlo = W - 1, sx = static_cast<double>(xlo);
                            const int64_t yhi = std::min(ylo + 1, H - 1), xhi = std::min(xlo + 1, W - 1);
                            const double ly = sy - ylo, lx = sx - xlo;
                            const double t[4] = {(1 - ly) * (1 - lx) * px(ylo, xlo), (1 - ly) * lx * px(ylo, xhi),
                                                 ly * (1 - lx) * px(yhi, xlo), ly * lx * px(yhi, xhi)};
                            samples.push_back(c.mode == "avg" ? t[0] + t[1] + t[2] + t[3]
                                                              : std::max(std::max(t[0], t[1]), std::max(t[2], t[3])));
                        }
                    double v = 0.0;
                    if (c.mode == "avg") {
                        for (double s : samples) v += s;
                        v /= static_cast<double>(std::max<size_t>(samples.size(), 1));
                    } else if (!samples.empty()) {
                        v = *std::max_element(samples.begin(), samples.end());
                    }
                    y.push_back(v);
                }
        }
    }
    return y;
}

TEST(OpsRoiAlign, MatchesReferenceForModesAndCoordinateTransforms) {
    const Shape xs{2, 3, 7, 9};
    const TT x = f32(xs, random_floats(static_cast<size_t>(product(xs)), 41));
    // inside, partly outside, degenerate (zero width), and one larger than the image
    const std::vector<float> boxes = {1.0f, 1.5f, 6.2f, 5.0f, -2.0f, -1.0f, 3.0f,  4.5f,
                                      4.0f, 2.0f, 4.0f, 6.0f, -1.0f, 0.0f,  12.0f, 9.0f};
    const TT rois = f32({4, 4}, boxes);
    const std::vector<int64_t> batch = {0, 1, 1, 0};
    const TT bi = i64({4}, batch, false);
    for (const char* mode : {"avg", "max"})
        for (const char* ctm : {"half_pixel", "output_half_pixel"})
            for (int64_t sr : {0, 2})
                for (float scale : {1.0f, 0.625f}) {
                    RoiCase c;
                    c.mode = mode, c.ctm = ctm, c.sampling_ratio = sr, c.scale = scale;
                    const TT y = run1("RoiAlign",
                                      A().s("mode", mode)
                                          .s("coordinate_transformation_mode", ctm)
                                          .i("output_height", c.out_h)
                                          .i("output_width", c.out_w)
                                          .i("sampling_ratio", sr)
                                          .f("spatial_scale", scale),
                                      {&x, &rois, &bi});
                    EXPECT_EQ(y.shape, (Shape{4, 3, 3, 2}));
                    const std::string what = std::string(mode) + "/" + ctm + "/sr" + std::to_string(sr);
                    expect_near_all(y.f(), roi_align_ref(x.f(), xs, boxes, batch, c), 1e-5, what.c_str());
                }
}

TEST(OpsRoiAlign, DefaultsAreOneByOneAvgHalfPixel) {
    const Shape xs{1, 2, 4, 4};
    const TT x = f32(xs, random_floats(32, 51));
    const std::vector<float> boxes = {0.5f, 0.5f, 3.5f, 2.5f};
    const TT rois = f32({1, 4}, boxes);
    const TT bi = i32({1}, {0});
    RoiCase c;
    c.out_h = c.out_w = 1;
    expect_near_all(run1("RoiAlign", A(), {&x, &rois, &bi}).f(), roi_align_ref(x.f(), xs, boxes, {0}, c), 1e-5);
}

TEST(OpsRoiAlign, BatchIndexOutOfRangeFailsAtRun) {
    const TT x = f32({2, 1, 3, 3}, random_floats(18, 61));
    const TT rois = f32({1, 4}, {0, 0, 2, 2});
    const TT bad = i64({1}, {2}, false);
    try {
        run1("RoiAlign", A(), {&x, &rois, &bad});
        ADD_FAILURE() << "no error";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
    }
}

TEST(OpsRoiAlign, ARoiNeedingAnAbsurdSamplingGridFailsAtRunInsteadOfHanging) {
    // A 1e6-pixel ROI pooled to 1x1 would need ceil(1e6) samples per axis: refused, naming the fix.
    const TT x = f32({1, 1, 3, 3}, random_floats(9, 81));
    const TT huge = f32({1, 4}, {0, 0, 1.0e6f, 1.0e6f});
    const TT bi = i64({1}, {0}, false);
    try {
        run1("RoiAlign", A().i("output_height", 1).i("output_width", 1), {&x, &huge, &bi});
        ADD_FAILURE() << "no error";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("sampling_ratio"), std::string::npos) << e.what();
    }
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "sampling_ratio", "RoiAlign", A().i("sampling_ratio", 5000),
                        {&x, &huge, &bi});
}

TEST(OpsRoiAlign, RejectsBadShapesAndAttributes) {
    const TT x = f32({1, 1, 3, 3}, random_floats(9, 71));
    const TT rois = f32({1, 4}, {0, 0, 2, 2});
    const TT rois5 = f32({1, 5}, {0, 0, 0, 2, 2});
    const TT bi = i64({1}, {0}, false), bi2 = i64({2}, {0, 0}, false);
    const TT bf = f32({1}, {0});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "rois", "RoiAlign", A(), {&x, &rois5, &bi});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "batch_indices", "RoiAlign", A(), {&x, &rois, &bi2});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "batch_indices", "RoiAlign", A(), {&x, &rois, &bf});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "mode", "RoiAlign", A().s("mode", "sum"), {&x, &rois, &bi});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "coordinate_transformation_mode", "RoiAlign",
                        A().s("coordinate_transformation_mode", "asymmetric"), {&x, &rois, &bi});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "output_height", "RoiAlign", A().i("output_height", 0),
                        {&x, &rois, &bi});
}

// ---- MaxUnpool ----------------------------------------------------------------------------------------

std::vector<double> unpool_ref(const std::vector<float>& x, const std::vector<int64_t>& idx, int64_t out_count) {
    std::vector<double> y(static_cast<size_t>(out_count), 0.0);
    for (size_t i = 0; i < x.size(); ++i) y[static_cast<size_t>(idx[i])] = x[i];
    return y;
}

// MaxPool's Indices for a 2-d pool without padding: flat offsets into [N, C, H, W].
std::vector<int64_t> maxpool_indices(const std::vector<float>& in, const Shape& s, int64_t k, int64_t stride,
                                     Shape* pooled, std::vector<float>* values) {
    const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
    const int64_t Ho = (H - k) / stride + 1, Wo = (W - k) / stride + 1;
    *pooled = {N, C, Ho, Wo};
    std::vector<int64_t> idx;
    for (int64_t nc = 0; nc < N * C; ++nc)
        for (int64_t oy = 0; oy < Ho; ++oy)
            for (int64_t ox = 0; ox < Wo; ++ox) {
                int64_t best = -1;
                for (int64_t dy = 0; dy < k; ++dy)
                    for (int64_t dx = 0; dx < k; ++dx) {
                        const int64_t at = (nc * H + oy * stride + dy) * W + ox * stride + dx;
                        if (best < 0 || in[static_cast<size_t>(at)] > in[static_cast<size_t>(best)]) best = at;
                    }
                idx.push_back(best);
                values->push_back(in[static_cast<size_t>(best)]);
            }
    return idx;
}

TEST(OpsMaxUnpool, InvertsMaxPoolIndices) {
    for (int64_t stride : {1, 2}) {
        const Shape s{2, 3, stride == 1 ? 5 : 4, 6};  // pooling covers the whole input
        const std::vector<float> in =
            random_floats(static_cast<size_t>(product(s)), 81 + static_cast<uint32_t>(stride));
        Shape ps;
        std::vector<float> vals;
        const std::vector<int64_t> idx = maxpool_indices(in, s, 2, stride, &ps, &vals);
        const TT x = f32(ps, vals);
        const TT i = i64(ps, idx, false);
        const TT y = run1("MaxUnpool", A().is("kernel_shape", {2, 2}).is("strides", {stride, stride}), {&x, &i});
        const Shape want{2, 3, (ps[2] - 1) * stride + 2, (ps[3] - 1) * stride + 2};
        EXPECT_EQ(y.shape, want);
        EXPECT_EQ(want, s);
        expect_near_all(y.f(), unpool_ref(vals, idx, product(s)), 0.0);
    }
}

// Spec / reference: the indices address the shape inferred from the attributes; a larger output_shape
// holds that result in its leading corner, zeros elsewhere.
std::vector<double> pad_to(const std::vector<double>& y, const Shape& inferred, const Shape& result) {
    std::vector<double> r(static_cast<size_t>(product(result)), 0.0);
    for (int64_t i = 0; i < product(inferred); ++i)
        r[static_cast<size_t>(ravel(unravel(i, inferred), result))] = y[static_cast<size_t>(i)];
    return r;
}

TEST(OpsMaxUnpool, OutputShapePadsTheInferredShape) {
    const Shape s{2, 2, 4, 4};
    const std::vector<float> in = random_floats(static_cast<size_t>(product(s)), 91);
    Shape ps;
    std::vector<float> vals;
    const std::vector<int64_t> idx = maxpool_indices(in, s, 2, 2, &ps, &vals);  // pooled [2, 2, 2, 2]
    const TT x = f32(ps, vals);
    const TT i = i64(ps, idx, false);
    for (const Shape& result : {Shape{2, 2, 5, 6}, Shape{2, 2, 4, 4}, Shape{2, 2, 7, 4}}) {
        const TT os = ints(result);
        const TT y = run1("MaxUnpool", A().is("kernel_shape", {2, 2}).is("strides", {2, 2}), {&x, &i, &os});
        EXPECT_EQ(y.shape, result);
        expect_near_all(y.f(), pad_to(unpool_ref(vals, idx, product(s)), s, result), 0.0);
    }
    // pads shrink the inferred shape: (2 - 1) * 2 - (1 + 0) + 3 = 4 rows, (2 - 1) * 2 + 3 = 5 columns
    const std::vector<int64_t> idx0 = {0, 6, 12, 19, 20, 21, 38, 39, 1, 2, 3, 4, 5, 7, 8, 9};
    const TT i0 = i64(ps, idx0, false);
    const TT y2 =
        run1("MaxUnpool", A().is("kernel_shape", {3, 3}).is("strides", {2, 2}).is("pads", {1, 0, 0, 0}), {&x, &i0});
    EXPECT_EQ(y2.shape, (Shape{2, 2, 4, 5}));
    expect_near_all(y2.f(), unpool_ref(vals, idx0, 80), 0.0);
}

TEST(OpsMaxUnpool, OneDimensionalAndIntegerData) {
    const TT x = i32({1, 1, 3}, {7, -2, 5});
    const TT i = i64({1, 1, 3}, {1, 2, 5}, false);
    const TT y = run1("MaxUnpool", A().is("kernel_shape", {2}).is("strides", {2}), {&x, &i});
    EXPECT_EQ(y.shape, (Shape{1, 1, 6}));
    EXPECT_EQ(y.values<int32_t>(), (std::vector<int32_t>{0, 7, -2, 0, 0, 5}));
}

TEST(OpsMaxUnpool, IndexOutsideOutputFailsAtRun) {
    const TT x = f32({1, 1, 2}, {1, 2});
    const TT bad = i64({1, 1, 2}, {0, 4}, false);  // output [1, 1, 4]
    try {
        run1("MaxUnpool", A().is("kernel_shape", {2}).is("strides", {2}), {&x, &bad});
        ADD_FAILURE() << "no error";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
    }
    const TT neg = i64({1, 1, 2}, {0, -1}, false);
    EXPECT_THROW(run1("MaxUnpool", A().is("kernel_shape", {2}).is("strides", {2}), {&x, &neg}), kes::Error);
}

TEST(OpsMaxUnpool, RejectsRuntimeOutputShapeAndBadAttributes) {
    const TT x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const TT i = i64({1, 1, 2, 2}, {0, 1, 2, 3}, false);
    const TT runtime_shape = i64({4}, {1, 1, 4, 4}, false);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "output_shape", "MaxUnpool", A().is("kernel_shape", {2, 2}),
                        {&x, &i, &runtime_shape});
    const TT wrong_c = ints({1, 2, 4, 4});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "output_shape", "MaxUnpool", A().is("kernel_shape", {2, 2}),
                        {&x, &i, &wrong_c});
    const TT too_small = ints({1, 1, 2, 4});  // inferred [1, 1, 3, 3]
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "smaller", "MaxUnpool", A().is("kernel_shape", {2, 2}),
                        {&x, &i, &too_small});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "kernel_shape", "MaxUnpool", A().is("kernel_shape", {2}), {&x, &i});
    const TT i_short = i64({1, 1, 2, 1}, {0, 1}, false);
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "input I", "MaxUnpool", A().is("kernel_shape", {2, 2}),
                        {&x, &i_short});
    const TT i32_idx = i32({1, 1, 2, 2}, {0, 1, 2, 3});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "input I", "MaxUnpool", A().is("kernel_shape", {2, 2}), {&x, &i32_idx});
}

}  // namespace
}  // namespace kes_test
