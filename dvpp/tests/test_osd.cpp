// OSD drawing (kestrel/osd.h): every shape pixel-exact against a plain reference written here — a
// coverage mask per shape, then the header's rules applied to it (luma per covered pixel, a chroma
// pair per 2×2 block holding a covered pixel, alpha blended once) — on images with padded strides whose
// padding must come back untouched; plus the font's bitmaps, text measuring, the errors, and a red box
// that is still red after kes_vpc_convert_color.
#include "kestrel/osd.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dvpp_test_util.hpp"
#include "kes/struct_size.hpp"
#include "osd_font.hpp"
#include "struct_size_check.hpp"

using namespace kes_test;

namespace {

constexpr uint8_t kSentinel = 0xA5;

// An NV12/NV21 image in a vector, with `pad_x` bytes after each row, `pad_y` rows after each plane and
// 64 bytes after the buffer, all of them kSentinel; the pixels a pattern (or a constant).
class Canvas {
public:
    Canvas(uint32_t w, uint32_t h, kes_pixel_format f = KES_PIXEL_NV12, int pattern = -1, uint32_t pad_x = 6,
           uint32_t pad_y = 2)
        : w_(w), h_(h), vu_(f == KES_PIXEL_NV21) {
        ws_ = (w + 1) / 2 * 2 + pad_x;
        hs_ = (h + 1) / 2 * 2 + pad_y;
        size_t size = 0;
        EXPECT_EQ(kes_image_buffer_size(f, ws_, hs_, &size), KES_OK) << kes_last_error();
        buf_.assign(size + 64, kSentinel);
        EXPECT_EQ(kes_image_wrap(&img_, f, w, h, ws_, hs_, buf_.data(), size), KES_OK) << kes_last_error();
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x) luma(x, y) = pixel(pattern, x, y, 0);
        for (uint32_t y = 0; y < (h + 1) / 2; ++y)
            for (uint32_t x = 0; x < (w + 1) / 2; ++x) {
                u(x, y) = pixel(pattern, x, y, 1);
                v(x, y) = pixel(pattern, x, y, 2);
            }
    }
    Canvas(const Canvas&) = delete;
    Canvas& operator=(const Canvas&) = delete;
    kes_image* image() { return &img_; }
    const std::vector<uint8_t>& bytes() const { return buf_; }
    std::vector<uint8_t>& bytes() { return buf_; }
    uint32_t w() const { return w_; }
    uint32_t h() const { return h_; }
    uint8_t& luma(uint32_t x, uint32_t y) { return buf_[size_t(y) * ws_ + x]; }
    uint8_t& u(uint32_t cx, uint32_t cy) { return buf_[chroma(cx, cy) + (vu_ ? 1 : 0)]; }
    uint8_t& v(uint32_t cx, uint32_t cy) { return buf_[chroma(cx, cy) + (vu_ ? 0 : 1)]; }
    size_t chroma(uint32_t cx, uint32_t cy) const { return size_t(ws_) * hs_ + size_t(cy) * ws_ + 2 * size_t(cx); }

private:
    static uint8_t pixel(int pattern, uint32_t x, uint32_t y, uint32_t plane) {
        if (pattern >= 0) return uint8_t(pattern);
        return uint8_t((x * 37 + y * 11 + plane * 71 + (x * y) % 13) & 255);
    }
    uint32_t w_, h_, ws_ = 0, hs_ = 0;
    bool vu_;
    std::vector<uint8_t> buf_;
    kes_image img_{};
};

// Which pixels a shape covers, built by the plain loops below; clipping is "points outside are ignored".
class Mask {
public:
    Mask(uint32_t w, uint32_t h) : w_(w), h_(h), m_(size_t(w) * h, 0) {}
    void cover(long long x, long long y) {
        if (x >= 0 && y >= 0 && x < w_ && y < h_) m_[size_t(y) * w_ + size_t(x)] = 1;
    }
    bool at(long long x, long long y) const {
        return x >= 0 && y >= 0 && x < w_ && y < h_ && m_[size_t(y) * w_ + size_t(x)];
    }
    bool empty() const {
        for (char c : m_)
            if (c) return false;
        return true;
    }

private:
    long long w_, h_;
    std::vector<char> m_;
};

uint8_t blend(uint8_t c, uint8_t old, uint8_t a) {
    return uint8_t((unsigned(c) * a + unsigned(old) * (255u - a) + 127u) / 255u);
}

// osd.h's coverage rule applied to `m` on the canvas's bytes.
void apply(Canvas& c, const Mask& m, kes_osd_color col) {
    for (uint32_t y = 0; y < c.h(); ++y)
        for (uint32_t x = 0; x < c.w(); ++x)
            if (m.at(x, y)) c.luma(x, y) = blend(col.y, c.luma(x, y), col.alpha);
    for (uint32_t cy = 0; cy < (c.h() + 1) / 2; ++cy)
        for (uint32_t cx = 0; cx < (c.w() + 1) / 2; ++cx) {
            const long long x = 2 * cx, y = 2 * cy;
            if (m.at(x, y) || m.at(x + 1, y) || m.at(x, y + 1) || m.at(x + 1, y + 1)) {
                c.u(cx, cy) = blend(col.u, c.u(cx, cy), col.alpha);
                c.v(cx, cy) = blend(col.v, c.v(cx, cy), col.alpha);
            }
        }
}

void ref_fill(Mask& m, long long x, long long y, long long w, long long h) {
    for (long long py = y; py < y + h; ++py)
        for (long long px = x; px < x + w; ++px) m.cover(px, py);
}

