# convert.cmake — the conversion pipeline (passes, fusions, kes-convert's library entry points), the
# kes-convert tool, the converter tests, the ONNX conformance runner and the ONNX importer fuzzer.
# Included by engine/CMakeLists.txt after onnx.cmake and tflite.cmake.
list(APPEND convert_sources
  src/convert/passes.cpp
  src/convert/fusion.cpp
  src/convert/fusion_qdq.cpp
  src/convert/quantize.cpp
  src/convert/pass_layout.cpp
  src/convert/convert.cpp)

set(engine_convert_test_sources
  tests/test_onnx_import.cpp
  tests/test_passes.cpp
  tests/test_pass_layout.cpp
  tests/test_pass_layout_nchw.cpp
  tests/test_convert.cpp
  tests/test_dynamic_gears.cpp
  tests/test_quantize.cpp)

# libonnx-testdata lives on the build machine; an emulated (qemu) run reads the host's files too (the
# whole list takes a few seconds there in Release), so the conformance ctest runs in every build.
set(KES_ONNX_TESTDATA_DIR "/usr/share/libonnx-testdata/data/node" CACHE PATH
    "ONNX node tests (Debian libonnx-testdata) for the conformance runner")

function(engine_convert_after_module)
  # The TFLite importer is another part of the engine; until it exists kes-convert reads ONNX only.
  if("src/convert/tflite_import.cpp" IN_LIST convert_sources)
    target_compile_definitions(kes_convert_obj PRIVATE KES_HAVE_TFLITE_IMPORT=1)
  endif()

  add_executable(kes-convert tools/kes_convert.cpp)
  target_link_libraries(kes-convert PRIVATE kes_convert)
  # --list-ops reads the op registry (src/op.hpp), the one list of what this build executes.
  target_include_directories(kes-convert PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  kes_apply_warnings(kes-convert)
  install(TARGETS kes-convert RUNTIME DESTINATION bin)
  if(KES_BUILD_TESTS)
    # The tool's command line: help, a conversion of a committed seed model, and its exit codes.
    set(seed ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds_onnx/conv_bn_relu.onnx)
    add_test(NAME KesConvert.Help COMMAND kes-convert --help)
    add_test(NAME KesConvert.ConvertsAModel
             COMMAND kes-convert ${seed} --input-shape x:1,1,4,4 --output ${CMAKE_BINARY_DIR}/test-tmp/kes_convert_seed.kom)
    # Exit codes (every tool's convention, in --help: 2 bad arguments or options the model cannot take,
    # 1 any other failure) are checked with the output by kes_add_tool_test.
    set(none ${CMAKE_BINARY_DIR}/test-tmp/none.kom)
    kes_add_tool_test(KesConvert.MissingModelExitsWith1 EXIT_CODE 1 LABELS engine
                      COMMAND kes-convert ${CMAKE_BINARY_DIR}/no-such-model.onnx -o ${none}
                      OUTPUT "no-such-model.onnx")
    kes_add_tool_test(KesConvert.BadOptionExitsWith2 EXIT_CODE 2 LABELS engine
                      COMMAND kes-convert ${seed} -o ${none} --weight-type f8)
    kes_add_tool_test(KesConvert.UnknownShapeExitsWith2 EXIT_CODE 2 LABELS engine
                      COMMAND kes-convert ${seed} -o ${none})
    # --quantize int8 prints each quantized layer against the float model (committed .npy inputs).
    kes_add_tool_test(KesConvert.QuantizePrintsTheLayerReport LABELS engine
                      COMMAND kes-convert ${seed} -o ${CMAKE_BINARY_DIR}/test-tmp/kes_convert_int8.kom
                              --input-shape x:1,1,4,4 --quantize int8
                              --calibration ${CMAKE_CURRENT_SOURCE_DIR}/tests/data/calibration_1x1x4x4
                      OUTPUT "quantized layers vs float" "Conv_0 +Conv +0[.]99" "1 layers quantized")
    kes_add_tool_test(KesConvert.QuantizeWithoutCalibrationExitsWith2 EXIT_CODE 2 LABELS engine
                      COMMAND kes-convert ${seed} -o ${none} --input-shape x:1,1,4,4 --quantize int8
                      OUTPUT "needs --calibration")
    kes_add_tool_test(KesConvert.BadCalibrationPercentileExitsWith2 EXIT_CODE 2 LABELS engine
                      COMMAND kes-convert ${seed} -o ${none} --input-shape x:1,1,4,4 --quantize int8
                              --calibration-percentile 0
                      OUTPUT "--calibration-percentile takes a number in")
    kes_add_tool_test(KesConvert.DynamicImageSizeConverts LABELS engine
                      COMMAND kes-convert ${seed} -o ${CMAKE_BINARY_DIR}/test-tmp/kes_convert_gears.kom
                              --input-shape x:1,1,-1,-1 --dynamic-image-size 9,7)
    # An empty value and a chip Kestrel does not target were accepted: a static model, or one for the host.
    # (Through sh: CMake drops an empty argument from a command list.)
    string(JOIN " " emulator ${CMAKE_CROSSCOMPILING_EMULATOR})
    kes_add_tool_test(KesConvert.EmptyGearsAreAUsageError EXIT_CODE 2 LABELS engine
                      COMMAND sh -c "${emulator} $<TARGET_FILE:kes-convert> ${seed} -o ${none} --input-shape x:1,1,4,4 --dynamic-batch ''"
                      OUTPUT "--dynamic-batch needs a value")
    kes_add_tool_test(KesConvert.UnknownSocVersionIsAUsageError EXIT_CODE 2 LABELS engine
                      COMMAND kes-convert ${seed} -o ${none} --input-shape x:1,1,4,4 --soc-version Ascend999
                      OUTPUT "--soc-version 'Ascend999' is not a chip Kestrel targets")
    kes_add_tool_test(KesConvert.MalformedImageSizeExitsWith2 EXIT_CODE 2 LABELS engine
                      COMMAND kes-convert ${seed} -o ${none} --input-shape x:1,1,-1,-1 --dynamic-image-size 4)
    kes_add_tool_test(KesConvert.CorruptModelExitsWith1 EXIT_CODE 1 LABELS engine
                      COMMAND kes-convert ${CMAKE_CURRENT_SOURCE_DIR}/schema/kom.fbs -o ${none})
    # Files that are no model at all are named and called so, not reported as a protobuf error.
    set(jpeg ${PROJECT_SOURCE_DIR}/dvpp/fuzz/seeds/jpeg/baseline_420.jpg)
    set(random ${CMAKE_CURRENT_SOURCE_DIR}/tests/models/random_bytes.bin)
    set(empty ${CMAKE_BINARY_DIR}/test-tmp/kes_convert_empty.onnx)
    file(WRITE ${empty} "")
    foreach(kind jpeg random empty)
      string(SUBSTRING ${kind} 0 1 first)
      string(TOUPPER ${first} first)
      string(SUBSTRING ${kind} 1 -1 rest)
      get_filename_component(file_name ${${kind}} NAME)
      kes_add_tool_test(KesConvert.${first}${rest}FileIsNotAModel EXIT_CODE 1 LABELS engine
                        COMMAND kes-convert ${${kind}} -o ${none}
                        OUTPUT "${file_name}: not an ONNX or TFLite file" NO_OUTPUT "[Pp]rotobuf|wire type")
    endforeach()
    # A trace that cannot be written fails the run with its path (it was ignored: exit 0).
    kes_add_tool_test(KesConvert.UnwritableTraceFails EXIT_CODE 1 LABELS engine
                      ENVIRONMENT KES_TRACE=/nonexistent/dir/t.json
                      COMMAND kes-convert ${seed} --input-shape x:1,1,4,4 -o ${CMAKE_BINARY_DIR}/test-tmp/kes_convert_trace.kom
                      OUTPUT "KES_TRACE: .*/nonexistent/dir/t.json")
    # An input shape with a digit too many converted (exit 0) into a model whose arena was hundreds of GB;
    # above 4 GiB per tensor or arena the conversion is refused, naming the option that raises the bound.
    kes_add_tool_test(KesConvert.HugeInputShapeIsRefused EXIT_CODE 2 LABELS engine
                      COMMAND kes-convert ${seed} -o ${none} --input-shape x:1,1,100000,100000
                      OUTPUT "tensor 'x' \\[1,1,100000,100000\\] f32 needs 37.25 GiB, more than the 4.00 GiB.*--max-tensor-bytes")
    kes_add_tool_test(KesConvert.MaxTensorBytesRaisesTheBound LABELS engine
                      COMMAND kes-convert ${seed} -o ${CMAKE_BINARY_DIR}/test-tmp/kes_convert_huge.kom
                              --input-shape x:1,1,100000,100000 --max-tensor-bytes 256G
                      OUTPUT "wrote .*kes_convert_huge.kom")
    kes_add_tool_test(KesConvert.BadMaxTensorBytesIsAUsageError EXIT_CODE 2 LABELS engine
                      COMMAND kes-convert ${seed} -o ${none} --input-shape x:1,1,4,4 --max-tensor-bytes 4T
                      OUTPUT "--max-tensor-bytes takes a positive byte count")
    # --list-ops prints the op registry, one name per line (engine.h points users to it).
    kes_add_tool_test(KesConvert.ListOpsPrintsTheRegistry LABELS engine COMMAND kes-convert --list-ops
                      OUTPUT "Conv" "NonMaxSuppression" NO_OUTPUT "usage:")
    set_tests_properties(KesConvert.Help KesConvert.ConvertsAModel PROPERTIES LABELS engine)
    set_tests_properties(KesConvert.ConvertsAModel PROPERTIES FIXTURES_SETUP kes_seed_kom)
  endif()

  if(KES_BUILD_TESTS)
    kes_add_test(engine TARGET kes_engine_convert_tests SOURCES ${engine_convert_test_sources} LIBS kes_convert)
    target_include_directories(kes_engine_convert_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src
                                                                ${CMAKE_CURRENT_SOURCE_DIR}/tests
                                                                ${PROJECT_SOURCE_DIR}/tests/common)
    target_compile_definitions(kes_engine_convert_tests PRIVATE KES_ONNX_TESTDATA_DIR="${KES_ONNX_TESTDATA_DIR}")

    add_executable(kes_onnx_conformance tests/onnx_conformance.cpp)
    target_link_libraries(kes_onnx_conformance PRIVATE kes_convert)
    target_include_directories(kes_onnx_conformance PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
    kes_apply_warnings(kes_onnx_conformance)
    if(EXISTS ${KES_ONNX_TESTDATA_DIR})
      # Under the emulator the runner cannot fork per test (qemu-user hangs the child): --no-fork.
      set(fork_option)
      if(CMAKE_CROSSCOMPILING)
        set(fork_option --no-fork)
      endif()
      add_test(NAME OnnxConformance.ExpectedTestsPass
               COMMAND kes_onnx_conformance --data ${KES_ONNX_TESTDATA_DIR}
                       --expected ${CMAKE_CURRENT_SOURCE_DIR}/tests/onnx_conformance_expected.txt ${fork_option})
      set_tests_properties(OnnxConformance.ExpectedTestsPass PROPERTIES LABELS engine TIMEOUT ${KES_TEST_TIMEOUT})
    else()
      kes_missing_test_dependency(OnnxConformance "the ONNX node tests (libonnx-testdata) at ${KES_ONNX_TESTDATA_DIR}")
    endif()

    # fp16 ONNX models as onnxconverter-common writes them, against ONNX Runtime (issue 24 §1): the conv
    # net's committed fixtures always, BlazeFace once fetch_models.sh has made its fp16 variants.
    kes_add_test(engine TARGET kes_engine_fp16_model_tests SOURCES tests/test_fp16_models.cpp LIBS kes_convert)
    target_include_directories(kes_engine_fp16_model_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
    target_compile_definitions(kes_engine_fp16_model_tests PRIVATE
      KES_MODELS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/tests/models")

    # Quantized ONNX models as ONNX Runtime's quantization tools write them (QDQ, QOperator, dynamic),
    # against ONNX Runtime: committed fixtures always, BlazeFace once fetch_models.sh quantized it.
    kes_add_test(engine TARGET kes_engine_quant_model_tests SOURCES tests/test_quant_models.cpp LIBS kes_convert)
    target_include_directories(kes_engine_quant_model_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src
                                                                    ${PROJECT_SOURCE_DIR}/tests/common)
    target_compile_definitions(kes_engine_quant_model_tests PRIVATE
      KES_MODELS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/tests/models")

    kes_add_fuzzer(engine onnx_import SOURCE fuzz/fuzz_onnx_import.cpp
                   SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds_onnx LIBS kes_convert)
    target_include_directories(kes_fuzz_onnx_import PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  endif()
endfunction()
