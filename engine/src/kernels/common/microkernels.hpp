// microkernels.hpp — the per-ISA microkernel tables under the fast kernels.
//
// One dispatch idiom, fv's: a table of function pointers per instruction set, chosen once from
// kes_cpu_features() (so KES_CPU_DISABLE forces the fallbacks). The op-level drivers (kernels/common/)
// are plain C++ that tile the work and call these; the microkernels (kernels/{common,x86,arm}/) are
// the only ISA-specific code, all instances of one template (microkernel_impl.hpp) over a vector type.
// The scalar table is always built and is what a CPU without AVX2 or NEON runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kes {
namespace kernels {

// Output clamp applied in registers (Relu, Relu6, Clip fused into the node); ±infinity when none.
struct Clamp {
    float min, max;
};

// Parameters of a standalone activation (the v* unary microkernels below): the clamp of vclamp, the
// slope of vleaky_relu, the alpha·x + beta of vhard_sigmoid.
struct UnaryParams {
    Clamp clamp;
    float alpha, beta;
};

// The requantization of an int32 sum to a u8/i8 output (ops/quant.hpp's requantize(), vectorised as
// ONNX Runtime's MLAS does it, in f32): v = f32(acc) · multiplier, clamped to [lo, hi] (the output
// range minus the zero point, as floats), rounded half to even, + zero_point. The result lies in the
// output type's range, so its low byte is the u8 or i8 value either way.
struct QuantOut {
    float lo, hi;
    int32_t zero_point;
};

// out[i] = f(x[i]) over n floats (out may equal x).
using UnaryFn = void (*)(size_t n, const float* x, float* out, const UnaryParams& p);

struct Microkernels {
    const char* name;  // "scalar", "avx2", "avx512", "neon"

    // Packed panels and blocks are only as wide as their columns need: full ones are gemm_nr (dw_block)
    // wide, and the last one of a layer whose column count is not a multiple of that is narrower:
    // packed_width(its columns), whole vectors (36 output channels pack as 32 + 16 on AVX-512, not
    // 32 + 32: less memory, and no multiply-adds on columns of zeros). A GEMM panel narrower than one
    // vector is packed exactly as wide as its columns (a detector head of 2 channels packs 2 columns,
    // not 16): its tile loads a whole vector per row, reading up to vector_width - 1 floats past the
    // panel, so a packed region of panels ends with panel_overread() zeros. (Wider panels keep whole
    // vectors: rows at a stride off the vector width split loads across cache lines, 4% slower.)
    uint32_t vector_width;  // floats per vector (1 for the scalar table)
    size_t packed_width(size_t n) const { return (n + vector_width - 1) / vector_width * vector_width; }
    size_t panel_width(size_t n) const { return n < vector_width ? n : packed_width(n); }
    size_t panel_overread() const { return vector_width - 1; }
    // Columns of n packed in depthwise blocks of dw_block, and in GEMM panels of gemm_nr.
    size_t block_columns(size_t n) const { return n / dw_block * dw_block + packed_width(n % dw_block); }
    size_t panel_columns(size_t n) const { return n / gemm_nr * gemm_nr + panel_width(n % gemm_nr); }

    // Indirect GEMM tile (XNNPACK's IGEMM): mr ≤ gemm_mr output rows × nc ≤ gemm_nr output columns,
    //   c[r·c_stride + n] = clamp(w_bias[n] + Σ_{t<ks} Σ_{k<kc} a[t·gemm_mr + r][k] · w[t][k][n])
    // `a` holds ks × gemm_mr row pointers, each to kc floats (rows r ≥ mr are read, never stored: point
    // them anywhere valid). `w` is one packed panel of pw = panel_width(nc) columns: pw bias floats, then
    // ks·kc rows of pw floats, zero past nc (readable vector_width - 1 floats past its end). igemm(nc, mr)
    // is the tile for such a panel and mr rows: as many vector columns as the panel has, the lowest
    // height that holds the rows. Each output's sum is accumulated in the same order whatever the tile.
    using IgemmFn = void (*)(size_t mr, size_t nc, size_t kc, size_t ks, const float* const* a, const float* w,
                             float* c, size_t c_stride, Clamp clamp);
    // The same tile when its rows are evenly spaced (the pixels of a 1×1 conv, or those of one output row
    // whose taps are all inside the image, a GEMM's rows): row r of tap t is a + offsets[t] + r·a_step,
    // rows past mr repeat the last. No pointer list to build per tile, which cost a short-K conv 10% of
    // its time.
    using IgemmStridedFn = void (*)(size_t mr, size_t nc, size_t kc, size_t ks, const float* a, size_t a_step,
                                    const ptrdiff_t* offsets, const float* w, float* c, size_t c_stride, Clamp clamp);
    static constexpr size_t kMaxPanelVectors = 8;
    // Tiles come in kTileHeights heights, tile_heights[0] = gemm_mr down to tile_heights[last] = 1, and a
    // tile of mr rows runs on the lowest that holds them: a 7×7 image's 49 pixels are four tiles of 12
    // and one of 1, not five of 12 (18% of the multiply-adds wasted); a classifier's single row is a
    // 1-row tile, not 12 copies of it. A pointer list is laid out for gemm_mr rows whatever the height.
    static constexpr size_t kTileHeights = 3;
    uint32_t gemm_mr, gemm_nr;
    uint32_t tile_heights[kTileHeights];
    // Per height: [v - 1] panels of v whole vectors; narrow: a panel of nc < vector_width columns.
    IgemmFn igemm_by_vectors[kTileHeights][kMaxPanelVectors];
    IgemmFn igemm_narrow[kTileHeights];
    IgemmStridedFn igemm_strided_by_vectors[kTileHeights][kMaxPanelVectors];
    IgemmStridedFn igemm_strided_narrow[kTileHeights];
    size_t height_for(size_t mr) const {
        size_t h = kTileHeights - 1;
        while (h > 0 && tile_heights[h] < mr) --h;
        return h;
    }
    IgemmFn igemm(size_t nc, size_t mr) const {
        const size_t h = height_for(mr);
        return nc < vector_width ? igemm_narrow[h] : igemm_by_vectors[h][(nc + vector_width - 1) / vector_width - 1];
    }
    IgemmStridedFn igemm_strided(size_t nc, size_t mr) const {
        const size_t h = height_for(mr);
        return nc < vector_width ? igemm_strided_narrow[h]
                                 : igemm_strided_by_vectors[h][(nc + vector_width - 1) / vector_width - 1];
    }

