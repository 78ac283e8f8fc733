#include "temp_registry.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>
#include <system_error>

namespace ptdsim::io::detail {
namespace {

// More than the outputs one command writes at once (-o and --trace); a fixed array because the
// handler may not allocate.
constexpr int kSlots = 16;
constexpr std::size_t kPathMax = 4096;  // Linux PATH_MAX: open() refuses longer names anyway

struct Slot {
  std::atomic<bool> owned{false};  // taken by a writer
  std::atomic<bool> live{false};   // `path` names a file the handler must remove
  char path[kPathMax];
};
Slot g_slots[kSlots];
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs lock-free atomics");

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kSignalCount = sizeof(kSignals) / sizeof(kSignals[0]);
struct sigaction g_previous[kSignalCount];

extern "C" void remove_temps_and_reraise(int sig) {
  const int saved = errno;
  for (auto& s : g_slots)
    if (s.live.load(std::memory_order_acquire)) ::unlink(s.path);
  // Put back what was there (the default: terminate) and deliver the signal again, so the exit
  // status still says "killed by SIGTERM"; it stays blocked until this handler returns.
  for (int i = 0; i < kSignalCount; ++i)
    if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
  errno = saved;
  ::raise(sig);
}

// ".tmp." + 6 characters of [A-Za-z0-9], as mkstemp names them (62^6 names).
std::string random_suffix() {
  static std::mutex m;
  static std::mt19937_64 rng{std::random_device{}()};
  static const char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::lock_guard<std::mutex> lock(m);
  std::string out = ".tmp.";
  for (int i = 0; i < 6; ++i) out += kChars[rng() % 62];
  return out;
}

int claim_slot() {
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_slots[i].owned.compare_exchange_strong(expected, true)) return i;
  }
  return -1;
}

}  // namespace

void install_temp_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < kSignalCount; ++i) {
      struct sigaction old {};
      if (::sigaction(kSignals[i], nullptr, &old) != 0) continue;
      // `nohup` and background jobs ignore some of these: a signal the process ignores stays ignored
      if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
      g_previous[i] = old;
      struct sigaction sa {};
      sa.sa_handler = remove_temps_and_reraise;
      sigemptyset(&sa.sa_mask);
      for (int s : kSignals) sigaddset(&sa.sa_mask, s);
      ::sigaction(kSignals[i], &sa, nullptr);
    }
  });
}

LiveTemp::LiveTemp(const std::string& target) {
  install_temp_cleanup();
  slot_ = claim_slot();
  if (slot_ < 0) throw std::system_error(EMFILE, std::generic_category(), "cannot create a temporary file");
  Slot& s = g_slots[slot_];
  for (int attempt = 0; attempt < 100; ++attempt) {
    path_ = target + random_suffix();
    if (path_.size() >= kPathMax) break;
    std::memcpy(s.path, path_.c_str(), path_.size() + 1);
    // registered before it exists: a signal between open() and the next line still removes it
    s.live.store(true, std::memory_order_release);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ >= 0) return;
    const int err = errno;
    s.live.store(false, std::memory_order_release);
    if (err != EEXIST) {
      s.owned.store(false);
      throw std::system_error(err, std::generic_category(), "cannot create a temporary file");
    }
  }
  s.owned.store(false);
  throw std::system_error(path_.size() >= kPathMax ? ENAMETOOLONG : EEXIST, std::generic_category(),
                          "cannot create a temporary file");
}

LiveTemp::~LiveTemp() {
  close();
  if (!renamed_) ::unlink(path_.c_str());
  g_slots[slot_].live.store(false, std::memory_order_release);
  g_slots[slot_].owned.store(false);
}

int LiveTemp::close() {
  if (fd_ < 0) return 0;
  const int rc = ::close(fd_);
  fd_ = -1;
  return rc == 0 ? 0 : errno;
}

int LiveTemp::rename_to(const std::string& target) {
  if (::rename(path_.c_str(), target.c_str()) != 0) return errno;
  renamed_ = true;
  // only now: a signal between rename() and here unlinks a name that no longer exists
  g_slots[slot_].live.store(false, std::memory_order_release);
  return 0;
}

}  // namespace ptdsim::io::detail