void ref_outline(Mask& m, long long x, long long y, long long w, long long h, long long t) {
    for (long long py = y; py < y + h; ++py)
        for (long long px = x; px < x + w; ++px) {
            const bool inner = px >= x + t && px < x + w - t && py >= y + t && py < y + h - t;
            if (!inner) m.cover(px, py);
        }
}

// Bresenham in its textbook incremental form (error term, step when it reaches half a pixel), each
// point stamped with the thickness × thickness pen of osd.h.
void ref_line(Mask& m, long long x0, long long y0, long long x1, long long y1, long long t) {
    const long long dx = std::llabs(x1 - x0), dy = std::llabs(y1 - y0);
    const long long sx = x1 < x0 ? -1 : 1, sy = y1 < y0 ? -1 : 1;
    const bool x_major = dx >= dy;
    const long long n = x_major ? dx : dy, d = x_major ? dy : dx;
    long long x = x0, y = y0, err = 0;
    for (long long i = 0; i <= n; ++i) {
        for (long long py = y - (t - 1) / 2; py <= y + t / 2; ++py)
            for (long long px = x - (t - 1) / 2; px <= x + t / 2; ++px) m.cover(px, py);
        if (i == n) break;
        (x_major ? x : y) += x_major ? sx : sy;
        err += 2 * d;
        if (err >= n) {
            (x_major ? y : x) += x_major ? sy : sx;
            err -= 2 * n;
        }
    }
}

// Glyph pixels of single-line printable-ASCII text at (x, y), from the font table.
void ref_text(Mask& m, long long x, long long y, const std::string& s, long long scale) {
    for (size_t j = 0; j < s.size(); ++j) {
        const uint8_t* g = kes::osd::font_glyph(uint32_t(s[j]) - 0x20);
        for (long long r = 0; r < 16 * scale; ++r)
            for (long long c = 0; c < 8 * scale; ++c)
                if (g[r / scale] & (0x80 >> (c / scale))) m.cover(x + static_cast<long long>(j) * 8 * scale + c, y + r);
    }
}

// Asserts the image equals the expectation byte for byte, padding and tail included.
void expect_bytes(const Canvas& got, const Canvas& want, const char* what) {
    ASSERT_EQ(got.bytes().size(), want.bytes().size());
    for (size_t i = 0; i < got.bytes().size(); ++i)
        ASSERT_EQ(int(got.bytes()[i]), int(want.bytes()[i])) << what << ": byte " << i;
}

const kes_osd_color kRed = kes_osd_color_rgb(255, 0, 0);
const kes_osd_color kGreen = kes_osd_color_rgb(0, 255, 0);

// ---- colours -------------------------------------------------------------------------------------------

TEST(OsdColor, RgbGivesBt601FullRange) {
    const kes_osd_color red = kes_osd_color_rgb(255, 0, 0);
    EXPECT_EQ(red.y, 76);
    EXPECT_EQ(red.u, 85);
    EXPECT_EQ(red.v, 255);
    EXPECT_EQ(red.alpha, 255);
    const kes_osd_color white = kes_osd_color_rgb(255, 255, 255), black = kes_osd_color_rgb(0, 0, 0);
    EXPECT_EQ(white.y, 255);
    EXPECT_EQ(white.u, 128);
    EXPECT_EQ(white.v, 128);
    EXPECT_EQ(black.y, 0);
    EXPECT_EQ(black.u, 128);
    EXPECT_EQ(black.v, 128);
}

// The colour of an area equals kes_vpc_convert_color of an RGB image of that colour, for every matrix.
TEST(OsdColor, EqualsVpcConvertColorForEveryMatrix) {
    Channel ch(KES_BOARD_310B);
    const uint8_t rgbs[][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 0}, {12, 200, 99}, {128, 128, 128}};
    for (int m = KES_VPC_CSC_BT601_WIDE; m <= KES_VPC_CSC_BT709_NARROW; ++m)
        for (const auto& c : rgbs) {
            const uint32_t w = 64, h = 64;
            std::vector<uint8_t> rgb(size_t(w) * h * 3);
            for (size_t i = 0; i < size_t(w) * h; ++i) std::memcpy(&rgb[3 * i], c, 3);
            kes_image in;
            ASSERT_EQ(kes_image_wrap(&in, KES_PIXEL_RGB888, w, h, 0, 0, rgb.data(), rgb.size()), KES_OK)
                << kes_last_error();
            Image out;
            ASSERT_EQ(kes_vpc_convert_color(ch.get(), &in, KES_PIXEL_NV12, kes_vpc_csc_matrix(m), nullptr, &out),
                      KES_OK)
                << kes_last_error();
            kes_osd_color col;
            ASSERT_EQ(kes_osd_color_from_rgb(c[0], c[1], c[2], 77, kes_vpc_csc_matrix(m), &col), KES_OK);
            EXPECT_EQ(col.y, out.row(0, 5)[7]) << "matrix " << m;
            EXPECT_EQ(col.u, out.row(1, 3)[8]) << "matrix " << m;
            EXPECT_EQ(col.v, out.row(1, 3)[9]) << "matrix " << m;
            EXPECT_EQ(col.alpha, 77);
        }
}

// ---- rectangles ---------------------------------------------------------------------------------------

TEST(Osd, FillRectMatchesReferenceAtEvenAndOddCoordinates) {
    const int rects[][4] = {{4, 2, 8, 6}, {5, 3, 7, 5}, {0, 0, 1, 1}, {9, 7, 1, 4}, {3, 0, 2, 1}, {0, 0, 22, 17}};
    for (const auto& r : rects) {
        Canvas got(22, 17), want(22, 17);
        ASSERT_EQ(kes_osd_fill_rect(got.image(), r[0], r[1], r[2], r[3], kRed), KES_OK) << kes_last_error();
        Mask m(22, 17);
        ref_fill(m, r[0], r[1], r[2], r[3]);
        apply(want, m, kRed);
        expect_bytes(got, want, "fill");
    }
}

