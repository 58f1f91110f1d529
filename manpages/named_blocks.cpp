#include "named_blocks.h"

std::optional<std::string> NamedBlocks::find(const std::string& name) const
{
    auto it = blocks_.find(name);
    if (it == blocks_.end())
        return std::nullopt;
    return it->second;
}
