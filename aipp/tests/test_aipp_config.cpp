// Tests of the ATC aipp config text: parsing Huawei's sample configs, validation messages, round trip,
// dynamic setters and recipes (BOARD-RULES §AIPP-fields, §AIPP-CSC, §AIPP-dynamic).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kestrel/aipp.h"

namespace {

// The sample of BOARD-RULES §AIPP-CSC: vdec_resnet50_classification/caffe_model/aipp.cfg.
const char* const kResnetCfg = R"(# resnet50 sample
aipp_op {
    aipp_mode : static
    related_input_rank : 0
    input_format : YUV420SP_U8
    src_image_size_w : 224
    src_image_size_h : 224
    crop : false
    csc_switch : true
    rbuv_swap_switch : false
    min_chn_0 : 123
    min_chn_1 : 117
    min_chn_2 : 104
    var_reci_chn_0 : 1.0
    var_reci_chn_1 : 1.0
    var_reci_chn_2 : 1.0
}
)";

// BOARD-RULES §AIPP-CSC: YOLOV3_coco_detection_dynamic_AIPP/aipp_objectdetection.cfg.
const char* const kDynamicCfg = "aipp_op {\naipp_mode: dynamic\nmax_src_image_size: 260000\n}\n";

struct Parsed {
    kes_status status;
    std::string error;
    std::vector<kes_aipp_params> ops;
};

Parsed parse(const std::string& text) {
    Parsed r;
    kes_aipp_config* cfg = nullptr;
    r.status = kes_aipp_config_parse(text.data(), text.size(), nullptr, &cfg);
    if (r.status != KES_OK) {
        r.error = kes_last_error();
        EXPECT_EQ(cfg, nullptr);
        return r;
    }
    for (uint32_t i = 0; i < kes_aipp_config_count(cfg); ++i) {
        kes_aipp_params p;
        p.struct_size = sizeof(p);
        EXPECT_EQ(kes_aipp_config_get(cfg, i, &p), KES_OK);
        r.ops.push_back(p);
    }
    kes_aipp_config_destroy(cfg);
    return r;
}

std::string serialize(const std::vector<kes_aipp_params>& ops) {
    size_t needed = 0;
    EXPECT_EQ(kes_aipp_params_serialize(ops.data(), static_cast<uint32_t>(ops.size()), nullptr, 0, &needed),
              KES_ERR_INVALID_ARGUMENT);
    std::string text(needed, '\0');
    EXPECT_EQ(kes_aipp_params_serialize(ops.data(), static_cast<uint32_t>(ops.size()), &text[0], text.size(), nullptr),
              KES_OK);
    text.resize(needed - 1);
    return text;
}

void expect_error(const std::string& text, const char* fragment) {
    const Parsed r = parse(text);
    EXPECT_EQ(r.status, KES_ERR_INVALID_ARGUMENT) << text;
    EXPECT_NE(r.error.find(fragment), std::string::npos) << "message: " << r.error << "\nwanted: " << fragment;
}

std::string block(const std::string& body) {
    return "aipp_op {\n" + body + "}\n";
}

}  // namespace

TEST(AippConfig, ResnetSampleGetsDefaultBt601NarrowYuvToBgrMatrix) {
    const Parsed r = parse(kResnetCfg);
    ASSERT_EQ(r.status, KES_OK) << r.error;
    ASSERT_EQ(r.ops.size(), 1u);
    const kes_aipp_params& p = r.ops[0];
    EXPECT_EQ(p.aipp_mode, KES_AIPP_MODE_STATIC);
    EXPECT_EQ(p.input_format, KES_AIPP_YUV420SP_U8);
    EXPECT_EQ(p.src_image_size_w, 224u);
    EXPECT_EQ(p.src_image_size_h, 224u);
    EXPECT_EQ(p.csc_switch, 1);
    const int32_t want[3][3] = {{298, 516, 0}, {298, -100, -208}, {298, 0, 409}};  // BOARD-RULES §AIPP-CSC defaults
    EXPECT_EQ(std::memcmp(p.matrix, want, sizeof(want)), 0);
    EXPECT_EQ(p.input_bias[0], 16);
    EXPECT_EQ(p.input_bias[1], 128);
    EXPECT_EQ(p.input_bias[2], 128);
    EXPECT_FLOAT_EQ(p.min_chn[0], 123.0f);
    EXPECT_FLOAT_EQ(p.min_chn[1], 117.0f);
    EXPECT_FLOAT_EQ(p.min_chn[2], 104.0f);
    EXPECT_FLOAT_EQ(p.var_reci_chn[2], 1.0f);
    EXPECT_FLOAT_EQ(p.var_reci_chn[3], 1.0f);  // default
}

