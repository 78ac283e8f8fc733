#include "ptdsim/io/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ptdsim::io {

void write_file_atomically(const std::string& path, const std::string& content) {
  auto error = [&](const std::string& what, int err) {
    return std::runtime_error("cannot write '" + path + "': " + what + ": " + std::strerror(err));
  };
  // the temporary must be in the target's directory: rename() is atomic only within a filesystem
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw error("cannot create a temporary file", errno);
  // mkstemp creates 0600: keep the replaced file's mode, else the usual 0644 (umask() would be
  // process-global state, racy with threads)
  struct stat st {};
  ::fchmod(fd, ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644);

  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw error("write failed", err);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  int err = ::fsync(fd) == 0 ? 0 : errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw error("cannot flush", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw error("cannot rename the temporary file into place", err);
  }
}

}  // namespace ptdsim::io
