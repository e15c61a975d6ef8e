# Seed-corpus replay tests, for every build with tests (gcc or clang, fuzzing on or off).
# Include from the top level after enable_testing():
#     include(${CMAKE_SOURCE_DIR}/fuzz/replay.cmake)
# For each target it builds replay_<target> (the target + fuzz/replay.c, no libFuzzer) and adds
# the ctest fuzz_replay_<target>, which runs every file of fuzz/corpus/<target>/. Targets in
# WK_FUZZ_ALLOC_TARGETS count allocations through -Wl,--wrap here (fuzz/alloc_hook.h).
include(${CMAKE_CURRENT_LIST_DIR}/targets.cmake)
find_package(Threads REQUIRED)
include(${CMAKE_SOURCE_DIR}/tests/contract/contract.cmake)
foreach(t ${WK_FUZZ_TARGETS})
  add_executable(replay_${t} ${CMAKE_CURRENT_LIST_DIR}/${t}.c ${CMAKE_CURRENT_LIST_DIR}/replay.c)
  target_link_libraries(replay_${t} PRIVATE wirekit_static wk_contract ${WK_FUZZ_LINK_${t}})
  if(WK_FUZZ_LINK_${t}) # white-box: the host's internal headers
    target_include_directories(replay_${t} PRIVATE ${CMAKE_SOURCE_DIR}/src/host)
    target_compile_definitions(replay_${t} PRIVATE WK_VECTORS_DIR="${WK_VECTORS_DIR}")
  endif()
  target_include_directories(replay_${t} PRIVATE ${CMAKE_SOURCE_DIR}/tests) # wk_alloc_probe.h
  if(t IN_LIST WK_FUZZ_ALLOC_TARGETS) # allocation checks through --wrap (fuzz/alloc_hook.h)
    target_compile_definitions(replay_${t} PRIVATE WK_FUZZ_ALLOC_WRAP=1)
    target_link_options(replay_${t} PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc)
  endif()
  target_link_libraries(replay_${t} PRIVATE Threads::Threads)
  add_test(NAME fuzz_replay_${t} COMMAND replay_${t} ${CMAKE_CURRENT_LIST_DIR}/corpus/${t})
  if(t IN_LIST WK_FUZZ_ALLOC_TARGETS)
    # the allocation checks count only the measured call's thread: another thread allocates
    # without pause all along (it would fail a process-wide count)
    add_test(NAME fuzz_replay_${t}_alloc_noise
             COMMAND replay_${t} --alloc-noise --rounds 40 ${CMAKE_CURRENT_LIST_DIR}/corpus/${t})
  endif()
endforeach()
# colloq_generated links the codec generated at build time for all-types.json (as in CMakeLists.txt).
wk_colloq_generate(fgat ${CMAKE_SOURCE_DIR}/tests/colloq/fixtures/all-types.json
                   ${CMAKE_BINARY_DIR}/fuzz_replay_gen fgat_replay_src)
target_sources(replay_colloq_generated PRIVATE ${fgat_replay_src})
target_include_directories(replay_colloq_generated PRIVATE ${CMAKE_BINARY_DIR}/fuzz_replay_gen)
