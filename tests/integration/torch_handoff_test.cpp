// The two programs of a build with libtorch: `stoker` runs the commands that do not train
// without loading libtorch, and hands train, evaluate, doctor and check to `stoker-torch`
// beside it, in the same process; without that program it says so in one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "stoker_program.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using testing::kStoker;
using testing::run_command;
using testing::TempDir;

class TorchHandoff : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch: one program does everything";
  }
};

// The dynamic loader's own account (LD_DEBUG=libs) of the libraries a command loads.
std::string libraries_loaded(const std::string& args) {
  return run_command("LD_DEBUG=libs " + kStoker + " " + args + " 2>&1 >/dev/null | grep 'calling init:'").out;
}

TEST_F(TorchHandoff, CommandsThatDoNotTrainNeverLoadLibtorch) {
  for (const std::string args : {"--version", "monitor --help", "bench loader --help", "report --help"}) {
    const std::string loaded = libraries_loaded(args);
    EXPECT_NE(loaded.find("libc.so"), std::string::npos) << args << ": LD_DEBUG gave nothing to check\n" << loaded;
    EXPECT_EQ(loaded.find("libtorch"), std::string::npos) << args << "\n" << loaded;
  }
  EXPECT_NE(libraries_loaded("evaluate /nonexistent --data /nonexistent").find("libtorch"), std::string::npos);
}

TEST_F(TorchHandoff, HelpAndUsageErrorsAreAnsweredBeforeLibtorchLoads) {
  for (const std::string args : {"train --help", "evaluate --help", "doctor --help", "check --help",
                                 "train --batch-size 0", "train --epochs 2 --lr -1", "doctor --workers -3",
                                 "evaluate --data x", "check --seconds 0", "train --no-such-flag"}) {
    const std::string loaded = libraries_loaded(args);
    EXPECT_NE(loaded.find("libc.so"), std::string::npos) << args << ": LD_DEBUG gave nothing to check\n" << loaded;
    EXPECT_EQ(loaded.find("libtorch"), std::string::npos) << args << "\n" << loaded;
  }
}

TEST_F(TorchHandoff, TheTrainerContinuesInTheSameProcessWithTheSameArguments) {
  // The exit code and the output are the trainer's own: here, its one-line refusal of weights
  // that are not there.
  const auto r = run_command(kStoker + " evaluate /nonexistent.safetensors --data /nonexistent");
  EXPECT_EQ(r.exit_code,
            run_command(kStoker + "-torch evaluate /nonexistent.safetensors --data /nonexistent").exit_code);
  testing::expect_one_line_error(r, r.exit_code, "/nonexistent", "the trainer's refusal through the handoff");
  // The process started as `stoker check` is now stoker-torch, and shows the command typed.
  const auto same = run_command(kStoker +
                                " check --seconds 5 >/dev/null 2>&1 & pid=$!; sleep 0.5; "
                                "readlink /proc/$pid/exe; tr '\\0' ' ' < /proc/$pid/cmdline; kill $pid; wait $pid");
  EXPECT_EQ(same.out, fs::canonical(kStoker).string() + "-torch\n" + kStoker + " check --seconds 5 ") << same.err;
}

TEST_F(TorchHandoff, AMissingTorchProgramIsOneLine) {
  TempDir dir;
  fs::copy_file(kStoker, dir.path() / "stoker");
  for (const std::string command : {"train", "evaluate w.safetensors --data d", "doctor", "check"}) {
    const auto r = run_command((dir.path() / "stoker").string() + " " + command);
    const std::string name = command.substr(0, command.find(' '));
    testing::expect_one_line_error(r, 1,
                                   "`stoker " + name + "` runs " + (dir.path() / "stoker-torch").string() +
                                       " (the stoker commands built with libtorch), which is missing",
                                   command);
  }
  EXPECT_EQ(run_command((dir.path() / "stoker").string() + " monitor --help").exit_code, 0);
  EXPECT_EQ(run_command((dir.path() / "stoker").string() + " train --help").exit_code, 0);
}

}  // namespace
}  // namespace stoker
