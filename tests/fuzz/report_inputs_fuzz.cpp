// What stoker report reads from a run folder (stoker/report/run_report.h): the bytes as
// metrics.csv, summary.json, config.yaml, events.log and a tb/ event file of one folder, then as
// a monitor log alone; each loaded and drawn (render_html). The watched loops' file beside a
// monitor log has its own target (loops_file_fuzz.cpp).
#include <filesystem>

#include "fuzz_input.h"
#include "stoker/report/html_report.h"
#include "stoker/report/run_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  const fs::path run = stoker::fuzz::scratch_dir() / "run";
  fs::create_directories(run / "tb");
  for (const char* name : {"run/metrics.csv", "run/summary.json", "run/config.yaml", "run/events.log",
                           "run/tb/events.out.tfevents.1.fuzz"}) {
    stoker::fuzz::write_file(name, data, size);
  }
  stoker::fuzz::expect_clean_outcome([&] { stoker::report::render_html(stoker::report::load_report(run.string())); });
  const std::string log = stoker::fuzz::write_file("monitor.csv", data, size);
  stoker::fuzz::expect_clean_outcome([&] { stoker::report::render_html(stoker::report::load_report(log)); });
  return 0;
}
