// aipp_params.cpp — defaults, ATC validation rules, the standard CSC tables and recipes (BOARD-RULES §AIPP).
#include <cmath>
#include <cstddef>
#include <cstring>

#include "aipp_internal.hpp"
#include "kes/error.hpp"
#include "kes/struct_size.hpp"

namespace kes {
namespace aipp {
namespace {

constexpr float kFp16Max = 65504.0f;

// BOARD-RULES §AIPP-CSC, rows r0/r1/r2 exactly as the ATC table lists them.
const CscTable kTables[] = {
    /* YUV2RGB_BT601_WIDE   */ {{{256, 0, 359}, {256, -88, -183}, {256, 454, 0}}, {0, 128, 128}, {0, 0, 0}},
    /* YUV2RGB_BT601_NARROW */ {{{298, 0, 409}, {298, -100, -208}, {298, 516, 0}}, {16, 128, 128}, {0, 0, 0}},
    /* YUV2RGB_BT709_NARROW */ {{{298, 0, 459}, {298, -55, -136}, {298, 541, 0}}, {16, 128, 128}, {0, 0, 0}},
    /* YUV2RGB_BT709_WIDE   */ {{{256, 0, 403}, {256, -48, -120}, {256, 475, 0}}, {0, 128, 128}, {0, 0, 0}},
    /* YUV2BGR_BT601_WIDE   */ {{{256, 454, 0}, {256, -88, -183}, {256, 0, 359}}, {0, 128, 128}, {0, 0, 0}},
    /* YUV2BGR_BT601_NARROW */ {{{298, 516, 0}, {298, -100, -208}, {298, 0, 409}}, {16, 128, 128}, {0, 0, 0}},
    /* YUV2BGR_BT709_NARROW */ {{{298, 541, 0}, {298, -55, -136}, {298, 0, 459}}, {16, 128, 128}, {0, 0, 0}},
    /* YUV2BGR_BT709_WIDE   */ {{{256, 475, 0}, {256, -48, -120}, {256, 0, 403}}, {0, 128, 128}, {0, 0, 0}},
    /* YUV2GRAY             */ {{{256, 0, 0}, {0, 0, 0}, {0, 0, 0}}, {0, 0, 0}, {0, 0, 0}},
    /* RGB2YUV_BT601_WIDE   */ {{{77, 150, 29}, {-43, -85, 128}, {128, -107, -21}}, {0, 0, 0}, {0, 128, 128}},
    /* RGB2YUV_BT601_NARROW */ {{{66, 129, 25}, {-38, -74, 112}, {112, -94, -18}}, {0, 0, 0}, {16, 128, 128}},
    /* RGB2YUV_BT709_NARROW */ {{{47, 157, 16}, {-26, -87, 112}, {112, -102, -10}}, {0, 0, 0}, {16, 128, 128}},
    /* RGB2YUV_BT709_WIDE   */ {{{55, 183, 19}, {-29, -99, 128}, {128, -116, -12}}, {0, 0, 0}, {0, 128, 128}},
};

bool is_310_format(kes_aipp_input_format f) {
    return f == KES_AIPP_YUV420SP_U8 || f == KES_AIPP_XRGB8888_U8 || f == KES_AIPP_RGB888_U8 || f == KES_AIPP_YUV400_U8;
}

void check_bool(const FieldLocator& where, const char* field, int32_t v) {
    KES_REQUIRE(v == 0 || v == 1, "%s must be true or false (got %d)", where(field).c_str(), v);
}

void check_range(const FieldLocator& where, const char* field, int64_t v, int64_t lo, int64_t hi) {
    KES_REQUIRE(v >= lo && v <= hi, "%s must be in [%lld, %lld] (got %lld)", where(field).c_str(),
                static_cast<long long>(lo), static_cast<long long>(hi), static_cast<long long>(v));
}

void check_fp16(const FieldLocator& where, const char* field, float v) {
    KES_REQUIRE(std::isfinite(v) && std::fabs(v) <= kFp16Max,
                "%s must be finite and within +-65504, the fp16 range of the AIPP register (got %g)",
                where(field).c_str(), static_cast<double>(v));
}

}  // namespace

const char* input_format_name(kes_aipp_input_format f) {
    static const char* const names[] = {
        "UNDEFINED",   "YUV420SP_U8", "XRGB8888_U8", "RGB888_U8",  "YUV400_U8", "NC1HWC0DI_FP16", "NC1HWC0DI_S8",
        "ARGB8888_U8", "YUYV_U8",     "YUV422SP_U8", "AYUV444_U8", "RAW10",     "RAW12",          "RAW16",
        "RAW24",       "RGB16",       "RGB20",       "RGB24",      "RGB8_IR",   "RGB16_IR",       "RGB24_IR"};
    const int i = static_cast<int>(f);
    return i >= 0 && i <= 20 ? names[i] : nullptr;
}

bool csc_table(kes_aipp_csc table, CscTable* out) {
    const int i = static_cast<int>(table);
    if (i < 0 || i >= static_cast<int>(sizeof(kTables) / sizeof(kTables[0]))) return false;
    *out = kTables[i];
    return true;
}

void apply_csc_defaults(kes_aipp_params* p) {
    if (!p->csc_switch || p->matrix_set) return;
    // BOARD-RULES §AIPP-CSC [GE SetCscDefaultValue]: YUV420SP → BT.601-narrow YUV→BGR; other inputs → RGB→YUV.
    const CscTable& t = kTables[p->input_format == KES_AIPP_YUV420SP_U8 ? KES_AIPP_CSC_YUV2BGR_BT601_NARROW
                                                                        : KES_AIPP_CSC_RGB2YUV_BT601_NARROW];
    std::memcpy(p->matrix, t.m, sizeof(p->matrix));
    std::memcpy(p->input_bias, t.in_bias, sizeof(p->input_bias));
    std::memcpy(p->output_bias, t.out_bias, sizeof(p->output_bias));
    p->matrix_set = 1;
}

void validate(const kes_aipp_params& p, const kes_board_profile& board, const FieldLocator& where) {
    KES_REQUIRE(p.aipp_mode == KES_AIPP_MODE_STATIC || p.aipp_mode == KES_AIPP_MODE_DYNAMIC,
                "%s must be static or dynamic (docs/BOARD-RULES.md §AIPP-fields: required)",
                where("aipp_mode").c_str());
    const bool dynamic = p.aipp_mode == KES_AIPP_MODE_DYNAMIC;
    const char* fmt_name = input_format_name(p.input_format);
    KES_REQUIRE(fmt_name != nullptr, "%s: unknown value %d", where("input_format").c_str(),
                static_cast<int>(p.input_format));
    if (!dynamic) {
        KES_REQUIRE(p.input_format != KES_AIPP_FORMAT_UNDEFINED, "%s is required for static AIPP",
                    where("input_format").c_str());
    }
    if (p.input_format != KES_AIPP_FORMAT_UNDEFINED) {
        KES_REQUIRE(is_310_format(p.input_format),
                    "%s %s is not supported on the %s board (only YUV420SP_U8, XRGB8888_U8, RGB888_U8, "
                    "YUV400_U8; docs/BOARD-RULES.md §AIPP-fields)",
                    where("input_format").c_str(), fmt_name, board.name);
    }
    const bool yuv420 = p.input_format == KES_AIPP_YUV420SP_U8;
    if (dynamic) {
        KES_REQUIRE(p.max_src_image_size > 0, "%s must be > 0 for dynamic AIPP (docs/BOARD-RULES.md §AIPP-fields)",
                    where("max_src_image_size").c_str());
    }
    check_bool(where, "support_rotation", p.support_rotation);
    check_bool(where, "csc_switch", p.csc_switch);
    check_bool(where, "rbuv_swap_switch", p.rbuv_swap_switch);
    check_bool(where, "ax_swap_switch", p.ax_swap_switch);
    check_bool(where, "single_line_mode", p.single_line_mode);
    check_bool(where, "crop", p.crop);
    check_bool(where, "resize", p.resize);
    check_bool(where, "padding", p.padding);
    check_bool(where, "raw_rgbir_to_f16_n", p.raw_rgbir_to_f16_n);
    KES_REQUIRE(std::isfinite(p.cpadding_value), "%s must be finite", where("cpadding_value").c_str());

    // BOARD-RULES §AIPP-order ranges: src [1, max] (0 = from the model/image), start [0,4095], crop [1,4096].
    const int64_t max_src = board.aipp_max_src_dim;
    if (p.src_image_size_w) check_range(where, "src_image_size_w", p.src_image_size_w, 1, max_src);
    if (p.src_image_size_h) check_range(where, "src_image_size_h", p.src_image_size_h, 1, max_src);
    if (yuv420 && dynamic) {
        KES_REQUIRE(p.src_image_size_w % 2 == 0, "%s must be even for dynamic YUV420SP_U8 (got %u)",
                    where("src_image_size_w").c_str(), p.src_image_size_w);
        KES_REQUIRE(p.src_image_size_h % 2 == 0, "%s must be even for dynamic YUV420SP_U8 (got %u)",
                    where("src_image_size_h").c_str(), p.src_image_size_h);
    }
    if (p.crop) {
        check_range(where, "load_start_pos_w", p.load_start_pos_w, 0, 4095);
        check_range(where, "load_start_pos_h", p.load_start_pos_h, 0, 4095);
        if (p.crop_size_w) check_range(where, "crop_size_w", p.crop_size_w, 1, 4096);
        if (p.crop_size_h) check_range(where, "crop_size_h", p.crop_size_h, 1, 4096);
        if (yuv420) {
            // BOARD-RULES §AIPP-order: whole 2×2 chroma blocks.
            KES_REQUIRE(p.load_start_pos_w % 2 == 0, "%s must be even for YUV420SP_U8 (got %u)",
                        where("load_start_pos_w").c_str(), p.load_start_pos_w);
            KES_REQUIRE(p.load_start_pos_h % 2 == 0, "%s must be even for YUV420SP_U8 (got %u)",
                        where("load_start_pos_h").c_str(), p.load_start_pos_h);
            if (dynamic) {
                KES_REQUIRE(p.crop_size_w % 2 == 0, "%s must be even for dynamic YUV420SP_U8 (got %u)",
                            where("crop_size_w").c_str(), p.crop_size_w);
                KES_REQUIRE(p.crop_size_h % 2 == 0, "%s must be even for dynamic YUV420SP_U8 (got %u)",
                            where("crop_size_h").c_str(), p.crop_size_h);
            }
        }
        if (p.src_image_size_w) {
            const uint64_t end = uint64_t{p.load_start_pos_w} + (p.crop_size_w ? p.crop_size_w : 1);
            KES_REQUIRE(end <= p.src_image_size_w, "%s: crop [%u, %llu) lies outside the source (src_image_size_w %u)",
                        where(p.crop_size_w ? "crop_size_w" : "load_start_pos_w").c_str(), p.load_start_pos_w,
                        static_cast<unsigned long long>(end), p.src_image_size_w);
        }
        if (p.src_image_size_h) {
            const uint64_t end = uint64_t{p.load_start_pos_h} + (p.crop_size_h ? p.crop_size_h : 1);
            KES_REQUIRE(end <= p.src_image_size_h, "%s: crop [%u, %llu) lies outside the source (src_image_size_h %u)",
                        where(p.crop_size_h ? "crop_size_h" : "load_start_pos_h").c_str(), p.load_start_pos_h,
                        static_cast<unsigned long long>(end), p.src_image_size_h);
        }
    }
    if (p.resize) {
        KES_REQUIRE(board.aipp_supports_resize != 0,
                    "%s is not supported on the %s board (AIPP resize is reserved, docs/BOARD-RULES.md §AIPP-order)",
                    where("resize").c_str(), board.name);
        check_range(where, "resize_output_w", p.resize_output_w, 16, 4096);
        check_range(where, "resize_output_h", p.resize_output_h, 16, 4096);
    }
    if (p.padding) {
        check_range(where, "left_padding_size", p.left_padding_size, 0, 32);
        check_range(where, "right_padding_size", p.right_padding_size, 0, 32);
        check_range(where, "top_padding_size", p.top_padding_size, 0, 32);
        check_range(where, "bottom_padding_size", p.bottom_padding_size, 0, 32);
    }
    check_fp16(where, "padding_value", p.padding_value);
    if (p.csc_switch) {
        KES_REQUIRE(p.input_format != KES_AIPP_YUV400_U8,
                    "%s: colour space conversion is not allowed for YUV400_U8 (docs/BOARD-RULES.md §AIPP-dynamic)",
                    where("csc_switch").c_str());
    }
    static const char* const mnames[3][3] = {{"matrix_r0c0", "matrix_r0c1", "matrix_r0c2"},
                                             {"matrix_r1c0", "matrix_r1c1", "matrix_r1c2"},
                                             {"matrix_r2c0", "matrix_r2c1", "matrix_r2c2"}};
    static const char* const ib[3] = {"input_bias_0", "input_bias_1", "input_bias_2"};
    static const char* const ob[3] = {"output_bias_0", "output_bias_1", "output_bias_2"};
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) check_range(where, mnames[r][c], p.matrix[r][c], -32677, 32676);
        check_range(where, ib[r], p.input_bias[r], 0, 255);
        check_range(where, ob[r], p.output_bias[r], 0, 255);
    }
    static const char* const mean[4] = {"mean_chn_0", "mean_chn_1", "mean_chn_2", "mean_chn_3"};
    static const char* const mn[4] = {"min_chn_0", "min_chn_1", "min_chn_2", "min_chn_3"};
    static const char* const var[4] = {"var_reci_chn_0", "var_reci_chn_1", "var_reci_chn_2", "var_reci_chn_3"};
    for (int c = 0; c < 4; ++c) {
        check_range(where, mean[c], p.mean_chn[c], -32768, 32767);  // int16 register, BOARD-RULES §AIPP-order
        check_fp16(where, mn[c], p.min_chn[c]);
        check_fp16(where, var[c], p.var_reci_chn[c]);
    }
}

