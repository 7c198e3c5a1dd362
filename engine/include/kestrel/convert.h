/* kestrel/convert.h — convert an ONNX or TFLite model into a .kom file (Kestrel's ATC).
 *
 * The converter reads the model (ONNX opsets 1–18 with its own protobuf reader; TFLite flatbuffers),
 * rewrites it into Kestrel's op set (ONNX names, opset-17 semantics), then runs, in this order:
 *   input overrides (--input-shape, --freeze-input, --dynamic-batch, --dynamic-image-size) →
 *   constant folding with shape inference (Shape/Gather/ConstantOfShape chains disappear) → shape
 *   inference → layout choice (regions of Conv/pool/elementwise ops between Transposes switch to NHWC
 *   when that leaves fewer Transposes, e.g. tf2onnx's around every Conv) → fusions (explicit padding
 *   for auto_pad SAME, BatchNorm and per-channel Mul/Add/Sub/Div folded into Conv/Gemm weights,
 *   activations fused into Conv/ConvTranspose/Gemm/MatMul/Add/Sub/Mul/Div, TFLite's spelled-out
 *   PReLU) → dead-node removal → weight storage type → AIPP configs → a shape check of every gear →
 *   the .kom writer (static memory plan, 128-byte aligned weights). With quantize "int8", the float
 *   graph is quantized (below) after the folding of BatchNorm, before the layout choice.
 * kes-convert (engine/tools) is this API on the command line; its options mirror the fields below.
 *
 * Errors: KES_ERR_CORRUPT_DATA for a malformed model file (naming what and where), KES_ERR_UNSUPPORTED
 * for an op or feature Kestrel cannot convert (naming the op, the node and, for ONNX, the opset),
 * KES_ERR_INVALID_ARGUMENT for bad options (an unknown input name, a malformed shape list, an input whose
 * shape stays unknown), KES_ERR_NOT_FOUND / KES_ERR_IO for files. On any error nothing is written:
 * kes_convert_file writes a temporary file beside the output and renames it only when complete.
 *
 * ONNX node order: the nodes are imported in topological order, sorted by the converter as ONNX Runtime
 * does (onnxconverter-common's float16 conversion, for one, appends Casts at the end of the node list);
 * a file already in order keeps its order. A real cycle is KES_ERR_CORRUPT_DATA naming its nodes in
 * order; a node reading a name that no node, input or initializer gives is KES_ERR_CORRUPT_DATA naming
 * the node and the name. (Subgraphs of If/Loop are not supported: KES_ERR_UNSUPPORTED.)
 *
 * Quantized ONNX models (uint8/int8, as ONNX Runtime's quantize_static writes them in QDQ or QOperator
 * form, or quantize_dynamic) stay quantized: DequantizeLinear → Conv/MatMul/Gemm/Add/Mul/Concat/
 * GlobalAveragePool → QuantizeLinear groups become integer ops (QLinearConv, QLinearMatMul, ...; the
 * com.microsoft QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearConcat and QGemm are read too), and the
 * model's float inputs and outputs keep their QuantizeLinear / DequantizeLinear. A group with no
 * quantized form is computed in f32 between its DequantizeLinear and QuantizeLinear; the converter logs
 * which (KES_LOG_LEVEL=info). Results match ONNX Runtime's exact integer kernels bit for bit, QLinearAdd
 * and QLinearMul within one quantization step (docs/ARCHITECTURE.md "Quantized models").
 *
 * Fully quantized TFLite models (int8 with per-channel weights, or uint8; int8/uint8 or float inputs and
 * outputs through QUANTIZE/DEQUANTIZE) stay quantized too: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED,
 * ADD, MUL, CONCATENATION, QUANTIZE and DEQUANTIZE become integer ops on TFLite's own fixed-point
 * arithmetic, bit-exact with TFLite; MAX_POOL_2D, PAD and the view ops run on the integers; any other op
 * (SOFTMAX, LOGISTIC, AVERAGE_POOL_2D, ...) is computed in f32 between a DequantizeLinear and a
 * QuantizeLinear, within one step of TFLite's. An activation's scale that is not finite and > 0, a zero
 * point outside its type or a per-channel activation is KES_ERR_INVALID_ARGUMENT naming the tensor.
 *
 * fp16 ONNX models (float16 initializers, Casts around the inputs and outputs, float16 graph inputs or
 * outputs, as onnxconverter-common's convert_float_to_float16 writes them, keep_io_types true or false)
 * are computed in f32 and stored in f32: the f16 weights are widened at conversion (exactly), so every
 * op runs on the fast f32 kernels, which take constant f32 weights only. The model keeps its interface:
 * an f16 graph input or output stays f16 (a Cast to f32 after the input, to f16 before the output),
 * and a Cast the model makes to float16 still rounds there. Results differ from ONNX Runtime's by its
 * rounding of each op's result to f16: measured on BlazeFace, at most 4.4e-4 of an output's largest
 * value (engine/tests/test_fp16_models.cpp). KES_CONVERT_WEIGHTS_F16 (below) stores large weights as f16
 * again: half the bytes, but those layers then run their reference kernels (their weights are computed
 * by a Cast, not constant).
 *
 * Weight type KES_CONVERT_WEIGHTS_F16: every f32 weight of at least 256 elements that feeds Conv,
 * ConvTranspose, Gemm or MatMul is stored as f16 and turned back into f32 by a Cast node placed just
 * before its consumer. Weight bytes (file and weight memory) roughly halve; the arena grows by the
 * largest such weight (each Cast output lives only until its consumer has run); results change by
 * f16 rounding of the weights (about 1e-3 relative). Other constants stay f32.
 *
 * Quantizing a float model (quantize "int8", kes-convert --quantize int8; the AMCT analog): the
 * converter runs the float model on every calibration input (each .npy in the calibration folder, the
 * model's single input tensor with its dtype and shape, preprocessing such as AIPP already applied),
 * measures the activations around each Conv, Gemm and MatMul with constant weights, and rewrites the
 * graph into the QDQ form ONNX Runtime's quantize_static writes: weights int8, symmetric, one scale per
 * output channel; activations u8 with a zero point, one scale per tensor, measured at a layer's input
 * and at its output (after a Relu or Clip that alone reads it, fused into the layer); biases int32.
 * The QDQ fusion above then makes the integer ops, as for a model quantized elsewhere. TFLite's NHWC
 * convs are computed NCHW between Transposes (the fast int8 convolutions are NCHW). A conv's input
 * channels are divided by their calibrated ranges before quantizing and its weights multiplied back
 * (depthwise fully, dense by the square root), and a conv output read only by float ops likewise,
 * multiplied back after its DequantizeLinear: exact in float, each channel quantized nearer its own
 * range (docs/MODELS.md "Quantizing a float model to int8"). Ops with no
 * integer form (PRelu, Sigmoid, ...) run in f32 between a DequantizeLinear and a QuantizeLinear;
 * layers named in keep_float stay f32 entirely. Activation ranges (calibration_method): "minmax" the
 * smallest and largest value seen; "percentile" clips |x| at the given percentile of the values seen;
 * "entropy" clips |x| where the KL divergence between the clipped and the quantized distribution of a
 * 2048-bin histogram is least (TensorRT's entropy calibration). Each quantized layer is then compared
 * with the float model on the calibration set (layer_report). Errors: KES_ERR_INVALID_ARGUMENT for a
 * missing or empty folder, a file that is not a .npy of the input's dtype and shape (naming it; a
 * malformed .npy: the .npy reader's KES_ERR_CORRUPT_DATA or KES_ERR_UNSUPPORTED), an
 * unknown method or keep_float layer; KES_ERR_UNSUPPORTED for a model with several inputs (not yet
 * calibrated) or without a layer to quantize.
 *
 * Thread-safety: the calls keep no state between calls; any number may run at once on different
 * threads (each converts its own model). Ownership: the caller owns the options, the strings they
 * point to and the summary; kes_convert_memory returns a buffer the caller frees with kes_convert_free.
 */
