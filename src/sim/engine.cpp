#include "ptdsim/sim/engine.hpp"

#include <stdexcept>

#include "ptdsim/core/names.hpp"

namespace ptdsim::sim {

std::string_view name(StreamKind k) {
  switch (k) {
    case StreamKind::compute: return "compute";
    case StreamKind::tp: return "tp";
    case StreamKind::cp: return "cp";
    case StreamKind::ep: return "ep";
    case StreamKind::dp: return "dp";
    case StreamKind::dp_gather: return "dp-gather";
    case StreamKind::pp_send: return "pp-send";
  }
  return "?";
}

std::string_view name(TaskKind k) {
  if (!is_compute(k)) return core::name(comm_kind(k));
  switch (k) {
    case TaskKind::forward: return "F";
    case TaskKind::backward: return "B";
    case TaskKind::backward_input: return "B(input)";
    case TaskKind::backward_weight: return "W";
    case TaskKind::optimizer: return "optimizer";
    case TaskKind::offload: return "CPU offload";
  }
  return "?";
}

Engine::Engine(int ranks) : Kernel(ranks, kStreamKinds, static_cast<int>(StreamKind::compute)) {}

void Engine::reset(int ranks) {
  Kernel::reset(ranks);
  specs_.clear();
  microbatch_.clear();
}

void Engine::reserve(std::size_t tasks, std::size_t edges) {
  Kernel::reserve(tasks, edges);
  microbatch_.reserve(tasks);
}

std::int32_t Engine::add_spec(const TaskSpec& spec) {
  Job j;
  j.device = spec.rank;
  j.stream = static_cast<int>(spec.stream);
  j.duration = spec.duration_s;
  j.work = spec.work;
  j.resource = spec.link;
  j.contends = is_collective(spec.stream, spec.kind);
  const std::int32_t index = add_job(j);
  specs_.push_back(spec);
  return index;
}

}  // namespace ptdsim::sim
