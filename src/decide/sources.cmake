# Sources of src/decide/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/decide/objective.cc
  src/decide/rules.cc
  src/decide/sla.cc
  src/decide/steady_state.cc)
