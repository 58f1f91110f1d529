// mpich-manpages: MPICH's man pages without sowing's doctext (which Debian does not package).
// See usage() and maint/make-manpages, which runs it; manpages/Makefile.am builds it.
#include "cvar_page.h"
#include "doc_comment_pages.h"
#include "man_date.h"
#include "mpich_doc_sources.h"
#include "changed_pages.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const char* usage_text =
    "usage:\n"
    "  mpich-manpages pages [--date D] [--docnotes FILE] --outdir DIR SOURCE.c...\n"
    "      every /*@ comment of the files as DIR/NAME.3 (doctext -man -quotefmt -nolocation)\n"
    "  mpich-manpages page [--date D] [--docnotes FILE] NAME SOURCE.c...\n"
    "      the page of NAME on standard output\n"
    "  mpich-manpages tree [--date D] [--include NAME]... --pristine PRISTINE_TREE TREE OUTDIR\n"
    "      OUTDIR/man3: the pages of TREE's functions whose page is new or differs from\n"
    "      PRISTINE_TREE's, and those --include names (NAME or PREFIX*);\n"
    "      OUTDIR/man7/" CVAR_PAGE_NAME ".7: the control variables TREE adds or changes;\n"
    "      OUTDIR/pages.list: what was written and why\n"
    "  mpich-manpages cvar-page [--date D] --pristine PRISTINE_TREE TREE\n"
    "      the page of the control variables TREE adds or changes, on standard output\n"
    "  mpich-manpages compare [--date D] TREE\n"
    "      every page TREE's comments make against TREE/man/man3 (the .TH lines aside);\n"
    "      prints how many are identical and the differing ones; exit status 1 if any differs\n"
    "D: M/D/YYYY or YYYY-MM-DD; default: SOURCE_DATE_EPOCH (one of them is required)\n"
    "--doctext-apostrophes: read an apostrophe within a word (MPICH's) as a quote, as doctext\n"
    "      does (by default it stays an apostrophe; a warning names it either way)\n";

[[noreturn]] void usage_error(const std::string& what)
{
    std::cerr << "mpich-manpages: " << what << "\n" << usage_text;
    std::exit(2);
}

struct Arguments {
    std::string mode;
    std::string date;
    std::string docnotes;
    std::string outdir;
    std::string pristine;
    bool doctext_apostrophes = false;
    std::vector<std::string> include;
    std::vector<std::string> positional;
};

Arguments parse_arguments(int argc, char** argv)
{
    if (argc < 2)
        usage_error("no mode given");
    Arguments args;
    args.mode = argv[1];
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--date") {
            auto date = doctext_date_from_text(value());
            if (!date)
                usage_error("--date: give M/D/YYYY or YYYY-MM-DD");
            args.date = *date;
        } else if (a == "--docnotes") {
            args.docnotes = value();
        } else if (a == "--outdir") {
            args.outdir = value();
        } else if (a == "--pristine") {
            args.pristine = value();
        } else if (a == "--include") {
            args.include.push_back(value());
        } else if (a == "--doctext-apostrophes") {
            args.doctext_apostrophes = true;
        } else if (a.rfind("--", 0) == 0) {
            usage_error("unknown option " + a);
        } else {
            args.positional.push_back(a);
        }
    }
    if (args.date.empty()) {
        auto date = doctext_date_from_source_date_epoch();
        if (!date)
            usage_error("no date: give --date or set SOURCE_DATE_EPOCH");
        args.date = *date;
    }
    return args;
}

void write_file(const fs::path& path, const std::string& text)
{
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out)
        throw std::runtime_error("cannot write " + path.string());
}

void report(const std::vector<std::string>& warnings)
{
    for (const auto& w : warnings)
        std::cerr << "mpich-manpages: warning: " << w << "\n";
}

DoctextOptions doctext_options(const Arguments& args)
{
    DoctextOptions options;
    options.date = args.date;
    options.keep_apostrophes = !args.doctext_apostrophes;
    return options;
}

std::vector<ManPage> pages_of_files(const Arguments& args, const std::vector<std::string>& files,
                                    std::vector<std::string>& warnings)
{
    DoctextOptions options = doctext_options(args);
    NamedBlocks blocks;
    if (!args.docnotes.empty())
        pages_of_source_file(args.docnotes, blocks, options, warnings);
    std::vector<ManPage> pages;
    for (const auto& f : files) {
        // doctext runs once per source file, with docnotes first: a file sees only its own
        // named blocks and docnotes'.
        NamedBlocks file_blocks = blocks;
        for (auto& p : pages_of_source_file(f, file_blocks, options, warnings)) {
            warnings.insert(warnings.end(), p.warnings.begin(), p.warnings.end());
            pages.push_back(std::move(p));
        }
    }
    return pages;
}

