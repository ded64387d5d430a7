// TFRecord framing and the TensorBoard Event payloads it carries. Pure functions on bytes;
// EventFile (stoker/report/event_file.h) writes what they return.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/report/event_file.h"

namespace stoker::report {

// CRC-32C (Castagnoli, polynomial 0x1EDC6F41 reflected: 0x82F63B78), initial value and final
// xor 0xFFFFFFFF: crc32c("123456789") = 0xE3069283.
uint32_t crc32c(std::string_view bytes);
// TFRecord's mask over a CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t masked_crc32c(std::string_view bytes);

// Appends one record: uint64 length, masked CRC32C of the length's 8 bytes, the payload,
// masked CRC32C of the payload (integers little-endian).
void append_record(std::string* out, std::string_view payload);

// The first Event of a file: {wall_time, file_version: "brain.Event:2"}.
std::string file_version_event(double wall_time);
// An Event {wall_time, step, summary: {value: [{tag, simple_value}, ...]}}.
std::string scalars_event(double wall_time, int64_t step, const std::vector<Scalar>& scalars);

}  // namespace stoker::report
