# Sources of src/memory/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/memory/activation.cc
  src/memory/memory_interval.cc
  src/memory/memory_model.cc
  src/memory/served.cc
  src/memory/sglang_reserve.cc
  src/memory/state_pool.cc)
