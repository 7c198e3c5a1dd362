// conv_nhwc.cpp — fast 2-D convolution in NHWC: indirect GEMM for every group count, a direct
// depthwise kernel, both over the microkernel table (microkernels.hpp).
//
// Choices:
// - Indirect GEMM (XNNPACK's IGEMM) instead of im2col: each output pixel's row of the virtual im2col
//   matrix is a list of pointers, one per kernel tap, to the input pixel's channels (or to a zero row
//   in the padding). A 1×1 conv, a 3×3 conv and a strided or dilated one are the same code and no
//   input is copied. The pointers of a few tiles live in the worker's scratch slot (tiny: ≤ 16 KiB).
// - Weights are packed at load into panels of gemm_nr output channels: bias, then for every tap and
//   input channel gemm_nr weights; a layer's last panel narrower (Microkernels::panel_width). The zero
//   row sits at the end of the packed region.
// - Work units are (image, group, a chunk of pixel tiles); a worker packs pointers for its chunk once
//   and runs every channel panel over it, so the chunk's input stays in cache while the panels stream.
// - Depthwise (group = C = M): per output pixel, one dwconv call over all channels with ks pointers.
// - Fused Relu / Relu6 / Clip are a clamp in registers; other fused activations (the table's vectorised
//   unary functions: fused_activation) run on the rows a unit wrote, by the same worker, right after
//   (so results do not depend on the thread count).
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "microkernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

// Per worker: the pointers of a chunk of tiles (at least one tile's). Small, because the work arena
// reserves a slot for each of KES_MODEL_MAX_THREADS workers.
constexpr size_t kScratchPerSlot = 4 * 1024;
// Tiles per chunk at most: a chunk's row-merged tiles are one 64-bit mask.
constexpr size_t kMaxChunk = 64;

struct ConvGeometry {
    int64_t n = 1, ih = 1, iw = 1, c = 1;  // input, NHWC
    int64_t oh = 1, ow = 1, m = 1;         // output
    Window wh, ww;
    int64_t group = 1;
    int64_t cg() const { return c / group; }
    int64_t mg() const { return m / group; }
    int64_t taps() const { return wh.kernel * ww.kernel; }
    int64_t pixels() const { return oh * ow; }
};

class ConvNhwcKernel final : public Kernel {
public:
    ConvNhwcKernel(const ConvGeometry& g, const float* weights, const float* bias, const Activation& act, bool has_sum,
                   const Microkernels& mk)
        : g_(g), weights_(weights), bias_(bias), mk_(mk), has_sum_(has_sum) {
        after_ = fused_activation(act, mk);
        clamp_ = after_.clamp;
        // A fused residual (input 3) is added after the sums and before the activation: the
        // microkernels then write the plain sums and the clamp moves to the add (add_residual).
        if (has_sum_) std::swap(clamp_, sum_clamp_);
        depthwise_ = g.group == g.c && g.m == g.c;
        name_ = std::string(depthwise_ ? "dwconv-" : "igemm-") + mk.name;
        // Tiles per unit: as many as a scratch slot holds pointers for, but enough units to share out.
        const size_t mr = mk.gemm_mr, ks = static_cast<size_t>(g.taps());
        tiles_ = (static_cast<size_t>(g.pixels()) + mr - 1) / mr;
        const size_t tile_bytes = ks * mr * sizeof(float*);
        chunk_ = std::max<size_t>(1, kScratchPerSlot / tile_bytes);
        chunk_ = std::min({chunk_, std::max<size_t>(1, tiles_ / 8), kMaxChunk});
        chunks_ = (tiles_ + chunk_ - 1) / chunk_;
        units_ = depthwise_ ? static_cast<size_t>(g.n * g.oh) : static_cast<size_t>(g.n * g.group) * chunks_;
        slot_bytes_ = slot_stride(depthwise_ ? ks * sizeof(float*) : chunk_ * tile_bytes);
        // Tap offsets (rows, columns) in kernel order; a 1x1, stride-1, unpadded conv reads pixel p itself.
        for (int64_t t = 0; t < g.taps(); ++t) {
            tap_dy_.push_back((t / g.ww.kernel) * g.wh.dilation);
            tap_dx_.push_back((t % g.ww.kernel) * g.ww.dilation);
        }
        for (int64_t t = 0; t < g.taps(); ++t) tap_offset_.push_back((tap_dy_[t] * g.iw + tap_dx_[t]) * g.c);
        reach_y_ = (g.wh.kernel - 1) * g.wh.dilation, reach_x_ = (g.ww.kernel - 1) * g.ww.dilation;
        // The output columns whose taps all fall inside the input's width (run_depthwise's one call,
        // igemm's row-merged tiles).
        const int64_t sw = g.ww.stride, pw = g.ww.pad_begin;
        ox_lo_ = std::min(g.ow, (pw + sw - 1) / sw);
        // The last such column is floor((iw - 1 + pw - reach_x) / sw); a kernel wider than the input plus
        // its left padding has none (C++'s division truncates a negative numerator towards zero: -1 / 2
        // would make column 0 interior, and its taps read past the row).
        const int64_t last_reach = g.iw - 1 + pw - reach_x_;
        ox_hi_ = last_reach < 0 ? ox_lo_ : std::max(ox_lo_, std::min(g.ow, last_reach / sw + 1));
        merge_rows_ = !depthwise_ && g.group == 1 && g.ww.kernel > 1 && g.ww.dilation == 1;
        dw_sliding_ = sw == 1 && g.ww.dilation == 1 &&
                      static_cast<size_t>(g.ww.kernel) <= Microkernels::dwconv_s1_max_kw &&
                      static_cast<size_t>(g.wh.kernel) <= Microkernels::dwconv_s1_max_kh;
        pointwise_ = g.taps() == 1 && g.wh.stride == 1 && g.ww.stride == 1 && g.wh.pad_begin == 0 &&
                     g.ww.pad_begin == 0 && g.oh == g.ih && g.ow == g.iw;
        // igemm_strided's taps: one per kernel row over kw·C floats when rows merge, else every tap.
        if (merge_rows_)
            for (int64_t ky = 0; ky < g.wh.kernel; ++ky) strided_offsets_.push_back(ky * g.wh.dilation * g.iw * g.c);
        else
            strided_offsets_.assign(tap_offset_.begin(), tap_offset_.end());
    }