TEST(Osd, DrawRectOutlineGrowsInwardWithThickness) {
    // {x, y, w, h, thickness}: even and odd corners, sizes and thicknesses, and borders that meet.
    const int rects[][5] = {{4, 2, 12, 10, 1}, {4, 2, 12, 10, 2}, {5, 3, 11, 9, 1},  {5, 3, 11, 9, 2}, {5, 3, 11, 9, 3},
                            {1, 1, 6, 9, 3},   {2, 2, 7, 5, 4},   {0, 0, 24, 18, 1}, {3, 4, 1, 1, 1},  {3, 4, 2, 8, 1}};
    for (const auto& r : rects) {
        Canvas got(24, 18), want(24, 18);
        ASSERT_EQ(kes_osd_draw_rect(got.image(), r[0], r[1], r[2], r[3], r[4], kGreen), KES_OK) << kes_last_error();
        Mask m(24, 18);
        ref_outline(m, r[0], r[1], r[2], r[3], r[4]);
        apply(want, m, kGreen);
        expect_bytes(got, want, "outline");
    }
}

// A hand-computed 1-pixel outline at odd coordinates: every covered pixel is exact, the chroma of each
// block it touches is the box's, the rest untouched.
TEST(Osd, OnePixelOutlineAtOddCoordinatesByHand) {
    Canvas c(8, 6, KES_PIXEL_NV12, 0);  // all bytes 0
    ASSERT_EQ(kes_osd_draw_rect(c.image(), 1, 1, 3, 3, 1, kes_osd_color{200, 10, 20, 255}), KES_OK);
    const char* luma[] = {"........", ".###....", ".#.#....", ".###....", "........", "........"};
    for (uint32_t y = 0; y < 6; ++y)
        for (uint32_t x = 0; x < 8; ++x) EXPECT_EQ(c.luma(x, y), luma[y][x] == '#' ? 200 : 0) << x << "," << y;
    // Blocks (0,0), (1,0), (0,1), (1,1) each hold a covered pixel; nothing else does.
    for (uint32_t cy = 0; cy < 3; ++cy)
        for (uint32_t cx = 0; cx < 4; ++cx) {
            const bool touched = cx < 2 && cy < 2;
            EXPECT_EQ(c.u(cx, cy), touched ? 10 : 0) << cx << "," << cy;
            EXPECT_EQ(c.v(cx, cy), touched ? 20 : 0) << cx << "," << cy;
        }
}

TEST(Osd, ClipsAtAllFourEdges) {
    const int rects[][5] = {{-3, 2, 8, 6, 2},
                            {17, 3, 9, 5, 2},
                            {4, -4, 7, 9, 3},
                            {5, 12, 6, 11, 2},
                            {-5, -5, 40, 40, 3},
                            {-100, 4, 101, 3, 1},
                            {INT_MIN, INT_MIN, INT_MAX, INT_MAX, 5}};
    for (const auto& r : rects) {
        Canvas got(21, 15), want(21, 15);
        ASSERT_EQ(kes_osd_draw_rect(got.image(), r[0], r[1], r[2], r[3], r[4], kRed), KES_OK) << kes_last_error();
        Mask m(21, 15);
        if (r[0] != INT_MIN) ref_outline(m, r[0], r[1], r[2], r[3], r[4]);  // the last one covers nothing visible
        apply(want, m, kRed);
        expect_bytes(got, want, "clipped outline");
        Canvas got_fill(21, 15), want_fill(21, 15);
        ASSERT_EQ(kes_osd_fill_rect(got_fill.image(), r[0], r[1], r[2], r[3], kRed), KES_OK);
        Mask mf(21, 15);
        if (r[0] != INT_MIN)
            ref_fill(mf, r[0], r[1], r[2], r[3]);
        else
            ref_fill(mf, 0, 0, 0, 0);  // x + w = -1: nothing
        apply(want_fill, mf, kRed);
        expect_bytes(got_fill, want_fill, "clipped fill");
    }
}

TEST(Osd, ShapesFullyOutsideOrEmptyChangeNothing) {
    Canvas c(20, 14), untouched(20, 14);
    EXPECT_EQ(kes_osd_fill_rect(c.image(), 20, 0, 5, 5, kRed), KES_OK);
    EXPECT_EQ(kes_osd_fill_rect(c.image(), 0, 14, 5, 5, kRed), KES_OK);
    EXPECT_EQ(kes_osd_fill_rect(c.image(), -5, 0, 5, 5, kRed), KES_OK);
    EXPECT_EQ(kes_osd_fill_rect(c.image(), 0, -5, 5, 5, kRed), KES_OK);
    EXPECT_EQ(kes_osd_fill_rect(c.image(), 3, 3, 0, 5, kRed), KES_OK);
    EXPECT_EQ(kes_osd_fill_rect(c.image(), 3, 3, 5, -2, kRed), KES_OK);
    EXPECT_EQ(kes_osd_draw_rect(c.image(), INT_MAX, INT_MAX, INT_MAX, INT_MAX, 3, kRed), KES_OK);
    EXPECT_EQ(kes_osd_draw_rect(c.image(), -50, -50, 40, 40, 2, kRed), KES_OK);
    EXPECT_EQ(kes_osd_draw_line(c.image(), -10, -3, 30, -1, 2, kRed), KES_OK);
    EXPECT_EQ(kes_osd_draw_line(c.image(), INT_MIN, INT_MAX, INT_MAX, INT_MAX, 7, kRed), KES_OK);
    EXPECT_EQ(kes_osd_draw_text(c.image(), 20, 0, "abc", 1, kRed, &kGreen), KES_OK);
    EXPECT_EQ(kes_osd_draw_text(c.image(), -24, 0, "abc", 1, kRed, &kGreen), KES_OK);
    EXPECT_EQ(kes_osd_draw_text(c.image(), 0, -16, "abc", 1, kRed, &kGreen), KES_OK);
    EXPECT_EQ(kes_osd_draw_text(c.image(), 2, 2, "", 3, kRed, &kGreen), KES_OK);
    EXPECT_EQ(kes_osd_fill_rect(c.image(), 0, 0, 20, 14, kes_osd_color{1, 2, 3, 0}), KES_OK);  // alpha 0
    expect_bytes(c, untouched, "nothing drawn");
}

