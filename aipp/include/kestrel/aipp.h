/* kestrel/aipp.h — AIPP: ATC aipp_op configs, static and dynamic AIPP, from DVPP images to tensors.
 *
 * On a board, AIPP turns a DVPP image into a model's input tensor without the CPU touching pixels.
 * Kestrel does the same transformation on the CPU, exactly as documented (docs/BOARD-RULES.md §AIPP,
 * whose sections the comments below cite as "BOARD-RULES §AIPP-order"), in this order:
 *
 *     crop → R/B or U/V swap → CSC (integer matrix, >> 8, bias, clamp) → padding → DTC → tensor
 *
 *     CSC:  o[i] = clamp( (Σ_j M[i][j] · (in[j] − input_bias[j])) >> 8  + output_bias[i], 0, 255 )
 *           (one formula covers both directions of BOARD-RULES §AIPP-order: YUV→RGB tables carry input_bias and
 *           output_bias 0; RGB→YUV tables carry input_bias 0 and output_bias.)
 *     DTC:  out[c] = (x[c] − mean_chn_c − min_chn_c) × var_reci_chn_c
 *
 * Three ways to get parameters (one kes_aipp_params per aipp_op block = per model input):
 *   1. kes_aipp_config_parse / kes_aipp_config_load: the ATC --insert_op_conf text (one or more
 *      `aipp_op { ... }` blocks, `#` comments, every field of BOARD-RULES §AIPP-fields), validated as ATC does;
 *      kes_aipp_params_serialize writes it back (parse → serialise → parse gives identical params).
 *   2. kes_aipp_params_init + fields, kes_aipp_params_set_csc (standard tables of BOARD-RULES §AIPP-CSC) and
 *      kes_aipp_params_apply_recipe ("RGB (x−127.5)/128", "ImageNet mean/std", "BGR 0–255").
 *   3. kes_aipp_dynamic: setters mirroring aclmdlSetAIPP*Params (BOARD-RULES §AIPP-dynamic), per batch index.
 *
 * Choices where BOARD-RULES says UNCONFIRMED (each is what Kestrel does, on every CPU, every path):
 *   - `>> 8` is an arithmetic shift (rounds toward −inf), then output_bias is added, then the
 *     result is clamped to [0, 255].
 *   - Swap happens before CSC: rbuv_swap_switch swaps U/V of YUV420SP (the chroma bytes are read
 *     as they are, so NV21 needs rbuv_swap_switch: true exactly as on the board, BOARD-RULES §AIPP-CSC) and R/B
 *     of RGB888/XRGB8888. ax_swap_switch: XRGB8888 bytes are X,c0,c1,c2 when off and c0,c1,c2,X
 *     when on (RGBA order). The X byte is dropped: colour inputs give 3 channels, YUV400 gives 1.
 *   - Padding pixels DO pass through DTC: a padded pixel has the value padding_value in every
 *     channel, in the domain of the CSC output (pixel units, e.g. 114 for YOLO grey), before
 *     normalisation. So padding_value 0 with mean 128 gives −128 × var_reci, as a letterbox of
 *     black pixels would. padding_value must be finite and within ±65504 (fp16 range).
 *   - Float outputs: the DTC result. int8/uint8 outputs: rounded to nearest (ties to even) and
 *     clamped to [−128, 127] / [0, 255].
 *   - KES_AIPP_PRECISION_BOARD_EXACT emulates the registers of BOARD-RULES §AIPP-order: mean is int16 (always),
 *     min_chn and var_reci are rounded to fp16, (x − mean − min) is rounded to fp16 and so is the
 *     product (the hardware DTC output is fp16); f32 tensors then get that fp16 value widened.
 *     KES_AIPP_PRECISION_FLOAT computes in float: ((float)(x − mean) − min) × var_reci.
 *   - Default crop size (crop: true, crop_size_w/h 0): the output tensor's W/H minus the padding,
 *     as ATC takes it from the model input shape (BOARD-RULES §AIPP-fields). src_image_size_w/h 0: the image's
 *     width/height. A non-zero src_image_size may exceed the visible size up to the strides (the
 *     board reads a tightly packed src_w × src_h buffer, BOARD-RULES §AIPP-order, so apps set it to the stride).
 *   - Every problem in a config text (syntax, unknown field, bad value, rule) is
 *     KES_ERR_INVALID_ARGUMENT: the text is an argument the caller wrote. The message names the
 *     source, line and field: "aipp.cfg line 7: load_start_pos_w must be even for YUV420SP_U8 (got 3)".
 *   - A field given twice in one block is refused (ATC takes repeated fields, but a second value is
 *     almost always a copy-paste mistake).
 *   - Padding sizes are limited to [0, 32] for static AIPP too (the dynamic limit, BOARD-RULES §AIPP-dynamic).
 *
 * Validation (kes_aipp_params_validate, also run by parse and execute) follows ATC and the active
 * board profile (board.h): 310-class boards accept only YUV420SP_U8, XRGB8888_U8, RGB888_U8 and
 * YUV400_U8; src sizes in [1, aipp_max_src_dim]; start in [0, 4095], crop size in [1, 4096];
 * YUV420SP needs even load_start_pos (and, dynamic, even crop and src sizes); resize is refused when
 * aipp_supports_resize is 0; dynamic needs max_src_image_size > 0; CSC is refused for YUV400;
 * matrix in [−32677, 32676], biases in [0, 255], mean in int16, min/var_reci within ±65504.
 *
 * Execution inputs: a kes_image whose format matches input_format — YUV420SP_U8: NV12 or NV21;
 * YUV400_U8: YUV400; RGB888_U8: RGB888 or BGR888; XRGB8888_U8: ARGB/ABGR/RGBA/BGRA8888 — with any
 * strides (as DVPP writes them). Output: a 4-D NCHW or NHWC kes_tensor (any strides) of f32, f16, i8
 * or u8, N = number of images, H/W = the AIPP output size, C ≤ the channels AIPP produces.
 *
 * Thread-safety: kes_aipp_params and kes_aipp_config are read-only after creation; any number of
 * kes_aipp_execute calls may run at once on the same params/config. A kes_aipp_dynamic object is
 * not locked: setters and kes_aipp_dynamic_execute on one object are the caller's to serialise.
 * Execution spreads rows over the pool in kes_aipp_exec_config (default: kes_thread_pool_default()).
 * Ownership: the caller owns every image, tensor and buffer it passes; config and dynamic objects
 * come in create/destroy pairs and destroy accepts NULL.
 */
