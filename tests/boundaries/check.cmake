# The boundaries test: `cmake -DCASES=<file> -DSOURCE_DIR=<dir> -P check.cmake`.
#
# CASES (written by boundaries.cmake from the include paths the build targets really use) sets
# WK_CC, WK_CASE_COUNT and, for each case i, WK_CASE_<i>_TARGET, _INCLUDES (a list), _PROBE (the
# header, as written after #include) and _EXPECT (ok or fail). Each case compiles probe.c with the
# target's include path; "ok" must compile, "fail" must fail on the probed include itself ("No such
# file or directory" naming the header), so a broken command line cannot pass as a refusal.
# Then every #include "..." under src/ and cli/ is checked for a path that climbs out of its
# folder ("../") or is absolute, which no include path can stop.
cmake_minimum_required(VERSION 3.18)
include(${CASES})
set(failed 0)
set(passed 0)
math(EXPR last "${WK_CASE_COUNT} - 1")
foreach(i RANGE ${last})
  set(target ${WK_CASE_${i}_TARGET})
  set(probe ${WK_CASE_${i}_PROBE})
  set(args -std=c17 -fsyntax-only -D_POSIX_C_SOURCE=200809L "-DWK_PROBE=${probe}")
  foreach(d ${WK_CASE_${i}_INCLUDES})
    list(APPEND args "-I${d}")
  endforeach()
  execute_process(COMMAND ${WK_CC} ${args} ${SOURCE_DIR}/tests/boundaries/probe.c
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX REPLACE "^[<\"](.*)[>\"]$" "\\1" header "${probe}")
  string(FIND "${out}" "${header}: No such file or directory" missing)
  if(WK_CASE_${i}_EXPECT STREQUAL "ok")
    if(rc EQUAL 0)
      math(EXPR passed "${passed} + 1")
    else()
      message("FAIL: ${target} must be able to include ${probe}:\n${out}")
      math(EXPR failed "${failed} + 1")
    endif()
  else()
    if(NOT rc EQUAL 0 AND missing GREATER -1)
      math(EXPR passed "${passed} + 1")
    elseif(rc EQUAL 0)
      message("FAIL: ${target} can include ${probe}: a boundary is open")
      math(EXPR failed "${failed} + 1")
    else()
      message("FAIL: ${target} with ${probe} failed for another reason than the missing header:\n${out}")
      math(EXPR failed "${failed} + 1")
    endif()
  endif()
endforeach()

# Quoted includes that climb out of their folder or are absolute. The one known exception is
# removed with `wirekit colloq bench` (issue 12): the CLI compiling benchmark code.
set(allowed "cli/cmd_colloq_bench.c:#include \"../bench/colloq_bench_core.h\"")
file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/src/*.c ${SOURCE_DIR}/src/*.h
     ${SOURCE_DIR}/cli/*.c ${SOURCE_DIR}/cli/*.h)
foreach(f ${files})
  file(STRINGS ${SOURCE_DIR}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"(\\.\\.|/)")
  foreach(l ${lines})
    string(STRIP "${l}" l)
    if("${f}:${l}" IN_LIST allowed)
      continue()
    endif()
    message("FAIL: ${f}: ${l}: a quoted include outside the file's own folder")
    math(EXPR failed "${failed} + 1")
  endforeach()
endforeach()
math(EXPR passed "${passed} + 1")

message("boundaries: ${passed} passed, ${failed} failed")
if(failed GREATER 0)
  message(FATAL_ERROR "boundaries: ${failed} failed")
endif()
