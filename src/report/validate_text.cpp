// validate's table, JSON, CSV and fit tables (include/ptdsim/report/validate.hpp).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "format.hpp"
#include "ptdsim/core/printable.hpp"
#include "ptdsim/core/version.hpp"
#include "ptdsim/report/validate.hpp"

namespace ptdsim::report {
namespace {

std::string pct(const validation::Quantity& q) {
  return q.complete() ? fmt::format("{:+.1f}%", 100 * q.error()) : "";
}
std::string num(const std::optional<double>& v, const char* f = "{:.3g}") {
  return v ? fmt::format(fmt::runtime(f), *v) : "-";
}

// "68 records: 60 predicted (2 do not fit in memory), 8 not modelled"
std::string counts_line_of(const validation::Summary& s) {
  std::string out = fmt::format("{} records: {} predicted", s.records.size(), s.predicted);
  if (s.does_not_fit > 0)
    out += fmt::format(" ({} {} not fit in memory)", s.does_not_fit, s.does_not_fit == 1 ? "does" : "do");
  return out + fmt::format(", {} not modelled\n", s.not_modelled);
}

std::string table_of(const validation::Summary& s, const std::string& dataset) {
  std::string out = fmt::format("ptdsim validate: {}\n\n", dataset);
  out += fmt::format("{:<44} {:<7} {:>9} {:>9} {:>8}  {:>7} {:>7} {:>8}  {:>6} {:>6} {:>8}\n",
                     "record", "split", "step(s)", "measured", "error", "TFLOP/s", "meas.",
                     "error", "GiB", "meas.", "error");
  for (const auto& r : s.records) {
    if (!r.predicted()) {
      out += fmt::format("{:<44} {:<7} not modelled: {}\n", core::printable(r.name), r.split,
                         core::printable(r.not_modelled));
      continue;
    }
    const std::string flag = r.memory_flag();
    out += fmt::format("{:<44} {:<7} {:>9} {:>9} {:>8}  {:>7} {:>7} {:>8}  {:>6} {:>6} {:>8}{}\n",
                       core::printable(r.name), r.split, num(r.step_s.predicted, "{:.2f}"),
                       num(r.step_s.measured, "{:.2f}"), pct(r.step_s),
                       num(r.tflops_per_gpu.predicted, "{:.1f}"),
                       num(r.tflops_per_gpu.measured, "{:.1f}"), pct(r.tflops_per_gpu),
                       num(r.peak_memory_gib.predicted, "{:.1f}"),
                       num(r.peak_memory_gib.measured, "{:.1f}"), pct(r.peak_memory_gib),
                       flag.empty() ? "" : "  " + flag);
  }
  out += '\n';
  out += counts_line_of(s);
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

std::string json_of(const validation::Summary& s) {
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
      // what the record's peak_memory_gib compares: the device's peak or the allocator's reserve
      if (r.peak_memory_gib.complete()) rec["memory"]["compared"] = r.memory_reserved ? "reserved" : "device";
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

// One row per record, in dataset order; the counts go to stderr (stdout stays one table).
std::string csv_of(const validation::Summary& s) {
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
    out += report::csv_quote(r.name) + "," + report::csv_quote(r.source) + "," + r.split + ",";
    if (!r.predicted()) {
      out += "not modelled," + report::csv_quote(r.not_modelled) + ",,,,,,,,,,,,," + version;
      continue;
    }
    out += "predicted,," + report::csv_quote(r.step_from) + "," + quantity(r.step_s) + "," +
           quantity(r.tflops_per_gpu) + "," + quantity(r.peak_memory_gib) + "," +
           fmt::format("{:.9g},{:.9g},{}", r.predicted_peak_gib, r.capacity_gib, r.fits ? "true" : "false") +
           "," + report::csv_quote(r.memory_flag()) + version;
  }
  return out;
}

std::string fit_table_of(const std::vector<validation::EfficiencyFit>& fits) {
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

std::string overhead_table_of(const std::vector<validation::OverheadFit>& fits) {
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

std::string jitter_table_of(const std::vector<validation::JitterFit>& fits) {
  if (fits.empty()) return "";
  std::string out =
      "\nhardware.jitter per fabric, the cost of scale: the spread of a rank's compute and of its exposed "
      "communication\nacross the job's GPUs (the step waits for the slowest), fitted on the 'fit' records, scored "
      "on the 'holdout' ones\n";
  out += fmt::format("  {:<68} {:>15} {:>15} {:>18} {:>18}\n", "fabric", "shipped c, l", "fitted c, l",
                     "fit MAPE (n)", "holdout MAPE (n)");
  for (const auto& f : fits)
    out += fmt::format("  {:<68} {:>7.4f}, {:>5.3f} {:>7.4f}, {:>5.3f} {:>12.1f}% ({:>2}) {:>12.1f}% ({:>2})\n",
                       f.fabric, f.shipped.compute, f.shipped.link, f.fitted.compute, f.fitted.link,
                       100 * f.fit.mape, f.fit.count, 100 * f.holdout.mape, f.holdout.count);
  return out;
}

}  // namespace

std::string validate_table(const validation::Summary& s, const std::string& dataset) { return table_of(s, dataset); }
std::string validate_json(const validation::Summary& s) { return json_of(s); }
std::string validate_csv(const validation::Summary& s) { return csv_of(s); }
std::string validate_counts_line(const validation::Summary& s) { return counts_line_of(s); }
std::string validate_fit_tables(const std::vector<validation::EfficiencyFit>& efficiencies,
                                const std::vector<validation::OverheadFit>& overheads,
                                const std::vector<validation::JitterFit>& jitter) {
  return fit_table_of(efficiencies) + overhead_table_of(overheads) + jitter_table_of(jitter);
}

}  // namespace ptdsim::report
