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
  ws_wire
)
# Targets that need more than wirekit_static (their sources' internal headers come from src/).
set(WK_FUZZ_LINK_ws_wire wirekit_host)
