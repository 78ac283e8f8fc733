#pragma once
// SI inside the code: seconds, bytes, FLOP, bytes/s, FLOP/s. The YAML's _gbs, _tflops, _gib and _us
// keys are converted once, at the io edge, with these constants.
namespace ptdsim::core {
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // bytes
inline constexpr double kGB = 1e9;                         // bytes (bandwidths are decimal)
inline constexpr double kTera = 1e12;                      // FLOP/s per TFLOP/s
inline constexpr double kMicro = 1e-6;                     // seconds per microsecond
}  // namespace ptdsim::core
