// aipp_execute.cpp — resolving params + image + tensor into a Plan, spreading rows over the shared
// thread pool, and the dynamic-AIPP parameter object of BOARD-RULES §AIPP-dynamic.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "aipp_internal.hpp"
#include "aipp_simd.hpp"
#include "kes/cpu_dispatch.hpp"
#include "kes/error.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/trace.h"

struct kes_aipp_dynamic {
    kes_aipp_params base;
    std::vector<kes_aipp_params> items;
};

namespace kes {
namespace aipp {
namespace {

FieldLocator plain(const char* prefix) {
    return [prefix](const char* f) { return std::string(prefix) + f; };
}

bool format_matches(kes_aipp_input_format f, kes_pixel_format px) {
    switch (f) {
        case KES_AIPP_YUV420SP_U8: return px == KES_PIXEL_NV12 || px == KES_PIXEL_NV21;
        case KES_AIPP_YUV400_U8: return px == KES_PIXEL_YUV400;
        case KES_AIPP_RGB888_U8: return px == KES_PIXEL_RGB888 || px == KES_PIXEL_BGR888;
        case KES_AIPP_XRGB8888_U8:
            return px == KES_PIXEL_ARGB8888 || px == KES_PIXEL_ABGR8888 || px == KES_PIXEL_RGBA8888 ||
                   px == KES_PIXEL_BGRA8888;
        default: return false;
    }
}

uint32_t bytes_per_pixel(kes_aipp_input_format f) {
    return f == KES_AIPP_RGB888_U8 ? 3 : f == KES_AIPP_XRGB8888_U8 ? 4 : 1;
}

struct TensorDims {
    uint32_t n, c, h, w;
};

TensorDims check_tensor(const kes_tensor* t) {
    KES_REQUIRE_NOT_NULL(t);
    if (kes_tensor_validate(t) != KES_OK) KES_FAIL(KES_ERR_INVALID_ARGUMENT, "output: %s", kes_last_error());
    KES_REQUIRE(t->ndim == 4 && (t->layout == KES_LAYOUT_NCHW || t->layout == KES_LAYOUT_NHWC),
                "output must be a 4-D NCHW or NHWC tensor (got ndim %u, layout %s)", t->ndim,
                kes_layout_name(t->layout));
    KES_REQUIRE(t->dtype == KES_F32 || t->dtype == KES_F16 || t->dtype == KES_I8 || t->dtype == KES_U8,
                "output dtype must be f32, f16, i8 or u8 (got %s)", kes_dtype_name(t->dtype));
    const bool nchw = t->layout == KES_LAYOUT_NCHW;
    for (int i = 0; i < 4; ++i) {
        KES_REQUIRE(t->shape[i] >= 1 && t->shape[i] <= 65536, "output shape[%d] must be in [1, 65536] (got %lld)", i,
                    static_cast<long long>(t->shape[i]));
    }
    TensorDims d;
    d.n = static_cast<uint32_t>(t->shape[0]);
    d.c = static_cast<uint32_t>(t->shape[nchw ? 1 : 3]);
    d.h = static_cast<uint32_t>(t->shape[nchw ? 2 : 1]);
    d.w = static_cast<uint32_t>(t->shape[nchw ? 3 : 2]);
    return d;
}

Plan make_plan(const kes_aipp_params& p, const kes_image* image, uint32_t index, const kes_tensor* t,
               const TensorDims& dims, bool board_exact) {
    const kes_board_profile& board = *kes_board_active_profile();
    Plan pl{};
    KES_REQUIRE(p.input_format != KES_AIPP_FORMAT_UNDEFINED,
                "input_format is not set (dynamic AIPP: call kes_aipp_dynamic_set_input_format)");
    if (kes_image_validate(image) != KES_OK) {
        KES_FAIL(KES_ERR_INVALID_ARGUMENT, "images[%u]: %s", index, kes_last_error());
    }
    if (kes_mem_is_host_accessible(kes_image_memory(image)) == 0)
        KES_FAIL(KES_ERR_UNSUPPORTED,
                 "images[%u] lives in memory the CPU cannot read (DVPP or device memory of a PCIe card, ACL_HOST run "
                 "mode) and AIPP runs on the CPU here: copy it to host memory (kes_mem_copy), or give it to a .om "
                 "whose AIPP runs on the NPU",
                 index);
    KES_REQUIRE(format_matches(p.input_format, image->format), "images[%u] is %s, which input_format %s cannot read",
                index, kes_pixel_format_name(image->format), input_format_name(p.input_format));
    pl.format = p.input_format;
    pl.image = image;
    pl.src_w = p.src_image_size_w ? p.src_image_size_w : image->width;
    pl.src_h = p.src_image_size_h ? p.src_image_size_h : image->height;
    // A src size larger than the visible image may reach into the stride padding, as on the board
    // (BOARD-RULES §AIPP-order: apps set src_image_size to the stride-aligned size), but never past the strides.
    const uint32_t bpp = bytes_per_pixel(p.input_format);
    KES_REQUIRE(pl.src_w <= image->width_stride / bpp && pl.src_h <= image->height_stride,
                "images[%u]: src_image_size %ux%u exceeds the image strides (%u bytes x %u rows)", index, pl.src_w,
                pl.src_h, image->width_stride, image->height_stride);
    if (p.padding) {
        pl.pad_l = p.left_padding_size;
        pl.pad_r = p.right_padding_size;
        pl.pad_t = p.top_padding_size;
        pl.pad_b = p.bottom_padding_size;
    }
    KES_REQUIRE(dims.w > pl.pad_l + pl.pad_r && dims.h > pl.pad_t + pl.pad_b,
                "output %ux%u leaves no room inside the padding (%u+%u x %u+%u)", dims.w, dims.h, pl.pad_l, pl.pad_r,
                pl.pad_t, pl.pad_b);
    if (p.crop) {
        pl.crop_x = p.load_start_pos_w;
        pl.crop_y = p.load_start_pos_h;
        // BOARD-RULES §AIPP-fields: an omitted crop size is the model input size (here: the tensor) minus padding.
        pl.crop_w = p.crop_size_w ? p.crop_size_w : dims.w - pl.pad_l - pl.pad_r;
        pl.crop_h = p.crop_size_h ? p.crop_size_h : dims.h - pl.pad_t - pl.pad_b;
    } else {
        pl.crop_w = pl.src_w;
        pl.crop_h = pl.src_h;
    }
    KES_REQUIRE(uint64_t{pl.crop_x} + pl.crop_w <= pl.src_w && uint64_t{pl.crop_y} + pl.crop_h <= pl.src_h,
                "images[%u]: crop %ux%u at (%u,%u) lies outside the source %ux%u", index, pl.crop_w, pl.crop_h,
                pl.crop_x, pl.crop_y, pl.src_w, pl.src_h);
    pl.out_w = pl.crop_w + pl.pad_l + pl.pad_r;
    pl.out_h = pl.crop_h + pl.pad_t + pl.pad_b;
    KES_REQUIRE(pl.out_w == dims.w && pl.out_h == dims.h,
                "output tensor is %ux%u (WxH) but AIPP produces %ux%u (crop %ux%u + padding) for images[%u]", dims.w,
                dims.h, pl.out_w, pl.out_h, pl.crop_w, pl.crop_h, index);
    if (p.aipp_mode == KES_AIPP_MODE_DYNAMIC) {
        KES_REQUIRE(pl.out_w <= board.aipp_dynamic_max_out_width,
                    "dynamic AIPP output width %u exceeds %u on the %s board (docs/BOARD-RULES.md §AIPP-order)",
                    pl.out_w, board.aipp_dynamic_max_out_width, board.name);
        const uint64_t bytes = p.input_format == KES_AIPP_YUV420SP_U8 ? uint64_t{pl.src_w} * pl.src_h * 3 / 2
                                                                      : uint64_t{pl.src_w} * pl.src_h * bpp;
        KES_REQUIRE(bytes <= p.max_src_image_size, "images[%u]: %llu bytes exceed max_src_image_size %llu", index,
                    static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(p.max_src_image_size));
    }
    pl.in_channels = p.input_format == KES_AIPP_YUV400_U8 ? 1 : 3;
    KES_REQUIRE(dims.c >= 1 && dims.c <= pl.in_channels, "output has %u channels but %s gives %u", dims.c,
                input_format_name(p.input_format), pl.in_channels);
    pl.channels = dims.c;
    pl.csc = p.csc_switch != 0;
    pl.swap_rb = p.rbuv_swap_switch != 0;
    pl.ax_swap = p.ax_swap_switch != 0;
    std::memcpy(pl.m, p.matrix, sizeof(pl.m));
    std::memcpy(pl.in_bias, p.input_bias, sizeof(pl.in_bias));
    std::memcpy(pl.out_bias, p.output_bias, sizeof(pl.out_bias));
    pl.pad_value = p.padding_value;
    pl.board_exact = board_exact;
    for (int c = 0; c < 4; ++c) {
        pl.mean[c] = p.mean_chn[c];
        // BOARD-RULES §AIPP-order: the hardware keeps min and var_reci as fp16.
        pl.min[c] = board_exact ? kes_fp16_to_float(kes_fp16_from_float(p.min_chn[c])) : p.min_chn[c];
        pl.var[c] = board_exact ? kes_fp16_to_float(kes_fp16_from_float(p.var_reci_chn[c])) : p.var_reci_chn[c];
    }
    pl.dtype = t->dtype;
    const bool nchw = t->layout == KES_LAYOUT_NCHW;
    pl.stride_c = t->strides[nchw ? 1 : 3];
    pl.stride_h = t->strides[nchw ? 2 : 1];
    pl.stride_w = t->strides[nchw ? 3 : 2];
    pl.out_base =
        static_cast<uint8_t*>(t->data) + static_cast<size_t>(index) * t->strides[0] * kes_dtype_size(t->dtype);
    return pl;
}

struct Job {
    const Plan* plans;  // the images of this round
    uint32_t rows;      // per image (all images share the tensor's H)
    bool scalar;
    std::atomic<bool> failed{false};
};

void run_range(void* user, uint64_t begin, uint64_t end, uint32_t /*worker*/) {
    Job* job = static_cast<Job*>(user);
    try {
        // Ranges may span images: split at image boundaries.
        while (begin < end) {
            const uint64_t img = begin / job->rows;
            const uint32_t r0 = static_cast<uint32_t>(begin % job->rows);
            const uint64_t stop = std::min<uint64_t>(end, (img + 1) * job->rows);
            const uint32_t r1 = static_cast<uint32_t>(stop - img * job->rows);
            const Plan& pl = job->plans[img];
            if (job->scalar) {
                run_rows_scalar(pl, r0, r1);
            } else {
                run_rows_fast(pl, r0, r1);
            }
            begin = stop;
        }
    } catch (...) {  // scratch allocation is the only thing that can throw; callbacks must not throw
        job->failed.store(true);
    }
}

kes_aipp_exec_config read_exec_config(const kes_aipp_exec_config* c) {
    kes_aipp_exec_config cfg;
    kes_aipp_exec_config_init(&cfg);
    if (!c) return cfg;
    // Its first release held struct_size and precision only; later fields default when absent.
    kes::read_struct(c, sizeof(uint32_t) * 2, "exec_config", "kes_aipp_exec_config", &cfg);
    KES_REQUIRE(cfg.precision == KES_AIPP_PRECISION_FLOAT || cfg.precision == KES_AIPP_PRECISION_BOARD_EXACT,
                "exec_config->precision: unknown value %d", static_cast<int>(cfg.precision));
    KES_REQUIRE(cfg.kernel == KES_AIPP_KERNEL_AUTO || cfg.kernel == KES_AIPP_KERNEL_SCALAR,
                "exec_config->kernel: unknown value %d", static_cast<int>(cfg.kernel));
    return cfg;
}

// Image i uses params[per_image ? i : 0] (one shared block for static AIPP, one per batch item for
// dynamic). Images go in rounds of kRound whose plans live on the stack, so executing allocates nothing.
void execute(const kes_aipp_params* params, bool per_image, const kes_aipp_exec_config* exec_config,
             const kes_image* images, uint32_t count, kes_tensor* output) {
    TraceScope span("aipp", "aipp_execute");
    const kes_aipp_exec_config cfg = read_exec_config(exec_config);
    KES_REQUIRE(images != nullptr && count > 0, "images must hold at least one image (count %u)", count);
    const TensorDims dims = check_tensor(output);
    KES_REQUIRE(dims.n == count, "output N is %u but %u images were given", dims.n, count);
    constexpr uint32_t kRound = 16;
    Plan plans[kRound];
    // Every image is checked before any output is written.
    for (uint32_t i = 0; i < count; ++i)
        make_plan(params[per_image ? i : 0], &images[i], i, output, dims,
                  cfg.precision == KES_AIPP_PRECISION_BOARD_EXACT);
    kes_thread_pool* pool = cfg.pool ? cfg.pool : kes_thread_pool_default();
    // ~16K output pixels per task: big enough to amortise the hand-off, small enough to balance.
    const uint64_t grain = std::max<uint64_t>(1, 16384 / dims.w);
    for (uint32_t first = 0; first < count; first += kRound) {
        const uint32_t n = std::min(kRound, count - first);
        for (uint32_t k = 0; k < n; ++k)
            plans[k] = make_plan(params[per_image ? first + k : 0], &images[first + k], first + k, output, dims,
                                 cfg.precision == KES_AIPP_PRECISION_BOARD_EXACT);
        Job job;
        job.plans = plans;
        job.rows = dims.h;
        job.scalar = cfg.kernel == KES_AIPP_KERNEL_SCALAR;
        if (pool) {
            const kes_status st = kes_thread_pool_parallel_for(pool, uint64_t{n} * dims.h, grain, run_range, &job);
            if (st != KES_OK) KES_FAIL(st, "thread pool: %s", kes_last_error());
        } else {
            run_range(&job, 0, uint64_t{n} * dims.h, 0);
        }
        if (job.failed.load()) KES_FAIL(KES_ERR_OUT_OF_MEMORY, "out of memory for row scratch");
    }
}

kes_aipp_dynamic* check_dynamic(kes_aipp_dynamic* d, uint64_t batch_index) {
    KES_REQUIRE_NOT_NULL(d);
    KES_REQUIRE(batch_index < d->items.size(), "batch_index %llu out of range (batch size %zu)",
                static_cast<unsigned long long>(batch_index), d->items.size());
    return d;
}

void check_fp16_arg(const char* name, float v) {
    KES_REQUIRE(std::isfinite(v) && v >= -65504.0f && v <= 65504.0f, "%s must be within [-65504, 65504] (got %g)", name,
                static_cast<double>(v));
}

}  // namespace
}  // namespace aipp
}  // namespace kes

