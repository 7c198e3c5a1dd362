// kestrel.aipp: ATC aipp_op configs (parse, validate, serialise), recipes, and static AIPP execution from
// images into NumPy tensors (kestrel/aipp.h).
#include <array>
#include <cstring>
#include <functional>

#include "image.hpp"

namespace kespy {
namespace {

struct AippParams {
    kes_aipp_params p;
};

struct Field {
    const char* name;
    enum { U32, I32, F32, U64, FORMAT, MODE } kind;
    size_t offset;
};

#define KES_FIELD(name, kind) \
    { #name, Field::kind, offsetof(kes_aipp_params, name) }
const Field kFields[] = {
    KES_FIELD(aipp_mode, MODE),
    KES_FIELD(related_input_rank, U32),
    KES_FIELD(input_edge_idx, U32),
    KES_FIELD(max_src_image_size, U64),
    KES_FIELD(support_rotation, I32),
    KES_FIELD(input_format, FORMAT),
    KES_FIELD(src_image_size_w, U32),
    KES_FIELD(src_image_size_h, U32),
    KES_FIELD(csc_switch, I32),
    KES_FIELD(rbuv_swap_switch, I32),
    KES_FIELD(ax_swap_switch, I32),
    KES_FIELD(single_line_mode, I32),
    KES_FIELD(cpadding_value, F32),
    KES_FIELD(crop, I32),
    KES_FIELD(load_start_pos_w, U32),
    KES_FIELD(load_start_pos_h, U32),
    KES_FIELD(crop_size_w, U32),
    KES_FIELD(crop_size_h, U32),
    KES_FIELD(resize, I32),
    KES_FIELD(resize_output_w, U32),
    KES_FIELD(resize_output_h, U32),
    KES_FIELD(padding, I32),
    KES_FIELD(left_padding_size, U32),
    KES_FIELD(right_padding_size, U32),
    KES_FIELD(top_padding_size, U32),
    KES_FIELD(bottom_padding_size, U32),
    KES_FIELD(padding_value, F32),
    KES_FIELD(raw_rgbir_to_f16_n, I32),
    KES_FIELD(matrix_set, I32),
};
#undef KES_FIELD

const char* const kFormats[] = {
    "undefined",   "yuv420sp_u8", "xrgb8888_u8", "rgb888_u8",  "yuv400_u8", "nc1hwc0di_fp16", "nc1hwc0di_s8",
    "argb8888_u8", "yuyv_u8",     "yuv422sp_u8", "ayuv444_u8", "raw10",     "raw12",          "raw16",
    "raw24",       "rgb16",       "rgb20",       "rgb24",      "rgb8_ir",   "rgb16_ir",       "rgb24_ir"};
const char* const kModes[] = {"undefined", "static", "dynamic"};

template <size_t N>
int index_of(const char* const (&names)[N], const std::string& value, const char* what) {
    std::string v = value;
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (size_t i = 0; i < N; ++i)
        if (v == names[i]) return static_cast<int>(i);
    invalid(std::string("unknown ") + what + " '" + value + "'");
}

py::object get_field(const kes_aipp_params& p, const Field& f) {
    const char* base = reinterpret_cast<const char*>(&p) + f.offset;
    switch (f.kind) {
        case Field::U32: return py::int_(*reinterpret_cast<const uint32_t*>(base));
        case Field::I32: return py::int_(*reinterpret_cast<const int32_t*>(base));
        case Field::U64: return py::int_(*reinterpret_cast<const uint64_t*>(base));
        case Field::F32: return py::float_(*reinterpret_cast<const float*>(base));
        case Field::FORMAT: {
            const int v = *reinterpret_cast<const int*>(base);
            return py::str(v >= 0 && v <= 20 ? kFormats[v] : "unknown");
        }
        case Field::MODE: {
            const int v = *reinterpret_cast<const int*>(base);
            return py::str(v >= 0 && v <= 2 ? kModes[v] : "unknown");
        }
    }
    return py::none();
}

void set_field(kes_aipp_params& p, const Field& f, const py::handle& value) {
    char* base = reinterpret_cast<char*>(&p) + f.offset;
    switch (f.kind) {
        case Field::U32: *reinterpret_cast<uint32_t*>(base) = value.cast<uint32_t>(); break;
        case Field::I32: *reinterpret_cast<int32_t*>(base) = value.cast<int32_t>(); break;
        case Field::U64: *reinterpret_cast<uint64_t*>(base) = value.cast<uint64_t>(); break;
        case Field::F32: *reinterpret_cast<float*>(base) = value.cast<float>(); break;
        case Field::FORMAT:
            *reinterpret_cast<kes_aipp_input_format*>(base) =
                static_cast<kes_aipp_input_format>(index_of(kFormats, value.cast<std::string>(), "input_format"));
            break;
        case Field::MODE:
            *reinterpret_cast<kes_aipp_mode*>(base) =
                static_cast<kes_aipp_mode>(index_of(kModes, value.cast<std::string>(), "aipp_mode"));
            break;
    }
}

template <class T, size_t N>
void set_array(T (&dst)[N], const py::handle& value, const char* name) {
    const auto v = value.cast<std::vector<T>>();
    if (v.size() != N) invalid(std::string(name) + " takes " + std::to_string(N) + " values");
    std::copy(v.begin(), v.end(), dst);
}

py::dict to_dict(const kes_aipp_params& p) {
    py::dict d;
    for (const Field& f : kFields) d[f.name] = get_field(p, f);
    d["related_input_name"] = std::string(p.related_input_name);
    py::list matrix;
    for (const auto& row : p.matrix) matrix.append(py::make_tuple(row[0], row[1], row[2]));
    d["matrix"] = matrix;
    d["output_bias"] = py::make_tuple(p.output_bias[0], p.output_bias[1], p.output_bias[2]);
    d["input_bias"] = py::make_tuple(p.input_bias[0], p.input_bias[1], p.input_bias[2]);
    d["mean_chn"] = py::make_tuple(p.mean_chn[0], p.mean_chn[1], p.mean_chn[2], p.mean_chn[3]);
    d["min_chn"] = py::make_tuple(p.min_chn[0], p.min_chn[1], p.min_chn[2], p.min_chn[3]);
    d["var_reci_chn"] = py::make_tuple(p.var_reci_chn[0], p.var_reci_chn[1], p.var_reci_chn[2], p.var_reci_chn[3]);
    return d;
}

void update(kes_aipp_params& p, const py::dict& fields) {
    for (const auto& kv : fields) {
        const std::string key = py::str(kv.first);
        bool done = false;
        for (const Field& f : kFields)
            if (key == f.name) set_field(p, f, kv.second), done = true;
        if (done) continue;
        if (key == "related_input_name") {
            const std::string v = kv.second.cast<std::string>();
            if (v.size() >= KES_AIPP_NAME_MAX) invalid("related_input_name is longer than 127 bytes");
            std::memset(p.related_input_name, 0, sizeof p.related_input_name);
            std::memcpy(p.related_input_name, v.data(), v.size());
        } else if (key == "matrix") {
            const auto rows = kv.second.cast<std::vector<std::vector<int32_t>>>();
            if (rows.size() != 3) invalid("matrix is 3 rows of 3");
            for (size_t r = 0; r < 3; ++r) {
                if (rows[r].size() != 3) invalid("matrix is 3 rows of 3");
                std::copy(rows[r].begin(), rows[r].end(), p.matrix[r]);
            }
            p.matrix_set = 1;
        } else if (key == "output_bias") {
            set_array(p.output_bias, kv.second, "output_bias");
            p.matrix_set = 1;
        } else if (key == "input_bias") {
            set_array(p.input_bias, kv.second, "input_bias");
            p.matrix_set = 1;
        } else if (key == "mean_chn") {
            set_array(p.mean_chn, kv.second, "mean_chn");
        } else if (key == "min_chn") {
            set_array(p.min_chn, kv.second, "min_chn");
        } else if (key == "var_reci_chn") {
            set_array(p.var_reci_chn, kv.second, "var_reci_chn");
        } else {
            invalid("aipp_op has no field '" + key + "'");
        }
    }
}

std::vector<AippParams> from_config(kes_aipp_config* cfg) {
    std::vector<AippParams> out;
    const uint32_t n = kes_aipp_config_count(cfg);
    for (uint32_t i = 0; i < n; ++i) {
        AippParams a;
        std::memset(&a.p, 0, sizeof a.p);
        a.p.struct_size = sizeof a.p;
        const kes_status st = kes_aipp_config_get(cfg, i, &a.p);
        if (st != KES_OK) {
            kes_aipp_config_destroy(cfg);
            check(st, "kes_aipp_config_get");
        }
        out.push_back(a);
    }
    kes_aipp_config_destroy(cfg);
    return out;
}

// Runs AIPP (`execute` fills the tensor) on an Image or a list into a new 4-D array: the shape given,
// or (None) predicted from `predict`'s params for the first image's size.
py::array execute_into(
    const kes_aipp_params& predict, const py::object& images, const py::object& shape, const py::object& dtype,
    const std::string& layout, const std::string& precision,
    const std::function<kes_status(const kes_aipp_exec_config*, const kes_image*, uint32_t, kes_tensor*)>& execute,
    const char* call) {
    ImageList list(images, "images");
    kes_layout l = layout == "NCHW" ? KES_LAYOUT_NCHW : layout == "NHWC" ? KES_LAYOUT_NHWC : KES_LAYOUT_ND;
    if (l == KES_LAYOUT_ND) invalid("layout must be 'NCHW' or 'NHWC'");
    kes_aipp_exec_config ec;
    kes_aipp_exec_config_init(&ec);
    if (precision == "board_exact")
        ec.precision = KES_AIPP_PRECISION_BOARD_EXACT;
    else if (precision != "float")
        invalid("precision must be 'float' or 'board_exact'");
    const kes_dtype dt = kes_dtype_of(py::module_::import("numpy").attr("dtype")(dtype).cast<py::dtype>());
    std::vector<ssize_t> dims;
    if (shape.is_none()) {
        if (list.images.empty()) invalid("no images");
        uint32_t w = 0, h = 0, c = 0;
        check(kes_aipp_predict_output(&predict, list.images[0].width, list.images[0].height, &w, &h, &c),
              "kes_aipp_predict_output");
        const ssize_t n = static_cast<ssize_t>(list.images.size());
        dims = l == KES_LAYOUT_NCHW ? std::vector<ssize_t>{n, c, h, w} : std::vector<ssize_t>{n, h, w, c};
    } else {
        dims = shape.cast<std::vector<ssize_t>>();
        if (dims.size() != 4) invalid("shape must be 4-D");
        for (ssize_t d : dims)
            if (d < 0 || d > (1 << 20)) invalid("shape dimensions must be 0..2^20");
    }
    py::array out(numpy_dtype(dt), dims);
    int64_t shp[4] = {dims[0], dims[1], dims[2], dims[3]};
    kes_tensor t;
    check(kes_tensor_wrap(&t, dt, l, 4, shp, out.mutable_data(), static_cast<size_t>(out.nbytes())), "kes_tensor_wrap");
    call_nogil(call, [&] { return execute(&ec, list.images.data(), static_cast<uint32_t>(list.images.size()), &t); });
    return out;
}

// ---- dynamic AIPP ----------------------------------------------------------------------------------------

// A kes_aipp_dynamic, which the C API does not lock: its mutex serialises the setters, execute and the
// copies contexts take (acquired with the GIL released, see common.hpp).
struct DynamicState {
    std::mutex mu;
    kes_aipp_dynamic* d = nullptr;
    ~DynamicState() { kes_aipp_dynamic_destroy(d); }
};

struct Dynamic {
    std::shared_ptr<DynamicState> state;

    std::unique_lock<std::mutex> lock() const {
        if (!state) throw ClosedError("aipp.Dynamic");
        auto lk = lock_nogil(state->mu);
        if (!state->d) throw ClosedError("aipp.Dynamic");
        return lk;
    }
    kes_aipp_dynamic* handle() const { return state->d; }
    void close() {
        if (!state) return;
        auto lk = lock_nogil(state->mu);
        kes_aipp_dynamic_destroy(state->d);
        state->d = nullptr;
    }
};

// Up to n values of a per-channel setter, the rest `fill`.
template <class T, size_t N>
std::array<T, N> channels(const std::vector<T>& given, T fill, const char* what) {
    if (given.empty() || given.size() > N) invalid(std::string(what) + " takes 1 to " + std::to_string(N) + " values");
    std::array<T, N> out;
    out.fill(fill);
    std::copy(given.begin(), given.end(), out.begin());
    return out;
}

int16_t to_i16(int32_t v, const char* what) {
    if (v < INT16_MIN || v > INT16_MAX) invalid(std::string(what) + " must fit int16 (got " + std::to_string(v) + ")");
    return static_cast<int16_t>(v);
}

uint8_t to_u8(int32_t v, const char* what) {
    if (v < 0 || v > 255) invalid(std::string(what) + " must be in [0, 255] (got " + std::to_string(v) + ")");
    return static_cast<uint8_t>(v);
}

}  // namespace

kes_aipp_dynamic* copy_dynamic(const py::handle& obj) {
    if (!py::isinstance<Dynamic>(obj)) invalid("dynamic AIPP parameters are a kestrel.aipp.Dynamic (or None)");
    const Dynamic& dyn = obj.cast<const Dynamic&>();
    auto lk = dyn.lock();
    const kes_aipp_dynamic* d = dyn.handle();
    const uint64_t n = kes_aipp_dynamic_batch_size(d);
    std::vector<kes_aipp_params> items(n);
    for (uint64_t i = 0; i < n; ++i) {
        std::memset(&items[i], 0, sizeof items[i]);
        items[i].struct_size = sizeof items[i];
        check(kes_aipp_dynamic_get_params(d, i, &items[i]), "kes_aipp_dynamic_get_params");
    }
    // Item 0 as the base gives every item its batch-wide fields; the per-item ones are set again.
    kes_aipp_dynamic* copy = nullptr;
    check(kes_aipp_dynamic_create(&items[0], n, &copy), "kes_aipp_dynamic_create");
    std::unique_ptr<kes_aipp_dynamic, void (*)(kes_aipp_dynamic*)> owned(copy, kes_aipp_dynamic_destroy);
    for (uint64_t i = 1; i < n; ++i) {
        const kes_aipp_params& p = items[i];
        check(kes_aipp_dynamic_set_crop_params(
                  copy, static_cast<int8_t>(p.crop), static_cast<int32_t>(p.load_start_pos_w),
                  static_cast<int32_t>(p.load_start_pos_h), static_cast<int32_t>(p.crop_size_w),
                  static_cast<int32_t>(p.crop_size_h), i),
              "kes_aipp_dynamic_set_crop_params");
        check(kes_aipp_dynamic_set_padding_params(
                  copy, static_cast<int8_t>(p.padding), static_cast<int32_t>(p.top_padding_size),
                  static_cast<int32_t>(p.bottom_padding_size), static_cast<int32_t>(p.left_padding_size),
                  static_cast<int32_t>(p.right_padding_size), i),
              "kes_aipp_dynamic_set_padding_params");
        check(kes_aipp_dynamic_set_dtc_pixel_mean(
                  copy, static_cast<int16_t>(p.mean_chn[0]), static_cast<int16_t>(p.mean_chn[1]),
                  static_cast<int16_t>(p.mean_chn[2]), static_cast<int16_t>(p.mean_chn[3]), i),
              "kes_aipp_dynamic_set_dtc_pixel_mean");
        check(kes_aipp_dynamic_set_dtc_pixel_min(copy, p.min_chn[0], p.min_chn[1], p.min_chn[2], p.min_chn[3], i),
              "kes_aipp_dynamic_set_dtc_pixel_min");
        check(kes_aipp_dynamic_set_pixel_var_reci(copy, p.var_reci_chn[0], p.var_reci_chn[1], p.var_reci_chn[2],
                                                  p.var_reci_chn[3], i),
              "kes_aipp_dynamic_set_pixel_var_reci");
    }
    return owned.release();
}

namespace {

void register_dynamic(py::module_& m) {
    py::class_<Dynamic>(
        m, "Dynamic",
        "Dynamic AIPP parameters (kes_aipp_dynamic, the aclmdlAIPP analog): Dynamic(batch_size=1, base=None), base "
        "an aipp_mode 'dynamic' Params whose fields every batch item starts from (None: the defaults, any source "
        "size). The set_* methods mirror aclmdlSetAIPP*; input format, source size, CSC and swaps are batch-wide, "
        "crop, padding, mean, min and var_reci per batch item. Give them to a model input with "
        "Context.set_dynamic_aipp, or run them here with execute. Calls from several threads wait for each other.")
        .def(py::init([](uint64_t batch_size, const py::object& base) {
                 auto st = std::make_shared<DynamicState>();
                 const kes_aipp_params* b = nullptr;
                 if (!base.is_none()) {
                     if (!py::isinstance<AippParams>(base)) invalid("base is a kestrel.aipp.Params (or None)");
                     b = &base.cast<const AippParams&>().p;
                 }
                 check(kes_aipp_dynamic_create(b, batch_size, &st->d), "kes_aipp_dynamic_create");
                 return Dynamic{st};
             }),
             py::arg("batch_size") = 1, py::arg("base") = py::none())
        .def_property_readonly("batch_size",
                               [](const Dynamic& d) {
                                   auto lk = d.lock();
                                   return kes_aipp_dynamic_batch_size(d.handle());
                               })
        .def(
            "set_input_format",
            [](const Dynamic& d, const std::string& format) {
                const auto f = static_cast<kes_aipp_input_format>(index_of(kFormats, format, "input_format"));
                auto lk = d.lock();
                check(kes_aipp_dynamic_set_input_format(d.handle(), f), "kes_aipp_dynamic_set_input_format");
            },
            py::arg("format"), "'yuv420sp_u8', 'xrgb8888_u8', 'rgb888_u8' or 'yuv400_u8' (batch-wide).")
        .def(
            "set_src_image_size",
            [](const Dynamic& d, int32_t width, int32_t height) {
                auto lk = d.lock();
                check(kes_aipp_dynamic_set_src_image_size(d.handle(), width, height),
                      "kes_aipp_dynamic_set_src_image_size");
            },
            py::arg("width"), py::arg("height"), "The source size ((0, 0): each image's own; batch-wide).")
        .def(
            "set_csc",
            [](const Dynamic& d, const py::object& table, const py::object& matrix,
               const std::vector<int32_t>& output_bias, const std::vector<int32_t>& input_bias, bool enabled) {
                kes_aipp_params p;
                kes_aipp_params_init(&p);
                if (!table.is_none()) {
                    static const char* const tables[] = {
                        "yuv2rgb_bt601_wide", "yuv2rgb_bt601_narrow", "yuv2rgb_bt709_narrow", "yuv2rgb_bt709_wide",
                        "yuv2bgr_bt601_wide", "yuv2bgr_bt601_narrow", "yuv2bgr_bt709_narrow", "yuv2bgr_bt709_wide",
                        "yuv2gray",           "rgb2yuv_bt601_wide",   "rgb2yuv_bt601_narrow", "rgb2yuv_bt709_narrow",
                        "rgb2yuv_bt709_wide"};
                    if (!matrix.is_none()) invalid("set_csc takes a table name or a matrix, not both");
                    check(kes_aipp_params_set_csc(
                              &p, static_cast<kes_aipp_csc>(index_of(tables, table.cast<std::string>(), "csc table"))),
                          "kes_aipp_params_set_csc");
                } else if (!matrix.is_none()) {
                    update(p, py::dict(py::arg("matrix") = matrix, py::arg("output_bias") = output_bias,
                                       py::arg("input_bias") = input_bias));
                } else if (enabled) {
                    invalid("set_csc needs a table name or a matrix (or enabled=False)");
                }
                auto lk = d.lock();
                const auto& mat = p.matrix;
                check(kes_aipp_dynamic_set_csc_params(
                          d.handle(), enabled ? 1 : 0, to_i16(mat[0][0], "matrix"), to_i16(mat[0][1], "matrix"),
                          to_i16(mat[0][2], "matrix"), to_i16(mat[1][0], "matrix"), to_i16(mat[1][1], "matrix"),
                          to_i16(mat[1][2], "matrix"), to_i16(mat[2][0], "matrix"), to_i16(mat[2][1], "matrix"),
                          to_i16(mat[2][2], "matrix"), to_u8(p.output_bias[0], "output_bias"),
                          to_u8(p.output_bias[1], "output_bias"), to_u8(p.output_bias[2], "output_bias"),
                          to_u8(p.input_bias[0], "input_bias"), to_u8(p.input_bias[1], "input_bias"),
                          to_u8(p.input_bias[2], "input_bias")),
                      "kes_aipp_dynamic_set_csc_params");
            },
            py::arg("table") = py::none(), py::kw_only(), py::arg("matrix") = py::none(),
            py::arg("output_bias") = std::vector<int32_t>{0, 0, 0},
            py::arg("input_bias") = std::vector<int32_t>{0, 0, 0}, py::arg("enabled") = true,
            "Colour conversion (batch-wide): a standard table by name ('yuv2rgb_bt601_wide', ...) or matrix= "
            "(3 rows of 3) with output_bias / input_bias; enabled=False turns it off.")
        .def(
            "set_rbuv_swap",
            [](const Dynamic& d, bool on) {
                auto lk = d.lock();
                check(kes_aipp_dynamic_set_rbuv_swap_switch(d.handle(), on ? 1 : 0),
                      "kes_aipp_dynamic_set_rbuv_swap_switch");
            },
            py::arg("on"), "Swaps R/B (or U/V) before CSC (batch-wide).")
        .def(
            "set_ax_swap",
            [](const Dynamic& d, bool on) {
                auto lk = d.lock();
                check(kes_aipp_dynamic_set_ax_swap_switch(d.handle(), on ? 1 : 0),
                      "kes_aipp_dynamic_set_ax_swap_switch");
            },
            py::arg("on"), "XRGB8888 bytes as RGBA (batch-wide).")
        .def(
            "set_crop",
            [](const Dynamic& d, int32_t x, int32_t y, int32_t width, int32_t height, uint64_t batch_index,
               bool enabled) {
                auto lk = d.lock();
                check(kes_aipp_dynamic_set_crop_params(d.handle(), enabled ? 1 : 0, x, y, width, height, batch_index),
                      "kes_aipp_dynamic_set_crop_params");
            },
            py::arg("x"), py::arg("y"), py::arg("width"), py::arg("height"), py::arg("batch_index") = 0,
            py::arg("enabled") = true, "Crops batch item batch_index's image at (x, y), width x height.")
        .def(
            "set_padding",
            [](const Dynamic& d, int32_t top, int32_t bottom, int32_t left, int32_t right, uint64_t batch_index,
               bool enabled) {
                auto lk = d.lock();
                check(kes_aipp_dynamic_set_padding_params(d.handle(), enabled ? 1 : 0, top, bottom, left, right,
                                                          batch_index),
                      "kes_aipp_dynamic_set_padding_params");
            },
            py::arg("top"), py::arg("bottom"), py::arg("left"), py::arg("right"), py::arg("batch_index") = 0,
            py::arg("enabled") = true, "Pads batch item batch_index's output (each side 0..32).")
        .def(
            "set_mean",
            [](const Dynamic& d, const std::vector<int32_t>& values, uint64_t batch_index) {
                const auto v = channels<int32_t, 4>(values, 0, "mean");
                auto lk = d.lock();
                check(kes_aipp_dynamic_set_dtc_pixel_mean(d.handle(), to_i16(v[0], "mean"), to_i16(v[1], "mean"),
                                                          to_i16(v[2], "mean"), to_i16(v[3], "mean"), batch_index),
                      "kes_aipp_dynamic_set_dtc_pixel_mean");
            },
            py::arg("values"), py::arg("batch_index") = 0, "DTC mean per channel (int16; missing channels 0).")
        .def(
            "set_min",
            [](const Dynamic& d, const std::vector<float>& values, uint64_t batch_index) {
                const auto v = channels<float, 4>(values, 0.0f, "min");
                auto lk = d.lock();
                check(kes_aipp_dynamic_set_dtc_pixel_min(d.handle(), v[0], v[1], v[2], v[3], batch_index),
                      "kes_aipp_dynamic_set_dtc_pixel_min");
            },
            py::arg("values"), py::arg("batch_index") = 0, "DTC min per channel (missing channels 0).")
        .def(
            "set_var_reci",
            [](const Dynamic& d, const std::vector<float>& values, uint64_t batch_index) {
                const auto v = channels<float, 4>(values, 1.0f, "var_reci");
                auto lk = d.lock();
                check(kes_aipp_dynamic_set_pixel_var_reci(d.handle(), v[0], v[1], v[2], v[3], batch_index),
                      "kes_aipp_dynamic_set_pixel_var_reci");
            },
            py::arg("values"), py::arg("batch_index") = 0, "DTC 1/variance per channel (missing channels 1).")
        .def(
            "params",
            [](const Dynamic& d, uint64_t batch_index) {
                auto lk = d.lock();
                AippParams a;
                std::memset(&a.p, 0, sizeof a.p);
                a.p.struct_size = sizeof a.p;
                check(kes_aipp_dynamic_get_params(d.handle(), batch_index, &a.p), "kes_aipp_dynamic_get_params");
                return a;
            },
            py::arg("batch_index") = 0, "Batch item batch_index's resolved parameters as Params.")
        .def(
            "execute",
            [](const Dynamic& d, const py::object& images, const py::object& shape, const py::object& dtype,
               const std::string& layout, const std::string& precision) {
                // Held throughout (the locking rule allows taking the GIL back): parameters and images agree.
                auto lk = d.lock();
                kes_aipp_params first;
                std::memset(&first, 0, sizeof first);
                first.struct_size = sizeof first;
                check(kes_aipp_dynamic_get_params(d.handle(), 0, &first), "kes_aipp_dynamic_get_params");
                const kes_aipp_dynamic* handle = d.handle();
                return execute_into(
                    first, images, shape, dtype, layout, precision,
                    [handle](const kes_aipp_exec_config* ec, const kes_image* imgs, uint32_t n, kes_tensor* t) {
                        return kes_aipp_dynamic_execute(handle, ec, imgs, n, t);
                    },
                    "kes_aipp_dynamic_execute");
            },
            py::arg("images"), py::arg("shape") = py::none(), py::arg("dtype") = "float32", py::arg("layout") = "NCHW",
            py::arg("precision") = "float",
            "As Params.execute, image k with batch item k's parameters (at most batch_size images).")
        .def("close", &Dynamic::close, "Frees the parameters now (contexts keep their own copy). Idempotent.")
        .def_property_readonly("closed", [](const Dynamic& d) { return !d.state || !d.state->d; })
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](Dynamic& self, const py::args&) { self.close(); });
}

}  // namespace