    // Depthwise convolution of a run of `pixels` output pixels over `channels` (NHWC):
    //   out[p·channels + c] = clamp(bias[c] + Σ_{t<ks} in[t][p·in_step + c] · w[t][c])
    // `in` holds ks pointers, for the first pixel's taps; pixel p reads them advanced by p·in_step floats
    // (a tap in the padding points into a zero row long enough for the whole run). Packed `w`: per block
    // of bn ≤ dw_block channels, packed_width(bn) bias floats then ks rows of as many, zero past `channels`
    // (whole vectors: the inner loop loads weights unmasked).
    uint32_t dw_block;
    void (*dwconv)(size_t pixels, size_t channels, size_t ks, const float* const* in, size_t in_step, const float* w,
                   float* out, Clamp clamp);
    // The same at stride 1 and dilation 1 along the row, kw ≤ dwconv_s1_max_kw, kh ≤ 8: `rows` holds kh
    // pointers, each to the run's first input pixel of that kernel row (its leftmost tap; a row in the
    // padding points into a zero row of pixels + kw - 1 pixels). Each input vector is loaded once and
    // serves kw taps; the tap order, hence the bytes, are dwconv's.
    static constexpr size_t dwconv_s1_max_kw = 5, dwconv_s1_max_kh = 8;
    void (*dwconv_s1)(size_t pixels, size_t channels, size_t kh, size_t kw, const float* const* rows, const float* w,
                      float* out, Clamp clamp);

    // out[i] = clamp(a[i] + b[i]) and clamp(a[i] · b[i]) over n floats (out may equal a or b).
    void (*vadd)(size_t n, const float* a, const float* b, float* out, Clamp clamp);
    void (*vmul)(size_t n, const float* a, const float* b, float* out, Clamp clamp);
    // out[i] = clamp(a[i] op b[i mod m]) — a row of n = rows · m floats against one vector of m
    // (a per-channel bias or scale in NHWC, squeeze-excite's multiply).
    void (*vadd_rows)(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp clamp);
    void (*vmul_rows)(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp clamp);
    // The same for a - b and a / b (a box decode's offsets and scales).
    void (*vsub_rows)(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp clamp);
    void (*vdiv_rows)(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp clamp);
    // PRelu: out[i] = clamp(a[i] < 0 ? a[i] · b[i mod m] : a[i]), as max(a, 0) + min(a, 0) · b.
    void (*vprelu_rows)(size_t rows, size_t m, const float* a, const float* b, float* out, Clamp clamp);
    // out[i] = a[i] · s[i mod m] + t[i mod m] (a multiply, then an add: BatchNormalization's per-channel
    // scale and shift, as the reference computes them).
    void (*vaffine_rows)(size_t rows, size_t m, const float* a, const float* s, const float* t, float* out);
    // out[c] = max over t of in[t][c] (a max-pool window of ks taps over `channels`, NHWC).
    void (*vmax_taps)(size_t channels, size_t ks, const float* const* in, float* out);
    // out[c] = (Σ_{t<ks} in[t][c]) / divisor, the taps summed in order (an average-pool window): the
    // reference kernel's order and its division, so the result is the reference's bit for bit.
    void (*vavg_taps)(size_t channels, size_t ks, const float* const* in, float* out, float divisor);
    // Global pools over `rows` rows of m floats, `stride` floats apart (one NHWC image's pixels, a block
    // of their channels), rows in order: out[c] = (Σ_r x[r·stride + c]) / divisor, and
    // out[c] = max_r x[r·stride + c] ignoring NaN (fmax, as the reference), -infinity for no rows.
    void (*vsum_rows)(size_t rows, size_t m, size_t stride, const float* x, float* out, float divisor);
    void (*vmax_rows)(size_t rows, size_t m, size_t stride, const float* x, float* out);

