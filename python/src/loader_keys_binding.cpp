// stoker._stoker.loader_keys(), auto_workers() and buffers_in_flight(): the input pipeline's
// table of options (stoker/data/loader_keys.h), from which stoker.DataLoader checks its
// keywords (stoker/_options.py) as stoker train and stoker bench loader check their flags;
// usable_cores(), pinned_by_launcher() and rank_cores(): the cores a rank counts, as stoker train counts them
// (stoker/core/process.h).
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <vector>

#include "bindings.h"
#include "stoker/core/process.h"
#include "stoker/data/gpu_decode.h"
#include "stoker/data/loader_keys.h"

namespace py = pybind11;

namespace stoker::python {

namespace {

py::object name_or_none(std::string_view name) {
  return name.empty() ? py::object(py::none()) : py::object(py::str(std::string(name)));
}

// A Python literal of the table ("'auto'", "None", "0.01") as the value it writes.
py::object literal(std::string_view text) {
  if (text.empty()) return py::none();
  return py::module_::import("ast").attr("literal_eval")(std::string(text));
}

py::dict row_dict(const data::LoaderKeySpec& row) {
  using data::KeyType;
  const char* type = row.type == KeyType::kInt      ? "int"
                     : row.type == KeyType::kNumber ? "number"
                     : row.type == KeyType::kBool   ? "bool"
                                                    : "word";
  py::object min = py::none(), max = py::none();
  if (row.type == KeyType::kInt) {
    min = py::int_(row.lo);
    max = py::int_(row.hi);
  } else if (row.type == KeyType::kNumber) {
    min = py::float_(row.min);
    if (std::isfinite(row.max)) max = py::float_(row.max);
  }
  py::list choices;
  for (const data::KeyWord& word : row.words) {
    if (!word.python.empty()) choices.append(std::string(word.python));
  }
  py::list extras;
  for (const data::KeyExtra& extra : row.extras) {
    if (extra.python.empty()) continue;
    extras.append(py::dict(py::arg("value") = literal(extra.python), py::arg("text") = std::string(extra.python),
                           py::arg("meaning") = std::string(extra.meaning)));
  }
  return py::dict(py::arg("python") = name_or_none(row.python), py::arg("flag") = name_or_none(row.flag),
                  py::arg("yaml") = name_or_none(row.yaml), py::arg("type") = type, py::arg("min") = min,
                  py::arg("max") = max, py::arg("choices") = choices, py::arg("extras") = extras,
                  py::arg("default") = literal(row.python_default),
                  py::arg("cli_default") = name_or_none(row.cli_default), py::arg("help") = std::string(row.help),
                  py::arg("values") = data::values_text(row, data::FrontEnd::kPython));
}

// decode= as a DecodeMode; ValueError naming the words for another.
data::DecodeMode decode_mode_of(const std::string& decode) {
  const auto words = data::loader_key(data::LoaderKey::kDecode).words;
  size_t mode = 0;
  while (mode < words.size() && words[mode].python != decode) ++mode;
  if (mode == words.size()) {
    throw py::value_error(data::word_message(data::LoaderKey::kDecode, decode, data::FrontEnd::kPython, "decode"));
  }
  return static_cast<data::DecodeMode>(mode);
}

}  // namespace

void bind_loader_keys(py::module_& m) {
  m.def(
      "loader_keys",
      [] {
        py::list rows;
        for (const data::LoaderKeySpec& row : data::loader_keys()) rows.append(row_dict(row));
        return rows;
      },
      "The input pipeline's options, one dict per option: its names (python: stoker.DataLoader's keyword, flag: "
      "the command line's, yaml: stoker train's key; None where that front end lacks it), type ('int', 'number', "
      "'bool', 'word'), min and max (None: no bound), choices (a word's values), extras (values besides the range: "
      "value, text, meaning), default (stoker.DataLoader's), cli_default, help and values (the values in words)");
  m.def(
      "choose_decode",
      [](const std::string& decode, bool cuda, bool cuda_available, const std::vector<std::string>& nvjpeg_dirs) {
        const data::DecodeChoice choice =
            data::choose_decode(decode_mode_of(decode), {cuda, cuda_available}, data::FrontEnd::kPython, nvjpeg_dirs);
        const auto words = data::loader_key(data::LoaderKey::kDecode).words;
        return py::make_tuple(std::string(words[static_cast<size_t>(choice.use)].python), choice.error, choice.note);
      },
      "What decode= means here: (the decoder used, 'cpu' or 'gpu'; the one-line error when 'gpu' cannot be, or ''; "
      "the one-line note when 'auto' decodes on the CPU for batches on a GPU, or ''). cuda: the batches go to a CUDA "
      "device; nvjpeg_dirs: folders to look for nvJPEG in besides the standard places",
      py::arg("decode"), py::arg("cuda"), py::arg("cuda_available"), py::arg("nvjpeg_dirs"));
  m.def(
      "gpu_handoff_for",
      [](const std::string& decode, bool has_hardware) {
        return std::string(handoff_name(data::gpu_handoff_for(decode_mode_of(decode), has_hardware)));
      },
      "Which JPEGs the workers leave for the GPU for decode='gpu' or 'auto' once nvJPEG is open "
      "(stoker/data/gpu_decode.h): 'all', 'cuda_path', 'hardware', or 'off' (auto without the JPEG engine)",
      py::arg("decode"), py::arg("has_hardware"));
  m.def("usable_cores", &usable_cores, "The CPUs this process may run on (its affinity mask), at least 1");
  m.def("pinned_by_launcher", &pinned_by_launcher,
        "Whether this process may run on fewer CPUs than its parent (a launcher pinned it to a share of them)");
  m.def("rank_cores", &rank_cores,
        "The cores this process counts as its own as one of local_processes ranks on this machine: its CPUs as they "
        "are where its launcher pinned it (fewer than its parent's), else an equal share of them; at least 1",
        py::arg("local_processes"));
  m.def("auto_workers", &data::auto_workers, "Where num_workers='auto' starts on this many cores", py::arg("cores"));
  m.def("buffers_in_flight", &data::buffers_in_flight,
        "The loader's batch buffers for a per-worker prefetch_factor: prefetch_factor x workers, at least 2 and at "
        "most the loader's limit",
        py::arg("prefetch_factor"), py::arg("workers"));
}

}  // namespace stoker::python