    const char* impl() const override { return name_.c_str(); }

    // The panels (or blocks), the zero row, then the zeros a narrow panel's tile reads past its end.
    size_t packed_bytes() const override {
        return (packed_floats() + zero_floats() + (depthwise_ ? 0 : mk_.panel_overread())) * sizeof(float);
    }

    void pack(void* dst) const override {
        float* out = static_cast<float*>(dst);
        std::memset(out, 0, packed_bytes());
        const int64_t ks = g_.taps();
        // The filter is OHWI: [M, KH, KW, C/group].
        if (depthwise_) {
            const int64_t b = mk_.dw_block;
            for (int64_t c0 = 0; c0 < g_.c; c0 += b) {
                const int64_t cn = std::min(b, g_.c - c0);
                const int64_t bw = static_cast<int64_t>(mk_.packed_width(static_cast<size_t>(cn)));
                for (int64_t j = 0; j < cn; ++j) out[j] = bias_ ? bias_[c0 + j] : 0.0f;
                out += bw;
                for (int64_t t = 0; t < ks; ++t, out += bw)
                    for (int64_t j = 0; j < cn; ++j) out[j] = weights_[(c0 + j) * ks + t];
            }
            return;
        }
        const int64_t nr = mk_.gemm_nr, cg = g_.cg(), mg = g_.mg();
        for (int64_t grp = 0; grp < g_.group; ++grp)
            for (int64_t n0 = 0; n0 < mg; n0 += nr) {
                const int64_t nc = std::min(nr, mg - n0);
                const int64_t pw = static_cast<int64_t>(mk_.panel_width(static_cast<size_t>(nc)));
                const int64_t m0 = grp * mg + n0;
                for (int64_t j = 0; j < nc; ++j) out[j] = bias_ ? bias_[m0 + j] : 0.0f;
                out += pw;
                for (int64_t t = 0; t < ks; ++t)
                    for (int64_t k = 0; k < cg; ++k, out += pw)
                        for (int64_t j = 0; j < nc; ++j) out[j] = weights_[((m0 + j) * ks + t) * cg + k];
            }
    }

    void bind_packed(const void* packed) override { packed_ = static_cast<const float*>(packed); }