    // Standalone activations (a node that was not fused into its producer):
    //   vclamp         min(max(x, clamp.min), clamp.max) (Relu, Clip; NaN stays NaN)
    //   vleaky_relu    x ≥ 0 ? x : alpha·x
    //   vhard_sigmoid  clamp(alpha·x + beta, 0, 1)
    //   vhard_swish    x · clamp(x / 6 + 1/2, 0, 1)
    //   vsigmoid       1 / (1 + e^-x)
    //   vtanh          expm1(2x) / (expm1(2x) + 2)
    //   vswish         x · vsigmoid(x) (SiLU)
    //   vexp           e^x, for x in [-87, 88] only (callers take the rest elsewhere)
    //   vsquare        x · x (Pow(x, 2))
    // vsigmoid, vtanh, vswish and vexp use a polynomial e^x (Cephes' expf: a few ulp over the range that
    // matters; below e^-87 it stays at 2^-126 instead of going subnormal).
    UnaryFn vclamp, vleaky_relu, vhard_sigmoid, vhard_swish, vsigmoid, vtanh, vswish, vexp, vsquare;
    // Softmax of each of `rows` rows of m floats: e^(x - max) / Σ e^(x - max).
    void (*vsoftmax_rows)(size_t rows, size_t m, const float* x, float* out);

    // ---- int8 (QLinearConv, QLinearMatMul) ----
    // Exact integer sums on operands widened to int16 with their zero points already subtracted (the
    // packers do it: weights at load, activations per tile), so no zero-point compensation term and no
    // 16-bit saturation: |x - zx|, |w - zw| ≤ 255, a product ≤ 65025, a pair of them fits int32
    // (vpmaddwd, smlal). Int32 sums wrap as the reference's (its 64-bit sum is wrapped to int32).
    //
    // Integer GEMM tile: mr ≤ qgemm_mr rows (output channels) × nc ≤ qgemm_nr columns (pixels),
    //   acc[r][n] = bias[r] + Σ_{k<K} w[k][r] · x[k][n]
    // then requantized as ops/quant.hpp's requantize() (QuantOut), stored as bytes y[r·y_stride + n].
    // K is given as kgroups groups of qgemm_kgroup consecutive k (K padded with zeros to whole groups).
    // Packed `w`: kgroups × qgemm_mr × kgroup int16 (row-major in that order; rows past mr are zero);
    // packed `x`: kgroups × qgemm_nr × kgroup int16 (columns past nc are zero).
    uint32_t qgemm_mr, qgemm_nr, qgemm_kgroup;
    void (*qgemm)(size_t mr, size_t nc, size_t kgroups, const int16_t* w, const int16_t* x, const int32_t* bias,
                  const float* multiplier, const QuantOut& out, uint8_t* y, size_t y_stride);
    // One output row of a depthwise int8 convolution (one channel, NCHW), n outputs:
    //   acc[i] = bias + Σ_{t<ks} w[t] · taps[t][i·step], requantized and stored as y[i]
    // `taps` holds ks pointers into int16 input rows with the zero point subtracted (padding is 0), each
    // readable qdwconv_overread int16 past its last tap (n - 1)·step: vector loads of the last outputs
    // need no tail loop (the lanes past n are never stored).
    static constexpr size_t qdwconv_overread = 32;
    void (*qdwconv_row)(size_t n, size_t ks, const int16_t* const* taps, size_t step, const int16_t* w, int32_t bias,
                        float multiplier, const QuantOut& out, uint8_t* y);
};

const Microkernels& microkernels_scalar();
// The ISA files' getters (nullptr where this build lacks the family). ISA code: only
// dispatch::pick_table and usable_tables call them, after kes_cpu_has() (kes/cpu_dispatch.hpp).
const Microkernels* microkernels_avx2();    // AVX2 + FMA
const Microkernels* microkernels_avx512();  // AVX-512 F (+ AVX2, FMA)
const Microkernels* microkernels_neon();    // armv8.0 ASIMD

// The fastest table this CPU runs (decided once, from kes_cpu_features()).
const Microkernels& microkernels_active();
// Every table usable on this CPU, scalar first: for tests and benchmarks (select_kernel takes one).
std::vector<const Microkernels*> microkernels_available();

}  // namespace kernels
}  // namespace kes
