# ILTP sync load (docs/benchmarks.md, "ILTP sync load"): `make sync_load` runs
# bench/sync_load.py against the built CLI. Not part of the default build or of ctest.
add_custom_target(sync_load
                  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/sync_load.py $<TARGET_FILE:wirekit_cli>
                  DEPENDS wirekit_cli
                  WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR}/..
                  USES_TERMINAL)
