#include "cvar_blocks.h"

#include "text_cursor.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace {

const char* const begin_marker = "BEGIN_MPI_T_CVAR_INFO_BLOCK";
const char* const end_marker = "END_MPI_T_CVAR_INFO_BLOCK";

// maint/cvardirs.in
const char* const cvar_directories[] = {"src/mpi", "src/mpi_t", "src/nameserv", "src/util",
                                        "src/binding", "src/include", "src/mpid", "src/pmi"};

int indentation(const std::string& line)
{
    return static_cast<int>(line.find_first_not_of(' ') == std::string::npos
                                ? line.size()
                                : line.find_first_not_of(' '));
}

bool blank(const std::string& line)
{
    return line.find_first_not_of(" \t") == std::string::npos;
}

std::string trim(const std::string& s)
{
    auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos)
        return "";
    auto e = s.find_last_not_of(" \t");
    return s.substr(b, e - b + 1);
}

// A plain or quoted YAML scalar on one line (after "key :").
std::string scalar(const std::string& raw)
{
    std::string v = trim(raw);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
        std::string out;
        for (std::size_t i = 1; i + 1 < v.size(); ++i) {
            if (v[i] == '\\' && i + 2 < v.size())
                ++i;
            out += v[i];
        }
        return out;
    }
    if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') {
        std::string out;
        for (std::size_t i = 1; i + 1 < v.size(); ++i) {
            if (v[i] == '\'' && v[i + 1] == '\'')
                ++i;
            out += v[i];
        }
        return out;
    }
    auto comment = v.find(" #");
    if (comment != std::string::npos)
        v = trim(v.substr(0, comment));
    return v;
}

// The subset of YAML the CVAR blocks use: top-level keys holding lists of maps, whose values
// are plain or quoted scalars (continued on more indented lines) or block scalars (| |- > >-).
// Block scalars keep their lines (relative indentation included) joined by newlines: the
// man page is filled text either way, and README.envvar re-wraps them too.
class CvarYamlReader {
  public:
    CvarYamlReader(const std::string& yaml, std::vector<std::string>& warnings,
                   const std::string& file)
        : warnings_(warnings), file_(file)
    {
        std::istringstream in(yaml);
        std::string line;
        while (std::getline(in, line)) {
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            lines_.push_back(expand_tabs_like_doctext(line));
        }
    }

    // list name -> maps
    std::map<std::string, std::vector<std::map<std::string, std::string>>> read()
    {
        std::map<std::string, std::vector<std::map<std::string, std::string>>> lists;
        static const std::regex top_key(R"(^([A-Za-z_][\w-]*)\s*:\s*$)");
        static const std::regex item_start(R"(^(\s*)-\s+([\w-]+)\s*:(.*)$)");
        static const std::regex item_key(R"(^(\s*)([\w-]+)\s*:(.*)$)");
        std::string list;
        int key_indent = -1;
        std::size_t i = 0;
        while (i < lines_.size()) {
            const std::string& line = lines_[i];
            std::smatch m;
            if (blank(line) || trim(line)[0] == '#') {
                ++i;
                continue;
            }
            if (std::regex_match(line, m, top_key)) {
                list = m[1];
                lists[list];
                ++i;
                continue;
            }
            if (std::regex_match(line, m, item_start) && !list.empty()) {
                lists[list].emplace_back();
                key_indent = static_cast<int>(m.position(2));
                i = read_value(i, key_indent, m[2], m[3], lists[list].back());
                continue;
            }
            if (std::regex_match(line, m, item_key) && !list.empty() && !lists[list].empty() &&
                static_cast<int>(m[1].length()) == key_indent) {
                i = read_value(i, key_indent, m[2], m[3], lists[list].back());
                continue;
            }
            warnings_.push_back(file_ + ": CVAR block line not understood: " + line);
            ++i;
        }
        return lists;
    }

  private:
    // The value of `key` starting on line i; returns the line after it.
    std::size_t read_value(std::size_t i, int key_indent, const std::string& key,
                           const std::string& rest, std::map<std::string, std::string>& into)
    {
        std::string indicator = trim(rest);
        ++i;
        std::vector<std::string> body;
        int body_indent = -1;
        while (i < lines_.size()) {
            const std::string& line = lines_[i];
            if (!blank(line) && indentation(line) <= key_indent)
                break;
            if (!blank(line) && body_indent < 0)
                body_indent = indentation(line);
            body.push_back(line);
            ++i;
        }
        while (!body.empty() && blank(body.back()))
            body.pop_back();
        if (!indicator.empty() && (indicator[0] == '|' || indicator[0] == '>')) {
            std::string text;
            for (std::size_t k = 0; k < body.size(); ++k) {
                if (k)
                    text += '\n';
                if (!blank(body[k]))
                    text += body[k].substr(std::min<std::size_t>(body_indent, body[k].size()));
            }
            into[key] = text;
        } else {
            std::string text = scalar(rest);
            for (const auto& l : body) {
                if (!blank(l))
                    text += (text.empty() ? "" : " ") + trim(l);
            }
            into[key] = text;
        }
        return i;
    }

    std::vector<std::string> lines_;
    std::vector<std::string>& warnings_;
    const std::string& file_;
};

bool is_cvar_source(const fs::path& p)
{
    static const std::regex source(R"(.*\.[Cchi](pp)?$)");
    std::string name = p.filename().string();
    return name == "cvars.txt" || std::regex_match(name, source);
}

// extractcvars' ExpandDir: sorted names, files before the subdirectories' files.
void collect_files(const fs::path& dir, std::vector<fs::path>& files)
{
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(dir))
        entries.push_back(e.path());
    std::sort(entries.begin(), entries.end());
    std::vector<fs::path> subdirs;
    for (const auto& p : entries) {
        if (p.filename().string()[0] == '.')
            continue;
        if (fs::is_directory(p))
            subdirs.push_back(p);
        else if (is_cvar_source(p))
            files.push_back(p);
    }
    for (const auto& d : subdirs)
        collect_files(d, files);
}

