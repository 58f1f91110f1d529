// The date of the .TH line. doctext writes M/D/YYYY (no leading zeros); a build gives it on
// the command line or in SOURCE_DATE_EPOCH (https://reproducible-builds.org/specs/source-date-epoch/),
// never the clock, so the pages are reproducible.
#pragma once

#include <optional>
#include <string>

// "M/D/YYYY" or "YYYY-MM-DD" -> "M/D/YYYY"; nullopt if it is neither.
std::optional<std::string> doctext_date_from_text(const std::string& text);
// SOURCE_DATE_EPOCH (seconds since 1970, UTC) -> "M/D/YYYY"; nullopt if unset or invalid.
std::optional<std::string> doctext_date_from_source_date_epoch();
