// measure_restart_gain(): see stoker/data/prepare.h. Runs the workers' own per-sample path
// (SampleLoader) over two in-memory copies of the same samples.
#include <algorithm>
#include <vector>

#include "data/decode/restart_splice.h"
#include "sample_loader.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/data/encode.h"
#include "stoker/data/prepare.h"

namespace stoker::data {
namespace {

// Encoded samples held in memory; only what SampleLoader asks of a source.
class MemorySource final : public Source {
 public:
  explicit MemorySource(std::vector<std::vector<uint8_t>> files) : files_(std::move(files)) {}
  size_t size() const override { return files_.size(); }
  std::string name(size_t index) const override { return "sample " + std::to_string(index); }
  std::string describe() const override { return "samples in memory"; }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return names_; }
  int64_t label(size_t) const override { return 0; }
  void targets(size_t, float* out) const override { *out = 0; }
  Status read(size_t index, SampleData* out) const override {
    out->raw = false;
    out->feature_count = 0;
    out->bytes = files_[index];
    return Status::ok_status();
  }

 private:
  std::vector<std::vector<uint8_t>> files_;
  std::vector<std::string> names_;
};

}  // namespace

RestartGain measure_restart_gain(const Source& source, const TransformSpec& spec, const DecodeOptions& decode,
                                 int max_samples, int rounds) {
  RestartGain gain;
  if (source.size() == 0 || max_samples <= 0 || rounds <= 0) return gain;
  std::vector<std::vector<uint8_t>> plain;
  std::vector<std::vector<uint8_t>> prepared;
  const size_t count = std::min(source.size(), static_cast<size_t>(max_samples));
  const size_t stride = source.size() / count;
  SampleData data;
  RestartSplicer splicer;
  for (size_t k = 0; k < count; ++k) {
    if (!source.read(k * stride, &data).ok() || data.raw || data.feature_count > 0) continue;
    if (sniff_format(data.bytes) != ImageFormat::kJpeg) continue;
    if (splicer.parse(data.bytes)) {
      ++gain.already_marked;
      continue;
    }
    try {
      prepared.push_back(add_restart_markers(data.bytes));
    } catch (const Error&) {
      continue;  // damaged: a bad sample either way
    }
    plain.emplace_back(data.bytes.begin(), data.bytes.end());
  }
  if (plain.empty()) return gain;

  const MemorySource plain_source(std::move(plain));
  const MemorySource prepared_source(std::move(prepared));
  SampleLoader plain_loader(plain_source, spec, decode);
  SampleLoader prepared_loader(prepared_source, spec, decode);
  std::vector<uint8_t> out(spec.sample_bytes());
  const size_t n = plain_source.size();
  const auto run = [&](SampleLoader& loader, int64_t round) {
    Stopwatch watch;
    for (size_t i = 0; i < n; ++i) (void)loader.load(i, 1, round, i, out.data());
    return ns_to_seconds(watch.elapsed_ns());
  };
  run(plain_loader, 0);  // warm-up: decoder state, filter tables, caches
  run(prepared_loader, 0);
  for (int r = 0; r < rounds; ++r) {
    gain.plain_s += run(plain_loader, r + 1);
    gain.prepared_s += run(prepared_loader, r + 1);
  }
  gain.measured = static_cast<int>(n);
  gain.plain_s /= static_cast<double>(n) * rounds;
  gain.prepared_s /= static_cast<double>(n) * rounds;
  return gain;
}

}  // namespace stoker::data
