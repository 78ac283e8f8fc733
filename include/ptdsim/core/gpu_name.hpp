#pragma once
#include <string>
#include <string_view>

// Telling whether two GPU names denote the same part. Vendors and tools spell one part many ways:
// nccl-tests prints the CUDA device name ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB"), the
// shipped hardware files use their own ("H100-SXM5-80GB"). A name is reduced to its model number
// (A100, H100, GB200, L40S, 2080, ...) and the variants that change the interconnect or the die: a
// PCIe card against an SXM module, a "Ti". Memory size and form-factor generation are left out:
// they do not change how collectives or GEMMs run.
namespace ptdsim::core {

// The model number of a GPU name in upper case ("H100"), with " PCIE" and " TI" appended when the
// name says so; the whole name in upper case when no model number is found.
std::string gpu_part(std::string_view name);

// Whether `a` and `b` name the same part (gpu_part equal). Empty names match nothing.
bool same_gpu_part(std::string_view a, std::string_view b);

}  // namespace ptdsim::core