TEST(AippConfig, RgbInputCscDefaultIsBt601NarrowRgbToYuv) {
    const Parsed r = parse(block("aipp_mode: static\ninput_format: RGB888_U8\ncsc_switch: true\n"));
    ASSERT_EQ(r.status, KES_OK) << r.error;
    const int32_t want[3][3] = {{66, 129, 25}, {-38, -74, 112}, {112, -94, -18}};
    EXPECT_EQ(std::memcmp(r.ops[0].matrix, want, sizeof(want)), 0);
    EXPECT_EQ(r.ops[0].output_bias[0], 16);
    EXPECT_EQ(r.ops[0].output_bias[2], 128);
}

TEST(AippConfig, DynamicSampleKeepsMaxSrcImageSize) {
    const Parsed r = parse(kDynamicCfg);
    ASSERT_EQ(r.status, KES_OK) << r.error;
    EXPECT_EQ(r.ops[0].aipp_mode, KES_AIPP_MODE_DYNAMIC);
    EXPECT_EQ(r.ops[0].max_src_image_size, 260000u);
}

TEST(AippConfig, SeveralBlocksOneLineFieldsAndCommentsParse) {
    const std::string text =
        "# two inputs\naipp_op { aipp_mode: static related_input_rank: 1 input_format: RGB888_U8 } # trailing\n"
        "aipp_op: {\n  aipp_mode: static; related_input_rank: 0, input_format: YUV400_U8\n"
        "  related_input_name: \"data\"\n}\n";
    kes_aipp_config* cfg = nullptr;
    ASSERT_EQ(kes_aipp_config_parse(text.data(), text.size(), "two.cfg", &cfg), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_aipp_config_count(cfg), 2u);
    kes_aipp_params p;
    p.struct_size = sizeof(p);
    ASSERT_EQ(kes_aipp_config_find_input(cfg, 0, &p), KES_OK);
    EXPECT_EQ(p.input_format, KES_AIPP_YUV400_U8);
    EXPECT_STREQ(p.related_input_name, "data");
    EXPECT_EQ(kes_aipp_config_find_input(cfg, 7, &p), KES_ERR_NOT_FOUND);
    kes_aipp_config_destroy(cfg);
    kes_aipp_config_destroy(nullptr);
}

TEST(AippConfig, RoundTripParseSerialiseParseGivesIdenticalParams) {
    const std::string full = block(
        "aipp_mode: static\ninput_format: YUV420SP_U8\nsrc_image_size_w: 416\nsrc_image_size_h: 416\n"
        "crop: true\nload_start_pos_w: 2\nload_start_pos_h: 4\ncrop_size_w: 400\ncrop_size_h: 380\n"
        "padding: true\nleft_padding_size: 8\nright_padding_size: 8\ntop_padding_size: 18\n"
        "bottom_padding_size: 18\npadding_value: 114.5\ncsc_switch: true\nrbuv_swap_switch: true\n"
        "matrix_r0c0: 256\nmatrix_r0c2: 359\nmatrix_r1c0: 256\nmatrix_r1c1: -88\nmatrix_r1c2: -183\n"
        "matrix_r2c0: 256\nmatrix_r2c1: 454\ninput_bias_1: 128\ninput_bias_2: 128\n"
        "mean_chn_0: 104\nmean_chn_1: -7\nmin_chn_0: 0.1\nmin_chn_3: 1e-3\nvar_reci_chn_0: 0.017124753\n"
        "var_reci_chn_1: 0.0175070028\nsingle_line_mode: false\ncpadding_value: 3.25\n");
    for (const std::string& text : {std::string(kResnetCfg), std::string(kDynamicCfg), full}) {
        const Parsed a = parse(text);
        ASSERT_EQ(a.status, KES_OK) << a.error;
        const std::string written = serialize(a.ops);
        const Parsed b = parse(written);
        ASSERT_EQ(b.status, KES_OK) << b.error << "\n" << written;
        ASSERT_EQ(a.ops.size(), b.ops.size());
        for (size_t i = 0; i < a.ops.size(); ++i) {
            EXPECT_EQ(std::memcmp(&a.ops[i], &b.ops[i], sizeof(kes_aipp_params)), 0) << written;
        }
    }
}

