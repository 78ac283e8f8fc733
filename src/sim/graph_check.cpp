#include "ptdsim/sim/graph_check.hpp"

#include <algorithm>
#include <cstdint>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/topological_sort.hpp>
#include <iterator>
#include <stdexcept>

namespace ptdsim::sim {
namespace {

// A compressed-sparse-row graph: two flat arrays, no allocation per vertex (an adjacency_list
// with vecS would allocate one vector per task; a step of a 1T-parameter model has ~10^5).
using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property,
                                                 boost::no_property, boost::no_property,
                                                 std::uint32_t, std::uint32_t>;

Graph make_graph(const Engine& engine) {
  std::vector<std::pair<TaskId, TaskId>> edges;
  engine.all_edges(edges);
  std::sort(edges.begin(), edges.end());
  return Graph(boost::edges_are_sorted, edges.begin(), edges.end(), engine.size());
}

// Topological order, or empty when there is a cycle.
std::vector<std::uint32_t> order_of(const Graph& g) {
  std::vector<std::uint32_t> reversed;
  reversed.reserve(boost::num_vertices(g));
  try {
    boost::topological_sort(g, std::back_inserter(reversed));
  } catch (const boost::not_a_dag&) {
    return {};
  }
  std::reverse(reversed.begin(), reversed.end());
  return reversed;
}

}  // namespace

bool is_acyclic(const Engine& engine) {
  if (engine.size() == 0) return true;
  return !order_of(make_graph(engine)).empty();
}

double static_critical_path_s(const Engine& engine, std::vector<TaskId>* path) {
  if (engine.size() == 0) return 0;
  const Graph g = make_graph(engine);
  const auto order = order_of(g);
  if (order.empty()) throw std::logic_error("sim: the task graph has a cycle");
  const std::size_t n = engine.size();
  std::vector<double> finish(n, 0.0), start(n, 0.0);
  std::vector<TaskId> pred(n, -1);
  for (std::uint32_t v : order) {
    finish[v] = start[v] + engine.alone_s(static_cast<TaskId>(v));
    auto [e, end] = boost::out_edges(v, g);
    for (; e != end; ++e) {
      const std::uint32_t w = boost::target(*e, g);
      if (finish[v] >= start[w]) {
        start[w] = finish[v];
        pred[w] = static_cast<TaskId>(v);
      }
    }
  }
  std::size_t last = 0;
  for (std::size_t v = 1; v < n; ++v)
    if (finish[v] >= finish[last]) last = v;
  if (path) {
    path->clear();
    for (TaskId t = static_cast<TaskId>(last); t >= 0; t = pred[t]) path->push_back(t);
    std::reverse(path->begin(), path->end());
  }
  return finish[last];
}

}  // namespace ptdsim::sim
