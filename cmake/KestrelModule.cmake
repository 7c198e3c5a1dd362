# kes_add_module(): one module = an OBJECT library compiled once, a per-module static library
# (libkes_<name>.a) made from those objects, and a share of the merged libkestrel.a.

# The archives hold C++ objects: an app that links them with the C driver needs the C++ runtime.
set(KES_CXX_RUNTIME_FOR_C "$<$<LINK_LANGUAGE:C>:stdc++>" "$<$<LINK_LANGUAGE:C>:m>")

set(KES_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND KES_WARNING_FLAGS -Wshadow=local)  # GCC-only spelling; clang builds (fuzzing) skip it
endif()

function(kes_apply_warnings target)
  target_compile_options(${target} PRIVATE ${KES_WARNING_FLAGS})
  if(KES_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# kes_add_module(<name> SOURCES ... [DEPENDS kes_sdk ...] [LIBS <external libs>] [PRIVATE_INCLUDES ...])
#   DEPENDS: other Kestrel modules (targets) this one builds on.
#   LIBS:    outside libraries (targets or names) every user of the module must link.
function(kes_add_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPENDS;LIBS;PRIVATE_INCLUDES" ${ARGN})
  set(obj kes_${name}_obj)
  set(lib kes_${name})
  set(dir ${CMAKE_CURRENT_SOURCE_DIR})
  add_library(${obj} OBJECT ${M_SOURCES})
  target_include_directories(${obj}
    PUBLIC $<BUILD_INTERFACE:${dir}/include> $<BUILD_INTERFACE:${KES_GENERATED_INCLUDE_DIR}>
    PRIVATE ${dir}/src ${M_PRIVATE_INCLUDES})
  target_link_libraries(${obj} PUBLIC ${M_DEPENDS} ${M_LIBS} Threads::Threads)
  target_compile_definitions(${obj} PRIVATE KES_MODULE_NAME="${name}")
  kes_apply_warnings(${obj})

  add_library(${lib} STATIC $<TARGET_OBJECTS:${obj}>)
  target_include_directories(${lib} PUBLIC
    $<BUILD_INTERFACE:${dir}/include> $<BUILD_INTERFACE:${KES_GENERATED_INCLUDE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${lib} PUBLIC ${M_DEPENDS} ${M_LIBS} Threads::Threads ${KES_CXX_RUNTIME_FOR_C})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${name} LINKER_LANGUAGE CXX)
  add_library(Kestrel::${name} ALIAS ${lib})

  set_property(GLOBAL APPEND PROPERTY KES_MODULE_TARGETS ${lib})
  set_property(GLOBAL APPEND PROPERTY KES_MODULE_OBJECTS ${obj})
  set_property(GLOBAL APPEND PROPERTY KES_MODULE_INCLUDE_DIRS ${dir}/include)
  set_property(GLOBAL APPEND PROPERTY KES_EXTERNAL_LIBS ${M_LIBS})
  install(DIRECTORY ${dir}/include/kestrel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h")
endfunction()

# kes_add_simd_source(<file> X86 <flags...> | ARM <flags...>): compile one source with ISA flags
# for run-time dispatch; on other architectures the file is compiled without them (it must then
# compile to nothing, guarded by KES_SIMD_X86 / KES_SIMD_ARM).
# Every file given flags here is checked after it is compiled (kes_add_isa_object_check).
function(kes_add_simd_source file)
  cmake_parse_arguments(S "" "" "X86;ARM" ${ARGN})
  set(flags)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
    set(flags ${S_X86})
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
    set(flags ${S_ARM})
  endif()
  if(flags)
    set_source_files_properties(${file} PROPERTIES COMPILE_OPTIONS "${flags}")
    get_filename_component(name ${file} NAME)
    set_property(GLOBAL APPEND PROPERTY KES_SIMD_SOURCE_NAMES ${name})
  endif()
endfunction()

# kes_add_isa_object_check(): part of every build (ALL). After the ISA-flagged objects of all modules
# are compiled, cmake/check_isa_objects.cmake fails the build if one of them carries a static
# initialiser or a shared inline function (the rule in docs/ARCHITECTURE.md "SIMD dispatch").
function(kes_add_isa_object_check)
  get_property(names GLOBAL PROPERTY KES_SIMD_SOURCE_NAMES)
  get_property(objs GLOBAL PROPERTY KES_MODULE_OBJECTS)
  # Sanitizer builds put their own module constructor (registering globals) into every object, and they
  # run only on the machine that built them. Plain builds, Debug (-O0: no inlining, so shared inline
  # functions appear) and Release, are checked.
  if(NOT names OR KES_SANITIZE)
    return()
  endif()
  list(TRANSFORM names REPLACE "\\." "\\\\.")
  list(JOIN names "|" alternatives)
  set(files)
  foreach(obj IN LISTS objs)
    list(APPEND files "$<FILTER:$<TARGET_OBJECTS:${obj}>,INCLUDE,/(${alternatives})\\.o$>")
  endforeach()
  set(list_file ${CMAKE_BINARY_DIR}/isa_objects.txt)
  file(GENERATE OUTPUT ${list_file} CONTENT "$<JOIN:${files},\n>\n")
  set(stamp ${CMAKE_BINARY_DIR}/isa_objects.checked)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DREADELF=${CMAKE_READELF} -DLIST=${list_file}
            -P ${PROJECT_SOURCE_DIR}/cmake/check_isa_objects.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${files} ${list_file} ${PROJECT_SOURCE_DIR}/cmake/check_isa_objects.cmake
    COMMENT "Checking ISA-flagged objects for code that runs before the CPU check" VERBATIM)
  add_custom_target(kes_isa_object_check ALL DEPENDS ${stamp})
endfunction()

# libkestrel.a: every module's objects in one archive, for apps that want one file to link.
function(kes_add_merged_library)
  get_property(objs GLOBAL PROPERTY KES_MODULE_OBJECTS)
  get_property(incs GLOBAL PROPERTY KES_MODULE_INCLUDE_DIRS)
  get_property(libs GLOBAL PROPERTY KES_EXTERNAL_LIBS)
  set(sources)
  foreach(obj IN LISTS objs)
    list(APPEND sources $<TARGET_OBJECTS:${obj}>)
  endforeach()
  add_library(kestrel STATIC ${sources})
  foreach(inc IN LISTS incs)
    target_include_directories(kestrel PUBLIC $<BUILD_INTERFACE:${inc}>)
  endforeach()
  target_include_directories(kestrel PUBLIC $<BUILD_INTERFACE:${KES_GENERATED_INCLUDE_DIR}>
                                            $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  if(libs)
    list(REMOVE_DUPLICATES libs)
  endif()
  target_link_libraries(kestrel PUBLIC ${libs} Threads::Threads ${KES_CXX_RUNTIME_FOR_C})
  set_target_properties(kestrel PROPERTIES EXPORT_NAME kestrel LINKER_LANGUAGE CXX)
  add_library(Kestrel::kestrel ALIAS kestrel)
endfunction()