#ifndef KESTREL_AIPP_H
#define KESTREL_AIPP_H

#include "kestrel/image.h"
#include "kestrel/tensor.h"
#include "kestrel/thread_pool.h"

KES_BEGIN_DECLS

/* aipp_mode (BOARD-RULES §AIPP-fields). 0 = not set: refused, as ATC refuses `undefined`. */
typedef enum kes_aipp_mode {
    KES_AIPP_MODE_UNDEFINED = 0,
    KES_AIPP_MODE_STATIC = 1,
    KES_AIPP_MODE_DYNAMIC = 2
} kes_aipp_mode;

/* input_format, numbered as ATC/aclAippInputFormat (BOARD-RULES §AIPP-fields). Only the first four run on 310-class
 * boards; the others parse (so errors can name them) and are refused by validation. */
typedef enum kes_aipp_input_format {
    KES_AIPP_FORMAT_UNDEFINED = 0,
    KES_AIPP_YUV420SP_U8 = 1,
    KES_AIPP_XRGB8888_U8 = 2,
    KES_AIPP_RGB888_U8 = 3,
    KES_AIPP_YUV400_U8 = 4,
    KES_AIPP_NC1HWC0DI_FP16 = 5,
    KES_AIPP_NC1HWC0DI_S8 = 6,
    KES_AIPP_ARGB8888_U8 = 7,
    KES_AIPP_YUYV_U8 = 8,
    KES_AIPP_YUV422SP_U8 = 9,
    KES_AIPP_AYUV444_U8 = 10,
    KES_AIPP_RAW10 = 11,
    KES_AIPP_RAW12 = 12,
    KES_AIPP_RAW16 = 13,
    KES_AIPP_RAW24 = 14,
    KES_AIPP_RGB16 = 15,
    KES_AIPP_RGB20 = 16,
    KES_AIPP_RGB24 = 17,
    KES_AIPP_RGB8_IR = 18,
    KES_AIPP_RGB16_IR = 19,
    KES_AIPP_RGB24_IR = 20
} kes_aipp_input_format;

#define KES_AIPP_NAME_MAX 128

/* One aipp_op block. Booleans are 0/1. Field names are the ATC names; arrays index the _0.._3 suffix
 * (matrix[row][col] = matrix_r<row>c<col>). */
