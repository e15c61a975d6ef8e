# Req/resp ssz_snappy tests (spec 6); included from tests/CMakeLists.txt. Reads the handmade rows
# and the Lodestar block from ${WK_VECTORS_DIR}/eth.
wk_test(test_eth_reqresp eth/test_reqresp.c)
target_link_libraries(test_eth_reqresp PRIVATE wk_contract)
add_test(NAME eth_reqresp COMMAND test_eth_reqresp ${WK_VECTORS_DIR}/eth)
