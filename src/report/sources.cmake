# Sources of src/report/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/report/adaptive_section.cc
  src/report/breakdown.cc
  src/report/build_report.cc
  src/report/charts.cc
  src/report/compare_render.cc
  src/report/disaggregated_prediction.cc
  src/report/document.cc
  src/report/evidence_tables.cc
  src/report/html.cc
  src/report/markdown.cc
  src/report/markdown_checks.cc
  src/report/out_of_memory.cc
  src/report/pools_section.cc
  src/report/profile_evidence_section.cc
  src/report/result_table.cc
  src/report/search_page.cc
  src/report/simulated_prediction.cc
  src/report/simulation_page.cc
  src/report/svg_chart.cc
  src/report/uncertainty_tables.cc)
