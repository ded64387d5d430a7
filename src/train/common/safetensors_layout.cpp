#include "train/common/safetensors_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <tuple>

#include "stoker/core/error.h"

namespace stoker::train {

namespace {

constexpr std::array<SafetensorsDtype, 10> kDtypes = {{
    {"F64", 8},
    {"I64", 8},
    {"F32", 4},
    {"I32", 4},
    {"F16", 2},
    {"BF16", 2},
    {"I16", 2},
    {"I8", 1},
    {"U8", 1},
    {"BOOL", 1},
}};

[[noreturn]] void not_safetensors(const std::string& path, const std::string& reason) {
  throw DataError(path + " is not a safetensors file: " + reason);
}

SafetensorsEntry parse_entry(const std::string& path, const std::string& name, const nlohmann::json& value) {
  const auto bad = [&](const std::string& what) { not_safetensors(path, "tensor '" + name + "' " + what); };
  if (!value.is_object()) bad("is not described by a JSON object");
  SafetensorsEntry entry;
  entry.name = name;
  const auto dtype = value.find("dtype");
  if (dtype == value.end() || !dtype->is_string()) bad("has no \"dtype\" string");
  entry.dtype = safetensors_dtype_named(dtype->get<std::string>());
  if (entry.dtype == nullptr) bad("has dtype " + dtype->dump() + ", which stoker cannot load");
  const auto shape = value.find("shape");
  if (shape == value.end() || !shape->is_array()) bad("has no \"shape\" array");
  uint64_t numel = 1;
  for (const auto& dim : *shape) {
    if (!dim.is_number_unsigned()) bad("has a shape entry that is not a non-negative integer: " + dim.dump());
    const uint64_t d = dim.get<uint64_t>();
    if (d > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, d, &numel)) bad("has a huge shape");
    entry.shape.push_back(static_cast<int64_t>(d));
  }
  const auto offsets = value.find("data_offsets");
  if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned()) {
    bad("has no \"data_offsets\" pair of non-negative integers");
  }
  entry.begin = (*offsets)[0].get<uint64_t>();
  entry.end = (*offsets)[1].get<uint64_t>();
  uint64_t bytes = 0;
  if (entry.end < entry.begin)
    bad(fmt::format("has data_offsets [{}, {}] that end before they begin", entry.begin, entry.end));
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(entry.dtype->size), &bytes) ||
      bytes != entry.end - entry.begin) {
    bad(fmt::format("has {} bytes of data for shape [{}] of {}", entry.end - entry.begin, fmt::join(entry.shape, ", "),
                    entry.dtype->name));
  }
  return entry;
}

}  // namespace

std::span<const SafetensorsDtype> safetensors_dtypes() { return kDtypes; }

const SafetensorsDtype* safetensors_dtype_named(std::string_view name) {
  for (const auto& d : kDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

uint64_t safetensors_header_length(const std::string& path, const uint8_t (&prefix)[8], uint64_t file_size) {
  if (file_size < 8) {
    not_safetensors(path, fmt::format("it has {} bytes, fewer than the 8-byte header length", file_size));
  }
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | prefix[i];
  if (header_size > kSafetensorsMaxHeaderBytes) {
    not_safetensors(path, fmt::format("header length {} is implausible", header_size));
  }
  if (header_size > file_size - 8) {
    not_safetensors(path, fmt::format("header length {} exceeds the {} bytes after it", header_size, file_size - 8));
  }
  return header_size;
}

SafetensorsLayout parse_safetensors_header(const std::string& path, std::string_view header, uint64_t file_size) {
  if (file_size < 8 || header.size() > file_size - 8) {
    not_safetensors(path, fmt::format("header length {} exceeds the file's {} bytes", header.size(), file_size));
  }
  const nlohmann::json json = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) not_safetensors(path, "the header is not valid JSON");
  if (!json.is_object()) not_safetensors(path, "the header is not a JSON object");

  SafetensorsLayout layout;
  layout.data_start = 8 + header.size();
  for (const auto& [key, value] : json.items()) {
    if (key == kSafetensorsMetadataKey) {
      if (!value.is_object()) not_safetensors(path, "__metadata__ is not a JSON object");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) not_safetensors(path, "__metadata__ value of '" + k + "' is not a string");
        layout.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    layout.tensors.push_back(parse_entry(path, key, value));  // json objects iterate by key
  }
  // The tensors must tile the data buffer: no overlap, no hole, nothing missing at the end.
  std::vector<const SafetensorsEntry*> by_offset;
  for (const auto& t : layout.tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  uint64_t expected = 0;
  for (const SafetensorsEntry* t : by_offset) {
    if (t->begin != expected) {
      not_safetensors(path, fmt::format("tensor '{}' starts at data byte {}, expected {} (overlap or hole)", t->name,
                                        t->begin, expected));
    }
    expected = t->end;
  }
  const uint64_t data_size = file_size - layout.data_start;
  if (expected > data_size) {
    not_safetensors(
        path, fmt::format("it is truncated: the tensors need {} bytes of data, the file has {}", expected, data_size));
  }
  if (expected < data_size) {
    not_safetensors(path, fmt::format("{} bytes follow the last tensor", data_size - expected));
  }
  return layout;
}

}  // namespace stoker::train
