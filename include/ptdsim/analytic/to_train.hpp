#pragma once
#include "ptdsim/core/report.hpp"
#include "ptdsim/core/scenario.hpp"

// The whole run at the step's pace: days, GPU-hours, GPU energy and cost (docs/analytic.md "Time,
// energy and cost to train"). Pure functions of the scenario and the step an engine simulated.
namespace ptdsim::analytic {

// One GPU's mean power over a step, watts: the linear power model of Fan, Weber and Barroso (ISCA
// 2007), P = P_idle + (P_max - P_idle) * u, with u the fraction of the step the GPU runs kernels
// (busy_s / step_s) and P_max the board's TDP. 0 when the hardware gives no tdp_w or idle_w.
double gpu_power_w(const core::GpuSpec& gpu, double step_s, double busy_s);

// Steps, time, GPU-hours, energy and cost to train on s.training.tokens; all zero without tokens.
core::ToTrain to_train(const core::Scenario& s, double step_s, double busy_s);

}  // namespace ptdsim::analytic
