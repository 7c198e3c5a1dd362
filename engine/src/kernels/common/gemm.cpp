// gemm.cpp — fast Gemm and MatMul with a constant B (classifier heads, embedding layers, MLPs), f32, on
// the table's igemm microkernel over evenly spaced rows (igemm_strided, ks = 1: a 1×1 convolution).
//
// Choices:
// - B is packed at load into the panels conv_nhwc.cpp packs for a 1×1 conv: gemm_nr bias floats, then
//   K rows of gemm_nr floats (the last panel narrower: Microkernels::panel_width). alpha is folded into the packed B
//   and beta·C into the bias, so a run is igemm calls only: y = beta·C + Σ_k a[k]·(alpha·b[k]). (The reference rounds
//   alpha·(Σ a·b) + beta·C instead: equal when alpha is 1 and C is absent, a rounding apart otherwise.)
// - C is covered when constant and a row vector or a scalar (a bias); a C with M rows keeps the
//   reference kernel, as do a runtime B and MatMuls whose B has batch dims of its own.
// - MatMul with batch dims on A only ([..., M, K] · [K, N]) is one Gemm of batch·M rows.
// - transA: A is [K, M]; each unit copies its tile's rows (gemm_mr × K floats) into its scratch slot.
// - Units are (row tile, run of column panels), fixed by the shapes: a wide, short product (M = 1, a
//   classifier) still splits over its panels, a tall one over its tiles.
// - A 1×1, stride-1, unpadded, ungrouped NHWC Conv whose images have fewer pixels than a tile (the
//   [N, 1, 1, C] embedding layers of face models) runs here too, as one Gemm over all the batch's
//   pixels: conv_nhwc.cpp tiles each image apart and would fill one row of each tile. Its packed
//   form is conv_nhwc.cpp's for the node (bias and weights panel by panel, then the zero row).
// - Fused Relu / Relu6 / Clip are the microkernel's clamp; other fused activations run on the block a
//   unit wrote, by the same worker, right after.
#include <algorithm>
#include <cstring>
#include <string>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

// A unit should carry at least this many multiply-adds, or the counter costs more than it shares.
constexpr size_t kMinUnitFlops = 32 * 1024;
// transA copies a tile of A per slot; past this the reference is the better use of the work arena.
constexpr size_t kMaxTransposedSlotBytes = 512 * 1024;

struct GemmSpec {
    int64_t m = 1, k = 1, n = 1;
    bool trans_a = false, trans_b = false;
    float alpha = 1.0f, beta = 1.0f;
    const float* b = nullptr;  // constant B: [K, N], or [N, K] when trans_b
    const float* c = nullptr;  // constant bias: c_count floats (1: scalar, n: row vector), or null
    int64_t c_count = 0;
    // Zero floats after the panels: a 1×1 conv's packed form ends with conv_nhwc.cpp's zero row, so
    // that both kernels of a node (one per image-size gear) read the same packed bytes.
    size_t tail_zeros = 0;
};

class GemmKernel final : public Kernel {
public:
    GemmKernel(const char* op, const GemmSpec& s, const Activation& act, const Microkernels& mk)
        : s_(s), mk_(mk), name_(std::string(op) + "-igemm-" + mk.name) {
        after_ = fused_activation(act, mk);
        const size_t mr = mk.gemm_mr, nr = mk.gemm_nr;
        tiles_ = (static_cast<size_t>(s.m) + mr - 1) / mr;
        panels_ = (static_cast<size_t>(s.n) + nr - 1) / nr;
        const size_t panel_flops = mr * nr * static_cast<size_t>(s.k);
        panels_per_unit_ = std::max<size_t>(1, std::min(panels_, kMinUnitFlops / std::max<size_t>(1, panel_flops)));
        // A short product (few tiles) splits its panels finer, to reach 2·kMaxThreads units if it can.
        const size_t want = 2 * kMaxThreads;
        if (tiles_ * ((panels_ + panels_per_unit_ - 1) / panels_per_unit_) < want)
            panels_per_unit_ = std::max<size_t>(1, panels_ * tiles_ / want);
        panel_runs_ = (panels_ + panels_per_unit_ - 1) / panels_per_unit_;
        slot_bytes_ = s.trans_a ? slot_stride(mr * static_cast<size_t>(s.k) * sizeof(float)) : 0;
    }

