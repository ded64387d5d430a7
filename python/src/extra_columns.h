// A CSV list's columns passed through (captions, ids: data::SourceColumns::extra) as Python
// sees them: per batch, one value per column, built from the cells each sample carried
// (Batch::extra, data::extra_cells), the substitute's for a bad sample. With the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include "stoker/data/loader.h"
#include "stoker/data/source.h"

namespace stoker::python {

// The batch's values of `columns`, in order: a list of str for text (bytes that are not UTF-8
// as os.fsdecode makes them), a NumPy int64 array for integers, a float32 array for numbers.
pybind11::list extra_columns_of(const data::Batch& batch, const std::vector<data::ExtraColumn>& columns);

// Every sample's cell of extra column `column` (in columns()->extra), as str (os.fsdecode's
// form): a column of keypoints or boxes written as JSON arrays, read once. With the GIL held.
pybind11::list column_cells(const data::Source& source, size_t column);

// source.columns() for Python: None, or {"path": name, "targets": [names], "extra": [(name,
// "text" | "integer" | "number"), ...]}.
pybind11::object columns_info(const data::Source& source);

}  // namespace stoker::python
