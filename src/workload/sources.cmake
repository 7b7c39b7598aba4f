# Sources of src/workload/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/workload/instance_split.cc
  src/workload/lengths_file.cc
  src/workload/request_record.cc
  src/workload/workload.cc)
