//===- OnnxChildProcess.cpp - Running ONNX's library code in a child ------===//
//
// The child answers through a pipe: 'S' or 'F' and then the reply. Dying
// any other way (a signal, an exit without an answer) is a crash.
//
//===----------------------------------------------------------------------===//

#include "OnnxChildProcess.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

using namespace mlir::dpc::onnx_import;

/// Writes all of `text` to `fd`.
static void writeAll(int fd, const std::string &text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += size_t(n);
  }
}

ChildOutcome mlir::dpc::onnx_import::runInChildProcess(
    llvm::function_ref<bool(std::string &)> work, std::string &reply) {
  int fds[2];
  if (::pipe(fds) != 0)
    return work(reply) ? ChildOutcome::Succeeded : ChildOutcome::Failed;
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return work(reply) ? ChildOutcome::Succeeded : ChildOutcome::Failed;
  }
  if (child == 0) {
    // A crash is the parent's to report: the child dies quietly, without
    // the crash handlers' stack dumps.
    ::close(fds[0]);
    for (int signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
      std::signal(signal, SIG_DFL);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0)
      ::dup2(null, STDERR_FILENO);
    std::string answer;
    bool succeeded = work(answer);
    writeAll(fds[1], (succeeded ? "S" : "F") + answer);
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string answer;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    answer.append(buffer, size_t(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  bool exited = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!exited || answer.empty())
    return ChildOutcome::Crashed;
  reply = answer.substr(1);
  return answer[0] == 'S' ? ChildOutcome::Succeeded : ChildOutcome::Failed;
}
