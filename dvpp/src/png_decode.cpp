// PNGD on the host (BOARD-RULES §PNGD): libpng decodes, this file applies the board's rules — RGB888 or
// RGBA8888 out (UNKNOWN = RGBA), PNGD strides, 32..4096 limits, > 29 bytes of input.
//
// libpng reports errors by longjmp. All of that is confined to read_png(): it holds no C++ objects
// with destructors, everything it touches lives in a PngJob passed by pointer (so no local is
// modified between setjmp and longjmp), and the C++ side only looks at the job after it returns.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "dvpp_internal.hpp"
#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"

namespace kes {
namespace {

constexpr size_t kPngMinBytes = 30;  // BOARD-RULES §PNGD: input data size must be > 29 bytes

struct PngJob {
    // in
    const uint8_t* data;
    size_t size;
    size_t pos;
    bool header_only;
    kes_pixel_format format;  // RGB888 or RGBA8888
    const kes_board_profile* profile;
    uint64_t max_pixels;
    kes_mem_pool* pool;
    // out
    kes_image* image;
    kes_png_info info;
    kes_status status;  // KES_OK, or the failure kind
    char message[256];
};

void job_fail(PngJob* job, kes_status st, const char* msg) {
    job->status = st;
    std::snprintf(job->message, sizeof job->message, "%s", msg);
}

void png_error_fn(png_structp png, png_const_charp msg) {
    auto* job = static_cast<PngJob*>(png_get_error_ptr(png));
    if (job->status == KES_OK) job_fail(job, KES_ERR_CORRUPT_DATA, msg);
    png_longjmp(png, 1);
}

void png_warning_fn(png_structp, png_const_charp) {}  // warnings (e.g. unknown sRGB profile) are benign

void png_read_fn(png_structp png, png_bytep out, size_t n) {
    auto* job = static_cast<PngJob*>(png_get_io_ptr(png));
    if (n > job->size - job->pos) png_error(png, "truncated PNG data");
    std::memcpy(out, job->data + job->pos, n);
    job->pos += n;
}

// Returns with job->status set; never throws, never leaks (png structs destroyed on every path).
void read_png(PngJob* job) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, job, png_error_fn, png_warning_fn);
    if (!png) {
        job_fail(job, KES_ERR_OUT_OF_MEMORY, "png_create_read_struct failed");
        return;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, nullptr, nullptr);
        job_fail(job, KES_ERR_OUT_OF_MEMORY, "png_create_info_struct failed");
        return;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, nullptr);
        return;  // job->status / message set by png_error_fn or before png_error
    }
    png_set_read_fn(png, job, png_read_fn);
    // Every bad CRC is an error, ancillary chunks included (dvpp.h: "bad CRCs reported").
    png_set_crc_action(png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
    // The board limit is checked below with its own message; this only stops absurd headers early.
    png_set_user_limits(png, 1u << 20, 1u << 20);
    png_set_chunk_malloc_max(png, 8u << 20);
    png_read_info(png, info);

    png_uint_32 w = 0, h = 0;
    int depth = 0, color = 0, interlace = 0;
    png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, nullptr, nullptr);
    const bool trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    job->info.width = w;
    job->info.height = h;
    job->info.bit_depth = uint32_t(depth);
    job->info.color_type = uint32_t(color);
    job->info.has_alpha = (color & PNG_COLOR_MASK_ALPHA) || trns;
    job->info.interlaced = interlace != PNG_INTERLACE_NONE;
    job->info.output_format = job->format;
    const kes_board_profile& b = *job->profile;
    if (w < b.pngd_min_dim || h < b.pngd_min_dim || w > b.pngd_max_dim || h > b.pngd_max_dim) {
        job->status = KES_ERR_INVALID_ARGUMENT;
        std::snprintf(job->message, sizeof job->message,
                      "PNG of %ux%u is outside PNGD's %u..%u per side on the %s profile (docs/BOARD-RULES.md §PNGD)",
                      unsigned(w), unsigned(h), b.pngd_min_dim, b.pngd_max_dim, b.name);
        png_destroy_read_struct(&png, &info, nullptr);
        return;
    }
    if (job->max_pixels != 0 && uint64_t(w) * h > job->max_pixels) {
        job->status = KES_ERR_INVALID_ARGUMENT;
        std::snprintf(job->message, sizeof job->message, "PNG of %ux%u exceeds the channel's max_pixels %llu",
                      unsigned(w), unsigned(h), static_cast<unsigned long long>(job->max_pixels));
        png_destroy_read_struct(&png, &info, nullptr);
        return;
    }
    kes_status st = kes_image_strides(job->format, w, h, KES_STRIDE_PNGD, b.board, &job->info.width_stride,
                                      &job->info.height_stride);
    if (st == KES_OK)
        st =
            kes_image_buffer_size(job->format, job->info.width_stride, job->info.height_stride, &job->info.output_size);
    if (st != KES_OK || job->header_only) {
        if (st != KES_OK) job_fail(job, st, kes_last_error());
        png_destroy_read_struct(&png, &info, nullptr);
        return;
    }

    // Everything to 8-bit RGB or RGBA (BOARD-RULES §PNGD outputs).
    if (depth == 16) png_set_scale_16(png);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    if (job->format == KES_PIXEL_RGBA8888) {
        if (trns) png_set_tRNS_to_alpha(png);
        if (!(color & PNG_COLOR_MASK_ALPHA) && !trns) png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
    } else {
        if (color & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
    }
    const int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    const size_t row_bytes = png_get_rowbytes(png, info);
    const size_t want = size_t(w) * (job->format == KES_PIXEL_RGBA8888 ? 4 : 3);
    if (row_bytes != want) {
        job_fail(job, KES_ERR_INTERNAL, "libpng row size does not match the output format");
        png_destroy_read_struct(&png, &info, nullptr);
        return;
    }
    st = kes_image_alloc(job->image, job->pool, job->format, w, h, job->info.width_stride, job->info.height_stride);
    if (st != KES_OK) {
        job_fail(job, st, kes_last_error());
        png_destroy_read_struct(&png, &info, nullptr);
        return;
    }
    auto* base = static_cast<uint8_t*>(job->image->data);
    for (int pass = 0; pass < passes; ++pass)
        for (png_uint_32 r = 0; r < h; ++r) png_read_row(png, base + size_t(r) * job->image->width_stride, nullptr);
    png_read_end(png, nullptr);  // checks the CRCs of the chunks after IDAT too
    png_destroy_read_struct(&png, &info, nullptr);
}

