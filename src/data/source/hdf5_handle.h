// What the HDF5 readers share (hdf5_source.cpp, hdf5_chunk_reader.cpp): the lock that serializes
// calls into the library, and identifiers closed at the end of their scope. Only built with HDF5.
#pragma once

#include <hdf5.h>

#include <cstddef>

#include "stoker/core/mutex.h"

namespace stoker::data {

// An HDF5 library built without --enable-threadsafe (the default of a source build) allows one
// caller at a time; Debian's is thread-safe, which is one global lock inside the library. Every
// call into the library takes this lock, so both builds work; calls are few and short (opening a
// file; reading one chunk's stored bytes, which are undone outside it).
Mutex& hdf5_mutex();

// True for an IEEE 754 binary16/32/64 layout of `size` bytes (HDF5 also describes other float
// formats): the floats stoker converts per row itself.
bool ieee_float(hid_t type, size_t size);

// An HDF5 identifier closed with `close` when it goes out of scope. Not copyable.
class Hid {
 public:
  Hid(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Hid() {
    if (id_ >= 0) close_(id_);
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

}  // namespace stoker::data
