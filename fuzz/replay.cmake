# Seed-corpus replay tests, for every build with tests (gcc or clang, fuzzing on or off).
# Include from the top level after enable_testing():
#     include(${CMAKE_SOURCE_DIR}/fuzz/replay.cmake)
# For each target it builds replay_<target> (the target + fuzz/replay.c, no libFuzzer) and adds
# the ctest fuzz_replay_<target>, which runs every file of fuzz/corpus/<target>/.
include(${CMAKE_CURRENT_LIST_DIR}/targets.cmake)
foreach(t ${WK_FUZZ_TARGETS})
  add_executable(replay_${t} ${CMAKE_CURRENT_LIST_DIR}/${t}.c ${CMAKE_CURRENT_LIST_DIR}/replay.c)
  target_link_libraries(replay_${t} PRIVATE wirekit_static)
  if(t IN_LIST WK_FUZZ_HOST_TARGETS)
    target_link_libraries(replay_${t} PRIVATE wirekit_host)
    target_include_directories(replay_${t} PRIVATE ${CMAKE_SOURCE_DIR}/tests ${CMAKE_SOURCE_DIR}/src)
    target_compile_definitions(replay_${t} PRIVATE WK_VECTORS_DIR="${WK_VECTORS_DIR}")
  endif()
  add_test(NAME fuzz_replay_${t} COMMAND replay_${t} ${CMAKE_CURRENT_LIST_DIR}/corpus/${t})
endforeach()
