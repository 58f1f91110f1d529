// The section 7 page of the control variables the patch series adds or changes, made from
// their CVAR blocks (cvar_blocks.h).
#pragma once

#include "cvar_blocks.h"

#include <string>

#define CVAR_PAGE_NAME "mpich-request-engine-cvars"

std::string cvar_man_page(const CvarComparison& cvars, const std::string& date);

// A block description as troff: paragraphs (split at blank lines) in fill mode, and
// "value - text" lines whose text goes on over more indented lines as tagged paragraphs.
std::string description_as_troff(const std::string& description);
