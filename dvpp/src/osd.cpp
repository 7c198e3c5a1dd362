// On-screen display (kestrel/osd.h): boxes, lines and text drawn straight into NV12/NV21 planes.
//
// Every shape is rasterised the same way: a function gives, for one luma row, the covered pixels as
// sorted, disjoint spans already clipped to the image; paint() blends those into the luma row and,
// per pair of rows, blends every chroma pair whose 2×2 block holds a covered pixel (osd.h's rule),
// merging the spans first so that each sample is blended exactly once per shape. Nothing is
// rasterised outside the image, so a shape's cost follows its visible part, not its coordinates.
#include "kestrel/osd.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dvpp_internal.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"
#include "osd_font.hpp"

namespace kes {
namespace osd {
namespace {

// The planes of a checked NV12/NV21 image.
struct Target {
    uint8_t* y;
    size_t y_stride;
    uint8_t* c;
    size_t c_stride;
    int64_t w, h;
    bool vu;  // NV21: V first in each pair
};

Target target_of(kes_image* image) {
    KES_REQUIRE_NOT_NULL(image);
    check_sdk(kes_image_validate(image), "image");
    const int64_t f = enum_value(image->format);
    if (f != KES_PIXEL_NV12 && f != KES_PIXEL_NV21)
        KES_FAIL(KES_ERR_UNSUPPORTED,
                 "image format %s is not supported: kes_osd draws on NV12 and NV21 (convert with "
                 "kes_vpc_convert_color first)",
                 kes_pixel_format_name(image->format));
    require_cpu_access(*image, "the image");
    kes_image_plane py, pc;
    check_sdk(kes_image_get_plane(image, 0, &py), "luma plane");
    check_sdk(kes_image_get_plane(image, 1, &pc), "chroma plane");
    return {py.data, py.stride, pc.data, pc.stride, int64_t(image->width), int64_t(image->height), f == KES_PIXEL_NV21};
}

void check_thickness(int32_t thickness, const char* what) {
    KES_REQUIRE(thickness >= 1 && thickness <= KES_OSD_MAX_THICKNESS, "%s must be 1..%d (got %d)", what,
                KES_OSD_MAX_THICKNESS, thickness);
}

void check_scale(int32_t scale, const char* what) {
    KES_REQUIRE(scale >= 1 && scale <= KES_OSD_MAX_SCALE, "%s must be 1..%d (got %d)", what, KES_OSD_MAX_SCALE, scale);
}

// ---- colours ----------------------------------------------------------------------------------------

// kes_vpc_convert_color's RGB → YUV (vpc_color.cpp rgb_to_yuv with make_matrix): the same 16-bit fixed
// point, coefficients and rounding, so a drawn colour equals that conversion of the RGB colour.
constexpr int kShift = 16;
constexpr int32_t kHalf = 1 << (kShift - 1);

int32_t fix(double v) {
    return int32_t(std::lround(v * (1 << kShift)));
}
uint8_t clamp8(int32_t v) {
    return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
}

kes_osd_color color_from_rgb(int32_t r, int32_t g, int32_t b, uint8_t alpha, int64_t which) {
    const bool bt709 = which == KES_VPC_CSC_BT709_WIDE || which == KES_VPC_CSC_BT709_NARROW;
    const bool narrow = which == KES_VPC_CSC_BT601_NARROW || which == KES_VPC_CSC_BT709_NARROW;
    const double kr = bt709 ? 0.2126 : 0.299, kb = bt709 ? 0.0722 : 0.114, kg = 1.0 - kr - kb;
    const double ys = narrow ? 219.0 / 255.0 : 1.0, cs = narrow ? 224.0 / 255.0 : 1.0;
    const double ub = 0.5 / (1.0 - kb), vr = 0.5 / (1.0 - kr);
    const int32_t y_off = narrow ? 16 : 0;
    const int32_t y = ((fix(kr * ys) * r + fix(kg * ys) * g + fix(kb * ys) * b + kHalf) >> kShift) + y_off;
    const int32_t u =
        ((fix(-kr * ub * cs) * r + fix(-kg * ub * cs) * g + fix((1.0 - kb) * ub * cs) * b + kHalf) >> kShift) + 128;
    const int32_t v =
        ((fix((1.0 - kr) * vr * cs) * r + fix(-kg * vr * cs) * g + fix(-kb * vr * cs) * b + kHalf) >> kShift) + 128;
    return kes_osd_color{clamp8(y), clamp8(u), clamp8(v), alpha};
}

// ---- painting ---------------------------------------------------------------------------------------

// Covered pixels [x0, x1) of one row, inside the image.
struct Span {
    int64_t x0, x1;
};

// Appends [x0, x1) clipped to [0, w) when anything is left.
inline void add_span(std::vector<Span>& out, int64_t x0, int64_t x1, int64_t w) {
    x0 = std::max<int64_t>(x0, 0);
    x1 = std::min(x1, w);
    if (x0 < x1) out.push_back({x0, x1});
}

inline uint8_t blend(uint8_t c, uint8_t old, uint32_t a) {
    return uint8_t((c * a + old * (255u - a) + 127u) / 255u);
}

// Blends the shape whose rows [r0, r1) `spans(row, out)` describes (sorted, disjoint, clipped spans).
template <class Spans>
void paint(const Target& t, int64_t r0, int64_t r1, const kes_osd_color& color, Spans&& spans) {
    r0 = std::max<int64_t>(r0, 0);
    r1 = std::min(r1, t.h);
    if (color.alpha == 0 || r0 >= r1) return;
    const uint32_t a = color.alpha;
    const uint8_t first = t.vu ? color.v : color.u, second = t.vu ? color.u : color.v;
    std::vector<Span> row, pairs;
    for (int64_t cr = r0 / 2; 2 * cr < r1; ++cr) {
        pairs.clear();
        for (int64_t r = std::max(2 * cr, r0); r < std::min(2 * cr + 2, r1); ++r) {
            row.clear();
            spans(r, row);
            uint8_t* y = t.y + size_t(r) * t.y_stride;
            for (const Span& s : row) {
                if (a == 255) {
                    std::memset(y + s.x0, color.y, size_t(s.x1 - s.x0));
                } else {
                    for (int64_t x = s.x0; x < s.x1; ++x) y[x] = blend(color.y, y[x], a);
                }
                pairs.push_back({s.x0 >> 1, ((s.x1 - 1) >> 1) + 1});
            }
        }
        if (pairs.empty()) continue;
        std::sort(pairs.begin(), pairs.end(), [](const Span& p, const Span& q) { return p.x0 < q.x0; });
        uint8_t* c = t.c + size_t(cr) * t.c_stride;
        auto write = [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
                c[2 * p] = a == 255 ? first : blend(first, c[2 * p], a);
                c[2 * p + 1] = a == 255 ? second : blend(second, c[2 * p + 1], a);
            }
        };
        int64_t p0 = pairs[0].x0, p1 = pairs[0].x1;
        for (size_t i = 1; i < pairs.size(); ++i) {
            if (pairs[i].x0 <= p1) {
                p1 = std::max(p1, pairs[i].x1);
            } else {
                write(p0, p1);
                p0 = pairs[i].x0;
                p1 = pairs[i].x1;
            }
        }
        write(p0, p1);
    }
}

// ---- rectangles -------------------------------------------------------------------------------------

// x ≤ px < x + w, y ≤ py < y + h in 64 bits (no overflow at the int32 limits).
struct Rect {
    int64_t x0, y0, x1, y1;
};

Rect rect_of(int32_t x, int32_t y, int32_t w, int32_t h) {
    return {x, y, int64_t(x) + std::max(w, 0), int64_t(y) + std::max(h, 0)};
}

void fill(const Target& t, const Rect& r, const kes_osd_color& color) {
    if (r.x0 >= r.x1) return;
    paint(t, r.y0, r.y1, color, [&](int64_t, std::vector<Span>& out) { add_span(out, r.x0, r.x1, t.w); });
}

// The border `th` pixels wide inside r.
void outline(const Target& t, const Rect& r, int64_t th, const kes_osd_color& color) {
    if (r.x0 >= r.x1) return;
    paint(t, r.y0, r.y1, color, [&](int64_t row, std::vector<Span>& out) {
        if (row < r.y0 + th || row >= r.y1 - th || r.x1 - r.x0 <= 2 * th) {
            add_span(out, r.x0, r.x1, t.w);
        } else {
            add_span(out, r.x0, r.x0 + th, t.w);
            add_span(out, r.x1 - th, r.x1, t.w);
        }
    });
}

// ---- lines ------------------------------------------------------------------------------------------

// Bresenham's minor-axis step at major step i of n (n > 0) for a minor extent m: the ideal position
// i·m/n rounded to nearest, halves up (away from the start). 2·i·m + n needs 66 bits.
__extension__ typedef unsigned __int128 u128;  // GCC and Clang on every 64-bit target Kestrel builds for

inline int64_t minor_step(int64_t i, int64_t m, int64_t n) {
    return int64_t((u128(2) * u128(i) * u128(m) + u128(n)) / (u128(2) * u128(n)));
}

void line(const Target& t, int64_t x0, int64_t y0, int64_t x1, int64_t y1, int64_t th, const kes_osd_color& color) {
    // The pen square around a centre (cx, cy) covers cx − h0 .. cx + h1 and cy − h0 .. cy + h1, so a centre
    // on row cy matters to image rows only when −h1 ≤ cy ≤ H − 1 + h0. Those rows are stored at
    // k = cy + h1 with the least and greatest centre x on them; a centre x beyond the columns that
    // matter is clamped just outside them (clamping keeps the order the next paragraph relies on).
    const int64_t h0 = (th - 1) / 2, h1 = th / 2;
    const int64_t rows = t.h + th - 1;
    std::vector<int64_t> mn(size_t(rows), std::numeric_limits<int64_t>::max());
    std::vector<int64_t> mx(size_t(rows), std::numeric_limits<int64_t>::min());
    int64_t ka = rows, kb = -1;
    auto put = [&](int64_t cx, int64_t cy) {
        const int64_t k = cy + h1;
        if (k < 0 || k >= rows) return;
        cx = std::min(std::max(cx, -h1 - 1), t.w + h0);
        mn[size_t(k)] = std::min(mn[size_t(k)], cx);
        mx[size_t(k)] = std::max(mx[size_t(k)], cx);
        ka = std::min(ka, k);
        kb = std::max(kb, k);
    };
    const int64_t dx = x1 - x0, dy = y1 - y0;
    const int64_t adx = dx < 0 ? -dx : dx, ady = dy < 0 ? -dy : dy;
    const int64_t sx = dx < 0 ? -1 : 1, sy = dy < 0 ? -1 : 1;
    const bool x_major = adx >= ady;
    const int64_t n = x_major ? adx : ady;
    if (n == 0) {
        put(x0, y0);
    } else {
        // Only the major steps whose centre can touch the image along the major axis (a contiguous
        // range of i), so a line from -2^31 to 2^31 costs what its visible part costs.
        const int64_t start = x_major ? x0 : y0, s = x_major ? sx : sy;
        const int64_t lo = -h1, hi = (x_major ? t.w : t.h) - 1 + h0;
        int64_t i0 = s > 0 ? lo - start : start - hi, i1 = s > 0 ? hi - start : start - lo;
        i0 = std::max<int64_t>(i0, 0);
        i1 = std::min(i1, n);
        for (int64_t i = i0; i <= i1; ++i) {
            if (x_major)
                put(x0 + sx * i, y0 + sy * minor_step(i, ady, n));
            else
                put(x0 + sx * minor_step(i, adx, n), y0 + sy * i);
        }
    }
    if (kb < 0) return;
    // Image row r is covered by the pens of the centres on stored rows k = r .. r + th − 1. Centres
    // step by at most 1 on each axis, so those pens cover one run of columns, from the least centre
    // x − h0 to the greatest + h1; and x is monotonic along the line, so the least and greatest
    // centre x of a window of rows sit on its first or last row holding centres (the rows holding
    // centres are contiguous: ka .. kb).
    paint(t, ka - (th - 1), kb + 1, color, [&](int64_t r, std::vector<Span>& out) {
        const int64_t a = std::max(r, ka), b = std::min(r + th - 1, kb);
        if (a > b) return;
        const int64_t lo = std::min(mn[size_t(a)], mn[size_t(b)]), hi = std::max(mx[size_t(a)], mx[size_t(b)]);
        add_span(out, lo - h0, hi + h1 + 1, t.w);
    });
}

// ---- text -------------------------------------------------------------------------------------------

// Text split into lines of glyph indices (osd_font.hpp), with its measured size.
struct Layout {
    std::vector<std::vector<uint8_t>> lines;
    int64_t width = 0, height = 0;  // pixels at the scale it was laid out for
};

// Bytes of the UTF-8 sequence starting at s (1 when s[0] does not start a complete, well-formed one:
// the byte is then one box on its own).
size_t utf8_length(const unsigned char* s) {
    const unsigned char b = s[0];
    const size_t n = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 1;
    for (size_t i = 1; i < n; ++i)
        if ((s[i] & 0xC0) != 0x80) return 1;  // also stops at the terminating NUL
    return n;
}

Layout layout(const char* text, int32_t scale) {
    Layout l;
    if (*text == '\0') return l;
    l.lines.emplace_back();
    size_t longest = 0;
    for (const unsigned char* s = reinterpret_cast<const unsigned char*>(text); *s != 0;) {
        if (*s == '\n') {
            l.lines.emplace_back();
            ++s;
            continue;
        }
        const bool printable = *s >= kFirstChar && *s <= kLastChar;
        l.lines.back().push_back(uint8_t(printable ? *s - kFirstChar : kBoxGlyph));
        longest = std::max(longest, l.lines.back().size());
        s += printable ? 1 : utf8_length(s);
    }
    const uint64_t w = uint64_t(longest) * kFontWidth * uint64_t(scale);
    const uint64_t h = uint64_t(l.lines.size()) * kFontHeight * uint64_t(scale);
    KES_REQUIRE(w <= uint64_t(INT32_MAX) && h <= uint64_t(INT32_MAX),
                "text of %zu lines, the longest %zu characters, is %llux%llu pixels at scale %d: more than 2^31 - 1",
                l.lines.size(), longest, static_cast<unsigned long long>(w), static_cast<unsigned long long>(h), scale);
    l.width = int64_t(w);
    l.height = int64_t(h);
    return l;
}

void text(const Target& t, int64_t x, int64_t y, const Layout& l, int64_t scale, const kes_osd_color& color,
          const kes_osd_color* background) {
    if (background) fill(t, {x, y, x + l.width, y + l.height}, *background);
    const int64_t cell_w = kFontWidth * scale, line_h = kFontHeight * scale;
    paint(t, y, y + l.height, color, [&](int64_t r, std::vector<Span>& out) {
        const std::vector<uint8_t>& chars = l.lines[size_t((r - y) / line_h)];
        const int64_t glyph_row = (r - y) % line_h / scale;
        // Only the characters whose cells reach into the image's columns.
        const int64_t j0 = x < 0 ? -x / cell_w : 0;
        const int64_t j1 = std::min<int64_t>(int64_t(chars.size()), t.w - x <= 0 ? 0 : (t.w - x + cell_w - 1) / cell_w);
        for (int64_t j = j0; j < j1; ++j) {
            const unsigned bits = font_glyph(chars[size_t(j)])[glyph_row];
            const int64_t cx = x + j * cell_w;
            for (int c = 0; c < kFontWidth;) {
                if (!(bits & (0x80u >> c))) {
                    ++c;
                    continue;
                }
                int e = c;
                while (e < kFontWidth && (bits & (0x80u >> e))) ++e;
                add_span(out, cx + c * scale, cx + e * scale, t.w);
                c = e;
            }
        }
    });
}

}  // namespace
}  // namespace osd
}  // namespace kes

