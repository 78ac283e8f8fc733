#pragma once
#include <string>
#include <vector>

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
  // Gradient bucket of data-parallel reduction, in parameters (elements); 0: Megatron's rule,
  // max(40M, 1M * dp). DeepSpeed's reduce_bucket_size is 5e8. Read by ZeRO-3's memory (DeepSpeed's
  // contiguous reduce bucket); the ZeRO-0/1/2 bucket count follows Megatron's rule.
  double dp_bucket_params = 0;
  // The framework whose documented defaults filled the keys the scenario left unset
  // (core/framework.hpp), "" for none, and those keys' dotted paths in file order.
  std::string framework;
  std::vector<std::string> from_framework;
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