TEST(AippConfig, OddCropStartOnYuv420spNamesLineAndField) {
    const std::string text =
        "# line 1\naipp_op {\n  aipp_mode: static\n  input_format: YUV420SP_U8\n"
        "  src_image_size_w: 64\n  crop: true\n  load_start_pos_w: 3\n}\n";
    expect_error(text, "aipp.cfg line 7: load_start_pos_w must be even for YUV420SP_U8 (got 3)");
    expect_error(block("aipp_mode: static\ninput_format: YUV420SP_U8\ncrop: true\nload_start_pos_h: 5\n"),
                 "line 5: load_start_pos_h must be even");
}

TEST(AippConfig, OutOfRangeValuesNameTheField) {
    const std::string head = "aipp_mode: static\ninput_format: YUV420SP_U8\n";
    expect_error(block(head + "csc_switch: true\nmatrix_r1c2: 40000\n"),
                 "line 5: matrix_r1c2 must be in [-32677, 32676] (got 40000)");
    expect_error(block(head + "padding: true\ntop_padding_size: 33\n"),
                 "line 5: top_padding_size must be in [0, 32] (got 33)");
    expect_error(block(head + "mean_chn_1: 40000\n"), "mean_chn_1 must be in [-32768, 32767]");
    expect_error(block(head + "var_reci_chn_0: 70000\n"), "line 4: var_reci_chn_0 must be finite and within +-65504");
    expect_error(block(head + "input_bias_0: 256\n"), "input_bias_0 must be in [0, 255]");
    expect_error(block(head + "src_image_size_w: 5000\n"), "src_image_size_w must be in [1, 4096] (got 5000)");
    expect_error(block(head + "crop: true\ncrop_size_w: 5000\n"), "crop_size_w must be in [1, 4096]");
    expect_error(block(head + "related_input_rank: -1\n"), "line 4: related_input_rank is out of range");
    expect_error(block(head + "crop: maybe\n"), "line 4: crop must be true or false");
    expect_error(block(head + "min_chn_0: 1.2.3\n"), "line 4: min_chn_0 must be a number");
    expect_error(block(head + "src_image_size_h: 12abc\n"), "src_image_size_h must be an integer");
}

TEST(AippConfig, UnknownFieldsAndBlocksAreRefused) {
    expect_error(block("aipp_mode: static\ninput_format: RGB888_U8\nmean_chn_5: 3\n"),
                 "aipp.cfg line 4: unknown field 'mean_chn_5' in aipp_op");
    expect_error("aipp_opp { aipp_mode: static }", "line 1: unknown block 'aipp_opp'");
    expect_error("multi_shape_op { mode: batch }", "multi_shape_op is a legacy block");
    expect_error(block("aipp_mode: static\ninput_format: BGR888_U8\n"), "line 3: input_format: unknown format");
}

TEST(AippConfig, UnbalancedBracesAreRefused) {
    expect_error("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n",
                 "line 4: unbalanced braces: aipp_op block opened on line 1 is not closed");
    expect_error(block("aipp_mode: static\ninput_format: RGB888_U8\n") + "}\n",
                 "line 5: expected 'aipp_op {', got '}'");
    expect_error("aipp_op aipp_mode: static }", "line 1: expected '{' after aipp_op");
    expect_error(block("aipp_mode: static\ninput_format: RGB888_U8\ncrop { }\n"),
                 "line 4: crop is a value, not a block");
    expect_error("", "no aipp_op block found");
    expect_error("aipp_op { aipp_mode static }", "expected ':' after aipp_mode");
    expect_error("aipp_op { aipp_mode: }", "aipp_mode: missing value");
}

TEST(AippConfig, CropOutsideSourceIsRefused) {
    expect_error(block("aipp_mode: static\ninput_format: RGB888_U8\nsrc_image_size_w: 100\ncrop: true\n"
                       "load_start_pos_w: 60\ncrop_size_w: 50\n"),
                 "line 7: crop_size_w: crop [60, 110) lies outside the source (src_image_size_w 100)");
    expect_error(block("aipp_mode: static\ninput_format: RGB888_U8\nsrc_image_size_h: 10\ncrop: true\n"
                       "load_start_pos_h: 10\n"),
                 "load_start_pos_h: crop [10, 11) lies outside the source");
}

