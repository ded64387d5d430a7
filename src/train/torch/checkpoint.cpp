#include "checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>

#include "stoker/core/error.h"
#include "torch_compat.h"

namespace stoker::train {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kFormatVersion = 1;

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

CheckpointMeta read_meta(torch::serialize::InputArchive& archive) {
  c10::IValue v;
  auto get_int = [&](const char* key) {
    if (!archive.try_read(key, v) || !v.isInt()) throw std::runtime_error(std::string("missing ") + key);
    return v.toInt();
  };
  if (get_int("stoker_checkpoint_version") != kFormatVersion) throw std::runtime_error("unknown format version");
  CheckpointMeta meta;
  meta.epoch = get_int("epoch");
  meta.next_batch = get_int("next_batch");
  meta.global_step = get_int("global_step");
  meta.seed = static_cast<uint64_t>(get_int("seed"));
  meta.batch_size = get_int("batch_size");
  if (!archive.try_read("model_name", v) || !v.isString()) throw std::runtime_error("missing model_name");
  meta.model = v.toStringRef();
  return meta;
}

torch::serialize::InputArchive open_archive(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw DataError("checkpoint " + path + " does not exist");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const c10::Error& e) {
    throw DataError("checkpoint " + path + " is corrupt or not a stoker checkpoint (" +
                    first_line(e.what_without_backtrace()) + ")");
  }
  return archive;
}

}  // namespace

void save_checkpoint(const std::string& path, Network& model, torch::optim::Optimizer& optimizer,
                     const CheckpointMeta& meta) {
  const std::string tmp = path + ".tmp";
  try {
    torch::serialize::OutputArchive archive;
    archive.write("stoker_checkpoint_version", c10::IValue(kFormatVersion));
    archive.write("epoch", c10::IValue(meta.epoch));
    archive.write("next_batch", c10::IValue(meta.next_batch));
    archive.write("global_step", c10::IValue(meta.global_step));
    archive.write("seed", c10::IValue(static_cast<int64_t>(meta.seed)));
    archive.write("batch_size", c10::IValue(meta.batch_size));
    archive.write("model_name", c10::IValue(meta.model));
    torch::serialize::OutputArchive model_archive, optimizer_archive;
    model.save(model_archive);
    optimizer.save(optimizer_archive);
    archive.write("model", model_archive);
    archive.write("optimizer", optimizer_archive);
    archive.write("rng_cpu", compat::cpu_rng_state());
    archive.save_to(tmp);
  } catch (const c10::Error& e) {
    std::remove(tmp.c_str());
    throw SystemError("writing checkpoint " + path + " failed (" + first_line(e.what_without_backtrace()) +
                      "); the previous checkpoint is unchanged — free disk space or choose --output-dir");
  }
  fsync_path(tmp, O_RDONLY);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw SystemError("cannot move " + tmp + " to " + path);
  }
  const fs::path dir = fs::path(path).parent_path();
  fsync_path(dir.empty() ? "." : dir.string(), O_RDONLY | O_DIRECTORY);
}

CheckpointMeta read_checkpoint_meta(const std::string& path) {
  torch::serialize::InputArchive archive = open_archive(path);
  try {
    return read_meta(archive);
  } catch (const std::exception& e) {
    throw DataError("checkpoint " + path + " is not a usable stoker checkpoint (" + e.what() + ")");
  }
}

CheckpointMeta load_checkpoint(const std::string& path, Network& model, torch::optim::Optimizer& optimizer) {
  torch::serialize::InputArchive archive = open_archive(path);
  try {
    const CheckpointMeta meta = read_meta(archive);
    torch::serialize::InputArchive model_archive, optimizer_archive;
    archive.read("model", model_archive);
    archive.read("optimizer", optimizer_archive);
    model.load(model_archive);
    optimizer.load(optimizer_archive);
    torch::Tensor rng;
    archive.read("rng_cpu", rng);
    compat::set_cpu_rng_state(rng);
    return meta;
  } catch (const c10::Error& e) {
    throw DataError("checkpoint " + path + " does not fit this model or optimiser (" +
                    first_line(e.what_without_backtrace()) + ")");
  } catch (const std::runtime_error& e) {
    throw DataError("checkpoint " + path + " is not a usable stoker checkpoint (" + e.what() + ")");
  }
}

}  // namespace stoker::train