TEST(Osd, FillWithAlphaBlendsEachSampleOnce) {
    for (uint8_t a : {1, 64, 128, 200, 254}) {
        Canvas got(19, 13), want(19, 13);  // patterned background, odd size
        kes_osd_color col = kes_osd_color_rgb(30, 200, 250);
        col.alpha = a;
        ASSERT_EQ(kes_osd_fill_rect(got.image(), 3, 2, 11, 8, col), KES_OK);
        Mask m(19, 13);
        ref_fill(m, 3, 2, 11, 8);
        apply(want, m, col);
        expect_bytes(got, want, "alpha fill");
    }
    // By hand: a = 128 of 255 over 0 is (255·128 + 127) / 255 = 128.
    Canvas c(4, 2, KES_PIXEL_NV12, 0);
    ASSERT_EQ(kes_osd_fill_rect(c.image(), 0, 0, 4, 2, kes_osd_color{255, 255, 255, 128}), KES_OK);
    EXPECT_EQ(c.luma(1, 1), 128);
    EXPECT_EQ(c.u(1, 0), 128);
}

// ---- lines --------------------------------------------------------------------------------------------

TEST(Osd, LinesMatchBresenhamWithSquarePen) {
    // {x0, y0, x1, y1}: horizontal, vertical, 45°, shallow, steep, every octant, a point, ties.
    const int lines[][4] = {{2, 5, 20, 5},  {7, 1, 7, 15}, {1, 1, 14, 14}, {14, 1, 1, 14}, {0, 3, 23, 9},
                            {23, 9, 0, 3},  {4, 0, 9, 16}, {9, 16, 4, 0},  {20, 2, 3, 6},  {3, 14, 18, 0},
                            {11, 8, 11, 8}, {0, 0, 4, 2},  {0, 0, 2, 4},   {5, 5, 1, 3},   {22, 0, 0, 16}};
    for (int t = 1; t <= 4; ++t)
        for (const auto& l : lines) {
            Canvas got(24, 17), want(24, 17);
            ASSERT_EQ(kes_osd_draw_line(got.image(), l[0], l[1], l[2], l[3], t, kRed), KES_OK) << kes_last_error();
            Mask m(24, 17);
            ref_line(m, l[0], l[1], l[2], l[3], t);
            apply(want, m, kRed);
            SCOPED_TRACE(testing::Message()
                         << "line " << l[0] << "," << l[1] << " -> " << l[2] << "," << l[3] << " thickness " << t);
            expect_bytes(got, want, "line");
        }
}

TEST(Osd, LineEndsAreIncludedAndHalvesRoundAwayFromTheStart) {
    // (0,0) → (4,1): ideal y at x = 2 is exactly 0.5, rounded away from the start to 1.
    Canvas c(6, 2, KES_PIXEL_NV12, 0);
    ASSERT_EQ(kes_osd_draw_line(c.image(), 0, 0, 4, 1, 1, kes_osd_color{9, 0, 0, 255}), KES_OK);
    const char* luma[] = {"##....", "..###."};
    for (uint32_t y = 0; y < 2; ++y)
        for (uint32_t x = 0; x < 6; ++x) EXPECT_EQ(c.luma(x, y), luma[y][x] == '#' ? 9 : 0) << x << "," << y;
}

TEST(Osd, LinesClipAtEveryEdgeLikeTheWholeLine) {
    const int lines[][5] = {{-30, -7, 40, 25, 1}, {-30, 25, 40, -7, 3}, {10, -50, 12, 60, 2},
                            {-50, 10, 60, 11, 4}, {30, 5, -5, 12, 2},   {-3, -3, -1, 20, 3}};
    for (const auto& l : lines) {
        Canvas got(25, 19), want(25, 19);
        ASSERT_EQ(kes_osd_draw_line(got.image(), l[0], l[1], l[2], l[3], l[4], kGreen), KES_OK);
        Mask m(25, 19);
        ref_line(m, l[0], l[1], l[2], l[3], l[4]);
        apply(want, m, kGreen);
        expect_bytes(got, want, "clipped line");
    }
}

