#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include <exception>
#include <iostream>
#include <new>

#include "commands.hpp"
#include "ptdsim/core/printable.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/join.hpp"
#include "ptdsim/io/output.hpp"
#include "ptdsim/core/version.hpp"

namespace {

// Exit statuses of interface.md: 0 success, 2 bad usage or bad input, 1 anything else; a command
// may add its own (evaluate --require-fit: 3 when the layout does not fit).
constexpr int kBadInput = 2;
constexpr int kFailure = 1;

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) out.push_back(s->get_name());
  return out;
}

// Without this, CLI11 answers a misspelt command (`ptdsim evalute x.yaml`, `ptdsim import hff`) and
// an option before any command (`ptdsim --frob`) with "A subcommand is required". The words are
// walked down the commands: the first that is neither a command where one is required nor an
// option is named, with the closest command. "" when the words are fine so far.
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string path = "ptdsim";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    const auto names = subcommand_names(*at);
    if (names.empty()) return "";
    if (std::find(names.begin(), names.end(), word) != names.end()) {
      at = at->get_subcommand(word);
      path += " " + word;
      continue;
    }
    if (word == "--help" || word == "-h" || (at == &app && word == "--version")) return "";
    // a command that takes a positional argument before its own commands (`kernel HARDWARE.yaml
    // gemm`): the word may be that argument, left to CLI11
    for (const CLI::Option* o : at->get_options())
      if (o->get_positional()) return "";
    const std::string near = ptdsim::core::closest_match(word, names);
    const std::string what = word.rfind("-", 0) == 0 ? "unknown option '" + word + "'" : "unknown command '" + word + "'";
    return path + ": error: " + what + (near.empty() ? "" : ": did you mean '" + near + "'?") + " (commands: " + ptdsim::core::joined(names) +
           ")";
  }
  return "";
}

// An error as printed: control characters other than line breaks and tabs as \xNN, since a message
// may quote the input (a source line, a name) and an escape sequence there would drive the terminal.
std::string shown(const std::string& text) { return ptdsim::core::printable(text, true); }

// The deepest command the parse selected, whose options an unexpected argument is compared with.
const CLI::App* selected(const CLI::App& app) {
  for (const CLI::App* s : app.get_subcommands()) return selected(*s);
  return &app;
}

// "unknown option '--frmat': did you mean '--format'?" for each option-like word left over.
std::string unknown_options(const CLI::App& app) {
  const CLI::App* cmd = selected(app);
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd->get_options())
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
  std::string out;
  for (const auto& word : cmd->remaining()) {
    if (word.rfind("--", 0) != 0) continue;
    const std::string flag = word.substr(0, word.find('='));
    const std::string near = ptdsim::core::closest_match(flag, names);
    out += "ptdsim " + cmd->get_name() + ": error: unknown option '" + flag + "'" +
           (near.empty() ? "" : ": did you mean '" + near + "'?") + "\n";
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  ptdsim::io::use_checked_stdout();
  CLI::App app{"ptdsim: training performance simulator and planner for large language models"};
  app.set_version_flag("--version", std::string("ptdsim ") + ptdsim::core::kVersion);
  app.require_subcommand(1);
  ptdsim::cli::add_evaluate(app);
  ptdsim::cli::add_sweep(app);
  ptdsim::cli::add_validate(app);
  ptdsim::cli::add_calibrate(app);
  ptdsim::cli::add_kernel(app);
  ptdsim::cli::add_import(app);
  ptdsim::cli::add_study(app);
  if (const std::string bad = unknown_command(app, argc, argv); !bad.empty()) {
    std::cerr << shown(bad) << "\nRun with --help for more information.\n";
    return kBadInput;
  }
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::RuntimeError&) {
      throw;  // CLI11 derives it from ParseError: a command's verdict, handled below
    } catch (const CLI::ExtrasError& e) {
      // an unexpected argument: name each unknown option with the closest one the command has
      const std::string named = unknown_options(app);
      if (named.empty()) return app.exit(e) != 0 ? kBadInput : 0;
      std::cerr << shown(named) << "Run with --help for more information.\n";
      return kBadInput;
    } catch (const CLI::ParseError& e) {
      // --help and --version arrive as ParseErrors with exit code 0
      if (app.exit(e) != 0) return kBadInput;
    }
    // success only once what was printed has reached standard output
    ptdsim::io::close_stdout();
    return 0;
  } catch (const CLI::RuntimeError& e) {
    // a command's own verdict (evaluate --require-fit: 3), after its output was written whole
    ptdsim::io::close_stdout();
    return e.get_exit_code();
  } catch (const ptdsim::core::ConfigError& e) {
    std::cerr << shown(e.what()) << "\n";
    return kBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "ptdsim: error: out of memory\n";
    return kFailure;
  } catch (const std::exception& e) {
    std::cerr << "ptdsim: error: " << shown(e.what()) << "\n";
    return kFailure;
  }
}
