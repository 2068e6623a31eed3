//===- LocalRanks.cpp - Ranks forked on this host, watched together -------===//
//
// Each rank writes its result into a pipe to the parent, which polls the
// pipes and reaps the ranks in one loop until every rank has exited and
// every pipe is drained, or something went wrong.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/LocalRanks.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

using namespace dpc;

namespace {
/// The parent's view of one rank.
struct RankProcess {
  pid_t pid = -1;
  /// Read end of the rank's result pipe; -1 once drained.
  int pipe = -1;
  std::string result;
  bool exited = false;
  /// When its pipe reached end of file (it exited), among the ranks: the
  /// first of several failures is the one to name.
  int closedOrder = -1;
};
} // namespace

/// Writes all of `data` to `fd`.
static bool writeAll(int fd, const std::string &data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

/// The body of a forked rank; never returns. It leaves through _exit: the
/// parent's atexit handlers and static destructors are the parent's to run.
[[noreturn]] static void
runRank(int rank, int resultFd,
        const std::function<bool(int rank, std::string &result)> &body) {
#ifdef __linux__
  // A rank must not outlive a parent that was killed.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  std::string result;
  if (!body(rank, result))
    ::_exit(1);
  if (!writeAll(resultFd, result)) {
    std::string message = "dpc: rank " + std::to_string(rank) +
                          ": cannot send the results: " + std::strerror(errno) +
                          "\n";
    (void)!::write(STDERR_FILENO, message.data(), message.size());
    ::_exit(1);
  }
  ::_exit(0);
}

/// Kills and reaps every rank still running and closes every pipe.
static void stopAll(std::vector<RankProcess> &ranks) {
  for (RankProcess &rank : ranks)
    if (!rank.exited && rank.pid > 0)
      ::kill(rank.pid, SIGKILL);
  for (RankProcess &rank : ranks) {
    if (!rank.exited && rank.pid > 0)
      while (::waitpid(rank.pid, nullptr, 0) < 0 && errno == EINTR)
        ;
    rank.exited = true;
    if (rank.pipe >= 0)
      ::close(rank.pipe);
    rank.pipe = -1;
  }
}

/// "exited with status 1", "was killed by signal 11 (Segmentation fault)".
static std::string describeExit(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           ::strsignal(WTERMSIG(status)) + ")";
  return "ended with wait status " + std::to_string(status);
}

/// Reads what is available on `rank`'s pipe; closes it at end of file,
/// numbering the closings in `closings`.
static void drain(RankProcess &rank, int &closings) {
  char buffer[4096];
  ssize_t n = ::read(rank.pipe, buffer, sizeof(buffer));
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0) {
    ::close(rank.pipe);
    rank.pipe = -1;
    rank.closedOrder = closings++;
    return;
  }
  rank.result.append(buffer, static_cast<size_t>(n));
}

Status dpc::runLocalRanks(
    int numRanks, std::chrono::seconds deadline,
    const std::function<bool(int rank, std::string &result)> &body,
    std::vector<std::string> &results) {
  std::vector<RankProcess> ranks(numRanks);
  for (int r = 0; r < numRanks; ++r) {
    int fds[2];
    if (::pipe(fds) != 0) {
      std::string error = "cannot start rank " + std::to_string(r) + ": " +
                          std::strerror(errno);
      stopAll(ranks);
      return Status::error(error);
    }
    pid_t pid = ::fork();
    if (pid == 0) {
      for (int earlier = 0; earlier < r; ++earlier)
        ::close(ranks[earlier].pipe);
      ::close(fds[0]);
      runRank(r, fds[1], body);
    }
    // The parent keeps only the read end: the pipe reaches end of file
    // when the rank exits.
    ::close(fds[1]);
    if (pid < 0) {
      std::string error = "cannot start rank " + std::to_string(r) + ": " +
                          std::strerror(errno);
      ::close(fds[0]);
      stopAll(ranks);
      return Status::error(error);
    }
    ranks[r].pid = pid;
    ranks[r].pipe = fds[0];
  }

  auto start = std::chrono::steady_clock::now();
  int closings = 0;
  for (;;) {
    std::vector<pollfd> polled;
    std::vector<RankProcess *> owners;
    for (RankProcess &rank : ranks)
      if (rank.pipe >= 0) {
        polled.push_back({rank.pipe, POLLIN, 0});
        owners.push_back(&rank);
      }
    // The timeout bounds how late an exit is noticed when no pipe moves.
    int ready = polled.empty() ? (::usleep(20000), 0)
                               : ::poll(polled.data(), polled.size(), 20);
    for (int i = 0; ready > 0 && i < static_cast<int>(polled.size()); ++i)
      if (polled[i].revents)
        drain(*owners[i], closings);

    // A rank that fails often takes its peers down with it: of the ranks
    // found failed, name the one that exited first.
    bool running = false;
    int failedRank = -1;
    std::string failure;
    for (int r = 0; r < numRanks; ++r) {
      RankProcess &rank = ranks[r];
      if (rank.exited)
        continue;
      int status = 0;
      pid_t reaped = ::waitpid(rank.pid, &status, WNOHANG);
      if (reaped == 0 || (reaped < 0 && errno == EINTR)) {
        running = true;
        continue;
      }
      rank.exited = true;
      if (reaped >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        continue;
      auto order = [&](int index) {
        int closed = ranks[index].closedOrder;
        return closed < 0 ? numRanks + index : closed;
      };
      if (failedRank >= 0 && order(failedRank) <= order(r))
        continue;
      failedRank = r;
      failure = "rank " + std::to_string(r) + " " +
                (reaped < 0 ? std::string("could not be waited for: ") +
                                  std::strerror(errno)
                            : describeExit(status)) +
                "; stopped the other ranks";
    }
    if (failedRank >= 0) {
      stopAll(ranks);
      return Status::error(failure);
    }
    bool draining =
        std::any_of(ranks.begin(), ranks.end(),
                    [](const RankProcess &rank) { return rank.pipe >= 0; });
    if (!running && !draining)
      break;
    if (std::chrono::steady_clock::now() - start > deadline) {
      // Every rank still running: the one that hangs, and the peers that
      // wait on it.
      std::string late;
      int count = 0;
      for (int r = 0; r < numRanks; ++r)
        if (!ranks[r].exited || ranks[r].pipe >= 0) {
          late += (count++ ? ", " : "") + std::to_string(r);
        }
      std::string error =
          (count == 1 ? "rank " : "ranks ") + late + " did not finish within " +
          std::to_string(deadline.count()) + " s; stopped every rank";
      stopAll(ranks);
      return Status::error(error);
    }
  }

  results.clear();
  for (RankProcess &rank : ranks)
    results.push_back(std::move(rank.result));
  return Status::success();
}