TEST(Osd, LineWithInt32EndsDrawsOnlyItsVisiblePart) {
    // y = x exactly, from -2^31+1 to 2^31-1: the diagonal pixels, computed without overflow and without
    // walking four billion steps.
    Canvas got(30, 20), want(30, 20);
    ASSERT_EQ(kes_osd_draw_line(got.image(), -INT_MAX, -INT_MAX, INT_MAX, INT_MAX, 1, kRed), KES_OK);
    Mask m(30, 20);
    for (int i = 0; i < 20; ++i) m.cover(i, i);
    apply(want, m, kRed);
    expect_bytes(got, want, "huge diagonal");
    // A shallow one: (−2^31, 0) → (2^31 − 1, 1) crosses row 0 → 1 near x = 0; the reference walks only
    // the window around it, starting from the exact error term there.
    Canvas got2(30, 4), want2(30, 4);
    ASSERT_EQ(kes_osd_draw_line(got2.image(), INT_MIN, 0, INT_MAX, 1, 1, kRed), KES_OK);
    Mask m2(30, 4);
    // minor(i) = floor((2i + n) / 2n), n = 2^32 - 1: row 1 from i = n/2 + 1/2 on, i.e. x = i - 2^31 >= 0.
    for (int x = 0; x < 30; ++x) m2.cover(x, 1);
    apply(want2, m2, kRed);
    expect_bytes(got2, want2, "huge shallow");
}

TEST(Osd, ThickLineWithAlphaBlendsOverlappingPenSquaresOnce) {
    Canvas got(26, 18), want(26, 18);
    kes_osd_color col = kRed;
    col.alpha = 100;
    ASSERT_EQ(kes_osd_draw_line(got.image(), 2, 3, 23, 14, 5, col), KES_OK);
    Mask m(26, 18);
    ref_line(m, 2, 3, 23, 14, 5);
    apply(want, m, col);
    expect_bytes(got, want, "translucent thick line");
}

// ---- text ---------------------------------------------------------------------------------------------

// The font's 'A' as designed (osd_font.cpp), written out again here.
const char* const kGlyphA[16] = {"........", "........", "........", "...#....", "..###...", ".##.##..",
                                 "##...##.", "##...##.", "#######.", "##...##.", "##...##.", "##...##.",
                                 "##...##.", "........", "........", "........"};

TEST(OsdText, FontBitmapOfAIsTheDesign) {
    const uint8_t* g = kes::osd::font_glyph('A' - 0x20);
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 8; ++c)
            EXPECT_EQ(bool(g[r] & (0x80 >> c)), kGlyphA[r][c] == '#') << "row " << r << " col " << c;
}

TEST(OsdText, EveryGlyphKeepsColumn7AndRows0To1Empty) {
    for (uint32_t k = 0; k < kes::osd::kGlyphCount; ++k) {
        const uint8_t* g = kes::osd::font_glyph(k);
        EXPECT_EQ(g[0] | g[1], 0) << "glyph " << k;
        int ink = 0;
        for (int r = 0; r < 16; ++r) {
            EXPECT_EQ(g[r] & 1, 0) << "glyph " << k << " row " << r;
            ink += __builtin_popcount(g[r]);
        }
        EXPECT_EQ(ink == 0, k == 0) << "only the space is blank; glyph " << k;
    }
    // Glyphs are distinct (a copy-paste slip in the art would show here).
    for (uint32_t a = 0; a < kes::osd::kGlyphCount; ++a)
        for (uint32_t b = a + 1; b < kes::osd::kGlyphCount; ++b)
            EXPECT_NE(std::memcmp(kes::osd::font_glyph(a), kes::osd::font_glyph(b), 16), 0) << a << " vs " << b;
}

TEST(OsdText, DrawsGlyphAAtScale1And2) {
    for (int scale : {1, 2, 3}) {
        Canvas c(8 * scale + 3, 16 * scale + 2, KES_PIXEL_NV12, 0);
        ASSERT_EQ(kes_osd_draw_text(c.image(), 1, 1, "A", scale, kes_osd_color{250, 1, 2, 255}, nullptr), KES_OK);
        for (uint32_t y = 0; y < c.h(); ++y)
            for (uint32_t x = 0; x < c.w(); ++x) {
                const int gx = (int(x) - 1), gy = (int(y) - 1);
                const bool ink =
                    gx >= 0 && gy >= 0 && gx < 8 * scale && gy < 16 * scale && kGlyphA[gy / scale][gx / scale] == '#';
                ASSERT_EQ(c.luma(x, y), ink ? 250 : 0) << "scale " << scale << " at " << x << "," << y;
            }
    }
}

TEST(OsdText, MatchesReferenceWithClippingAndBackground) {
    const std::string s = "Face 0.93 ~{|}";
    for (int scale : {1, 2})
        for (const auto& at : std::vector<std::pair<int, int>>{{3, 2}, {-13, 5}, {40, -7}, {-4, 20}}) {
            Canvas got(61, 37), want(61, 37);
            const kes_osd_color bg = kes_osd_color_rgb(20, 20, 200);
            ASSERT_EQ(kes_osd_draw_text(got.image(), at.first, at.second, s.c_str(), scale, kRed, &bg), KES_OK);
            Mask plate(61, 37), glyphs(61, 37);
            ref_fill(plate, at.first, at.second, 8LL * scale * s.size(), 16LL * scale);
            ref_text(glyphs, at.first, at.second, s, scale);
            apply(want, plate, bg);
            apply(want, glyphs, kRed);
            expect_bytes(got, want, "text");
        }
}

TEST(OsdText, NewlineStartsALineBelowAtTheStartingX) {
    Canvas got(40, 40), want(40, 40);
    ASSERT_EQ(kes_osd_draw_text(got.image(), 5, 3, "ab\nc\n\nd", 1, kGreen, nullptr), KES_OK);
    Mask m(40, 40);
    ref_text(m, 5, 3, "ab", 1);
    ref_text(m, 5, 19, "c", 1);
    ref_text(m, 5, 51, "d", 1);  // below the image's bottom: clipped away
    apply(want, m, kGreen);
    expect_bytes(got, want, "newlines");
}

