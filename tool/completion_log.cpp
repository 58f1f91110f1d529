#include "completion_log.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

// The environment variable naming the log: the PMPI library's by default, the QMPI library's
// when built with -DREQSTATUS_LOG_ENV='"MPI_REQSTATUS_QMPI_LOG"' (both may run in one process).
#ifndef REQSTATUS_LOG_ENV
#define REQSTATUS_LOG_ENV "MPI_REQSTATUS_TOOL_LOG"
#endif

namespace reqstatus_tool {

namespace {

constexpr size_t kFlushBytes = 64 * 1024;

struct LogFile {
    std::mutex lock;
    FILE* file = nullptr;
    bool opened = false;
};

LogFile& log_file() {
    static LogFile f;
    return f;
}

// The log's prefix, or nullptr when no log was asked for (read once).
const char* log_prefix() {
    static const char* const prefix = [] {
        const char* p = std::getenv(REQSTATUS_LOG_ENV);
        return (p != nullptr && *p != '\0') ? p : nullptr;
    }();
    return prefix;
}

// This rank in MPI_COMM_WORLD, asked at the first record (inside an MPI call), so that a thread
// flushing at its exit after MPI_Finalize does not call MPI.
int log_rank() {
    static const int rank = [] {
        int r = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &r);
        return r;
    }();
    return rank;
}

void append_to_file(const std::string& text) {
    if (text.empty()) {
        return;
    }
    LogFile& f = log_file();
    std::lock_guard<std::mutex> guard(f.lock);
    if (!f.opened) {
        const std::string name = std::string(log_prefix()) + "." + std::to_string(log_rank());
        f.file = std::fopen(name.c_str(), "w");
        f.opened = true;
        if (f.file == nullptr) {
            std::fprintf(stderr, "reqstatus tool: cannot write %s\n", name.c_str());
        }
    }
    if (f.file != nullptr) {
        std::fwrite(text.data(), 1, text.size(), f.file);
        std::fflush(f.file);
    }
}

// One per thread: flushed when full, at MPI_Finalize and when the thread exits.
struct ThreadBuffer {
    std::string text;
    ThreadBuffer() { text.reserve(kFlushBytes + 256); }
    ~ThreadBuffer() { flush(); }
    void flush() {
        append_to_file(text);
        text.clear();
    }
};

ThreadBuffer& thread_buffer() {
    thread_local ThreadBuffer buffer;
    return buffer;
}

int error_class_of(int code) {
    int cls = code;
    if (code != MPI_SUCCESS) {
        PMPI_Error_class(code, &cls);
    }
    return cls;
}

}  // namespace

const bool logging = log_prefix() != nullptr;

// A cancelled request's source and tag are undefined (MPI 4.0 section 3.8.4): logged as
// MPI_UNDEFINED.
void record_line(const char* call, int index, const MPI_Status& status, int error) {
    log_rank();
    int count = -1, cancelled = -1;
    PMPI_Get_count(&status, MPI_BYTE, &count);
    PMPI_Test_cancelled(&status, &cancelled);
    char line[256];
    const int n = std::snprintf(line, sizeof line,
                                "%s index %d source %d tag %d bytes %d cancelled %d return class %d\n",
                                call, index, cancelled ? MPI_UNDEFINED : status.MPI_SOURCE,
                                cancelled ? MPI_UNDEFINED : status.MPI_TAG, count, cancelled,
                                error_class_of(error));
    ThreadBuffer& buffer = thread_buffer();
    buffer.text.append(line, static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n)
                                                                   : sizeof line - 1);
    if (buffer.text.size() >= kFlushBytes) {
        buffer.flush();
    }
}

void flush_log() {
    if (logging) {
        thread_buffer().flush();
    }
}

}  // namespace reqstatus_tool
