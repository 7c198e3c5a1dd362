/* kestrel/warp.h — affine warps of images on the CPU: the rotated crop a landmark model's input needs.
 *
 * MediaPipe's pose and hand pipelines crop a rotated rectangle of the frame (from the detector's
 * keypoints: kes_detect_roi_from_detection in kestrel/detect.h) and resample it to the landmark model's
 * input, then map the model's landmarks back through the same transform. The board's VPC crops
 * axis-aligned rectangles only (no affine warp), so this runs on the CPU; its output is an ordinary
 * VPC-strided image that feeds kes_vpc_convert_color, AIPP or kes_model_execute_images like any other.
 *
 *   kes_warp_matrix_from_rect   rotated rectangle (centre, size, rotation) + output size → matrix
 *   kes_warp_affine             input image + matrix → output image (bilinear)
 *   kes_warp_matrix_apply       a point of the output (a landmark in model-input pixels) → input pixels
 *   kes_warp_matrix_invert      the reverse map (input pixels → output), e.g. to draw a box into the crop
 *
 * Coordinates. Points are continuous pixel coordinates: pixel (i, j) covers [i, i + 1) × [j, j + 1) and
 * its centre is (i + 0.5, j + 0.5). This is the convention of kes_detection's coordinates and of
 * MediaPipe's landmarks (normalised coordinates times the size), so one matrix serves the crop and the
 * way back. A matrix built for OpenCV's warpAffine (pixel centres at integers) converts as
 * m[2] += 0.5·(1 − m[0] − m[1]), m[5] += 0.5·(1 − m[3] − m[4]).
 *
 * Chroma of 4:2:0 images is warped as its own half-resolution plane, each sample at the centre of the
 * 2×2 luma block it belongs to (the siting kes_vpc_crop_resize uses: OpenCV's resize of the chroma
 * plane as an image of its own). So a chroma sample (ci, cj) of the output takes its value at the input
 * point M·(2ci + 1, 2cj + 1), read from the input's chroma plane at half that point. A translation by
 * an even number of pixels therefore copies chroma exactly, like luma.
 *
 * Thread-safety: every function is reentrant. kes_warp_affine uses its channel as every VPC call does (one
 * thread at a time per channel, kestrel/dvpp.h) and touches only the images passed in; the matrix
 * functions are pure.
 * Ownership: the caller owns the input, the matrix and the output image (release it with
 * kes_image_release; on failure it is zeroed).
 * Errors: KES_ERR_INVALID_ARGUMENT naming the argument and the rule (a NULL pointer, a non-finite or
 * singular matrix, a size outside the board's VPC limits, a bad config); KES_ERR_UNSUPPORTED for a pixel
 * format other than NV12, NV21, RGB888 and BGR888, or an image the CPU cannot read (DVPP memory of a
 * PCIe card); KES_ERR_OUT_OF_MEMORY from the pool.
 */
#ifndef KESTREL_WARP_H
#define KESTREL_WARP_H

#include "kestrel/dvpp.h"

KES_BEGIN_DECLS

/* A 2×3 affine map from output points to input points (continuous pixel coordinates, see above):
 *   x_in = m[0]·x_out + m[1]·y_out + m[2]
 *   y_in = m[3]·x_out + m[4]·y_out + m[5] */
typedef struct kes_warp_matrix {
    float m[6];
} kes_warp_matrix;

/* The matrix that maps an out_width × out_height output onto the rectangle of width × height input
 * pixels centred at (center_x, center_y) and rotated by `rotation` radians (clockwise on the image, whose
 * y axis points down; MediaPipe's NormalizedRect.rotation): the output's top-left corner (0, 0) lands on
 * the rectangle's rotated top-left corner and (out_width, out_height) on its bottom-right one:
 *   p_in = centre + R(rotation)·((x_out / out_width − 0.5)·width, (y_out / out_height − 0.5)·height),
 *   R(θ) = [cos θ  −sin θ; sin θ  cos θ]
 * (MediaPipe's GetRotatedSubRectToRectTransformMatrix in pixels). A landmark model's output in model-input
 * pixels goes back to the image through this same matrix (kes_warp_matrix_apply). KES_ERR_INVALID_ARGUMENT
 * for a non-finite argument, a width or height ≤ 0, an output size of 0, a NULL out_matrix, or an entry
 * beyond float's range. */
