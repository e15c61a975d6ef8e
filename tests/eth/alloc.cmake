# eth_alloc: every eth object under the contract's failing allocator (tests/contract/
# wk_contract_alloc.h); eth_no_raw_alloc: no raw malloc/calloc/realloc/free in src/eth (nm -u on
# the wk_eth objects and a source scan), and its WILL_FAIL probe that shows the check can fail.
# Included from tests/CMakeLists.txt.
wk_test(test_eth_alloc eth/test_alloc.c)
target_link_libraries(test_eth_alloc PRIVATE wk_contract)
add_test(NAME eth_alloc COMMAND test_eth_alloc)

find_program(WK_NM NAMES nm REQUIRED)
add_test(NAME eth_no_raw_alloc
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/no_raw_alloc.sh ${WK_NM} ${CMAKE_SOURCE_DIR}/src/eth
                 $<TARGET_OBJECTS:wk_eth>
         COMMAND_EXPAND_LISTS)
add_library(eth_no_raw_alloc_probe OBJECT ${CMAKE_CURRENT_LIST_DIR}/no_raw_alloc_probe/probe.c)
add_test(NAME eth_no_raw_alloc_probe
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/no_raw_alloc.sh ${WK_NM}
                 ${CMAKE_CURRENT_LIST_DIR}/no_raw_alloc_probe $<TARGET_OBJECTS:eth_no_raw_alloc_probe>
         COMMAND_EXPAND_LISTS)
set_tests_properties(eth_no_raw_alloc_probe PROPERTIES WILL_FAIL TRUE)
