#include "ptdsim/io/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>
#include <vector>
#include <stdexcept>
#include <string>
#include <system_error>

#include "temp_registry.hpp"

namespace ptdsim::io {
namespace {

std::runtime_error write_error(const std::string& path, const std::string& what, int err) {
  return std::runtime_error("cannot write '" + path + "': " + what + ": " + std::strerror(err));
}

// Writes all of `content` to `fd`; 0 or the errno of the failed write.
int write_all(int fd, std::string_view content) {
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return 0;
}

// Follows symbolic links at `path` to the name that is no link (it may not exist: a dangling link
// is written through, as a shell's `>` does). Relative link texts resolve against the link's
// directory. 40 hops, as the kernel's ELOOP limit.
std::string follow_links(const std::string& path) {
  std::string p = path;
  for (int hop = 0; hop < 40; ++hop) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    const ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
    if (n < 0) throw write_error(path, "cannot read the symbolic link", errno);
    target.resize(static_cast<std::size_t>(n));
    if (target.empty() || target.front() != '/') {
      const auto slash = p.find_last_of('/');
      if (slash != std::string::npos) target = p.substr(0, slash + 1) + target;
    }
    p = target;
  }
  throw write_error(path, "cannot follow the symbolic link", ELOOP);
}

// FIFOs and character devices: opened and written as they are (a FIFO waits for its reader, as
// with a shell's `>`).
void write_direct(const std::string& shown, const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw write_error(shown, "cannot open", errno);
  int err = write_all(fd, content);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) throw write_error(shown, "write failed", err);
}

// The first half of an atomic replace: the content written and flushed to a temporary beside
// `path`, which the second half (commit) renames over it; nothing at `path` changes before that.
std::unique_ptr<detail::LiveTemp> stage(const std::string& shown, const std::string& path, const std::string& content) {
  // the temporary must be in the target's directory: rename() is atomic only within a filesystem
  std::unique_ptr<detail::LiveTemp> tmp;
  try {
    tmp = std::make_unique<detail::LiveTemp>(path);
  } catch (const std::system_error& e) {
    throw write_error(shown, "cannot create a temporary file", e.code().value());
  }
  // the temporary is created 0600: keep the replaced file's mode, else the usual 0644 (umask()
  // would be process-global state, racy with threads)
  struct stat st {};
  ::fchmod(tmp->fd(), ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644);
  if (int err = write_all(tmp->fd(), content)) throw write_error(shown, "write failed", err);
  int err = ::fsync(tmp->fd()) == 0 ? 0 : errno;
  if (int close_err = tmp->close(); err == 0) err = close_err;
  if (err != 0) throw write_error(shown, "cannot flush", err);
  return tmp;
}

void commit(const std::string& shown, const std::string& path, detail::LiveTemp& tmp) {
  if (int rename_err = tmp.rename_to(path))
    throw write_error(shown, "cannot rename the temporary file into place", rename_err);
}

void replace_atomically(const std::string& shown, const std::string& path, const std::string& content) {
  auto tmp = stage(shown, path, content);
  commit(shown, path, *tmp);
}

// How write_output treats a name: standard output, written directly (FIFO, character device), or
// replaced through a temporary (a regular file, or a name not there yet). Throws for what it
// refuses (a directory, a socket).
enum class Route { out, direct, replace };
Route route_of(const std::string& path, std::string& target) {
  if (path == "-") return Route::out;
  target = follow_links(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return Route::direct;
    if (S_ISDIR(st.st_mode)) throw write_error(path, "cannot replace", EISDIR);
    if (!S_ISREG(st.st_mode))
      throw std::runtime_error("cannot write '" + path + "': not a regular file, FIFO or character device");
  }
  return Route::replace;
}

// std::cout's buffer once use_checked_stdout() ran: plain write(2) calls on descriptor 1 that keep
// the first error's errno, so the message can say why (stdio's error flag cannot: errno is long
// overwritten by the time a program looks). After an error, further output is dropped.
class CheckedStdout : public std::streambuf {
 public:
  CheckedStdout() { setp(buf_, buf_ + sizeof buf_); }
  int error() const { return err_; }

 protected:
  int_type overflow(int_type c) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    const std::string_view pending(pbase(), static_cast<std::size_t>(pptr() - pbase()));
    setp(buf_, buf_ + sizeof buf_);
    if (err_ == 0 && !pending.empty()) err_ = write_all(STDOUT_FILENO, pending);
    return err_ == 0 ? 0 : -1;
  }

 private:
  char buf_[1 << 16];
  int err_ = 0;
};
CheckedStdout* g_checked = nullptr;

// The errno of the first failed write to standard output, or 0. Without use_checked_stdout()
// (library users, tests), std::cout's own state and stdio's.
int stdout_error() {
  if (g_checked) return g_checked->error();
  if (std::cout.fail() || std::ferror(stdout)) return EIO;
  return 0;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  replace_atomically(path, path, content);
}

void write_output(const std::string& path, const std::string& content) {
  std::string target;
  switch (route_of(path, target)) {
    case Route::out: write_stdout(content); return;
    case Route::direct: write_direct(path, target, content); return;
    case Route::replace: replace_atomically(path, target, content); return;
  }
}

void write_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  // every name checked and every file staged before any is touched: a refused name or a failed
  // write leaves nothing behind (the staged temporaries are removed as they go out of scope)
  struct Staged {
    std::string path, target;
    std::unique_ptr<detail::LiveTemp> tmp;
  };
  std::vector<Staged> staged;
  std::vector<std::string> targets(outputs.size());
  std::vector<Route> routes;
  for (std::size_t i = 0; i < outputs.size(); ++i) routes.push_back(route_of(outputs[i].first, targets[i]));
  for (std::size_t i = 0; i < outputs.size(); ++i)
    if (routes[i] == Route::replace)
      staged.push_back({outputs[i].first, targets[i], stage(outputs[i].first, targets[i], outputs[i].second)});
  // then what cannot be staged (standard output, FIFOs, devices), then the renames
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (routes[i] == Route::out) write_stdout(outputs[i].second);
    else if (routes[i] == Route::direct) write_direct(outputs[i].first, targets[i], outputs[i].second);
  }
  for (auto& s : staged) commit(s.path, s.target, *s.tmp);
}

void write_stdout(std::string_view content) {
  std::cout.write(content.data(), static_cast<std::streamsize>(content.size()));
  std::cout.flush();
  if (int err = stdout_error())
    throw std::runtime_error(std::string("cannot write standard output: ") + std::strerror(err));
}

void use_checked_stdout() {
  if (g_checked) return;
  // never destroyed: std::cout is flushed at exit, after every static of this file is gone
  g_checked = new CheckedStdout;
  std::cout.rdbuf(g_checked);
}

void close_stdout() {
  std::cout.flush();
  int err = stdout_error();
  // whatever went through C stdio instead (a library's printf)
  if (std::fflush(stdout) != 0 && err == 0) err = errno;
  if (err != 0) throw std::runtime_error(std::string("cannot write standard output: ") + std::strerror(err));
  // a file system may report a write error only at close (NFS, quotas); EBADF: there was no
  // standard output to begin with, and nothing was written to it
  if (::close(STDOUT_FILENO) != 0 && errno != EBADF)
    throw std::runtime_error(std::string("cannot write standard output: ") + std::strerror(errno));
}

}  // namespace ptdsim::io