TEST(OsdText, UnknownCodePointsDrawOneBoxEach) {
    // Tab, a two-byte and a three-byte UTF-8 character, a lone continuation byte, DEL.
    Canvas got(60, 16), want(60, 16);
    ASSERT_EQ(kes_osd_draw_text(got.image(), 0, 0, "\t\xC3\xA9\xE5\xBC\xA0\x80\x7F", 1, kRed, nullptr), KES_OK);
    Mask m(60, 16);
    const uint8_t* box = kes::osd::font_glyph(kes::osd::kBoxGlyph);
    for (int j = 0; j < 5; ++j)
        for (int r = 0; r < 16; ++r)
            for (int c = 0; c < 8; ++c)
                if (box[r] & (0x80 >> c)) m.cover(8 * j + c, r);
    apply(want, m, kRed);
    expect_bytes(got, want, "boxes");
    uint32_t w = 0, h = 0;
    ASSERT_EQ(kes_osd_text_size("\t\xC3\xA9\xE5\xBC\xA0\x80\x7F", 1, &w, &h), KES_OK);
    EXPECT_EQ(w, 40u);
    EXPECT_EQ(h, 16u);
    // A truncated sequence is one box per byte.
    ASSERT_EQ(kes_osd_text_size("\xE5\xBC", 1, &w, &h), KES_OK);
    EXPECT_EQ(w, 16u);
}

TEST(OsdText, TextSizeMeasuresLongestLineAndLineCount) {
    struct Case {
        const char* text;
        int scale;
        uint32_t w, h;
    } cases[] = {{"", 1, 0, 0},     {"A", 1, 8, 16},  {"alice 0.93", 1, 80, 16}, {"ab\ncde", 1, 24, 32},
                 {"x\n", 1, 8, 32}, {"\n", 2, 0, 64}, {"abc", 3, 72, 48},        {"\xC3\xA9t\xC3\xA9", 1, 24, 16}};
    for (const Case& c : cases) {
        uint32_t w = 7, h = 7;
        ASSERT_EQ(kes_osd_text_size(c.text, c.scale, &w, &h), KES_OK) << kes_last_error();
        EXPECT_EQ(w, c.w) << '"' << c.text << '"';
        EXPECT_EQ(h, c.h) << '"' << c.text << '"';
    }
}

// ---- layouts and formats ------------------------------------------------------------------------------

TEST(Osd, Nv21StoresVBeforeU) {
    Canvas a(8, 4, KES_PIXEL_NV12, 0), b(8, 4, KES_PIXEL_NV21, 0);
    const kes_osd_color col{100, 11, 22, 255};
    ASSERT_EQ(kes_osd_fill_rect(a.image(), 2, 0, 2, 2, col), KES_OK);
    ASSERT_EQ(kes_osd_fill_rect(b.image(), 2, 0, 2, 2, col), KES_OK);
    const size_t pair = a.chroma(1, 0);
    EXPECT_EQ(a.bytes()[pair], 11);
    EXPECT_EQ(a.bytes()[pair + 1], 22);
    EXPECT_EQ(b.bytes()[pair], 22);
    EXPECT_EQ(b.bytes()[pair + 1], 11);
    // Everything else equal: only the order within the pair differs.
    Canvas got(23, 11, KES_PIXEL_NV21), want(23, 11, KES_PIXEL_NV21);
    ASSERT_EQ(kes_osd_draw_line(got.image(), 1, 9, 21, 2, 2, kRed), KES_OK);
    Mask m(23, 11);
    ref_line(m, 1, 9, 21, 2, 2);
    apply(want, m, kRed);
    expect_bytes(got, want, "NV21 line");
}

TEST(Osd, OddSizedImageWritesItsLastHalfBlocks) {
    // 15 × 9: the last chroma column and row cover one luma column / row each.
    Canvas got(15, 9), want(15, 9);
    ASSERT_EQ(kes_osd_draw_rect(got.image(), 10, 6, 10, 10, 1, kRed), KES_OK);
    ASSERT_EQ(kes_osd_draw_line(got.image(), 14, 0, 14, 8, 1, kGreen), KES_OK);
    Mask m1(15, 9), m2(15, 9);
    ref_outline(m1, 10, 6, 10, 10, 1);
    ref_line(m2, 14, 0, 14, 8, 1);
    apply(want, m1, kRed);
    apply(want, m2, kGreen);
    expect_bytes(got, want, "odd size");
}

TEST(Osd, RespectsWideStridesAndTallPlanes) {
    Canvas got(16, 10, KES_PIXEL_NV12, -1, 48, 14), want(16, 10, KES_PIXEL_NV12, -1, 48, 14);
    ASSERT_EQ(kes_osd_fill_rect(got.image(), -2, -2, 40, 40, kGreen), KES_OK);
    Mask m(16, 10);
    ref_fill(m, 0, 0, 16, 10);
    apply(want, m, kGreen);
    expect_bytes(got, want, "padded strides");
}

// ---- the face-search use: boxes with labels -----------------------------------------------------------