#ifndef KESTREL_CONVERT_H
#define KESTREL_CONVERT_H

#include "kestrel/status.h"

KES_BEGIN_DECLS

typedef enum kes_convert_format {
    KES_CONVERT_FORMAT_AUTO = 0, /* TFLite when bytes 4..7 are "TFL3", else ONNX */
    KES_CONVERT_FORMAT_ONNX = 1,
    KES_CONVERT_FORMAT_TFLITE = 2
} kes_convert_format;

typedef enum kes_convert_weights {
    KES_CONVERT_WEIGHTS_F32 = 0, /* weights stored as the model has them */
    KES_CONVERT_WEIGHTS_F16 = 1  /* large matmul/conv weights stored as f16 (see above) */
} kes_convert_weights;

/* Progress: stage is "import", "fold", "fuse", "plan" or "write"; done/total count graph nodes. Called
 * on the converting thread. */
typedef void (*kes_convert_progress_fn)(const char* stage, size_t done, size_t total, void* user_data);

/* Post-training quantization's report (kes_convert_options.layer_report): called once per quantized
 * layer, in graph order, on the converting thread, with the layer's node name, op and output tensor and
 * how its int8 output compares with the float model's over the whole calibration set (cosine
 * similarity, largest absolute error: kes-compare's comparison). */
