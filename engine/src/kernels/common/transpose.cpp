// transpose.cpp — fast Transpose for what CNN graphs transpose: a swap of two blocks of axes, once
// adjacent axes that stay adjacent are merged and size-1 axes dropped — [O, A, B, I] → [O, B, A, I].
// The NCHW ↔ NHWC Transposes at a converted model's edges ([N, C, HW] ↔ [N, HW, C]), a detector
// head's [1, 3, 85, h·w] → [1, 3, h·w, 85], ShuffleNet's channel shuffle ([N·HW, g, C/g, 1]) are all
// this form, and so is Kestrel's ChannelShuffle ([outer, g, C/g, inner] → [outer, C/g, g, inner]). Any
// other permutation keeps the reference kernel (a gather over every axis).
//
// Choices:
// - Tiles of kTile × kTile elements of the swapped axes, each element a run of I contiguous values:
//   a tile's reads are kTile rows of the input, its writes kTile rows of the output, both in L1. The
//   reference walks the output in order and reads each input element from a different cache line
//   (NHWC → NCHW of [1,64,64,128]: 1.1 ns per element against 0.2 here, on one AMD EPYC thread).
// - Single values (I = 1) move in the dtype's width (1, 2, 4 or 8 bytes); runs of I > 1 values move
//   by memcpy.
// - A few input rows (A ≤ 4, an image's colour planes) are interleaved stream by stream instead: 0.12 →
//   0.03 ms for a [1,3,240,320] input.
// - Units are (outer index, block of the matrix), or (outer index, band of output rows) when
//   interleaving: fixed by the shapes; a transpose moves bytes,
//   so the result is the reference's bit for bit whatever the thread count.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

constexpr size_t kTile = 16;
constexpr size_t kUnitElements = 16 * 1024;  // runs moved per unit, about
constexpr size_t kBlock = 64;                // a unit's block of the matrix: kBlock × kBlock runs

// out[b][a] = in[a][b] with few rows a (an image's 3 colour planes into pixels): A input streams read
// in step, each output row written whole; A a constant, so the compiler keeps the streams in registers.
template <class T, size_t A>
void interleave(const T* in, T* out, size_t b0, size_t b1, size_t B) {
    for (size_t b = b0; b < b1; ++b)
        for (size_t a = 0; a < A; ++a) out[b * A + a] = in[a * B + b];
}

// out[b][a] = in[a][b] for a < rows_a, b < rows_b, elements of type T (I = 1), over a tile.
template <class T>
void transpose_tile(const T* in, T* out, size_t a0, size_t a1, size_t b0, size_t b1, size_t A, size_t B) {
    for (size_t b = b0; b < b1; ++b) {
        T* o = out + b * A;
        for (size_t a = a0; a < a1; ++a) o[a] = in[a * B + b];
    }
}

class TransposeKernel final : public Kernel {
public:
    TransposeKernel(size_t es, size_t o, size_t a, size_t b, size_t i) : es_(es), o_(o), a_(a), b_(b), i_(i) {
        if (interleaves()) {
            // Bands of output rows (B) of about kUnitElements runs each.
            band_ = std::max<size_t>(kTile, (kUnitElements / a_ + kTile - 1) / kTile * kTile);
            a_blocks_ = 1, b_blocks_ = (b_ + band_ - 1) / band_;
        } else {
            // Blocks of kBlock × kBlock runs: a block reads whole cache lines of kBlock input rows and
            // writes whole lines of kBlock output rows (bands of B alone re-read every input line once
            // per band: a [1,255,40,40] head's NHWC → NCHW took 0.78 ns per element, 0.2 in blocks).
            band_ = kBlock;
            a_blocks_ = (a_ + kBlock - 1) / kBlock, b_blocks_ = (b_ + kBlock - 1) / kBlock;
        }
    }
    const char* impl() const override { return "transpose-tiled"; }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const uint8_t*>(inputs[0]);
        auto* y = static_cast<uint8_t*>(outputs[0]);
        const size_t run_bytes = i_ * es_, matrix = a_ * b_ * run_bytes;
        const size_t blocks = a_blocks_ * b_blocks_;
        parallel_units(rc, o_ * blocks, [&](uint64_t unit, uint32_t) {
            const size_t o = unit / blocks, ab = (unit % blocks) / b_blocks_, bb = unit % b_blocks_;
            const size_t b0 = bb * band_, b1 = std::min(b_, b0 + band_);
            const uint8_t* in = x + o * matrix;
            uint8_t* out = y + o * matrix;
            if (interleaves()) {
                interleave_planes(reinterpret_cast<const uint32_t*>(in), reinterpret_cast<uint32_t*>(out), b0, b1);
                return;
            }
            const size_t a_end = std::min(a_, (ab + 1) * kBlock);
            for (size_t a0 = ab * kBlock; a0 < a_end; a0 += kTile) {
                const size_t a1 = std::min(a_end, a0 + kTile);
                for (size_t t0 = b0; t0 < b1; t0 += kTile) {
                    const size_t t1 = std::min(b1, t0 + kTile);
                    tile(in, out, a0, a1, t0, t1, run_bytes);
                }
            }
        });
    }

