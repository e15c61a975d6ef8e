# eth: RLP subset, RLPx frame-data and gossip ssz_snappy tests; included from tests/CMakeLists.txt
# (after wk_test is defined). Vectors are read from WK_VECTORS_DIR; json-c parses the RLP tests.
pkg_check_modules(JSONC REQUIRED IMPORTED_TARGET json-c)

wk_test(test_eth_rlp eth/test_rlp.c)
target_link_libraries(test_eth_rlp PRIVATE PkgConfig::JSONC)
add_test(NAME eth_rlp COMMAND test_eth_rlp
         ${WK_VECTORS_DIR}/eth/rlp/ethereum-tests/rlptest.json
         ${WK_VECTORS_DIR}/eth/rlp/ethereum-tests/invalidRLPTest.json)

wk_test(test_eth_rlpx eth/test_rlpx.c)
add_test(NAME eth_rlpx COMMAND test_eth_rlpx ${WK_VECTORS_DIR}/eth)

wk_test(test_eth_gossip eth/test_gossip.c)
add_test(NAME eth_gossip COMMAND test_eth_gossip ${WK_VECTORS_DIR}/eth)