    // One slot per worker, and never more workers than units.
    size_t scratch_bytes(uint32_t threads) const override {
        return (depthwise_ ? dw_zero_bytes() : 0) + std::min<size_t>(threads, units_) * slot_bytes_;
    }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const float*>(inputs[0]);
        auto* y = static_cast<float*>(outputs[0]);
        const auto* sum = has_sum_ ? static_cast<const float*>(inputs[3]) : nullptr;
        if (depthwise_)
            run_depthwise(rc, x, sum, y);
        else
            run_igemm(rc, x, sum, y);
    }

private:
    // Floats per packed column: its bias and taps × C/group weights.
    size_t column_floats() const { return 1 + static_cast<size_t>(g_.taps() * g_.cg()); }
    // A full panel's floats; panel p of a group starts p full panels in (only the last may be narrower).
    size_t panel_floats() const { return static_cast<size_t>(mk_.gemm_nr) * column_floats(); }
    size_t panels_per_group() const { return (static_cast<size_t>(g_.mg()) + mk_.gemm_nr - 1) / mk_.gemm_nr; }
    size_t group_floats() const { return mk_.panel_columns(static_cast<size_t>(g_.mg())) * column_floats(); }
    size_t packed_floats() const {
        if (depthwise_) return mk_.block_columns(static_cast<size_t>(g_.c)) * (1 + static_cast<size_t>(g_.taps()));
        return static_cast<size_t>(g_.group) * group_floats();
    }
    // The zero row: one tap's channels, or a merged kernel row's (kw · C).
    size_t zero_floats() const { return static_cast<size_t>(merge_rows_ ? g_.ww.kernel * g_.c : g_.c); }
    const float* zero_row() const { return packed_ + packed_floats(); }

    // The igemm pointers of one tile of output pixels (of one image and group: `image` is its first
    // channel), [tap][row], rows past the last pixel repeating it. Returns true when the tile was
    // row-merged: with one group and dilation 1 along x, a kernel row's kw taps of a pixel whose taps are
    // all inside the row are kw·C consecutive floats (NHWC), so the tile takes one pointer per kernel row
    // over kw·C floats (ks = kh, kc = kw·C) instead of kw pointers over C: the same products summed in
    // the same order (tap by tap, channel by channel), so the same bytes, with a kw-times longer inner
    // loop. It is what makes a first layer (3 input channels) fast. A kernel row in the padding points
    // at the zero row, which is kw·C long then.
    bool fill_tile(const float* image, size_t tile, const float** a) const {
        const size_t mr = mk_.gemm_mr, ks = static_cast<size_t>(g_.taps());
        const size_t p0 = tile * mr, rows = std::min(mr, static_cast<size_t>(g_.pixels()) - p0);
        const int64_t ow = g_.ow;
        int64_t oy = static_cast<int64_t>(p0) / ow, ox = static_cast<int64_t>(p0) % ow;
        bool merge = merge_rows_;
        for (int64_t i = 0, x = ox; merge && i < static_cast<int64_t>(rows); ++i, x = x + 1 == ow ? 0 : x + 1)
            merge = x >= ox_lo_ && x < ox_hi_;
        const size_t taps = merge ? static_cast<size_t>(g_.wh.kernel) : ks;
        const float* zero = zero_row();
        for (size_t r = 0; r < mr; ++r) {
            if (r >= rows) {  // past the last pixel: repeat the previous row's pointers
                for (size_t t = 0; t < taps; ++t) a[t * mr + r] = a[t * mr + r - 1];
                continue;
            }
            if (pointwise_) {
                a[r] = image + (oy * ow + ox) * g_.c;
            } else {
                const int64_t iy0 = oy * g_.wh.stride - g_.wh.pad_begin, ix0 = ox * g_.ww.stride - g_.ww.pad_begin;
                if (merge) {
                    for (size_t ky = 0; ky < taps; ++ky) {
                        const int64_t iy = iy0 + static_cast<int64_t>(ky) * g_.wh.dilation;
                        a[ky * mr + r] = iy < 0 || iy >= g_.ih ? zero : image + (iy * g_.iw + ix0) * g_.c;
                    }
                } else if (iy0 >= 0 && iy0 + reach_y_ < g_.ih && ix0 >= 0 && ix0 + reach_x_ < g_.iw) {
                    // Inside the image: every tap is a fixed step from the window's corner.
                    const float* corner = image + (iy0 * g_.iw + ix0) * g_.c;
                    for (size_t t = 0; t < ks; ++t) a[t * mr + r] = corner + tap_offset_[t];
                } else {
                    for (size_t t = 0; t < ks; ++t) {
                        const int64_t iy = iy0 + tap_dy_[t], ix = ix0 + tap_dx_[t];
                        a[t * mr + r] =
                            iy < 0 || iy >= g_.ih || ix < 0 || ix >= g_.iw ? zero : image + (iy * g_.iw + ix) * g_.c;
                    }
                }
            }
            if (++ox == ow) ox = 0, ++oy;
        }
        return merge;
    }

    // The first row of tile `tile` when its rows are evenly spaced for igemm_strided, else null: a 1×1
    // conv's pixels (consecutive), or pixels of one output row whose taps all fall inside the image (a
    // step of stride·C apart, taps at strided_offsets_). Edge tiles and tiles spanning two output rows
    // take fill_tile's pointers.
    const float* strided_tile(const float* image, size_t tile) const {
        const size_t mr = mk_.gemm_mr, p0 = tile * mr;
        if (pointwise_) return image + static_cast<int64_t>(p0) * g_.c;
        const size_t rows = std::min(mr, static_cast<size_t>(g_.pixels()) - p0);
        const int64_t oy = static_cast<int64_t>(p0) / g_.ow, ox = static_cast<int64_t>(p0) % g_.ow;
        const int64_t ox_last = ox + static_cast<int64_t>(rows) - 1;
        if (ox < ox_lo_ || ox_last >= ox_hi_) return nullptr;  // also when the tile runs into the next row
        const int64_t iy0 = oy * g_.wh.stride - g_.wh.pad_begin, ix0 = ox * g_.ww.stride - g_.ww.pad_begin;
        if (iy0 < 0 || iy0 + reach_y_ >= g_.ih) return nullptr;
        return image + (iy0 * g_.iw + ix0) * g_.c;
    }

    // y = clamp(y + sum) over `count` pixels of the output from pixel p0 (the unit's rows, still in cache).
    // The memory plan never puts y on the residual's bytes (op.hpp is_inplace_input), so the sums the
    // microkernels wrote did not overwrite it.
    void add_residual(const float* sum, float* y, size_t p0, size_t count) const {
        const size_t m = static_cast<size_t>(g_.m);
        mk_.vadd(count * m, y + p0 * m, sum + p0 * m, y + p0 * m, sum_clamp_);
    }

    void run_igemm(const RunContext& rc, const float* x, const float* sum, float* y) const {
        const size_t mr = mk_.gemm_mr, nr = mk_.gemm_nr, ks = static_cast<size_t>(g_.taps());
        const size_t pixels = static_cast<size_t>(g_.pixels());
        const size_t tiles = tiles_, chunk = chunk_, chunks = chunks_;
        const size_t groups = static_cast<size_t>(g_.group), mg = static_cast<size_t>(g_.mg());
        const size_t cg = static_cast<size_t>(g_.cg()), m = static_cast<size_t>(g_.m);
        parallel_units(rc, units_, [&](uint64_t unit, uint32_t slot) {
            const size_t ci = unit % chunks, grp = (unit / chunks) % groups, n = unit / (chunks * groups);
            const float** ind = reinterpret_cast<const float**>(rc.scratch + slot * slot_bytes_);
            const size_t tile0 = ci * chunk, tile_end = std::min(tiles, tile0 + chunk);
            // Pointers for every tile of the chunk: [tile][tap][row]; rows past the last pixel repeat it.
            const float* image = x + static_cast<int64_t>(n) * g_.ih * g_.iw * g_.c + static_cast<int64_t>(grp * cg);
            // bit i: tile tile0 + i is evenly spaced (its first row's pointer is all it stores), or was
            // row-merged by fill_tile (one pointer per kernel row).
            uint64_t strided = 0, merged = 0;
            for (size_t tile = tile0; tile < tile_end; ++tile) {
                const float** a = ind + (tile - tile0) * ks * mr;
                const uint64_t bit = uint64_t{1} << (tile - tile0);
                if (const float* first = strided_tile(image, tile)) {
                    a[0] = first, strided |= bit;
                } else if (fill_tile(image, tile, a)) {
                    merged |= bit;
                }
            }
            const float* panels = packed_ + grp * group_floats();
            float* yn = y + n * pixels * m + grp * mg;
            const size_t kh = static_cast<size_t>(g_.wh.kernel), row_k = static_cast<size_t>(g_.ww.kernel) * cg;
            const size_t strided_kc = merge_rows_ ? row_k : cg, strided_ks = strided_offsets_.size();
            const size_t a_step = static_cast<size_t>(g_.ww.stride * g_.c);
            for (size_t pb = 0; pb < panels_per_group(); ++pb) {
                const size_t nc = std::min(nr, mg - pb * nr);
                const float* panel = panels + pb * panel_floats();
                for (size_t tile = tile0; tile < tile_end; ++tile) {
                    const size_t rows = std::min(mr, pixels - tile * mr);
                    const float* const* a = ind + (tile - tile0) * ks * mr;
                    float* out = yn + tile * mr * m + pb * nr;
                    if ((strided >> (tile - tile0)) & 1) {
                        mk_.igemm_strided(nc, rows)(rows, nc, strided_kc, strided_ks, a[0], a_step,
                                                    strided_offsets_.data(), panel, out, m, clamp_);
                    } else {
                        const bool one_per_row = (merged >> (tile - tile0)) & 1;
                        mk_.igemm(nc, rows)(rows, nc, one_per_row ? row_k : cg, one_per_row ? kh : ks, a, panel, out, m,
                                            clamp_);
                    }
                }
            }
            const size_t p0 = tile0 * mr, p1 = std::min(pixels, tile_end * mr);
            // A residual spans all groups of a pixel: only ungrouped convs take one (select_conv).
            if (sum) add_residual(sum + n * pixels * m, y + n * pixels * m, p0, p1 - p0);
            // One call over the chunk's pixels when they are contiguous (one group): a per-pixel call on a
            // 1-channel output (a segmentation head's Sigmoid) cost 25 ns a pixel in call and tail overhead.
            if (after_.after && groups == 1)
                after_.apply_after(yn + p0 * m, (p1 - p0) * m);
            else if (after_.after)
                for (size_t q = p0; q < p1; ++q) after_.apply_after(yn + q * m, mg);
        });
    }

    // The zero row the depthwise kernel's padded taps read: long enough for a whole run of pixels.
    // A zero row for taps in the padding: a whole run's reads, the sliding window's kernel width too.
    size_t dw_zero_floats() const { return static_cast<size_t>((g_.ow * g_.ww.stride + reach_x_ + 1) * g_.c); }
    size_t dw_zero_bytes() const { return (dw_zero_floats() * sizeof(float) + 127) / 128 * 128; }

    // One output row per unit (dw_row), then the row's residual and the activations not fused into it.
    void run_depthwise(const RunContext& rc, const float* x, const float* sum, float* y) const {
        const size_t c = static_cast<size_t>(g_.c), ow = static_cast<size_t>(g_.ow);
        const size_t rows = static_cast<size_t>(g_.n * g_.oh);
        const float* zero = reinterpret_cast<const float*>(rc.scratch);
        std::memset(rc.scratch, 0, dw_zero_floats() * sizeof(float));
        parallel_units(rc, rows, [&](uint64_t row, uint32_t slot) {
            const float** ptrs = reinterpret_cast<const float**>(rc.scratch + dw_zero_bytes() + slot * slot_bytes_);
            float* out = y + row * ow * c;
            dw_row(x, static_cast<int64_t>(row) / g_.oh, static_cast<int64_t>(row) % g_.oh, zero, ptrs, out);
            if (sum) add_residual(sum, y, row * ow, ow);
            after_.apply_after(out, ow * c);
        });
    }

    // Depthwise output row oy of image n into `out` (ow × c floats), clamp included: the pixels whose
    // taps all fall inside the row's width run as one call (pointers advance by stride·C); the few at
    // the edges run one by one with their own pointers. `zero` is the zeroed dw_zero_floats() row,
    // `ptrs` room for taps() pointers. The fused dw→pw kernel computes its rows here too, so both give
    // the same bytes.
    void dw_row(const float* x, int64_t n, int64_t oy, const float* zero, const float** ptrs, float* out) const {
        const size_t ks = static_cast<size_t>(g_.taps()), c = static_cast<size_t>(g_.c);
        const int64_t ow = g_.ow, sw = g_.ww.stride, pw = g_.ww.pad_begin;
        const int64_t ox_lo = ox_lo_, ox_hi = ox_hi_;
        // Input row ky of the kernel window at pixel 0, or null in the padding.
        auto row = [&](int64_t ky) -> const float* {
            const int64_t iy = oy * g_.wh.stride - g_.wh.pad_begin + ky * g_.wh.dilation;
            return iy < 0 || iy >= g_.ih ? nullptr : x + (n * g_.ih + iy) * g_.iw * g_.c;
        };
        // An edge pixel: its own tap pointers, the ones in the padding at the zero row.
        auto one = [&](int64_t ox) {
            const int64_t ix0 = ox * sw - pw;
            size_t t = 0;
            for (int64_t ky = 0; ky < g_.wh.kernel; ++ky) {
                const float* r = row(ky);
                for (int64_t kx = 0; kx < g_.ww.kernel; ++kx, ++t) {
                    const int64_t ix = ix0 + kx * g_.ww.dilation;
                    ptrs[t] = r && ix >= 0 && ix < g_.iw ? r + ix * g_.c : zero;
                }
            }
            mk_.dwconv(1, c, ks, ptrs, 0, packed_, out + ox * g_.c, clamp_);
        };
        for (int64_t ox = 0; ox < ox_lo; ++ox) one(ox);
        if (ox_hi > ox_lo) {
            // The interior run's first pixel's leftmost tap in kernel row ky, or null in the padding.
            auto run_row = [&](int64_t ky) -> const float* {
                const float* r = row(ky);
                return r ? r + (ox_lo * sw - pw) * g_.c : nullptr;
            };
            const size_t run = static_cast<size_t>(ox_hi - ox_lo);
            if (dw_sliding_) {
                // Stride 1 along the row: one pointer per kernel row, the window slides (dwconv_s1).
                for (int64_t ky = 0; ky < g_.wh.kernel; ++ky) {
                    const float* r = run_row(ky);
                    ptrs[ky] = r ? r : zero;
                }
                mk_.dwconv_s1(run, c, static_cast<size_t>(g_.wh.kernel), static_cast<size_t>(g_.ww.kernel), ptrs,
                              packed_, out + ox_lo * g_.c, clamp_);
            } else {
                for (size_t t = 0; t < ks; ++t) {
                    const float* r = run_row(static_cast<int64_t>(t) / g_.ww.kernel);
                    const int64_t kx = static_cast<int64_t>(t) % g_.ww.kernel;
                    ptrs[t] = r ? r + kx * g_.ww.dilation * g_.c : zero;
                }
                mk_.dwconv(run, c, ks, ptrs, static_cast<size_t>(sw) * c, packed_, out + ox_lo * g_.c, clamp_);
            }
        }
        for (int64_t ox = ox_hi; ox < ow; ++ox) one(ox);
    }

    friend class DwPwKernel;
    friend std::unique_ptr<Kernel> kes::kernels::fuse_depthwise_pointwise(const Kernel& dw, const Kernel& pw);

    ConvGeometry g_;
    const float* weights_;  // the raw OHWI filter and bias, read by pack() only
    const float* bias_;
    const Microkernels& mk_;
    Clamp clamp_{};
    bool has_sum_ = false;
    Clamp sum_clamp_{-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
    FusedActivation after_;  // the tiles apply clamp_ (a residual moves it), not after_.clamp
    bool depthwise_ = false;
    std::string name_;
    const float* packed_ = nullptr;
    size_t tiles_ = 0, chunk_ = 1, chunks_ = 1, units_ = 1, slot_bytes_ = 0;
    std::vector<int64_t> tap_dy_, tap_dx_;
    bool pointwise_ = false;
    std::vector<int64_t> tap_offset_;         // (dy · W + dx) · C per tap: the pointer step of an interior pixel
    std::vector<ptrdiff_t> strided_offsets_;  // igemm_strided's tap offsets (strided_tile)
    int64_t reach_y_ = 0, reach_x_ = 0;       // the kernel's extent minus one, per axis
    int64_t ox_lo_ = 0, ox_hi_ = 0;           // [lo, hi) are the output columns whose taps are all inside the row
    bool merge_rows_ = false;                 // igemm: tiles of interior columns take one pointer per kernel row
    bool dw_sliding_ = false;                 // depthwise: the interior run goes to dwconv_s1
};

