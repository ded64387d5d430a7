#include "train/torch/model/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/core/numbers.h"
#include "stoker/core/user_files.h"
#include "train/torch/run/failure_text.h"
#include "train/torch/torch_compat.h"

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

// Why a write failed: strerror, and for a full disk or quota the space the checkpoint needs
// and the space left for it in `dir` (after its partial file was removed).
std::string write_failure(int error, uint64_t needed, const std::string& dir) {
  std::string why = std::strerror(error);
  if (error != ENOSPC && error != EDQUOT) return why;
  struct statvfs space {};
  if (::statvfs(dir.c_str(), &space) != 0) {
    return why + fmt::format(": the checkpoint needs {}", megabytes(static_cast<double>(needed)));
  }
  const double free_bytes = static_cast<double>(space.f_bavail) * static_cast<double>(space.f_frsize);
  return why + fmt::format(": the checkpoint needs {}, {} is free in {}", megabytes(static_cast<double>(needed)),
                           megabytes(free_bytes), dir);
}

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
  if (archive.try_read("world_size", v)) meta.world_size = get_int("world_size");
  if (archive.try_read("scaler_scale", v)) {
    if (!v.isDouble()) throw std::runtime_error("scaler_scale is not a number");
    GradScaler::State scaler;
    scaler.scale = v.toDouble();
    scaler.growth_tracker = get_int("scaler_growth_tracker");
    scaler.skipped = get_int("scaler_skipped");
    meta.scaler = scaler;
  }
  if (archive.try_read("ema_updates", v)) meta.ema_updates = get_int("ema_updates");
  if (archive.try_read("train_samples", v)) meta.train_samples = get_int("train_samples");
  if (torch::Tensor mean, deviation;
      archive.try_read("standardize_mean", mean) && archive.try_read("standardize_std", deviation)) {
    if (mean.dim() != 1 || mean.sizes() != deviation.sizes() || mean.scalar_type() != torch::kFloat32 ||
        deviation.scalar_type() != torch::kFloat32) {
      throw std::runtime_error("standardize_mean and standardize_std are not two float32 vectors of one length");
    }
    const auto values = [](const torch::Tensor& t) {
      const torch::Tensor c = t.contiguous();
      return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    };
    meta.standardize = FittedStatistics{values(mean), values(deviation)};
  }
  if (archive.try_read("plateau_lr", v)) {
    auto get_double = [&](const char* key) {
      if (!archive.try_read(key, v) || !v.isDouble()) throw std::runtime_error(std::string("missing ") + key);
      return v.toDouble();
    };
    meta.plateau = PlateauState{get_double("plateau_lr"), get_double("plateau_best"), get_int("plateau_bad_epochs"),
                                get_int("plateau_cooldown_left")};
    // Checkpoints from before plateau_metric watched the loss.
    if (archive.try_read("plateau_metric", v) && v.isString()) meta.plateau->metric = v.toStringRef();
  }
  return meta;
}

torch::serialize::InputArchive open_archive(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw DataError("checkpoint " + path + " does not exist");
  check_input_file(path, "checkpoint");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const c10::Error& e) {
    throw DataError("checkpoint " + path + " is corrupt or not a stoker checkpoint (" + reason_of(e) + ")");
  }
  return archive;
}

}  // namespace