typedef struct kes_aipp_params {
    uint32_t struct_size;        /* sizeof(kes_aipp_params): lets the struct grow without breaking the ABI */
    kes_aipp_mode aipp_mode;     /* required */
    uint32_t related_input_rank; /* model input (0-based) */
    char related_input_name[KES_AIPP_NAME_MAX]; /* "" = not given */
    uint32_t input_edge_idx;
    uint64_t max_src_image_size; /* dynamic: bytes of the largest input image, > 0 */
    int32_t support_rotation;    /* dynamic; parsed and kept, no effect on the CPU path */
    kes_aipp_input_format input_format;
    uint32_t src_image_size_w, src_image_size_h; /* 0 = the image's size */
    int32_t csc_switch, rbuv_swap_switch, ax_swap_switch, single_line_mode;
    float cpadding_value; /* parsed and kept (not used by 310 AIPP) */
    int32_t crop;
    uint32_t load_start_pos_w, load_start_pos_h;
    uint32_t crop_size_w, crop_size_h; /* 0 = output size minus padding */
    int32_t resize;
    uint32_t resize_output_w, resize_output_h;
    int32_t padding;
    uint32_t left_padding_size, right_padding_size, top_padding_size, bottom_padding_size;
    float padding_value; /* pixel value before DTC (see the choices above) */
    int32_t matrix[3][3];
    int32_t output_bias[3];
    int32_t input_bias[3];
    int32_t mean_chn[4];        /* default 0 */
    float min_chn[4];           /* default 0 */
    float var_reci_chn[4];      /* default 1.0 */
    int32_t raw_rgbir_to_f16_n; /* parsed and kept */
    int32_t matrix_set;         /* 1 when any matrix/bias field was given. With csc_switch 1 and
                                   matrix_set 0, every call applies the ATC default table of BOARD-RULES §AIPP-CSC
                                   (YUV420SP: BT.601-narrow YUV→BGR; others: BT.601-narrow RGB→YUV) */
} kes_aipp_params;

/* Defaults of BOARD-RULES §AIPP-fields, §AIPP-order: static mode unset (UNDEFINED), var_reci 1.0, everything else 0. */
KES_API void kes_aipp_params_init(kes_aipp_params* params);

/* Checks params against ATC's rules and the active board profile (see above). */
KES_API kes_status kes_aipp_params_validate(const kes_aipp_params* params);

/* Standard CSC tables of BOARD-RULES §AIPP-CSC. */
typedef enum kes_aipp_csc {
    KES_AIPP_CSC_YUV2RGB_BT601_WIDE = 0, /* JPEG */
    KES_AIPP_CSC_YUV2RGB_BT601_NARROW = 1,
    KES_AIPP_CSC_YUV2RGB_BT709_NARROW = 2,
    KES_AIPP_CSC_YUV2RGB_BT709_WIDE = 3,
    KES_AIPP_CSC_YUV2BGR_BT601_WIDE = 4,
    KES_AIPP_CSC_YUV2BGR_BT601_NARROW = 5, /* the default for csc_switch: true on YUV420SP */
    KES_AIPP_CSC_YUV2BGR_BT709_NARROW = 6,
    KES_AIPP_CSC_YUV2BGR_BT709_WIDE = 7,
    KES_AIPP_CSC_YUV2GRAY = 8,
    KES_AIPP_CSC_RGB2YUV_BT601_WIDE = 9,
    KES_AIPP_CSC_RGB2YUV_BT601_NARROW = 10, /* the default for csc_switch: true on RGB inputs */
    KES_AIPP_CSC_RGB2YUV_BT709_NARROW = 11,
    KES_AIPP_CSC_RGB2YUV_BT709_WIDE = 12
} kes_aipp_csc;

/* Sets csc_switch = 1 and the table's matrix and biases (the others 0). */
KES_API kes_status kes_aipp_params_set_csc(kes_aipp_params* params, kes_aipp_csc table);

typedef enum kes_aipp_recipe {
    KES_AIPP_RECIPE_RGB_CENTERED = 0, /* RGB, (x − 127.5) / 128 → about [−1, 1] */
    KES_AIPP_RECIPE_IMAGENET = 1,     /* RGB, (x/255 − mean) / std, mean .485/.456/.406, std .229/.224/.225 */
    KES_AIPP_RECIPE_BGR_255 = 2       /* BGR, 0..255 unchanged (Caffe-style models) */
} kes_aipp_recipe;