kes_pixel_format png_format(const kes_pixel_format& requested) {
    const kes_pixel_format f = format_arg(requested, "format");
    if (f == KES_PIXEL_UNKNOWN) return KES_PIXEL_RGBA8888;  // BOARD-RULES §PNGD: UNKNOWN yields RGBA
    KES_REQUIRE(f == KES_PIXEL_RGB888 || f == KES_PIXEL_RGBA8888,
                "PNGD outputs RGB888, RGBA8888 or UNKNOWN (= RGBA8888) only (docs/BOARD-RULES.md §PNGD; got %s)",
                kes_pixel_format_name(f));
    return f;
}

void run_job(kes_dvpp_channel* ch, const void* data, size_t size, kes_pixel_format format, bool header_only,
             kes_mem_pool* pool, kes_image* out, kes_png_info* info) {
    KES_REQUIRE_NOT_NULL(ch);
    KES_REQUIRE(data != nullptr || size == 0, "data is NULL");
    const kes_pixel_format f = png_format(format);
    if (size < kPngMinBytes)
        KES_FAIL(KES_ERR_CORRUPT_DATA,
                 "PNG data of %zu bytes is too short (PNGD needs > 29 bytes, docs/BOARD-RULES.md §PNGD)", size);
    if (png_sig_cmp(static_cast<png_const_bytep>(data), 0, 8) != 0)
        KES_FAIL(KES_ERR_CORRUPT_DATA, "not a PNG (bad signature)");
    PngJob job;
    std::memset(&job, 0, sizeof job);
    job.data = static_cast<const uint8_t*>(data);
    job.size = size;
    job.header_only = header_only;
    job.format = f;
    job.profile = &ch->profile;
    job.max_pixels = ch->max_pixels;
    job.pool = output_pool(ch, pool);
    job.image = out;
    job.info.struct_size = sizeof job.info;
    job.status = KES_OK;
    read_png(&job);
    if (job.status != KES_OK) {
        if (out) kes_image_release(out);
        KES_FAIL(job.status, "%s", job.message);
    }
    if (info) *info = job.info;
}

}  // namespace
}  // namespace kes

extern "C" {

kes_status kes_png_get_info(kes_dvpp_channel* channel, const void* data, size_t size, kes_pixel_format format,
                            kes_png_info* out_info) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_info);
        kes::check_out_struct(out_info, KES_STRUCT_SIZE_THROUGH(kes_png_info, output_size), "out_info", "kes_png_info");
        kes_png_info info;
        std::memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        kes::run_job(channel, data, size, format, true, nullptr, nullptr, &info);
        kes::write_struct(info, out_info);
        return KES_OK;
    });
}

kes_status kes_png_decode(kes_dvpp_channel* channel, const void* data, size_t size, kes_pixel_format format,
                          kes_mem_pool* pool, kes_image* out_image) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "png_decode");
        KES_REQUIRE_NOT_NULL(out_image);
        std::memset(out_image, 0, sizeof *out_image);
        kes::run_job(channel, data, size, format, false, pool, out_image, nullptr);
        return KES_OK;
    });
}

kes_status kes_png_decode_file(kes_dvpp_channel* channel, const char* path, kes_pixel_format format, kes_mem_pool* pool,
                               kes_image* out_image) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("dvpp", "png_decode_file");  // reading the file is part of the cost
        KES_REQUIRE_NOT_NULL(out_image);
        std::memset(out_image, 0, sizeof *out_image);
        const std::vector<uint8_t> bytes = kes::read_file(path);
        kes::run_job(channel, bytes.data(), bytes.size(), format, false, pool, out_image, nullptr);
        return KES_OK;
    });
}

}  // extern "C"
