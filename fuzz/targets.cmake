# The libFuzzer targets: fuzz/<target>.c with seeds in fuzz/corpus/<target>/. One list, read by
# fuzz/CMakeLists.txt (the fuzz_<target> executables), fuzz/replay.cmake (the replay tests) and
# scripts/fuzz-smoke (which reads the names between `set(WK_FUZZ_TARGETS` and `)`).
set(WK_FUZZ_TARGETS
  iltp_stream_decode
  iltp_stream_roundtrip
  iltp_deflate_diff
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
  colloq_generated
  ws_wire
  quib_session
)
# Targets with allocation checks (fuzz/alloc_hook.h): their replay builds link with --wrap.
set(WK_FUZZ_ALLOC_TARGETS colloq_binary colloq_generated)
# Targets that need more than wirekit_static: they link the host (their internal headers come
# from src/host; quib_session reads tests/vectors/quib/ through WK_VECTORS_DIR).
set(WK_FUZZ_LINK_ws_wire wirekit_host)
set(WK_FUZZ_LINK_quib_session wirekit_host)
