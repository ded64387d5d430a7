// describe_throttle_reasons (declared in stoker/monitor/sample.h): NVML's clock-event reason
// bits in words, lowest bit first.
#include <cstdio>
#include <string>

#include "monitor/gpu/nvml_api.h"
#include "stoker/monitor/sample.h"

namespace stoker::monitor {
namespace {

struct ReasonWord {
  unsigned long long bit;
  const char* word;
};

constexpr ReasonWord kReasonWords[] = {
    {nvmlClocksEventReasonGpuIdle, "idle"},
    {nvmlClocksEventReasonApplicationsClocksSetting, "app clocks"},
    {nvmlClocksEventReasonSwPowerCap, "power cap"},
    {nvmlClocksEventReasonHwSlowdown, "HW slowdown"},
    {nvmlClocksEventReasonSyncBoost, "sync boost"},
    {nvmlClocksEventReasonSwThermalSlowdown, "SW thermal"},
    {nvmlClocksEventReasonHwThermalSlowdown, "HW thermal"},
    {nvmlClocksEventReasonHwPowerBrakeSlowdown, "power brake"},
    {nvmlClocksEventReasonDisplayClockSetting, "display clocks"},
};

}  // namespace

std::string describe_throttle_reasons(uint64_t mask) {
  if (mask == 0) return "none";
  std::string words;
  uint64_t unknown = mask;
  for (const ReasonWord& reason : kReasonWords) {
    if ((mask & reason.bit) == 0) continue;
    if (!words.empty()) words += ", ";
    words += reason.word;
    unknown &= ~reason.bit;
  }
  // Bits a newer driver defines: shown as they are rather than dropped.
  if (unknown != 0) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(unknown));
    if (!words.empty()) words += ", ";
    words += hex;
  }
  return words;
}

}  // namespace stoker::monitor
