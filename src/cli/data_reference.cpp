#include "data_reference.h"

#include <fmt/format.h>

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "data/transform/ops/registry.h"
#include "data_reference_text.h"
#include "help_formatter.h"
#include "stoker/data/formats.h"
#include "stoker/data/loader_keys.h"
#include "stoker/data/split.h"
#include "stoker/data/transform.h"

namespace stoker::cli {

namespace {

namespace text = data_reference_text;
using data::ops::OpName;
using data::ops::TransformOp;

std::string code(std::string_view s) { return markdown_code(std::string(s)); }
std::string prose(std::string_view s) { return markdown_cell(std::string(s), false); }

// "size, scale, ratio": a name's parameters in binding order.
std::string params_text(const OpName& name) {
  std::string out;
  for (const std::string_view p : name.params) out += (out.empty() ? "" : ", ") + std::string(p);
  return out;
}

// The section heading of an entry: its listed names.
std::string heading(const TransformOp& op) {
  std::string out;
  for (const OpName& n : op.names) {
    if (n.listed) out += (out.empty() ? "" : ", ") + std::string(n.name);
  }
  return out;
}

// The anchor a heading gets on GitHub (and in scripts/check_doc_links.py): lower case, spaces
// as '-', other punctuation dropped.
std::string anchor(std::string_view title) {
  std::string out;
  for (const char c : title) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_' || c == '-') {
      out += static_cast<char>(std::tolower(u));
    } else if (c == ' ') {
      out += '-';
    }
  }
  return out;
}

std::string wrap_text(const TransformOp& op) {
  switch (op.wrap) {
    case data::ops::Wrap::kApplyP:
      return "yes";
    case data::ops::Wrap::kScaleP:
      return "yes (the two p multiply)";
    case data::ops::Wrap::kNo:
      break;
  }
  return "no";
}

// A chain's description without its output type and layout (" → float32 NCHW").
std::string steps_of(const data::TransformSpec& spec) {
  std::string text = spec.describe();
  if (const size_t tail = text.find(" \u2192 "); tail != std::string::npos) text.resize(tail);
  return text;
}

// What evaluation makes of `name`'s example: kept, off, or the chain it becomes.
std::string eval_text(const OpName& name) {
  const data::TransformSpec train = data::parse_transforms(name.example);
  const std::string eval = steps_of(data::eval_transform(train));
  if (eval == steps_of(train)) return "kept";
  if (eval == steps_of(data::parse_transforms("none"))) return "off";  // the example alone, dropped
  return code(eval);
}

std::string formats_section() {
  std::string out(text::kFormats);
  out += "| Data | Files | What it holds |\n|---|---|---|\n";
  for (const data::DataFormat& f : data::data_formats()) {
    std::string files;
    for (const std::string_view ext : f.extensions) files += (files.empty() ? "" : ", ") + code(ext);
    if (files.empty()) files = "a folder";
    out += "| " + prose(f.described) + " | " + files + " | " + std::string(f.doc) + " |\n";
  }
  out += text::kFormatsAfter;
  return out;
}

std::string transforms_section() {
  std::string out(text::kTransforms);
  out +=
      "| Transform | Parameters | `RandomApply` | Evaluation | Feature vectors | After GPU decoding |\n"
      "|---|---|---|---|---|---|\n";
  for (const TransformOp* op : data::ops::registry()) {
    const std::string link = "(#" + anchor(heading(*op)) + ")";
    for (const OpName& n : op->names) {
      if (!n.listed) continue;
      const std::string params = params_text(n);
      out += fmt::format("| [{}]{} | {} | {} | {} | {} | {} |\n", code(n.name), link,
                         params.empty() ? "\u2013" : code(params), wrap_text(*op), eval_text(n),
                         op->on_features ? "yes" : "no", op->on_gpu ? "on the GPU" : "CPU decoding");
    }
  }
  for (const TransformOp* op : data::ops::registry()) {
    out += "\n### " + heading(*op) + "\n\n" + std::string(op->doc) + "\n\n";
    std::string examples;
    std::string aliases;
    for (const OpName& n : op->names) {
      if (n.listed) {
        examples += (examples.empty() ? "" : ", ") + code(n.example);
      } else {
        aliases += (aliases.empty() ? "" : ", ") + code(n.name);
      }
    }
    out += (op->names.size() > 1 ? "Examples: " : "Example: ") + examples + ".";
    if (!aliases.empty()) out += " Also read: " + aliases + ".";
    out += "\n";
  }
  out += "\n";
  return out;
}

