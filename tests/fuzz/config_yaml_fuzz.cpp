// The training config file (apply_yaml_file: YAML through yaml-cpp, keys, value types), then
// validate() and to_yaml() of what it set, as `stoker train --config` does.
#include "fuzz_input.h"
#include "stoker/train/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = stoker::fuzz::write_file("config.yaml", data, size);
  stoker::fuzz::expect_clean_outcome([&] {
    stoker::train::TrainConfig config;
    stoker::train::apply_yaml_file(path, &config);
    stoker::train::to_yaml(config);
    stoker::train::validate(config);
  });
  return 0;
}
