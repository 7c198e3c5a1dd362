/* kestrel/board.h — board profiles: the DVPP/AIPP rules of the Ascend 310-class board being emulated.
 *
 * Kestrel runs the same code on a laptop and on the board. What differs between boards is the rules
 * the media hardware imposes — output strides, ROI parity, size limits — and Kestrel applies the rules
 * of the *active* profile everywhere, so an app that passes on the host with profile 310B also passes
 * on an Atlas 200I DK A2. docs/BOARD-RULES.md (installed in share/doc/kestrel/) says where each rule
 * comes from; the comments below cite its sections as "BOARD-RULES §VPC":
 *
 *   rule                         310 (Atlas 200 DK)      310B (200I DK A2, Orange Pi AIpro)   host
 *   JPEGD output stride (w × h)  align128 × align16      align64 × align16                    tight
 *   VPC output stride (w × h)    align16 × align2        none × align2 (420SP)                tight
 *   VPC ROI parity               left/top even,          none                                 none
 *                                right/bottom odd
 *   VPC paste left               16-aligned              any (UNCONFIRMED: BOARD-RULES §VPC   any
 *                                                        states the rule for 310 only)
 *   VPC output size              10×6 … 4096×4096        10×6 … 4096×8192                     10×6 … 16384²
 *   JPEGD input size             32×32 … 8192²           32×32 … 16384²                       1×1 … 16384²
 *
 * "host" keeps only the alignment a pixel format itself needs (even sizes for 4:2:0 chroma) and the
 * widest limits: it is for desktop tools, not for predicting board behaviour.
 *
 * The active profile is process-wide. It starts as the build's default (KES_DEFAULT_BOARD, set by
 * the board toolchain files; otherwise 310B) unless the environment variable KES_BOARD ("310",
 * "310B", "host") is set when Kestrel first reads it.
 *
 * Thread-safety: kes_board_get/kes_board_get_profile may run from any thread at any time. Call
 * kes_board_set at start-up, before other threads use Kestrel: objects created earlier (channels,
 * pools, models) keep the profile they were created with.
 */
#ifndef KESTREL_BOARD_H
#define KESTREL_BOARD_H

#include "kestrel/status.h"

KES_BEGIN_DECLS

typedef enum kes_board {
    KES_BOARD_HOST = 0,
    KES_BOARD_310 = 1, /* Ascend 310: Atlas 200 DK, Atlas 200/300/500 (DVPP V1) */
    KES_BOARD_310B = 2 /* Ascend 310B: Atlas 200I DK A2, Orange Pi AIpro */
} kes_board;

/* All numbers are pixels unless the name says bytes. Fields are only ever appended. */
typedef struct kes_board_profile {
    kes_board board;
    const char* name;        /* "310", "310B", "host" */
    const char* description; /* e.g. "Ascend 310B (Atlas 200I DK A2, Orange Pi AIpro)" */
    uint32_t cpu_cores;      /* application CPU cores of the board (the host: 0 = ask the OS) */

    /* JPEG decode (BOARD-RULES §JPEGD) */
    uint32_t jpegd_width_align, jpegd_height_align;
    uint32_t jpegd_min_dim, jpegd_max_dim;
    /* JPEG encode (BOARD-RULES §JPEGE): input width stride is a multiple of this */
    uint32_t jpege_width_align;
    uint32_t jpege_min_dim, jpege_max_dim;
    /* PNG decode (BOARD-RULES §PNGD) */
    uint32_t pngd_width_align, pngd_height_align;
    uint32_t pngd_min_dim, pngd_max_dim;

    /* VPC (BOARD-RULES §VPC) */
    uint32_t vpc_width_align, vpc_height_align; /* output strides of 4:2:0 semi-planar images */
    uint32_t vpc_min_width, vpc_min_height;     /* input and output */
    uint32_t vpc_max_input_dim;                 /* any input format */
    uint32_t vpc_max_input_dim_nv12;            /* NV12/NV21 input ("8K mode" on 310) */
    uint32_t vpc_max_output_width, vpc_max_output_height;
    uint32_t vpc_roi_parity;       /* 1: ROI left/top must be even and right/bottom odd */
    uint32_t vpc_paste_left_align; /* paste ROI left must be a multiple of this */
    uint32_t vpc_max_batch_rois;   /* Σ ROIs in one batch call */
    uint32_t vpc_scale_min_den;    /* output/input ≥ 1/vpc_scale_min_den */
    uint32_t vpc_scale_max;        /* output/input ≤ vpc_scale_max */

    /* Video decode / encode (BOARD-RULES §VDEC, §VENC) */
    uint32_t vdec_width_align, vdec_height_align;
    uint32_t vdec_min_dim, vdec_max_dim;
    uint32_t vdec_max_channels;
    uint32_t venc_min_dim, venc_max_dim;

    /* AIPP (BOARD-RULES §AIPP-order) */
    uint32_t aipp_max_src_dim;           /* src_image_size_w/h upper bound */
    uint32_t aipp_dynamic_max_out_width; /* dynamic AIPP: output width after padding */
    uint32_t aipp_supports_resize;       /* 0 on every 310-class board */

    /* Rules that were identity checks in the code (added after the first release; 0 = no such rule) */
    uint32_t jpegd_even_420;          /* 1: odd sizes of 4:2:0 JPEGD output round down to even (310B, §JPEGD) */
    uint32_t vpc_output_420sp_only;   /* 1: VPC writes NV12/NV21 only (310, §VPC) */
    uint32_t vpc_csc_bt601_wide_only; /* 1: no colour-matrix setting, BT.601 full range only (310, §Formats) */
    uint32_t venc_width_stride_align; /* VENC input width stride multiple (16 on the boards, §VENC) */
    uint32_t vdec_h265_max_width;     /* H.265 width limit of VDEC (5400 on 310B, §VDEC); 0: vdec_max_dim */
} kes_board_profile;

/* The rules of `board`; NULL for values outside the enum. The pointer is to static storage. */
KES_API const kes_board_profile* kes_board_get_profile(kes_board board);

/* The active board (see above) and its profile. */
KES_API kes_board kes_board_get(void);
KES_API const kes_board_profile* kes_board_active_profile(void);

/* Makes `board` the active profile. KES_ERR_INVALID_ARGUMENT for values outside the enum. */
KES_API kes_status kes_board_set(kes_board board);

/* "310", "310B", "host". */
KES_API const char* kes_board_name(kes_board board);

/* Parses "310", "310B" (also "310b", "atlas200dk", "atlas200idka2", "orangepi-aipro") or "host". */
KES_API kes_status kes_board_from_name(const char* name, kes_board* out_board);

KES_END_DECLS

#endif /* KESTREL_BOARD_H */