using kes::aipp::check_dynamic;
using kes::aipp::check_fp16_arg;

extern "C" {

const char* kes_aipp_kernels_name(void) {
    return kes::aipp::kernels_active().name;
}

void kes_aipp_exec_config_init(kes_aipp_exec_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof(*config));
    config->struct_size = sizeof(*config);
}

kes_status kes_aipp_predict_output(const kes_aipp_params* params, uint32_t width, uint32_t height, uint32_t* out_width,
                                   uint32_t* out_height, uint32_t* out_channels) {
    return kes::guard(__func__, [&] {
        const kes_aipp_params p = kes::aipp::read_params_in(params);
        kes::aipp::validate(p, *kes_board_active_profile(), kes::aipp::plain(""));
        const uint32_t sw = p.src_image_size_w ? p.src_image_size_w : width;
        const uint32_t sh = p.src_image_size_h ? p.src_image_size_h : height;
        uint32_t cw = sw, ch = sh;
        if (p.crop) {
            KES_REQUIRE(p.crop_size_w && p.crop_size_h,
                        "crop_size_w/h are 0 (taken from the model input): the output size cannot be predicted");
            cw = p.crop_size_w;
            ch = p.crop_size_h;
        }
        if (p.padding) {
            cw += p.left_padding_size + p.right_padding_size;
            ch += p.top_padding_size + p.bottom_padding_size;
        }
        if (out_width) *out_width = cw;
        if (out_height) *out_height = ch;
        if (out_channels) *out_channels = p.input_format == KES_AIPP_YUV400_U8 ? 1 : 3;
        return KES_OK;
    });
}

