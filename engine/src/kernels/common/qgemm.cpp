// qgemm.cpp — fast QLinearMatMul with a constant 2-D B (a quantized Gemm or classifier head: ONNX's op and
// the converter's fused QDQ Gemm with its int32 bias, input 8) on the table's qgemm tile; the reference
// kernel's bytes exactly (test_kernels_quant.cpp).
//
// The tile's rows are B's columns (each with its scale, zero point and bias: per-column quantization is
// per tile row, as per output channel for a conv), its columns A's rows. B is packed at load, minus its
// zero points, as qconv_nchw.cpp packs conv weights; a unit packs qgemm_nr rows of A (minus A's zero
// point) into its slot, runs every tile of B over them into a small byte tile, and stores that tile
// transposed into Y's rows. A's batch dims (B has none) are more rows.
#include <algorithm>
#include <cstring>
#include <string>

#include "../../ops/quant.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

struct QMatMulSpec {
    size_t m = 1, k = 1, n = 1;  // rows of A (all batches), depth, columns of B
    bool a_signed = false;
    int32_t a_zp = 0;
    std::vector<int32_t> bias;       // per column of B, 0 when absent
    std::vector<float> multiplier;   // per column of B
    std::vector<int16_t> b_centred;  // B minus its zero points, [k][n]
    QuantOut out{};
};

class QMatMulKernel final : public Kernel {
public:
    QMatMulKernel(QMatMulSpec s, const Microkernels& mk) : s_(std::move(s)), mk_(mk) {
        name_ = std::string("qmatmul-") + mk.name;
        kgroups_ = (s_.k + mk.qgemm_kgroup - 1) / mk.qgemm_kgroup;
        tiles_ = (s_.n + mk.qgemm_mr - 1) / mk.qgemm_mr;
        units_ = (s_.m + mk.qgemm_nr - 1) / mk.qgemm_nr;
        slot_bytes_ = slot_stride(panel_elems() * sizeof(int16_t)) + slot_stride(mk.qgemm_mr * mk.qgemm_nr);
    }

    const char* impl() const override { return name_.c_str(); }
    size_t packed_bytes() const override { return tiles_ * tile_elems() * sizeof(int16_t); }

    void pack(void* dst) const override {
        auto* out = static_cast<int16_t*>(dst);
        std::memset(dst, 0, packed_bytes());
        const size_t mr = mk_.qgemm_mr, kg = mk_.qgemm_kgroup;
        for (size_t t = 0; t < tiles_; ++t, out += tile_elems())
            for (size_t r = 0; r < mr && t * mr + r < s_.n; ++r)
                for (size_t k = 0; k < s_.k; ++k)
                    out[(k / kg) * mr * kg + r * kg + k % kg] = s_.b_centred[k * s_.n + t * mr + r];
    }

    void bind_packed(const void* packed) override { packed_ = static_cast<const int16_t*>(packed); }
    size_t scratch_bytes(uint32_t threads) const override { return std::min<size_t>(threads, units_) * slot_bytes_; }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        auto* y = static_cast<uint8_t*>(outputs[0]);
        parallel_units(rc, units_, [&](uint64_t unit, uint32_t slot) {
            uint8_t* scratch = rc.scratch + slot * slot_bytes_;
            auto* cols = reinterpret_cast<int16_t*>(scratch);
            uint8_t* tile = scratch + slot_stride(panel_elems() * sizeof(int16_t));
            const size_t nr = mk_.qgemm_nr, mr = mk_.qgemm_mr, row0 = static_cast<size_t>(unit) * nr;
            const size_t rows = std::min(nr, s_.m - row0);
            if (s_.a_signed)
                gather(static_cast<const int8_t*>(inputs[0]) + row0 * s_.k, rows, cols);
            else
                gather(static_cast<const uint8_t*>(inputs[0]) + row0 * s_.k, rows, cols);
            for (size_t t = 0; t < tiles_; ++t) {
                const size_t c0 = t * mr, cn = std::min(mr, s_.n - c0);
                mk_.qgemm(cn, rows, kgroups_, packed_ + t * tile_elems(), cols, &s_.bias[c0], &s_.multiplier[c0],
                          s_.out, tile, nr);
                for (size_t r = 0; r < rows; ++r)  // the tile is [column][row]; Y is [row][column]
                    for (size_t c = 0; c < cn; ++c) y[(row0 + r) * s_.n + c0 + c] = tile[c * nr + r];
            }
        });
    }

