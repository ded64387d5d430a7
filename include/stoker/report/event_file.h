// stoker/report/event_file.h — TensorBoard event files, written natively (no TensorFlow, no
// libprotobuf, no torch):
//
//   report::EventFile events("runs/x/tb");              // tb/events.out.tfevents.<time>.<host>
//   events.write(step, {{"train/loss", 0.31}, {"train/lr", 0.1}});
//
// Format (docs/MONITOR_FORMATS.md, "TensorBoard"). A TFRecord file: each record is its length
// (uint64, little-endian), the masked CRC32C of those 8 bytes, the payload, and the payload's
// masked CRC32C. Each payload is a tensorflow.Event protobuf: the first says file_version
// "brain.Event:2", each later one holds a Summary of scalars (Summary.Value{tag, simple_value})
// with its step and wall time. TensorBoard reads every file in a folder whose name holds
// "tfevents".
//
// Durability. Each record goes to the file in one write() as a whole, straight to the kernel
// (no user-space buffer): a process killed at any moment leaves a file whose complete records
// are all there, and a reader stops at the cut-off one.
//
// Errors. The constructor throws SystemError naming the folder or file and the reason when
// it cannot make them. A write that fails (disk full, I/O error, file size limit) stops the
// writer: the file is cut back to its last complete record, that write() returns a failure
// Status that says what failed and why, and every later write() does nothing and returns ok.
// So the caller says once that logging stopped, and its work goes on.
//
// Ownership. The object owns its file descriptor; the file is closed at destruction.
// Thread safety: every member may be called from any thread; writes are serialised.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/core/mutex.h"

namespace stoker::report {

// One scalar of an Event: TensorBoard shows one chart per tag ("train/loss").
struct Scalar {
  std::string tag;
  double value = 0;  // stored as float (simple_value), as TensorBoard's scalars are
};

// Seconds since the Unix epoch, now (the wall_time of an Event).
double unix_seconds_now();

class EventFile {
 public:
  // Makes `folder` (and its parents) and a new file in it named
  // events.out.tfevents.<unix seconds>.<hostname>, with ".1", ".2", ... appended when one of
  // that name exists; writes the file_version record.
  explicit EventFile(const std::string& folder);
  ~EventFile();
  EventFile(const EventFile&) = delete;
  EventFile& operator=(const EventFile&) = delete;

  // One Event holding `scalars` at `step` (none: nothing is written). `wall_time`: Unix
  // seconds; < 0 means now.
  Status write(int64_t step, const std::vector<Scalar>& scalars, double wall_time = -1) STOKER_EXCLUDES(mutex_);

  const std::string& path() const { return path_; }
  // Whether a failed write stopped the writer.
  bool stopped() const STOKER_EXCLUDES(mutex_);
  // Records written so far, the file_version record included.
  int64_t records() const STOKER_EXCLUDES(mutex_);

 private:
  // Appends one framed record; on failure cuts the file back, stops and says why.
  Status append(const std::string& payload) STOKER_REQUIRES(mutex_);

  std::string path_;
  mutable Mutex mutex_;
  int fd_ STOKER_GUARDED_BY(mutex_) = -1;
  uint64_t bytes_ STOKER_GUARDED_BY(mutex_) = 0;
  int64_t records_ STOKER_GUARDED_BY(mutex_) = 0;
  bool stopped_ STOKER_GUARDED_BY(mutex_) = false;
};

}  // namespace stoker::report