/* Fills *params (after kes_aipp_params_init) for static AIPP of `input_format` with the recipe's
 * colour order and normalisation. YUV420SP inputs use `yuv_table`'s range and standard (pass one
 * of the YUV2RGB tables, e.g. BT601_WIDE for JPEGD output, BT601_NARROW for VDEC output); the BGR
 * recipe uses the matching YUV2BGR table. RGB888/XRGB8888: no CSC, rbuv_swap for BGR. ImageNet
 * splits mean·255 into the integer mean_chn and the fractional min_chn (BOARD-RULES §AIPP-order: mean is int16). */
KES_API kes_status kes_aipp_params_apply_recipe(kes_aipp_params* params, kes_aipp_recipe recipe,
                                                kes_aipp_input_format input_format, kes_aipp_csc yuv_table);

/* ---- ATC config text ---------------------------------------------------------------------------- */

typedef struct kes_aipp_config kes_aipp_config; /* opaque: the aipp_op blocks of one file */

/* Parses `size` bytes of config text (need not be NUL-terminated). `source_name` names it in error
 * messages (NULL: "aipp.cfg"). Every block is validated (kes_aipp_params_validate) and csc defaults
 * are applied (BOARD-RULES §AIPP-CSC). KES_ERR_INVALID_ARGUMENT with "<name> line N: <field>: ..." on any error. */
KES_API kes_status kes_aipp_config_parse(const char* text, size_t size, const char* source_name,
                                         kes_aipp_config** out_config);
/* As parse, from a file (the file name names it in messages). KES_ERR_IO / KES_ERR_NOT_FOUND if the
 * file cannot be read. */
KES_API kes_status kes_aipp_config_load(const char* path, kes_aipp_config** out_config);
KES_API void kes_aipp_config_destroy(kes_aipp_config* config); /* NULL is a no-op */

/* Number of aipp_op blocks (≥ 1 for a parsed config). */
KES_API uint32_t kes_aipp_config_count(const kes_aipp_config* config);
/* Copies block `index` (file order) into *out_params; out_params->struct_size must be set. */
KES_API kes_status kes_aipp_config_get(const kes_aipp_config* config, uint32_t index, kes_aipp_params* out_params);
/* The block whose related_input_rank is `rank`; KES_ERR_NOT_FOUND if none. */
KES_API kes_status kes_aipp_config_find_input(const kes_aipp_config* config, uint32_t rank,
                                              kes_aipp_params* out_params);

/* Writes `count` blocks as ATC config text into buf (NUL-terminated). *out_needed (optional) gets the
 * bytes needed including the NUL; KES_ERR_INVALID_ARGUMENT if buf is too small (buf may then be NULL
 * with size 0 to ask). Every block is validated first. */
KES_API kes_status kes_aipp_params_serialize(const kes_aipp_params* params, uint32_t count, char* buf, size_t size,
                                             size_t* out_needed);

/* ---- Dynamic AIPP (BOARD-RULES §AIPP-dynamic) ------------------------------------------------------------------- */

typedef struct kes_aipp_dynamic kes_aipp_dynamic; /* like aclmdlAIPP: per-batch parameter sets */

/* `base` must be a validated dynamic block (its max_src_image_size and defaults apply to every batch
 * item); NULL = defaults with max_src_image_size unlimited. batch_size in [1, 1024]. */
KES_API kes_status kes_aipp_dynamic_create(const kes_aipp_params* base, uint64_t batch_size,
                                           kes_aipp_dynamic** out_dynamic);
KES_API void kes_aipp_dynamic_destroy(kes_aipp_dynamic* dynamic); /* NULL is a no-op */

/* Batch-wide, as in AscendCL. */
KES_API kes_status kes_aipp_dynamic_set_input_format(kes_aipp_dynamic* d, kes_aipp_input_format format);
KES_API kes_status kes_aipp_dynamic_set_src_image_size(kes_aipp_dynamic* d, int32_t w, int32_t h);
KES_API kes_status kes_aipp_dynamic_set_csc_params(kes_aipp_dynamic* d, int8_t csc_switch, int16_t r0c0, int16_t r0c1,
                                                   int16_t r0c2, int16_t r1c0, int16_t r1c1, int16_t r1c2, int16_t r2c0,
                                                   int16_t r2c1, int16_t r2c2, uint8_t output_bias0,
                                                   uint8_t output_bias1, uint8_t output_bias2, uint8_t input_bias0,
                                                   uint8_t input_bias1, uint8_t input_bias2);