private:
    size_t panel_elems() const { return kgroups_ * mk_.qgemm_nr * mk_.qgemm_kgroup; }
    size_t tile_elems() const { return kgroups_ * mk_.qgemm_mr * mk_.qgemm_kgroup; }

    // `rows` rows of A, minus its zero point, as one qgemm column panel (zeros past the rows and past K).
    template <class A>
    void gather(const A* a, size_t rows, int16_t* cols) const {
        const size_t nr = mk_.qgemm_nr, kg = mk_.qgemm_kgroup;
        std::memset(cols, 0, panel_elems() * sizeof(int16_t));
        for (size_t r = 0; r < rows; ++r)
            for (size_t k = 0; k < s_.k; ++k)
                cols[(k / kg) * nr * kg + r * kg + k % kg] = static_cast<int16_t>(a[r * s_.k + k] - s_.a_zp);
    }

    QMatMulSpec s_;
    const Microkernels& mk_;
    std::string name_;
    const int16_t* packed_ = nullptr;
    size_t kgroups_ = 0, tiles_ = 0, units_ = 0, slot_bytes_ = 0;
};

template <class B>
std::vector<int16_t> centred_columns(const TensorDesc& b, const Quant& qb, size_t k, size_t n) {
    const auto* p = static_cast<const B*>(b.data);
    std::vector<int16_t> out(k * n);
    for (size_t i = 0; i < k * n; ++i)
        out[i] = static_cast<int16_t>(static_cast<int32_t>(p[i]) - quant_zero_point(qb, static_cast<int64_t>(i % n)));
    return out;
}

}  // namespace

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp[, bias]) with a constant 2-D b; the
// reference create() has checked the node.
std::unique_ptr<Kernel> select_qlinear_matmul(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                              const Microkernels& mk) {
    const TensorDesc& a = *node.inputs[0];
    const TensorDesc& b = *node.inputs[3];
    const TensorDesc* bias = node.input(8);
    const TensorDesc* y_zp = node.input(7);
    if (b.rank() != 2 || !b.is_const() || (bias && !bias->is_const()) || a.rank() < 2 || !y_zp) return nullptr;
    if (!is_quantized_dtype(a.dtype) || !is_quantized_dtype(b.dtype)) return nullptr;
    QMatMulSpec s;
    s.k = static_cast<size_t>(b.shape[0]), s.n = static_cast<size_t>(b.shape[1]);
    if (s.k == 0 || s.n == 0 || a.shape.back() != b.shape[0] || a.elements() == 0) return nullptr;
    s.m = static_cast<size_t>(a.elements()) / s.k;
    if (static_cast<size_t>(outputs[0].elements()) != s.m * s.n) return nullptr;
    const Quant qa = read_quant(*node.inputs[1], node.input(2), a.dtype, "a");
    const Quant qb = read_quant(*node.inputs[4], node.input(5), b.dtype, "b", 1, b.shape[1]);
    const Quant qy = read_quant(*node.inputs[6], y_zp, outputs[0].dtype, "y");
    s.a_signed = a.dtype == KES_I8;
    s.a_zp = quant_zero_point(qa, 0);
    const int32_t zy = quant_zero_point(qy, 0);
    const QuantRange range =
        fused_activation_range(Activation::from_attrs(node.attrs), qy.scale[0], zy, quantized_range(outputs[0].dtype));
    s.out = QuantOut{static_cast<float>(range.min - zy), static_cast<float>(range.max - zy), zy};
    for (size_t c = 0; c < s.n; ++c) {
        s.bias.push_back(bias ? static_cast<const int32_t*>(bias->data)[c] : 0);
        s.multiplier.push_back(requant_multiplier(qa.scale[0], quant_scale(qb, static_cast<int64_t>(c)), qy.scale[0]));
    }
    s.b_centred =
        b.dtype == KES_I8 ? centred_columns<int8_t>(b, qb, s.k, s.n) : centred_columns<uint8_t>(b, qb, s.k, s.n);
    return std::make_unique<QMatMulKernel>(std::move(s), mk);
}

}  // namespace kernels
}  // namespace kes
