// A study's finished points on disk: one JSON line per point, in the journal a run appends to and
// in the shard files `study merge` joins (docs/study.md "Resuming, shards and ranks").
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ptdsim/io/output.hpp"
#include "ptdsim/io/study.hpp"

namespace ptdsim::io {
namespace {

using nlohmann::json;

// A line's checksum: FNV-1a 32 of the record's text, so a line cut short by a kill is told from a
// whole one.
std::string checksum(std::string_view text) {
  std::uint32_t h = 2166136261U;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619U;
  }
  return fmt::format("{:08x}", h);
}

std::string header_of(const StudySpec& spec) {
  return fmt::format("ptdsim-study 1 hash {} points {}", spec.hash, spec.points());
}

// "<checksum> <record>" -> the record, or nullopt for a line that is not a whole one.
std::optional<StudyRecord> record_of_line(const std::string& line) {
  if (line.size() < 10 || line[8] != ' ') return std::nullopt;
  const std::string body = line.substr(9);
  if (checksum(body) != line.substr(0, 8)) return std::nullopt;
  return decode_record(body);
}

[[noreturn]] void bad_file(const std::string& path, int line, const std::string& message) {
  throw core::ConfigError(core::SourceLocation{path, line, line > 0 ? 1 : 0}, message);
}

}  // namespace

std::string encode_record(const StudyRecord& r) {
  json j;
  j["point"] = r.point;
  if (!r.failed.empty()) j["failed"] = r.failed;
  json layouts = json::array();
  for (const auto& l : r.layouts) {
    json x;
    visit_layout(l, [&](const char* key, const auto& value) { x[key] = value; });
    layouts.push_back(std::move(x));
  }
  j["layouts"] = std::move(layouts);
  return j.dump();
}

std::optional<StudyRecord> decode_record(const std::string& line) {
  try {
    const json j = json::parse(line);
    StudyRecord r;
    r.point = j.at("point").get<std::uint64_t>();
    if (j.contains("failed")) r.failed = j.at("failed").get<std::string>();
    for (const auto& x : j.at("layouts")) {
      StudyLayout l;
      visit_layout(l, [&](const char* key, auto& value) { value = x.at(key).get<std::decay_t<decltype(value)>>(); });
      r.layouts.push_back(std::move(l));
    }
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

StudyJournal::StudyJournal(std::string path, const StudySpec& spec) : path_(std::move(path)) {
  const std::string header = header_of(spec);
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open journal '{}': {}", path_, std::strerror(errno)));
  std::ifstream in(path_, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty()) {
    const std::string line = header + "\n";
    if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      throw std::runtime_error(fmt::format("cannot write journal '{}': {}", path_, std::strerror(errno)));
    return;
  }
  // a last line cut short by a kill: dropped, so the next record starts a line of its own
  const auto whole = text.rfind('\n');
  const std::size_t keep = whole == std::string::npos ? 0 : whole + 1;
  if (keep < text.size()) {
    if (::ftruncate(fd_, static_cast<off_t>(keep)) != 0)
      throw std::runtime_error(fmt::format("cannot truncate journal '{}': {}", path_, std::strerror(errno)));
    text.resize(keep);
  }
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);
  if (line != header) {
    bad_file(path_, 1,
             "this journal belongs to another study (or another version of it): its header is '" + line +
                 "', this study's '" + header + "'; delete it to start again");
  }
  const std::uint64_t points = spec.points();
  std::vector<bool> seen(points, false);
  while (std::getline(lines, line)) {
    auto r = record_of_line(line);
    if (!r || r->point >= points || seen[r->point]) continue;
    seen[r->point] = true;
    done_.push_back(std::move(*r));
  }
}

StudyJournal::~StudyJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void StudyJournal::append(const StudyRecord& r) {
  const std::string body = encode_record(r);
  const std::string line = checksum(body) + " " + body + "\n";
  // one write: O_APPEND puts it whole at the end; a kill mid-way leaves a short line the reader drops
  std::size_t at = 0;
  while (at < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + at, line.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(fmt::format("cannot write journal '{}': {}", path_, std::strerror(errno)));
    at += static_cast<std::size_t>(n);
  }
}

std::string shard_text(const StudySpec& spec, int shard, int count, const std::vector<StudyRecord>& records) {
  std::string out = header_of(spec) + fmt::format(" shard {}/{} study {}\n", shard, count, spec.file);
  for (const auto& r : records) {
    const std::string body = encode_record(r);
    out += checksum(body) + " " + body + "\n";
  }
  return out;
}

ShardFile read_shard(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad_file(path, 0, "cannot open file '" + path + "'");
  ShardFile f;
  std::string line;
  std::getline(in, line);
  std::istringstream head(line);
  std::string magic, version, w_hash, w_points, w_shard, shard, w_study;
  head >> magic >> version >> w_hash >> f.hash >> w_points >> f.points >> w_shard >> shard >> w_study;
  std::getline(head, f.study);
  if (!f.study.empty() && f.study.front() == ' ') f.study.erase(0, 1);
  const auto slash = shard.find('/');
  if (magic != "ptdsim-study" || version != "1" || w_hash != "hash" || w_points != "points" || w_shard != "shard" ||
      w_study != "study" || slash == std::string::npos || f.study.empty())
    bad_file(path, 1, "not a shard of `ptdsim study --shard I/N`: its first line is not a study's header");
  try {
    f.shard = std::stoi(shard.substr(0, slash));
    f.count = std::stoi(shard.substr(slash + 1));
  } catch (const std::exception&) {
    bad_file(path, 1, "the header's shard is not I/N: '" + shard + "'");
  }
  if (f.count < 1 || f.shard < 1 || f.shard > f.count) bad_file(path, 1, "the header's shard is not I/N: '" + shard + "'");
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    auto r = record_of_line(line);
    if (!r) bad_file(path, number, "not a whole record (a damaged or unfinished shard file)");
    if (r->point >= f.points || shard_of(r->point, f.count) != f.shard ||
        (!f.records.empty() && r->point <= f.records.back().point))
      bad_file(path, number, fmt::format("point {} does not belong here (shard {}/{}, in order)", r->point, f.shard, f.count));
    f.records.push_back(std::move(*r));
  }
  return f;
}

}  // namespace ptdsim::io
