# check_isa_objects.cmake — the build's check of the rule for files compiled with ISA flags
# (kes_add_simd_source; docs/ARCHITECTURE.md "SIMD dispatch"): no code in such a file may run before
# kes_cpu_has() has confirmed its instructions. Fails (exit 1, naming the object and the symbol) when an
# object file
#   - carries a static initialiser (.init_array/.ctors/.preinit_array, _GLOBAL__sub_I_*): it runs at
#     load time, before main, on every CPU — the SIGILL of an AVX-512 table built at namespace scope;
#   - defines a weak (COMDAT) symbol: an inline function or template instance the linker may pick from
#     this file, compiled with the ISA flags, for callers in baseline code.
#   cmake -DNM=<nm> -DREADELF=<readelf> -DLIST=<file of object paths, one a line> -P check_isa_objects.cmake
#   cmake -DNM=... -DREADELF=... -DOBJECTS=<a.o;b.o> -P check_isa_objects.cmake
cmake_minimum_required(VERSION 3.25)
foreach(tool NM READELF)
  if(NOT ${tool})
    message(FATAL_ERROR "check_isa_objects: -D${tool}=<path> is required")
  endif()
endforeach()
set(objects ${OBJECTS})
if(LIST)
  file(STRINGS "${LIST}" listed)
  list(APPEND objects ${listed})
endif()
list(REMOVE_ITEM objects "")
if(NOT objects)
  message(FATAL_ERROR "check_isa_objects: no object files given (-DLIST or -DOBJECTS)")
endif()

set(problems "")
foreach(obj IN LISTS objects)
  if(NOT EXISTS "${obj}")
    message(FATAL_ERROR "check_isa_objects: no such object file '${obj}'")
  endif()
  execute_process(COMMAND "${READELF}" -SW "${obj}" OUTPUT_VARIABLE sections RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "check_isa_objects: ${READELF} failed on '${obj}'")
  endif()
  string(REGEX MATCHALL "\\.(init_array|preinit_array|ctors)[^ \n]*" inits "${sections}")
  if(inits)
    list(REMOVE_DUPLICATES inits)
    string(APPEND problems "\n  ${obj}: a static initialiser (section ${inits}) runs its ISA code at load time, before any CPU check")
  endif()
  execute_process(COMMAND "${NM}" --defined-only -C "${obj}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "check_isa_objects: ${NM} failed on '${obj}'")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-fA-F]* *([A-Za-z]) (.*)$")
      set(type "${CMAKE_MATCH_1}")
      set(name "${CMAKE_MATCH_2}")
      if(name MATCHES "^_GLOBAL__sub_I_|^global constructors keyed to")
        string(APPEND problems "\n  ${obj}: static constructor '${name}'")
      elseif(type MATCHES "^[WVu]$" AND NOT name STREQUAL "DW.ref.__gxx_personality_v0")
        # DW.ref.__gxx_personality_v0 is data (a pointer to the C++ runtime's personality routine).
        string(APPEND problems "\n  ${obj}: weak symbol '${name}' (an inline function or template instance "
                               "compiled with ISA flags that other files may end up calling; put it in an "
                               "anonymous namespace or out of this file)")
      endif()
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "ISA-flagged objects run code before their CPU check (docs/ARCHITECTURE.md, SIMD dispatch):${problems}")
endif()
list(LENGTH objects n)
message(STATUS "check_isa_objects: ${n} ISA-flagged objects, no initialiser and no shared inline code")
