// The LUMINAMOON_SIMD rule as a pure function, so tests can drive it without setenv races:
// active_isa() calls it once with the environment value and the probed supported list.
#pragma once

#include <span>
#include <string_view>

#include "luminamoon/data/common/cpu_isa.h"

namespace luminamoon::data::internal {

// The ISA to use given the value of LUMINAMOON_SIMD (`forced`; empty = unset = automatic) and the
// ISAs this CPU and build support (scalar first, best last, as supported_isas() returns them).
// Empty -> supported.back(). A known name in `supported` -> that ISA. Throws ConfigError for an
// unknown name ("did you mean ...?" when one is close; names are matched exactly, lowercase) and
// for a known name this CPU or build cannot run (the message lists the supported ones).
Isa resolve_isa(std::string_view forced, std::span<const Isa> supported);

}  // namespace luminamoon::data::internal