// The first released kes_aipp_params ended with aipp_mode; later fields default when a caller's struct is shorter.
constexpr size_t kParamsV1Size = offsetof(kes_aipp_params, aipp_mode) + sizeof(kes_aipp_mode);

void copy_params_out(const kes_aipp_params& src, kes_aipp_params* dst) {
    kes::check_out_struct(dst, kParamsV1Size, "out_params", "kes_aipp_params");
    kes::write_struct(src, dst);
}

kes_aipp_params read_params_in(const kes_aipp_params* src) {
    kes_aipp_params p;
    kes_aipp_params_init(&p);
    kes::read_struct(src, kParamsV1Size, "params", "kes_aipp_params", &p);
    p.related_input_name[KES_AIPP_NAME_MAX - 1] = '\0';
    // Params built in code get ATC's CSC defaults too, exactly as a parsed config would (BOARD-RULES §AIPP-CSC).
    apply_csc_defaults(&p);
    return p;
}

}  // namespace aipp
}  // namespace kes

using kes::aipp::FieldLocator;

extern "C" {

void kes_aipp_params_init(kes_aipp_params* params) {
    if (!params) return;
    std::memset(params, 0, sizeof(*params));
    params->struct_size = sizeof(*params);
    for (float& v : params->var_reci_chn) v = 1.0f;  // BOARD-RULES §AIPP-order defaults
}

kes_status kes_aipp_params_validate(const kes_aipp_params* params) {
    return kes::guard(__func__, [&] {
        const kes_aipp_params p = kes::aipp::read_params_in(params);
        kes::aipp::validate(p, *kes_board_active_profile(), [](const char* f) { return std::string(f); });
        return KES_OK;
    });
}

kes_status kes_aipp_params_set_csc(kes_aipp_params* params, kes_aipp_csc table) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(params);
        kes::aipp::CscTable t;
        KES_REQUIRE(kes::aipp::csc_table(table, &t), "unknown CSC table %d", static_cast<int>(table));
        params->csc_switch = 1;
        params->matrix_set = 1;
        std::memcpy(params->matrix, t.m, sizeof(t.m));
        std::memcpy(params->input_bias, t.in_bias, sizeof(t.in_bias));
        std::memcpy(params->output_bias, t.out_bias, sizeof(t.out_bias));
        return KES_OK;
    });
}