typedef void (*kes_convert_layer_report_fn)(const char* layer, const char* op, const char* tensor, double cosine,
                                            double max_abs_error, void* user_data);

typedef struct kes_convert_options {
    uint32_t struct_size;             /* sizeof(kes_convert_options), set by kes_convert_options_init */
    kes_convert_format format;        /* AUTO by default */
    const char* input_shape;          /* "name:1,3,224,224;name2:1,10" (ATC --input_shape), or NULL */
    const char* dynamic_batch;        /* "1,2,4,8" (ATC --dynamic_batch_size): batch gears, or NULL */
    const char* insert_op_conf;       /* path of an ATC aipp_op config (--insert_op_conf), or NULL */
    kes_convert_weights weight_type;  /* F32 by default */
    const char* board;                /* "310", "310B" or "host" (default): the target profile recorded */
    const char* freeze_input;         /* "name=file.npy;name2=file.pb": graph inputs made constants */
    kes_convert_progress_fn progress; /* NULL: no progress reports */
    void* progress_user_data;
    const char* dynamic_image_size; /* "224,224;416,416" (ATC --dynamic_image_size): height,width gears */
    const char* input_format;       /* "NCHW", "NHWC" or "ND" (ATC --input_format): the layout recorded for
                                       every 4-d graph input. Without it, TFLite inputs are NHWC, an ONNX
                                       input the graph reads through Transpose(perm=0,3,1,2) is NHWC, an
                                       AIPP input with neither is NCHW (ATC's default; logged as a
                                       warning), other inputs ND. Never decided from the shape. */
    uint64_t max_tensor_bytes;      /* the largest activation tensor and activation arena accepted, in bytes;
                                       0: 4 GiB. Above it the conversion fails (KES_ERR_INVALID_ARGUMENT)
                                       naming the tensor: a mistyped input shape is caught before a
                                       model no board can run is written */
    /* Post-training quantization (see "Quantizing a float model" above). */
    const char* quantize;                     /* "int8" quantizes the float model; NULL or "": it stays float */
    const char* calibration;                  /* with quantize: a folder of .npy calibration inputs */
    const char* calibration_method;           /* "minmax" (NULL: the default), "percentile" or "entropy" */
    double calibration_percentile;            /* percentile: the part of |x| kept, in (0, 100]; 0: 99.99 */
    const char* keep_float;                   /* "layer,layer": node names left in f32, or NULL */
    kes_convert_layer_report_fn layer_report; /* NULL: no report (and no run of the quantized model for it) */
    void* layer_report_user_data;
} kes_convert_options;

typedef struct kes_convert_summary {
    uint32_t struct_size;   /* set by the caller to sizeof(kes_convert_summary) */
    uint64_t ops;           /* nodes in the written model */
    uint64_t parameters;    /* elements of all constant tensors (weights) */
    uint64_t arena_bytes;   /* activation arena of the memory plan */
    uint64_t ideal_bytes;   /* the most activation bytes live at one step (lower bound of the arena) */
    uint64_t weight_bytes;  /* weight region, 128-byte aligned sections */
    uint64_t file_bytes;    /* size of the .kom image */
    uint64_t nodes_folded;  /* nodes evaluated at conversion time */
    uint64_t nodes_fused;   /* nodes merged into others */
    uint64_t nodes_removed; /* nodes removed in total (folded, fused, identities, dead) */
} kes_convert_summary;

/* Fills *options with the defaults (struct_size set, everything else AUTO/NULL/0). */
KES_API kes_status kes_convert_options_init(kes_convert_options* options);

/* Converts the model file at model_path into output_path. options NULL: defaults. summary may be NULL;
 * when given, its struct_size must be set. */
KES_API kes_status kes_convert_file(const char* model_path, const char* output_path, const kes_convert_options* options,
                                    kes_convert_summary* summary);

/* Converts model bytes in memory. On success *out_kom holds the .kom image (*out_size bytes), to be
 * freed with kes_convert_free; on failure *out_kom is NULL and *out_size 0. */
KES_API kes_status kes_convert_memory(const void* model, size_t model_size, const kes_convert_options* options,
                                      void** out_kom, size_t* out_size, kes_convert_summary* summary);

/* Frees a buffer from kes_convert_memory. NULL is a no-op. */
KES_API void kes_convert_free(void* kom);

KES_END_DECLS

#endif /* KESTREL_CONVERT_H */