private:
    bool interleaves() const { return i_ == 1 && es_ == 4 && a_ >= 2 && a_ <= 4; }

    void interleave_planes(const uint32_t* in, uint32_t* out, size_t b0, size_t b1) const {
        switch (a_) {
            case 2: return interleave<uint32_t, 2>(in, out, b0, b1, b_);
            case 3: return interleave<uint32_t, 3>(in, out, b0, b1, b_);
            default: return interleave<uint32_t, 4>(in, out, b0, b1, b_);
        }
    }

    void tile(const uint8_t* in, uint8_t* out, size_t a0, size_t a1, size_t b0, size_t b1, size_t run_bytes) const {
        if (i_ == 1) {
            switch (es_) {
                case 1: return transpose_tile(in, out, a0, a1, b0, b1, a_, b_);
                case 2:
                    return transpose_tile(reinterpret_cast<const uint16_t*>(in), reinterpret_cast<uint16_t*>(out), a0,
                                          a1, b0, b1, a_, b_);
                case 4:
                    return transpose_tile(reinterpret_cast<const uint32_t*>(in), reinterpret_cast<uint32_t*>(out), a0,
                                          a1, b0, b1, a_, b_);
                default:
                    return transpose_tile(reinterpret_cast<const uint64_t*>(in), reinterpret_cast<uint64_t*>(out), a0,
                                          a1, b0, b1, a_, b_);
            }
        }
        for (size_t b = b0; b < b1; ++b)
            for (size_t a = a0; a < a1; ++a)
                std::memcpy(out + (b * a_ + a) * run_bytes, in + (a * b_ + b) * run_bytes, run_bytes);
    }

    size_t es_, o_, a_, b_, i_, band_ = kTile, a_blocks_ = 1, b_blocks_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> select_transpose(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                         const Microkernels&) {
    const TensorDesc& x = *node.inputs[0];
    const size_t es = kes_dtype_size(x.dtype);
    if ((es != 1 && es != 2 && es != 4 && es != 8) || outputs[0].elements() == 0) return nullptr;
    std::vector<int64_t> perm = node.attrs.get_ints("perm");
    if (perm.empty())
        for (int64_t d = x.rank(); d-- > 0;) perm.push_back(d);
    for (int64_t& p : perm)
        if (p < 0) p += x.rank();
    // The output's axes as input axes, without size-1 axes, with runs of consecutive input axes merged:
    // each entry is (first input axis, merged extent).
    struct Run {
        int64_t axis, extent;
    };
    // next[d]: the first axis after d that is not of size 1 (size-1 axes never keep two axes apart).
    std::vector<int64_t> next(static_cast<size_t>(x.rank()), x.rank());
    for (int64_t d = x.rank() - 1; d > 0; --d)
        next[static_cast<size_t>(d - 1)] = x.shape[static_cast<size_t>(d)] == 1 ? next[static_cast<size_t>(d)] : d;
    std::vector<Run> runs;
    for (int64_t p : perm) {
        const int64_t extent = x.shape[static_cast<size_t>(p)];
        if (extent == 1) continue;
        if (!runs.empty() && next[static_cast<size_t>(runs.back().axis)] == p) {
            runs.back().axis = p, runs.back().extent *= extent;  // axis: the run's last input axis
            continue;
        }
        runs.push_back({p, extent});
    }
    // Output order O, B, A, I with input order O, A, B, I: the runs' input positions must be
    // (0, 2, 1, 3) with O and I optional. Input order of the runs is the order of their last axes.
    std::vector<size_t> order(runs.size());
    for (size_t r = 0; r < runs.size(); ++r) order[r] = r;
    std::sort(order.begin(), order.end(), [&](size_t p, size_t q) { return runs[p].axis < runs[q].axis; });
    std::vector<size_t> rank_of(runs.size());  // output run r is the rank_of[r]-th run in input order
    for (size_t k = 0; k < order.size(); ++k) rank_of[order[k]] = k;
    const size_t n = runs.size();
    if (n < 2 || n > 4) return nullptr;  // a copy (n < 2) would be a Reshape: the converter removes it
    size_t first = 0;                    // output position of B
    if (n >= 3 && rank_of[0] == 0) first = 1;
    if (n - first < 2 || n - first > 3) return nullptr;
    if (rank_of[first] != first + 1 || rank_of[first + 1] != first) return nullptr;
    if (n - first == 3 && rank_of[first + 2] != first + 2) return nullptr;
    const size_t o = first ? static_cast<size_t>(runs[0].extent) : 1;
    const size_t b = static_cast<size_t>(runs[first].extent), a = static_cast<size_t>(runs[first + 1].extent);
    const size_t i = n - first == 3 ? static_cast<size_t>(runs[first + 2].extent) : 1;
    return std::make_unique<TransposeKernel>(es, o, a, b, i);
}

std::unique_ptr<Kernel> select_channel_shuffle(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                               const Microkernels&) {
    const TensorDesc& x = *node.inputs[0];
    const size_t es = kes_dtype_size(x.dtype);
    if ((es != 1 && es != 2 && es != 4 && es != 8) || outputs[0].elements() == 0) return nullptr;
    // [outer, g, C/g, inner] → [outer, C/g, g, inner]: the reference's view (shape.cpp).
    const AxisSplit around = split_at_axis(x.shape, normalize_axis(node.attrs.get_int("axis", 1), x.rank()));
    const int64_t group = node.attrs.get_int("group", 1);
    return std::make_unique<TransposeKernel>(es, static_cast<size_t>(around.outer), static_cast<size_t>(group),
                                             static_cast<size_t>(around.dim / group),
                                             static_cast<size_t>(around.inner));
}

}  // namespace kernels
}  // namespace kes
