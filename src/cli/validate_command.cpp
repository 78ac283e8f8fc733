#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/validation/validate.hpp"

namespace ptdsim::cli {
namespace {

// The dataset shipped in the repository, used when no file is named.
#ifndef PTDSIM_DEFAULT_DATASET
#define PTDSIM_DEFAULT_DATASET "scenarios/published/dataset.yaml"
#endif

struct ValidateArgs {
  std::string dataset = PTDSIM_DEFAULT_DATASET;
  std::string split = "all";
  bool fit = false;
  OutputOptions out;
};

std::string pct(const validation::Quantity& q) {
  return q.complete() ? fmt::format("{:+.1f}%", 100 * q.error()) : "";
}
std::string num(const std::optional<double>& v, const char* f = "{:.3g}") {
  return v ? fmt::format(fmt::runtime(f), *v) : "-";
}

std::string table(const validation::Summary& s, const std::string& dataset) {
  std::string out = fmt::format("ptdsim validate: {}\n\n", dataset);
  out += fmt::format("{:<44} {:<7} {:>9} {:>9} {:>8}  {:>7} {:>7} {:>8}  {:>6} {:>6} {:>8}\n",
                     "record", "split", "step(s)", "measured", "error", "TFLOP/s", "meas.",
                     "error", "GiB", "meas.", "error");
  std::string skipped;
  for (const auto& r : s.records) {
    if (!r.not_modelled.empty()) {
      skipped += fmt::format("  {:<44} not modelled: {}\n", r.name, r.not_modelled);
      continue;
    }
    out += fmt::format("{:<44} {:<7} {:>9} {:>9} {:>8}  {:>7} {:>7} {:>8}  {:>6} {:>6} {:>8}\n",
                       r.name, r.split, num(r.step_s.predicted, "{:.2f}"),
                       num(r.step_s.measured, "{:.2f}"), pct(r.step_s),
                       num(r.tflops_per_gpu.predicted, "{:.1f}"),
                       num(r.tflops_per_gpu.measured, "{:.1f}"), pct(r.tflops_per_gpu),
                       num(r.peak_memory_gib.predicted, "{:.1f}"),
                       num(r.peak_memory_gib.measured, "{:.1f}"), pct(r.peak_memory_gib));
  }
  if (!skipped.empty()) out += "\nNot modelled (kept, not scored):\n" + skipped;
  auto line = [](const std::string& label, const validation::Error& e) {
    return fmt::format("  {:<40} MAPE {:>5.1f}% over {:>2} records; worst {} ({:+.1f}%)\n", label,
                       100 * e.mape, e.count, e.worst, 100 * e.worst_error);
  };
  out += "\nMean absolute percentage error per measured quantity\n";
  for (const auto& [q, e] : s.by_quantity) out += line(q, e);
  out += "\nStep time by source\n";
  for (const auto& [src, e] : s.step_by_source) out += line(src, e);
  out += "\nStep time by split (efficiencies in hardware/ were fitted on 'fit' records only)\n";
  for (const auto& [split, e] : s.step_by_split) out += line(split, e);
  out += "\nStep time by GPU and model size (mean: the signed error's mean, the bias)\n";
  for (const auto& [gpu, e] : s.step_by_gpu)
    out += fmt::format("  {:<40} MAPE {:>5.1f}%, mean {:>+5.1f}% over {:>2} records\n", gpu, 100 * e.mape,
                       100 * e.mean, e.count);
  for (const auto& [bucket, e] : s.step_by_size)
    out += fmt::format("  {:<40} MAPE {:>5.1f}%, mean {:>+5.1f}% over {:>2} records\n", bucket, 100 * e.mape,
                       100 * e.mean, e.count);
  return out;
}

nlohmann::ordered_json quantity_json(const validation::RecordResult& r, bool predicted) {
  nlohmann::ordered_json j;
  auto put = [&](const char* key, const validation::Quantity& q) {
    const auto& v = predicted ? q.predicted : q.measured;
    if (v) j[key] = *v;
  };
  put("step_s", r.step_s);
  put("tflops_per_gpu", r.tflops_per_gpu);
  put("peak_memory_gib", r.peak_memory_gib);
  return j;
}

std::string json(const validation::Summary& s) {
  nlohmann::ordered_json j;
  j["records"] = nlohmann::ordered_json::array();
  for (const auto& r : s.records) {
    nlohmann::ordered_json rec;
    rec["name"] = r.name;
    rec["source"] = r.source;
    rec["split"] = r.split;
    if (!r.not_modelled.empty()) {
      rec["not_modelled"] = r.not_modelled;
    } else {
      rec["predicted"] = quantity_json(r, true);
      rec["measured"] = quantity_json(r, false);
      rec["step_from"] = r.step_from;
      nlohmann::ordered_json err = nlohmann::ordered_json::object();
      if (r.step_s.complete()) err["step_s"] = r.step_s.error();
      if (r.tflops_per_gpu.complete()) err["tflops_per_gpu"] = r.tflops_per_gpu.error();
      if (r.peak_memory_gib.complete()) err["peak_memory_gib"] = r.peak_memory_gib.error();
      rec["error"] = err;
    }
    j["records"].push_back(rec);
  }
  auto errors = [](const std::map<std::string, validation::Error>& m) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (const auto& [k, e] : m) o[k] = e.mape;
    return o;
  };
  j["mape"] = errors(s.by_quantity);
  j["worst"] = nlohmann::ordered_json::object();
  for (const auto& [k, e] : s.by_quantity) j["worst"][k] = {{"name", e.worst}, {"error", e.worst_error}};
  j["mape_step_s_by_source"] = errors(s.step_by_source);
  j["mape_step_s_by_split"] = errors(s.step_by_split);
  j["mape_step_s_by_gpu"] = errors(s.step_by_gpu);
  j["mape_step_s_by_size"] = errors(s.step_by_size);
  j["mean_error_step_s_by_size"] = nlohmann::ordered_json::object();
  for (const auto& [k, e] : s.step_by_size) j["mean_error_step_s_by_size"][k] = e.mean;
  return j.dump(2) + "\n";
}

std::string fit_table(const std::vector<validation::EfficiencyFit>& fits) {
  std::string out =
      "matmul_efficiency per GPU type and precision, fitted on the 'fit' records, scored on the 'holdout' ones\n";
  out += fmt::format("  {:<26} {:>8} {:>8} {:>18} {:>18}\n", "gpu", "shipped", "fitted",
                     "fit MAPE (n)", "holdout MAPE (n)");
  for (const auto& f : fits)
    out += fmt::format("  {:<26} {:>8.3f} {:>8.3f} {:>12.1f}% ({:>2}) {:>12.1f}% ({:>2})\n", f.gpu,
                       f.shipped, f.fitted, 100 * f.fit.mape, f.fit.count, 100 * f.holdout.mape,
                       f.holdout.count);
  return out;
}

std::string overhead_table(const std::vector<validation::OverheadFit>& fits) {
  if (fits.empty()) return "";
  std::string out =
      "\ngpu.kernels.overhead per GPU type with measured kernel tables, what the tables leave unexplained: the "
      "time per\ntransformer layer and pass (layer_us) and the factor on memory-bound kernel times, fitted on the "
      "'fit' records,\nscored on the 'holdout' ones\n";
  out += fmt::format("  {:<26} {:>17} {:>17} {:>18} {:>18}\n", "gpu", "shipped us, x", "fitted us, x",
                     "fit MAPE (n)", "holdout MAPE (n)");
  for (const auto& f : fits)
    out += fmt::format("  {:<26} {:>9.1f}, {:>5.3f} {:>9.1f}, {:>5.3f} {:>12.1f}% ({:>2}) {:>12.1f}% ({:>2})\n", f.gpu,
                       f.shipped_layer_s * 1e6, f.shipped_factor, f.layer_s * 1e6, f.factor, 100 * f.fit.mape,
                       f.fit.count, 100 * f.holdout.mape, f.holdout.count);
  return out;
}

void run(const ValidateArgs& a) {
  auto records = io::load_dataset(a.dataset);
  if (a.fit) {
    emit(a.out, fit_table(validation::fit_matmul_efficiency(records)) +
                    overhead_table(validation::fit_overheads(records)));
    return;
  }
  if (a.split != "all") {
    std::erase_if(records, [&](const io::Record& r) {
      return (r.split.empty() ? std::string("holdout") : r.split) != a.split;
    });
  }
  const auto summary = validation::validate(records);
  emit(a.out, a.out.format == "json" ? json(summary) : table(summary, a.dataset));
}

}  // namespace

void add_validate(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand("validate", "compare predictions with published training runs");
  cmd->add_option("dataset", args->dataset, "validation dataset YAML (default: the shipped one)");
  cmd->add_option("--split", args->split, "score only the records of this split")
      ->check(CLI::IsMember({"all", "fit", "holdout"}));
  cmd->add_flag_callback("--holdout", [args] { args->split = "holdout"; },
                         "same as --split holdout: the error the efficiency fit did not see");
  cmd->add_flag("--fit", args->fit,
                "fit one matmul efficiency per GPU type on the 'fit' records and score it on the rest");
  add_output_options(cmd, args->out, {"table", "json"});
  cmd->callback([args] { run(*args); });
}

}  // namespace ptdsim::cli
