#include "fuzz_target.hpp"

namespace ptdsim::fuzz {

namespace {
std::map<std::string, Target>& registry() {
  static std::map<std::string, Target> r;
  return r;
}

// The input as a message may quote it: YAML folds a line break inside a scalar, with the
// indentation around it, into one space ("bad \n  file" reads "bad file"), so every run of
// whitespace becomes one space.
std::string folded(const std::string& input) {
  std::string out;
  out.reserve(input.size());
  for (char c : input) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (!space) out += c;
    else if (out.empty() || out.back() != ' ') out += ' ';
  }
  return out;
}

// The input as a shell reads it: the Megatron importer splits its argument string into words the
// way a shell does, so a word it quotes back has lost the quotes and backslashes around its parts
// ("4std'::' x" reads the word "4std:: x").
std::string unquoted(const std::string& input) {
  std::string out;
  out.reserve(input.size());
  for (char c : input)
    if (c != '\'' && c != '"' && c != '\\') out += c;
  return out;
}
}  // namespace

bool register_target(const char* name, Target t) {
  registry()[name] = t;
  return true;
}

const std::map<std::string, Target>& targets() { return registry(); }

void expect_clean(const core::ConfigError& e, const std::string& input) {
  const std::string what = e.what();
  if (e.diagnostics().empty()) throw Finding("a ConfigError without a diagnostic");
  for (const auto& d : e.diagnostics()) {
    if (d.where.file.empty()) throw Finding("a diagnostic without a file: " + what);
    if (d.message.empty()) throw Finding("an empty message: " + what);
  }
  const std::string shown = folded(input), words = unquoted(input);
  for (const char* leak : {"std::", "stoi", "stod", "bad_alloc", "basic_string", "bad file"})
    if (what.find(leak) != std::string::npos && input.find(leak) == std::string::npos &&
        shown.find(leak) == std::string::npos && words.find(leak) == std::string::npos)
      throw Finding(std::string("library text \"") + leak + "\" in a message: " + what);
}

}  // namespace ptdsim::fuzz
