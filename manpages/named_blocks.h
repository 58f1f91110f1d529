// The named text blocks a doc comment includes with '.N name': "/*N name ... N*/" in
// MPICH's maint/docnotes (or in the source file itself). A later definition of a name
// replaces an earlier one, as in doctext.
#pragma once

#include <map>
#include <optional>
#include <string>

class NamedBlocks {
  public:
    void define(const std::string& name, const std::string& text) { blocks_[name] = text; }
    std::optional<std::string> find(const std::string& name) const;
    bool empty() const { return blocks_.empty(); }

  private:
    std::map<std::string, std::string> blocks_;
};