// A depthwise conv feeding a 1×1, stride-1 conv (fuse_depthwise_pointwise): per unit, a band of a few
// output rows of one image. The band's depthwise rows go into the worker's scratch tile (dw_row, the
// unfused kernel's own code), then the pointwise igemm reads the tile while it is still in L1 and
// writes the band's final rows; the intermediate tensor is never written to memory. Same arithmetic as
// the two kernels apart: each depthwise row is computed by the same calls, and the igemm accumulates each
// output in the same order whatever its tile (microkernels.hpp), so the bytes are the same.
class DwPwKernel final : public Kernel {
public:
    DwPwKernel(const ConvNhwcKernel& dw, const ConvNhwcKernel& pw)
        : dw_(dw), pw_(pw), name_(std::string("dwconv+igemm-") + dw.mk_.name) {
        const ConvGeometry& g = dw.g_;
        const size_t row_bytes = static_cast<size_t>(g.ow * g.c) * sizeof(float);
        // Rows per band: a tile of about kTileBytes (L1-sized, so the igemm's panels all read it from
        // L1), and at least 4 bands per image while rows allow, so small layers still share out.
        rows_ = std::max<size_t>(1, kTileBytes / row_bytes);
        rows_ = std::min(rows_, std::max<size_t>(1, (static_cast<size_t>(g.oh) + 3) / 4));
        bands_ = (static_cast<size_t>(g.oh) + rows_ - 1) / rows_;
        units_ = static_cast<size_t>(g.n) * bands_;
        ptr_bytes_ = slot_stride(static_cast<size_t>(g.taps()) * sizeof(float*));
        slot_bytes_ = ptr_bytes_ + slot_stride(rows_ * row_bytes);
    }

