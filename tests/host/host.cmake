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
target_include_directories(test_host_carrier PRIVATE ${CMAKE_SOURCE_DIR}/src/host) # carrier.h is internal
add_test(NAME host_carrier COMMAND test_host_carrier)
# host_quib: QUIB in one process (packets in memory, a controlled clock), tests/host/test_quib.c
wk_test(test_host_quib host/test_quib.c)
target_link_libraries(test_host_quib PRIVATE wirekit_host)
target_include_directories(test_host_quib PRIVATE ${CMAKE_SOURCE_DIR}/src/host) # quib_conn.h is internal
add_test(NAME host_quib COMMAND test_host_quib ${WK_VECTORS_DIR})
# host_quib_process: wirekit iltp sync over quib: between processes on loopback UDP, with a test
# peer (quib_peer, built from test code on quib_conn.c) for the misbehaviours and certificates
# made at test time by the openssl tool.
add_executable(quib_peer host/quib_peer.c)
target_link_libraries(quib_peer PRIVATE wirekit_host)
target_include_directories(quib_peer PRIVATE ${CMAKE_SOURCE_DIR}/tests ${CMAKE_SOURCE_DIR}/src/host)
add_test(NAME host_quib_process
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/quib_test.py $<TARGET_FILE:wirekit_cli> $<TARGET_FILE:quib_peer>)
set_tests_properties(host_quib_process PROPERTIES TIMEOUT 900)
