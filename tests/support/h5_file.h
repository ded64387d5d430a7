// H5File: a new HDF5 file written with the HDF5 C library, as h5py writes it, for the tests of the
// HDF5 readers (header-only: only tests built where CMake found HDF5 include it).
#pragma once

#include <gtest/gtest.h>
#include <hdf5.h>

#include <string>
#include <vector>

namespace stoker::testing {

// A new HDF5 file; datasets are written with a file type (what lies on disk) and a memory
// type (what `values` hold), as h5py's create_dataset does.
class H5File {
 public:
  explicit H5File(const std::string& path)
      : path_(path), id_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {
    EXPECT_GE(id_, 0) << path;
  }
  ~H5File() { H5Fclose(id_); }
  H5File(const H5File&) = delete;
  H5File& operator=(const H5File&) = delete;

  hid_t id() const { return id_; }
  const std::string& path() const { return path_; }

  template <typename T>
  void write(const std::string& name, hid_t file_type, hid_t memory_type, const std::vector<hsize_t>& shape,
             const std::vector<T>& values, hid_t create_plist = H5P_DEFAULT, hid_t where = -1) {
    const hid_t space = H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr);
    const hid_t dataset =
        H5Dcreate2(where >= 0 ? where : id_, name.c_str(), file_type, space, H5P_DEFAULT, create_plist, H5P_DEFAULT);
    ASSERT_GE(dataset, 0) << name;
    EXPECT_GE(H5Dwrite(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
    H5Dclose(dataset);
    H5Sclose(space);
  }
  void floats(const std::string& name, const std::vector<hsize_t>& shape, const std::vector<float>& values) {
    write(name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, shape, values);
  }
  void int64s(const std::string& name, const std::vector<int64_t>& values) {
    write(name, H5T_STD_I64LE, H5T_NATIVE_INT64, {values.size()}, values);
  }

 private:
  std::string path_;
  hid_t id_;
};

}  // namespace stoker::testing
