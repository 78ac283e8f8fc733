// _ptdsim: the extension behind `import ptdsim` (python/ptdsim/__init__.py turns Python arguments into
// these calls and the JSON they return into dicts). Every result is the text the CLI writes, from the
// same functions (include/ptdsim/api.hpp), so the module and the CLI cannot drift apart. Bad input
// raises ptdsim.InputError (from core::ConfigError, with its positions); the GIL is released while
// C++ works, so other Python threads run during a sweep.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ptdsim/analytic/kernel_times.hpp"
#include "ptdsim/api.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/io/import.hpp"
#include "ptdsim/io/load.hpp"
#include "ptdsim/report/evaluate.hpp"
#include "ptdsim/report/sweep.hpp"
#include "ptdsim/core/version.hpp"

namespace py = pybind11;
using namespace ptdsim;

namespace {

// ptdsim.InputError, handed over by the package once defined (set_input_error); held for the
// process's life (never destroyed: the interpreter may be gone when statics are).
py::object* input_error = nullptr;

std::vector<io::Override> overrides_of(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<io::Override> out;
  out.reserve(pairs.size());
  for (const auto& [key, value] : pairs) out.push_back(io::Override{key, value});
  return out;
}

// An option's problem where the CLI's own parser would refuse it: a ConfigError naming the option.
[[noreturn]] void bad_argument(const std::string& option, const std::string& message) {
  throw core::ConfigError(core::SourceLocation{option, 0, 0}, message);
}

core::Precision precision_of(const std::string& text, const core::GpuSpec& gpu, const std::string& hardware) {
  const auto p = core::parse<core::Precision>(text);
  if (!p) bad_argument("precision", "unknown precision '" + text + "'");
  if (!core::precision_ok(gpu, *p)) bad_argument("precision", core::precision_problem(gpu, *p) + " (" + hardware + ")");
  return *p;
}

// The report as Python objects, from the walk report_json writes as text (report::report_json_walk): the
// dict json.loads would make of `ptdsim evaluate --format json`, without writing and parsing the text
// (the text alone costs about 150 us to write and 100 us to parse, against the module's 50 us).
class DictBuilder final : public report::JsonVisitor {
 public:
  py::dict root;
  void boolean(std::string_view path, bool v) override { set(path, py::bool_(v)); }
  void integer(std::string_view path, long long v) override { set(path, py::int_(v)); }
  void number(std::string_view path, double v) override { set(path, py::float_(v)); }
  void string(std::string_view path, const std::string& v) override { set(path, py::str(v)); }
  void strings(std::string_view path, const std::vector<std::string>& v) override {
    py::list list(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) list[i] = py::str(v[i]);
    set(path, list);
  }
  void begin_rows(std::string_view path) override {
    base_ = root;
    parent_path_.clear();
    rows_ = py::list();
    set(path, rows_);
  }
  void begin_row() override {
    py::dict row;
    rows_.append(row);
    base_ = row;
    parent_path_.clear();
  }
  void end_rows() override {
    base_ = root;
    parent_path_.clear();
  }

