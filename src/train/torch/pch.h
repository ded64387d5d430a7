// Precompiled header of stoker_train: the expensive torch includes, parsed once.
#pragma once

#include <torch/torch.h>
