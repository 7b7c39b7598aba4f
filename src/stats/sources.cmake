# Sources of src/stats/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/stats/point_figures.cc
  src/stats/stats.cc)
