#include "cvar_page.h"

#include <regex>
#include <sstream>
#include <vector>

namespace {

// A line of text safe in troff: '\' written as \e, no control character at its start.
std::string troff_text(const std::string& line)
{
    std::string out;
    for (char c : line) {
        if (c == '\\')
            out += "\\e";
        else
            out += c;
    }
    if (!out.empty() && (out[0] == '.' || out[0] == '\''))
        out = "\\&" + out;
    return out;
}

int indentation(const std::string& line)
{
    auto n = line.find_first_not_of(' ');
    return n == std::string::npos ? 0 : static_cast<int>(n);
}

bool blank(const std::string& line)
{
    return line.find_first_not_of(" \t") == std::string::npos;
}

std::string trimmed(const std::string& line)
{
    auto b = line.find_first_not_of(" \t");
    auto e = line.find_last_not_of(" \t");
    return b == std::string::npos ? "" : line.substr(b, e - b + 1);
}

std::string default_text(const ControlVariable& v)
{
    std::string d = v.field("default");
    return d.empty() ? "(empty)" : d;
}

}  // namespace

std::string description_as_troff(const std::string& description)
{
    std::vector<std::string> lines;
    std::istringstream in(description);
    for (std::string l; std::getline(in, l);)
        lines.push_back(l);

    static const std::regex item(R"(^(\S+)\s+-\s+(.*)$)");
    std::string out = ".PP\n";
    bool in_items = false;  // the last lines were a tagged paragraph
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        if (blank(line)) {
            out += ".PP\n";
            in_items = false;
            continue;
        }
        std::smatch m;
        bool continued = i + 1 < lines.size() && !blank(lines[i + 1]) &&
                         indentation(lines[i + 1]) > indentation(line);
        if (std::regex_match(line, m, item) && (continued || in_items)) {
            out += ".TP\n.B " + troff_text(m[1]) + "\n" + troff_text(m[2]) + "\n";
            in_items = true;
            continue;
        }
        if (in_items && indentation(line) == 0) {
            out += ".PP\n";
            in_items = false;
        }
        out += troff_text(trimmed(line)) + "\n";
    }
    return out;
}

std::string cvar_man_page(const CvarComparison& cvars, const std::string& date)
{
    std::string page;
    page += ".TH " CVAR_PAGE_NAME " 7 \"" + date + "\" \" \" \"MPI\"\n";
    page += ".SH NAME\n" CVAR_PAGE_NAME
            " \\- MPI_T control variables added or changed by the MPICH request engine patches\n";
    page += ".SH DESCRIPTION\n"
            "This MPICH is version 4.0.2 with the request engine patch series\n"
            "(MPI_Request_get_status_all, _any and _some, generalized request classes,\n"
            "communicator assertions and MPI_T events).\n"
            "The series adds the control variables below and changes some of MPICH's own.\n"
            ".PP\n"
            "A control variable is set in the environment under any of the names listed\n"
            "for it (the value of an enum variable by its name), and a tool reads or writes\n"
            "it through the MPI_T interface under its MPIR_CVAR_ name (see\n"
            ".BR MPI_T_cvar_get_index (3),\n"
            ".BR MPI_T_cvar_read (3)\n"
            "and\n"
            ".BR MPI_T_cvar_write (3)).\n"
            "A boolean takes 1 or 0, yes or no, true or false, on or off.\n"
            "MPICH's README.envvar, in its sources, lists all of MPICH's control variables.\n"
            "This page is generated from the variables' definitions in the MPICH sources.\n";

    auto entry = [&](const CvarChange& c) {
        const ControlVariable& v = c.cvar;
        std::string e = ".SS " + v.name + "\n.nf\n";
        e += "Category:     " + troff_text(v.field("category")) + "\n";
        e += "Type:         " + troff_text(v.field("type")) + "\n";
        e += "Default:      " + troff_text(default_text(v)) + "\n";
        e += "Scope:        " + troff_text(v.field("scope")) + "\n";
        e += "Verbosity:    " + troff_text(v.field("verbosity")) + "\n";
        auto names = v.environment_names();
        for (std::size_t i = 0; i < names.size(); ++i)
            e += std::string(i ? "              " : "Environment:  ") + troff_text(names[i]) + "\n";
        if (c.why != "new")
            e += "Changed:      " + troff_text(c.why.substr(c.why.find(':') + 2)) + "\n";
        e += ".fi\n";
        e += description_as_troff(v.field("description"));
        return e;
    };

    std::string added, changed;
    for (const auto& c : cvars.changes)
        (c.why == "new" ? added : changed) += entry(c);
    if (!added.empty())
        page += ".SH NEW CONTROL VARIABLES\n" + added;
    if (!changed.empty())
        page += ".SH CHANGED CONTROL VARIABLES\n"
                "These are MPICH's own; the patches changed what the line \"Changed\" names.\n" +
                changed;
    if (!cvars.categories.empty()) {
        page += ".SH CATEGORIES\n";
        for (const auto& cat : cvars.categories) {
            bool is_new = false;
            for (const auto& n : cvars.new_categories)
                is_new |= (n == cat.name);
            page += ".TP\n.B " + troff_text(cat.name) + "\n" + troff_text(trimmed(cat.description)) +
                    (is_new ? " (added by the patches)" : "") + "\n";
        }
    }
    page += ".SH SEE ALSO\n"
            ".BR MPI_T_cvar_get_info (3),\n"
            ".BR MPI_T_cvar_read (3),\n"
            ".BR MPI_T_cvar_write (3),\n"
            ".BR MPI_Request_get_status_any (3),\n"
            ".BR MPIX_Grequest_class_create (3)\n";
    return page;
}
