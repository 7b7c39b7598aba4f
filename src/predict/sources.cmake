# Sources of src/predict/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/predict/disaggregated.cc
  src/predict/predict.cc
  src/predict/search_points.cc)
list(APPEND PPSEARCH_BENCH_SOURCES
  src/predict/predict_bench.cc)
