// kestrel.Channel (a kes_dvpp_channel: JPEG/PNG decode, JPEG encode, VPC, the affine warp), the warp matrices
// and the OSD drawing calls.
#include <cstring>

#include "image.hpp"

namespace kespy {
namespace {

// A channel is used by one thread at a time (its codec state is not shareable): every call takes its
// mutex with the GIL released, so two Python threads on one channel wait for each other, and close()
// waits for a running call.
struct ChannelState {
    std::mutex mu;
    kes_dvpp_channel* channel = nullptr;
    ~ChannelState() { kes_dvpp_channel_destroy(channel); }
};

struct Channel {
    std::shared_ptr<ChannelState> state;

    // The locked channel for one call; ClosedError after close().
    std::unique_lock<std::mutex> lock() const {
        if (!state) throw ClosedError("Channel");
        auto lk = lock_nogil(state->mu);
        if (!state->channel) throw ClosedError("Channel");
        return lk;
    }
    kes_dvpp_channel* handle() const { return state->channel; }
    void close() {
        if (!state) return;
        auto lk = lock_nogil(state->mu);
        kes_dvpp_channel_destroy(state->channel);
        state->channel = nullptr;
    }
};

kes_vpc_interp interp_from(const std::string& s) {
    if (s == "bilinear") return KES_VPC_INTERP_BILINEAR;
    if (s == "nearest") return KES_VPC_INTERP_NEAREST;
    if (s == "default") return KES_VPC_INTERP_DEFAULT;
    invalid("interp must be 'bilinear', 'nearest' or 'default', got '" + s + "'");
}

kes_vpc_csc_matrix matrix_from(const std::string& s) {
    if (s == "bt601_wide" || s == "bt601") return KES_VPC_CSC_BT601_WIDE;
    if (s == "bt601_narrow") return KES_VPC_CSC_BT601_NARROW;
    if (s == "bt709_wide") return KES_VPC_CSC_BT709_WIDE;
    if (s == "bt709_narrow" || s == "bt709") return KES_VPC_CSC_BT709_NARROW;
    invalid("matrix must be 'bt601_wide', 'bt601_narrow', 'bt709_wide' or 'bt709_narrow', got '" + s + "'");
}

// (left, top, right, bottom), inclusive, as acldvppCreateRoiConfig; None: the whole image.
bool roi_from(const py::handle& obj, kes_vpc_roi* roi, const char* what) {
    if (obj.is_none()) return false;
    if (!py::isinstance<py::sequence>(obj) || py::len(obj) != 4)
        invalid(std::string(what) + " must be (left, top, right, bottom), inclusive");
    auto seq = py::reinterpret_borrow<py::sequence>(obj);
    uint32_t v[4];
    for (size_t i = 0; i < 4; ++i) {
        const long long x = seq[i].cast<long long>();
        if (x < 0 || x > 0xFFFFFFFFll) invalid(std::string(what) + " coordinates must be 0..2^32-1");
        v[i] = static_cast<uint32_t>(x);
    }
    *roi = {v[0], v[1], v[2], v[3]};
    return true;
}

py::tuple roi_tuple(const kes_vpc_roi& r) {
    return py::make_tuple(r.left, r.top, r.right, r.bottom);
}

std::pair<uint32_t, uint32_t> size_from(const py::handle& obj) {
    if (!py::isinstance<py::sequence>(obj) || py::len(obj) != 2) invalid("size must be (width, height)");
    auto seq = py::reinterpret_borrow<py::sequence>(obj);
    const long long w = seq[0].cast<long long>(), h = seq[1].cast<long long>();
    if (w < 0 || h < 0 || w > 0xFFFFFFFFll || h > 0xFFFFFFFFll) invalid("size must be two sizes 0..2^32-1");
    return {static_cast<uint32_t>(w), static_cast<uint32_t>(h)};
}

py::dict jpeg_info_dict(const kes_jpeg_info& i) {
    static const char* const css[] = {"444", "422", "420", "gray", "440", "411"};
    py::dict d;
    d["coded_width"] = i.coded_width;
    d["coded_height"] = i.coded_height;
    d["width"] = i.width;
    d["height"] = i.height;
    d["subsampling"] = i.subsampling <= KES_JPEG_CSS_411 ? css[i.subsampling] : "unknown";
    d["components"] = i.components;
    d["orientation"] = i.orientation;
    d["precision"] = i.precision;
    d["progressive"] = i.progressive != 0;
    d["arithmetic"] = i.arithmetic != 0;
    d["hw_unsupported"] = i.hw_unsupported;
    d["output_format"] = pixel_format_str(i.output_format);
    d["output_width"] = i.output_width;
    d["output_height"] = i.output_height;
    d["width_stride"] = i.width_stride;
    d["height_stride"] = i.height_stride;
    d["output_size"] = i.output_size;
    return d;
}

// A decode from bytes-like data or a path: the path variant reads the file inside Kestrel.
template <class FromMemory, class FromFile>
Image decode(const Channel& ch, const py::object& source, FromMemory from_memory, FromFile from_file) {
    kes_image out{};
    std::string path;
    if (as_path(source, &path)) {
        auto lk = ch.lock();
        call_nogil("decode", [&] { return from_file(ch.handle(), path.c_str(), &out); });
    } else {
        Bytes bytes(source, "the encoded image");
        auto lk = ch.lock();
        call_nogil("decode", [&] { return from_memory(ch.handle(), bytes.data(), bytes.size(), &out); });
    }
    return Image::adopt(out);
}

// A kes_warp_matrix from a sequence of six numbers (m[0..5], output -> input).
kes_warp_matrix warp_matrix_from(const py::handle& obj) {
    if (!py::isinstance<py::sequence>(obj) || py::len(obj) != 6)
        invalid("a warp matrix is six numbers (m0 .. m5: x_in = m0*x + m1*y + m2, y_in = m3*x + m4*y + m5)");
    auto seq = py::reinterpret_borrow<py::sequence>(obj);
    kes_warp_matrix m;
    for (size_t i = 0; i < 6; ++i) m.m[i] = seq[i].cast<float>();
    return m;
}

py::tuple warp_matrix_tuple(const kes_warp_matrix& m) {
    return py::make_tuple(m.m[0], m.m[1], m.m[2], m.m[3], m.m[4], m.m[5]);
}

kes_osd_color color_from(const py::handle& obj) {
    if (py::isinstance<py::sequence>(obj) && (py::len(obj) == 3 || py::len(obj) == 4)) {
        auto seq = py::reinterpret_borrow<py::sequence>(obj);
        int v[4] = {0, 0, 0, 255};
        for (size_t i = 0; i < py::len(obj); ++i) {
            v[i] = seq[i].cast<int>();
            if (v[i] < 0 || v[i] > 255) invalid("colour components must be 0..255");
        }
        kes_osd_color c;
        check(kes_osd_color_from_rgb(static_cast<uint8_t>(v[0]), static_cast<uint8_t>(v[1]), static_cast<uint8_t>(v[2]),
                                     static_cast<uint8_t>(v[3]), KES_VPC_CSC_BT601_WIDE, &c),
              "kes_osd_color_from_rgb");
        return c;
    }
    invalid("a colour is (r, g, b) or (r, g, b, alpha), each 0..255");
}

// OSD draws into the image on the CPU: its pixels must not be released meanwhile, which the shared
// ImageData guarantees, and no lock is needed beyond the GIL's absence for the caller's own threads
// (drawing into one image from two threads is the caller's to serialise, as in C).
template <class F>
void draw(Image& image, const char* name, F&& f) {
    auto keep = image.get();
    kes_image img = keep->image;
    call_nogil(name, [&] { return f(&img); });
}

}  // namespace

void register_dvpp(py::module_& m) {
    py::class_<Channel>(m, "Channel",
                        "A DVPP channel (kes_dvpp_channel): JPEG/PNG decode, JPEG encode and VPC (crop, resize, "
                        "letterbox, batch crop, colour conversion) with the board profile it was created with. One "
                        "thread at a time: calls from several threads wait for each other; give each thread its "
                        "own channel to run them in parallel. The GIL is released during every call.")
        .def(py::init([](const py::object& board, bool strict, bool accept_warnings, bool apply_orientation,
                         uint64_t max_pixels, const std::string& backend) {
                 kes_dvpp_channel_config cfg;
                 kes_dvpp_channel_config_init(&cfg);
                 if (!board.is_none()) {
                     kes_board b;
                     check(kes_board_from_name(board.cast<std::string>().c_str(), &b), "kes_board_from_name");
                     cfg.board_profile = kes_board_get_profile(b);
                 }
                 cfg.strict = strict;
                 cfg.accept_warnings = accept_warnings;
                 cfg.apply_orientation = apply_orientation;
                 cfg.max_pixels = max_pixels;
                 check(kes_backend_from_name(backend.c_str(), &cfg.backend), "kes_backend_from_name");
                 auto st = std::make_shared<ChannelState>();
                 call_nogil("kes_dvpp_channel_create", [&] { return kes_dvpp_channel_create(&cfg, &st->channel); });
                 return Channel{st};
             }),
             py::kw_only(), py::arg("board") = py::none(), py::arg("strict") = false,
             py::arg("accept_warnings") = false, py::arg("apply_orientation") = true, py::arg("max_pixels") = 0,
             py::arg("backend") = "auto")
        .def("close", &Channel::close, "Destroys the channel now (waits for a running call). Idempotent.")
        .def_property_readonly("closed", [](const Channel& c) { return !c.state || !c.state->channel; })
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](Channel& self, const py::args&) { self.close(); })
        .def_property_readonly(
            "board",
            [](const Channel& c) {
                auto lk = c.lock();
                return std::string(kes_dvpp_channel_profile(c.handle())->name);
            },
            "The board profile the channel captured at creation.")
        .def(
            "stats",
            [](const Channel& c) {
                kes_dvpp_channel_stats s;
                std::memset(&s, 0, sizeof s);
                s.struct_size = sizeof s;
                auto lk = c.lock();
                check(kes_dvpp_channel_get_stats(c.handle(), &s), "kes_dvpp_channel_get_stats");
                py::dict d;
                d["backend"] = kes_backend_name(s.backend);
                d["hardware_calls"] = s.hardware_calls;
                d["cpu_calls"] = s.cpu_calls;
                d["fallbacks"] = s.fallbacks;
                return d;
            },
            "Which path served the channel's calls so far.")
        .def(
            "jpeg_info",
            [](const Channel& c, const py::object& data, const py::object& format) {
                Bytes bytes(data, "the JPEG");
                kes_jpeg_info info;
                std::memset(&info, 0, sizeof info);
                info.struct_size = sizeof info;
                const kes_pixel_format f = pixel_format_from(format);
                auto lk = c.lock();
                call_nogil("kes_jpeg_get_info",
                           [&] { return kes_jpeg_get_info(c.handle(), bytes.data(), bytes.size(), f, &info); });
                return jpeg_info_dict(info);
            },
            py::arg("data"), py::arg("format") = py::none(),
            "The JPEG's headers and what a decode to `format` would allocate (kes_jpeg_get_info), as a dict.")
        .def(
            "decode_jpeg",
            [](const Channel& c, const py::object& source, const py::object& format, const py::object& scale_to) {
                const kes_pixel_format f = pixel_format_from(format);
                if (scale_to.is_none())
                    return decode(
                        c, source,
                        [f](kes_dvpp_channel* h, const void* d, size_t n, kes_image* o) {
                            return kes_jpeg_decode(h, d, n, f, nullptr, o);
                        },
                        [f](kes_dvpp_channel* h, const char* p, kes_image* o) {
                            return kes_jpeg_decode_file(h, p, f, nullptr, o);
                        });
                const auto [tw, th] = size_from(scale_to);
                std::string path;
                if (as_path(source, &path)) invalid("decode_jpeg(scale_to=...) takes the JPEG's bytes, not a path");
                return decode(
                    c, source,
                    [f, tw = tw, th = th](kes_dvpp_channel* h, const void* d, size_t n, kes_image* o) {
                        return kes_jpeg_decode_scaled(h, d, n, f, tw, th, nullptr, o);
                    },
                    [](kes_dvpp_channel*, const char*, kes_image*) { return KES_ERR_INTERNAL; });
            },
            py::arg("source"), py::arg("format") = "nv12", py::arg("scale_to") = py::none(),
            "Decodes a JPEG (bytes-like or a path) to `format` (NV12 by default; None: the board's default) with "
            "the JPEGD strides. scale_to=(w, h): the smallest DCT scale still at least that size.")
        .def(
            "decode_png",
            [](const Channel& c, const py::object& source, const py::object& format) {
                const kes_pixel_format f = pixel_format_from(format);
                return decode(
                    c, source,
                    [f](kes_dvpp_channel* h, const void* d, size_t n, kes_image* o) {
                        return kes_png_decode(h, d, n, f, nullptr, o);
                    },
                    [f](kes_dvpp_channel* h, const char* p, kes_image* o) {
                        return kes_png_decode_file(h, p, f, nullptr, o);
                    });
            },
            py::arg("source"), py::arg("format") = "rgb888",
            "Decodes a PNG (bytes-like or a path) to RGB888 or RGBA8888 with the PNGD strides.")
        .def(
            "encode_jpeg",
            [](const Channel& c, Image& image, uint32_t quality) {
                auto keep = image.get();
                const kes_image img = keep->image;
                size_t capacity = 0, size = 0;
                auto lk = c.lock();
                check(kes_jpeg_predict_encode_size(c.handle(), &img, &capacity), "kes_jpeg_predict_encode_size");
                std::string out(capacity, '\0');
                call_nogil("kes_jpeg_encode",
                           [&] { return kes_jpeg_encode(c.handle(), &img, quality, out.data(), capacity, &size); });
                out.resize(size);
                return py::bytes(out);
            },
            py::arg("image"), py::arg("quality") = 90,
            "Encodes an NV12/NV21 (or packed 4:2:2) image as JPEG bytes; the width stride must follow the JPEGE "
            "rule (Image.strides(..., rule='jpege')).")
        .def(
            "crop_resize",
            [](const Channel& c, Image& image, const py::object& size, const py::object& roi,
               const std::string& interp) {
                kes_vpc_roi r;
                const bool has_roi = roi_from(roi, &r, "roi");
                const auto [w, h] = size_from(size);
                const kes_vpc_interp ip = interp_from(interp);
                auto keep = image.get();
                const kes_image in = keep->image;
                kes_image out{};
                auto lk = c.lock();
                call_nogil("kes_vpc_crop_resize", [&, w = w, h = h] {
                    return kes_vpc_crop_resize(c.handle(), &in, has_roi ? &r : nullptr, w, h, ip, nullptr, &out);
                });
                return Image::adopt(out);
            },
            py::arg("image"), py::arg("size"), py::arg("roi") = py::none(), py::arg("interp") = "bilinear",
            "Crops roi=(left, top, right, bottom) (inclusive; None: the whole image) of an NV12/NV21 image and "
            "resizes it to size=(width, height), VPC strides (bit-exact with OpenCV's cv::resize).")
        .def(
            "crop_and_paste",
            [](const Channel& c, Image& image, Image& canvas, const py::object& paste, const py::object& crop,
               const std::string& interp) {
                kes_vpc_roi cr, pr;
                const bool has_crop = roi_from(crop, &cr, "crop");
                if (!roi_from(paste, &pr, "paste")) invalid("paste is required: (left, top, right, bottom)");
                const kes_vpc_interp ip = interp_from(interp);
                auto keep_in = image.get();
                auto keep_canvas = canvas.get();
                const kes_image in = keep_in->image;
                kes_image cv = keep_canvas->image;
                auto lk = c.lock();
                call_nogil("kes_vpc_crop_and_paste", [&] {
                    return kes_vpc_crop_and_paste(c.handle(), &in, has_crop ? &cr : nullptr, &cv, &pr, ip);
                });
            },
            py::arg("image"), py::arg("canvas"), py::arg("paste"), py::arg("crop") = py::none(),
            py::arg("interp") = "bilinear",
            "Resizes crop (None: whole image) of `image` into the rectangle `paste` of `canvas` (in place).")
        .def(
            "letterbox",
            [](const Channel& c, Image& image, const py::object& size, const py::object& crop,
               const std::string& interp, const std::string& align, const py::object& fill) {
                kes_vpc_letterbox_config cfg;
                kes_vpc_letterbox_config_init(&cfg);
                cfg.interp = interp_from(interp);
                if (align == "center" || align == "centre")
                    cfg.align = KES_VPC_LETTERBOX_CENTER;
                else if (align == "top_left")
                    cfg.align = KES_VPC_LETTERBOX_TOP_LEFT;
                else
                    invalid("align must be 'center' or 'top_left'");
                if (!fill.is_none()) {
                    const auto t = fill.cast<std::vector<int>>();
                    if (t.size() != 3) invalid("fill is (y, u, v)");
                    for (int v : t)
                        if (v < 0 || v > 255) invalid("fill components must be 0..255");
                    cfg.fill_y = static_cast<uint8_t>(t[0]);
                    cfg.fill_u = static_cast<uint8_t>(t[1]);
                    cfg.fill_v = static_cast<uint8_t>(t[2]);
                }
                kes_vpc_roi cr, paste{};
                const bool has_crop = roi_from(crop, &cr, "crop");
                const auto [w, h] = size_from(size);
                auto keep = image.get();
                const kes_image in = keep->image;
                kes_image out{};
                auto lk = c.lock();
                call_nogil("kes_vpc_letterbox", [&, w = w, h = h] {
                    return kes_vpc_letterbox(c.handle(), &in, has_crop ? &cr : nullptr, w, h, &cfg, nullptr, &out,
                                             &paste);
                });
                return py::make_tuple(Image::adopt(out), roi_tuple(paste));
            },
            py::arg("image"), py::arg("size"), py::arg("crop") = py::none(), py::arg("interp") = "bilinear",
            py::arg("align") = "center", py::arg("fill") = py::none(),
            "Letterboxes into a new size=(width, height) image keeping the aspect ratio; returns (image, paste "
            "area (left, top, right, bottom)). fill=(y, u, v), default black.")
        .def(
            "batch_crop",
            [](const Channel& c, const py::object& images, const py::object& rois, const std::string& interp) {
                ImageList list(images, "images");
                std::vector<kes_vpc_batch_roi> br;
                if (!py::isinstance<py::sequence>(rois)) invalid("rois must be a sequence of (image_index, roi, size)");
                for (const py::handle item : rois) {
                    if (!py::isinstance<py::sequence>(item) || py::len(item) != 3)
                        invalid("each roi is (image_index, (left, top, right, bottom), (width, height))");
                    auto t = py::reinterpret_borrow<py::sequence>(item);
                    kes_vpc_batch_roi b{};
                    const long long idx = t[0].cast<long long>();
                    if (idx < 0 || idx > 0xFFFFFFFFll) invalid("image_index out of range");
                    b.image_index = static_cast<uint32_t>(idx);
                    roi_from(t[1], &b.roi, "roi");
                    std::tie(b.out_width, b.out_height) = size_from(t[2]);
                    br.push_back(b);
                }
                const kes_vpc_interp ip = interp_from(interp);
                std::vector<kes_image> out(br.size());
                auto lk = c.lock();
                call_nogil("kes_vpc_batch_crop", [&] {
                    return kes_vpc_batch_crop(c.handle(), list.images.data(), static_cast<uint32_t>(list.images.size()),
                                              br.data(), static_cast<uint32_t>(br.size()), ip, nullptr, out.data());
                });
                py::list result;
                for (const kes_image& o : out) result.append(Image::adopt(o));
                return result;
            },
            py::arg("images"), py::arg("rois"), py::arg("interp") = "bilinear",
            "Batch crop: rois = [(image_index, (left, top, right, bottom), (width, height)), ...]; all or nothing.")
        .def(
            "convert_color",
            [](const Channel& c, Image& image, const py::object& format, const std::string& matrix) {
                const kes_pixel_format f = pixel_format_from(format);
                const kes_vpc_csc_matrix mx = matrix_from(matrix);
                auto keep = image.get();
                const kes_image in = keep->image;
                kes_image out{};
                auto lk = c.lock();
                call_nogil("kes_vpc_convert_color",
                           [&] { return kes_vpc_convert_color(c.handle(), &in, f, mx, nullptr, &out); });
                return Image::adopt(out);
            },
            py::arg("image"), py::arg("format"), py::arg("matrix") = "bt601_wide",
            "Colour conversion NV12/NV21/I420 <-> RGB888/BGR888, between the 4:2:0 layouts and to YUV400.")
        .def(
            "warp_affine",
            [](const Channel& c, Image& image, const py::object& matrix, const py::object& size,
               const std::string& border, const py::object& fill) {
                kes_warp_config cfg;
                kes_warp_config_init(&cfg);
                if (border == "constant")
                    cfg.border = KES_WARP_BORDER_CONSTANT;
                else if (border == "replicate")
                    cfg.border = KES_WARP_BORDER_REPLICATE;
                else
                    invalid("border must be 'constant' or 'replicate', got '" + border + "'");
                if (!fill.is_none()) {
                    const auto t = fill.cast<std::vector<int>>();
                    if (t.size() != 3) invalid("fill is three samples: (y, u, v) or (r, g, b)");
                    for (int v : t)
                        if (v < 0 || v > 255) invalid("fill samples must be 0..255");
                    // Only the set the image's format uses is read (warp.h).
                    cfg.fill_y = cfg.fill_r = static_cast<uint8_t>(t[0]);
                    cfg.fill_u = cfg.fill_g = static_cast<uint8_t>(t[1]);
                    cfg.fill_v = cfg.fill_b = static_cast<uint8_t>(t[2]);
                }
                const kes_warp_matrix warp = warp_matrix_from(matrix);
                const auto [w, h] = size_from(size);
                auto keep = image.get();
                const kes_image in = keep->image;
                kes_image out{};
                auto lk = c.lock();
                call_nogil("kes_warp_affine", [&, w = w, h = h] {
                    return kes_warp_affine(c.handle(), &in, &warp, w, h, &cfg, nullptr, &out);
                });
                return Image::adopt(out);
            },
            py::arg("image"), py::arg("matrix"), py::arg("size"), py::arg("border") = "constant",
            py::arg("fill") = py::none(),
            "Affine warp (kestrel/warp.h, on the CPU) of an NV12/NV21/RGB888/BGR888 image into a new size=(width, "
            "height) image: output pixel (i, j) samples the input bilinearly at matrix * (i + 0.5, j + 0.5). "
            "border 'constant' (fill (y, u, v) or (r, g, b), default black) or 'replicate'.");

    m.def(
        "warp_matrix_from_rect",
        [](const py::object& center, const py::object& size, float rotation, const py::object& out_size) {
            const auto c = center.cast<std::pair<float, float>>();
            const auto s = size.cast<std::pair<float, float>>();
            const auto [ow, oh] = size_from(out_size);
            kes_warp_matrix mx;
            check(kes_warp_matrix_from_rect(c.first, c.second, s.first, s.second, rotation, ow, oh, &mx),
                  "kes_warp_matrix_from_rect");
            return warp_matrix_tuple(mx);
        },
        py::arg("center"), py::arg("size"), py::arg("rotation"), py::arg("out_size"),
        "The warp matrix (6 numbers) mapping an out_size=(width, height) output onto the rectangle of `size` "
        "centred at `center`, rotated by `rotation` radians clockwise (MediaPipe's rect): the crop's matrix, and "
        "the map of a landmark model's output back to the image.");
    m.def(
        "warp_matrix_invert",
        [](const py::object& matrix) {
            const kes_warp_matrix mx = warp_matrix_from(matrix);
            kes_warp_matrix inv;
            check(kes_warp_matrix_invert(&mx, &inv), "kes_warp_matrix_invert");
            return warp_matrix_tuple(inv);
        },
        py::arg("matrix"), "The inverse warp matrix (input pixels -> output pixels).");

    // ---- OSD ----------------------------------------------------------------------------------------
    py::module_ osd = m.def_submodule(
        "osd", "Boxes, lines, text and segmentation masks drawn into NV12/NV21 images (kestrel/osd.h).");
    osd.def(
        "color",
        [](const py::object& rgb) {
            const kes_osd_color c = color_from(rgb);
            return py::make_tuple(c.y, c.u, c.v, c.alpha);
        },
        py::arg("rgb"), "(y, u, v, alpha) the OSD writes for (r, g, b[, alpha]) (BT.601 full range).");
    osd.def(
        "draw_rect",
        [](Image& image, int32_t x, int32_t y, int32_t w, int32_t h, const py::object& color, int32_t thickness,
           bool fill) {
            const kes_osd_color c = color_from(color);
            draw(image, "kes_osd_draw_rect", [&](kes_image* img) {
                return fill ? kes_osd_fill_rect(img, x, y, w, h, c) : kes_osd_draw_rect(img, x, y, w, h, thickness, c);
            });
        },
        py::arg("image"), py::arg("x"), py::arg("y"), py::arg("width"), py::arg("height"), py::arg("color"),
        py::arg("thickness") = 2, py::arg("fill") = false,
        "Outlines (inside the rectangle) or fills a rectangle of an NV12/NV21 image; colour (r, g, b[, a]).");
    osd.def(
        "draw_line",
        [](Image& image, int32_t x0, int32_t y0, int32_t x1, int32_t y1, const py::object& color, int32_t thickness) {
            const kes_osd_color c = color_from(color);
            draw(image, "kes_osd_draw_line",
                 [&](kes_image* img) { return kes_osd_draw_line(img, x0, y0, x1, y1, thickness, c); });
        },
        py::arg("image"), py::arg("x0"), py::arg("y0"), py::arg("x1"), py::arg("y1"), py::arg("color"),
        py::arg("thickness") = 1, "A straight line with a square pen, both ends included.");
    osd.def(
        "draw_text",
        [](Image& image, int32_t x, int32_t y, const std::string& text, const py::object& color, int32_t scale,
           const py::object& background) {
            const kes_osd_color c = color_from(color);
            kes_osd_color bg{};
            const bool has_bg = !background.is_none();
            if (has_bg) bg = color_from(background);
            draw(image, "kes_osd_draw_text", [&](kes_image* img) {
                return kes_osd_draw_text(img, x, y, text.c_str(), scale, c, has_bg ? &bg : nullptr);
            });
        },
        py::arg("image"), py::arg("x"), py::arg("y"), py::arg("text"), py::arg("color") = py::make_tuple(255, 255, 255),
        py::arg("scale") = 1, py::arg("background") = py::none(), "Text in the built-in 8x16 font (ASCII).");
    osd.def(
        "text_size",
        [](const std::string& text, int32_t scale) {
            uint32_t w = 0, h = 0;
            check(kes_osd_text_size(text.c_str(), scale, &w, &h), "kes_osd_text_size");
            return py::make_tuple(w, h);
        },
        py::arg("text"), py::arg("scale") = 1, "(width, height) in pixels of text drawn at `scale`.");
    osd.def(
        "draw_boxes",
        [](Image& image, const py::object& boxes, int32_t thickness, int32_t text_scale, const py::object& text_color,
           bool label_inside) {
            kes_osd_box_style style;
            kes_osd_box_style_init(&style);
            style.thickness = thickness;
            style.text_scale = text_scale;
            style.text_color = color_from(text_color);
            style.label_inside = label_inside;
            if (!py::isinstance<py::sequence>(boxes))
                invalid("boxes must be a sequence of (x, y, w, h, colour[, label])");
            std::vector<kes_osd_box> list;
            std::vector<std::string> labels;
            labels.reserve(py::len(boxes));
            for (const py::handle item : boxes) {
                if (!py::isinstance<py::sequence>(item) || py::len(item) < 5 || py::len(item) > 6)
                    invalid("each box is (x, y, width, height, colour[, label])");
                auto t = py::reinterpret_borrow<py::sequence>(item);
                kes_osd_box b{};
                b.x = t[0].cast<int32_t>();
                b.y = t[1].cast<int32_t>();
                b.width = t[2].cast<int32_t>();
                b.height = t[3].cast<int32_t>();
                b.color = color_from(t[4]);
                labels.emplace_back(py::len(item) == 6 && !t[5].is_none() ? t[5].cast<std::string>() : std::string());
                list.push_back(b);
            }
            for (size_t i = 0; i < list.size(); ++i) list[i].label = labels[i].c_str();
            draw(image, "kes_osd_draw_boxes", [&](kes_image* img) {
                return kes_osd_draw_boxes(img, list.data(), static_cast<uint32_t>(list.size()), &style);
            });
        },
        py::arg("image"), py::arg("boxes"), py::arg("thickness") = 2, py::arg("text_scale") = 1,
        py::arg("text_color") = py::make_tuple(255, 255, 255), py::arg("label_inside") = false,
        "Labelled boxes [(x, y, width, height, (r, g, b), 'label'), ...] drawn in one call (checked first: all "
        "or nothing).");
    osd.def(
        "blend_mask",
        [](Image& image, const py::object& mask, const py::object& background, uint32_t blur_radius, bool invert) {
            py::module_ np = py::module_::import("numpy");
            py::object a = np.attr("squeeze")(np.attr("asarray")(mask));
            if (a.attr("ndim").cast<int>() != 2) invalid("mask must be (height, width) once its 1-sized axes go");
            const bool u8 = a.attr("dtype").cast<py::dtype>().equal(py::dtype("uint8"));
            py::array arr = u8 ? np.attr("ascontiguousarray")(a).cast<py::array>() : float32_array(a, "mask");
            const int64_t shape[2] = {arr.shape(0), arr.shape(1)};
            kes_tensor t;
            check(kes_tensor_wrap(&t, u8 ? KES_U8 : KES_F32, KES_LAYOUT_ND, 2, shape, arr.mutable_data(),
                                  static_cast<size_t>(arr.nbytes())),
                  "kes_tensor_wrap");
            kes_osd_mask_config cfg;
            kes_osd_mask_config_init(&cfg);
            cfg.blur_radius = blur_radius;
            cfg.invert = invert;
            std::shared_ptr<ImageData> keep_bg;
            kes_image bg_img{};
            if (py::isinstance<Image>(background)) {
                keep_bg = background.cast<Image&>().get();
                bg_img = keep_bg->image;
                cfg.background = KES_OSD_BACKGROUND_IMAGE;
                cfg.image = &bg_img;
            } else if (py::isinstance<py::str>(background)) {
                if (background.cast<std::string>() != "blur")
                    invalid("background is 'blur', a colour (r, g, b) or an Image");
                cfg.background = KES_OSD_BACKGROUND_BLUR;
            } else {
                cfg.background = KES_OSD_BACKGROUND_COLOR;
                cfg.color = color_from(background);
            }
            draw(image, "kes_osd_blend_mask", [&](kes_image* img) { return kes_osd_blend_mask(img, &t, &cfg); });
        },
        py::arg("image"), py::arg("mask"), py::arg("background") = "blur", py::arg("blur_radius") = 12,
        py::arg("invert") = false,
        "Blends an NV12/NV21 image (in place) with a background through a segmentation mask (float weights, or "
        "uint8 with 255 = 1) covering the whole image: out = m * image + (1 - m) * background, background 'blur', "
        "a colour (r, g, b) or an Image of the same format and size.");
}

}  // namespace kespy
