#include "local_launch.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "stoker/core/error.h"
#include "stoker/core/process.h"

extern char** environ;

namespace stoker::cli {

namespace {

// This process's own argument vector, as the kernel holds it.
std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  size_t begin = 0;
  while (begin < all.size()) {
    const size_t end = all.find('\0', begin);
    args.push_back(all.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  if (args.empty()) throw SystemError("cannot read this process's arguments from /proc/self/cmdline");
  return args;
}

// A TCP port on the loopback interface that was free a moment ago (rank 0 serves the group's
// store on it).
int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw SystemError(std::string("cannot open a socket to find a free port: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) throw SystemError(std::string("cannot find a free port on 127.0.0.1: ") + std::strerror(error));
  return ntohs(address.sin_port);
}

// The environment of rank `rank`: this process's, with the group's variables set.
std::vector<std::string> rank_environment(int rank, int processes, int port, int threads) {
  std::map<std::string, std::string> set{{"RANK", std::to_string(rank)},
                                         {"LOCAL_RANK", std::to_string(rank)},
                                         {"WORLD_SIZE", std::to_string(processes)},
                                         {"LOCAL_WORLD_SIZE", std::to_string(processes)},
                                         {"MASTER_ADDR", "127.0.0.1"},
                                         {"MASTER_PORT", std::to_string(port)}};
  if (threads == 0 && std::getenv("OMP_NUM_THREADS") == nullptr) {
    set["OMP_NUM_THREADS"] = std::to_string(cores_per_process(processes));
  }
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::string name = text.substr(0, text.find('='));
    if (set.count(name) == 0 && name != "TORCHELASTIC_USE_AGENT_STORE") env.push_back(text);
  }
  for (const auto& [name, value] : set) env.push_back(name + "=" + value);
  return env;
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

int exit_code_of(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

// A process of the group that ended: its rank, wait status and exit code (128 + the signal
// when killed).
struct Ended {
  int rank = 0;
  int status = 0;
  int code = 0;
};

enum class Reaped { kOne, kNothingYet, kNoneLeft };

// Reaps, without blocking, a process of `alive` (pid -> rank) that has ended: erases it, keeps
// the leader's exit code in *leader_code and says which in *ended.
Reaped reap_one(std::map<pid_t, int>& alive, int* leader_code, Ended* ended) {
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(-1, &status, WNOHANG)) > 0) {
    const auto it = alive.find(done);
    if (it == alive.end()) continue;
    *ended = {.rank = it->second, .status = status, .code = exit_code_of(status)};
    alive.erase(it);
    if (ended->rank == 0) *leader_code = ended->code;
    return Reaped::kOne;
  }
  return done == 0 || errno == EINTR ? Reaped::kNothingYet : Reaped::kNoneLeft;
}

// Waits up to a second for a process of `alive` to exit with an error code of its own (not
// killed by a signal), reaping what ends meanwhile; returns it, or nothing.
std::optional<Ended> reap_own_failure(std::map<pid_t, int>& alive, int* leader_code) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!alive.empty() && std::chrono::steady_clock::now() < deadline) {
    Ended ended;
    const Reaped reaped = reap_one(alive, leader_code, &ended);
    if (reaped == Reaped::kNoneLeft) break;
    if (reaped == Reaped::kNothingYet) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (reaped == Reaped::kOne && WIFEXITED(ended.status) && ended.code != 0) return ended;
  }
  return std::nullopt;
}

}  // namespace

int launch_local_processes(int processes, int threads) {
  const std::vector<std::string> args = own_arguments();
  const int port = free_loopback_port();
  block_termination_signals();  // before the first child: no SIGCHLD or SIGINT goes unseen
  std::map<pid_t, int> alive;   // pid -> rank
  const auto kill_all = [&](int signo) {
    for (const auto& [pid, rank] : alive) ::kill(pid, signo);
  };
  try {
    for (int rank = 0; rank < processes; ++rank) {
      alive[spawn_process("/proc/self/exe", args, rank_environment(rank, processes, port, threads))] = rank;
    }
  } catch (...) {  // those started would wait for the missing one until the group's timeout
    kill_all(SIGKILL);
    for (const auto& [pid, rank] : alive) ::waitpid(pid, nullptr, 0);
    throw;
  }
  int stop_signals = 0;    // SIGINT/SIGTERM received: the group is stopping on purpose
  int first_failure = -1;  // exit code of the first process that failed, if any
  int leader_code = 0;
  const sigset_t set = termination_set();
  while (!alive.empty()) {
    Ended ended;
    const Reaped reaped = reap_one(alive, &leader_code, &ended);
    if (reaped == Reaped::kNoneLeft) break;
    if (reaped == Reaped::kOne) {
      if (ended.code != 0 && stop_signals == 0 && first_failure < 0) {
        // A broken pipe is what a process gets when another of the group has gone first (the
        // leader refusing bad data while the others wait for it). The one that went first is
        // the one to name: give it a moment to be reaped.
        if (WIFSIGNALED(ended.status) && WTERMSIG(ended.status) == SIGPIPE) {
          if (const auto first = reap_own_failure(alive, &leader_code)) ended = *first;
        }
        first_failure = ended.code;
        // Its own message (an error line) says why; a crash or a kill says nothing, so say it.
        if (WIFSIGNALED(ended.status)) {
          std::fprintf(stderr, "error: training process %d of %d %s; stopped the other%s\n", ended.rank, processes,
                       exit_text(ended.status).c_str(), processes == 2 ? "" : "s");
        }
        kill_all(SIGKILL);  // they would wait for it until the group's timeout
      }
      continue;
    }
    siginfo_t info{};
    if (sigwaitinfo(&set, &info) < 0) continue;
    if (!is_stop_signal(info.si_signo)) continue;
    if (++stop_signals > 1) {
      kill_all(SIGKILL);
      continue;
    }
    // A terminal's Ctrl-C reached the whole process group already; a signal sent to the
    // launcher alone is passed on.
    if (info.si_pid != 0) kill_all(info.si_signo);
  }
  if (first_failure >= 0) return first_failure;
  return leader_code;
}

}  // namespace stoker::cli
