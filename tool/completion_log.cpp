#include "completion_log.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace reqstatus_tool {

namespace {
std::vector<Completion>& log() {
    static std::vector<Completion> all;
    return all;
}

int error_class_of(int code) {
    int cls = code;
    if (code != MPI_SUCCESS) {
        PMPI_Error_class(code, &cls);
    }
    return cls;
}
}  // namespace

void record(const char* call, int index, const MPI_Status& status, int error) {
    log().push_back({call, index, status, error});
}

const std::vector<Completion>& completions() { return log(); }

std::string format(const Completion& c) {
    int count = -1, cancelled = -1;
    PMPI_Get_count(&c.status, MPI_BYTE, &count);
    PMPI_Test_cancelled(&c.status, &cancelled);
    std::ostringstream os;
    os << c.call << " index " << c.index << " source " << c.status.MPI_SOURCE << " tag "
       << c.status.MPI_TAG << " bytes " << count << " cancelled " << cancelled
       << " return class " << error_class_of(c.error);
    return os.str();
}

void write_log_if_asked() {
    const char* prefix = std::getenv("MPI_REQSTATUS_TOOL_LOG");
    if (prefix == nullptr || *prefix == '\0') {
        return;
    }
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::ofstream out(std::string(prefix) + "." + std::to_string(rank));
    for (const auto& c : log()) {
        out << format(c) << '\n';
    }
}

}  // namespace reqstatus_tool
