// Man pages from the structured comments of a C source file, as sowing's
//   doctext -man -ext 3 -heading MPI -quotefmt -nolocation maint/docnotes FILE
// writes them (MPICH's "make mandoc"): each "/*@ NAME - description ... @*/" comment becomes
// NAME.3, with the C prototype that follows the comment as its SYNOPSIS; "/*N name ... N*/"
// blocks (maint/docnotes) are the text '.N name' includes.
#pragma once

#include "named_blocks.h"

#include <string>
#include <vector>

struct ManPage {
    std::string name;         // NAME, the file is NAME.<section>
    std::string man_section;  // "3"
    std::string troff;        // the page
    std::string source_file;  // where its comment is
    std::vector<std::string> warnings;  // what doctext would complain of, and what we do
};

struct DoctextOptions {
    std::string date;  // the .TH date, M/D/YYYY as doctext writes it
    std::string man_section = "3";
    std::string heading = "MPI";
    // An apostrophe between letters outside a quote stays an apostrophe (troff_output.h);
    // false: exactly as doctext (which opens a quote there).
    bool keep_apostrophes = true;
};

// Reads the structured comments of one file in order: named blocks are added to `blocks`
// (later files see them, as doctext's list of files does), routine comments become pages.
// Comments we do not turn into pages go to `warnings`; a page's own problems to its warnings.
std::vector<ManPage> pages_of_source_file(const std::string& path, NamedBlocks& blocks,
                                          const DoctextOptions& options,
                                          std::vector<std::string>& warnings);

// The same on text already in memory (for tests); `label` names it in warnings.
std::vector<ManPage> pages_of_source_text(const std::string& text, const std::string& label,
                                          NamedBlocks& blocks, const DoctextOptions& options,
                                          std::vector<std::string>& warnings);
