# Sources of src/uncertainty/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/uncertainty/ensemble.cc
  src/uncertainty/propagate.cc
  src/uncertainty/sensitivity.cc
  src/uncertainty/overlap.cc
  src/uncertainty/summary.cc
  src/uncertainty/model_error.cc
  src/uncertainty/model_error_file.cc)
