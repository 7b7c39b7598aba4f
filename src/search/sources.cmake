# Sources of src/search/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/search/best_load.cc
  src/search/capacity.cc
  src/search/measure.cc
  src/search/search_render.cc
  src/search/search.cc
  src/search/space.cc)
list(APPEND PPSEARCH_BENCH_SOURCES
  src/search/search_bench.cc)
