# The libFuzzer targets: fuzz/<target>.c with seeds in fuzz/corpus/<target>/. One list, read by
# fuzz/CMakeLists.txt (the fuzz_<target> executables), fuzz/replay.cmake (the replay tests) and
# scripts/fuzz-smoke (which reads the names between `set(WK_FUZZ_TARGETS` and `)`).
set(WK_FUZZ_TARGETS
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
  quib_session
)
# Targets that drive the host layer (they link wirekit_host and read tests/vectors/quib/).
set(WK_FUZZ_HOST_TARGETS quib_session)
