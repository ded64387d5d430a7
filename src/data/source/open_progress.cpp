#include "stoker/data/open_progress.h"

namespace stoker::data {

namespace {
thread_local OpenProgress* t_progress = nullptr;
}  // namespace

OpenProgressScope::OpenProgressScope(OpenProgress* progress) : before_(t_progress) { t_progress = progress; }
OpenProgressScope::~OpenProgressScope() { t_progress = before_; }

OpenProgress* current_open_progress() { return t_progress; }

}  // namespace stoker::data
