// vpc_internal.hpp — the VPC pieces shared by resize, paste, batch crop and colour conversion (not
// installed): plane resampling that reproduces OpenCV 4.6 cv::resize, and the board's VPC rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kes/cpu_dispatch.hpp"

#include "dvpp_internal.hpp"

namespace kes {
namespace vpc {

// A read-only window of a plane: w × h pixels of `cn` interleaved bytes each.
struct PlaneView {
    const uint8_t* data;
    size_t stride;
    uint32_t w, h;
};

enum class Filter { bilinear, nearest };

// Resizes src (cn = 1..4 interleaved 8-bit channels) to dw × dh into dst, bit-exact with OpenCV 4.6
// cv::resize on CV_8UC<cn> with INTER_LINEAR (including OpenCV's vectorised vertical pass, its scalar
// tail and its 2× INTER_AREA shortcut) or INTER_NEAREST. Equal sizes copy, as cv::resize does.
// k is the SIMD kernel table (below): tests pass each in turn, every other caller the active one.
struct Kernels;
const Kernels& kernels_active() noexcept;
void resize_plane(const PlaneView& src, uint32_t cn, uint8_t* dst, size_t dst_stride, uint32_t dw, uint32_t dh,
                  Filter filter, const Kernels& k = kernels_active());

// Tables of the horizontal bilinear pass for one cn-channel row: element i is
// (s[ofs[i]]·w0 + s[ofs[i] + cn]·w1) >> 4 with (w0, w1) packed little-endian in wpair[i].
// For the SIMD kernels, elements also come in groups of 4 (g = i / 4): when the two samples of all
// four lie in the 16 bytes at ofs[4g] (window[g] = 1), shuffle[16g ..] picks them out as zero-extended
// 16-bit pairs, replacing 8 single loads with one load and one byte shuffle (the 0x80 entries read as
// zero both for x86 pshufb and for Arm tbl, which zeroes any index past the table).
struct HTables {
    const int32_t* ofs;
    const int32_t* wpair;
    const uint8_t* shuffle;
    const uint8_t* window;
    size_t n;  // elements with both samples inside the row (whole pixels)
    uint32_t cn;
};

// Nearest-neighbour row as byte groups of 16: output byte j of a row copies source byte src_byte(j).
// When a group's 16 source bytes all lie in the 32 bytes at base[g] (window[g] = 1), index[16g ..]
// picks them with one table lookup; other groups are copied byte by byte from src_byte.
struct NearestTables {
    const uint32_t* src_byte;  // per output byte of a row
    const uint32_t* base;      // per group
    const uint8_t* index;      // 16 per group
    const uint8_t* window;     // per group
    size_t groups;             // whole groups of 16 output bytes
};

// Fixed-point YUV → RGB coefficients of one colour matrix (vpc_color.cpp, 16-bit fractions):
// Y = ky_r·R + ky_g·G + ky_b·B + y_off, Cb/Cr likewise (offset 128);
// R = cy·(Y − y0) + r_v·(V − 128), G = cy·(Y − y0) + g_u·(U − 128) + g_v·(V − 128), B = cy·(Y − y0) + b_u·(U − 128).
struct Matrix {
    int32_t ky_r, ky_g, ky_b, ku_r, ku_g, ku_b, kv_r, kv_g, kv_b, y_off;
    int32_t cy, r_v, g_u, g_v, b_u, y0;
};
constexpr int kCscShift = 16;
constexpr int32_t kCscHalf = 1 << (kCscShift - 1);

// The VPC's SIMD kernels: one table of function pointers per instruction set, chosen once on first
// use from kes_cpu_has() (so KES_CPU_DISABLE applies), as every SIMD choice in Kestrel is
// (docs/ARCHITECTURE.md "SIMD dispatch"). Each kernel does the leading part of one row and returns how
// much it did; the caller's plain loop — the reference — finishes the row. nullptr: the table has no
// kernel for that pass and the plain loop does the whole row (the scalar table is all nullptr).
struct Kernels {
    const char* name;  // "scalar", "sse2", "avx2" or "neon"
    // The horizontal bilinear pass over `rows` (1 or 2) source rows src[r] into out[r], elements
    // [0, t.n): the leading elements done (a multiple of 8; 0 for cn > 2).
    size_t (*hresize_linear)(const uint8_t* const* src, int rows, const HTables& t, int16_t* const* out);
    // OpenCV's vertical bilinear step, d[i] = sat8(((h0[i]·b0 >> 16) + (h1[i]·b1 >> 16) + 2) >> 2), for
    // the leading elements it can do a vector at a time.
    size_t (*vresize_linear)(const int16_t* h0, const int16_t* h1, int32_t b0, int32_t b1, uint8_t* d, size_t n);
    // One output row of the exact 2× INTER_AREA shortcut from source rows s0, s1 (n = output width · cn):
    // the leading elements done (a multiple of 16; 0 for cn > 2).
    size_t (*area2_row)(const uint8_t* s0, const uint8_t* s1, uint32_t cn, uint8_t* d, size_t n);
    // Copies the whole byte groups of one nearest-neighbour row (NearestTables, built only for a table
    // with this kernel); returns the bytes done (16 · groups).
    size_t (*nearest_row)(const uint8_t* s, const NearestTables& t, uint8_t* d);
    // YUV 4:2:0 → RGB888/BGR888 (bgr ≠ 0) over one row of w pixels: ys the luma row, us/vs the chroma
    // samples with element step c_step (1 for I420, 2 for NV12/NV21); the leading pixels done.
    uint32_t (*yuv_to_rgb_row)(const uint8_t* ys, const uint8_t* us, const uint8_t* vs, uint32_t c_step,
                               const Matrix& m, uint8_t* d, int bgr, uint32_t w);
    // d[2i] = a[i], d[2i + 1] = b[i]: one NV12/NV21 chroma row from planar U and V rows (VDEC's output);
    // the leading i done.
    size_t (*interleave_row)(const uint8_t* a, const uint8_t* b, uint8_t* d, size_t n);
    // d[2i] = s[i], the bytes between untouched: one component of semi-planar chroma (JPEGD's NV12 from
    // 4:2:0 writes U, then V); the leading i done, never touching d past 2(n - 1).
    size_t (*spread_row)(const uint8_t* s, uint8_t* d, size_t n);
};

const Kernels& kernels_scalar() noexcept;  // vpc_resize.cpp
// nullptr when this build or this CPU lacks the instruction set.
const Kernels* kernels_sse2() noexcept;  // vpc_resize.cpp: x86-64 baseline (see there for its gate)
const Kernels* kernels_avx2() noexcept;  // vpc_resize_avx2.cpp
const Kernels* kernels_neon() noexcept;  // vpc_resize_neon.cpp (+ the colour row in vpc_color.cpp)
// The fastest table this CPU runs (decided once, thread-safe): what every VPC call uses.
const Kernels& kernels_active() noexcept;
// Every table usable on this CPU, scalar first: for tests that compare each with the scalar table.
std::vector<const Kernels*> kernels_available();

#if KES_SIMD_X86
// Baseline SSE2 (plane_ops.cpp), in the sse2 and avx2 tables.
size_t interleave_row_sse2(const uint8_t* a, const uint8_t* b, uint8_t* d, size_t n);
size_t spread_row_sse2(const uint8_t* s, uint8_t* d, size_t n);
#endif
#if KES_SIMD_ARM
size_t interleave_row_neon(const uint8_t* a, const uint8_t* b, uint8_t* d, size_t n);  // plane_ops.cpp
uint32_t yuv_to_rgb_row_neon(const uint8_t* ys, const uint8_t* us, const uint8_t* vs, uint32_t c_step, const Matrix& m,
                             uint8_t* d, int bgr, uint32_t w);  // vpc_color.cpp, in kernels_neon()'s table
#endif

// The two chroma row steps through the active table, the plain loop finishing each row.
void interleave_row(const uint8_t* a, const uint8_t* b, uint8_t* d, size_t n, const Kernels& k = kernels_active());
void spread_row(const uint8_t* s, uint8_t* d, size_t n, const Kernels& k = kernels_active());

// kes_vpc_interp argument → filter; 3/4 (TensorFlow-like) are KES_ERR_UNSUPPORTED.
Filter filter_arg(const kes_vpc_interp& interp);

// Board rules (BOARD-RULES §VPC), each failure a KES_ERR_INVALID_ARGUMENT naming the rule and profile.
void check_input_size(const kes_board_profile& b, kes_pixel_format format, uint32_t w, uint32_t h);
void check_output_size(const kes_board_profile& b, uint32_t w, uint32_t h);
void check_scale(const kes_board_profile& b, uint32_t in, uint32_t out, const char* axis);
// An inclusive ROI inside a w × h image, with the 310 parity rule; `what` names it in messages.
void check_roi(const kes_board_profile& b, const kes_vpc_roi& roi, uint32_t w, uint32_t h, const char* what);

inline uint32_t roi_width(const kes_vpc_roi& r) noexcept {
    return r.right - r.left + 1;
}
inline uint32_t roi_height(const kes_vpc_roi& r) noexcept {
    return r.bottom - r.top + 1;
}

// True for NV12 and NV21.
bool is_nv(const kes_pixel_format& format);

// Validates an NV12/NV21 VPC input and its crop ROI (NULL: the whole image, rounded down to even as VPC
// does) on the board; returns the ROI. KES_ERR_UNSUPPORTED for other formats.
kes_vpc_roi check_nv_crop(const kes_board_profile& b, const kes_image& in, const kes_vpc_roi* roi, const char* what);
// Output size and scale rules for resizing `roi` to out_w × out_h (both even for 4:2:0).
void check_nv_resize(const kes_board_profile& b, const kes_vpc_roi& roi, uint32_t out_w, uint32_t out_h,
                     const char* what);

// Fills the visible pixels of an NV12/NV21 image with one colour (letterbox padding; CPU-addressable
// memory only).
void fill_nv(const kes_image& img, uint8_t y, uint8_t u, uint8_t v);

// Resizes the inclusive `roi` of an NV12/NV21 image into the rectangle `area` of `out` (same format;
// area left/top/width/height even): luma as one plane, chroma as a plane of interleaved pairs (the
// pairs under the ROI). No checks: callers validate first.
void resize_nv_region(const kes_image& in, const kes_vpc_roi& roi, const kes_image& out, const kes_vpc_roi& area,
                      Filter filter, const Kernels& k = kernels_active());

// YUV 4:2:0 `in` (NV12, NV21 or I420) → `out` (RGB888 or BGR888) over out's width × height (even, at
// most in's), with kes_vpc_csc_matrix `matrix`. No checks: kes_vpc_convert_color validates first.
void yuv420_to_rgb(const kes_image& in, const kes_image& out, int64_t matrix, const Kernels& k = kernels_active());

}  // namespace vpc
}  // namespace kes
