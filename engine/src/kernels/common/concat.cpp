// concat.cpp — fast Concat and Split: the reference's copies (per outer index, each input's run of
// bytes after the previous ones') shared out over the threads. In NHWC a channel Concat (an FPN neck's, a Fire
// module's, a C3 block's) is a few hundred bytes per input per pixel, so the work is many short copies:
// units are blocks of outer rows of about kUnitBytes of output, fixed by the shapes, and a copy moves
// bytes, so the result is the reference's bit for bit on any thread count.
#include <algorithm>
#include <cstring>
#include <vector>

#include "../ref/op_util.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kes {
namespace kernels {
namespace {

constexpr size_t kUnitBytes = 64 * 1024;
// Rows are copied in blocks of this many, input by input: a block's rows of the wide side stay in L1
// while each narrow side takes its part (a YOLO head's split of 85-float rows into 2 + 2 + 81).
constexpr size_t kBlockRows = 32;

// Rows r0..r1 of c bytes from x (x_row bytes apart) to y (y_row apart). A detector head's Concat or
// Split of 2- or 4-float boxes is thousands of 8- or 16-byte rows: a call to memcpy each cost 1.7 ns a
// row; a copy of a size known here is one move.
template <size_t C>
void copy_fixed(uint8_t* y, size_t y_row, const uint8_t* x, size_t x_row, size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) std::memcpy(y + r * y_row, x + r * x_row, C);
}

void copy_rows(uint8_t* y, size_t y_row, const uint8_t* x, size_t x_row, size_t c, size_t r0, size_t r1) {
    switch (c) {
        case 4: return copy_fixed<4>(y, y_row, x, x_row, r0, r1);
        case 8: return copy_fixed<8>(y, y_row, x, x_row, r0, r1);
        case 12: return copy_fixed<12>(y, y_row, x, x_row, r0, r1);
        case 16: return copy_fixed<16>(y, y_row, x, x_row, r0, r1);
        case 24: return copy_fixed<24>(y, y_row, x, x_row, r0, r1);
        case 32: return copy_fixed<32>(y, y_row, x, x_row, r0, r1);
        default:
            for (size_t r = r0; r < r1; ++r) std::memcpy(y + r * y_row, x + r * x_row, c);
    }
}

// Concat (parts = the inputs, whole = the output) or Split (parts = the outputs, whole = the input):
// per outer row, each part's run of bytes after the previous parts' in the whole's row.
class RowCopyKernel final : public Kernel {
public:
    RowCopyKernel(bool split, std::vector<size_t> chunk, size_t outer)
        : split_(split), chunk_(std::move(chunk)), outer_(outer) {
        for (size_t c : chunk_) row_ += c;
        rows_per_unit_ = std::max<size_t>(1, kUnitBytes / std::max<size_t>(row_, 1));
    }
    const char* impl() const override { return split_ ? "split-threads" : "concat-threads"; }

    using Kernel::run;
    void run(const RunContext& rc, const void* const* inputs, void* const* outputs) const override {
        const auto* x = static_cast<const uint8_t*>(inputs[0]);
        auto* y = static_cast<uint8_t*>(outputs[0]);
        parallel_units(rc, (outer_ + rows_per_unit_ - 1) / rows_per_unit_, [&](uint64_t unit, uint32_t) {
            const size_t r0 = unit * rows_per_unit_, r1 = std::min(outer_, r0 + rows_per_unit_);
            for (size_t b0 = r0; b0 < r1; b0 += kBlockRows) {
                const size_t b1 = std::min(r1, b0 + kBlockRows);
                size_t col = 0;
                for (size_t i = 0; i < chunk_.size(); ++i) {
                    const size_t c = chunk_[i];
                    if (c && split_)
                        copy_rows(static_cast<uint8_t*>(outputs[i]), c, x + col, row_, c, b0, b1);
                    else if (c)
                        copy_rows(y + col, row_, static_cast<const uint8_t*>(inputs[i]), c, c, b0, b1);
                    col += c;
                }
            }
        });
    }

private:
    bool split_;
    std::vector<size_t> chunk_;  // bytes per outer row of each part
    size_t outer_, row_ = 0, rows_per_unit_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> select_split(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                     const Microkernels&) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() == 0 || x.elements() == 0 || outputs.empty()) return nullptr;
    // The reference kernel has checked the split and sized the outputs: their extents along the axis.
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), x.rank());
    const size_t es = kes_dtype_size(x.dtype);
    std::vector<size_t> chunk;
    for (const TensorDesc& t : outputs) {
        const AxisSplit around = split_at_axis(t.shape, axis);
        chunk.push_back(static_cast<size_t>(around.dim * around.inner) * es);
    }
    // One outer row: the reference's few memcpys already stream.
    const size_t outer = static_cast<size_t>(split_at_axis(x.shape, axis).outer);
    if (outer < 2) return nullptr;
    return std::make_unique<RowCopyKernel>(true, std::move(chunk), outer);
}

std::unique_ptr<Kernel> select_concat(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                      const Microkernels&) {
    const TensorDesc& out = outputs[0];
    if (out.elements() == 0 || node.inputs.empty()) return nullptr;
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), out.rank());
    const size_t es = kes_dtype_size(out.dtype);
    std::vector<size_t> chunk;
    for (const TensorDesc* t : node.inputs) {
        if (!t) return nullptr;
        const AxisSplit around = split_at_axis(t->shape, axis);
        chunk.push_back(static_cast<size_t>(around.dim * around.inner) * es);
    }
    // One outer row is all there is (a Concat along the first non-1 axis): the reference's memcpys
    // already stream; threads would only split a copy that is over in microseconds.
    const size_t outer = static_cast<size_t>(split_at_axis(out.shape, axis).outer);
    if (outer < 2) return nullptr;
    return std::make_unique<RowCopyKernel>(false, std::move(chunk), outer);
}

}  // namespace kernels
}  // namespace kes
