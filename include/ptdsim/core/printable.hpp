#pragma once
#include <string>
#include <string_view>

namespace ptdsim::core {

// Text as it may reach a terminal or a YAML comment: control characters (ESC, BEL, CR, DEL, ...) as
// \xNN, so that a name, a flag or a source line quoted from the input cannot retitle or drive the
// terminal it is printed on. `keep_breaks` keeps line breaks and tabs (an error's source line and
// caret span lines); without it they are shown too (a name is one line).
std::string printable(std::string_view text, bool keep_breaks = false);

}  // namespace ptdsim::core
