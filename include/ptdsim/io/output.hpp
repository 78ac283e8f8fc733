#pragma once
#include <string>

// Output files are written whole or not at all: a temporary file beside the target, then rename.
namespace ptdsim::io {

// Writes `content` to `path` atomically; throws std::runtime_error naming the path on failure.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace ptdsim::io
