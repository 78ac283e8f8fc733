#include "options.hpp"

#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "ptdsim/core/printable.hpp"
#include "ptdsim/core/error.hpp"
#include <iostream>

#include "ptdsim/api.hpp"
#include "ptdsim/core/count.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/io/output.hpp"
#include "ptdsim/report/evaluate.hpp"

namespace ptdsim::cli {

void add_output_options(CLI::App* cmd, OutputOptions& out, const std::vector<std::string>& formats) {
  cmd->add_option("--format", out.format, "output form")
      ->check(CLI::IsMember(formats))
      ->default_str(formats.front());
  cmd->add_option("-o,--output", out.path, "write the output to FILE (whole or not at all; - is standard output)");
}

void add_set_option(CLI::App* cmd, std::vector<std::string>& sets) {
  cmd->add_option("--set", sets, "override a scenario key by dotted path, e.g. parallel.tp=4")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
}

void check_printable(const core::Report& r, const std::string& scenario_file) {
  api::check_printable(r, scenario_file);
}

void add_tokens_option(CLI::App* cmd, std::string& tokens) {
  cmd->add_option("--tokens", tokens,
                  "tokens to train on, e.g. 15T or 2.5e12 (training.tokens): adds days, GPU-hours, energy and cost")
      ->type_name("N")
      ->check(CLI::Validator(
          [](const std::string& v) {
            // training.tokens' range, as the scenario loader checks it (docs/inputs.md "Valid ranges")
            const io::ValidRange r = io::valid_range("training.tokens");
            const auto n = core::parse_count(v);
            return n && *n >= r.min && *n <= r.max
                       ? std::string()
                       : fmt::format("a count from {:g} to {:g}, such as 15T, 300B or 2.5e12, got {}", r.min, r.max, v);
          },
          "COUNT"));
}

namespace {

// A decimal number, all of `v`: std::from_chars takes no leading space, sign "+" or "0x", so the
// text is one the scenario's YAML reads as the same number.
std::optional<double> decimal(const std::string& v) {
  double x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return x;
}

}  // namespace

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](const std::string& v) {
        const auto x = decimal(v);
        return x && std::isfinite(*x) && *x >= lo && *x <= hi
                   ? std::string()
                   : fmt::format("a number from {:g} to {:g}, got {}", lo, hi, v);
      },
      fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}

namespace {

CLI::Validator price_check() {
  return CLI::Validator(
      [](const std::string& v) {
        // cost.gpu_hour's range, as the scenario loader checks it (docs/inputs.md "Valid ranges"),
        // tested here so that a bad price names the flag, as --tokens does
        const io::ValidRange r = io::valid_range("cost.gpu_hour");
        const auto x = decimal(v);
        return x && *x > r.min && *x <= r.max
                   ? std::string()
                   : fmt::format("a price above {:g} and at most {:g} per GPU-hour, such as 2.5, got {}", r.min, r.max, v);
      },
      "PRICE");
}

}  // namespace

template <typename T> void add_gpu_hour_option(CLI::App* cmd, T& price) {
  cmd->add_option("--gpu-hour", price,
                  "price of one GPU-hour, in any currency (cost.gpu_hour): with --tokens, adds the cost to train")
      ->check(price_check());
}
template void add_gpu_hour_option<std::string>(CLI::App*, std::string&);
template void add_gpu_hour_option<double>(CLI::App*, double&);

void add_plan_options(CLI::App* cmd, PlanOptions& plan) {
  add_tokens_option(cmd, plan.tokens);
  add_gpu_hour_option(cmd, plan.gpu_hour);
}

std::vector<io::Override> overrides_of(const std::vector<std::string>& sets, const PlanOptions& plan) {
  std::vector<io::Override> overrides;
  overrides.reserve(sets.size() + 2);
  for (const auto& s : sets) overrides.push_back(io::parse_override(s));
  if (!plan.tokens.empty()) overrides.push_back(io::Override{"training.tokens", plan.tokens});
  if (!plan.gpu_hour.empty()) overrides.push_back(io::Override{"cost.gpu_hour", plan.gpu_hour});
  return overrides;
}

void print_warnings(const std::vector<std::string>& warnings) {
  // a warning may quote a name or a flag from the input: its control characters are shown, not sent
  for (const auto& w : warnings) std::cerr << "ptdsim: warning: " << core::printable(w) << "\n";
}

void emit(const OutputOptions& out, const std::string& text) {
  if (out.to_stdout()) {
    io::write_stdout(text);
  } else {
    io::write_output(out.path, text);
  }
}

}  // namespace ptdsim::cli
