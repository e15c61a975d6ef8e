# eth: CRC-32C, Snappy block and framing formats; included from tests/CMakeLists.txt (after wk_test
# is defined). The snappy test reads the handmade rows and the manifest from WK_VECTORS_DIR.
wk_test(test_eth_crc32c eth/test_crc32c.c)
# white-box: wk_eth_crc32c_copy is internal (src/eth/eth_internal.h)
target_include_directories(test_eth_crc32c PRIVATE ${CMAKE_SOURCE_DIR}/src/eth)
add_test(NAME eth_crc32c COMMAND test_eth_crc32c)

wk_test(test_eth_snappy eth/test_snappy.c)
target_link_libraries(test_eth_snappy PRIVATE wk_contract)
add_test(NAME eth_snappy COMMAND test_eth_snappy ${WK_VECTORS_DIR}/eth)

# Our block decoder, every kernel forced in turn, with guard pages (tests/eth/test_snappy_decode.c).
wk_test(test_eth_snappy_decode eth/test_snappy_decode.c)
add_test(NAME eth_snappy_decode COMMAND test_eth_snappy_decode ${WK_VECTORS_DIR}/eth)