    const char* impl() const override { return name_.c_str(); }
    // The weights stay the two kernels' own packed slices (bound to them before this runs).
    size_t scratch_bytes(uint32_t threads) const override {
        return dw_.dw_zero_bytes() + std::min<size_t>(threads, units_) * slot_bytes_;
    }

    using Kernel::run;
    // inputs: the pointwise node's, with input 0 the depthwise node's input; outputs: the pointwise node's.
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const float*>(inputs[0]);
        const auto* sum = pw_.has_sum_ ? static_cast<const float*>(inputs[3]) : nullptr;
        auto* y = static_cast<float*>(outputs[0]);
        const ConvGeometry& g = dw_.g_;
        const Microkernels& mk = pw_.mk_;
        const size_t c = static_cast<size_t>(g.c), m = static_cast<size_t>(pw_.g_.m), ow = static_cast<size_t>(g.ow);
        const size_t oh = static_cast<size_t>(g.oh), pixels = oh * ow, mr = mk.gemm_mr, nr = mk.gemm_nr;
        const size_t panels = pw_.panels_per_group(), panel_floats = pw_.panel_floats();
        const float* zero = reinterpret_cast<const float*>(rc.scratch);
        std::memset(rc.scratch, 0, dw_.dw_zero_floats() * sizeof(float));
        parallel_units(rc, units_, [&](uint64_t unit, uint32_t slot) {
            const int64_t n = static_cast<int64_t>(unit / bands_);
            const size_t oy0 = (unit % bands_) * rows_, oy1 = std::min(oh, oy0 + rows_);
            uint8_t* base = rc.scratch + dw_.dw_zero_bytes() + slot * slot_bytes_;
            const float** ptrs = reinterpret_cast<const float**>(base);
            float* tile = reinterpret_cast<float*>(base + ptr_bytes_);
            for (size_t oy = oy0; oy < oy1; ++oy) {
                float* out = tile + (oy - oy0) * ow * c;
                dw_.dw_row(x, n, static_cast<int64_t>(oy), zero, ptrs, out);
                dw_.after_.apply_after(out, ow * c);
            }
            // The band's pixels in tiles of up to gemm_mr rows, evenly spaced in the tile (igemm_strided).
            const size_t p0 = oy0 * ow, p1 = oy1 * ow;
            float* yn = y + static_cast<size_t>(n) * pixels * m;
            const ptrdiff_t no_offset = 0;
            for (size_t pb = 0; pb < panels; ++pb) {
                const size_t nc = std::min(nr, m - pb * nr);
                for (size_t t0 = p0; t0 < p1; t0 += mr) {
                    const size_t rows = std::min(mr, p1 - t0);
                    mk.igemm_strided(nc, rows)(rows, nc, c, 1, tile + (t0 - p0) * c, c, &no_offset,
                                               pw_.packed_ + pb * panel_floats, yn + t0 * m + pb * nr, m, pw_.clamp_);
                }
            }
            if (sum) pw_.add_residual(sum + static_cast<size_t>(n) * pixels * m, yn, p0, p1 - p0);
            pw_.after_.apply_after(yn + p0 * m, (p1 - p0) * m);
        });
    }