kes_status kes_aipp_execute(const kes_aipp_params* params, const kes_aipp_exec_config* exec_config,
                            const kes_image* images, uint32_t count, kes_tensor* output) {
    return kes::guard(__func__, [&] {
        const kes_aipp_params p = kes::aipp::read_params_in(params);
        kes::aipp::validate(p, *kes_board_active_profile(), kes::aipp::plain("params->"));
        KES_REQUIRE(count <= 65536, "count %u exceeds 65536", count);
        kes::aipp::execute(&p, false, exec_config, images, count, output);
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_create(const kes_aipp_params* base, uint64_t batch_size, kes_aipp_dynamic** out_dynamic) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_dynamic);
        *out_dynamic = nullptr;
        KES_REQUIRE(batch_size >= 1 && batch_size <= 1024, "batch_size must be in [1, 1024] (got %llu)",
                    static_cast<unsigned long long>(batch_size));
        auto d = std::make_unique<kes_aipp_dynamic>();
        if (base) {
            d->base = kes::aipp::read_params_in(base);
            KES_REQUIRE(d->base.aipp_mode == KES_AIPP_MODE_DYNAMIC, "base must be a dynamic aipp_op block");
            kes::aipp::validate(d->base, *kes_board_active_profile(), kes::aipp::plain("base->"));
        } else {
            kes_aipp_params_init(&d->base);
            d->base.aipp_mode = KES_AIPP_MODE_DYNAMIC;
            d->base.max_src_image_size = UINT64_MAX;
        }
        d->items.assign(batch_size, d->base);
        *out_dynamic = d.release();
        return KES_OK;
    });
}

