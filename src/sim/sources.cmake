# Sources of src/sim/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/sim/dp_scheduler.cc
  src/sim/dynamic_chunk.cc
  src/sim/decode_rounds.cc
  src/sim/decode_stretch.cc
  src/sim/disaggregated_engine.cc
  src/sim/engine.cc
  src/sim/online_engine.cc
  src/sim/scheduler.cc
  src/sim/trace.cc)
