#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Output goes through to what the user named (docs/architecture.md "How outputs are written"):
// a regular file (or a name that does not exist yet) is written whole or not at all, through a
// temporary beside it renamed over it; a symbolic link is followed and its target written that
// way, the link kept; a FIFO or a character device (/dev/null, /dev/stdout, a terminal) and "-"
// (standard output) are written directly. Every write is checked; temporaries are removed on every
// exit path, SIGINT, SIGTERM and SIGHUP included. Failures throw std::runtime_error naming the path
// and the reason ("cannot write 'out.json': write failed: No space left on device").
namespace ptdsim::io {

void write_output(const std::string& path, const std::string& content);

// Several outputs of one run ({path, content}), all or none: every name is checked and every
// regular file written to its temporary first; only then are standard output, FIFOs and devices
// written and the temporaries renamed into place. A failure before the renames leaves no file
// changed (`evaluate --trace t.json -o missing-dir/x.json` no longer writes the trace alone).
void write_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// The regular-file case of write_output: `path` itself is replaced (a symbolic link at `path`
// would be replaced by a file: use write_output for names a user gave).
void write_file_atomically(const std::string& path, const std::string& content);

// Writes to standard output (through std::cout, so in order with what else was printed) and
// flushes; throws "cannot write standard output: <reason>".
void write_stdout(std::string_view content);

// Gives std::cout a buffer that writes descriptor 1 directly and remembers the first error's
// errno, so that write_stdout and close_stdout can tell the reason. The CLI calls it first thing.
void use_checked_stdout();

// The last act of a successful run: flushes standard output and closes it, so a write error that
// the C library buffered (a full disk, a closed pipe's EPIPE with SIGPIPE ignored) is an error and
// not a truncated output with exit 0. Throws like write_stdout.
void close_stdout();

}  // namespace ptdsim::io
