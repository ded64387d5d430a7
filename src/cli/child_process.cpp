#include "child_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cmath>
#include <cstring>

extern char** environ;

namespace stoker::cli {

sigset_t termination_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);  // a closed SSH session: stop as for SIGTERM, children included
  sigaddset(&set, SIGCHLD);
  return set;
}

bool is_stop_signal(int signo) { return signo == SIGINT || signo == SIGTERM || signo == SIGHUP; }

void block_termination_signals() {
  const sigset_t set = termination_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

namespace {

pid_t spawn(const std::string& program, bool search_path, const std::vector<std::string>& argv, char* const* env) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);  // the child must see Ctrl-C normally
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int rc = search_path ? posix_spawnp(&pid, program.c_str(), nullptr, &attr, args.data(), env)
                             : posix_spawn(&pid, program.c_str(), nullptr, &attr, args.data(), env);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    throw CommandNotFound("cannot run '" + program + "': " + std::strerror(rc) +
                          (rc == ENOENT && search_path ? " (not found in PATH)" : ""));
  }
  return pid;
}

}  // namespace

pid_t spawn_command(const std::vector<std::string>& argv) { return spawn(argv[0], true, argv, environ); }

pid_t spawn_process(const std::string& path, const std::vector<std::string>& argv,
                    const std::vector<std::string>& env) {
  std::vector<char*> entries;
  for (const std::string& e : env) entries.push_back(const_cast<char*>(e.c_str()));
  entries.push_back(nullptr);
  return spawn(path, false, argv, entries.data());
}

int wait_for_child(pid_t child) {
  const sigset_t set = termination_set();
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    }
    if (done < 0 && errno != EINTR) return 1;
    siginfo_t info{};
    if (sigwaitinfo(&set, &info) < 0) continue;
    // Ctrl-C reaches the child through the terminal's process group already; a signal sent
    // to us alone is passed on, so the child can save its work.
    if (is_stop_signal(info.si_signo) && info.si_pid != 0) {
      ::kill(child, info.si_signo);
    }
  }
}

bool wait_for_signal(double seconds) {
  const sigset_t set = termination_set();
  for (;;) {
    int signo;
    if (seconds < 0) {
      signo = sigwaitinfo(&set, nullptr);
    } else {
      timespec timeout{};
      timeout.tv_sec = static_cast<time_t>(seconds);
      timeout.tv_nsec = static_cast<long>((seconds - std::floor(seconds)) * 1e9);
      signo = sigtimedwait(&set, nullptr, &timeout);
      if (signo < 0 && errno == EAGAIN) return false;
    }
    if (is_stop_signal(signo)) return true;
    if (signo == SIGCHLD) continue;  // not ours to handle here
    if (signo < 0 && errno != EINTR) return false;
  }
}

}  // namespace stoker::cli
