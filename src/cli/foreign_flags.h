// Flags of torchvision's reference training script (references/classification/train.py) that
// `stoker train` spells otherwise or does not have: a pasted recipe command that trips on one
// gets a line saying what to write instead. Thread safety: pure function.
#pragma once

#include <string>

namespace stoker::cli {

// For `stoker train` and `stoker doctor` (argv[1]), the first such flag in argv[2..argc): one
// hint ("--model-ema: ..."); "" when none, or for another command.
std::string foreign_flag_hint(int argc, char** argv);

}  // namespace stoker::cli
