#include <catch2/catch.hpp>

#include "ptdsim/core/gpu_name.hpp"

using ptdsim::core::gpu_part;
using ptdsim::core::same_gpu_part;

TEST_CASE("core: GPU names reduce to their part", "[core][gpu]") {
  // CUDA device names as nccl-tests prints them, and the shipped hardware files' names
  CHECK(gpu_part("NVIDIA H100 80GB HBM3") == "H100");
  CHECK(gpu_part("H100-SXM5-80GB") == "H100");
  CHECK(gpu_part("NVIDIA A100-SXM4-40GB") == "A100");
  CHECK(gpu_part("GB200-Blackwell-186GB") == "GB200");
  CHECK(gpu_part("NVIDIA GeForce RTX 2080 Ti") == "2080 TI");
  CHECK(gpu_part("NVIDIA H100 PCIe") == "H100 PCIE");
  CHECK(gpu_part("NVIDIA L40S") == "L40S");
  CHECK(gpu_part("Tesla V100-SXM2-32GB") == "V100");
  CHECK(gpu_part("Mystery Accelerator") == "MYSTERY ACCELERATOR");
}

TEST_CASE("core: the same part under different spellings, and different parts", "[core][gpu]") {
  CHECK(same_gpu_part("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"));
  CHECK(same_gpu_part("NVIDIA A100-SXM4-40GB", "A100-SXM4-80GB"));  // memory size is not the part
  CHECK(same_gpu_part("NVIDIA GB200", "GB200-Blackwell-186GB"));
  CHECK_FALSE(same_gpu_part("NVIDIA A100-SXM4-40GB", "H100-SXM5-80GB"));
  CHECK_FALSE(same_gpu_part("NVIDIA H100 PCIe", "H100-SXM5-80GB"));  // PCIe card: no NVLink switch
  CHECK_FALSE(same_gpu_part("NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce RTX 2080"));
  CHECK_FALSE(same_gpu_part("", "H100-SXM5-80GB"));
}
