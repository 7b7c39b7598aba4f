# Sources of src/util/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/util/csv.cc
  src/util/did_you_mean.cc
  src/util/excerpt.cc
  src/util/files.cc
  src/util/format.cc
  src/util/host_name.cc
  src/util/matrix.cc
  src/util/parallel.cc
  src/util/safe_name.cc
  src/util/sha256.cc)