    const char* impl() const override { return name_.c_str(); }
    size_t packed_bytes() const override {
        const size_t n = static_cast<size_t>(s_.n), k = static_cast<size_t>(s_.k);
        return (mk_.panel_columns(n) * (1 + k) + s_.tail_zeros + mk_.panel_overread()) * sizeof(float);
    }

    void pack(void* dst) const override {
        float* out = static_cast<float*>(dst);
        std::memset(out, 0, packed_bytes());
        const int64_t nr = mk_.gemm_nr, k = s_.k, n = s_.n;
        for (int64_t n0 = 0; n0 < n; n0 += nr) {
            const int64_t nc = std::min(nr, n - n0);
            const int64_t pw = static_cast<int64_t>(mk_.panel_width(static_cast<size_t>(nc)));  // nr but the last
            if (s_.c)
                for (int64_t j = 0; j < nc; ++j) out[j] = s_.beta * s_.c[s_.c_count == 1 ? 0 : n0 + j];
            for (int64_t kk = 0; kk < k; ++kk)
                for (int64_t j = 0; j < nc; ++j)
                    out[pw + kk * pw + j] = s_.alpha * s_.b[s_.trans_b ? (n0 + j) * k + kk : kk * n + n0 + j];
            out += pw * (1 + k);
        }
    }

    void bind_packed(const void* packed) override { packed_ = static_cast<const float*>(packed); }

    size_t scratch_bytes(uint32_t threads) const override {
        return std::min<size_t>(threads, tiles_ * panel_runs_) * slot_bytes_;
    }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* a = static_cast<const float*>(inputs[0]);
        auto* y = static_cast<float*>(outputs[0]);
        const size_t mr = mk_.gemm_mr, nr = mk_.gemm_nr;
        const size_t m = static_cast<size_t>(s_.m), k = static_cast<size_t>(s_.k), n = static_cast<size_t>(s_.n);
        parallel_units(rc, tiles_ * panel_runs_, [&](uint64_t unit, uint32_t slot) {
            const size_t tile = unit / panel_runs_, run = unit % panel_runs_;
            const size_t r0 = tile * mr, rows = std::min(mr, m - r0);
            // The tile's rows, k floats apart: A's, or for transA the gathered columns of A.
            const float* rows_at = a + r0 * k;
            if (s_.trans_a) {
                // Row r of Aᵀ is column r0 + r of A: gathered once per unit, used by all its panels.
                float* t = reinterpret_cast<float*>(rc.scratch + slot * slot_bytes_);
                for (size_t kk = 0; kk < k; ++kk)
                    for (size_t r = 0; r < rows; ++r) t[r * k + kk] = a[kk * m + r0 + r];
                rows_at = t;
            }
            const ptrdiff_t no_offset = 0;
            const size_t p0 = run * panels_per_unit_, p1 = std::min(panels_, p0 + panels_per_unit_);
            for (size_t p = p0; p < p1; ++p) {
                const size_t nc = std::min(nr, n - p * nr);
                mk_.igemm_strided(nc, rows)(rows, nc, k, 1, rows_at, k, &no_offset, packed_ + p * panel_floats(),
                                            y + r0 * n + p * nr, n, after_.clamp);
            }
            if (after_.after) {
                const size_t c0 = p0 * nr, c1 = std::min(n, p1 * nr);
                for (size_t r = 0; r < rows; ++r) after_.apply_after(y + (r0 + r) * n + c0, c1 - c0);
            }
        });
    }

private:
    // A full panel's floats: panel p starts p of them in (only the last may be narrower).
    size_t panel_floats() const { return static_cast<size_t>(mk_.gemm_nr) * (1 + static_cast<size_t>(s_.k)); }

    GemmSpec s_;
    const Microkernels& mk_;
    std::string name_;
    FusedActivation after_;
    const float* packed_ = nullptr;
    size_t tiles_ = 1, panels_ = 1, panels_per_unit_ = 1, panel_runs_ = 1, slot_bytes_ = 0;
};

bool plain_f32(const TensorDesc& t) {
    return t.dtype == KES_F32 && t.quant.empty();
}

std::unique_ptr<Kernel> make_gemm(const char* op, const GemmSpec& s, const NodeDesc& node, const Microkernels& mk) {
    if (s.m <= 0 || s.n <= 0 || s.k <= 0) return nullptr;
    if (s.trans_a && mk.gemm_mr * static_cast<size_t>(s.k) * sizeof(float) > kMaxTransposedSlotBytes) return nullptr;
    return std::make_unique<GemmKernel>(op, s, Activation::from_attrs(node.attrs), mk);
}

}  // namespace

