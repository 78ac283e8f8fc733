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
  CHECK(error_of("- name: a\n  source: s\n  scenario: tiny.yaml\n  measured: {step_s: 1}\n"
                 "- name: a\n  source: s\n  scenario: tiny.yaml\n  measured: {step_s: 1}\n") ==
        "data.yaml:5:9: error: duplicate record name 'a' (first at line 1)\n- name: a\n        ^");
  CHECK(error_of("- name: a\n  source: s\n  scenario: tiny.yaml\n") ==
        "data.yaml:1:3: error: missing required key 'measured' in record\n- name: a\n  ^");
  CHECK(error_of("- name: a\n  source: s\n  scenario: tiny.yaml\n  measured: {}\n") ==
        "data.yaml:4:3: error: measured must give at least one of step_s, tflops_per_gpu, peak_memory_gib, "
        "peak_reserved_gib, tokens_per_s\n  measured: {}\n  ^");
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

namespace {
// A dataset of three records: the middle one's scenario fails the cross-field checks (tp 3 divides
// neither the 8 GPUs nor the 8 heads), the last one cannot be loaded (its file is missing).
std::string three_records() {
  return "- name: good\n  source: s\n  scenario: tiny.yaml\n  measured: {step_s: 1}\n"
         "- name: bad-layout\n  source: s\n  scenario:\n" +
         inline_scenario() +
         "      parallel: {tp: 3}\n"
         "  measured: {step_s: 1}\n"
         "- name: missing\n  source: s\n  scenario: nope.yaml\n  measured: {step_s: 1}\n";
}
}  // namespace

TEST_CASE("io: a record whose scenario fails is kept, not modelled, with the positioned reason",
          "[io][dataset][errors]") {
  const auto records = io::load_dataset_from_string(three_records(), "data.yaml", PTDSIM_TEST_DATA "/good");
  REQUIRE(records.size() == 3);
  CHECK(records[0].scenario.has_value());
  CHECK(records[0].not_modelled.empty());
  CHECK(records[0].problems.empty());

  // tp 3: line 31 of the text is "      parallel: {tp: 3}", tp's key at column 18; the three
  // problems of core::check are kept, in its order, on one line for tables
  const auto& b = records[1];
  CHECK_FALSE(b.scenario.has_value());
  CHECK(b.not_modelled ==
        "data.yaml:31:18: tp*cp*pp = 3*1*1 = 3 does not divide the 8 GPUs; "
        "data.yaml:31:18: tp 3 does not divide heads 8; data.yaml:31:18: tp 3 does not divide ffn_hidden 1024");
  REQUIRE(b.problems.size() == 3);
  CHECK(b.problems[0].render() ==
        "data.yaml:31:18: error: tp*cp*pp = 3*1*1 = 3 does not divide the 8 GPUs\n"
        "      parallel: {tp: 3}\n"
        "                 ^");

  const auto& c = records[2];
  CHECK_FALSE(c.scenario.has_value());
  CHECK(c.not_modelled == "data.yaml:35:13: cannot open file '" PTDSIM_TEST_DATA "/good/nope.yaml'");
  CHECK(c.where.where.line == 33);  // the record's name
}

TEST_CASE("io: --strict fails at the first record that is not modelled", "[io][dataset][errors]") {
  const auto records = io::load_dataset_from_string(three_records(), "data.yaml", PTDSIM_TEST_DATA "/good");
  try {
    io::require_all_modelled(records);
    FAIL("no error");
  } catch (const core::ConfigError& e) {
    CHECK(e.diagnostics().size() == 3);  // the bad layout's problems, not the missing file's
    CHECK(e.diagnostics()[1].message == "tp 3 does not divide heads 8");
  }
  // a record the dataset itself declares not modelled fails --strict at its not_modelled key
  const auto declared = io::load_dataset_from_string(
      "- name: a\n  source: s\n  not_modelled: shape not stated\n", "data.yaml", ".");
  CHECK(declared[0].problems.size() == 1);
  CHECK_THROWS_WITH(io::require_all_modelled(declared),
                    "data.yaml:3:17: error: record 'a' is not modelled: shape not stated\n"
                    "  not_modelled: shape not stated\n"
                    "                ^");
  // a malformed record is still an error of the whole file, whatever its scenario
  CHECK(error_of("- name: a\n  source: s\n  scenario: nope.yaml\n") ==
        "data.yaml:1:3: error: missing required key 'measured' in record\n- name: a\n  ^");
}
