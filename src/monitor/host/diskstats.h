// Private: bytes read and written per whole disk, from /proc/diskstats.
//
// Which lines count: summing every line would count each I/O twice (once on the partition,
// once on its disk) and add RAM-backed devices. The rule works from the names alone, so it
// needs no /sys and a fake /proc tree can test it:
//   - virtual devices are dropped: loop, ram, zram, sr (optical), fd (floppy), each followed
//     by a digit;
//   - partitions are dropped: a name that is another listed name plus digits when that name
//     ends in a letter (sda1 of sda, vda2 of vda, xvda1 of xvda), or plus "p" and digits when
//     it ends in a digit (nvme0n1p1 of nvme0n1, mmcblk0p1 of mmcblk0, md0p1 of md0);
//   - everything else is kept, device-mapper (dm-N) and software RAID (mdN) included.
// So a filesystem on LVM or RAID counts its I/O on both the dm/md device and the disks below
// it; telling stacked devices apart needs /sys/block/*/slaves, which this does not read.
#pragma once

#include <string_view>
#include <vector>

#include "monitor/host/device_counters.h"

namespace stoker::monitor::host {

// Parses /proc/diskstats text into *out (cleared first): one entry per whole disk, `in` =
// bytes read, `out` = bytes written (the sector fields are always in 512-byte units,
// whatever the device's sector size). Malformed lines are skipped.
void parse_diskstats(std::string_view text, std::vector<DeviceCounters>* out);

// The rule above, for one name against the names of all listed devices.
bool is_virtual_disk(std::string_view name);
bool is_partition(std::string_view name, const std::vector<DeviceCounters>& listed);

}  // namespace stoker::monitor::host