TEST(AippConfig, BoardRulesAreApplied) {
    const std::string head = "aipp_mode: static\n";
    expect_error(block(head + "input_format: YUYV_U8\n"), "line 3: input_format YUYV_U8 is not supported on the");
    for (kes_board b : {KES_BOARD_310, KES_BOARD_310B}) {
        ASSERT_EQ(kes_board_set(b), KES_OK);
        expect_error(block(head + "input_format: RGB888_U8\nresize: true\nresize_output_w: 224\n"),
                     "line 4: resize is not supported on the");
    }
    expect_error(block(head + "input_format: YUV400_U8\ncsc_switch: true\n"),
                 "csc_switch: colour space conversion is not allowed for YUV400_U8");
    expect_error("aipp_op { aipp_mode: dynamic }", "aipp_op block): max_src_image_size must be > 0 for dynamic AIPP");
    expect_error("aipp_op { input_format: RGB888_U8 }", "line 1 (aipp_op block): aipp_mode must be static or dynamic");
    expect_error("aipp_op { aipp_mode: undefined }", "undefined is refused");
    expect_error("aipp_op { aipp_mode: static }", "input_format is required for static AIPP");
    expect_error(
        block("aipp_mode: dynamic\nmax_src_image_size: 100\ninput_format: YUV420SP_U8\nsrc_image_size_w: 31\n"),
        "line 5: src_image_size_w must be even for dynamic YUV420SP_U8 (got 31)");
    expect_error(block(head + "input_format: RGB888_U8\ncrop: true\ncrop: false\n"),
                 "line 5: crop is given twice (first on line 4)");
}

TEST(AippConfig, LoadReadsFileAndNamesItInErrors) {
    const std::string path = std::string(KES_TEST_TMPDIR) + "/aipp_load_test.cfg";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs(kResnetCfg, f);
    std::fclose(f);
    kes_aipp_config* cfg = nullptr;
    ASSERT_EQ(kes_aipp_config_load(path.c_str(), &cfg), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_aipp_config_count(cfg), 1u);
    kes_aipp_config_destroy(cfg);

    f = std::fopen(path.c_str(), "wb");
    std::fputs("aipp_op {\n aipp_mode: static\n input_format: NV12\n}\n", f);
    std::fclose(f);
    EXPECT_EQ(kes_aipp_config_load(path.c_str(), &cfg), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("aipp_load_test.cfg line 3: input_format"), std::string::npos)
        << kes_last_error();
    EXPECT_EQ(kes_aipp_config_load((path + ".missing").c_str(), &cfg), KES_ERR_NOT_FOUND);
    std::remove(path.c_str());
}

