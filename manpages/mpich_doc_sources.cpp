#include "mpich_doc_sources.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace {

// The .c files of every "VARIABLE +=" assignment (with backslash continuations) in a
// makefile fragment; `prefix` is prepended (ROMIO's paths are relative to its own tree).
void collect_sources(const fs::path& makefile, const std::string& variable,
                     const std::string& prefix, std::vector<std::string>& files)
{
    std::ifstream in(makefile);
    std::string line;
    bool in_assignment = false;
    while (std::getline(in, line)) {
        std::string words = line;
        if (!in_assignment) {
            std::istringstream first(line);
            std::string name, op;
            first >> name >> op;
            if (name != variable || (op != "+=" && op != "="))
                continue;
            words = line.substr(line.find(op) + op.size());
        }
        in_assignment = !line.empty() && line.back() == '\\';
        std::istringstream ws(words);
        std::string word;
        while (ws >> word) {
            if (word.size() > 2 && word.compare(word.size() - 2, 2, ".c") == 0)
                files.push_back(prefix + word);
        }
    }
}

}  // namespace

std::vector<std::string> mpich_doc_source_files(const std::string& tree)
{
    const fs::path root(tree);
    if (!fs::is_directory(root / "src"))
        throw std::runtime_error(tree + " is not an MPICH tree (no src/)");
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(root / "src")) {
        if (entry.path().filename() != "Makefile.mk")
            continue;
        std::string relative = fs::relative(entry.path(), root).generic_string();
        if (relative.rfind("src/mpi/romio/", 0) == 0)
            collect_sources(entry.path(), "romio_mpi_sources", "src/mpi/romio/", files);
        else
            collect_sources(entry.path(), "mpi_sources", "", files);
    }
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    files.erase(std::remove_if(files.begin(), files.end(),
                               [&](const std::string& f) { return !fs::is_regular_file(root / f); }),
                files.end());
    return files;
}

std::string mpich_docnotes_file(const std::string& tree)
{
    return (fs::path(tree) / "maint" / "docnotes").string();
}
