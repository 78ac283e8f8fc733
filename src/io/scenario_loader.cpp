#include <algorithm>
#include <sstream>

#include "yaml_fields.hpp"
#include "loaders.hpp"
#include "ptdsim/core/check.hpp"
#include "ptdsim/core/framework.hpp"
#include "schema.hpp"

namespace ptdsim::io::detail {
namespace {

// training.recompute_modules or training.offload_modules (Megatron-Core's --recompute-modules,
// --offload-modules): a non-empty list of E's names, each at most once (a repeat is a slip), as
// one bit each; 0 when the key is absent.
template <class E>
unsigned module_list(const Fields& tr, std::string_view key) {
  const Entry* e = tr.get(key);
  if (!e) return 0;
  const std::string all = core::spelling_list<E>();
  const std::string where = "training." + std::string(key);
  if (e->value->kind != Node::Kind::list || e->value->items.empty())
    fail(e->value->mark, where + " must be a non-empty list of " + all + ", got " + describe(*e->value));
  unsigned bits = 0;
  for (const NodePtr& item : e->value->items) {
    const auto m = item->kind == Node::Kind::scalar ? core::parse<E>(item->text) : std::nullopt;
    if (!m)
      fail(item->mark, where + " entries must be one of " + all + ", got " + describe(*item) +
                           " (Megatron-Core's other modules are not modelled)");
    const unsigned bit = 1u << static_cast<unsigned>(*m);
    if (bits & bit) fail(item->mark, where + " names " + std::string(core::name(*m)) + " twice");
    bits |= bit;
  }
  return bits;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

// Where a check() problem's dotted key is written: the key itself, or its nearest written parent
// (`parallel:` when dp was derived), or the file.
Mark position_of(const Node& root, const std::string& dotted, const Mark& where) {
  const Node* cur = &root;
  Mark best = where;
  for (const auto& part : split(dotted, '.')) {
    if (cur->kind != Node::Kind::map) break;
    const Entry* e = cur->find(part);
    if (!e) break;
    best = e->key_mark;
    cur = e->value.get();
  }
  return best;
}

// Blame an empty section on its key.
const Node& section_or_empty(const Fields& f, const std::string& key, Mark& where) {
  static const Node empty = [] {
    Node n;
    n.kind = Node::Kind::map;
    return n;
  }();
  if (const Entry* e = f.get(key)) {
    where = e->key_mark;
    return *e->value;
  }
  return empty;
}

std::array<core::Dim, core::kDimCount> parse_placement(const Entry& e, const std::string& text) {
  std::array<core::Dim, core::kDimCount> out{};
  auto parts = split(text, '-');
  bool ok = parts.size() == static_cast<std::size_t>(core::kDimCount);
  int seen = 0;
  for (std::size_t i = 0; ok && i < parts.size(); ++i) {
    auto d = core::parse<core::Dim>(parts[i]);
    ok = d && !(seen & (1 << static_cast<int>(*d)));
    if (ok) {
      seen |= 1 << static_cast<int>(*d);
      out[i] = *d;
    }
  }
  if (!ok)
    fail(e.value->mark, "parallel.placement must name tp, cp, ep, dp and pp once each, joined by '-', got " +
                            describe(*e.value));
  return out;
}

}  // namespace

void resolve_include(Entry& e) {
  const Node& v = *e.value;
  const bool named = (e.key == "model" || e.key == "hardware") && is_library_name(v.text);
  const std::string path = named ? library_file(e.key, v.text, v.mark)
                                 : resolve_path(v.mark.src ? v.mark.src->dir : ".", v.text);
  e.value = parse_file(path, v.mark);
}

namespace {

// model and hardware: a path (relative to the file that names it), a shipped name or an inline
// mapping. A file that cannot be found is collected like a bad value, so the rest is still read.
void read_model_and_hardware(const Fields& f, Node& root, core::Scenario& s) {
  for (const char* key : {"model", "hardware"}) {
    const Entry& e = f.require(key);
    bool found = true;
    if (e.value->kind == Node::Kind::scalar) {
      try {
        resolve_include(*root.find(key));
      } catch (const core::ConfigError& err) {
        Collector* c = Collector::current();
        if (!c) throw;
        c->add(err.diagnostics());
        found = false;
      }
    }
    if (!found) continue;
    const Entry& inc = *root.find(key);
    const std::string name = inc.value->document && inc.value->document->line == 0
                                 ? stem(inc.value->mark.src->name) : std::string();
    if (std::string(key) == "model") {
      s.model = convert_model(*inc.value, where_of(inc), name);
    } else {
      s.hardware = convert_hardware(*inc.value, where_of(inc), name);
    }
  }
}

// cluster.gpus, or cluster.nodes of the hardware's nodes.
int read_gpus(const Fields& f, const core::Scenario& s) {
  const Entry& ce = f.require("cluster");
  Fields cluster(*ce.value, ce.key_mark, "cluster", "cluster", section_keys("cluster"));
  auto gpus = cluster.integer("gpus");
  auto nodes = cluster.integer("nodes");
  if (gpus && nodes) fail(cluster.get("nodes")->key_mark, "give cluster.gpus or cluster.nodes, not both");
  if (!gpus && !nodes) {
    // a bad value there has been collected already: say it once, not again as missing
    if (!cluster.get("gpus") && !cluster.get("nodes"))
      fail(ce.key_mark, "missing required key 'gpus' (or 'nodes') in cluster");
    gpus = 1;
  }
  if (nodes) {
    const long long total = *nodes * s.hardware.gpus_per_node;
    const auto max_gpus = static_cast<long long>(bound_of("cluster.gpus").max);
    if (total > max_gpus)
      fail(cluster.get("nodes")->value->mark,
           "cluster.nodes * hardware.node.gpus = " + std::to_string(total) + " GPUs is more than " +
               std::to_string(max_gpus));
    gpus = total;
  }
  return static_cast<int>(*gpus);
}

// The layout: the degrees, the schedule, the placement, the pipeline split and ZeRO-3's sharding.
void read_parallel(const Fields& f, const Mark& where, core::Scenario& s) {
  Mark pwhere = where;
  Fields par(section_or_empty(f, "parallel", pwhere), pwhere, "parallel", "parallel",
             section_keys("parallel"));
  auto& p = s.parallel;
  p.tp = static_cast<int>(par.integer("tp", 1));
  p.pp = static_cast<int>(par.integer("pp", 1));
  p.cp = static_cast<int>(par.integer("cp", 1));
  p.ep = static_cast<int>(par.integer("ep", 1));
  p.etp = static_cast<int>(par.integer("etp", 0));  // 0: not given, the same as tp
  p.vpp = static_cast<int>(par.integer("vpp", 1));
  if (auto dp = par.integer("dp")) {
    p.dp = static_cast<int>(*dp);
  } else {
    // derived; when tp*cp*pp does not divide the GPUs check() says so, dp only has to stay >= 1
    const long long mp = 1LL * p.tp * p.cp * p.pp;
    p.dp = static_cast<int>(std::max(1LL, s.gpus / mp));
  }
  p.sequence_parallel = par.boolean("sequence_parallel", false);
  p.zero = static_cast<int>(par.integer("zero", 0));
  p.schedule = par.enumeration<core::Schedule>("schedule", 4).value_or(
      p.vpp > 1 ? core::Schedule::interleaved : core::Schedule::one_f_one_b);
  if (auto text = par.string("placement")) p.placement = parse_placement(*par.get("placement"), *text);
  if (const Entry* e = par.get("stage_layers")) {
    if (e->value->kind != Node::Kind::list)
      fail(e->value->mark, "parallel.stage_layers must be a list, got " + describe(*e->value));
    for (std::size_t i = 0; i < e->value->items.size(); ++i) {
      p.stage_layers.push_back(static_cast<int>(
          read_integer(*e->value->items[i], "parallel.stage_layers[" + std::to_string(i) + "]")));
    }
  }
  if (auto n = par.integer("first_stage_layers")) p.first_stage_layers = static_cast<int>(*n);
  if (auto n = par.integer("last_stage_layers")) p.last_stage_layers = static_cast<int>(*n);
  p.embedding_in_split = par.boolean("embedding_in_split", false);
  p.loss_in_split = par.boolean("loss_in_split", false);

  {
    Mark swhere = pwhere;
    p.sharding = convert_sharding(section_or_empty(par, "sharding", swhere), swhere);
  }
}

// training.nccl: NCCL_ALGO / NCCL_PROTO, the names in NCCL's order (analytic::NcclAlgo, NcclProto).
void read_nccl(const Fields& tr, const Mark& where, core::HardwareSpec::NcclForce& out) {
  Mark nwhere = where;
  Fields nc(section_or_empty(tr, "nccl", nwhere), nwhere, "training.nccl", "training.nccl", section_keys("training.nccl"));
  out.algo = nc.choice_index("algo", core::nccl_algo_names());
  out.proto = nc.choice_index("proto", core::nccl_proto_names());
}

// The training section with its overlap, fusion, MoE and NCCL sections.
void read_training(const Fields& f, core::Scenario& s) {
  const Entry& te = f.require("training");
  Fields tr(*te.value, te.key_mark, "training", "training", section_keys("training"));
  auto& t = s.training;
  t.seq_len = static_cast<int>(tr.required_integer("seq_len"));
  t.micro_batch = static_cast<int>(tr.integer("micro_batch", 1));
  t.global_batch = static_cast<int>(tr.required_integer("global_batch"));
  t.precision = tr.enumeration<core::Precision>("precision", core::kPrecisionCount)
                    .value_or(core::Precision::bf16);
  t.recompute = tr.enumeration<core::Recompute>("recompute", 4).value_or(core::Recompute::selective);
  t.recompute_modules = module_list<core::RecomputeModule>(tr, "recompute_modules");
  t.offload_modules = module_list<core::OffloadModule>(tr, "offload_modules");
  t.flash_attention = tr.boolean("flash_attention", true);
  t.attention_kernel =
      tr.enumeration<core::AttentionKernel>("attention_kernel", 2).value_or(core::AttentionKernel::cudnn);
  t.optimizer = tr.enumeration<core::Optimizer>("optimizer", 2).value_or(core::Optimizer::adam);
  Mark owhere = te.key_mark;
  Fields ov(section_or_empty(tr, "overlap", owhere), owhere, "training.overlap", "training.overlap",
            section_keys("training.overlap"));
  t.overlap.dp = ov.boolean("dp", true);
  t.overlap.tp = ov.boolean("tp", false);
  t.overlap.pp = ov.boolean("pp", true);
  t.overlap.zero3_prefetch = ov.boolean("zero3_prefetch", true);
  t.overlap.offload = ov.boolean("offload", true);
  t.overlap.ep = ov.boolean("ep", false);
  t.overlap.cp = ov.boolean("cp", true);
  Mark fwhere = te.key_mark;
  Fields fu(section_or_empty(tr, "fusion", fwhere), fwhere, "training.fusion", "training.fusion",
            section_keys("training.fusion"));
  t.fusion.norm = fu.enumeration<core::Fusion>("norm", 2).value_or(core::Fusion::fused);
  t.fusion.activation = fu.enumeration<core::Fusion>("activation", 2).value_or(core::Fusion::fused);
  t.fusion.dropout_add = fu.enumeration<core::Fusion>("dropout_add", 2).value_or(core::Fusion::fused);
  t.fusion.rope = fu.enumeration<core::Fusion>("rope", 2).value_or(core::Fusion::fused);
  t.fusion.projections = fu.enumeration<core::Fusion>("projections", 2).value_or(core::Fusion::fused);
  t.fusion.fp8_cast = fu.enumeration<core::Fusion>("fp8_cast", 2).value_or(core::Fusion::eager);
  t.fusion.grouped_mlp = fu.enumeration<core::Fusion>("grouped_mlp", 2).value_or(core::Fusion::eager);
  t.fusion.cross_entropy = fu.enumeration<core::LossFusion>("cross_entropy", 4).value_or(core::LossFusion::eager);
  t.cp_comm = tr.enumeration<core::CpComm>("cp_comm", 4).value_or(core::CpComm::p2p);
  t.repeat_kv = tr.boolean("repeat_kv", false);
  t.fusion.wgrad_accumulation =
      fu.enumeration<core::WgradAccumulation>("wgrad_accumulation", 3).value_or(core::WgradAccumulation::fused);
  t.fp8_recipe = tr.enumeration<core::Fp8Recipe>("fp8_recipe", 5).value_or(core::Fp8Recipe::delayed);
  t.dp_bucket_params = tr.number("dp_bucket_params", 0.0);
  t.framework = tr.choice("framework", core::framework_names()).value_or("");
  t.main_grads = tr.enumeration<core::MainGrads>("main_grads", 2).value_or(core::MainGrads::fp32);
  t.tokens = tr.count("tokens").value_or(0.0);
  Mark mwhere = te.key_mark;
  Fields mo(section_or_empty(tr, "moe", mwhere), mwhere, "training.moe", "training.moe",
            section_keys("training.moe"));
  t.moe.dispatcher = mo.enumeration<core::Dispatcher>("dispatcher", 3).value_or(core::Dispatcher::alltoall);
  t.moe.load_imbalance = mo.number("load_imbalance", 1.0);
  t.moe.capacity_factor = mo.number("capacity_factor", 0.0);
  read_nccl(tr, te.key_mark, s.hardware.nccl);
  t.offload = tr.enumeration<core::Offload>("offload", core::kOffloadCount).value_or(core::Offload::none);
  t.offload_fraction = tr.number("offload_fraction", 1.0);
}

// The cross-field checks (core::check), each at the key it names; `checks` says which.
void check_scenario(const core::Scenario& s, Node& root, const Mark& where, Checks checks) {
  // the cross-field checks read the values: with a bad or missing one they would only mislead
  if (const Collector* c = Collector::current()) c->throw_if_any();
  std::vector<core::Diagnostic> problems;
  for (const auto& problem : checks == Checks::none ? std::vector<core::Problem>{} : core::check(s)) {
    const bool layout = problem.key.starts_with("parallel.") || problem.key == "training.micro_batch" ||
                        problem.key == "training.global_batch";
    if (checks == Checks::except_layout && layout) continue;
    problems.push_back(diagnostic(position_of(root, problem.key, where), problem.message));
  }
  if (!problems.empty()) throw core::ConfigError(std::move(problems));
}

}  // namespace

core::Scenario convert_scenario(Node& root, const Mark& where, const std::string& default_name,
                                const std::string& file, Checks checks) {
  Fields f(root, where, "", "scenario", section_keys(""));
  core::Scenario s;
  s.file = file;
  s.name = f.string("name").value_or(default_name);
  f.string("source");
  read_model_and_hardware(f, root, s);
  s.gpus = read_gpus(f, s);
  read_parallel(f, where, s);
  read_training(f, s);
  if (const Entry* e = f.get("cost")) {
    Fields cost(*e->value, e->key_mark, "cost", "cost", section_keys("cost"));
    s.cost.gpu_hour = cost.number("gpu_hour", 0.0);
  }
  check_scenario(s, root, where, checks);
  return s;
}

core::Scenario scenario_from_tree(Node& root, const Mark& where, const std::vector<Override>& overrides,
                                  const std::string& default_name, const std::string& file, Checks checks) {
  Collector collector;
  return collector.run([&] {
    expect_map(root, where, "scenario");
    // a model or hardware file given where a scenario goes: one message that says so, not an
    // "unknown key" for each of its keys
    if (!root.find("model") && !root.find("parallel") && !root.find("training")) {
      if (root.find("layers") && root.find("hidden"))
        fail(where, "this is a model file, not a scenario: a scenario names it (model: " + file +
                        ") beside hardware, cluster, parallel and training (docs/inputs.md \"Scenario file\"); "
                        "`ptdsim import` can write one");
      if (root.find("gpu") && (root.find("node") || root.find("network")))
        fail(where, "this is a hardware file, not a scenario: a scenario names it (hardware: " + file +
                        ") beside model, cluster, parallel and training (docs/inputs.md \"Scenario file\")");
    }
    apply_overrides(root, overrides);
    std::vector<std::string> filled = apply_framework(root);
    core::Scenario s = convert_scenario(root, where, default_name, file, checks);
    // a dense model reads no MoE switch: the framework's MoE defaults are not among what it used
    if (!s.model.moe)
      filled.erase(std::remove_if(filled.begin(), filled.end(),
                                  [](const std::string& k) {
                                    return k.starts_with("training.moe.") || k == "training.overlap.ep";
                                  }),
                   filled.end());
    // nor does a run without context parallelism read training.cp_comm or training.overlap.cp
    if (s.parallel.cp <= 1) {
      std::erase(filled, std::string("training.cp_comm"));
      std::erase(filled, std::string("training.overlap.cp"));
    }
    s.training.from_framework = std::move(filled);
    return s;
  });
}

std::string stem(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  for (const char* ext : {".yaml", ".yml"}) {
    const std::string e(ext);
    if (base.size() > e.size() && base.compare(base.size() - e.size(), e.size(), e) == 0)
      return base.substr(0, base.size() - e.size());
  }
  return base;
}

}  // namespace ptdsim::io::detail
