#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "options.hpp"
#include "ptdsim/io/html.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/validation/validate.hpp"
#include "ptdsim/core/version.hpp"

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
  bool strict = false;
  OutputOptions out;
};

std::string pct(const validation::Quantity& q) {
  return q.complete() ? fmt::format("{:+.1f}%", 100 * q.error()) : "";
}
std::string num(const std::optional<double>& v, const char* f = "{:.3g}") {
  return v ? fmt::format(fmt::runtime(f), *v) : "-";
}

// "68 records: 60 predicted (2 do not fit in memory), 8 not modelled"
std::string counts_line(const validation::Summary& s) {
  std::string out = fmt::format("{} records: {} predicted", s.records.size(), s.predicted);
  if (s.does_not_fit > 0)
    out += fmt::format(" ({} {} not fit in memory)", s.does_not_fit, s.does_not_fit == 1 ? "does" : "do");
  return out + fmt::format(", {} not modelled\n", s.not_modelled);
}

std::string table(const validation::Summary& s, const std::string& dataset) {
  std::string out = fmt::format("ptdsim validate: {}\n\n", dataset);
  out += fmt::format("{:<44} {:<7} {:>9} {:>9} {:>8}  {:>7} {:>7} {:>8}  {:>6} {:>6} {:>8}\n",
                     "record", "split", "step(s)", "measured", "error", "TFLOP/s", "meas.",
                     "error", "GiB", "meas.", "error");
  for (const auto& r : s.records) {
    if (!r.predicted()) {
      out += fmt::format("{:<44} {:<7} not modelled: {}\n", r.name, r.split, r.not_modelled);
      continue;
    }
    const std::string flag = r.memory_flag();
    out += fmt::format("{:<44} {:<7} {:>9} {:>9} {:>8}  {:>7} {:>7} {:>8}  {:>6} {:>6} {:>8}{}\n",
                       r.name, r.split, num(r.step_s.predicted, "{:.2f}"),
                       num(r.step_s.measured, "{:.2f}"), pct(r.step_s),
                       num(r.tflops_per_gpu.predicted, "{:.1f}"),
                       num(r.tflops_per_gpu.measured, "{:.1f}"), pct(r.tflops_per_gpu),
                       num(r.peak_memory_gib.predicted, "{:.1f}"),
                       num(r.peak_memory_gib.measured, "{:.1f}"), pct(r.peak_memory_gib),
                       flag.empty() ? "" : "  " + flag);
  }
  out += "\n" + counts_line(s);
  auto line = [](const std::string& label, const validation::Error& e) {
    return fmt::format("  {:<40} MAPE {:>5.1f}% over {:>2} records; worst {} ({:+.1f}%)\n", label,
                       100 * e.mape, e.count, e.worst, 100 * e.worst_error);
  };
  out += "\nMean absolute percentage error per measured quantity (predicted records)\n";
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
    rec["status"] = r.predicted() ? "predicted" : "not modelled";
    if (!r.predicted()) {
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
      rec["memory"] = {{"predicted_peak_gib", r.predicted_peak_gib},
                       {"capacity_gib", r.capacity_gib},
                       {"fits", r.fits}};
      if (!r.fits) rec["flag"] = r.memory_flag();
    }
    j["records"].push_back(rec);
  }
  j["counts"] = {{"records", s.records.size()},
                 {"predicted", s.predicted},
                 {"not_modelled", s.not_modelled},
                 {"does_not_fit", s.does_not_fit}};
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
  j["version"] = core::kVersion;  // which ptdsim made these predictions
  return j.dump(2) + "\n";
}

// RFC 4180: quoted when it holds a comma, a quote or a line break, quotes doubled.
std::string csv_cell(const std::string& x) {
  if (x.find_first_of(",\"\n") == std::string::npos) return x;
  std::string q = "\"";
  for (char c : x) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// One row per record, in dataset order; the counts go to stderr (stdout stays one table).
std::string csv(const validation::Summary& s) {
  std::string out =
      "name,source,split,status,reason,step_from,step_s_predicted,step_s_measured,step_s_error,"
      "tflops_per_gpu_predicted,tflops_per_gpu_measured,tflops_per_gpu_error,peak_memory_gib_predicted,"
      "peak_memory_gib_measured,peak_memory_gib_error,predicted_peak_gib,capacity_gib,fits,flag,version\n";
  const std::string version = std::string(",") + core::kVersion + "\n";  // which ptdsim made the row
  auto opt = [](const std::optional<double>& v) { return v ? fmt::format("{:.9g}", *v) : std::string(); };
  auto err = [](const validation::Quantity& q) { return q.complete() ? fmt::format("{:.9g}", q.error()) : ""; };
  auto quantity = [&](const validation::Quantity& q) {
    return opt(q.predicted) + "," + opt(q.measured) + "," + err(q);
  };
  for (const auto& r : s.records) {
    out += csv_cell(r.name) + "," + csv_cell(r.source) + "," + r.split + ",";
    if (!r.predicted()) {
      out += "not modelled," + csv_cell(r.not_modelled) + ",,,,,,,,,,,,," + version;
      continue;
    }
    out += "predicted,," + csv_cell(r.step_from) + "," + quantity(r.step_s) + "," +
           quantity(r.tflops_per_gpu) + "," + quantity(r.peak_memory_gib) + "," +
           fmt::format("{:.9g},{:.9g},{}", r.predicted_peak_gib, r.capacity_gib, r.fits ? "true" : "false") +
           "," + csv_cell(r.memory_flag()) + version;
  }
  return out;
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
  if (a.strict) io::require_all_modelled(records);
  const auto summary = validation::validate(records);
  if (a.strict) validation::require_all_predicted(records, summary);
  if (a.out.format == "json") {
    emit(a.out, json(summary));
  } else if (a.out.format == "csv") {
    emit(a.out, csv(summary));
    std::cerr << counts_line(summary);
  } else if (a.out.format == "html") {
    emit(a.out, io::validate_html(summary, records, io::PageInfo{core::kVersion, a.dataset}));
  } else {
    emit(a.out, table(summary, a.dataset));
  }
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
  cmd->add_flag("--strict", args->strict,
                "fail (exit 2) at the first record that is not predicted, with its reason and position");
  add_output_options(cmd, args->out, {"table", "json", "csv", "html"});
  cmd->callback([args] { run(*args); });
}

}  // namespace ptdsim::cli
