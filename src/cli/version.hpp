#pragma once
namespace ptdsim::cli {
inline constexpr const char* kVersion = "0.1.0";
}