extern "C" {

kes_osd_color kes_osd_color_rgb(uint8_t r, uint8_t g, uint8_t b) {
    return kes::osd::color_from_rgb(r, g, b, 255, KES_VPC_CSC_BT601_WIDE);
}

kes_status kes_osd_color_from_rgb(uint8_t r, uint8_t g, uint8_t b, uint8_t alpha, kes_vpc_csc_matrix matrix,
                                  kes_osd_color* out_color) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_color);
        const int64_t m = kes::enum_value(matrix);
        KES_REQUIRE(m >= KES_VPC_CSC_BT601_WIDE && m <= KES_VPC_CSC_BT709_NARROW,
                    "matrix must be a kes_vpc_csc_matrix (BT.601/BT.709, wide or narrow; got %lld)",
                    static_cast<long long>(m));
        *out_color = kes::osd::color_from_rgb(r, g, b, alpha, m);
        return KES_OK;
    });
}

// No trace spans for the single shapes: each takes microseconds, and a span per box would swamp a
// trace; the text and batch calls, which do the most work, have one.
kes_status kes_osd_fill_rect(kes_image* image, int32_t x, int32_t y, int32_t width, int32_t height,
                             kes_osd_color color) {
    return kes::guard(__func__, [&] {
        const kes::osd::Target t = kes::osd::target_of(image);
        kes::osd::fill(t, kes::osd::rect_of(x, y, width, height), color);
        return KES_OK;
    });
}