std::string splits_section() {
  std::string out(text::kSplits);
  out += "| `split` | Meaning | IDX files | Arrays (`.npz`, `.h5`, `.pt`) |\n|---|---|---|---|\n";
  for (const data::SplitDeclaration& d : data::split_declarations()) {
    std::string name = code(d.name);
    if (!d.alias.empty()) name += " or " + code(d.alias);
    std::string suffixes;
    for (const std::string_view suffix : d.suffixes) {
      if (!suffixes.empty()) suffixes += ", ";
      suffixes += suffix.empty() ? std::string("plain `x` / `y`") : code("x" + std::string(suffix));
    }
    const std::string idx = d.idx_prefix.empty() ? "none" : code(std::string(d.idx_prefix) + "-*");
    out += "| " + name + " | " + prose(d.meaning) + " | " + idx + " | " + suffixes + " |\n";
  }
  out += text::kSplitsAfter;
  return out;
}

std::string loader_options_section() {
  std::string out(text::kLoaderOptions);
  out +=
      "| `stoker.DataLoader` | command line | YAML key | default (Python / command line) | what it does |\n"
      "|---|---|---|---|---|\n";
  for (const data::LoaderKeySpec& row : data::loader_keys()) {
    const std::string python = row.python.empty() ? "" : code(std::string(row.python) + "=");
    const std::string python_default = row.python_default.empty() ? "\u2013" : code(row.python_default);
    const std::string cli_default = row.cli_default.empty() || row.flag.empty() ? "\u2013" : code(row.cli_default);
    std::string help = row.help;
    const std::string cli_values = data::values_text(row, data::FrontEnd::kCommandLine);
    const std::string python_values = data::values_text(row, data::FrontEnd::kPython);
    if (!cli_values.empty() && cli_values == python_values) {
      help += "; " + cli_values;
    } else if (!cli_values.empty() || !python_values.empty()) {
      if (!row.flag.empty() && !cli_values.empty()) help += "; command line: " + cli_values;
      if (!row.python.empty() && !python_values.empty()) help += "; Python: " + python_values;
    }
    out += "| " + python + " | " + code(row.flag) + " | " + code(row.yaml) + " | " + python_default + " / " +
           cli_default + " | " + prose(help) + " |\n";
  }
  return out;
}

}  // namespace

std::string data_reference_markdown() {
  std::string out = fmt::format("<!-- Generated by `stoker help data --markdown`; regenerate with: {} -->\n\n",
                                kDataReferenceCommand);
  out += text::kIntro;
  out += formats_section();
  out += transforms_section();
  out += text::kCsvFileLists;
  out += text::kClips;
  out += splits_section();
  out += loader_options_section();
  out += text::kTail;
  return out;
}

std::string data_reference_summary() {
  std::string out = "Data (--data, stoker.DataLoader's dataset):\n";
  for (const data::DataFormat& f : data::data_formats()) out += "  " + std::string(f.described) + "\n";
  out += "\nTransforms, in torchvision's notation:\n";
  for (const TransformOp* op : data::ops::registry()) {
    for (const OpName& n : op->names) {
      if (!n.listed) continue;
      out += "  " + std::string(n.name);
      if (!n.params.empty()) out += "(" + params_text(n) + ")";
      out += "\n";
    }
  }
  out +=
      "\nWhat each does, what evaluation makes of it, CSV lists, clips, splits and the loader options: "
      "docs/reference/data.md (stoker help data --markdown).\n";
  return out;
}

}  // namespace stoker::cli
