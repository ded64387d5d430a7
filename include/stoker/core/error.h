// stoker/core/error.h — the small family of exceptions that end a run, and Status for
// failures that are expected (a bad sample, a missing optional library).
//
// Policy (docs/ARCHITECTURE.md, "Errors"):
//  - Expected, per-item failures are return values (Status). A corrupt JPEG is not exceptional.
//  - Run-ending failures are exceptions of this family. The CLI maps them to one line on
//    stderr and an exit code: UsageError -> 2, everything else -> 1.
//  - Messages name the thing, the value, what is allowed and, where possible, what to try.
//    They are complete sentences without a trailing newline; the CLI adds "error: ".
//  - No exception crosses a worker thread: workers catch and hand failures to the consumer.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace stoker {

// Base of every exception stoker throws on purpose.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  // Process exit code the CLI uses for this error.
  virtual int exit_code() const noexcept { return 1; }
};

// The user asked for something invalid: a bad flag, option value, config key.
class UsageError : public Error {
 public:
  using Error::Error;
  int exit_code() const noexcept override { return 2; }
};

// The data cannot be used: missing directory, no images, too many bad samples.
class DataError : public Error {
 public:
  using Error::Error;
};

// An I/O or system failure outside the user's control (disk full, mmap failed).
class SystemError : public Error {
 public:
  using Error::Error;
};

// Result of an operation that may fail for expected reasons. Cheap when ok().
// past_end(): a source's read of an index beyond the end of a stream that ended (a Python
// iterable-style Dataset); not ok(), and no bad sample: the loader ends the epoch there.
class Status {
 public:
  Status() = default;
  static Status ok_status() { return Status(); }
  static Status failure(std::string reason) { return Status(std::move(reason)); }
  static Status past_end() {
    Status status("past the end of the stream");
    status.past_end_ = true;
    return status;
  }

  bool ok() const noexcept { return !failed_; }
  bool is_past_end() const noexcept { return past_end_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  explicit Status(std::string reason) : failed_(true), reason_(std::move(reason)) {}
  bool failed_ = false;
  bool past_end_ = false;
  std::string reason_;
};

}  // namespace stoker