TEST(AippParams, SerializeRefusesInvalidParamsAndSmallBuffers) {
    kes_aipp_params p;
    kes_aipp_params_init(&p);
    char buf[8];
    EXPECT_EQ(kes_aipp_params_serialize(&p, 1, buf, sizeof(buf), nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("params[0].aipp_mode"), std::string::npos) << kes_last_error();
    p.aipp_mode = KES_AIPP_MODE_STATIC;
    p.input_format = KES_AIPP_RGB888_U8;
    size_t needed = 0;
    EXPECT_EQ(kes_aipp_params_serialize(&p, 1, buf, sizeof(buf), &needed), KES_ERR_INVALID_ARGUMENT);
    EXPECT_GT(needed, sizeof(buf));
}

TEST(AippParams, ImageNetRecipeSplitsMeanIntoInt16AndFraction) {
    kes_aipp_params p;
    kes_aipp_params_init(&p);
    ASSERT_EQ(kes_aipp_params_apply_recipe(&p, KES_AIPP_RECIPE_IMAGENET, KES_AIPP_YUV420SP_U8,
                                           KES_AIPP_CSC_YUV2RGB_BT601_WIDE),
              KES_OK)
        << kes_last_error();
    EXPECT_EQ(p.mean_chn[0], 123);
    EXPECT_NEAR(p.mean_chn[0] + p.min_chn[0], 0.485 * 255, 1e-4);
    EXPECT_NEAR(p.var_reci_chn[2], 1.0 / (0.225 * 255), 1e-7);
    EXPECT_EQ(p.matrix[0][2], 359);  // RGB order
    ASSERT_EQ(kes_aipp_params_apply_recipe(&p, KES_AIPP_RECIPE_BGR_255, KES_AIPP_YUV420SP_U8,
                                           KES_AIPP_CSC_YUV2RGB_BT601_WIDE),
              KES_OK);
    EXPECT_EQ(p.matrix[0][1], 454);  // BGR order: r0 and r2 swapped
    ASSERT_EQ(
        kes_aipp_params_apply_recipe(&p, KES_AIPP_RECIPE_BGR_255, KES_AIPP_RGB888_U8, KES_AIPP_CSC_YUV2RGB_BT601_WIDE),
        KES_OK);
    EXPECT_EQ(p.csc_switch, 0);
    EXPECT_EQ(p.rbuv_swap_switch, 1);
    EXPECT_EQ(kes_aipp_params_apply_recipe(&p, KES_AIPP_RECIPE_IMAGENET, KES_AIPP_YUV420SP_U8,
                                           KES_AIPP_CSC_RGB2YUV_BT601_WIDE),
              KES_ERR_INVALID_ARGUMENT);
}

TEST(AippDynamic, SettersMirrorAclPerBatchIndex) {
    const Parsed r = parse(kDynamicCfg);
    ASSERT_EQ(r.status, KES_OK);
    kes_aipp_dynamic* d = nullptr;
    ASSERT_EQ(kes_aipp_dynamic_create(&r.ops[0], 2, &d), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_aipp_dynamic_batch_size(d), 2u);
    EXPECT_EQ(kes_aipp_dynamic_set_input_format(d, KES_AIPP_YUV420SP_U8), KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_input_format(d, KES_AIPP_YUYV_U8), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_aipp_dynamic_set_csc_params(d, 1, 256, 0, 359, 256, -88, -183, 256, 454, 0, 0, 0, 0, 0, 128, 128),
              KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_crop_params(d, 1, 2, 2, 16, 16, 1), KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_padding_params(d, 1, 1, 2, 3, 4, 1), KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_padding_params(d, 1, 33, 0, 0, 0, 0), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_aipp_dynamic_set_dtc_pixel_mean(d, 1, 2, 3, 4, 1), KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_dtc_pixel_min(d, 0.5f, 0, 0, 0, 1), KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_pixel_var_reci(d, 0.25f, 1, 1, 1, 1), KES_OK);
    EXPECT_EQ(kes_aipp_dynamic_set_pixel_var_reci(d, 70000.0f, 1, 1, 1, 1), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_aipp_dynamic_set_crop_params(d, 1, 0, 0, 8, 8, 2), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("batch_index 2 out of range"), std::string::npos);

    kes_aipp_params p0, p1;
    p0.struct_size = p1.struct_size = sizeof(kes_aipp_params);
    ASSERT_EQ(kes_aipp_dynamic_get_params(d, 0, &p0), KES_OK);
    ASSERT_EQ(kes_aipp_dynamic_get_params(d, 1, &p1), KES_OK);
    EXPECT_EQ(p0.crop, 0);
    EXPECT_EQ(p1.crop, 1);
    EXPECT_EQ(p1.crop_size_w, 16u);
    EXPECT_EQ(p1.right_padding_size, 4u);
    EXPECT_EQ(p1.mean_chn[3], 4);
    EXPECT_FLOAT_EQ(p1.var_reci_chn[0], 0.25f);
    EXPECT_EQ(p0.matrix[2][1], 454);
    EXPECT_EQ(p0.max_src_image_size, 260000u);
    kes_aipp_dynamic_destroy(d);
    kes_aipp_dynamic_destroy(nullptr);

    kes_aipp_params st;
    kes_aipp_params_init(&st);
    st.aipp_mode = KES_AIPP_MODE_STATIC;
    st.input_format = KES_AIPP_RGB888_U8;
    EXPECT_EQ(kes_aipp_dynamic_create(&st, 1, &d), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_aipp_dynamic_create(nullptr, 0, &d), KES_ERR_INVALID_ARGUMENT);
}

TEST(AippConfig, FuzzSeedsParseOrFailAsTheirNamesSay) {
    const std::string dir = std::string(KES_SOURCE_DIR) + "/aipp/fuzz/seeds/";
    for (const char* name : {"static_yuv420sp.cfg", "dynamic.cfg", "full_static.cfg", "bad_odd_crop.cfg",
                             "bad_unbalanced.cfg", "bad_unknown_field.cfg", "bad_garbage.cfg"}) {
        kes_aipp_config* cfg = nullptr;
        const kes_status st = kes_aipp_config_load((dir + name).c_str(), &cfg);
        if (std::strncmp(name, "bad_", 4) == 0) {
            EXPECT_EQ(st, KES_ERR_INVALID_ARGUMENT) << name;
            EXPECT_NE(std::string(kes_last_error()).find(std::string(name) + " line "), std::string::npos)
                << kes_last_error();
        } else {
            EXPECT_EQ(st, KES_OK) << name << ": " << kes_last_error();
        }
        kes_aipp_config_destroy(cfg);
    }
}
