#pragma once
#include <string>

// The temporary files an output write has open, known to a signal handler so that SIGINT, SIGTERM
// or SIGHUP arriving mid-write removes them before the process dies (docs/architecture.md "How
// outputs are written"). The registry is a fixed array of slots read by the handler with lock-free
// atomics only: a handler may call nothing but async-signal-safe functions (unlink, sigaction,
// raise), so it cannot take a lock or touch a std::string.
namespace ptdsim::io::detail {

// Creates a new file `<target>.tmp.XXXXXX` (O_EXCL, mode 0600) and registers its name before it
// exists, so no moment leaves a file the handler does not know about. Unregisters itself when
// destroyed, after the file has been renamed or unlinked.
class LiveTemp {
 public:
  // Throws std::runtime_error (with errno's text) when the file cannot be created or every slot is
  // taken.
  explicit LiveTemp(const std::string& target);
  ~LiveTemp();
  LiveTemp(const LiveTemp&) = delete;
  LiveTemp& operator=(const LiveTemp&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  // Closes the descriptor; returns 0 or the errno of a failed close.
  int close();
  // Renames the temporary over `target`; returns 0 or the errno of a failed rename (then the
  // temporary is still there and the destructor removes it).
  int rename_to(const std::string& target);

 private:
  int slot_ = -1;
  int fd_ = -1;
  bool renamed_ = false;
  std::string path_;
};

// Installs the handlers for SIGINT, SIGTERM and SIGHUP (once; a signal the process ignores stays
// ignored). LiveTemp calls it; exposed for tests.
void install_temp_cleanup();

}  // namespace ptdsim::io::detail
