//===- FileIO.cpp - Whole-file reads and atomic writes --------------------===//
//
// C stdio and POSIX rename; errors name the file and give errno's text.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/FileIO.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace dpc;

static Status fileError(const std::string &path, const char *what) {
  return Status::error(path + ": " + what + ": " + std::strerror(errno));
}

Status dpc::readFile(const std::string &path, std::string &contents) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return fileError(path, "cannot open");
  contents.clear();
  // Read at once where the size is known (a model's parameters: hundreds
  // of megabytes, copied again at each doubling otherwise); in blocks for
  // a pipe or a file that grows meanwhile.
  struct stat info;
  if (::fstat(::fileno(file), &info) == 0 && S_ISREG(info.st_mode) &&
      info.st_size > 0) {
    contents.resize(static_cast<size_t>(info.st_size));
    contents.resize(std::fread(contents.data(), 1, contents.size(), file));
  }
  char buffer[1 << 16];
  size_t count;
  while ((count = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    contents.append(buffer, count);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed)
    return fileError(path, "cannot read");
  return Status::success();
}

Status dpc::writeFileAtomically(const std::string &path,
                                const std::string &contents) {
  // The process id keeps concurrent writers of one path apart.
  std::string temporary = path + ".tmp" + std::to_string(::getpid());
  std::FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file)
    return fileError(temporary, "cannot create");
  bool written =
      std::fwrite(contents.data(), 1, contents.size(), file) == contents.size();
  // On disk before the rename makes it visible: a crash never leaves the
  // new name with missing contents.
  written = std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0 && written;
  // fclose flushes, so it can fail too (a full disk).
  written = (std::fclose(file) == 0) && written;
  if (!written) {
    Status status = fileError(temporary, "cannot write");
    std::remove(temporary.c_str());
    return status;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    Status status =
        fileError(path, ("cannot replace it by " + temporary).c_str());
    std::remove(temporary.c_str());
    return status;
  }
  return Status::success();
}
