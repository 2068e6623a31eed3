//===- OnnxShapeInference.cpp - ONNX's own shape inference ----------------===//
//
// ONNX reports inconsistent models by throwing, so this one file is built
// with exceptions and turns them into messages. Its inference functions
// also trust attributes they do not check (a LayerNormalization axis past
// the input's rank reads out of bounds), so they run in a child process:
// a crash there is a refusal of the model, not of dpc.
//
//===----------------------------------------------------------------------===//

#include "OnnxModelLoader.h"

#include "onnx/shape_inference/implementation.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

using namespace mlir::dpc::onnx_import;

/// Runs the inference here: false with ONNX's message when it throws.
static bool inferShapes(onnx::ModelProto &model, std::string &error) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                        /*strict_mode_val=*/1,
                                        /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  return true;
}

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

InferenceOutcome
mlir::dpc::onnx_import::runOnnxShapeInference(onnx::ModelProto &model,
                                              std::string &error) {
  int fds[2];
  if (::pipe(fds) != 0)
    return inferShapes(model, error) ? InferenceOutcome::Consistent
                                     : InferenceOutcome::Inconsistent;
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return inferShapes(model, error) ? InferenceOutcome::Consistent
                                     : InferenceOutcome::Inconsistent;
  }
  if (child == 0) {
    // The child answers 'C' (consistent) or 'I' and ONNX's message. A
    // crash is the parent's to report: it dies quietly, without the
    // crash handlers' stack dumps.
    ::close(fds[0]);
    for (int signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
      std::signal(signal, SIG_DFL);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0)
      ::dup2(null, STDERR_FILENO);
    std::string message;
    writeAll(fds[1], inferShapes(model, message) ? "C" : "I" + message);
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string answer;
  char buffer[4096];
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
    return InferenceOutcome::Crashed;
  if (answer[0] == 'C')
    return InferenceOutcome::Consistent;
  error = answer.substr(1);
  return InferenceOutcome::Inconsistent;
}
