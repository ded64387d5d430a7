#include "extra_columns.h"

#include <pybind11/numpy.h>

#include <charconv>
#include <cmath>
#include <string_view>

#include "bindings.h"

namespace py = pybind11;

namespace stoker::python {

namespace {

// The source checked every cell of a column of numbers when it opened: these parse. A sample
// that carried no cells (none loadable near a bad one) gets 0.
int64_t integer_of(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

float number_of(std::string_view text) {
  float value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) return text.front() == '-' ? -INFINITY : INFINITY;
  return ec == std::errc() ? value : NAN;
}

const char* kind_name(data::ColumnKind kind) {
  switch (kind) {
    case data::ColumnKind::kInteger:
      return "integer";
    case data::ColumnKind::kNumber:
      return "number";
    case data::ColumnKind::kArray:
      return "array";
    case data::ColumnKind::kText:
      break;
  }
  return "text";
}

}  // namespace

py::list extra_columns_of(const data::Batch& batch, const std::vector<data::ExtraColumn>& columns) {
  const auto n = static_cast<size_t>(batch.size());
  std::vector<const std::string_view*> cells(n);
  for (size_t s = 0; s < n; ++s) cells[s] = data::extra_cells(batch.extra(static_cast<int>(s)));
  const auto cell = [&](size_t s, size_t c) { return cells[s] != nullptr ? cells[s][c] : std::string_view(); };
  py::list out(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    switch (columns[c].kind) {
      case data::ColumnKind::kInteger: {
        py::array_t<int64_t> values(static_cast<py::ssize_t>(n));
        auto* to = values.mutable_data();
        for (size_t s = 0; s < n; ++s) to[s] = integer_of(cell(s, c));
        out[c] = std::move(values);
        break;
      }
      case data::ColumnKind::kNumber: {
        py::array_t<float> values(static_cast<py::ssize_t>(n));
        auto* to = values.mutable_data();
        for (size_t s = 0; s < n; ++s) to[s] = cells[s] != nullptr ? number_of(cell(s, c)) : 0.0f;
        out[c] = std::move(values);
        break;
      }
      case data::ColumnKind::kText:
      case data::ColumnKind::kArray: {
        py::list values(n);
        for (size_t s = 0; s < n; ++s) values[s] = fs_str(cell(s, c));
        out[c] = std::move(values);
        break;
      }
    }
  }
  return out;
}

py::list column_cells(const data::Source& source, size_t column) {
  const data::SourceColumns* columns = source.columns();
  if (columns == nullptr || column >= columns->extra.size()) throw py::index_error("no such extra column");
  py::list out(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    const std::shared_ptr<const void> extra = source.extra_of(i);  // keeps the cells alive while read
    const std::string_view* cells = data::extra_cells(extra);
    out[i] = fs_str(cells != nullptr ? std::string(cells[column]) : std::string());
  }
  return out;
}

py::object columns_info(const data::Source& source) {
  const data::SourceColumns* columns = source.columns();
  if (columns == nullptr) return py::none();
  py::list targets, extra;
  for (const std::string& name : columns->targets) targets.append(fs_str(name));
  for (const data::ExtraColumn& c : columns->extra) extra.append(py::make_tuple(fs_str(c.name), kind_name(c.kind)));
  return py::dict(py::arg("path") = fs_str(columns->path), py::arg("targets") = targets, py::arg("extra") = extra);
}

}  // namespace stoker::python
