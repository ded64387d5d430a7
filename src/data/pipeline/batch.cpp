#include <cstdlib>
#include <new>

#include "loader_shared.h"

namespace stoker::data {

namespace {

class HostAllocator final : public BufferAllocator {
 public:
  void* allocate(size_t bytes) override {
    const size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void deallocate(void* pointer, size_t) override { std::free(pointer); }
  const char* name() const override { return "host"; }
};

}  // namespace

BufferAllocator& host_allocator() {
  static HostAllocator* allocator = new HostAllocator();  // never destroyed: outlives all Batches
  return *allocator;
}

Batch::Batch(std::shared_ptr<LoaderShared> shared, BatchBuffer* buffer) : shared_(std::move(shared)), buffer_(buffer) {}

Batch::~Batch() { release(); }

Batch::Batch(Batch&& other) noexcept : shared_(std::move(other.shared_)), buffer_(other.buffer_) {
  other.buffer_ = nullptr;
}

Batch& Batch::operator=(Batch&& other) noexcept {
  if (this != &other) {
    release();
    shared_ = std::move(other.shared_);
    buffer_ = other.buffer_;
    other.buffer_ = nullptr;
  }
  return *this;
}

void Batch::release() {
  if (buffer_ != nullptr) shared_->give_back(buffer_);
  buffer_ = nullptr;
  shared_.reset();
}

int Batch::size() const { return buffer_->samples; }
int64_t Batch::epoch() const { return buffer_->epoch; }
int64_t Batch::index() const { return buffer_->batch_index; }
const void* Batch::data() const { return buffer_->data; }
size_t Batch::bytes() const { return static_cast<size_t>(size()) * shared_->sample_bytes; }
int Batch::frames() const { return shared_->frames; }
DType Batch::dtype() const { return shared_->spec.dtype; }
Layout Batch::layout() const { return shared_->spec.layout; }
const int64_t* Batch::labels() const { return buffer_->labels.data(); }
const float* Batch::targets() const { return buffer_->targets.data(); }
int Batch::target_dim() const { return shared_->target_dim; }
const uint64_t* Batch::indices() const { return buffer_->indices.data(); }
const std::shared_ptr<const void>& Batch::extra(int slot) const { return buffer_->extras[static_cast<size_t>(slot)]; }
const std::shared_ptr<const void>& Batch::finished() const { return buffer_->finished; }
const SampleRecord& Batch::record(int slot) const { return buffer_->records[static_cast<size_t>(slot)]; }
const GeometryTargets& Batch::geometry(int slot) const { return buffer_->geometry[static_cast<size_t>(slot)]; }
const GpuSample* Batch::gpu_sample(int slot) const {
  return buffer_->on_gpu[static_cast<size_t>(slot)] != 0 ? &buffer_->gpu[static_cast<size_t>(slot)] : nullptr;
}
int Batch::gpu_samples() const {
  int n = 0;
  for (int slot = 0; slot < size(); ++slot) n += buffer_->on_gpu[static_cast<size_t>(slot)];
  return n;
}

std::vector<int64_t> Batch::shape() const {
  const TransformSpec& spec = shared_->spec;
  std::vector<int64_t> shape{size()};
  if (frames() > 0) shape.push_back(frames());
  if (spec.layout == Layout::kNCHW) {
    shape.insert(shape.end(), {spec.channels, spec.out_height, spec.out_width});
  } else {
    shape.insert(shape.end(), {spec.out_height, spec.out_width, spec.channels});
  }
  return shape;
}

}  // namespace stoker::data