private:
    static constexpr size_t kTileBytes = 16 * 1024;
    const ConvNhwcKernel& dw_;
    const ConvNhwcKernel& pw_;
    std::string name_;
    size_t rows_ = 1, bands_ = 1, units_ = 1, ptr_bytes_ = 0, slot_bytes_ = 0;
};

}  // namespace

FusedActivation fused_activation(const Activation& act, const Microkernels& mk) {
    using K = Activation::Kind;
    FusedActivation f;
    f.clamp = Clamp{-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
    f.params.clamp = f.clamp;
    f.params.alpha = act.alpha, f.params.beta = act.beta;
    switch (act.kind) {
        case K::None: break;
        case K::Relu: f.clamp.min = 0.0f; break;
        case K::Clip: f.clamp.min = act.min, f.clamp.max = act.max; break;
        case K::LeakyRelu: f.after = mk.vleaky_relu; break;
        case K::HardSwish: f.after = mk.vhard_swish; break;
        case K::HardSigmoid: f.after = mk.vhard_sigmoid; break;
        case K::Sigmoid: f.after = mk.vsigmoid; break;
        case K::Tanh: f.after = mk.vtanh; break;
        case K::Swish: f.after = mk.vswish; break;
    }
    return f;
}

std::unique_ptr<Kernel> select_conv(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                    const Microkernels& mk) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& w = *node.inputs[1];
    const TensorDesc* b = node.input(2);
    // 2-D, f32, NHWC, constant weights (packed at load): what the layout pass gives CNNs.
    if (x.rank() != 4 || x.dtype != KES_F32 || get_layout(node.attrs) != Layout::NHWC) return nullptr;
    if (!w.is_const() || (b && !b->is_const()) || !x.quant.empty()) return nullptr;
    ConvGeometry g;
    g.n = x.shape[0], g.ih = x.shape[1], g.iw = x.shape[2], g.c = x.shape[3];
    const Shape& ys = outputs[0].shape;
    g.oh = ys[1], g.ow = ys[2], g.m = ys[3];
    g.group = node.attrs.get_int("group", 1);
    const std::vector<Window> win =
        resolve_windows(node.attrs, Shape{g.ih, g.iw}, Shape{w.shape[1], w.shape[2]}, false);
    g.wh = win[0], g.ww = win[1];
    if (g.n * g.oh * g.ow == 0 || g.m == 0 || g.c == 0) return nullptr;
    // A slot holds at least one tile's pointers (taps × gemm_mr); past 32×32 taps the scratch would outgrow
    // any activation, and such kernels are not what CNNs run.
    if (g.taps() > 1024) return nullptr;
    // A fused residual (input 3, see the reference Conv) must be a plain f32 tensor over whole pixels.
    const TensorDesc* sum = node.input(3);
    if (sum && (sum->dtype != KES_F32 || !sum->quant.empty() || (g.group != 1 && g.group != g.c))) return nullptr;
    return std::make_unique<ConvNhwcKernel>(g, static_cast<const float*>(w.data),
                                            b ? static_cast<const float*>(b->data) : nullptr,
                                            Activation::from_attrs(node.attrs), sum != nullptr, mk);
}

std::unique_ptr<Kernel> fuse_depthwise_pointwise(const Kernel& dw, const Kernel& pw) {
    const auto* d = dynamic_cast<const ConvNhwcKernel*>(&dw);
    const auto* p = dynamic_cast<const ConvNhwcKernel*>(&pw);
    if (!d || !p || &d->mk_ != &p->mk_) return nullptr;
    // A depthwise conv without a residual of its own; a plain 1×1 (ungrouped, stride 1, unpadded) after it.
    if (!d->depthwise_ || d->has_sum_ || p->depthwise_ || !p->pointwise_ || p->g_.group != 1) return nullptr;
    const ConvGeometry &a = d->g_, &b = p->g_;
    if (a.n != b.n || a.oh != b.ih || a.ow != b.iw || a.m != b.c) return nullptr;
    return std::make_unique<DwPwKernel>(*d, *p);
}

}  // namespace kernels
}  // namespace kes
