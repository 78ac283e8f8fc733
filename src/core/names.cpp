#include "ptdsim/core/names.hpp"

#include <array>
#include <cstdio>
#include <string>
#include <utility>

namespace ptdsim::core {
namespace {

template <class E, std::size_t N>
using Table = std::array<std::pair<E, std::string_view>, N>;

constexpr Table<Precision, kPrecisionCount> kPrecision{{{Precision::bf16, "bf16"},
                                                        {Precision::fp16, "fp16"},
                                                        {Precision::fp8, "fp8"},
                                                        {Precision::fp32, "fp32"},
                                                        {Precision::tf32, "tf32"},
                                                        {Precision::fp4, "fp4"}}};
constexpr Table<Collective, 7> kCollective{{{Collective::all_reduce, "all_reduce"},
                                            {Collective::all_gather, "all_gather"},
                                            {Collective::reduce_scatter, "reduce_scatter"},
                                            {Collective::all_to_all, "all_to_all"},
                                            {Collective::broadcast, "broadcast"},
                                            {Collective::reduce, "reduce"},
                                            {Collective::send_recv, "send_recv"}}};
constexpr Table<Scope, 2> kScope{{{Scope::intra, "intra"}, {Scope::inter, "inter"}}};
constexpr Table<Schedule, 4> kSchedule{{{Schedule::gpipe, "gpipe"},
                                        {Schedule::one_f_one_b, "1f1b"},
                                        {Schedule::interleaved, "interleaved"},
                                        {Schedule::zb_h1, "zb-h1"}}};
constexpr Table<RecomputeModule, kRecomputeModuleCount> kRecomputeModule{
    {{RecomputeModule::core_attn, "core_attn"},
     {RecomputeModule::mla_up_proj, "mla_up_proj"},
     {RecomputeModule::mlp, "mlp"},
     {RecomputeModule::moe, "moe"},
     {RecomputeModule::moe_act, "moe_act"},
     {RecomputeModule::layernorm, "layernorm"},
     {RecomputeModule::shared_experts, "shared_experts"}}};
constexpr Table<OffloadModule, kOffloadModuleCount> kOffloadModule{
    {{OffloadModule::expert_fc1, "expert_fc1"}, {OffloadModule::moe_act, "moe_act"}}};
constexpr Table<Recompute, 4> kRecompute{{{Recompute::none, "none"},
                                          {Recompute::selective, "selective"},
                                          {Recompute::full, "full"},
                                          {Recompute::op, "op"}}};
constexpr Table<Dim, 5> kDim{
    {{Dim::tp, "tp"}, {Dim::cp, "cp"}, {Dim::ep, "ep"}, {Dim::dp, "dp"}, {Dim::pp, "pp"}}};
constexpr Table<Mlp, 2> kMlp{{{Mlp::gelu, "gelu"}, {Mlp::swiglu, "swiglu"}}};
constexpr Table<Norm, 2> kNorm{{{Norm::layernorm, "layernorm"}, {Norm::rmsnorm, "rmsnorm"}}};
constexpr Table<Position, 2> kPosition{{{Position::learned, "learned"}, {Position::rope, "rope"}}};
constexpr Table<Router, 2> kRouter{{{Router::softmax, "softmax"}, {Router::sigmoid, "sigmoid"}}};
constexpr Table<Topology, 2> kTopology{{{Topology::fat_tree, "fat-tree"}, {Topology::rail_optimized, "rail-optimized"}}};
constexpr Table<NodePlacement, 2> kNodePlacement{
    {{NodePlacement::dense, "dense"}, {NodePlacement::fragmented, "fragmented"}}};
constexpr Table<Optimizer, 2> kOptimizer{{{Optimizer::adam, "adam"}, {Optimizer::sgd, "sgd"}}};
constexpr Table<MainGrads, 2> kMainGrads{{{MainGrads::fp32, "fp32"}, {MainGrads::bit16, "16bit"}}};
constexpr Table<AttentionKernel, 2> kAttentionKernel{
    {{AttentionKernel::cudnn, "cudnn"}, {AttentionKernel::flash2, "flash2"}}};
constexpr Table<Fusion, 2> kFusion{{{Fusion::eager, "eager"}, {Fusion::fused, "fused"}}};
constexpr Table<LossFusion, 4> kLossFusion{{{LossFusion::eager, "eager"},
                                             {LossFusion::vocab_parallel, "vocab_parallel"},
                                             {LossFusion::fused, "fused"},
                                             {LossFusion::loss_parallel, "loss_parallel"}}};
constexpr Table<WgradAccumulation, 3> kWgradAccumulation{{{WgradAccumulation::fused, "fused"},
                                                          {WgradAccumulation::separate, "separate"},
                                                          {WgradAccumulation::none, "none"}}};
constexpr Table<Fp8Recipe, 5> kFp8Recipe{{{Fp8Recipe::delayed, "delayed"},
                                         {Fp8Recipe::current, "current"},
                                         {Fp8Recipe::rowwise, "rowwise"},
                                         {Fp8Recipe::blockwise, "blockwise"},
                                         {Fp8Recipe::mxfp8, "mxfp8"}}};
constexpr Table<Offload, kOffloadCount> kOffload{
    {{Offload::none, "none"}, {Offload::optimizer, "optimizer"}, {Offload::optimizer_params, "optimizer_params"}}};
constexpr Table<CpComm, 4> kCpComm{
    {{CpComm::p2p, "p2p"}, {CpComm::allgather, "allgather"}, {CpComm::a2a, "a2a"}, {CpComm::a2a_p2p, "a2a_p2p"}}};
constexpr Table<Dispatcher, 3> kDispatcher{
    {{Dispatcher::alltoall, "alltoall"}, {Dispatcher::allgather, "allgather"}, {Dispatcher::flex, "flex"}}};
constexpr Table<EngineKind, 2> kEngine{{{EngineKind::analytic, "analytic"}, {EngineKind::simulation, "simulation"}}};
constexpr Table<CommKind, kCommKindCount> kCommKind{{{CommKind::tp, "TP"},
                                                    {CommKind::cp, "CP"},
                                                    {CommKind::ep, "EP"},
                                                    {CommKind::p2p, "PP p2p"},
                                                    {CommKind::dp_reduce, "DP reduce"},
                                                    {CommKind::dp_gather, "DP all-gather"},
                                                    {CommKind::zero3_gather, "ZeRO-3 all-gather"},
                                                    {CommKind::zero3_reduce, "ZeRO-3 reduce-scatter"}}};
constexpr Table<BoundKind, 6> kBound{{{BoundKind::compute, "compute"},
                                      {BoundKind::bubble, "bubble"},
                                      {BoundKind::optimizer, "optimizer"},
                                      {BoundKind::comm, "communication"},
                                      {BoundKind::dp, "DP"},
                                      {BoundKind::offload, "CPU offload"}}};
constexpr Table<MemoryOp, kMemoryOpCount> kMemoryOp{{{MemoryOp::layernorm, "layernorm"},
                                                     {MemoryOp::rmsnorm, "rmsnorm"},
                                                     {MemoryOp::gelu, "gelu"},
                                                     {MemoryOp::swiglu, "swiglu"},
                                                     {MemoryOp::dropout, "dropout"},
                                                     {MemoryOp::residual_add, "residual_add"}}};
constexpr Table<Fp8Kernel, kFp8KernelCount> kFp8Kernel{{{Fp8Kernel::fast_accum, "fast_accum"},
                                                        {Fp8Kernel::rowwise, "rowwise"},
                                                        {Fp8Kernel::blockwise, "blockwise"},
                                                        {Fp8Kernel::mxfp8, "mxfp8"}}};
constexpr Table<Operator, kOperatorCount> kOperator{{{Operator::embedding, "embedding"},
                                                     {Operator::input_norm, "input_norm"},
                                                     {Operator::qkv, "qkv"},
                                                     {Operator::attention, "attention"},
                                                     {Operator::proj, "proj"},
                                                     {Operator::attention_dropout_add, "attention_dropout_add"},
                                                     {Operator::mlp_norm, "mlp_norm"},
                                                     {Operator::fc1, "fc1"},
                                                     {Operator::fc1_gated, "fc1_gated"},
                                                     {Operator::gelu, "gelu"},
                                                     {Operator::swiglu, "swiglu"},
                                                     {Operator::fc2, "fc2"},
                                                     {Operator::router, "router"},
                                                     {Operator::permute, "permute"},
                                                     {Operator::unpermute, "unpermute"},
                                                     {Operator::mlp_dropout_add, "mlp_dropout_add"},
                                                     {Operator::logits, "logits"},
                                                     {Operator::cross_entropy, "cross_entropy"},
                                                     {Operator::optimizer, "optimizer"},
                                                     {Operator::overhead, "overhead"},
                                                     {Operator::rope, "rope"},
                                                     {Operator::fp8_cast, "fp8_cast"},
                                                     {Operator::q_down, "q_down"},
                                                     {Operator::q_up, "q_up"},
                                                     {Operator::kv_down, "kv_down"},
                                                     {Operator::kv_up, "kv_up"},
                                                     {Operator::latent_norm, "latent_norm"},
                                                     {Operator::qk_norm, "qk_norm"},
                                                     {Operator::shared_fc1, "shared_fc1"},
                                                     {Operator::shared_activation, "shared_activation"},
                                                     {Operator::shared_fc2, "shared_fc2"},
                                                     {Operator::mtp, "mtp"}}};
constexpr Table<OperatorKind, kOperatorKindCount> kOperatorKind{{{OperatorKind::gemm, "gemm"},
                                                                 {OperatorKind::attention, "attention"},
                                                                 {OperatorKind::memory_bound, "memory_bound"},
                                                                 {OperatorKind::loss, "loss"},
                                                                 {OperatorKind::optimizer, "optimizer"},
                                                                 {OperatorKind::overhead, "overhead"}}};
constexpr Table<TimeSource, kTimeSourceCount> kTimeSource{{{TimeSource::measured, "measured"},
                                                           {TimeSource::model, "model"},
                                                           {TimeSource::scalar_efficiency, "scalar-efficiency"},
                                                           {TimeSource::hbm_efficiency, "hbm-efficiency"},
                                                           {TimeSource::fitted, "fitted"}}};

template <class E, std::size_t N>
std::string_view lookup(const Table<E, N>& t, E e) {
  for (const auto& [v, s] : t)
    if (v == e) return s;
  return "?";
}
template <class E, std::size_t N>
std::optional<E> reverse(const Table<E, N>& t, std::string_view s) {
  for (const auto& [v, n] : t)
    if (n == s) return v;
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& nccl_algo_names() {
  static const std::vector<std::string> n{"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
  return n;
}
const std::vector<std::string>& nccl_proto_names() {
  static const std::vector<std::string> n{"ll", "ll128", "simple"};
  return n;
}

std::string_view name(Precision e) { return lookup(kPrecision, e); }
std::string_view name(Collective e) { return lookup(kCollective, e); }
std::string_view name(Scope e) { return lookup(kScope, e); }
std::string_view name(Schedule e) { return lookup(kSchedule, e); }
std::string_view name(Recompute e) { return lookup(kRecompute, e); }
std::string_view name(RecomputeModule e) { return lookup(kRecomputeModule, e); }
std::string_view name(OffloadModule e) { return lookup(kOffloadModule, e); }
std::string_view name(Dim e) { return lookup(kDim, e); }
std::string_view name(Mlp e) { return lookup(kMlp, e); }
std::string_view name(Norm e) { return lookup(kNorm, e); }
std::string_view name(Position e) { return lookup(kPosition, e); }
std::string_view name(Router e) { return lookup(kRouter, e); }
std::string_view name(Optimizer e) { return lookup(kOptimizer, e); }
std::string_view name(Topology e) { return lookup(kTopology, e); }
std::string_view name(NodePlacement e) { return lookup(kNodePlacement, e); }
std::string_view name(MainGrads e) { return lookup(kMainGrads, e); }
std::string_view name(AttentionKernel e) { return lookup(kAttentionKernel, e); }
std::string_view name(Fusion e) { return lookup(kFusion, e); }
std::string_view name(LossFusion e) { return lookup(kLossFusion, e); }
std::string_view name(WgradAccumulation e) { return lookup(kWgradAccumulation, e); }
std::string_view name(Fp8Recipe e) { return lookup(kFp8Recipe, e); }
std::string_view name(Dispatcher e) { return lookup(kDispatcher, e); }
std::string_view name(CpComm e) { return lookup(kCpComm, e); }
std::string_view name(Offload e) { return lookup(kOffload, e); }

std::string placement_text(const ParallelSpec& p) {
  std::string out;  // appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on chained temporaries
  for (auto d : p.placement) {
    if (!out.empty()) out += '-';
    out += name(d);
  }
  return out;
}
std::string_view name(EngineKind e) { return lookup(kEngine, e); }
std::string_view name(CommKind e) { return lookup(kCommKind, e); }
std::string_view name(BoundKind e) { return lookup(kBound, e); }

std::string describe(const std::vector<BoundPart>& parts) {
  std::string words;
  for (const auto& p : parts) {
    if (!words.empty()) words += ", then ";
    if (p.kind == BoundKind::compute)
      words += p.stage == BoundPart::kAllStages ? "compute across stages"
                                                : "stage " + std::to_string(p.stage) + " compute";
    else
      words += p.kind == BoundKind::comm ? name(p.comm) : name(p.kind);
    if (p.beside_compute) words += " beside compute";
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%.0f%%)", 100 * p.share);
    words += pct;
  }
  return words;
}
std::string_view name(MemoryOp e) { return lookup(kMemoryOp, e); }
std::string_view name(Fp8Kernel e) { return lookup(kFp8Kernel, e); }
std::string_view name(Operator e) { return lookup(kOperator, e); }
std::string_view name(OperatorKind e) { return lookup(kOperatorKind, e); }
std::string_view name(TimeSource e) { return lookup(kTimeSource, e); }

template <> std::optional<Precision> parse(std::string_view s) { return reverse(kPrecision, s); }
template <> std::optional<Collective> parse(std::string_view s) { return reverse(kCollective, s); }
template <> std::optional<Scope> parse(std::string_view s) { return reverse(kScope, s); }
template <> std::optional<Schedule> parse(std::string_view s) { return reverse(kSchedule, s); }
template <> std::optional<Recompute> parse(std::string_view s) { return reverse(kRecompute, s); }
template <> std::optional<RecomputeModule> parse(std::string_view s) { return reverse(kRecomputeModule, s); }
template <> std::optional<OffloadModule> parse(std::string_view s) { return reverse(kOffloadModule, s); }
template <> std::optional<Dim> parse(std::string_view s) { return reverse(kDim, s); }
template <> std::optional<Mlp> parse(std::string_view s) { return reverse(kMlp, s); }
template <> std::optional<Norm> parse(std::string_view s) { return reverse(kNorm, s); }
template <> std::optional<Position> parse(std::string_view s) { return reverse(kPosition, s); }
template <> std::optional<Router> parse(std::string_view s) { return reverse(kRouter, s); }
template <> std::optional<Optimizer> parse(std::string_view s) { return reverse(kOptimizer, s); }
template <> std::optional<Topology> parse(std::string_view s) { return reverse(kTopology, s); }
template <> std::optional<NodePlacement> parse(std::string_view s) { return reverse(kNodePlacement, s); }
template <> std::optional<MemoryOp> parse(std::string_view s) { return reverse(kMemoryOp, s); }
template <> std::optional<Fp8Kernel> parse(std::string_view s) { return reverse(kFp8Kernel, s); }
template <> std::optional<MainGrads> parse(std::string_view s) { return reverse(kMainGrads, s); }
template <> std::optional<AttentionKernel> parse(std::string_view s) { return reverse(kAttentionKernel, s); }
template <> std::optional<Fusion> parse(std::string_view s) { return reverse(kFusion, s); }
template <> std::optional<LossFusion> parse(std::string_view s) { return reverse(kLossFusion, s); }
template <> std::optional<WgradAccumulation> parse(std::string_view s) { return reverse(kWgradAccumulation, s); }
template <> std::optional<Fp8Recipe> parse(std::string_view s) { return reverse(kFp8Recipe, s); }
template <> std::optional<Dispatcher> parse(std::string_view s) { return reverse(kDispatcher, s); }
template <> std::optional<CpComm> parse(std::string_view s) { return reverse(kCpComm, s); }
template <> std::optional<Offload> parse(std::string_view s) { return reverse(kOffload, s); }

namespace {
template <class E, std::size_t N>
std::vector<std::string> all(const Table<E, N>& t) {
  std::vector<std::string> out;
  for (const auto& [e, text] : t) out.emplace_back(text);
  return out;
}
}  // namespace
template <> std::vector<std::string> spellings<Precision>() { return all(kPrecision); }
template <> std::vector<std::string> spellings<AttentionKernel>() { return all(kAttentionKernel); }
template <> std::vector<std::string> spellings<Fp8Kernel>() { return all(kFp8Kernel); }
template <> std::vector<std::string> spellings<RecomputeModule>() { return all(kRecomputeModule); }
template <> std::vector<std::string> spellings<OffloadModule>() { return all(kOffloadModule); }

}  // namespace ptdsim::core
