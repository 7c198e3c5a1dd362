// kestrel.Image and kestrel.PixelView: images owned by Python, and zero-copy NumPy views of their planes
// with the strides the board's units write.
#include "image.hpp"

#include <cstring>

namespace kespy {

ImageData::~ImageData() {
    kes_image_release(&image);  // frees Kestrel-allocated pixels; only clears a wrapped image
    if (borrowed || owner) {
        py::gil_scoped_acquire gil;  // the last share may drop anywhere; PyBuffer_Release needs the GIL
        borrowed.reset();
        owner = py::object();
    }
}

Image Image::adopt(const kes_image& image) {
    auto d = std::make_shared<ImageData>();
    d->image = image;
    return Image{std::move(d)};
}

ImageList::ImageList(const py::handle& obj, const char* what) {
    auto add = [&](const py::handle& item) {
        if (!py::isinstance<Image>(item)) invalid(std::string(what) + " must be kestrel.Image objects");
        const Image& img = item.cast<const Image&>();
        keep.push_back(img.get());
        images.push_back(img.get()->image);
    };
    if (obj.is_none()) invalid(std::string(what) + " is None");
    if (py::isinstance<Image>(obj)) {
        add(obj);
    } else if (py::isinstance<py::sequence>(obj) && !py::isinstance<py::str>(obj)) {
        for (const py::handle item : obj) add(item);
    } else {
        invalid(std::string(what) + " must be a kestrel.Image or a sequence of them");
    }
}

namespace {

// A NumPy-visible window on an image's bytes: a plane (rows × row bytes [× channels]) or the whole
// buffer; it keeps the pixels alive.
struct PixelView {
    std::shared_ptr<ImageData> data;
    uint8_t* ptr = nullptr;
    std::vector<ssize_t> shape, strides;
};

// Bytes per pixel group of a plane shown as a last axis: RGB 3, RGBA 4, interleaved chroma or packed
// 4:2:2 2; 0 for planes shown as rows × bytes.
uint32_t channels_of(kes_pixel_format f, uint32_t plane) {
    switch (f) {
        case KES_PIXEL_RGB888:
        case KES_PIXEL_BGR888:
        case KES_PIXEL_YUV444: return 3;
        case KES_PIXEL_ARGB8888:
        case KES_PIXEL_ABGR8888:
        case KES_PIXEL_RGBA8888:
        case KES_PIXEL_BGRA8888: return 4;
        case KES_PIXEL_YUYV422:
        case KES_PIXEL_UYVY422:
        case KES_PIXEL_YVYU422:
        case KES_PIXEL_VYUY422: return 2;
        case KES_PIXEL_NV12:
        case KES_PIXEL_NV21:
        case KES_PIXEL_YUV422SP:
        case KES_PIXEL_YVU422SP:
        case KES_PIXEL_YUV444SP:
        case KES_PIXEL_YVU444SP:
        case KES_PIXEL_YUV440SP:
        case KES_PIXEL_YVU440SP: return plane == 1 ? 2 : 0;
        default: return 0;
    }
}

void require_host(const kes_image& img) {
    if (!kes_mem_is_host_accessible(kes_image_memory(&img)))
        throw Error(KES_ERR_UNSUPPORTED,
                    "the image is in device memory the CPU cannot read (a PCIe card's DVPP output): decode into a "
                    "host pool to view it");
}

PixelView plane_view(const Image& self, uint32_t index) {
    const auto& d = self.get();
    require_host(d->image);
    kes_image_plane p;
    check(kes_image_get_plane(&d->image, index, &p), "kes_image_get_plane");
    PixelView v;
    v.data = d;
    v.ptr = p.data;
    const uint32_t ch = channels_of(d->image.format, index);
    if (ch) {
        v.shape = {p.rows, p.row_bytes / ch, ch};
        v.strides = {p.stride, ch, 1};
    } else {
        v.shape = {p.rows, p.row_bytes};
        v.strides = {p.stride, 1};
    }
    return v;
}

kes_stride_rule stride_rule_from(const std::string& name) {
    if (name == "tight") return KES_STRIDE_TIGHT;
    if (name == "vpc") return KES_STRIDE_VPC;
    if (name == "jpegd") return KES_STRIDE_JPEGD;
    if (name == "jpege") return KES_STRIDE_JPEGE;
    if (name == "pngd") return KES_STRIDE_PNGD;
    if (name == "vdec") return KES_STRIDE_VDEC;
    invalid("unknown stride rule '" + name + "' (tight, vpc, jpegd, jpege, pngd, vdec)");
}

std::pair<uint32_t, uint32_t> strides_for(kes_pixel_format f, uint32_t w, uint32_t h, const std::string& rule,
                                          const py::object& board) {
    kes_board b = kes_board_get();
    if (!board.is_none()) check(kes_board_from_name(board.cast<std::string>().c_str(), &b), "kes_board_from_name");
    uint32_t ws = 0, hs = 0;
    check(kes_image_strides(f, w, h, stride_rule_from(rule), b, &ws, &hs), "kes_image_strides");
    return {ws, hs};
}

const char* memory_name(kes_mem_backend m) {
    return m == KES_MEM_DEVICE ? "device" : m == KES_MEM_DVPP ? "dvpp" : "host";
}

}  // namespace

void register_image(py::module_& m) {
    py::class_<PixelView>(m, "PixelView", py::buffer_protocol(),
                          "A writable view of an image's bytes for numpy.asarray (no copy): a plane as rows × "
                          "row bytes (× channels for RGB, RGBA, interleaved chroma and packed 4:2:2), with the "
                          "image's row stride. It keeps the pixels alive after the image is closed.")
        .def_buffer([](PixelView& v) {
            return py::buffer_info(v.ptr, 1, py::format_descriptor<uint8_t>::format(),
                                   static_cast<ssize_t>(v.shape.size()), v.shape, v.strides, false);
        })
        .def_property_readonly("shape", [](const PixelView& v) { return py::tuple(py::cast(v.shape)); })
        .def_property_readonly("strides", [](const PixelView& v) { return py::tuple(py::cast(v.strides)); });

    py::class_<Image>(m, "Image",
                      "An image in Kestrel's layout (kes_image): the pixels in one buffer, planes one after the "
                      "other, rows width_stride bytes apart, as the board's DVPP units write them. Made by decodes, "
                      "VPC calls and video frames, by Image.alloc, or around your own buffer by Image.wrap. "
                      "close() (or a with block) frees the pixels now; views from plane() keep them until the "
                      "last view goes.")
        .def_static(
            "alloc",
            [](const py::object& format, uint32_t width, uint32_t height, uint32_t width_stride, uint32_t height_stride,
               const py::object& stride_rule) {
                const kes_pixel_format f = pixel_format_from(format);
                if (!stride_rule.is_none()) {
                    if (width_stride || height_stride)
                        invalid("give stride_rule or width_stride/height_stride, not both");
                    std::tie(width_stride, height_stride) =
                        strides_for(f, width, height, stride_rule.cast<std::string>(), py::none());
                }
                kes_image img;
                check(kes_image_alloc(&img, nullptr, f, width, height, width_stride, height_stride), "kes_image_alloc");
                std::memset(img.data, 0, img.size);  // the C contents are undefined; Python shows no stale bytes
                return Image::adopt(img);
            },
            py::arg("format"), py::arg("width"), py::arg("height"), py::arg("width_stride") = 0,
            py::arg("height_stride") = 0, py::arg("stride_rule") = py::none(),
            "A new zeroed image. Strides 0 are tight; stride_rule ('vpc', 'jpegd', 'jpege', 'pngd', 'vdec') "
            "takes the active board's rule instead.")
        .def_static(
            "wrap",
            [](const py::object& buffer, const py::object& format, uint32_t width, uint32_t height,
               uint32_t width_stride, uint32_t height_stride) {
                auto d = std::make_shared<ImageData>();
                d->borrowed = std::make_unique<Bytes>(buffer, "the image buffer");
                if (d->borrowed->info.readonly) invalid("the image buffer must be writable (bytearray, NumPy array)");
                d->owner = buffer;
                check(kes_image_wrap(&d->image, pixel_format_from(format), width, height, width_stride, height_stride,
                                     const_cast<void*>(d->borrowed->data()), d->borrowed->size()),
                      "kes_image_wrap");
                return Image{std::move(d)};
            },
            py::arg("buffer"), py::arg("format"), py::arg("width"), py::arg("height"), py::arg("width_stride") = 0,
            py::arg("height_stride") = 0,
            "An image over your writable, contiguous buffer (no copy; the buffer is kept alive). Strides 0 are "
            "tight; the buffer must hold every plane.")
        .def_static(
            "strides",
            [](const py::object& format, uint32_t width, uint32_t height, const std::string& rule,
               const py::object& board) { return strides_for(pixel_format_from(format), width, height, rule, board); },
            py::arg("format"), py::arg("width"), py::arg("height"), py::arg("rule") = "vpc",
            py::arg("board") = py::none(),
            "(width_stride, height_stride) a unit ('tight', 'vpc', 'jpegd', 'jpege', 'pngd', 'vdec') writes on "
            "a board (default: the active one).")
        .def_property_readonly("format", [](const Image& s) { return pixel_format_str(s.image().format); })
        .def_property_readonly("width", [](const Image& s) { return s.image().width; })
        .def_property_readonly("height", [](const Image& s) { return s.image().height; })
        .def_property_readonly("width_stride", [](const Image& s) { return s.image().width_stride; })
        .def_property_readonly("height_stride", [](const Image& s) { return s.image().height_stride; })
        .def_property_readonly(
            "size", [](const Image& s) { return s.image().size; }, "Bytes available at the image's buffer.")
        .def_property_readonly("planes", [](const Image& s) { return kes_pixel_format_planes(s.image().format); })
        .def_property_readonly(
            "memory", [](const Image& s) { return memory_name(kes_image_memory(&s.image())); },
            "'host', 'device' or 'dvpp': where the pixels live.")
        .def_property_readonly("closed", [](const Image& s) { return !s.data; })
        .def("plane", &plane_view, py::arg("index") = 0,
             "A zero-copy view of plane `index` for numpy.asarray: writes through it are the image's pixels.")
        .def(
            "buffer",
            [](const Image& self) {
                const auto& d = self.get();
                require_host(d->image);
                PixelView v;
                v.data = d;
                v.ptr = static_cast<uint8_t*>(d->image.data);
                v.shape = {static_cast<ssize_t>(d->image.size)};
                v.strides = {1};
                return v;
            },
            "A zero-copy view of the whole buffer (every plane and the padding), 1-D bytes.")
        .def(
            "copy",
            [](const Image& self) {
                const auto& d = self.get();
                require_host(d->image);
                kes_image out;
                check(kes_image_alloc(&out, nullptr, d->image.format, d->image.width, d->image.height,
                                      d->image.width_stride, d->image.height_stride),
                      "kes_image_alloc");
                std::memcpy(out.data, d->image.data, std::min(out.size, d->image.size));
                return Image::adopt(out);
            },
            "A copy with the same strides, in host memory.")
        .def(
            "validate", [](const Image& self) { check(kes_image_validate(&self.image()), "kes_image_validate"); },
            "Raises InvalidArgumentError unless the image is self-consistent.")
        .def("close", &Image::close, "Frees the pixels now (views taken with plane() keep theirs). Idempotent.")
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](Image& self, const py::args&) { self.close(); })
        .def("__repr__", [](const Image& s) {
            if (!s.data) return std::string("<kestrel.Image closed>");
            const kes_image& i = s.data->image;
            return "<kestrel.Image " + pixel_format_str(i.format) + " " + std::to_string(i.width) + "x" +
                   std::to_string(i.height) + " stride " + std::to_string(i.width_stride) + "x" +
                   std::to_string(i.height_stride) + ">";
        });
}

}  // namespace kespy
