// kes-convert — converts an ONNX or TFLite model into a .kom file (Kestrel's ATC), through the public
// C API of kestrel/convert.h (and, for --list-ops only, the engine's op registry: the list of ops
// must be the one this build executes, not a copy that can drift from it).
//
//   kes-convert model.onnx|model.tflite --output m.kom [options]    (kes-convert --help for the list)
//   kes-convert --list-ops                                          (the ops this build converts)
//
// Exit codes: 0 converted; 1 the model uses something Kestrel cannot convert (KES_ERR_UNSUPPORTED);
// 2 a bad command line or option value; 3 the model file is malformed or not a model at all; 4 a file
// could not be read or written (also the KES_TRACE file); 5 anything else (out of memory, internal
// error). Nothing is written unless conversion succeeds. These codes predate the tools' 0/1/2 rule and
// are kept because scripts (and --help) rely on them; 2 still means a usage error.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kestrel/board.h"
#include "kestrel/convert.h"
#include "kestrel/trace.h"
#include "kestrel/version.h"
#include "op.hpp"

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
    "  --input-format NCHW|NHWC   layout of the 4-d inputs (ONNX files do not say; TFLite is NHWC; an\n"
    "                             ONNX input read through Transpose(0,3,1,2) is NHWC; an AIPP input\n"
    "                             with no such fact NCHW, ATC's default, with a warning)\n"
    "  --insert-op-conf FILE      ATC aipp_op config: AIPP for the input of each block's related_input_rank\n"
    "  --weight-type f32|f16      store large Conv/Gemm/MatMul weights as f16 (cast back at run time)\n"
    "  --board 310|310B|host      target board profile recorded in the model (default host)\n"
    "  --soc-version SOC          Ascend310, Ascend310B4, ...: the board profile it belongs to, and ATC's\n"
    "                             --soc_version for --om (default: from the board profile)\n"
    "  --om FILE.om               also run Huawei's ATC (atc on PATH, or $ASCEND_HOME_PATH/bin/atc) with\n"
    "                             the equivalent options, writing FILE.om for the NPU (ONNX models)\n"
    "  --freeze-input NAME=FILE   make an input a constant from FILE (.npy or ONNX TensorProto .pb);\n"
    "                             repeatable\n"
    "  --max-tensor-bytes N       the largest activation tensor and arena accepted, in bytes or with\n"
    "                             K, M, G (default 4G): a bigger one is refused, naming the tensor\n"
    "  --quantize int8            post-training quantization: int8 weights (per channel), u8\n"
    "                             activations (per tensor) around Conv/Gemm/MatMul, calibrated on\n"
    "                             --calibration; prints each quantized layer's cosine vs the float model\n"
    "  --calibration DIR          .npy calibration inputs (the model input's dtype and shape, preprocessed)\n"
    "  --calibration-method M     minmax (default), percentile or entropy (KL, TensorRT's)\n"
    "  --calibration-percentile P percentile of |x| kept by --calibration-method percentile (default 99.99)\n"
    "  --keep-float LAYER,...     layers (node names, as the report prints them) left in f32\n"
    "  --format onnx|tflite       the model's format (default: detected from the file)\n"
    "  --list-ops                 print the ops this build converts and executes, one per line\n"
    "  -q, --quiet                no progress lines and no summary\n"
    "  -v, --verbose              progress lines for every model (default: large models only)\n"
    "  -h, --help                 this text\n"
    "  --version                  Kestrel's version\n"
    "\n"
    "exit codes (every Kestrel tool's): 0 converted, 2 bad arguments (also: options the model cannot\n"
    "            take, such as a missing --input-shape), 1 any other failure (unsupported op, malformed or\n"
    "            no model, a file not found or not writable, --om without atc or atc failing, the KES_TRACE\n"
    "            file); the message names which\n";