TEST(OsdBoxes, EqualsOutlinePlateAndTextCalls) {
    const kes_osd_color blue = kes_osd_color_rgb(0, 0, 255);
    const kes_osd_box boxes[] = {
        {10, 30, 40, 30, kRed, "alice 0.93"},  // label above the box
        {60, 4, 30, 40, blue, "bob\n0.71"},    // too close to the top: label inside
        {2, 70, 20, 20, kGreen, nullptr},      // no label
        {90, 60, 40, 30, kRed, ""},            // empty label
    };
    kes_osd_box_style style;
    kes_osd_box_style_init(&style);
    style.thickness = 3;
    style.text_scale = 2;
    for (uint32_t inside : {0u, 1u}) {
        style.label_inside = inside;
        Canvas got(128, 96), want(128, 96);
        ASSERT_EQ(kes_osd_draw_boxes(got.image(), boxes, 4, &style), KES_OK) << kes_last_error();
        for (const kes_osd_box& b : boxes) {
            ASSERT_EQ(kes_osd_draw_rect(want.image(), b.x, b.y, b.width, b.height, 3, b.color), KES_OK);
            if (!b.label || !*b.label) continue;
            uint32_t tw = 0, th = 0;
            ASSERT_EQ(kes_osd_text_size(b.label, 2, &tw, &th), KES_OK);
            const int top = !inside && b.y - int(th) >= 0 ? b.y - int(th) : b.y;
            ASSERT_EQ(kes_osd_fill_rect(want.image(), b.x, top, int(tw) + 4, int(th), b.color), KES_OK);
            ASSERT_EQ(kes_osd_draw_text(want.image(), b.x + 2, top, b.label, 2, style.text_color, nullptr), KES_OK);
        }
        expect_bytes(got, want, "boxes");
    }
    // Defaults: thickness 2, scale 1, white text, label above.
    Canvas got(64, 64), want(64, 64);
    const kes_osd_box one = {8, 20, 30, 30, kRed, "x"};
    ASSERT_EQ(kes_osd_draw_boxes(got.image(), &one, 1, nullptr), KES_OK);
    ASSERT_EQ(kes_osd_draw_rect(want.image(), 8, 20, 30, 30, 2, kRed), KES_OK);
    ASSERT_EQ(kes_osd_fill_rect(want.image(), 8, 4, 10, 16, kRed), KES_OK);
    ASSERT_EQ(kes_osd_draw_text(want.image(), 9, 4, "x", 1, kes_osd_color_rgb(255, 255, 255), nullptr), KES_OK);
    expect_bytes(got, want, "default style");
    Canvas none(8, 8), untouched(8, 8);
    EXPECT_EQ(kes_osd_draw_boxes(none.image(), nullptr, 0, nullptr), KES_OK);
    expect_bytes(none, untouched, "no boxes");
}

TEST(OsdBoxes, ABadBoxLeavesTheImageUntouched) {
    Canvas c(32, 32), untouched(32, 32);
    const std::string huge(5000000, 'a');  // 5e6 × 8 × 64 pixels wide at scale 64: beyond 2^31
    const kes_osd_box boxes[] = {{1, 1, 10, 10, kRed, "ok"}, {4, 4, 10, 10, kRed, huge.c_str()}};
    kes_osd_box_style style;
    kes_osd_box_style_init(&style);
    style.text_scale = 64;
    EXPECT_EQ(kes_osd_draw_boxes(c.image(), boxes, 2, &style), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "boxes[1].label"), nullptr) << kes_last_error();
    style.text_scale = 1;
    style.thickness = 0;
    EXPECT_EQ(kes_osd_draw_boxes(c.image(), boxes, 1, &style), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "style->thickness must be 1..1024 (got 0)"), nullptr) << kes_last_error();
    EXPECT_EQ(kes_osd_draw_boxes(c.image(), nullptr, 3, nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "boxes is NULL with count 3"), nullptr) << kes_last_error();
    expect_bytes(c, untouched, "failed batch");
}

TEST(OsdBoxes, StyleStructGrowsWithoutBreakingApps) {
    Canvas c(16, 16);
    kes_osd_box_style style;
    kes_osd_box_style_init(&style);
    expect_struct_growth(style, KES_STRUCT_SIZE_THROUGH(kes_osd_box_style, label_inside),
                         [&](kes_osd_box_style* s) { return kes_osd_draw_boxes(c.image(), nullptr, 0, s); });
}

TEST(OsdBoxes, TextAndBatchCallsAreTraced) {
    Canvas c(32, 32);
    const kes_osd_box box = {1, 1, 10, 10, kRed, "a"};
    const std::string trace = traced("osd", [&] {
        EXPECT_EQ(kes_osd_draw_text(c.image(), 0, 0, "hi", 1, kRed, nullptr), KES_OK);
        EXPECT_EQ(kes_osd_draw_boxes(c.image(), &box, 1, nullptr), KES_OK);
    });
    EXPECT_TRUE(has_dvpp_span(trace, "osd_draw_text")) << trace;
    EXPECT_TRUE(has_dvpp_span(trace, "osd_draw_boxes")) << trace;
}

// ---- errors -------------------------------------------------------------------------------------------

void expect_error(kes_status got, kes_status want, const char* fragment) {
    EXPECT_EQ(got, want) << kes_last_error();
    EXPECT_NE(std::strstr(kes_last_error(), fragment), nullptr) << "message: " << kes_last_error();
}