 private:
  // The dict that holds `path`'s last member, creating the dicts on the way; consecutive members
  // mostly share it, so the last one is kept.
  PyObject* parent(std::string_view path, std::size_t last_dot) {
    const std::string_view prefix = path.substr(0, last_dot);
    if (parent_ && prefix == parent_path_) return parent_.ptr();
    py::object node = base_;
    for (std::size_t start = 0;;) {
      const std::size_t dot = prefix.find('.', start);
      const std::string_view segment = prefix.substr(start, dot == std::string_view::npos ? dot : dot - start);
      PyObject* const k = key(segment);
      PyObject* child = PyDict_GetItemWithError(node.ptr(), k);
      if (child) {
        node = py::reinterpret_borrow<py::object>(child);
      } else {
        if (PyErr_Occurred()) throw py::error_already_set();
        py::dict made;
        if (PyDict_SetItem(node.ptr(), k, made.ptr()) != 0) throw py::error_already_set();
        node = made;
      }
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    parent_ = node;
    parent_path_.assign(prefix);
    return parent_.ptr();
  }
  void set(std::string_view path, const py::object& v) {
    const std::size_t dot = path.rfind('.');
    PyObject* holder = dot == std::string_view::npos ? base_.ptr() : parent(path, dot);
    const std::string_view name = dot == std::string_view::npos ? path : path.substr(dot + 1);
    if (PyDict_SetItem(holder, key(name), v.ptr()) != 0) throw py::error_already_set();
  }
  // The key objects, made once per process: a report has a few hundred members of a few dozen names,
  // and a str made once keeps its hash.
  static PyObject* key(std::string_view name) {
    struct Hash {
      using is_transparent = void;
      std::size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
    };
    // never freed: lives with the module
    static auto& keys = *new std::unordered_map<std::string, PyObject*, Hash, std::equal_to<>>();
    const auto it = keys.find(name);
    if (it != keys.end()) return it->second;
    PyObject* k = PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
    if (!k) throw py::error_already_set();
    PyUnicode_InternInPlace(&k);
    keys.emplace(std::string(name), k);
    return k;
  }
  py::object base_ = root;
  py::object parent_;
  std::string parent_path_;
  py::list rows_;
};

py::dict report_dict(const core::Report& r) {
  DictBuilder b;
  report::report_json_walk(r, b);
  return b.root;
}

}  // namespace

PYBIND11_MODULE(_ptdsim, m) {
  m.doc() = "ptdsim's C++ core; use the ptdsim package, not this module";
  m.attr("__version__") = core::kVersion;

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const core::ConfigError& e) {
      py::list diagnostics;
      for (const auto& d : e.diagnostics())
        diagnostics.append(py::make_tuple(d.where.file, d.where.line, d.where.column, d.message, d.source_line));
      PyObject* type = input_error ? input_error->ptr() : PyExc_ValueError;
      PyErr_SetObject(type, py::make_tuple(std::string(e.what()), diagnostics).ptr());
    }
  });
  m.def("set_input_error", [](py::object type) { input_error = new py::object(std::move(type)); });

  py::class_<core::Scenario>(m, "Scenario", "A loaded, checked scenario (ptdsim.load)")
      .def_property_readonly("name", [](const core::Scenario& s) { return s.name; })
      .def_property_readonly("file", [](const core::Scenario& s) { return s.file; })
      .def_property_readonly("gpus", [](const core::Scenario& s) { return s.gpus; })
      .def("__repr__", [](const core::Scenario& s) {
        return "<ptdsim.Scenario " + s.name + " on " + std::to_string(s.gpus) + " GPUs>";
      });

  using Pairs = std::vector<std::pair<std::string, std::string>>;
  m.def(
      "load",
      [](const std::string& path, const Pairs& overrides) {
        py::gil_scoped_release unlocked;
        return api::load(path, overrides_of(overrides));
      },
      py::arg("path"), py::arg("overrides"));
  m.def(
      "load_text",
      [](const std::string& yaml, const std::string& name, const Pairs& overrides, const std::string& base_dir) {
        py::gil_scoped_release unlocked;
        return api::load_text(yaml, name, overrides_of(overrides), base_dir);
      },
      py::arg("yaml"), py::arg("name"), py::arg("overrides"), py::arg("base_dir"));

  m.def(
      "evaluate_json",
      [](const core::Scenario& s) {
        py::gil_scoped_release unlocked;
        return api::evaluate_json(s);
      },
      py::arg("scenario"));
  m.def(
      "evaluate",
      [](const core::Scenario& s) {
        core::Report r;
        {
          py::gil_scoped_release unlocked;
          r = api::evaluate(s);
        }
        return report_dict(r);
      },
      py::arg("scenario"));
  m.def(
      "simulate_json",
      [](const core::Scenario& s) {
        std::string report, trace;
        {
          py::gil_scoped_release unlocked;
          report = report::report_json(api::evaluate(s, &trace));
        }
        return std::make_pair(report, trace);
      },
      py::arg("scenario"));
  // The C++ evaluation alone, timed in C++: seconds per call over `repeat` calls of api::evaluate
  // (`what` "evaluate", the report struct), of it and the walk of its JSON with a visitor that does
  // nothing ("walk": what the dict's building costs in C++), or of api::evaluate_json ("json", the
  // CLI's evaluate --format json). The baselines of the Python call's overhead
  // (tests/python/overhead.py, docs/performance.md "The Python module").
  m.def(
      "time_evaluate",
      [](const core::Scenario& s, int repeat, const std::string& what) {
        struct Nothing final : report::JsonVisitor {
          double n = 0;
          void boolean(std::string_view, bool) override { ++n; }
          void integer(std::string_view, long long) override { ++n; }
          void number(std::string_view, double) override { ++n; }
          void string(std::string_view, const std::string&) override { ++n; }
          void strings(std::string_view, const std::vector<std::string>&) override { ++n; }
          void begin_rows(std::string_view) override { ++n; }
          void begin_row() override { ++n; }
          void end_rows() override { ++n; }
        };
        if (what != "evaluate" && what != "walk" && what != "json")
          throw py::value_error("time_evaluate: 'evaluate', 'walk' or 'json', not '" + what + "'");
        py::gil_scoped_release unlocked;
        double sink = 0;
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < repeat; ++i) {
          if (what == "json") {
            sink += static_cast<double>(api::evaluate_json(s).size());
          } else if (what == "walk") {
            Nothing v;
            report::report_json_walk(api::evaluate(s), v);
            sink += v.n;
          } else {
            sink += api::evaluate(s).step_s;
          }
        }
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return sink > 0 ? t / repeat : 0.0;
      },
      py::arg("scenario"), py::arg("repeat"), py::arg("what") = "evaluate");

  // The dict's building alone: seconds per report_dict of one evaluation's report over `repeat`
  // calls (the part of the module's overhead that grows with the report: its stages and operators).
  m.def(
      "time_report_dict",
      [](const core::Scenario& s, int repeat) {
        core::Report r;
        {
          py::gil_scoped_release unlocked;
          r = api::evaluate(s);
        }
        const auto start = std::chrono::steady_clock::now();
        std::size_t n = 0;
        for (int i = 0; i < repeat; ++i) n += report_dict(r).size();
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return n > 0 ? t / repeat : 0.0;
      },
      py::arg("scenario"), py::arg("repeat"));

  m.def(
      "sweep_json",
      [](core::Scenario base, const std::vector<std::string>& keys, const py::dict& options) {
        api::SweepRequest r;
        for (const auto& [k, v] : options) {
          const auto key = k.cast<std::string>();
          if (key == "gpus") r.gpus = v.cast<int>();
          else if (key == "objective") r.objective = v.cast<std::string>();
          else if (key == "top") r.top = v.cast<int>();
          else if (key == "threads") r.threads = v.cast<int>();
          else if (key == "rank_scenario") r.rank_scenario = v.cast<bool>();
          else if (key == "rank_limit") r.rank_limit = v.cast<std::uint64_t>();
          else if (key == "min_free_gib") r.min_free_gib = v.cast<double>();
          else if (key == "search") r.search = v.cast<std::vector<std::string>>();
          else if (key == "tp") r.tp = v.cast<std::string>();
          else if (key == "pp") r.pp = v.cast<std::string>();
          else if (key == "cp") r.cp = v.cast<std::string>();
          else if (key == "ep") r.ep = v.cast<std::string>();
          else if (key == "dp") r.dp = v.cast<std::string>();
          else if (key == "vpp") r.vpp = v.cast<std::string>();
          else if (key == "micro_batch") r.micro_batch = v.cast<std::string>();
          else if (key == "zero") r.zero = v.cast<std::string>();
          else if (key == "max_tp") r.max_tp = v.cast<int>();
          else if (key == "max_pp") r.max_pp = v.cast<int>();
          else if (key == "max_cp") r.max_cp = v.cast<int>();
          else if (key == "max_ep") r.max_ep = v.cast<int>();
          else if (key == "max_vpp") r.max_vpp = v.cast<int>();
          else if (key == "max_micro_batch") r.max_micro_batch = v.cast<int>();
          else throw py::type_error("sweep() got an unexpected option '" + key + "'");
        }
        std::string json, table;
        {
          py::gil_scoped_release unlocked;
          const api::Sweep s = api::sweep(std::move(base), keys, r);
          json = api::sweep_json(s);
          table = report::sweep_table(s.base, s.space, s.result, s.objective, r.min_free_gib);
        }
        return std::make_pair(json, table);
      },
      py::arg("scenario"), py::arg("override_keys"), py::arg("options"));

  m.def(
      "validate_json",
      [](const std::string& dataset, const std::string& split) {
        py::gil_scoped_release unlocked;
        return api::validate_json(api::validate(dataset.empty() ? api::default_dataset() : dataset, split));
      },
      py::arg("dataset"), py::arg("split"));

  // The importers: (YAML text, warnings).
  m.def(
      "import_hf",
      [](const std::string& config, bool is_text, const std::string& name, const io::ImportScenario& s) {
        py::gil_scoped_release unlocked;
        io::Imported i = is_text ? io::import_hf_text(config, "<config>", name, s) : io::import_hf(config, name, s);
        return std::make_pair(i.yaml, i.warnings);
      },
      py::arg("config"), py::arg("is_text"), py::arg("name"), py::arg("scenario"));
  m.def(
      "import_megatron",
      [](const std::string& arguments, const std::string& name, const io::ImportScenario& s) {
        py::gil_scoped_release unlocked;
        io::Imported i = io::import_megatron(arguments, name, s);
        return std::make_pair(i.yaml, i.warnings);
      },
      py::arg("arguments"), py::arg("name"), py::arg("scenario"));
  py::class_<io::ImportScenario>(m, "ImportScenario")
      .def(py::init<>())
      .def_readwrite("hardware", &io::ImportScenario::hardware)
      .def_readwrite("gpus", &io::ImportScenario::gpus)
      .def_readwrite("nodes", &io::ImportScenario::nodes)
      .def_readwrite("seq_len", &io::ImportScenario::seq_len)
      .def_readwrite("global_batch", &io::ImportScenario::global_batch)
      .def_readwrite("micro_batch", &io::ImportScenario::micro_batch)
      .def_readwrite("precision", &io::ImportScenario::precision)
      .def_readwrite("tokens", &io::ImportScenario::tokens)
      .def_readwrite("gpu_hour", &io::ImportScenario::gpu_hour)
      .def_readwrite("framework", &io::ImportScenario::framework);

  // `ptdsim kernel`: (JSON, warning or "").
  m.def(
      "gemm_json",
      [](const std::string& hardware, const std::string& precision, double mm, double n, double k,
         const std::string& fp8_kernel) {
        py::gil_scoped_release unlocked;
        // the checks and the warning of `ptdsim kernel gemm --fp8-kernel`, in its order: the kernel's
        // name first (the CLI's parser), then the file and the precision
        const auto kernel = core::parse<core::Fp8Kernel>(fp8_kernel);
        if (!kernel && fp8_kernel != "tensorwise") {
          std::string known = "tensorwise";
          for (const auto& s : core::spellings<core::Fp8Kernel>()) known += " | " + s;
          bad_argument("fp8_kernel", "unknown FP8 kernel '" + fp8_kernel + "' (" + known + ")");
        }
        const core::HardwareSpec hw = io::load_hardware(hardware);
        const core::Precision p = precision_of(precision, hw.gpu, hardware);
        if (!kernel) return std::make_pair(api::gemm_json(api::gemm(hw.gpu, p, mm, n, k)), std::string());
        if (p != core::Precision::fp8) bad_argument("fp8_kernel", fp8_kernel + " is an FP8 kernel: it needs precision fp8");
        std::string warning = analytic::fp8_kernel_fallback(hw.gpu, *kernel);
        if (!warning.empty()) warning = hardware + ": " + warning;
        return std::make_pair(api::gemm_json(api::fp8_gemm(hw.gpu, *kernel, mm, n, k)), warning);
      },
      py::arg("hardware"), py::arg("precision"), py::arg("m"), py::arg("n"), py::arg("k"), py::arg("fp8_kernel"));
  m.def(
      "attention_json",
      [](const std::string& hardware, const std::string& precision, const std::string& kernel_name,
         const core::AttentionShape& shape) {
        py::gil_scoped_release unlocked;
        const core::HardwareSpec hw = io::load_hardware(hardware);
        const core::Precision p = precision_of(precision, hw.gpu, hardware);
        const auto kernel = core::parse<core::AttentionKernel>(kernel_name);
        if (!kernel) bad_argument("kernel", "unknown attention kernel '" + kernel_name + "'");
        std::string warning = analytic::attention_fallback(hw.gpu, p, true, *kernel);
        if (!warning.empty()) warning = hardware + ": " + warning;
        return std::make_pair(api::attention_json(api::attention(hw.gpu, p, shape, *kernel)), warning);
      },
      py::arg("hardware"), py::arg("precision"), py::arg("kernel"), py::arg("shape"));
  py::class_<core::AttentionShape>(m, "AttentionShape")
      .def(py::init<>())
      .def_readwrite("batch", &core::AttentionShape::batch)
      .def_readwrite("heads", &core::AttentionShape::heads)
      .def_readwrite("kv_heads", &core::AttentionShape::kv_heads)
      .def_readwrite("head_dim", &core::AttentionShape::head_dim)
      .def_readwrite("seq_q", &core::AttentionShape::seq_q)
      .def_readwrite("seq_k", &core::AttentionShape::seq_k)
      .def_readwrite("causal", &core::AttentionShape::causal);

  m.def("shipped_names", &io::shipped_names, py::arg("kind"));
  m.def("shipped_file", &io::shipped_file, py::arg("relative"));
}
