#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace ptdsim::core {

// A place in an input file, 1-based. line == 0 means "the file as a whole" (a missing file, say).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

// One problem with the user's input. Rendered in gcc form: "file:line:col: error: message",
// followed by the offending source line and a caret when the line is known.
struct Diagnostic {
  SourceLocation where;
  std::string message;
  std::string source_line;  // empty when unknown
  std::string render() const;
};

// Thrown for bad input (exit status 2 at the CLI). Holds every problem found, not only the first,
// so cross-field checks can be reported together. what() is the rendering of all of them.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> diagnostics);
  ConfigError(SourceLocation where, std::string message, std::string source_line = {});
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// "did you mean 'x'?" helper: the closest candidate within a small edit distance, or "".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace ptdsim::core
