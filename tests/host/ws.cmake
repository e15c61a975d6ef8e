# The ws: and wss: carriers; included from tests/CMakeLists.txt (after wk_test is defined).
# host_ws_wire: the upgrade parser and the frame reader/writer without sockets (RFC 6455 examples,
# every split point).
wk_test(test_host_ws_wire host/test_ws_wire.c)
target_link_libraries(test_host_ws_wire PRIVATE wirekit_host)
target_include_directories(test_host_ws_wire PRIVATE ${CMAKE_SOURCE_DIR}/src/host) # ws_wire.h is internal
add_test(NAME host_ws_wire COMMAND test_host_ws_wire)
# host_ws_carrier: the ws: carrier's read-side flow control over a scripted inner carrier (no sockets).
wk_test(test_host_ws_carrier host/test_ws_carrier.c)
target_link_libraries(test_host_ws_carrier PRIVATE wirekit_host)
target_include_directories(test_host_ws_carrier PRIVATE ${CMAKE_SOURCE_DIR}/src/host) # carrier.h is internal
add_test(NAME host_ws_carrier COMMAND test_host_ws_carrier)
# host_ws: two wirekit processes over ws and wss, python3-websockets as an independent ILTP peer
# (tests/pylib/iltppeer.py), certificates made with openssl, hostile peers. Loopback only.
add_test(NAME host_ws COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/ws_test.py $<TARGET_FILE:wirekit_cli>)
set_tests_properties(host_ws PROPERTIES TIMEOUT 900)