int run_pages(const Arguments& args)
{
    if (args.outdir.empty() || args.positional.empty())
        usage_error("pages needs --outdir and source files");
    std::vector<std::string> warnings;
    auto pages = pages_of_files(args, args.positional, warnings);
    for (const auto& p : pages)
        write_file(fs::path(args.outdir) / (p.name + "." + p.man_section), p.troff);
    report(warnings);
    return 0;
}

int run_page(const Arguments& args)
{
    if (args.positional.size() < 2)
        usage_error("page needs a name and source files");
    std::vector<std::string> files(args.positional.begin() + 1, args.positional.end());
    std::vector<std::string> warnings;
    auto pages = pages_of_files(args, files, warnings);
    report(warnings);
    for (const auto& p : pages) {
        if (p.name == args.positional[0]) {
            std::cout << p.troff;
            return 0;
        }
    }
    std::cerr << "mpich-manpages: no page " << args.positional[0] << " in those files\n";
    return 1;
}

int run_tree(const Arguments& args)
{
    if (args.pristine.empty() || args.positional.size() != 2)
        usage_error("tree needs --pristine PRISTINE_TREE, TREE and OUTDIR");
    const std::string& tree = args.positional[0];
    const fs::path outdir = args.positional[1];
    std::vector<std::string> warnings;
    std::vector<std::string> listing;

    for (const auto& c : changed_function_pages(args.pristine, tree, doctext_options(args), args.include, warnings)) {
        write_file(outdir / "man3" / (c.page.name + ".3"), c.page.troff);
        listing.push_back("man3/" + c.page.name + ".3\t" + c.why + "\t" + c.page.source_file);
    }
    auto cvars = compare_cvars(args.pristine, tree, warnings);
    if (!cvars.changes.empty()) {
        write_file(outdir / "man7" / (std::string(CVAR_PAGE_NAME) + ".7"),
                   cvar_man_page(cvars, args.date));
        for (const auto& c : cvars.changes)
            listing.push_back("man7/" CVAR_PAGE_NAME ".7\t" + c.why + "\t" + c.cvar.name);
    }
    std::string list_text;
    for (const auto& l : listing)
        list_text += l + "\n";
    write_file(outdir / "pages.list", list_text);
    report(warnings);
    std::cout << list_text;
    return 0;
}

int run_cvar_page(const Arguments& args)
{
    if (args.pristine.empty() || args.positional.size() != 1)
        usage_error("cvar-page needs --pristine PRISTINE_TREE and TREE");
    std::vector<std::string> warnings;
    auto cvars = compare_cvars(args.pristine, args.positional[0], warnings);
    report(warnings);
    std::cout << cvar_man_page(cvars, args.date);
    return 0;
}

std::string read_text_file(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

int run_compare(const Arguments& args)
{
    if (args.positional.size() != 1)
        usage_error("compare needs TREE");
    const fs::path man3 = fs::path(args.positional[0]) / "man" / "man3";
    std::vector<std::string> warnings;
    std::map<std::string, ManPage> pages;
    for (auto& p : function_pages_of_tree(args.positional[0], doctext_options(args), warnings))
        pages[p.name] = std::move(p);
    int identical = 0, differing = 0, shipped_only = 0;
    std::vector<std::string> lines;
    std::vector<fs::path> shipped;
    for (const auto& e : fs::directory_iterator(man3))
        shipped.push_back(e.path());
    std::sort(shipped.begin(), shipped.end());
    for (const auto& path : shipped) {
        if (path.extension() != ".3")
            continue;
        auto it = pages.find(path.stem().string());
        if (it == pages.end()) {
            ++shipped_only;
            lines.push_back("not made by a doc comment: " + path.filename().string());
            continue;
        }
        if (page_without_title_line(read_text_file(path)) ==
            page_without_title_line(it->second.troff)) {
            ++identical;
        } else {
            ++differing;
            lines.push_back("DIFFERS: " + path.filename().string() + " (" +
                            it->second.source_file + ")");
        }
    }
    for (const auto& l : lines)
        std::cout << l << "\n";
    std::cout << identical << " of " << (identical + differing)
              << " pages made from doc comments are identical to " << man3.string()
              << "'s (the .TH line aside), " << differing << " differ; " << shipped_only
              << " shipped page(s) come from elsewhere\n";
    return differing ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        Arguments args = parse_arguments(argc, argv);
        if (args.mode == "pages")
            return run_pages(args);
        if (args.mode == "page")
            return run_page(args);
        if (args.mode == "tree")
            return run_tree(args);
        if (args.mode == "cvar-page")
            return run_cvar_page(args);
        if (args.mode == "compare")
            return run_compare(args);
        usage_error("unknown mode " + args.mode);
    } catch (const std::exception& e) {
        std::cerr << "mpich-manpages: " << e.what() << "\n";
        return 1;
    }
}
