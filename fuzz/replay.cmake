# Seed-corpus replay tests, for every build with tests (gcc or clang, fuzzing on or off).
# Include from the top level after enable_testing():
#     include(${CMAKE_SOURCE_DIR}/fuzz/replay.cmake)
# For each target it builds replay_<target> (the target + fuzz/replay.c, no libFuzzer) and adds
# the ctest fuzz_replay_<target>, which runs every file of fuzz/corpus/<target>/.
# Keep the list in step with fuzz/CMakeLists.txt.
set(WK_FUZZ_REPLAY_TARGETS
  iltp_stream_decode
  iltp_stream_roundtrip
  iltp_preface_parse
  iltp_offer_parse
  b64a_decode
  iltp_items
  iltp_address_parse
  iltp_session
  eth_snappy_block
  eth_snappy_frame
  eth_rr_stream
  eth_rlpx
  moqt_subgroup_stream
  moqt_fetch_stream
  moqt_datagram
  moqt_roundtrip
  colloq_binary
  colloq_compile
)
foreach(t ${WK_FUZZ_REPLAY_TARGETS})
  add_executable(replay_${t} ${CMAKE_CURRENT_LIST_DIR}/${t}.c ${CMAKE_CURRENT_LIST_DIR}/replay.c)
  target_link_libraries(replay_${t} PRIVATE wirekit_static)
  add_test(NAME fuzz_replay_${t} COMMAND replay_${t} ${CMAKE_CURRENT_LIST_DIR}/corpus/${t})
endforeach()