// The text of the file's first CVAR block, and how many blocks it has.
std::string first_block(const std::string& text, int& blocks)
{
    blocks = 0;
    std::string block;
    std::istringstream in(text);
    std::string line;
    bool inside = false, done = false;
    while (std::getline(in, line)) {
        if (line.find(begin_marker) != std::string::npos) {
            ++blocks;
            inside = !done;
            continue;
        }
        if (line.find(end_marker) != std::string::npos) {
            if (inside)
                done = true;
            inside = false;
            continue;
        }
        if (inside)
            block += line + "\n";
    }
    return block;
}

std::string without_prefix(const std::string& name)
{
    const std::string prefix = "MPIR_CVAR_";
    return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

}  // namespace

std::string ControlVariable::field(const std::string& key) const
{
    auto it = fields.find(key);
    return it == fields.end() ? std::string() : it->second;
}

std::vector<std::string> ControlVariable::environment_names() const
{
    std::string base = without_prefix(name);
    std::vector<std::string> names = {"MPIR_CVAR_" + base, "MPIR_PARAM_" + base, "MPICH_" + base};
    static const std::regex separators(R"([:,;\s]+)");
    std::string alt = field("alt-env");
    for (std::sregex_token_iterator it(alt.begin(), alt.end(), separators, -1), end; it != end; ++it) {
        std::string a = without_prefix(*it);
        if (a.empty())
            continue;
        for (const char* prefix : {"MPIR_CVAR_", "MPIR_PARAM_", "MPICH_"})
            names.push_back(prefix + a);
    }
    return names;
}

CvarDefinitions parse_cvar_info_block(const std::string& yaml, const std::string& file,
                                      std::vector<std::string>& warnings)
{
    CvarDefinitions defs;
    CvarYamlReader reader(yaml, warnings, file);
    auto lists = reader.read();
    for (auto& fields : lists["cvars"]) {
        ControlVariable v;
        v.name = fields["name"];
        fields.erase("name");
        v.fields = fields;
        v.file = file;
        for (const char* required : {"type", "verbosity", "scope", "class", "description"}) {
            if (!v.fields.count(required))
                warnings.push_back(file + ": " + v.name + " has no " + required);
        }
        defs.cvars.push_back(v);
    }
    for (auto& fields : lists["categories"])
        defs.categories.push_back({fields["name"], fields["description"], file});
    return defs;
}

CvarDefinitions cvar_definitions_of_tree(const std::string& tree, std::vector<std::string>& warnings)
{
    CvarDefinitions all;
    std::set<std::string> seen;
    for (const char* dir : cvar_directories) {
        fs::path root = fs::path(tree) / dir;
        if (!fs::is_directory(root))
            continue;
        std::vector<fs::path> files;
        collect_files(root, files);
        for (const auto& f : files) {
            std::string text = load_source_text(f.string());
            if (text.find(begin_marker) == std::string::npos)
                continue;
            std::string relative = fs::relative(f, tree).generic_string();
            int blocks = 0;
            std::string yaml = first_block(text, blocks);
            if (blocks > 1)
                warnings.push_back(relative + ": " + std::to_string(blocks) +
                                   " CVAR blocks; MPICH's extractcvars reads only the first");
            CvarDefinitions defs = parse_cvar_info_block(yaml, relative, warnings);
            for (auto& v : defs.cvars) {
                if (seen.insert(v.name).second)
                    all.cvars.push_back(v);  // a repeated definition must be identical (extractcvars)
            }
            for (auto& c : defs.categories)
                all.categories.push_back(c);
        }
    }
    return all;
}

CvarComparison compare_cvars(const std::string& pristine, const std::string& tree,
                             std::vector<std::string>& warnings)
{
    std::vector<std::string> pristine_warnings;
    CvarDefinitions before = cvar_definitions_of_tree(pristine, pristine_warnings);
    CvarDefinitions after = cvar_definitions_of_tree(tree, warnings);
    std::map<std::string, const ControlVariable*> old_by_name;
    for (const auto& v : before.cvars)
        old_by_name[v.name] = &v;

    CvarComparison result;
    for (const auto& v : after.cvars) {
        auto it = old_by_name.find(v.name);
        if (it == old_by_name.end()) {
            result.changes.push_back({v, "new"});
            continue;
        }
        std::set<std::string> keys;
        for (const auto& f : v.fields)
            keys.insert(f.first);
        for (const auto& f : it->second->fields)
            keys.insert(f.first);
        std::string what;
        for (const auto& k : keys) {
            std::string was = it->second->field(k), now = v.field(k);
            if (was == now)
                continue;
            what += (what.empty() ? "" : ", ") + k;
            if (k != "description")
                what += " (was " + (was.empty() ? std::string("unset") : was) + ")";
        }
        if (!what.empty())
            result.changes.push_back({v, "changed: " + what});
    }

    std::set<std::string> old_categories, used, listed;
    for (const auto& c : before.categories)
        old_categories.insert(c.name);
    for (const auto& c : result.changes)
        used.insert(c.cvar.field("category"));
    for (const auto& c : after.categories) {
        if (!old_categories.count(c.name) && listed.insert("new " + c.name).second)
            result.new_categories.push_back(c.name);
        if (used.count(c.name) && listed.insert(c.name).second)
            result.categories.push_back(c);
    }
    for (const auto& name : used) {
        if (!listed.count(name))
            warnings.push_back("category " + name + " of a new control variable is not defined");
    }
    return result;
}
