#include <catch2/catch.hpp>

#include "ptdsim/analytic/compute.hpp"
#include "ptdsim/analytic/plan.hpp"
#include "ptdsim/core/units.hpp"
#include "ptdsim/sim/simulate.hpp"
#include "../common/scenarios.hpp"

// A calibrated hardware file changes evaluate's answer as it says it should: collective times follow
// the fitted alpha-beta rows, GEMM times the fitted efficiency table (calibration issue, item 3).
using namespace ptdsim;
using testing::gpt3_1024;

namespace {

// Calibrated rows for the data-parallel collectives of ZeRO-1 across nodes, latency-free so the
// time is exactly bytes * (n-1)/n / busbw.
void calibrate_dp(core::Scenario& s, double busbw_Bps) {
  s.hardware.collectives.clear();
  for (auto op : {core::Collective::reduce_scatter, core::Collective::all_gather, core::Collective::all_reduce}) {
    core::CollectiveFit f;
    f.op = op;
    f.scope = core::Scope::inter;
    f.ranks = 8;
    f.alpha_s = 0;
    f.busbw_Bps = busbw_Bps;
    s.hardware.collectives.push_back(f);
  }
}

}  // namespace

TEST_CASE("sim: a calibrated collectives table sets the DP time and moves the step", "[sim][calibrated]") {
  auto fast = gpt3_1024();  // dp 8 spans 8 nodes (tp 8 fills each node): inter scope
  auto slow = fast;
  calibrate_dp(fast, 20e9);
  calibrate_dp(slow, 5e9);
  const auto cf = analytic::step_work(fast);
  const auto cs = analytic::step_work(slow);
  // stage 1 (a middle stage): reduce-scatter of its fp32 gradients over 8 ranks at 20 GB/s bus bandwidth
  const auto& st = cf.stages[1];
  CHECK(st.dp_reduce_s == Approx(st.grad_bytes * 7.0 / 8.0 / 20e9).epsilon(1e-9));
  // a quarter of the bandwidth, four times the time, for both DP collectives
  CHECK(cs.stages[1].dp_reduce_s == Approx(4 * st.dp_reduce_s).epsilon(1e-9));
  CHECK(cs.stages[1].dp_gather_s == Approx(4 * st.dp_gather_s).epsilon(1e-9));
  const auto rf = sim::simulate(fast);
  const auto rs = sim::simulate(slow);
  CHECK(rs.of(core::CommBucket::dp).time_s == Approx(4 * rf.of(core::CommBucket::dp).time_s).epsilon(1e-6));
  CHECK(rs.of(core::CommBucket::dp).exposed_s > rf.of(core::CommBucket::dp).exposed_s);
  CHECK(rs.step_s > rf.step_s);
}

TEST_CASE("sim: a calibrated GEMM table sets the compute time", "[sim][calibrated]") {
  auto base = gpt3_1024();
  base.hardware.gpu.matmul_efficiency = 0.8;
  auto table = base;
  // one row: every GEMM reaches 40% of peak, half the scalar efficiency
  core::GemmEfficiency row;
  row.precision = core::Precision::bf16;
  row.m = row.n = row.k = 4096;
  row.efficiency = 0.4;
  table.hardware.gpu.matmul_table = {row};
  // the weight GEMMs take exactly twice as long at half the efficiency
  CHECK(analytic::layer_times(table, false).gemm_forward ==
        Approx(2 * analytic::layer_times(base, false).gemm_forward).epsilon(1e-9));
  CHECK(sim::simulate(table).step_s > 1.5 * sim::simulate(base).step_s);
}
