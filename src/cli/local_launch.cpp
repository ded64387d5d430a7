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
#include <tuple>
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

// Waits up to a second for a process of `alive` (pid -> rank) to exit with an error code of its
// own (not killed by a signal), reaping what ends meanwhile (the leader's code into
// *leader_code); returns its rank, status and exit code, or nothing.
std::optional<std::tuple<int, int, int>> reap_own_failure(std::map<pid_t, int>& alive, int* leader_code) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!alive.empty() && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    const auto it = done > 0 ? alive.find(done) : alive.end();
    if (it == alive.end()) {
      if (done < 0 && errno != EINTR) break;  // no children left
      if (done <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    const int rank = it->second;
    alive.erase(it);
    const int code = exit_code_of(status);
    if (rank == 0) *leader_code = code;
    if (WIFEXITED(status) && code != 0) return std::tuple{rank, status, code};
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
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done > 0) {
      const auto it = alive.find(done);
      if (it == alive.end()) continue;
      int rank = it->second;
      alive.erase(it);
      int code = exit_code_of(status);
      if (rank == 0) leader_code = code;
      if (code != 0 && stop_signals == 0 && first_failure < 0) {
        // A broken pipe is what a process gets when another of the group has gone first (the
        // leader refusing bad data while the others wait for it). The one that went first is
        // the one to name: give it a moment to be reaped.
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE) {
          if (const auto first = reap_own_failure(alive, &leader_code)) std::tie(rank, status, code) = *first;
        }
        first_failure = code;
        // Its own message (an error line) says why; a crash or a kill says nothing, so say it.
        if (WIFSIGNALED(status)) {
          std::fprintf(stderr, "error: training process %d of %d %s; stopped the other%s\n", rank, processes,
                       exit_text(status).c_str(), processes == 2 ? "" : "s");
        }
        kill_all(SIGKILL);  // they would wait for it until the group's timeout
      }
      continue;
    }
    if (done < 0 && errno != EINTR) break;  // no children left
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
