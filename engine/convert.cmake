# convert.cmake — the conversion pipeline (passes, fusions, kes-convert's library entry points), the
# kes-convert tool, the converter tests, the ONNX conformance runner and the ONNX importer fuzzer.
# Included by engine/CMakeLists.txt after onnx.cmake and tflite.cmake.
list(APPEND engine_sources
  src/convert/passes.cpp
  src/convert/fusion.cpp
  src/convert/pass_layout.cpp
  src/convert/convert.cpp)

set(engine_convert_test_sources
  tests/test_onnx_import.cpp
  tests/test_passes.cpp
  tests/test_pass_layout.cpp
  tests/test_pass_layout_nchw.cpp
  tests/test_convert.cpp
  tests/test_dynamic_gears.cpp)

# libonnx-testdata lives on the build machine; an emulated (qemu) run reads the host's files too (the
# whole list takes a few seconds there in Release), so the conformance ctest runs in every build.
set(KES_ONNX_TESTDATA_DIR "/usr/share/libonnx-testdata/data/node" CACHE PATH
    "ONNX node tests (Debian libonnx-testdata) for the conformance runner")

function(engine_convert_after_module)
  # The TFLite importer is another part of the engine; until it exists kes-convert reads ONNX only.
  if("src/convert/tflite_import.cpp" IN_LIST engine_sources)
    target_compile_definitions(kes_engine_obj PRIVATE KES_HAVE_TFLITE_IMPORT=1)
  endif()

  add_executable(kes-convert tools/kes_convert.cpp)
  target_link_libraries(kes-convert PRIVATE kes_engine)
  kes_apply_warnings(kes-convert)
  install(TARGETS kes-convert RUNTIME DESTINATION bin)
  if(KES_BUILD_TESTS)
    # The tool's command line: help, a conversion of a committed seed model, and its exit codes.
    set(seed ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds_onnx/conv_bn_relu.onnx)
    add_test(NAME KesConvert.Help COMMAND kes-convert --help)
    add_test(NAME KesConvert.ConvertsAModel
             COMMAND kes-convert ${seed} --input-shape x:1,1,4,4 --output ${CMAKE_BINARY_DIR}/test-tmp/kes_convert_seed.kom)
    # Exit codes are checked through sh (the emulator, when cross-compiling, runs the tool).
    set(tool ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:kes-convert>)
    list(JOIN tool " " tool_cmd)
    function(kes_convert_exit_test name code)
      list(JOIN ARGN " " args)
      add_test(NAME KesConvert.${name} COMMAND sh -c "${tool_cmd} ${args}; test $? -eq ${code}")
      set_tests_properties(KesConvert.${name} PROPERTIES LABELS engine)
    endfunction()
    kes_convert_exit_test(MissingModelExitsWith4 4 ${CMAKE_BINARY_DIR}/no-such-model.onnx -o ${CMAKE_BINARY_DIR}/test-tmp/none.kom)
    kes_convert_exit_test(BadOptionExitsWith2 2 ${seed} -o ${CMAKE_BINARY_DIR}/test-tmp/none.kom --weight-type f8)
    kes_convert_exit_test(UnknownShapeExitsWith2 2 ${seed} -o ${CMAKE_BINARY_DIR}/test-tmp/none.kom)
    kes_convert_exit_test(DynamicImageSizeConverts 0 ${seed} -o ${CMAKE_BINARY_DIR}/test-tmp/kes_convert_gears.kom
                          --input-shape x:1,1,-1,-1 --dynamic-image-size 9,7)
    kes_convert_exit_test(MalformedImageSizeExitsWith2 2 ${seed} -o ${CMAKE_BINARY_DIR}/test-tmp/none.kom
                          --input-shape x:1,1,-1,-1 --dynamic-image-size 4)
    kes_convert_exit_test(CorruptModelExitsWith3 3 ${CMAKE_CURRENT_SOURCE_DIR}/schema/kom.fbs -o ${CMAKE_BINARY_DIR}/test-tmp/none.kom)
    set_tests_properties(KesConvert.Help KesConvert.ConvertsAModel PROPERTIES LABELS engine)
    set_tests_properties(KesConvert.ConvertsAModel PROPERTIES FIXTURES_SETUP kes_seed_kom)
  endif()

  if(KES_BUILD_TESTS)
    kes_add_test(engine TARGET kes_engine_convert_tests SOURCES ${engine_convert_test_sources})
    target_include_directories(kes_engine_convert_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src
                                                                ${CMAKE_CURRENT_SOURCE_DIR}/tests)
    target_compile_definitions(kes_engine_convert_tests PRIVATE KES_ONNX_TESTDATA_DIR="${KES_ONNX_TESTDATA_DIR}")

    add_executable(kes_onnx_conformance tests/onnx_conformance.cpp)
    target_link_libraries(kes_onnx_conformance PRIVATE kes_engine)
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
    endif()

    kes_add_fuzzer(engine onnx_import SOURCE fuzz/fuzz_onnx_import.cpp
                   SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds_onnx)
    target_include_directories(kes_fuzz_onnx_import PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  endif()
endfunction()
