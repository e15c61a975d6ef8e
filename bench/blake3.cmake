# BLAKE3 benchmark (wirekit beside b3sum); included from bench/CMakeLists.txt.
add_executable(blake3_bench ${CMAKE_SOURCE_DIR}/bench/blake3_bench.c)
target_link_libraries(blake3_bench PRIVATE wirekit_static)