KES_API kes_status kes_warp_matrix_from_rect(float center_x, float center_y, float width, float height, float rotation,
                                             uint32_t out_width, uint32_t out_height, kes_warp_matrix* out_matrix);

/* The inverse map (computed in double precision). KES_ERR_INVALID_ARGUMENT for a non-finite entry or a
 * singular matrix (|m[0]·m[4] − m[1]·m[3]| below 1e-12: it folds the plane onto a line), or an
 * inverse with an entry beyond float's range. */
KES_API kes_status kes_warp_matrix_invert(const kes_warp_matrix* matrix, kes_warp_matrix* out_inverse);

/* (x, y) through the matrix: *out_x = m[0]·x + m[1]·y + m[2], *out_y likewise (in double precision).
 * KES_ERR_INVALID_ARGUMENT for a NULL pointer or a result beyond float's range. */
KES_API kes_status kes_warp_matrix_apply(const kes_warp_matrix* matrix, float x, float y, float* out_x, float* out_y);

/* What an output sample whose input point falls outside the input image reads. */
typedef enum kes_warp_border {
    /* Taps outside the image read the fill value: a sample half outside blends into it (OpenCV's
     * BORDER_CONSTANT; MediaPipe's BORDER_ZERO with a black fill). */
    KES_WARP_BORDER_CONSTANT = 0,
    /* Taps are clamped to the nearest edge pixel (OpenCV's BORDER_REPLICATE, MediaPipe's default). */
    KES_WARP_BORDER_REPLICATE = 1
} kes_warp_border;

typedef struct kes_warp_config {
    uint32_t struct_size;           /* sizeof(kes_warp_config) (_init sets it) */
    kes_warp_border border;         /* default KES_WARP_BORDER_CONSTANT */
    uint8_t fill_y, fill_u, fill_v; /* the fill of NV12/NV21 images; default black (0, 128, 128) */
    uint8_t fill_r, fill_g, fill_b; /* the fill of RGB888/BGR888 images; default black (0, 0, 0) */
} kes_warp_config;

KES_API void kes_warp_config_init(kes_warp_config* config);

/* Warps `in` (NV12, NV21, RGB888 or BGR888; any valid strides, odd sizes included) into a new
 * out_width × out_height image of the same format, allocated from `pool` (NULL: the channel's pool,
 * else kes_mem_alloc) with the strides the channel's board gives VPC output (kes_image_strides
 * KES_STRIDE_VPC). Each output pixel (i, j) is the input sampled bilinearly at matrix·(i + 0.5, j + 0.5)
 * (the taps are the four pixels whose centres surround that point; weights in single precision, the
 * point in double), rounded to nearest; chroma as described at the top. The identity, or a
 * translation by whole pixels (even ones for 4:2:0 chroma), copies pixels exactly: a crop.
 * Rules, each KES_ERR_INVALID_ARGUMENT naming it: the input within the board's VPC input size limits and
 * the output within its VPC output limits (vpc_min_width × vpc_min_height .. vpc_max_output_*; odd sizes
 * are allowed: this is not VPC hardware); every matrix entry finite and the matrix not singular (as
 * kes_warp_matrix_invert); config (NULL: defaults) with a known border. The input must be memory the CPU
 * reads (KES_ERR_UNSUPPORTED otherwise: decode into a host pool). The call counts as a CPU call in
 * kes_dvpp_channel_get_stats. */
KES_API kes_status kes_warp_affine(kes_dvpp_channel* channel, const kes_image* in, const kes_warp_matrix* matrix,
                                   uint32_t out_width, uint32_t out_height, const kes_warp_config* config,
                                   kes_mem_pool* pool, kes_image* out_image);

KES_END_DECLS

#endif /* KESTREL_WARP_H */