kes_status kes_aipp_params_apply_recipe(kes_aipp_params* params, kes_aipp_recipe recipe,
                                        kes_aipp_input_format input_format, kes_aipp_csc yuv_table) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(params);
        KES_REQUIRE(recipe >= KES_AIPP_RECIPE_RGB_CENTERED && recipe <= KES_AIPP_RECIPE_BGR_255, "unknown recipe %d",
                    static_cast<int>(recipe));
        const bool bgr = recipe == KES_AIPP_RECIPE_BGR_255;
        kes_aipp_params p;
        kes_aipp_params_init(&p);
        p.struct_size = params->struct_size ? params->struct_size : sizeof(p);
        p.aipp_mode = KES_AIPP_MODE_STATIC;
        p.input_format = input_format;
        if (input_format == KES_AIPP_YUV420SP_U8) {
            KES_REQUIRE(yuv_table >= KES_AIPP_CSC_YUV2RGB_BT601_WIDE && yuv_table <= KES_AIPP_CSC_YUV2RGB_BT709_WIDE,
                        "yuv_table must be one of the YUV2RGB tables (got %d)", static_cast<int>(yuv_table));
            // The BGR tables are the RGB ones with rows r0/r2 swapped, in the same enum order (+4).
            const kes_aipp_csc t = bgr ? static_cast<kes_aipp_csc>(yuv_table + 4) : yuv_table;
            kes_aipp_params_set_csc(&p, t);
        } else if (input_format == KES_AIPP_RGB888_U8 || input_format == KES_AIPP_XRGB8888_U8) {
            p.rbuv_swap_switch = bgr ? 1 : 0;
        } else {
            KES_REQUIRE(input_format == KES_AIPP_YUV400_U8, "input_format %d has no recipe",
                        static_cast<int>(input_format));
        }
        switch (recipe) {
            case KES_AIPP_RECIPE_RGB_CENTERED:
                // 127.5 = int16 mean 127 + fractional min 0.5; 1/128 is exact in fp16.
                for (int c = 0; c < 3; ++c) {
                    p.mean_chn[c] = 127;
                    p.min_chn[c] = 0.5f;
                    p.var_reci_chn[c] = 1.0f / 128.0f;
                }
                break;
            case KES_AIPP_RECIPE_IMAGENET: {
                const double mean[3] = {0.485, 0.456, 0.406}, stdev[3] = {0.229, 0.224, 0.225};
                for (int c = 0; c < 3; ++c) {
                    const double m = mean[c] * 255.0;
                    p.mean_chn[c] = static_cast<int32_t>(std::floor(m));
                    p.min_chn[c] = static_cast<float>(m - std::floor(m));
                    p.var_reci_chn[c] = static_cast<float>(1.0 / (stdev[c] * 255.0));
                }
                break;
            }
            case KES_AIPP_RECIPE_BGR_255: break;
        }
        kes::aipp::validate(p, *kes_board_active_profile(), [](const char* f) { return std::string(f); });
        kes::aipp::copy_params_out(p, params);
        return KES_OK;
    });
}

}  // extern "C"
