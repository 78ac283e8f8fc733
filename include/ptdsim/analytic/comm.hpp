#pragma once
#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/core/scenario.hpp"

// Communication volumes and times (docs/analytic.md "Communication"), one GPU.
namespace ptdsim::analytic {

struct LayerOps;

// An MoE layer's forward dispatch and combine, one micro-batch (docs/analytic.md "Expert
// parallelism"): the collectives of training.moe.dispatcher one after another over the step's
// expert groups, the busiest expert's rank setting their time; the bytes one GPU sends. The
// backward moves the same.
struct Dispatch {
  double time_s = 0;
  double sent_bytes = 0;
};
Dispatch dispatch(const core::Scenario& s, const StepGroups& groups);
// The same, resolving the groups (tests).
Dispatch dispatch(const core::Scenario& s);
// Expected distinct nodes that a token's top_k experts land on, the experts spread evenly over
// `nodes` nodes in order: drawn uniformly, N (1 - (1 - 1/N)^k); under group-limited routing
// (moe.router_groups G, router_group_topk G') drawn uniformly from the G' groups the router keeps,
// so a token reaches the nodes of those groups only (DeepSeek-V3's node-limited routing).
double distinct_nodes(const core::MoeSpec& moe, int nodes);

// Per layer, per micro-batch. Times are for the layer's collectives one after another.
struct LayerComm {
  double tp_bytes_forward = 0, tp_bytes_backward = 0;  // sent by one GPU (backward incl. recompute)
  double tp_forward_s = 0, tp_backward_s = 0;
  // of those, what stays serial where TP overlaps the GEMMs (comm.cpp tp_exposure; under SP, read by the plan
  // only where tp_overlaps)
  double tp_serial_forward_s = 0, tp_serial_backward_s = 0;
  double cp_bytes_forward = 0, cp_bytes_backward = 0;
  double cp_forward_s = 0, cp_backward_s = 0;
  double cp_forward_window_s = 0, cp_backward_window_s = 0;  // the part that hides (cp_exchange)
  double ep_bytes_forward = 0, ep_bytes_backward = 0;
  double ep_forward_s = 0, ep_backward_s = 0;
};
// `ops`, the layer's operators (operators.hpp), give the GEMMs overlapped TP hides behind
// (comm.cpp tp_exposure); without them only the collectives no GEMM is next to count as serial.
LayerComm layer_comm(const core::Scenario& s, const StepGroups& groups, bool moe_layer,
                     const LayerOps* ops = nullptr);
// The same, resolving the groups (tests).
LayerComm layer_comm(const core::Scenario& s, bool moe_layer, const LayerOps* ops = nullptr);

// The activation tensor a pipeline boundary passes per micro-batch, one direction, bytes:
// s/c * b * h * 2, divided by t (sequence parallel, or Megatron's scatter/gather of p2p tensors).
double p2p_bytes(const core::Scenario& s);

// Whether TP collectives overlap the GEMMs: `training.overlap.tp` asks for it, and it holds only
// when the TP group stays inside a node. Megatron's TP comm overlap (TransformerEngine userbuffers)
// splits each GEMM into chunks whose exchanges go peer to peer over NVLink; across nodes the
// collectives are NCCL's, between dependent GEMMs, and stay serial.
bool tp_overlaps(const core::Scenario& s, const Group& tp);

// Whether EP's dispatch and combine run beside another micro-batch's compute: `training.overlap.ep`
// asks for it, and it holds only where Megatron-Core runs it (transformer_config.py's checks for
// overlap_moe_expert_parallel_comm): MoE layers with ep > 1, the alltoall or flex dispatcher, no
// full recomputation, and interleaving (vpp > 1) when there is a pipeline.
bool ep_overlaps(const core::Scenario& s);

// Bytes one GPU sends in a collective of `bytes` per rank: bus_factor * bytes.
double bytes_sent(core::Collective op, double bytes, int ranks);

}  // namespace ptdsim::analytic
