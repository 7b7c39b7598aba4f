# Sources of src/probe/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
# probe_script.py travels inside the binary: its text becomes a generated .cc
# (configure runs again when the script changes).
file(READ ${CMAKE_SOURCE_DIR}/src/probe/probe_script.py PPSEARCH_PROBE_SCRIPT)
configure_file(${CMAKE_SOURCE_DIR}/src/probe/probe_script.cc.in
  ${CMAKE_BINARY_DIR}/generated/probe_script.cc @ONLY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/src/probe/probe_script.py)
list(APPEND PPSEARCH_LIB_SOURCES
  src/probe/request.cc
  src/probe/node_result.cc
  src/probe/figures.cc
  src/probe/overlay.cc
  src/probe/probe.cc
  ${CMAKE_BINARY_DIR}/generated/probe_script.cc)
