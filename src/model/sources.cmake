# Sources of src/model/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/model/config_reader.cc
  src/model/families.cc
  src/model/hf_config.cc
  src/model/layers.cc
  src/model/model.cc
  src/model/model_summary.cc
  src/model/quantization.cc)
