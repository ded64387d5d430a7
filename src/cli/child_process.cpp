#include "child_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cmath>
#include <cstring>

extern char** environ;

namespace stoker::cli {

namespace {

sigset_t termination_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGCHLD);
  return set;
}

}  // namespace

void block_termination_signals() {
  const sigset_t set = termination_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

pid_t spawn_command(const std::vector<std::string>& argv) {
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
  const int rc = posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    throw CommandNotFound("cannot run '" + argv[0] + "': " + std::strerror(rc) +
                          (rc == ENOENT ? " (not found in PATH)" : ""));
  }
  return pid;
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
    if ((info.si_signo == SIGINT || info.si_signo == SIGTERM) && info.si_pid != 0) {
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
    if (signo == SIGINT || signo == SIGTERM) return true;
    if (signo == SIGCHLD) continue;  // not ours to handle here
    if (signo < 0 && errno != EINTR) return false;
  }
}

}  // namespace stoker::cli
