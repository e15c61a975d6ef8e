# BLAKE3 tests; included from tests/CMakeLists.txt.
add_executable(test_blake3 ${CMAKE_SOURCE_DIR}/tests/common/test_blake3.c)
target_link_libraries(test_blake3 PRIVATE wirekit_static)
target_include_directories(test_blake3 PRIVATE ${CMAKE_SOURCE_DIR}/tests)

# Every official vector in every mode, on every kernel this CPU has.
add_test(NAME blake3_vectors
         COMMAND test_blake3 ${WK_VECTORS_DIR}/blake3/test_vectors.json)

# `wirekit blake3` against the b3sum tool on random inputs (exit 77, reported as skipped, when
# b3sum is not installed).
add_test(NAME blake3_b3sum
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/common/blake3_b3sum.sh $<TARGET_FILE:wirekit_cli>)
set_tests_properties(blake3_b3sum PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
