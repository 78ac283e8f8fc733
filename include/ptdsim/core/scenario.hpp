#pragma once
#include <string>

#include "ptdsim/core/hardware.hpp"
#include "ptdsim/core/model.hpp"
#include "ptdsim/core/parallel.hpp"

namespace ptdsim::core {

struct Overlap {
  bool dp = true;
  bool tp = false;
  bool pp = true;
  bool zero3_prefetch = true;
};

enum class Optimizer { adam, sgd };

struct TrainingSpec {
  int seq_len = 2048;
  int micro_batch = 1;
  int global_batch = 1;
  Precision precision = Precision::bf16;
  Recompute recompute = Recompute::selective;
  bool flash_attention = true;
  Optimizer optimizer = Optimizer::adam;
  Overlap overlap;
};

struct Scenario {
  std::string name;
  std::string file;  // where it was loaded from, for messages; "" when built in code
  ModelSpec model;
  HardwareSpec hardware;
  int gpus = 0;
  ParallelSpec parallel;
  TrainingSpec training;

  // m = B / (b * dp): micro-batches per step per pipeline
  int num_microbatches() const {
    return training.global_batch / (training.micro_batch * parallel.dp);
  }
};

}  // namespace ptdsim::core
