// "Did you mean ...?" for unknown option, field and format names, ranked by Damerau-Levenshtein
// (optimal string alignment) distance over Unicode code points. Shared by every component.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace luminamoon::data {

// Optimal-string-alignment distance between two UTF-8 strings, counted in code points
// (an adjacent transposition costs 1). Invalid UTF-8 bytes count as one code point each.
std::size_t damerau_levenshtein(std::string_view a, std::string_view b);

// The candidate closest to `name`, ties broken by candidate order; nullopt when the best distance
// exceeds max(2, code_points(name) / 3), i.e. when a suggestion would be noise.
std::optional<std::string> did_you_mean(std::string_view name,
                                        std::span<const std::string_view> candidates);

// Throws ConfigError "<owner>: unknown option '<name>'; did you mean '<best>'?" (or, with no close
// candidate, "...; valid options: a, b, c") unless `name` is one of `known`.
void reject_unknown_option(std::string_view owner, std::string_view name,
                           std::span<const std::string_view> known);

}  // namespace luminamoon::data
