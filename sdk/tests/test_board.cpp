#include <gtest/gtest.h>

#include <string>

#include "kestrel/sdk.h"

TEST(Board, ProfilesCarryTheSpecNumbers) {
    const kes_board_profile* a = kes_board_get_profile(KES_BOARD_310);
    const kes_board_profile* b = kes_board_get_profile(KES_BOARD_310B);
    const kes_board_profile* h = kes_board_get_profile(KES_BOARD_HOST);
    ASSERT_TRUE(a && b && h);
    EXPECT_EQ(kes_board_get_profile(static_cast<kes_board>(7)), nullptr);

    // JPEGD strides (BOARD-RULES §JPEGD)
    EXPECT_EQ(a->jpegd_width_align, 128u);
    EXPECT_EQ(a->jpegd_height_align, 16u);
    EXPECT_EQ(b->jpegd_width_align, 64u);
    EXPECT_EQ(b->jpegd_height_align, 16u);
    EXPECT_EQ(a->jpegd_max_dim, 8192u);
    EXPECT_EQ(b->jpegd_max_dim, 16384u);
    EXPECT_EQ(a->jpegd_min_dim, 32u);
    // VPC (BOARD-RULES §VPC)
    EXPECT_EQ(a->vpc_width_align, 16u);
    EXPECT_EQ(a->vpc_height_align, 2u);
    EXPECT_EQ(b->vpc_width_align, 1u);
    EXPECT_EQ(a->vpc_roi_parity, 1u);
    EXPECT_EQ(b->vpc_roi_parity, 0u);
    EXPECT_EQ(a->vpc_paste_left_align, 16u);
    EXPECT_EQ(a->vpc_min_width, 10u);
    EXPECT_EQ(a->vpc_min_height, 6u);
    EXPECT_EQ(a->vpc_max_input_dim, 4096u);
    EXPECT_EQ(a->vpc_max_input_dim_nv12, 8192u);
    EXPECT_EQ(a->vpc_max_output_width, 4096u);
    EXPECT_EQ(b->vpc_max_output_height, 8192u);
    EXPECT_EQ(a->vpc_max_batch_rois, 256u);
    EXPECT_EQ(a->vpc_scale_min_den, 32u);
    EXPECT_EQ(a->vpc_scale_max, 16u);
    // VDEC (BOARD-RULES §VDEC)
    EXPECT_EQ(a->vdec_width_align, 16u);
    EXPECT_EQ(a->vdec_height_align, 2u);
    EXPECT_EQ(a->vdec_max_channels, 32u);
    EXPECT_EQ(a->vdec_max_dim, 4096u);
    // PNGD and AIPP (BOARD-RULES §PNGD, §AIPP-order)
    EXPECT_EQ(a->pngd_max_dim, 4096u);
    EXPECT_EQ(a->aipp_supports_resize, 0u);
    EXPECT_EQ(b->aipp_supports_resize, 0u);
    EXPECT_EQ(a->aipp_dynamic_max_out_width, 1080u);
    // names
    EXPECT_STREQ(a->name, "310");
    EXPECT_STREQ(b->name, "310B");
    EXPECT_STREQ(h->name, "host");
    EXPECT_EQ(a->board, KES_BOARD_310);
    EXPECT_EQ(b->board, KES_BOARD_310B);
    // The rules that were identity checks in dvpp, now profile fields (0 on the host: no such rule).
    EXPECT_EQ(a->jpegd_even_420, 0u);
    EXPECT_EQ(b->jpegd_even_420, 1u);
    EXPECT_EQ(a->vpc_output_420sp_only, 1u);
    EXPECT_EQ(b->vpc_output_420sp_only, 0u);
    EXPECT_EQ(a->vpc_csc_bt601_wide_only, 1u);
    EXPECT_EQ(b->vpc_csc_bt601_wide_only, 0u);
    EXPECT_EQ(a->venc_width_stride_align, 16u);
    EXPECT_EQ(b->venc_width_stride_align, 16u);
    EXPECT_EQ(b->vdec_h265_max_width, 5400u);
    EXPECT_EQ(a->vdec_h265_max_width, 0u);
    for (uint32_t rule : {h->jpegd_even_420, h->vpc_output_420sp_only, h->vpc_csc_bt601_wide_only,
                          h->venc_width_stride_align, h->vdec_h265_max_width})
        EXPECT_EQ(rule, 0u);
}

TEST(Board, NamesParseInTheirCommonSpellings) {
    kes_board board;
    const struct {
        const char* name;
        kes_board board;
    } cases[] = {{"310", KES_BOARD_310},
                 {"310B", KES_BOARD_310B},
                 {"310b", KES_BOARD_310B},
                 {"atlas200dk", KES_BOARD_310},
                 {"Atlas-200I-DK-A2", KES_BOARD_310B},
                 {"orangepi-aipro", KES_BOARD_310B},
                 {"host", KES_BOARD_HOST}};
    for (const auto& c : cases) {
        ASSERT_EQ(kes_board_from_name(c.name, &board), KES_OK) << c.name;
        EXPECT_EQ(board, c.board) << c.name;
    }
    EXPECT_EQ(kes_board_from_name("310P", &board), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_board_from_name(nullptr, &board), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_board_from_name("310", nullptr), KES_ERR_INVALID_ARGUMENT);
}

TEST(Board, ActiveProfileCanBeChangedAndRestored) {
    const kes_board before = kes_board_get();
    ASSERT_EQ(kes_board_set(KES_BOARD_310), KES_OK);
    EXPECT_EQ(kes_board_get(), KES_BOARD_310);
    EXPECT_EQ(kes_board_active_profile(), kes_board_get_profile(KES_BOARD_310));
    EXPECT_EQ(kes_board_set(static_cast<kes_board>(99)), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_board_get(), KES_BOARD_310);
    ASSERT_EQ(kes_board_set(before), KES_OK);
}

TEST(Board, DefaultIsTheBuildDefaultOrKES_BOARD) {
    // The test binary runs without KES_BOARD unless the caller sets it; either way the active board
    // must be one of the three and its profile must be the one kes_board_get_profile returns.
    const kes_board b = kes_board_get();
    EXPECT_TRUE(b == KES_BOARD_310 || b == KES_BOARD_310B || b == KES_BOARD_HOST);
    EXPECT_STREQ(kes_board_name(b), kes_board_active_profile()->name);
}