// The tools' one convention (issue 15): usage errors 2 — here also options the model cannot take
// (KES_ERR_INVALID_ARGUMENT) — and every runtime failure 1, its status named in the message.
int exit_code(kes_status st) {
    if (st == KES_OK) return 0;
    return st == KES_ERR_INVALID_ARGUMENT ? 2 : 1;
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

// --quantize's report rows, printed after the summary.
struct LayerRow {
    std::string layer, op;
    double cosine, max_abs;
};

void collect_layer(const char* layer, const char* op, const char*, double cosine, double max_abs, void* rows) {
    static_cast<std::vector<LayerRow>*>(rows)->push_back(LayerRow{layer, op, cosine, max_abs});
}

// ---- --om: Huawei's ATC with the equivalent options ------------------------------------------------

// ATC itself: `atc` on PATH, else $ASCEND_HOME_PATH/bin/atc (what CANN's set_env.sh sets up); "" if none.
std::string find_atc() {
    auto executable = [](const std::string& f) { return access(f.c_str(), X_OK) == 0; };
    if (const char* path = std::getenv("PATH")) {
        std::string dirs = path;
        size_t start = 0;
        while (start <= dirs.size()) {
            size_t end = dirs.find(':', start);
            if (end == std::string::npos) end = dirs.size();
            const std::string dir = dirs.substr(start, end - start);
            if (!dir.empty() && executable(dir + "/atc")) return dir + "/atc";
            start = end + 1;
        }
    }
    if (const char* home = std::getenv("ASCEND_HOME_PATH"))
        if (*home && executable(std::string(home) + "/bin/atc")) return std::string(home) + "/bin/atc";
    return "";
}

// ATC's --soc_version for a board profile. UNCONFIRMED: the 310B boards Kestrel targets (Atlas 200I DK
// A2, Orange Pi AIpro) report Ascend310B4 in the documentation seen; another variant takes --soc-version.
const char* soc_for_board(kes_board board) {
    switch (board) {
        case KES_BOARD_310: return "Ascend310";
        case KES_BOARD_310B: return "Ascend310B4";
        default: return nullptr;
    }
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Runs ATC with the options kes-convert was given, mapped one to one (ATC's names, BOARD-RULES §Models):
//   --framework=5 (ONNX), --model, --output (without ".om": ATC appends it), --soc_version,
//   --input_shape, --input_format, --dynamic_batch_size, --dynamic_image_size, --insert_op_conf.
// ATC has no TFLite reader; --weight-type and --freeze-input have no ATC equivalent and are refused
// rather than silently dropped (the two files would not compute the same thing). Returns the exit code.
int run_atc(const char* model, const std::string& om, const kes_convert_options& opt, const std::string& soc,
            bool freeze) {
    const std::string m = model;
    const bool onnx =
        opt.format == KES_CONVERT_FORMAT_ONNX || (opt.format == KES_CONVERT_FORMAT_AUTO && !ends_with(m, ".tflite"));
    if (!onnx) {
        std::fprintf(stderr, "kes-convert: --om: ATC does not read TFLite models (convert the ONNX model)\n");
        return 1;
    }
    if (freeze || opt.weight_type != KES_CONVERT_WEIGHTS_F32) {
        std::fprintf(stderr, "kes-convert: --om: %s has no ATC equivalent; leave it out to write both files\n",
                     freeze ? "--freeze-input" : "--weight-type");
        return 2;
    }
    const std::string atc = find_atc();
    if (atc.empty()) {
        std::fprintf(stderr,
                     "kes-convert: --om: Huawei's ATC (atc) is missing: not on PATH nor in $ASCEND_HOME_PATH/bin. "
                     "Install the CANN toolkit and source its set_env.sh, then run again; the .kom was written\n");
        return 1;
    }
    // ATC appends ".om" to --output: the file it writes is always <stem>.om.
    const std::string stem = ends_with(om, ".om") ? om.substr(0, om.size() - 3) : om;
    const std::string om_file = stem + ".om";
    std::vector<std::string> args = {atc, "--framework=5", "--model=" + m, "--output=" + stem, "--soc_version=" + soc};
    if (opt.input_shape) args.push_back(std::string("--input_shape=") + opt.input_shape);
    if (opt.input_format) args.push_back(std::string("--input_format=") + opt.input_format);
    if (opt.dynamic_batch) args.push_back(std::string("--dynamic_batch_size=") + opt.dynamic_batch);
    if (opt.dynamic_image_size) args.push_back(std::string("--dynamic_image_size=") + opt.dynamic_image_size);
    if (opt.insert_op_conf) args.push_back(std::string("--insert_op_conf=") + opt.insert_op_conf);
    std::string line;
    std::vector<char*> argv;
    for (std::string& a : args) {
        line += (line.empty() ? "" : " ") + a;
        argv.push_back(&a[0]);
    }
    argv.push_back(nullptr);
    std::fprintf(stderr, "kes-convert: running %s\n", line.c_str());
    struct stat before;
    const bool existed = stat(om_file.c_str(), &before) == 0;
    pid_t pid = 0;
    if (posix_spawn(&pid, atc.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
        std::fprintf(stderr, "kes-convert: --om: cannot start %s: %s\n", atc.c_str(), std::strerror(errno));
        return 1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "kes-convert: --om: atc failed (%s %d); its messages are above\n",
                     WIFEXITED(status) ? "exit code" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return 1;
    }
    // ATC can exit 0 having written nothing (a wrong --output directory, a full disk it did not check):
    // the file must be there, and not the one an earlier run left, before it is reported.
    struct stat written;
    const bool there = stat(om_file.c_str(), &written) == 0 && S_ISREG(written.st_mode);
    const bool untouched = there && existed && written.st_ino == before.st_ino &&
                           written.st_mtim.tv_sec == before.st_mtim.tv_sec &&
                           written.st_mtim.tv_nsec == before.st_mtim.tv_nsec && written.st_size == before.st_size;
    if (!there || untouched) {
        std::fprintf(stderr, "kes-convert: --om: atc exited 0 but wrote no %s%s; its messages are above\n",
                     om_file.c_str(), untouched ? " (the file there is an earlier one, unchanged)" : "");
        return 1;
    }
    std::printf("kes-convert: atc wrote %s for %s\n", om_file.c_str(), soc.c_str());
    return 0;
}

}  // namespace

static int run(int argc, char** argv) {
    kes_convert_options opt;
    kes_convert_options_init(&opt);
    const char* model = nullptr;
    const char* output = nullptr;
    const char* om = nullptr;
    std::string soc;
    std::string freeze;
    int verbosity = 1;  // 0 quiet, 1 normal, 2 verbose
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        // An empty value is no value: the library reads "" as "not given", so --dynamic-batch "" would
        // convert a static model in silence.
        auto value = [&](const char* name) -> const char* {
            if (i + 1 >= argc || argv[i + 1][0] == '\0') {
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
        } else if (a == "--list-ops") {
            for (const std::string& op : kes::registered_op_names()) std::printf("%s\n", op.c_str());
            return std::fflush(stdout) == 0 ? 0 : 4;
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
        } else if (a == "--board") {
            opt.board = value("--board");
        } else if (a == "--soc-version" || a == "--soc_version") {
            // A SoC name (ATC's) or, as before, a board profile name.
            const std::string v = value("--soc-version");
            if (v.rfind("Ascend", 0) == 0) {
                soc = v;
                opt.board = v.rfind("Ascend310B", 0) == 0 ? "310B" : v == "Ascend310" ? "310" : nullptr;
                if (!opt.board) {  // it was recorded for the host, in silence
                    std::fprintf(stderr,
                                 "kes-convert: --soc-version '%s' is not a chip Kestrel targets (Ascend310, "
                                 "Ascend310B1, Ascend310B4, ...)\n",
                                 v.c_str());
                    return 2;
                }
            } else {
                opt.board = argv[i];
            }
        } else if (a == "--om") {
            om = value("--om");
        } else if (a == "--freeze-input") {
            if (!freeze.empty()) freeze += ';';
            freeze += value("--freeze-input");
        } else if (a == "--max-tensor-bytes") {
            const std::string v = value("--max-tensor-bytes");
            char* end = nullptr;
            errno = 0;
            const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
            const std::string unit = end ? end : "";
            const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
            if (v[0] == '-' || end == v.c_str() || errno != 0 || shift < 0 || n == 0 || n > (~0ull >> shift)) {
                std::fprintf(stderr,
                             "kes-convert: --max-tensor-bytes takes a positive byte count, optionally with K, M or G "
                             "(got '%s')\n",
                             v.c_str());
                return 2;
            }
            opt.max_tensor_bytes = static_cast<uint64_t>(n) << shift;
        } else if (a == "--quantize") {
            opt.quantize = value("--quantize");
        } else if (a == "--calibration") {
            opt.calibration = value("--calibration");
        } else if (a == "--calibration-method") {
            opt.calibration_method = value("--calibration-method");
        } else if (a == "--calibration-percentile") {
            const char* v = value("--calibration-percentile");
            char* end = nullptr;
            opt.calibration_percentile = std::strtod(v, &end);
            if (*end != '\0' || !(opt.calibration_percentile > 0 && opt.calibration_percentile <= 100)) {
                std::fprintf(stderr, "kes-convert: --calibration-percentile takes a number in (0, 100] (got '%s')\n",
                             v);
                return 2;
            }
        } else if (a == "--keep-float") {
            opt.keep_float = value("--keep-float");
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
    if (om && soc.empty()) {
        // The SoC of the board profile named, else of the board this runs on (the runtime's, when present).
        kes_board board = kes_board_get();
        if (opt.board && kes_board_from_name(opt.board, &board) != KES_OK) board = KES_BOARD_HOST;
        if (const char* s = soc_for_board(board)) soc = s;
        if (soc.empty()) {
            std::fprintf(stderr,
                         "kes-convert: --om needs the target chip: --board 310|310B or --soc-version "
                         "Ascend310B4 (ATC's --soc_version must match the board's chip)\n");
            return 2;
        }
    }

    // Progress lines for large models (or -v): conversion of those takes long enough to want them.
    struct stat st;
    const bool large = stat(model, &st) == 0 && st.st_size >= (16 << 20);
    if (verbosity == 2 || (verbosity == 1 && large)) opt.progress = print_progress;

    std::vector<LayerRow> layers;
    opt.layer_report = collect_layer;
    opt.layer_report_user_data = &layers;
    kes_convert_summary summary;
    std::memset(&summary, 0, sizeof summary);
    summary.struct_size = sizeof summary;
    const kes_status status = kes_convert_file(model, output, &opt, &summary);
    if (status != KES_OK) {
        std::fprintf(stderr, "kes-convert: %s: %s\n", kes_status_str(status), kes_last_error());
        return exit_code(status);
    }
    if (om) {
        const int atc = run_atc(model, om, opt, soc, !freeze.empty());
        if (atc != 0) return atc;
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
    if (verbosity > 0 && !layers.empty()) {
        // The msaccucmp view of the quantization: each int8 layer against the float model.
        int width = 5;  // "layer"
        for (const LayerRow& l : layers) width = std::max(width, static_cast<int>(l.layer.size()));
        std::printf("\nquantized layers vs float, over the calibration set:\n%-*s %-8s %10s %12s\n", width, "layer",
                    "op", "cosine", "max abs err");
        double worst = 1.0;
        for (const LayerRow& l : layers) {
            std::printf("%-*s %-8s %10.6f %12.4g\n", width, l.layer.c_str(), l.op.c_str(), l.cosine, l.max_abs);
            worst = std::min(worst, l.cosine);
        }
        std::printf("%zu layers quantized, lowest cosine %.6f\n", layers.size(), worst);
    }
    return 0;
}

int main(int argc, char** argv) {
    const int rc = run(argc, argv);
    // KES_TRACE is written at exit, too late to change the exit status: a trace that cannot be written
    // would pass unnoticed (exit 0), so it is written here and its failure is the run's.
    if (kes_trace_enabled() && kes_trace_stop() != KES_OK) {
        std::fprintf(stderr, "kes-convert: KES_TRACE: %s\n", kes_last_error());
        return rc == 0 ? 1 : rc;
    }
    return rc;
}
