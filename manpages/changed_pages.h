// The function pages a patched MPICH tree needs beyond the ones its release tarball ships:
// every page the tree's doc comments make that is new, or differs (the .TH date aside) from
// the page the pristine tree's comments make.
#pragma once

#include "doc_comment_pages.h"

#include <string>
#include <vector>

struct ChangedPage {
    ManPage page;
    std::string why;  // "new", "changed" or "requested"
};

// All pages of a tree, by doctext's rules: its mpi_sources with maint/docnotes.
std::vector<ManPage> function_pages_of_tree(const std::string& tree, const DoctextOptions& options,
                                            std::vector<std::string>& warnings);

// Warnings are those of the pages returned (stock pages' are not ours to report). Pages whose
// name matches one of `requested` (a name, or a prefix ending in '*') are returned even when
// unchanged.
std::vector<ChangedPage> changed_function_pages(const std::string& pristine, const std::string& tree,
                                                const DoctextOptions& options,
                                                const std::vector<std::string>& requested,
                                                std::vector<std::string>& warnings);

// The page without its .TH line (which carries the date).
std::string page_without_title_line(const std::string& troff);
