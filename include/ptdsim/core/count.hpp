#pragma once
#include <optional>
#include <string_view>

// Large counts as people write them: "15T", "2.5B", "300e9", "4096". One parser for the YAML's
// training.tokens and the command line's --tokens, so both accept the same spellings.
namespace ptdsim::core {

// A finite, non-negative number, optionally followed by one suffix: K (1e3), M (1e6), B or G (1e9),
// T (1e12), upper or lower case. nullopt for anything else ("15 T", "1e3T", "-5", "inf", "").
std::optional<double> parse_count(std::string_view text);

}  // namespace ptdsim::core
