// MPICH's control variables (CVARs) as its maint/extractcvars reads them: the YAML of the
// first "=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===" ... "=== END_MPI_T_CVAR_INFO_BLOCK ===" comment
// of each .c/.h/.i/.cpp file and cvars.txt under the directories of maint/cvardirs.
#pragma once

#include <map>
#include <string>
#include <vector>

struct ControlVariable {
    std::string name;  // MPIR_CVAR_...
    std::map<std::string, std::string> fields;  // category, type, default, scope, ...
    std::string file;  // where it is defined, relative to the tree

    std::string field(const std::string& key) const;
    // The environment variables that set it, as README.envvar lists them: MPIR_CVAR_X,
    // then MPIR_PARAM_X, MPICH_X and the same for each alt-env name.
    std::vector<std::string> environment_names() const;
};

struct CvarCategory {
    std::string name;
    std::string description;
    std::string file;
};

struct CvarDefinitions {
    std::vector<ControlVariable> cvars;  // in extractcvars' file order
    std::vector<CvarCategory> categories;
};

CvarDefinitions cvar_definitions_of_tree(const std::string& tree, std::vector<std::string>& warnings);
// One block's text (between the BEGIN and END lines), for tests.
CvarDefinitions parse_cvar_info_block(const std::string& yaml, const std::string& file,
                                      std::vector<std::string>& warnings);

struct CvarChange {
    ControlVariable cvar;
    std::string why;  // "new", or "changed: description, default (was ...)"
};

struct CvarComparison {
    std::vector<CvarChange> changes;       // what `tree` adds or changes, in its order
    std::vector<CvarCategory> categories;  // the categories of those, as `tree` defines them
    std::vector<std::string> new_categories;  // names of the categories `tree` adds
};

// The control variables `tree` adds to, or changes from, `pristine`. Warnings are `tree`'s
// only (stock MPICH's are not ours to report).
CvarComparison compare_cvars(const std::string& pristine, const std::string& tree,
                             std::vector<std::string>& warnings);