std::unique_ptr<Kernel> select_pointwise_conv(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                              const Microkernels& mk) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& w = *node.inputs[1];
    const TensorDesc* b = node.input(2);
    if (x.rank() != 4 || !plain_f32(x) || get_layout(node.attrs) != Layout::NHWC) return nullptr;
    if (!w.is_const() || (b && !b->is_const()) || node.attrs.get_int("group", 1) != 1) return nullptr;
    if (w.shape[1] != 1 || w.shape[2] != 1 || node.input(3)) return nullptr;  // a fused residual: conv_nhwc's
    const std::vector<Window> win = resolve_windows(node.attrs, Shape{x.shape[1], x.shape[2]}, Shape{1, 1}, false);
    for (const Window& a : win)
        if (a.stride != 1 || a.pad_begin != 0 || a.pad_end != 0) return nullptr;
    const int64_t pixels = x.shape[1] * x.shape[2];
    if (pixels >= static_cast<int64_t>(mk.gemm_mr) || outputs[0].shape[3] != w.shape[0]) return nullptr;
    GemmSpec s;
    s.m = x.shape[0] * pixels, s.k = x.shape[3], s.n = w.shape[0];
    s.trans_b = true;  // OHWI [M, 1, 1, C] is Bᵀ
    s.b = static_cast<const float*>(w.data);
    s.c = b ? static_cast<const float*>(b->data) : nullptr;
    s.c_count = b ? s.n : 0;
    s.tail_zeros = static_cast<size_t>(s.k);
    return make_gemm("conv1x1", s, node, mk);
}

std::unique_ptr<Kernel> select_gemm(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                    const Microkernels& mk) {
    const TensorDesc& a = *node.inputs[0];
    const TensorDesc& b = *node.inputs[1];
    const TensorDesc* c = node.input(2);
    if (!plain_f32(a) || !plain_f32(b) || !b.is_const() || !plain_f32(outputs[0])) return nullptr;
    GemmSpec s;
    s.trans_a = node.attrs.get_int("transA", 0) != 0;
    s.trans_b = node.attrs.get_int("transB", 0) != 0;
    s.alpha = node.attrs.get_float("alpha", 1.0f);
    s.beta = node.attrs.get_float("beta", 1.0f);
    s.m = outputs[0].shape[0], s.n = outputs[0].shape[1];
    s.k = s.trans_a ? a.shape[0] : a.shape[1];
    s.b = static_cast<const float*>(b.data);
    if (c) {
        if (!plain_f32(*c) || !c->is_const()) return nullptr;
        // A bias: one value, or one per column ([N] or [1, N]); C with rows keeps the reference kernel.
        const bool scalar = c->elements() == 1;
        const bool row = c->rank() > 0 && c->elements() == s.n && c->shape.back() == s.n;
        if (!scalar && !row) return nullptr;
        s.c = static_cast<const float*>(c->data);
        s.c_count = scalar ? 1 : s.n;
    }
    return make_gemm("gemm", s, node, mk);
}

std::unique_ptr<Kernel> select_matmul(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                      const Microkernels& mk) {
    const TensorDesc& a = *node.inputs[0];
    const TensorDesc& b = *node.inputs[1];
    if (!plain_f32(a) || !plain_f32(b) || !b.is_const() || !plain_f32(outputs[0])) return nullptr;
    // B a matrix, possibly with leading 1s ([1, K, N]): then A's batch dims are the output's, and
    // A's rows, all batches through, are one Gemm's rows.
    if (b.rank() < 2) return nullptr;
    for (int64_t d = 0; d + 2 < b.rank(); ++d)
        if (b.shape[static_cast<size_t>(d)] != 1) return nullptr;
    GemmSpec s;
    s.k = a.shape.back();
    s.n = b.shape.back();
    if (s.k <= 0 || s.n <= 0) return nullptr;
    s.m = a.elements() / s.k;
    if (outputs[0].elements() != s.m * s.n) return nullptr;
    s.b = static_cast<const float*>(b.data);
    return make_gemm("matmul", s, node, mk);
}

}  // namespace kernels
}  // namespace kes
