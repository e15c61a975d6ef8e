# Host layer tests; included from tests/CMakeLists.txt (after wk_test is defined).
wk_test(test_host_store host/test_store.c)
if(TARGET wirekit_host) # the host layer as its own library; else its sources are in wirekit_static
  target_link_libraries(test_host_store PRIVATE wirekit_host)
endif()
add_test(NAME host_store COMMAND test_host_store)
add_test(NAME host_store_cli
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/host/store_cli_test.sh $<TARGET_FILE:wirekit_cli>)
# host_carrier: the carrier layer without sockets (assurance resolution, the carrier table)
wk_test(test_host_carrier host/test_carrier.c)
target_link_libraries(test_host_carrier PRIVATE wirekit_host)
add_test(NAME host_carrier COMMAND test_host_carrier)
# host_quib: QUIB in one process (packets in memory, a controlled clock), tests/host/test_quib.c
wk_test(test_host_quib host/test_quib.c)
target_link_libraries(test_host_quib PRIVATE wirekit_host)
add_test(NAME host_quib COMMAND test_host_quib ${WK_VECTORS_DIR})
