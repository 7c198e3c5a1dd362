// aipp_kernels.cpp — the fused per-image pass of BOARD-RULES §AIPP-order (crop → swap → CSC → padding → DTC →
// store), as a per-pixel reference and as row kernels with per-channel DTC tables.
//
// Both kernels call the same dtc() and store(), and the fast one only tabulates them over the 256
// values a CSC output can take, so the two agree bit for bit on every dtype (tests check it).
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

#include "aipp_internal.hpp"
#include "aipp_simd.hpp"
#include "kes/cpu_dispatch.hpp"

namespace kes {
namespace aipp {
namespace {

// The scalar table does no leading elements: the callers' loops do every row, as the reference.
uint32_t csc_row_none(const uint8_t*, const uint8_t*, uint32_t, int, const int32_t*, const int32_t*, const int32_t*,
                      uint8_t*, uint8_t*, uint8_t*) noexcept {
    return 0;
}
uint32_t dtc_row_f32_none(const uint8_t*, uint32_t, float, float, float, float*) noexcept {
    return 0;
}
uint32_t dtc_row_f16_none(const uint8_t*, uint32_t, float, float, float, int, uint16_t*) noexcept {
    return 0;
}
const Kernels kScalar = {"scalar", csc_row_none, dtc_row_f32_none, dtc_row_f16_none};

constexpr dispatch::Variant<Kernels> kVariants[] = {
    {KES_CPU_AVX2 | KES_CPU_F16C, kernels_avx2},
    {KES_CPU_NEON, kernels_neon},
};

inline float fp16_round(float v) {
    return kes_fp16_to_float(kes_fp16_from_float(v));
}

inline int32_t clamp_u8(int32_t v) {
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

// Input channels of source pixel (sx, sy) after the swap step, BOARD-RULES §AIPP-order.
inline void load_pixel(const Plan& pl, uint32_t sx, uint32_t sy, int32_t in[3]) {
    const kes_image& im = *pl.image;
    const uint8_t* base = static_cast<const uint8_t*>(im.data);
    const size_t ws = im.width_stride;
    switch (pl.format) {
        case KES_AIPP_YUV420SP_U8: {
            const uint8_t* uv = base + ws * im.height_stride + (sy >> 1) * ws + (sx & ~1u);
            in[0] = base[sy * ws + sx];
            in[1] = uv[0];
            in[2] = uv[1];
            if (pl.swap_rb) std::swap(in[1], in[2]);
            break;
        }
        case KES_AIPP_YUV400_U8:
            in[0] = base[sy * ws + sx];
            in[1] = in[2] = 0;
            break;
        case KES_AIPP_RGB888_U8: {
            const uint8_t* px = base + sy * ws + size_t{sx} * 3;
            in[0] = px[0];
            in[1] = px[1];
            in[2] = px[2];
            if (pl.swap_rb) std::swap(in[0], in[2]);
            break;
        }
        default: {  // XRGB8888_U8
            const uint8_t* px = base + sy * ws + size_t{sx} * 4 + (pl.ax_swap ? 0 : 1);
            in[0] = px[0];
            in[1] = px[1];
            in[2] = px[2];
            if (pl.swap_rb) std::swap(in[0], in[2]);
            break;
        }
    }
}

// BOARD-RULES §AIPP-order CSC; `>> 8` on a negative sum is an arithmetic shift (GCC/Clang define it so, and C++20
// requires it), the UNCONFIRMED choice documented in aipp.h.
inline int32_t csc_channel(const Plan& pl, int i, const int32_t in[3]) {
    const int32_t s = pl.m[i][0] * (in[0] - pl.in_bias[0]) + pl.m[i][1] * (in[1] - pl.in_bias[1]) +
                      pl.m[i][2] * (in[2] - pl.in_bias[2]);
    return clamp_u8((s >> 8) + pl.out_bias[i]);
}

inline int64_t out_offset(const Plan& pl, uint32_t c, uint32_t y, uint32_t x) {
    return c * pl.stride_c + y * pl.stride_h + x * pl.stride_w;
}

}  // namespace

float dtc(const Plan& pl, uint32_t c, float x) {
    if (pl.board_exact) {
        // Registers: mean int16, min/var fp16 (already rounded in the plan); arithmetic in fp16.
        const float d = fp16_round((x - static_cast<float>(pl.mean[c])) - pl.min[c]);
        return fp16_round(d * pl.var[c]);
    }
    return ((x - static_cast<float>(pl.mean[c])) - pl.min[c]) * pl.var[c];
}

void store(const Plan& pl, int64_t off, float v) {
    switch (pl.dtype) {
        case KES_F32: reinterpret_cast<float*>(pl.out_base)[off] = v; break;
        case KES_F16: reinterpret_cast<uint16_t*>(pl.out_base)[off] = kes_fp16_from_float(v); break;
        case KES_I8: {
            const float c = std::isnan(v) ? 0.0f : v < -128.0f ? -128.0f : v > 127.0f ? 127.0f : v;
            reinterpret_cast<int8_t*>(pl.out_base)[off] = static_cast<int8_t>(std::nearbyint(c));
            break;
        }
        default: {  // KES_U8
            const float c = std::isnan(v) ? 0.0f : v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
            pl.out_base[off] = static_cast<uint8_t>(std::nearbyint(c));
            break;
        }
    }
}

void run_rows_scalar(const Plan& pl, uint32_t row_begin, uint32_t row_end) {
    for (uint32_t y = row_begin; y < row_end; ++y) {
        const bool pad_row = y < pl.pad_t || y >= pl.pad_t + pl.crop_h;
        for (uint32_t x = 0; x < pl.out_w; ++x) {
            const bool pad = pad_row || x < pl.pad_l || x >= pl.pad_l + pl.crop_w;
            int32_t v[3] = {0, 0, 0};
            if (!pad) {
                int32_t in[3];
                load_pixel(pl, pl.crop_x + (x - pl.pad_l), pl.crop_y + (y - pl.pad_t), in);
                for (int i = 0; i < 3; ++i) v[i] = pl.csc ? csc_channel(pl, i, in) : in[i];
            }
            for (uint32_t c = 0; c < pl.channels; ++c) {
                const float xv = pad ? pl.pad_value : static_cast<float>(v[c]);
                store(pl, out_offset(pl, c, y, x), dtc(pl, c, xv));
            }
        }
    }
}

namespace {

// DTC + store tabulated over the 256 CSC outputs, one table per channel: the per-pixel work of the
// row kernel becomes a table lookup and a store.
template <class T>
struct Tables {
    T lut[4][256];
    T pad[4];
};

template <class T>
void fill_tables(const Plan& pl, Tables<T>* t) {
    // store() into a local plan that points at the table gives exactly the bits the reference writes.
    Plan local = pl;
    local.stride_c = local.stride_h = 0;
    local.stride_w = 1;
    for (uint32_t c = 0; c < pl.channels; ++c) {
        local.out_base = reinterpret_cast<uint8_t*>(t->lut[c]);
        for (int v = 0; v < 256; ++v) store(local, v, dtc(pl, c, static_cast<float>(v)));
        local.out_base = reinterpret_cast<uint8_t*>(&t->pad[c]);
        store(local, 0, dtc(pl, c, pl.pad_value));
    }
}

// CSC'd (or passed-through) channel values of one cropped source row into rows[c][0..crop_w).
void convert_row(const Plan& pl, const Kernels& K, uint32_t sy, uint8_t* rows[3]) {
    const kes_image& im = *pl.image;
    const uint8_t* base = static_cast<const uint8_t*>(im.data);
    const size_t ws = im.width_stride;
    const uint32_t w = pl.crop_w;
    if (pl.format == KES_AIPP_YUV420SP_U8) {
        const uint8_t* yrow = base + sy * ws + pl.crop_x;
        const uint8_t* uvrow = base + ws * im.height_stride + (sy >> 1) * ws;
        const int ui = pl.swap_rb ? 1 : 0, vi = 1 - ui;
        if (!pl.csc) {
            for (uint32_t x = 0; x < w; ++x) {
                const uint8_t* uv = uvrow + ((pl.crop_x + x) & ~1u);
                rows[0][x] = yrow[x];
                rows[1][x] = uv[ui];
                rows[2][x] = uv[vi];
            }
            return;
        }
        // The chroma terms are shared by the two pixels of a 4:2:0 pair; the sum is the same integer
        // the reference forms, so the results are identical.
        uint32_t x0 = 0;
        // crop_x is even for YUV420SP (validated, BOARD-RULES §AIPP-order), which the kernels' pair layout needs.
        if ((pl.crop_x & 1u) == 0) {
            x0 = K.yuv420sp_csc_row(yrow, uvrow + pl.crop_x, w, pl.swap_rb ? 1 : 0, &pl.m[0][0], pl.in_bias,
                                    pl.out_bias, rows[0], rows[1], rows[2]);
        }
        int32_t t[3] = {0, 0, 0};
        for (uint32_t x = x0; x < w; ++x) {
            const uint32_t sx = pl.crop_x + x;
            if (x == x0 || (sx & 1u) == 0) {
                const uint8_t* uv = uvrow + (sx & ~1u);
                const int32_t u = uv[ui] - pl.in_bias[1], v = uv[vi] - pl.in_bias[2];
                for (int i = 0; i < 3; ++i) t[i] = pl.m[i][1] * u + pl.m[i][2] * v;
            }
            const int32_t yv = yrow[x] - pl.in_bias[0];
            for (int i = 0; i < 3; ++i) {
                rows[i][x] = static_cast<uint8_t>(clamp_u8(((pl.m[i][0] * yv + t[i]) >> 8) + pl.out_bias[i]));
            }
        }
        return;
    }
    if (pl.format == KES_AIPP_YUV400_U8) {
        std::memcpy(rows[0], base + sy * ws + pl.crop_x, w);
        return;
    }
    const uint32_t bpp = pl.format == KES_AIPP_RGB888_U8 ? 3 : 4;
    const uint8_t* px = base + sy * ws + size_t{pl.crop_x} * bpp + (bpp == 4 && !pl.ax_swap ? 1 : 0);
    const int r = pl.swap_rb ? 2 : 0, b = 2 - r;
    if (!pl.csc) {
        for (uint32_t x = 0; x < w; ++x, px += bpp) {
            rows[0][x] = px[r];
            rows[1][x] = px[1];
            rows[2][x] = px[b];
        }
        return;
    }
    for (uint32_t x = 0; x < w; ++x, px += bpp) {
        const int32_t in[3] = {px[r] - pl.in_bias[0], px[1] - pl.in_bias[1], px[b] - pl.in_bias[2]};
        for (int i = 0; i < 3; ++i) {
            const int32_t s = pl.m[i][0] * in[0] + pl.m[i][1] * in[1] + pl.m[i][2] * in[2];
            rows[i][x] = static_cast<uint8_t>(clamp_u8((s >> 8) + pl.out_bias[i]));
        }
    }
}

template <class T>
void run_rows_typed(const Plan& pl, uint32_t row_begin, uint32_t row_end) {
    Tables<T> tables;
    fill_tables(pl, &tables);
    // Three converted rows. On the stack up to the crop limit of BOARD-RULES §AIPP-order (4096), so executing
    // allocates nothing; a wider uncropped source (larger than any board's AIPP reads) takes the heap.
    constexpr uint32_t kStackWidth = 4096;
    uint8_t stack_rows[3 * kStackWidth];
    std::vector<uint8_t> heap_rows;
    uint8_t* scratch = stack_rows;
    if (pl.crop_w > kStackWidth) {
        heap_rows.resize(size_t{pl.crop_w} * 3);
        scratch = heap_rows.data();
    }
    uint8_t* rows[3] = {scratch, scratch + pl.crop_w, scratch + 2 * size_t{pl.crop_w}};
    T* out = reinterpret_cast<T*>(pl.out_base);
    const Kernels& K = kernels_active();
    for (uint32_t y = row_begin; y < row_end; ++y) {
        const bool pad_row = y < pl.pad_t || y >= pl.pad_t + pl.crop_h;
        if (!pad_row) convert_row(pl, K, pl.crop_y + (y - pl.pad_t), rows);
        for (uint32_t c = 0; c < pl.channels; ++c) {
            T* o = out + c * pl.stride_c + y * pl.stride_h;
            const int64_t sw = pl.stride_w;
            const T padv = tables.pad[c];
            if (pad_row) {
                for (uint32_t x = 0; x < pl.out_w; ++x) o[x * sw] = padv;
                continue;
            }
            for (uint32_t x = 0; x < pl.pad_l; ++x) o[x * sw] = padv;
            const T* lut = tables.lut[c];
            const uint8_t* src = rows[c];
            T* mid = o + pl.pad_l * sw;
            if (sw == 1) {
                uint32_t x = 0;
                if (std::is_same<T, float>::value && !pl.board_exact) {
                    x = K.dtc_row_f32(src, pl.crop_w, static_cast<float>(pl.mean[c]), pl.min[c], pl.var[c],
                                      reinterpret_cast<float*>(mid));
                } else if (std::is_same<T, uint16_t>::value) {
                    x = K.dtc_row_f16(src, pl.crop_w, static_cast<float>(pl.mean[c]), pl.min[c], pl.var[c],
                                      pl.board_exact ? 1 : 0, reinterpret_cast<uint16_t*>(mid));
                }
                for (; x < pl.crop_w; ++x) mid[x] = lut[src[x]];
            } else {
                for (uint32_t x = 0; x < pl.crop_w; ++x) mid[x * sw] = lut[src[x]];
            }
            for (uint32_t x = pl.pad_l + pl.crop_w; x < pl.out_w; ++x) o[x * sw] = padv;
        }
    }
}

}  // namespace

const Kernels& kernels_scalar() noexcept {
    return kScalar;
}

const Kernels& kernels_active() noexcept {
    static const Kernels& chosen = dispatch::pick_table(kVariants, kScalar);
    return chosen;
}

void run_rows_fast(const Plan& pl, uint32_t row_begin, uint32_t row_end) {
    switch (pl.dtype) {
        case KES_F32: run_rows_typed<float>(pl, row_begin, row_end); break;
        case KES_F16: run_rows_typed<uint16_t>(pl, row_begin, row_end); break;
        case KES_I8: run_rows_typed<int8_t>(pl, row_begin, row_end); break;
        default: run_rows_typed<uint8_t>(pl, row_begin, row_end); break;
    }
}

}  // namespace aipp
}  // namespace kes