kes_status kes_osd_draw_rect(kes_image* image, int32_t x, int32_t y, int32_t width, int32_t height, int32_t thickness,
                             kes_osd_color color) {
    return kes::guard(__func__, [&] {
        const kes::osd::Target t = kes::osd::target_of(image);
        kes::osd::check_thickness(thickness, "thickness");
        kes::osd::outline(t, kes::osd::rect_of(x, y, width, height), thickness, color);
        return KES_OK;
    });
}

kes_status kes_osd_draw_line(kes_image* image, int32_t x0, int32_t y0, int32_t x1, int32_t y1, int32_t thickness,
                             kes_osd_color color) {
    return kes::guard(__func__, [&] {
        const kes::osd::Target t = kes::osd::target_of(image);
        kes::osd::check_thickness(thickness, "thickness");
        kes::osd::line(t, x0, y0, x1, y1, thickness, color);
        return KES_OK;
    });
}

kes_status kes_osd_text_size(const char* text, int32_t scale, uint32_t* out_width, uint32_t* out_height) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_width);
        KES_REQUIRE_NOT_NULL(out_height);
        *out_width = *out_height = 0;
        KES_REQUIRE_NOT_NULL(text);
        kes::osd::check_scale(scale, "scale");
        const kes::osd::Layout l = kes::osd::layout(text, scale);
        *out_width = uint32_t(l.width);
        *out_height = uint32_t(l.height);
        return KES_OK;
    });
}