void kes_aipp_dynamic_destroy(kes_aipp_dynamic* dynamic) {
    std::unique_ptr<kes_aipp_dynamic> owned(dynamic);
}

uint64_t kes_aipp_dynamic_batch_size(const kes_aipp_dynamic* d) {
    return d ? d->items.size() : 0;
}

kes_status kes_aipp_dynamic_set_input_format(kes_aipp_dynamic* d, kes_aipp_input_format format) {
    return kes::guard(__func__, [&] {
        check_dynamic(d, 0);
        KES_REQUIRE(format == KES_AIPP_YUV420SP_U8 || format == KES_AIPP_XRGB8888_U8 || format == KES_AIPP_RGB888_U8 ||
                        format == KES_AIPP_YUV400_U8,
                    "format %d is not supported on 310-class boards (YUV420SP_U8, XRGB8888_U8, RGB888_U8, YUV400_U8)",
                    static_cast<int>(format));
        for (auto& p : d->items) p.input_format = format;
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_set_src_image_size(kes_aipp_dynamic* d, int32_t w, int32_t h) {
    return kes::guard(__func__, [&] {
        check_dynamic(d, 0);
        const int32_t max = static_cast<int32_t>(kes_board_active_profile()->aipp_max_src_dim);
        KES_REQUIRE(w >= 0 && w <= max && h >= 0 && h <= max, "src size %dx%d must be in [0, %d]", w, h, max);
        for (auto& p : d->items) {
            p.src_image_size_w = static_cast<uint32_t>(w);
            p.src_image_size_h = static_cast<uint32_t>(h);
        }
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_set_csc_params(kes_aipp_dynamic* d, int8_t csc_switch, int16_t r0c0, int16_t r0c1,
                                           int16_t r0c2, int16_t r1c0, int16_t r1c1, int16_t r1c2, int16_t r2c0,
                                           int16_t r2c1, int16_t r2c2, uint8_t output_bias0, uint8_t output_bias1,
                                           uint8_t output_bias2, uint8_t input_bias0, uint8_t input_bias1,
                                           uint8_t input_bias2) {
    return kes::guard(__func__, [&] {
        check_dynamic(d, 0);
        KES_REQUIRE(csc_switch == 0 || csc_switch == 1, "csc_switch must be 0 or 1 (got %d)", csc_switch);
        const int32_t m[3][3] = {{r0c0, r0c1, r0c2}, {r1c0, r1c1, r1c2}, {r2c0, r2c1, r2c2}};
        for (const auto& row : m) {
            for (int32_t v : row) KES_REQUIRE(v >= -32677 && v <= 32676, "matrix value %d outside [-32677, 32676]", v);
        }
        for (auto& p : d->items) {
            p.csc_switch = csc_switch;
            p.matrix_set = 1;
            std::memcpy(p.matrix, m, sizeof(m));
            p.output_bias[0] = output_bias0;
            p.output_bias[1] = output_bias1;
            p.output_bias[2] = output_bias2;
            p.input_bias[0] = input_bias0;
            p.input_bias[1] = input_bias1;
            p.input_bias[2] = input_bias2;
        }
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_set_rbuv_swap_switch(kes_aipp_dynamic* d, int8_t on) {
    return kes::guard(__func__, [&] {
        check_dynamic(d, 0);
        KES_REQUIRE(on == 0 || on == 1, "rbuv_swap_switch must be 0 or 1 (got %d)", on);
        for (auto& p : d->items) p.rbuv_swap_switch = on;
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_set_ax_swap_switch(kes_aipp_dynamic* d, int8_t on) {
    return kes::guard(__func__, [&] {
        check_dynamic(d, 0);
        KES_REQUIRE(on == 0 || on == 1, "ax_swap_switch must be 0 or 1 (got %d)", on);
        for (auto& p : d->items) p.ax_swap_switch = on;
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_set_crop_params(kes_aipp_dynamic* d, int8_t crop_switch, int32_t start_w, int32_t start_h,
                                            int32_t crop_w, int32_t crop_h, uint64_t batch_index) {
    return kes::guard(__func__, [&] {
        check_dynamic(d, batch_index);
        KES_REQUIRE(crop_switch == 0 || crop_switch == 1, "crop_switch must be 0 or 1 (got %d)", crop_switch);
        KES_REQUIRE(start_w >= 0 && start_w <= 4095 && start_h >= 0 && start_h <= 4095,
                    "crop start (%d,%d) must be in [0, 4095]", start_w, start_h);
        KES_REQUIRE(crop_w >= 0 && crop_w <= 4096 && crop_h >= 0 && crop_h <= 4096,
                    "crop size %dx%d must be in [0, 4096]", crop_w, crop_h);
        kes_aipp_params& p = d->items[batch_index];
        p.crop = crop_switch;
        p.load_start_pos_w = static_cast<uint32_t>(start_w);
        p.load_start_pos_h = static_cast<uint32_t>(start_h);
        p.crop_size_w = static_cast<uint32_t>(crop_w);
        p.crop_size_h = static_cast<uint32_t>(crop_h);
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_set_padding_params(kes_aipp_dynamic* d, int8_t padding_switch, int32_t top, int32_t bottom,
                                               int32_t left, int32_t right, uint64_t batch_index) {
    return kes::guard(__func__, [&] {
        check_dynamic(d, batch_index);
        KES_REQUIRE(padding_switch == 0 || padding_switch == 1, "padding_switch must be 0 or 1 (got %d)",
                    padding_switch);
        for (int32_t v : {top, bottom, left, right}) {
            KES_REQUIRE(v >= 0 && v <= 32,
                        "padding sizes must be in [0, 32] (docs/BOARD-RULES.md §AIPP-dynamic; got %d)", v);
        }
        kes_aipp_params& p = d->items[batch_index];
        p.padding = padding_switch;
        p.top_padding_size = static_cast<uint32_t>(top);
        p.bottom_padding_size = static_cast<uint32_t>(bottom);
        p.left_padding_size = static_cast<uint32_t>(left);
        p.right_padding_size = static_cast<uint32_t>(right);
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_set_dtc_pixel_mean(kes_aipp_dynamic* d, int16_t c0, int16_t c1, int16_t c2, int16_t c3,
                                               uint64_t batch_index) {
    return kes::guard(__func__, [&] {
        check_dynamic(d, batch_index);
        int32_t* m = d->items[batch_index].mean_chn;
        m[0] = c0;
        m[1] = c1;
        m[2] = c2;
        m[3] = c3;
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_set_dtc_pixel_min(kes_aipp_dynamic* d, float c0, float c1, float c2, float c3,
                                              uint64_t batch_index) {
    return kes::guard(__func__, [&] {
        check_dynamic(d, batch_index);
        const float v[4] = {c0, c1, c2, c3};
        for (float x : v) check_fp16_arg("min", x);
        std::memcpy(d->items[batch_index].min_chn, v, sizeof(v));
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_set_pixel_var_reci(kes_aipp_dynamic* d, float c0, float c1, float c2, float c3,
                                               uint64_t batch_index) {
    return kes::guard(__func__, [&] {
        check_dynamic(d, batch_index);
        const float v[4] = {c0, c1, c2, c3};
        for (float x : v) check_fp16_arg("var_reci", x);  // BOARD-RULES §AIPP-dynamic: [-65504, 65504]
        std::memcpy(d->items[batch_index].var_reci_chn, v, sizeof(v));
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_get_params(const kes_aipp_dynamic* d, uint64_t batch_index, kes_aipp_params* out_params) {
    return kes::guard(__func__, [&] {
        check_dynamic(const_cast<kes_aipp_dynamic*>(d), batch_index);
        KES_REQUIRE_NOT_NULL(out_params);
        kes::aipp::copy_params_out(d->items[batch_index], out_params);
        return KES_OK;
    });
}

kes_status kes_aipp_dynamic_execute(const kes_aipp_dynamic* d, const kes_aipp_exec_config* exec_config,
                                    const kes_image* images, uint32_t count, kes_tensor* output) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(d);
        KES_REQUIRE(count >= 1 && count <= d->items.size(), "count %u must be in [1, batch size %zu]", count,
                    d->items.size());
        const kes_board_profile& board = *kes_board_active_profile();
        for (uint32_t i = 0; i < count; ++i) {
            const std::string prefix = kes::format("batch %u: ", i);
            kes::aipp::validate(d->items[i], board, [&](const char* f) { return prefix + f; });
        }
        kes::aipp::execute(d->items.data(), true, exec_config, images, count, output);
        return KES_OK;
    });
}

}  // extern "C"