KES_API kes_status kes_aipp_dynamic_set_rbuv_swap_switch(kes_aipp_dynamic* d, int8_t on);
KES_API kes_status kes_aipp_dynamic_set_ax_swap_switch(kes_aipp_dynamic* d, int8_t on);
/* Per batch item. */
KES_API kes_status kes_aipp_dynamic_set_crop_params(kes_aipp_dynamic* d, int8_t crop_switch, int32_t start_w,
                                                    int32_t start_h, int32_t crop_w, int32_t crop_h,
                                                    uint64_t batch_index);
KES_API kes_status kes_aipp_dynamic_set_padding_params(kes_aipp_dynamic* d, int8_t padding_switch, int32_t top,
                                                       int32_t bottom, int32_t left, int32_t right,
                                                       uint64_t batch_index);
KES_API kes_status kes_aipp_dynamic_set_dtc_pixel_mean(kes_aipp_dynamic* d, int16_t c0, int16_t c1, int16_t c2,
                                                       int16_t c3, uint64_t batch_index);
KES_API kes_status kes_aipp_dynamic_set_dtc_pixel_min(kes_aipp_dynamic* d, float c0, float c1, float c2, float c3,
                                                      uint64_t batch_index);
KES_API kes_status kes_aipp_dynamic_set_pixel_var_reci(kes_aipp_dynamic* d, float c0, float c1, float c2, float c3,
                                                       uint64_t batch_index);
KES_API uint64_t kes_aipp_dynamic_batch_size(const kes_aipp_dynamic* d);
/* The resolved params of batch item `batch_index` (aipp_mode dynamic). */
KES_API kes_status kes_aipp_dynamic_get_params(const kes_aipp_dynamic* d, uint64_t batch_index,
                                               kes_aipp_params* out_params);

/* ---- Execution ---------------------------------------------------------------------------------- */

typedef enum kes_aipp_precision {
    KES_AIPP_PRECISION_FLOAT = 0,      /* DTC in float with the parameters as given */
    KES_AIPP_PRECISION_BOARD_EXACT = 1 /* fp16 registers and arithmetic as on the board (see above) */
} kes_aipp_precision;

typedef enum kes_aipp_kernel {
    KES_AIPP_KERNEL_AUTO = 0,  /* the fastest available: one fused pass per row (no intermediate image),
                                  CSC and f32/f16 DTC vectorised with AVX2(+F16C) on x86 (run-time
                                  dispatch, KES_CPU_DISABLE=avx2 turns it off) or NEON on aarch64, other
                                  dtypes through per-channel 256-entry DTC tables */
    KES_AIPP_KERNEL_SCALAR = 1 /* the per-pixel reference, for tests and debugging. Both kernels give the
                                  same bits for every input, dtype, layout and precision (tested). */
} kes_aipp_kernel;

typedef struct kes_aipp_exec_config {
    uint32_t struct_size; /* sizeof(kes_aipp_exec_config) */
    kes_aipp_precision precision;
    kes_aipp_kernel kernel;
    kes_thread_pool* pool; /* NULL = kes_thread_pool_default() */
} kes_aipp_exec_config;

KES_API void kes_aipp_exec_config_init(kes_aipp_exec_config* config);

/* Output size for an image of width × height: (crop or src) + padding. Crop size 0 (output-derived)
 * cannot be predicted: KES_ERR_INVALID_ARGUMENT then. */
KES_API kes_status kes_aipp_predict_output(const kes_aipp_params* params, uint32_t width, uint32_t height,
                                           uint32_t* out_width, uint32_t* out_height, uint32_t* out_channels);

/* Runs static AIPP on `count` images into the batch tensor `output` (shape[N] == count).
 * exec_config NULL = defaults. On failure the tensor contents are unspecified. */
KES_API kes_status kes_aipp_execute(const kes_aipp_params* params, const kes_aipp_exec_config* exec_config,
                                    const kes_image* images, uint32_t count, kes_tensor* output);
/* Dynamic AIPP: image i uses batch item i's params; count ≤ batch size. Each image must fit
 * max_src_image_size and the output width the board's aipp_dynamic_max_out_width. */
KES_API kes_status kes_aipp_dynamic_execute(const kes_aipp_dynamic* d, const kes_aipp_exec_config* exec_config,
                                            const kes_image* images, uint32_t count, kes_tensor* output);

/* The row-kernel table kes_aipp_execute uses on this CPU: "avx2", "neon" or "scalar" (chosen on first
 * use; see kestrel/cpu.h). */
KES_API const char* kes_aipp_kernels_name(void);

KES_END_DECLS

#endif /* KESTREL_AIPP_H */
