# Sources of src/compare/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/compare/comparison.cc
  src/compare/confounders.cc
  src/compare/description.cc
  src/compare/known_settings.cc
  src/compare/load.cc
  src/compare/match.cc)