void register_aipp(py::module_& parent) {
    py::module_ m =
        parent.def_submodule("aipp", "AIPP: ATC aipp_op configs, static and dynamic AIPP execution (kestrel/aipp.h).");
    py::class_<AippParams>(m, "Params",
                           "One aipp_op block (kes_aipp_params). Params(**fields) starts from the defaults of "
                           "spec 3.1 (aipp_mode 'static'); fields use ATC's names.")
        .def(py::init([](const py::kwargs& fields) {
            AippParams a;
            kes_aipp_params_init(&a.p);
            a.p.aipp_mode = KES_AIPP_MODE_STATIC;
            update(a.p, fields);
            return a;
        }))
        .def_static(
            "recipe",
            [](const std::string& recipe, const std::string& input_format, const std::string& csc) {
                AippParams a;
                kes_aipp_params_init(&a.p);
                const int r = recipe == "rgb_centered" ? KES_AIPP_RECIPE_RGB_CENTERED
                              : recipe == "imagenet"   ? KES_AIPP_RECIPE_IMAGENET
                              : recipe == "bgr_255"    ? KES_AIPP_RECIPE_BGR_255
                                                       : -1;
                if (r < 0) invalid("recipe must be 'rgb_centered', 'imagenet' or 'bgr_255'");
                static const char* const tables[] = {
                    "yuv2rgb_bt601_wide", "yuv2rgb_bt601_narrow", "yuv2rgb_bt709_narrow", "yuv2rgb_bt709_wide",
                    "yuv2bgr_bt601_wide", "yuv2bgr_bt601_narrow", "yuv2bgr_bt709_narrow", "yuv2bgr_bt709_wide"};
                const int t = index_of(tables, csc, "csc table");
                const int f = index_of(kFormats, input_format, "input_format");
                check(kes_aipp_params_apply_recipe(&a.p, static_cast<kes_aipp_recipe>(r),
                                                   static_cast<kes_aipp_input_format>(f), static_cast<kes_aipp_csc>(t)),
                      "kes_aipp_params_apply_recipe");
                return a;
            },
            py::arg("recipe"), py::arg("input_format") = "yuv420sp_u8", py::arg("csc") = "yuv2rgb_bt601_wide",
            "Static AIPP for a recipe: 'rgb_centered' ((x - 127.5) / 128), 'imagenet', 'bgr_255'.")
        .def(
            "to_dict", [](const AippParams& a) { return to_dict(a.p); }, "Every field by its ATC name.")
        .def(
            "update", [](AippParams& a, const py::kwargs& fields) { update(a.p, fields); }, "Sets fields by name.")
        .def(
            "validate", [](const AippParams& a) { check(kes_aipp_params_validate(&a.p), "kes_aipp_params_validate"); },
            "Raises InvalidArgumentError naming the rule ATC or the active board breaks.")
        .def(
            "serialize",
            [](const AippParams& a) {
                size_t need = 0;
                kes_aipp_params_serialize(&a.p, 1, nullptr, 0, &need);
                kes_clear_error();
                if (need == 0) check(kes_aipp_params_validate(&a.p), "kes_aipp_params_serialize");
                std::string text(need, '\0');
                check(kes_aipp_params_serialize(&a.p, 1, text.data(), need, &need), "kes_aipp_params_serialize");
                text.resize(std::strlen(text.c_str()));
                return text;
            },
            "The block as ATC config text (parse(serialize()) gives the same params).")
        .def(
            "predict_output",
            [](const AippParams& a, uint32_t width, uint32_t height) {
                uint32_t w = 0, h = 0, c = 0;
                check(kes_aipp_predict_output(&a.p, width, height, &w, &h, &c), "kes_aipp_predict_output");
                return py::make_tuple(w, h, c);
            },
            py::arg("width"), py::arg("height"), "(width, height, channels) of the output for an image of that size.")
        .def(
            "execute",
            [](const AippParams& a, const py::object& images, const py::object& shape, const py::object& dtype,
               const std::string& layout, const std::string& precision) {
                const kes_aipp_params* p = &a.p;
                return execute_into(
                    a.p, images, shape, dtype, layout, precision,
                    [p](const kes_aipp_exec_config* ec, const kes_image* imgs, uint32_t n, kes_tensor* t) {
                        return kes_aipp_execute(p, ec, imgs, n, t);
                    },
                    "kes_aipp_execute");
            },
            py::arg("images"), py::arg("shape") = py::none(), py::arg("dtype") = "float32", py::arg("layout") = "NCHW",
            py::arg("precision") = "float",
            "Runs static AIPP on an Image (or a list: the batch) into a new 4-D array (shape None: from "
            "predict_output, which needs a crop size or none).")
        .def("__repr__", [](const AippParams& a) -> std::string {
            return std::string("<kestrel.aipp.Params ") + to_str(to_dict(a.p)) + ">";
        });
    register_dynamic(m);

    m.def(
        "parse",
        [](const std::string& text, const py::object& source_name) {
            std::string name = source_name.is_none() ? std::string() : source_name.cast<std::string>();
            kes_aipp_config* cfg = nullptr;
            check(kes_aipp_config_parse(text.data(), text.size(), name.empty() ? nullptr : name.c_str(), &cfg),
                  "kes_aipp_config_parse");
            return from_config(cfg);
        },
        py::arg("text"), py::arg("source_name") = py::none(),
        "Parses ATC --insert_op_conf text: one Params per aipp_op block, validated ('<name> line N: ...' errors).");
    m.def(
        "load",
        [](const py::object& path) {
            std::string p;
            if (!as_path(path, &p)) invalid("load needs a path");
            kes_aipp_config* cfg = nullptr;
            check(kes_aipp_config_load(p.c_str(), &cfg), "kes_aipp_config_load");
            return from_config(cfg);
        },
        py::arg("path"), "As parse, from a file.");
}

}  // namespace kespy
