// vpc_internal.hpp — the VPC pieces shared by resize, paste, batch crop and colour conversion (not
// installed): plane resampling that reproduces OpenCV 4.6 cv::resize, and the board's VPC rules.
#pragma once

#include <cstddef>
#include <cstdint>

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
void resize_plane(const PlaneView& src, uint32_t cn, uint8_t* dst, size_t dst_stride, uint32_t dw, uint32_t dh,
                  Filter filter);

// Which SIMD kernels the VPC runs: chosen once from kes_cpu_features() (so KES_CPU_DISABLE applies),
// and none at all while set_scalar_only(true) holds.
bool use_avx2() noexcept;
bool use_neon() noexcept;
// Test hook: true makes every VPC pass take its plain C++ loop (also x86's baseline SSE2 step) from the
// next call on, so one test process can compare each kernel with the scalar path bit for bit;
// KES_CPU_DISABLE=all only switches the whole process, once. Not for concurrent use with running calls.
void set_scalar_only(bool scalar_only) noexcept;
// "avx2", "neon", "sse2" (x86 baseline only) or "scalar": the kernels the resize runs now, for reports.
const char* simd_path() noexcept;

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

// Runs the horizontal pass over `rows` (1 or 2) source rows src[r] into out[r], elements [0, t.n).
// Returns how many leading elements it did (a multiple of 8; 0 for cn > 2 or without AVX2).
size_t hresize_linear_avx2(const uint8_t* const* src, int rows, const HTables& t, int16_t* const* out);

// OpenCV's vertical bilinear step, d[i] = sat8(((h0[i]·b0 >> 16) + (h1[i]·b1 >> 16) + 2) >> 2), for
// the leading elements it can do 32 at a time; returns how many (0 without AVX2 in the build).
size_t vresize_linear_avx2(const int16_t* h0, const int16_t* h1, int32_t b0, int32_t b1, uint8_t* d, size_t n);

// NEON twins of the two passes above (0 off aarch64): each returns a multiple of 8 leading elements,
// hresize 0 for cn > 2.
size_t hresize_linear_neon(const uint8_t* const* src, int rows, const HTables& t, int16_t* const* out);
size_t vresize_linear_neon(const int16_t* h0, const int16_t* h1, int32_t b0, int32_t b1, uint8_t* d, size_t n);

// One output row of the exact 2× INTER_AREA shortcut from source rows s0, s1 (n = output width · cn):
// the leading elements done (a multiple of 16; 0 for cn > 2 or without NEON).
size_t area2_row_neon(const uint8_t* s0, const uint8_t* s1, uint32_t cn, uint8_t* d, size_t n);

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
// Copies the whole groups of one row; returns the bytes done (16 · groups; 0 without NEON).
size_t nearest_row_neon(const uint8_t* s, const NearestTables& t, uint8_t* d);

// kes_vpc_interp argument → filter; 3/4 (TensorFlow-like) are KES_ERR_UNSUPPORTED.
Filter filter_arg(const kes_vpc_interp& interp);

// Board rules (spec §2.3), each failure a KES_ERR_INVALID_ARGUMENT naming the rule and profile.
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

// Resizes the inclusive `roi` of an NV12/NV21 image into the rectangle `area` of `out` (same format;
// area left/top/width/height even): luma as one plane, chroma as a plane of interleaved pairs (the
// pairs under the ROI). No checks: callers validate first.
void resize_nv_region(const kes_image& in, const kes_vpc_roi& roi, const kes_image& out, const kes_vpc_roi& area,
                      Filter filter);

}  // namespace vpc
}  // namespace kes
