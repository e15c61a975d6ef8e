# The build's boundaries (docs/architecture.md), proved: the ctest `boundaries` compiles a probe
# with the include path each target really uses (WK_INCLUDES_<target>, set where the target is
# defined in the top-level CMakeLists.txt) and expects every allowed include to compile and every
# cross-module include to fail. Included from tests/CMakeLists.txt.
set(WK_PUBLIC_HEADERS common.h iltp.h eth.h moqt.h colloq.h host.h wirekit.h)
set(WK_INTERNAL_HEADERS iltp/iltp_internal.h eth/eth_internal.h moqt/moqt_internal.h
    colloq/colloq_internal.h)
set(cases "")
set(n 0)
macro(wk_boundary target probe expect)
  string(APPEND cases "set(WK_CASE_${n}_TARGET ${target})\n"
         "set(WK_CASE_${n}_INCLUDES \"${WK_INCLUDES_${target}}\")\n"
         "set(WK_CASE_${n}_PROBE [=[${probe}]=])\n"
         "set(WK_CASE_${n}_EXPECT ${expect})\n")
  math(EXPR n "${n} + 1")
endmacro()

foreach(m ${WK_MODULES})
  set(t wk_${m})
  if(NOT DEFINED WK_INCLUDES_${t})
    message(FATAL_ERROR "boundaries: no WK_INCLUDES_${t}")
  endif()
  foreach(h ${WK_PUBLIC_HEADERS})
    if(h STREQUAL "common.h" OR h STREQUAL "${m}.h")
      wk_boundary(${t} "<wirekit/${h}>" ok)
    else()
      wk_boundary(${t} "<wirekit/${h}>" fail)
    endif()
  endforeach()
  foreach(ih ${WK_INTERNAL_HEADERS})
    get_filename_component(base ${ih} NAME)
    get_filename_component(owner ${ih} DIRECTORY)
    if(owner STREQUAL m)
      wk_boundary(${t} "\"${base}\"" ok)
    else()
      wk_boundary(${t} "\"${ih}\"" fail)
      wk_boundary(${t} "\"${base}\"" fail)
    endif()
  endforeach()
endforeach()
# The host and the CLI: every public header, no private one.
foreach(t wirekit_host wirekit_cli)
  foreach(h ${WK_PUBLIC_HEADERS})
    wk_boundary(${t} "<wirekit/${h}>" ok)
  endforeach()
  foreach(ih ${WK_INTERNAL_HEADERS})
    get_filename_component(base ${ih} NAME)
    wk_boundary(${t} "\"${ih}\"" fail)
    wk_boundary(${t} "\"${base}\"" fail)
  endforeach()
endforeach()
file(WRITE ${CMAKE_BINARY_DIR}/boundaries/cases.cmake
     "set(WK_CC [=[${CMAKE_C_COMPILER}]=])\nset(WK_CASE_COUNT ${n})\n${cases}")
add_test(NAME boundaries
         COMMAND ${CMAKE_COMMAND} -DCASES=${CMAKE_BINARY_DIR}/boundaries/cases.cmake
                 -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -P ${CMAKE_CURRENT_LIST_DIR}/check.cmake)
