#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/io/load.hpp"

using namespace ptdsim;

namespace {
std::string indent(const std::string& s, int n) {
  std::string out;
  const std::string pad(static_cast<std::size_t>(n), ' ');
  for (char c : s) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}
// One record's inline scenario, indented to sit under "    scenario:".
std::string inline_scenario() {
  return "      model:" + indent(io::test::kModel, 6) + "\n      hardware:" + indent(io::test::kHardware, 6) +
         "\n      cluster: {gpus: 8}\n      training: {seq_len: 512, global_batch: 8}\n";
}
std::string error_of(const std::string& text) {
  try {
    io::load_dataset_from_string(text, "data.yaml", PTDSIM_TEST_DATA "/good");
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("io: a dataset's records are read with their measurements", "[io][dataset]") {
  const std::string text = "- name: inline-run\n"
                           "  source: \"Someone et al. 2021, Table 1\"\n"
                           "  flops_convention: megatron96\n"
                           "  split: fit\n"
                           "  notes: first\n"
                           "  scenario:\n" +
                           inline_scenario() +
                           "  measured: {step_s: 2.5, tflops_per_gpu: 140, peak_memory_gib: 40, tokens_per_s: 1e5}\n"
                           "- name: by-path\n"
                           "  source: here\n"
                           "  scenario: tiny.yaml\n"
                           "  measured: {step_s: 1.0}\n"
                           "- name: cannot-model\n"
                           "  source: there\n"
                           "  flops_convention: unstated\n"
                           "  not_modelled: pipeline schedule the tool lacks\n"
                           "  scenario: {parallel: {tp: 999}}\n"
                           "  measured: {tflops_per_gpu: 100}\n";
  auto records = io::load_dataset_from_string(text, "data.yaml", PTDSIM_TEST_DATA "/good");
  REQUIRE(records.size() == 3);

  const auto& a = records[0];
  CHECK(a.name == "inline-run");
  CHECK(a.source == "Someone et al. 2021, Table 1");
  CHECK(a.flops_convention == "megatron96");
  CHECK(a.split == "fit");
  CHECK(a.notes == "first");
  REQUIRE(a.scenario.has_value());
  CHECK(a.scenario->name == "inline-run");  // the record's name when the scenario has none
  CHECK(a.scenario->gpus == 8);
  CHECK(a.scenario->file == "data.yaml");
  CHECK(*a.measured.step_s == Approx(2.5).epsilon(1e-12));
  CHECK(*a.measured.tflops_per_gpu == Approx(140).epsilon(1e-12));
  CHECK(*a.measured.peak_memory_bytes == Approx(40.0 * 1073741824.0).epsilon(1e-12));  // 40 GiB
  CHECK(*a.measured.tokens_per_s == Approx(1e5).epsilon(1e-12));

  const auto& b = records[1];
  CHECK(b.split == "holdout");        // default
  CHECK(b.flops_convention.empty());  // absent: unstated
  REQUIRE(b.scenario.has_value());
  CHECK(b.scenario->name == "tiny-run");  // the scenario file's own name
  CHECK(b.scenario->parallel.dp == 2);
  CHECK_FALSE(b.measured.tflops_per_gpu.has_value());

  const auto& c = records[2];
  CHECK(c.not_modelled == "pipeline schedule the tool lacks");
  CHECK(c.flops_convention.empty());
  CHECK_FALSE(c.scenario.has_value());  // partial and not loaded
  CHECK(*c.measured.tflops_per_gpu == Approx(100).epsilon(1e-12));
}

TEST_CASE("io: dataset errors name the record's place", "[io][dataset][errors]") {
  CHECK(error_of("- name: a\n  source: s\n  scenario: nope.yaml\n  measured: {step_s: 1}\n") ==
        "data.yaml:3:13: error: cannot open file '" PTDSIM_TEST_DATA "/good/nope.yaml'\n"
        "  scenario: nope.yaml\n            ^");
  CHECK(error_of("- name: a\n  source: s\n  scenario: tiny.yaml\n  measured: {step_s: 1}\n"
                 "- name: a\n  source: s\n  scenario: tiny.yaml\n  measured: {step_s: 1}\n") ==
        "data.yaml:5:9: error: duplicate record name 'a' (first at line 1)\n- name: a\n        ^");
  CHECK(error_of("- name: a\n  source: s\n  scenario: tiny.yaml\n") ==
        "data.yaml:1:3: error: missing required key 'measured' in record\n- name: a\n  ^");
  CHECK(error_of("- name: a\n  source: s\n  scenario: tiny.yaml\n  measured: {}\n") ==
        "data.yaml:4:3: error: measured must give at least one of step_s, tflops_per_gpu, peak_memory_gib, "
        "tokens_per_s\n  measured: {}\n  ^");
  CHECK(error_of("- name: a\n  source: s\n  scenario: tiny.yaml\n  measured: {step_s: -1}\n") ==
        "data.yaml:4:22: error: measured.step_s must be a positive number, got \"-1\"\n"
        "  measured: {step_s: -1}\n                     ^");
  CHECK(error_of("name: a\n") == "data.yaml:1:1: error: a dataset must be a list of records, got a mapping\nname: a\n^");
  CHECK(error_of("") == "data.yaml: error: a dataset must be a list of records, got nothing");
  CHECK(error_of("[]") == "data.yaml:1:1: error: the dataset has no records\n[]\n^");
}

TEST_CASE("io: a dataset file resolves scenario paths against its own directory", "[io][dataset][files]") {
  auto records = io::load_dataset(PTDSIM_TEST_DATA "/good/dataset.yaml");
  REQUIRE(records.size() == 2);
  CHECK(records[0].scenario->model.name == "tiny");
  CHECK(records[1].scenario->gpus == 4);
}