TEST(OsdErrors, NameTheArgumentAndTheRule) {
    Canvas c(16, 16), untouched(16, 16);
    expect_error(kes_osd_fill_rect(nullptr, 0, 0, 1, 1, kRed), KES_ERR_INVALID_ARGUMENT,
                 "kes_osd_fill_rect: image is NULL");
    expect_error(kes_osd_draw_rect(c.image(), 0, 0, 4, 4, 0, kRed), KES_ERR_INVALID_ARGUMENT,
                 "thickness must be 1..1024 (got 0)");
    expect_error(kes_osd_draw_rect(c.image(), 0, 0, 4, 4, -3, kRed), KES_ERR_INVALID_ARGUMENT, "(got -3)");
    expect_error(kes_osd_draw_line(c.image(), 0, 0, 4, 4, 1025, kRed), KES_ERR_INVALID_ARGUMENT,
                 "thickness must be 1..1024 (got 1025)");
    expect_error(kes_osd_draw_text(c.image(), 0, 0, nullptr, 1, kRed, nullptr), KES_ERR_INVALID_ARGUMENT,
                 "text is NULL");
    expect_error(kes_osd_draw_text(c.image(), 0, 0, "a", 0, kRed, nullptr), KES_ERR_INVALID_ARGUMENT,
                 "scale must be 1..64 (got 0)");
    expect_error(kes_osd_draw_text(c.image(), 0, 0, "a", 65, kRed, nullptr), KES_ERR_INVALID_ARGUMENT, "(got 65)");
    uint32_t w = 0, h = 0;
    expect_error(kes_osd_text_size(nullptr, 1, &w, &h), KES_ERR_INVALID_ARGUMENT, "text is NULL");
    expect_error(kes_osd_text_size("a", 1, nullptr, &h), KES_ERR_INVALID_ARGUMENT, "out_width is NULL");
    expect_error(kes_osd_text_size("a", -1, &w, &h), KES_ERR_INVALID_ARGUMENT, "scale must be");
    const std::string huge(5000000, 'a');
    expect_error(kes_osd_text_size(huge.c_str(), 64, &w, &h), KES_ERR_INVALID_ARGUMENT, "more than 2^31 - 1");
    kes_osd_color col;
    expect_error(kes_osd_color_from_rgb(1, 2, 3, 255, kes_vpc_csc_matrix(9), &col), KES_ERR_INVALID_ARGUMENT, "got 9");
    expect_error(kes_osd_color_from_rgb(1, 2, 3, 255, KES_VPC_CSC_BT601_WIDE, nullptr), KES_ERR_INVALID_ARGUMENT,
                 "out_color is NULL");
    kes_image broken = *c.image();
    broken.width_stride = 4;  // less than the width
    expect_error(kes_osd_fill_rect(&broken, 0, 0, 1, 1, kRed), KES_ERR_INVALID_ARGUMENT, "width_stride");
    expect_bytes(c, untouched, "after errors");
}

TEST(OsdErrors, OtherFormatsAreUnsupportedByName) {
    for (kes_pixel_format f : {KES_PIXEL_RGB888, KES_PIXEL_I420, KES_PIXEL_YUV400, KES_PIXEL_YUYV422}) {
        Image img;
        ASSERT_EQ(kes_image_alloc(&img, nullptr, f, 16, 16, 0, 0), KES_OK) << kes_last_error();
        const std::string name = std::string("image format ") + kes_pixel_format_name(f) + " is not supported";
        expect_error(kes_osd_fill_rect(&img, 0, 0, 4, 4, kRed), KES_ERR_UNSUPPORTED, name.c_str());
        expect_error(kes_osd_draw_text(&img, 0, 0, "a", 1, kRed, nullptr), KES_ERR_UNSUPPORTED, name.c_str());
        const kes_osd_box box = {0, 0, 4, 4, kRed, "a"};
        expect_error(kes_osd_draw_boxes(&img, &box, 1, nullptr), KES_ERR_UNSUPPORTED, name.c_str());
    }
}

// ---- the round trip the face-search sample relies on --------------------------------------------------

TEST(Osd, RedBoxIsRedAfterVpcConvertColor) {
    Channel ch(KES_BOARD_310B);
    Image img;
    ASSERT_EQ(kes_image_alloc(&img, nullptr, KES_PIXEL_NV12, 96, 64, 0, 0), KES_OK);
    kes_image_plane py, pc;
    ASSERT_EQ(kes_image_get_plane(&img, 0, &py), KES_OK);
    ASSERT_EQ(kes_image_get_plane(&img, 1, &pc), KES_OK);
    for (uint32_t r = 0; r < py.rows; ++r) std::memset(py.data + r * py.stride, 128, py.row_bytes);
    for (uint32_t r = 0; r < pc.rows; ++r) std::memset(pc.data + r * pc.stride, 128, pc.row_bytes);
    ASSERT_EQ(kes_osd_draw_rect(&img, 10, 8, 40, 30, 2, kRed), KES_OK);
    ASSERT_EQ(kes_osd_draw_line(&img, 71, 3, 71, 60, 1, kRed), KES_OK);  // 1 pixel at an odd x
    ASSERT_EQ(kes_osd_draw_text(&img, 56, 40, "A", 1, kRed, nullptr), KES_OK);
    Image rgb;
    ASSERT_EQ(kes_vpc_convert_color(ch.get(), &img, KES_PIXEL_RGB888, KES_VPC_CSC_BT601_WIDE, nullptr, &rgb), KES_OK)
        << kes_last_error();
    Mask m(96, 64);
    ref_outline(m, 10, 8, 40, 30, 2);
    ref_line(m, 71, 3, 71, 60, 1);
    ref_text(m, 56, 40, "A", 1);
    int checked = 0;
    for (uint32_t y = 0; y < 64; ++y)
        for (uint32_t x = 0; x < 96; ++x) {
            if (!m.at(x, y)) continue;
            const uint8_t* p = rgb.row(0, y) + 3 * x;
            EXPECT_NEAR(p[0], 255, 2) << x << "," << y;
            EXPECT_NEAR(p[1], 0, 2) << x << "," << y;
            EXPECT_NEAR(p[2], 0, 2) << x << "," << y;
            ++checked;
        }
    EXPECT_GT(checked, 300);
    // Outside the fringe blocks the grey is untouched.
    EXPECT_EQ(rgb.row(0, 20)[3 * 30], 128);
}

}  // namespace
