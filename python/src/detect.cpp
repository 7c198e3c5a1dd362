// kestrel.detect: anchors, box decoding, NMS, the letterbox transform, face alignment, rotated regions and
// landmark decoding (kestrel/detect.h) over NumPy arrays. Detections are a structured array laid out as
// kes_detection (DETECTION_DTYPE), so they go to C and back without conversion.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "image.hpp"

namespace kespy {
namespace {

py::dtype detection_dtype() {
    static py::object dt;  // built once (the GIL serialises the first call)
    if (!dt) {
        py::list names, formats, offsets;
        auto field = [&](const char* name, const char* format, size_t offset) {
            names.append(name);
            formats.append(format);
            offsets.append(offset);
        };
        field("x0", "<f4", offsetof(kes_detection, x0));
        field("y0", "<f4", offsetof(kes_detection, y0));
        field("x1", "<f4", offsetof(kes_detection, x1));
        field("y1", "<f4", offsetof(kes_detection, y1));
        field("score", "<f4", offsetof(kes_detection, score));
        field("class_id", "<i4", offsetof(kes_detection, class_id));
        field("anchor", "<u4", offsetof(kes_detection, anchor));
        field("num_keypoints", "<u4", offsetof(kes_detection, num_keypoints));
        field("keypoints", "(17,2)<f4", offsetof(kes_detection, keypoints));
        py::dict spec;
        spec["names"] = names;
        spec["formats"] = formats;
        spec["offsets"] = offsets;
        spec["itemsize"] = sizeof(kes_detection);
        dt = py::module_::import("numpy").attr("dtype")(spec);
        dt.inc_ref();  // kept for the life of the process
    }
    return dt.cast<py::dtype>();
}

// A private, contiguous copy of the caller's detections (a structured array or one record).
py::array detections_copy(const py::object& dets) {
    if (dets.is_none()) invalid("detections are None");
    py::module_ np = py::module_::import("numpy");
    py::object a = np.attr("asarray")(dets);
    if (!a.attr("dtype").cast<py::dtype>().equal(detection_dtype()))
        invalid("detections must be an array of kestrel.detect.DETECTION_DTYPE (from decode)");
    return np.attr("array")(a.attr("reshape")(-1), detection_dtype(), py::arg("copy") = true).cast<py::array>();
}

template <class Enum>
Enum choose(const std::string& value, std::initializer_list<std::pair<const char*, Enum>> options, const char* what) {
    std::string names;
    for (const auto& o : options) {
        if (value == o.first) return o.second;
        names += (names.empty() ? "'" : ", '") + std::string(o.first) + "'";
    }
    invalid(std::string(what) + " must be one of " + names + ", got '" + value + "'");
}

}  // namespace

void register_detect(py::module_& parent) {
    py::module_ m = parent.def_submodule("detect", "Detector post-processing (kestrel/detect.h).");
    m.attr("DETECTION_DTYPE") = detection_dtype();
    m.attr("MAX_KEYPOINTS") = KES_DETECT_MAX_KEYPOINTS;

    m.def(
        "anchors",
        [](const std::pair<uint32_t, uint32_t>& input_size, const std::vector<uint32_t>& strides, float min_scale,
           float max_scale, const std::vector<float>& aspect_ratios, const std::pair<float, float>& anchor_offset,
           float interpolated_scale_aspect_ratio, bool fixed_anchor_size, bool reduce_boxes_in_lowest_layer,
           const py::object& feature_map_sizes) {
            kes_detect_anchor_config c;
            kes_detect_anchor_config_init(&c);
            c.input_width = input_size.first;
            c.input_height = input_size.second;
            c.num_layers = static_cast<uint32_t>(std::min<size_t>(strides.size(), 0xFFFFFFFFu));
            c.strides = strides.data();
            c.min_scale = min_scale;
            c.max_scale = max_scale;
            if (!aspect_ratios.empty()) {
                c.aspect_ratios = aspect_ratios.data();
                c.num_aspect_ratios = static_cast<uint32_t>(std::min<size_t>(aspect_ratios.size(), 0xFFFFFFFFu));
            }
            c.anchor_offset_x = anchor_offset.first;
            c.anchor_offset_y = anchor_offset.second;
            c.interpolated_scale_aspect_ratio = interpolated_scale_aspect_ratio;
            c.fixed_anchor_size = fixed_anchor_size;
            c.reduce_boxes_in_lowest_layer = reduce_boxes_in_lowest_layer;
            std::vector<uint32_t> fw, fh;
            if (!feature_map_sizes.is_none()) {
                for (const auto& wh : feature_map_sizes.cast<std::vector<std::pair<uint32_t, uint32_t>>>()) {
                    fw.push_back(wh.first);
                    fh.push_back(wh.second);
                }
                if (fw.size() != strides.size()) invalid("feature_map_sizes needs one (width, height) per stride");
                c.feature_map_widths = fw.data();
                c.feature_map_heights = fh.data();
            }
            size_t n = 0;
            check(kes_detect_anchors_generate(&c, nullptr, 0, &n), "kes_detect_anchors_generate");
            py::array_t<float> out({static_cast<ssize_t>(n), static_cast<ssize_t>(4)});
            static_assert(sizeof(kes_anchor) == 4 * sizeof(float), "kes_anchor is four floats");
            check(kes_detect_anchors_generate(&c, reinterpret_cast<kes_anchor*>(out.mutable_data()), n, &n),
                  "kes_detect_anchors_generate");
            return out;
        },
        py::arg("input_size"), py::arg("strides"), py::kw_only(), py::arg("min_scale") = 0.2f,
        py::arg("max_scale") = 0.95f, py::arg("aspect_ratios") = std::vector<float>(),
        py::arg("anchor_offset") = std::make_pair(0.5f, 0.5f), py::arg("interpolated_scale_aspect_ratio") = 1.0f,
        py::arg("fixed_anchor_size") = false, py::arg("reduce_boxes_in_lowest_layer") = false,
        py::arg("feature_map_sizes") = py::none(),
        "The SSD anchor grid (MediaPipe's SsdAnchorsCalculator) as float32 [N, 4] rows of (cx, cy, w, h), "
        "normalised to the input. input_size=(width, height).");

    m.def(
        "decode",
        [](const py::object& heads, const py::object& anchors, float score_threshold, const std::string& score_mode,
           const std::string& class_mode, uint32_t num_classes, uint32_t first_class, const std::string& box_coding,
           const std::string& order, const std::vector<float>& scales, uint32_t box_offset, uint32_t num_keypoints,
           uint32_t keypoint_offset, uint32_t keypoint_values, size_t score_anchor_stride, size_t score_class_stride,
           size_t box_anchor_stride, size_t box_value_stride, const py::object& capacity) {
            kes_detect_decode_config c;
            kes_detect_decode_config_init(&c);
            c.score_threshold = score_threshold;
            c.score_mode = choose<kes_detect_score_mode>(
                score_mode, {{"sigmoid", KES_DETECT_SCORE_SIGMOID}, {"raw", KES_DETECT_SCORE_RAW}}, "score_mode");
            c.class_mode = choose<kes_detect_class_mode>(
                class_mode, {{"max", KES_DETECT_CLASS_MAX}, {"each", KES_DETECT_CLASS_EACH}}, "class_mode");
            c.num_classes = num_classes;
            c.first_class = first_class;
            c.box_coding = choose<kes_detect_box_coding>(box_coding,
                                                         {{"center_size", KES_DETECT_BOX_CENTER_SIZE},
                                                          {"center_size_exp", KES_DETECT_BOX_CENTER_SIZE_EXP},
                                                          {"corners", KES_DETECT_BOX_CORNERS},
                                                          {"distances", KES_DETECT_BOX_DISTANCES}},
                                                         "box_coding");
            c.order =
                choose<kes_detect_order>(order, {{"xy", KES_DETECT_ORDER_XY}, {"yx", KES_DETECT_ORDER_YX}}, "order");
            if (scales.size() != 4) invalid("scales is (x_scale, y_scale, w_scale, h_scale)");
            c.x_scale = scales[0];
            c.y_scale = scales[1];
            c.w_scale = scales[2];
            c.h_scale = scales[3];
            c.box_offset = box_offset;
            c.num_keypoints = num_keypoints;
            c.keypoint_offset = keypoint_offset;
            c.keypoint_values = keypoint_values;
            c.score_anchor_stride = score_anchor_stride;
            c.score_class_stride = score_class_stride;
            c.box_anchor_stride = box_anchor_stride;
            c.box_value_stride = box_value_stride;
            if (num_classes == 0 || num_classes > (1u << 20)) invalid("num_classes must be 1..2^20");
            if (num_keypoints > KES_DETECT_MAX_KEYPOINTS) invalid("num_keypoints must be at most 17");
            if (keypoint_values < 2 || keypoint_values > 64) invalid("keypoint_values must be 2..64");
            if (box_offset > (1u << 20) || keypoint_offset > (1u << 20))
                invalid("box_offset/keypoint_offset too large");

            // The C call cannot see the arrays' sizes: each head is checked here to hold every value its
            // anchors' strides reach.
            const uint64_t values =
                std::max<uint64_t>(box_offset + 4ull, keypoint_offset + uint64_t(num_keypoints) * keypoint_values);
            const uint64_t sas = score_anchor_stride ? score_anchor_stride : num_classes;
            const uint64_t scs = score_class_stride ? score_class_stride : 1;
            const uint64_t bas = box_anchor_stride ? box_anchor_stride : values;
            const uint64_t bvs = box_value_stride ? box_value_stride : 1;
            if (sas > (1ull << 40) || scs > (1ull << 40) || bas > (1ull << 40) || bvs > (1ull << 40))
                invalid("strides too large");
            std::vector<py::array> keep;
            std::vector<kes_detect_head> hs;
            if (!py::isinstance<py::sequence>(heads)) invalid("heads must be a list of (scores, boxes[, count])");
            for (const py::handle h : heads) {
                if (!py::isinstance<py::sequence>(h) || (py::len(h) != 2 && py::len(h) != 3))
                    invalid("each head is (scores, boxes) or (scores, boxes, count)");
                auto t = py::reinterpret_borrow<py::sequence>(h);
                py::array s = float32_array(t[0], "scores"), b = float32_array(t[1], "boxes");
                const uint64_t ns = static_cast<uint64_t>(s.size()), nb = static_cast<uint64_t>(b.size());
                uint64_t count = py::len(h) == 3 ? t[2].cast<uint64_t>() : ns / sas;
                const uint64_t need_s = count ? (count - 1) * sas + (num_classes - 1) * scs + 1 : 0;
                const uint64_t need_b = count ? (count - 1) * bas + (values - 1) * bvs + 1 : 0;
                if (count > (1ull << 32) || need_s > ns || need_b > nb)
                    invalid("a head of " + std::to_string(count) + " anchors needs " + std::to_string(need_s) +
                            " score and " + std::to_string(need_b) + " box values, got " + std::to_string(ns) +
                            " and " + std::to_string(nb));
                hs.push_back({static_cast<const float*>(s.data()), static_cast<const float*>(b.data()),
                              static_cast<size_t>(count)});
                keep.push_back(s);
                keep.push_back(b);
            }
            uint64_t total = 0;
            for (const auto& h : hs) total += h.count;
            py::array an;  // default-constructed: an empty array, not a null handle
            const bool has_anchors = !anchors.is_none();
            if (!anchors.is_none()) {
                an = float32_array(anchors, "anchors");
                if (an.size() % 4 != 0) invalid("anchors must be [N, 4] (cx, cy, w, h)");
                if (static_cast<uint64_t>(an.size() / 4) != total)
                    invalid("anchors has " + std::to_string(an.size() / 4) + " rows; the heads have " +
                            std::to_string(total) + " anchors");
            }
            const uint64_t most = c.class_mode == KES_DETECT_CLASS_EACH ? total * num_classes : total;
            const uint64_t cap = capacity.is_none() ? most : capacity.cast<uint64_t>();
            if (cap > (1ull << 28)) invalid("capacity too large");
            py::array out(detection_dtype(), std::vector<ssize_t>{static_cast<ssize_t>(cap)});
            size_t found = 0;
            call_nogil("kes_detect_decode", [&] {
                return kes_detect_decode(
                    &c, hs.data(), hs.size(), has_anchors ? static_cast<const kes_anchor*>(an.data()) : nullptr,
                    has_anchors ? static_cast<size_t>(total) : 0, static_cast<kes_detection*>(out.mutable_data()),
                    static_cast<size_t>(cap), &found);
            });
            return out[py::slice(0, static_cast<ssize_t>(std::min<uint64_t>(found, cap)), 1)].cast<py::array>();
        },
        py::arg("heads"), py::arg("anchors") = py::none(), py::kw_only(), py::arg("score_threshold") = 0.5f,
        py::arg("score_mode") = "sigmoid", py::arg("class_mode") = "max", py::arg("num_classes") = 1,
        py::arg("first_class") = 0, py::arg("box_coding") = "center_size", py::arg("order") = "xy",
        py::arg("scales") = std::vector<float>{1, 1, 1, 1}, py::arg("box_offset") = 0, py::arg("num_keypoints") = 0,
        py::arg("keypoint_offset") = 4, py::arg("keypoint_values") = 2, py::arg("score_anchor_stride") = 0,
        py::arg("score_class_stride") = 0, py::arg("box_anchor_stride") = 0, py::arg("box_value_stride") = 0,
        py::arg("capacity") = py::none(),
        "Decodes every anchor whose score passes the threshold: heads = [(scores, boxes[, count]), ...] (float "
        "arrays, consecutive anchors), anchors from anchors() or None. Returns a DETECTION_DTYPE array in anchor "
        "order (at most `capacity`: the best by score).");

    m.def(
        "nms",
        [](const py::object& dets, float iou_threshold, const std::string& mode, uint32_t max_detections,
           bool per_class, uint32_t max_per_class) {
            kes_detect_nms_config c;
            kes_detect_nms_config_init(&c);
            c.mode = choose<kes_detect_nms_mode>(
                mode, {{"hard", KES_DETECT_NMS_HARD}, {"weighted", KES_DETECT_NMS_WEIGHTED}}, "mode");
            c.iou_threshold = iou_threshold;
            c.max_detections = max_detections;
            c.per_class = per_class;
            c.max_per_class = max_per_class;
            py::array a = detections_copy(dets);
            size_t kept = 0;
            call_nogil("kes_detect_nms", [&] {
                return kes_detect_nms(&c, static_cast<kes_detection*>(a.mutable_data()), static_cast<size_t>(a.size()),
                                      nullptr, 0, &kept);
            });
            return a[py::slice(0, static_cast<ssize_t>(kept), 1)].cast<py::array>();
        },
        py::arg("detections"), py::kw_only(), py::arg("iou_threshold") = 0.5f, py::arg("mode") = "hard",
        py::arg("max_detections") = 0, py::arg("per_class") = false, py::arg("max_per_class") = 0,
        "Greedy ('hard') or MediaPipe's 'weighted' NMS; returns the kept detections, best first (a new array).");

    m.def(
        "letterbox_transform",
        [](const std::pair<float, float>& input_size, const std::vector<float>& paste,
           const std::pair<float, float>& source_size) {
            if (paste.size() != 4) invalid("paste is (x, y, width, height) in input pixels");
            kes_detect_transform t;
            check(kes_detect_transform_letterbox(input_size.first, input_size.second, paste[0], paste[1], paste[2],
                                                 paste[3], source_size.first, source_size.second, &t),
                  "kes_detect_transform_letterbox");
            return py::make_tuple(t.scale_x, t.scale_y, t.offset_x, t.offset_y);
        },
        py::arg("input_size"), py::arg("paste"), py::arg("source_size"),
        "The map (scale_x, scale_y, offset_x, offset_y) from coordinates normalised to a model input of "
        "input_size=(w, h), into which the source (source_size=(w, h)) was pasted at paste=(x, y, w, h), back "
        "to source pixels. From Channel.letterbox's (left, top, right, bottom): paste = (left, top, right - "
        "left + 1, bottom - top + 1).");

    m.def(
        "transform",
        [](const std::vector<float>& transform, const py::object& dets) {
            if (transform.size() != 4) invalid("transform is (scale_x, scale_y, offset_x, offset_y)");
            const kes_detect_transform t{transform[0], transform[1], transform[2], transform[3]};
            py::array a = detections_copy(dets);
            check(kes_detect_transform_apply(&t, static_cast<kes_detection*>(a.mutable_data()),
                                             static_cast<size_t>(a.size())),
                  "kes_detect_transform_apply");
            return a;
        },
        py::arg("transform"), py::arg("detections"),
        "Applies a transform (letterbox_transform's) to corners and keypoints; returns a new array.");

    m.def(
        "roi_from_detection",
        [](const py::object& det, const std::string& size_from, bool rotate, uint32_t start_keypoint,
           uint32_t end_keypoint, float target_angle, std::pair<float, float> scale, std::pair<float, float> shift,
           const std::string& square) {
            py::array a = detections_copy(det);
            if (a.size() != 1) invalid("roi_from_detection takes one detection");
            kes_detect_roi_config c;
            kes_detect_roi_config_init(&c);
            c.size_from = choose<kes_detect_roi_size>(
                size_from, {{"box", KES_DETECT_ROI_SIZE_BOX}, {"keypoints", KES_DETECT_ROI_SIZE_KEYPOINTS}},
                "size_from");
            c.rotate = rotate;
            c.start_keypoint = start_keypoint;
            c.end_keypoint = end_keypoint;
            c.target_angle = target_angle;
            c.scale_x = scale.first;
            c.scale_y = scale.second;
            c.shift_x = shift.first;
            c.shift_y = shift.second;
            c.square = choose<kes_detect_roi_square>(square,
                                                     {{"none", KES_DETECT_ROI_SQUARE_NONE},
                                                      {"long", KES_DETECT_ROI_SQUARE_LONG},
                                                      {"short", KES_DETECT_ROI_SQUARE_SHORT}},
                                                     "square");
            kes_detect_rect r;
            check(kes_detect_roi_from_detection(&c, static_cast<const kes_detection*>(a.data()), &r),
                  "kes_detect_roi_from_detection");
            return py::make_tuple(r.cx, r.cy, r.width, r.height, r.rotation);
        },
        py::arg("detection"), py::kw_only(), py::arg("size_from") = "box", py::arg("rotate") = false,
        py::arg("start_keypoint") = 0, py::arg("end_keypoint") = 1, py::arg("target_angle") = 0.0f,
        py::arg("scale") = std::make_pair(1.0f, 1.0f), py::arg("shift") = std::make_pair(0.0f, 0.0f),
        py::arg("square") = "none",
        "(cx, cy, width, height, rotation) of the rotated region a landmark model crops for one detection in "
        "source pixels (MediaPipe's DetectionsToRects + RectTransformation). Hands: rotate=True, end_keypoint=2, "
        "target_angle=pi/2, scale=(2.6, 2.6), shift=(0, -0.5), square='long'.");
    m.def(
        "landmarks_decode",
        [](const py::object& values, uint32_t num_landmarks, uint32_t values_per_landmark, const py::object& to_image,
           const std::string& visibility) {
            py::array v = float32_array(values, "values");
            kes_detect_landmark_config c;
            kes_detect_landmark_config_init(&c);
            c.num_landmarks = num_landmarks;
            c.values_per_landmark = values_per_landmark;
            c.visibility_mode = choose<kes_detect_score_mode>(
                visibility, {{"sigmoid", KES_DETECT_SCORE_SIGMOID}, {"raw", KES_DETECT_SCORE_RAW}}, "visibility");
            float matrix[6];
            const bool has_matrix = !to_image.is_none();
            if (has_matrix) {
                const auto mv = to_image.cast<std::vector<float>>();
                if (mv.size() != 6) invalid("to_image is a warp matrix: six numbers");
                std::copy(mv.begin(), mv.end(), matrix);
            }
            py::array_t<float> out({static_cast<py::ssize_t>(num_landmarks), py::ssize_t(5)});
            static_assert(sizeof(kes_landmark) == 5 * sizeof(float), "kes_landmark is five floats");
            check(kes_detect_landmarks_decode(&c, static_cast<const float*>(v.data()), static_cast<size_t>(v.size()),
                                              has_matrix ? matrix : nullptr,
                                              reinterpret_cast<kes_landmark*>(out.mutable_data()), num_landmarks),
                  "kes_detect_landmarks_decode");
            return out;
        },
        py::arg("values"), py::arg("num_landmarks"), py::kw_only(), py::arg("values_per_landmark") = 3,
        py::arg("to_image") = py::none(), py::arg("visibility") = "sigmoid",
        "A landmark model's output (x, y, z[, visibility[, presence]] per landmark, model-input pixels) as an "
        "[num_landmarks, 5] float32 array of x, y, z, visibility, presence in source pixels, through to_image "
        "(the crop's warp matrix; None keeps model-input pixels).");

#ifdef KES_DETECT_ALIGN_SIZE
    m.attr("ALIGN_SIZE") = KES_DETECT_ALIGN_SIZE;
    m.def(
        "align_similarity",
        [](const py::object& det) {
            py::array a = detections_copy(det);
            if (a.size() != 1) invalid("align_similarity takes one detection");
            kes_detect_similarity s;
            check(kes_detect_align_similarity(static_cast<const kes_detection*>(a.data()), &s),
                  "kes_detect_align_similarity");
            return py::make_tuple(s.a, s.b, s.tx, s.ty);
        },
        py::arg("detection"),
        "(a, b, tx, ty) of the similarity mapping keypoints 0..3 onto ArcFace's 112x112 template.");
    m.def(
        "align_face",
        [](const py::object& det, Image& source) {
            py::array a = detections_copy(det);
            if (a.size() != 1) invalid("align_face takes one detection");
            auto keep = source.get();
            const kes_image src = keep->image;
            kes_image out{};
            const kes_detection d = *static_cast<const kes_detection*>(a.data());
            call_nogil("kes_detect_align_face", [&] { return kes_detect_align_face(&d, &src, nullptr, &out); });
            return Image::adopt(out);
        },
        py::arg("detection"), py::arg("source"),
        "The aligned 112x112 face (NV12/NV21, VPC strides) of one detection in source pixels.");
#endif
}

}  // namespace kespy
