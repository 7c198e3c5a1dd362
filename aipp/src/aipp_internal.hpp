// aipp_internal.hpp — what the aipp sources share: validation with line-aware messages, the CSC
// tables, and the execution plan the kernels run from.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kestrel/aipp.h"

namespace kes {
namespace aipp {

// Names a field in an error message: "aipp.cfg line 7: load_start_pos_w" for parsed configs,
// "load_start_pos_w" for params built in code.
using FieldLocator = std::function<std::string(const char* field)>;

// Throws kes::Error(KES_ERR_INVALID_ARGUMENT) naming the field on the first broken rule.
void validate(const kes_aipp_params& p, const kes_board_profile& board, const FieldLocator& where);

// BOARD-RULES §AIPP-CSC "defaults when csc_switch: true and no matrix is given".
void apply_csc_defaults(kes_aipp_params* p);

struct CscTable {
    int32_t m[3][3];
    int32_t in_bias[3];
    int32_t out_bias[3];
};
bool csc_table(kes_aipp_csc table, CscTable* out);

// ATC enum spelling of an input format ("YUV420SP_U8"), nullptr for values outside the enum.
const char* input_format_name(kes_aipp_input_format f);

// Copies `src` into a caller struct that may be older (smaller struct_size) than ours.
void copy_params_out(const kes_aipp_params& src, kes_aipp_params* dst);
// Reads a caller struct of any struct_size into a full one (missing fields get defaults, and
// csc_switch without a matrix gets the BOARD-RULES §AIPP-CSC default table).
kes_aipp_params read_params_in(const kes_aipp_params* src);

// Everything the kernels need for one image, resolved from params + image + tensor.
struct Plan {
    kes_aipp_input_format format;
    const kes_image* image;
    uint32_t src_w, src_h;  // region of the image AIPP reads
    uint32_t crop_x, crop_y, crop_w, crop_h;
    uint32_t pad_l, pad_r, pad_t, pad_b;
    uint32_t out_w, out_h, channels;  // channels written (tensor C)
    uint32_t in_channels;             // 1 (YUV400) or 3
    bool csc;
    bool swap_rb;  // rbuv_swap_switch
    bool ax_swap;
    int32_t m[3][3];
    int32_t in_bias[3], out_bias[3];
    float pad_value;
    // DTC registers after the precision mode is applied.
    int32_t mean[4];
    float min[4], var[4];
    bool board_exact;
    // Output addressing (elements).
    kes_dtype dtype;
    uint8_t* out_base;  // this image's [n] slice
    int64_t stride_c, stride_h, stride_w;
};

// The DTC of BOARD-RULES §AIPP-order for one channel value; the single definition both kernels use so that the
// fast path's tables are bit-identical to the reference.
float dtc(const Plan& plan, uint32_t c, float x);
// Stores a DTC result as the tensor's dtype at element offset `off`.
void store(const Plan& plan, int64_t off, float v);

// Kernels: produce output rows [row_begin, row_end) of one image.
void run_rows_scalar(const Plan& plan, uint32_t row_begin, uint32_t row_end);
void run_rows_fast(const Plan& plan, uint32_t row_begin, uint32_t row_end);

}  // namespace aipp
}  // namespace kes
