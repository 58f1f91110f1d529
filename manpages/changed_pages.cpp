#include "changed_pages.h"

#include "mpich_doc_sources.h"

#include <algorithm>
#include <filesystem>
#include <map>

namespace fs = std::filesystem;

std::vector<ManPage> function_pages_of_tree(const std::string& tree, const DoctextOptions& options,
                                            std::vector<std::string>& warnings)
{
    NamedBlocks docnotes;
    std::vector<std::string> docnotes_warnings;
    pages_of_source_file(mpich_docnotes_file(tree), docnotes, options, docnotes_warnings);
    warnings.insert(warnings.end(), docnotes_warnings.begin(), docnotes_warnings.end());

    std::vector<ManPage> pages;
    for (const auto& relative : mpich_doc_source_files(tree)) {
        NamedBlocks blocks = docnotes;  // one doctext run per file
        std::vector<std::string> file_warnings;
        auto file_pages = pages_of_source_file((fs::path(tree) / relative).string(), blocks,
                                               options, file_warnings);
        for (auto& p : file_pages) {
            p.source_file = relative;
            pages.push_back(std::move(p));
        }
        warnings.insert(warnings.end(), file_warnings.begin(), file_warnings.end());
    }
    return pages;
}

std::string page_without_title_line(const std::string& troff)
{
    if (troff.rfind(".TH ", 0) != 0)
        return troff;
    auto eol = troff.find('\n');
    return eol == std::string::npos ? std::string() : troff.substr(eol + 1);
}

std::vector<ChangedPage> changed_function_pages(const std::string& pristine, const std::string& tree,
                                                const DoctextOptions& options,
                                                const std::vector<std::string>& requested,
                                                std::vector<std::string>& warnings)
{
    auto is_requested = [&](const std::string& name) {
        for (const auto& r : requested) {
            if (!r.empty() && r.back() == '*' ? name.rfind(r.substr(0, r.size() - 1), 0) == 0
                                              : name == r)
                return true;
        }
        return false;
    };
    std::vector<std::string> ignored;
    std::map<std::string, std::string> stock;
    for (const auto& p : function_pages_of_tree(pristine, options, ignored))
        stock[p.name] = page_without_title_line(p.troff);

    std::vector<std::string> tree_warnings;
    std::map<std::string, ManPage> pages;  // by name: a later file's page replaces (doctext)
    for (auto& p : function_pages_of_tree(tree, options, tree_warnings))
        pages[p.name] = std::move(p);

    std::vector<ChangedPage> changed;
    for (auto& [name, page] : pages) {
        auto it = stock.find(name);
        const char* why = it == stock.end()                                          ? "new"
                          : it->second != page_without_title_line(page.troff) ? "changed"
                          : is_requested(name)                                ? "requested"
                                                                              : nullptr;
        if (!why)
            continue;
        for (const auto& w : page.warnings)
            warnings.push_back(w);
        changed.push_back({page, why});
    }
    return changed;
}
