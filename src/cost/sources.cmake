# Sources of src/cost/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/cost/calibration.cc
  src/cost/collective.cc
  src/cost/decode_step.cc
  src/cost/dp_step.cc
  src/cost/gemm.cc
  src/cost/layout_cost.cc
  src/cost/mla_prefill.cc
  src/cost/moe_dispatch.cc
  src/cost/parameters.cc
  src/cost/tensor_burst.cc)
