// The /proc texts stoker monitor parses (src/monitor/host): a process's stat line, whose command
// name the process chooses itself ("(my (weird) proc)"), /proc/stat's cpu lines, meminfo,
// diskstats and net/dev; each gets the whole input.
#include <string_view>
#include <vector>

#include "fuzz_input.h"
#include "monitor/host/cpu_stat.h"
#include "monitor/host/device_counters.h"
#include "monitor/host/diskstats.h"
#include "monitor/host/meminfo.h"
#include "monitor/host/net_dev.h"
#include "monitor/host/proc_stat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace host = stoker::monitor::host;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  stoker::fuzz::expect_clean_outcome([&] {
    host::ProcStat stat;
    host::parse_proc_stat(text, &stat);
    host::CpuStat cpu;
    host::parse_cpu_stat(text, &cpu);
    host::parse_meminfo(text);
    std::vector<host::DeviceCounters> disks, links;
    host::parse_diskstats(text, &disks);
    for (const auto& disk : disks) host::is_partition(disk.name, disks);
    host::parse_net_dev(text, &links);
  });
  return 0;
}
