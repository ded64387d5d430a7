// The watched loops' file beside a monitor log (stoker/report/loop_records.h, run.loops.csv):
// the bytes as that file beside a valid monitor log, loaded by `stoker report run.csv` and
// drawn (render_html).
#include <string>

#include "fuzz_input.h"
#include "stoker/report/html_report.h"
#include "stoker/report/run_report.h"

namespace {

constexpr char kMonitorLog[] =
    "timestamp,seconds,cpu_percent,mem_used_bytes,mem_available_bytes,mem_total_bytes\n"
    "t,0,50,1,3,4\nt,1,60,1,3,4\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string log =
      stoker::fuzz::write_file("run.csv", reinterpret_cast<const uint8_t*>(kMonitorLog), sizeof kMonitorLog - 1);
  stoker::fuzz::write_file("run.loops.csv", data, size);
  stoker::fuzz::expect_clean_outcome([&] { stoker::report::render_html(stoker::report::load_report(log)); });
  return 0;
}
