// kes-convert — converts an ONNX or TFLite model into a .kom file (Kestrel's ATC), through the public
// C API of kestrel/convert.h only.
//
//   kes-convert model.onnx|model.tflite --output m.kom [options]    (kes-convert --help for the list)
//
// Exit codes: 0 converted; 1 the model uses something Kestrel cannot convert (KES_ERR_UNSUPPORTED);
// 2 a bad command line or option value; 3 the model file is malformed; 4 a file could not be read or
// written; 5 anything else (out of memory, internal error). Nothing is written unless conversion succeeds.
#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kestrel/convert.h"
#include "kestrel/version.h"

namespace {

const char kUsage[] =
    "usage: kes-convert MODEL.onnx|MODEL.tflite --output OUT.kom [options]\n"
    "\n"
    "Converts a model into a Kestrel .kom file (ONNX opsets 1-18, TFLite).\n"
    "\n"
    "options:\n"
    "  -o, --output FILE          the .kom file to write (required)\n"
    "  --input-shape SHAPES       input shapes, \"name:1,3,224,224;name2:1,10\" (names may contain ':')\n"
    "  --dynamic-batch GEARS      batch gears, e.g. 1,2,4,8: dim 0 of every input; the model is planned\n"
    "                             for the largest and executes any gear\n"
    "  --dynamic-image-size GEARS image size gears \"h,w;h,w\" for the inputs whose -1 dims (or, with\n"
    "                             none, whose dims 2,3 / NHWC 1,2) are height and width\n"
    "  --input-format NCHW|NHWC   layout of the 4-d inputs (ONNX files do not say; TFLite is NHWC)\n"
    "  --insert-op-conf FILE      ATC aipp_op config: AIPP for the input of each block's related_input_rank\n"
    "  --weight-type f32|f16      store large Conv/Gemm/MatMul weights as f16 (cast back at run time)\n"
    "  --board 310|310B|host      target board profile recorded in the model (default host)\n"
    "  --freeze-input NAME=FILE   make an input a constant from FILE (.npy or ONNX TensorProto .pb);\n"
    "                             repeatable\n"
    "  --format onnx|tflite       the model's format (default: detected from the file)\n"
    "  -q, --quiet                no progress lines and no summary\n"
    "  -v, --verbose              progress lines for every model (default: large models only)\n"
    "  -h, --help                 this text\n"
    "  --version                  Kestrel's version\n"
    "\n"
    "exit codes: 0 converted, 1 unsupported op or feature, 2 bad arguments, 3 malformed model,\n"
    "            4 file not found or not writable, 5 other errors\n";

int exit_code(kes_status st) {
    switch (st) {
        case KES_OK: return 0;
        case KES_ERR_UNSUPPORTED: return 1;
        case KES_ERR_INVALID_ARGUMENT: return 2;
        case KES_ERR_CORRUPT_DATA: return 3;
        case KES_ERR_IO:
        case KES_ERR_NOT_FOUND: return 4;
        default: return 5;
    }
}

void print_progress(const char* stage, size_t done, size_t total, void*) {
    if (total == 0 || done == 0)
        std::fprintf(stderr, "kes-convert: %s...\n", stage);
    else
        std::fprintf(stderr, "kes-convert: %s: %zu/%zu nodes\n", stage, done, total);
}

std::string human_bytes(uint64_t b) {
    char buf[64];
    if (b >= (uint64_t{1} << 20))
        std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
    else if (b >= 1024)
        std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
    else
        std::snprintf(buf, sizeof buf, "%" PRIu64 " B", b);
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    kes_convert_options opt;
    kes_convert_options_init(&opt);
    const char* model = nullptr;
    const char* output = nullptr;
    std::string freeze;
    int verbosity = 1;  // 0 quiet, 1 normal, 2 verbose
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const char* name) -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "kes-convert: %s needs a value (see --help)\n", name);
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "--version") {
            std::printf("kes-convert %s\n", kes_version_string());
            return 0;
        } else if (a == "-o" || a == "--output") {
            output = value("--output");
        } else if (a == "--input-shape" || a == "--input_shape") {
            opt.input_shape = value("--input-shape");
        } else if (a == "--dynamic-batch" || a == "--dynamic_batch_size") {
            opt.dynamic_batch = value("--dynamic-batch");
        } else if (a == "--dynamic-image-size" || a == "--dynamic_image_size") {
            opt.dynamic_image_size = value("--dynamic-image-size");
        } else if (a == "--input-format" || a == "--input_format") {
            opt.input_format = value("--input-format");
        } else if (a == "--insert-op-conf" || a == "--insert_op_conf") {
            opt.insert_op_conf = value("--insert-op-conf");
        } else if (a == "--weight-type") {
            const std::string w = value("--weight-type");
            if (w != "f32" && w != "f16") {
                std::fprintf(stderr, "kes-convert: --weight-type must be f32 or f16 (got '%s')\n", w.c_str());
                return 2;
            }
            opt.weight_type = w == "f16" ? KES_CONVERT_WEIGHTS_F16 : KES_CONVERT_WEIGHTS_F32;
        } else if (a == "--board" || a == "--soc_version") {
            opt.board = value("--board");
        } else if (a == "--freeze-input") {
            if (!freeze.empty()) freeze += ';';
            freeze += value("--freeze-input");
        } else if (a == "--format") {
            const std::string f = value("--format");
            if (f != "onnx" && f != "tflite") {
                std::fprintf(stderr, "kes-convert: --format must be onnx or tflite (got '%s')\n", f.c_str());
                return 2;
            }
            opt.format = f == "onnx" ? KES_CONVERT_FORMAT_ONNX : KES_CONVERT_FORMAT_TFLITE;
        } else if (a == "-q" || a == "--quiet") {
            verbosity = 0;
        } else if (a == "-v" || a == "--verbose") {
            verbosity = 2;
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "kes-convert: unknown option '%s' (see --help)\n", a.c_str());
            return 2;
        } else if (!model) {
            model = argv[i];
        } else {
            std::fprintf(stderr, "kes-convert: more than one model given ('%s' and '%s')\n", model, argv[i]);
            return 2;
        }
    }
    if (!model || !output) {
        std::fprintf(stderr, "kes-convert: %s\n%s", !model ? "no model given" : "no --output given", kUsage);
        return 2;
    }
    if (!freeze.empty()) opt.freeze_input = freeze.c_str();

    // Progress lines for large models (or -v): conversion of those takes long enough to want them.
    struct stat st;
    const bool large = stat(model, &st) == 0 && st.st_size >= (16 << 20);
    if (verbosity == 2 || (verbosity == 1 && large)) opt.progress = print_progress;

    kes_convert_summary summary;
    std::memset(&summary, 0, sizeof summary);
    summary.struct_size = sizeof summary;
    const kes_status status = kes_convert_file(model, output, &opt, &summary);
    if (status != KES_OK) {
        std::fprintf(stderr, "kes-convert: %s: %s\n", kes_status_str(status), kes_last_error());
        return exit_code(status);
    }
    if (verbosity > 0) {
        const double ratio = summary.ideal_bytes ? static_cast<double>(summary.arena_bytes) / summary.ideal_bytes : 1.0;
        std::printf("kes-convert: wrote %s (%s)\n", output, human_bytes(summary.file_bytes).c_str());
        std::printf("  ops          %" PRIu64 " (%" PRIu64 " folded, %" PRIu64 " fused, %" PRIu64
                    " removed in total)\n",
                    summary.ops, summary.nodes_folded, summary.nodes_fused, summary.nodes_removed);
        std::printf("  parameters   %" PRIu64 "\n", summary.parameters);
        std::printf("  weights      %s\n", human_bytes(summary.weight_bytes).c_str());
        std::printf("  arena        %s (ideal %s, %.2fx)\n", human_bytes(summary.arena_bytes).c_str(),
                    human_bytes(summary.ideal_bytes).c_str(), ratio);
    }
    return 0;
}