void save_checkpoint(const std::string& path, Network& model, torch::optim::Optimizer& optimizer,
                     const CheckpointMeta& meta, const ModelEma* ema) {
  const std::string tmp = path + ".tmp";
  auto error_for = [&](const std::string& why) {
    return SystemError("writing checkpoint " + path + " failed (" + why +
                       "); the previous checkpoint is unchanged — free disk space or choose --output-dir");
  };
  auto failed = [&](const std::string& why) {
    std::remove(tmp.c_str());
    return error_for(why);
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw failed(std::strerror(errno));
  // libtorch's own file writer throws again from its destructor when a write fails (a full
  // disk aborts the process), so the archive streams through this sink, which never reports
  // a failure to libtorch: it keeps the first errno and drops the rest.
  int write_error = 0;
  uint64_t offered = 0;  // the checkpoint's size, written or not
  auto sink = [&](const void* data, size_t size) -> size_t {
    offered += size;
    const char* p = static_cast<const char*>(data);
    for (size_t left = size; left > 0 && write_error == 0;) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        write_error = n < 0 ? errno : EIO;
        break;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    return size;
  };
  try {
    torch::serialize::OutputArchive archive;
    archive.write("stoker_checkpoint_version", c10::IValue(kFormatVersion));
    archive.write("epoch", c10::IValue(meta.epoch));
    archive.write("next_batch", c10::IValue(meta.next_batch));
    archive.write("global_step", c10::IValue(meta.global_step));
    archive.write("seed", c10::IValue(static_cast<int64_t>(meta.seed)));
    archive.write("batch_size", c10::IValue(meta.batch_size));
    archive.write("model_name", c10::IValue(meta.model));
    archive.write("world_size", c10::IValue(meta.world_size));
    if (meta.train_samples) archive.write("train_samples", c10::IValue(*meta.train_samples));
    if (meta.standardize) {
      const auto vector = [](const std::vector<float>& values) { return torch::tensor(values, torch::kFloat32); };
      archive.write("standardize_mean", vector(meta.standardize->mean));
      archive.write("standardize_std", vector(meta.standardize->std));
    }
    if (meta.scaler) {
      archive.write("scaler_scale", c10::IValue(meta.scaler->scale));
      archive.write("scaler_growth_tracker", c10::IValue(meta.scaler->growth_tracker));
      archive.write("scaler_skipped", c10::IValue(meta.scaler->skipped));
    }
    if (meta.plateau) {
      archive.write("plateau_lr", c10::IValue(meta.plateau->lr));
      archive.write("plateau_best", c10::IValue(meta.plateau->best));
      archive.write("plateau_bad_epochs", c10::IValue(meta.plateau->bad_epochs));
      archive.write("plateau_cooldown_left", c10::IValue(meta.plateau->cooldown_left));
      archive.write("plateau_metric", c10::IValue(meta.plateau->metric));
    }
    torch::serialize::OutputArchive model_archive, optimizer_archive;
    model.save(model_archive);
    optimizer.save(optimizer_archive);
    archive.write("model", model_archive);
    archive.write("optimizer", optimizer_archive);
    archive.write("rng_cpu", compat::cpu_rng_state());
    if (ema != nullptr) {
      torch::serialize::OutputArchive ema_archive;
      ema->network().save(ema_archive);
      archive.write("ema", ema_archive);
      archive.write("ema_updates", c10::IValue(ema->updates()));
    }
    archive.save_to(sink);
  } catch (const c10::Error& e) {
    ::close(fd);
    throw failed(reason_of(e));
  }
  if (write_error == 0 && ::fsync(fd) != 0) write_error = errno;  // some filesystems report ENOSPC here
  if (::close(fd) != 0 && write_error == 0) write_error = errno;
  const fs::path dir = fs::path(path).parent_path();
  if (write_error != 0) {
    std::remove(tmp.c_str());  // first: its blocks count as free in the message
    throw error_for(write_failure(write_error, offered, dir.empty() ? "." : dir.string()));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(tmp.c_str());
    throw SystemError("cannot move " + tmp + " to " + path + ": " + std::strerror(error));
  }
  fsync_path(dir.empty() ? "." : dir.string(), O_RDONLY | O_DIRECTORY);
}

CheckpointFile::CheckpointFile(const std::string& path) : path_(path), archive_(open_archive(path)) {
  try {
    meta_ = read_meta(archive_);
  } catch (const std::exception& e) {
    throw DataError("checkpoint " + path + " is not a usable stoker checkpoint (" + e.what() + ")");
  }
}

void CheckpointFile::load_into(Network& model, torch::optim::Optimizer& optimizer, ModelEma* ema) {
  try {
    torch::serialize::InputArchive model_archive, optimizer_archive;
    archive_.read("model", model_archive);
    archive_.read("optimizer", optimizer_archive);
    model.load(model_archive);
    // The state (moments, momentum buffers) comes from the checkpoint; the hyperparameters stay
    // the config's (a resume may change weight_decay or norm_weight_decay). libtorch 2.x
    // restores each group's options on load, as Python's load_state_dict does; 1.13 does not.
    std::vector<std::unique_ptr<torch::optim::OptimizerOptions>> options;
    for (const auto& group : optimizer.param_groups()) options.push_back(group.options().clone());
    optimizer.load(optimizer_archive);
    for (size_t i = 0; i < options.size(); ++i) optimizer.param_groups()[i].set_options(std::move(options[i]));
    torch::Tensor rng;
    archive_.read("rng_cpu", rng);
    compat::set_cpu_rng_state(rng);
    if (ema != nullptr && meta_.ema_updates) {
      torch::serialize::InputArchive ema_archive;
      archive_.read("ema", ema_archive);
      ema->network().load(ema_archive);
      ema->set_updates(*meta_.ema_updates);
    } else if (ema != nullptr) {
      ema->restart_from(model);
    }
  } catch (const c10::Error& e) {
    throw DataError("checkpoint " + path_ + " does not fit this model or optimiser (" + reason_of(e) + ")");
  } catch (const std::runtime_error& e) {
    throw DataError("checkpoint " + path_ + " is not a usable stoker checkpoint (" + e.what() + ")");
  }
}

CheckpointMeta read_checkpoint_meta(const std::string& path) { return CheckpointFile(path).meta(); }

CheckpointMeta load_checkpoint(const std::string& path, Network& model, torch::optim::Optimizer& optimizer) {
  CheckpointFile file(path);
  file.load_into(model, optimizer);
  return file.meta();
}

}  // namespace stoker::train