kes_status kes_osd_draw_text(kes_image* image, int32_t x, int32_t y, const char* text, int32_t scale,
                             kes_osd_color color, const kes_osd_color* background) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "osd_draw_text");
        const kes::osd::Target t = kes::osd::target_of(image);
        KES_REQUIRE_NOT_NULL(text);
        kes::osd::check_scale(scale, "scale");
        const kes::osd::Layout l = kes::osd::layout(text, scale);
        kes::osd::text(t, x, y, l, scale, color, background);
        return KES_OK;
    });
}

void kes_osd_box_style_init(kes_osd_box_style* style) {
    if (!style) return;
    std::memset(style, 0, sizeof *style);
    style->struct_size = sizeof *style;
    style->thickness = 2;
    style->text_scale = 1;
    style->text_color = kes_osd_color{255, 128, 128, 255};
    style->label_inside = 0;
}

kes_status kes_osd_draw_boxes(kes_image* image, const kes_osd_box* boxes, uint32_t count,
                              const kes_osd_box_style* style) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "osd_draw_boxes");
        const kes::osd::Target t = kes::osd::target_of(image);
        kes_osd_box_style st;
        kes_osd_box_style_init(&st);
        if (style)
            kes::read_struct(style, KES_STRUCT_SIZE_THROUGH(kes_osd_box_style, label_inside), "style",
                             "kes_osd_box_style", &st);
        kes::osd::check_thickness(st.thickness, "style->thickness");
        kes::osd::check_scale(st.text_scale, "style->text_scale");
        KES_REQUIRE(st.label_inside <= 1, "style->label_inside must be 0 or 1 (got %u)", st.label_inside);
        KES_REQUIRE(count == 0 || boxes != nullptr, "boxes is NULL with count %u", count);
        // Lay out every label before drawing anything: a failure leaves the image as it was.
        std::vector<kes::osd::Layout> labels(count);
        for (uint32_t i = 0; i < count; ++i) {
            if (!boxes[i].label) continue;
            try {
                labels[i] = kes::osd::layout(boxes[i].label, st.text_scale);
            } catch (const kes::Error& e) {
                KES_FAIL(e.status(), "boxes[%u].label: %s", i, e.what());
            }
        }
        const int64_t s = st.text_scale;
        for (uint32_t i = 0; i < count; ++i) {
            const kes_osd_box& b = boxes[i];
            const kes::osd::Rect r = kes::osd::rect_of(b.x, b.y, b.width, b.height);
            kes::osd::outline(t, r, st.thickness, b.color);
            const kes::osd::Layout& l = labels[i];
            if (l.lines.empty()) continue;
            const int64_t top = !st.label_inside && r.y0 - l.height >= 0 ? r.y0 - l.height : r.y0;
            kes::osd::fill(t, {r.x0, top, r.x0 + l.width + 2 * s, top + l.height}, b.color);
            kes::osd::text(t, r.x0 + s, top, l, s, st.text_color, nullptr);
        }
        return KES_OK;
    });
}

}  // extern "C"
