// The tasks (threads) of this process, from /proc/self/task: which run user code and which are
// the kernel's io_uring workers (flag PF_IO_WORKER, 0x10, in field 9 of their stat). Shared by
// bench/ and tests/.
#pragma once

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace process_tasks {

struct Task {
    int tid;
    bool io_worker;  // a kernel task of the process that runs no user code
};

// Empty if /proc/self/task cannot be read; a task that exits meanwhile is left out.
inline std::vector<Task> list() {
    std::vector<Task> tasks;
    DIR* dir = opendir("/proc/self/task");
    if (dir == nullptr) {
        return tasks;
    }
    while (dirent* entry = readdir(dir)) {
        if (entry->d_name[0] == '.') {
            continue;
        }
        std::ifstream stat(std::string("/proc/self/task/") + entry->d_name + "/stat");
        const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
        const size_t paren = text.rfind(')');  // the name may hold spaces and parentheses
        if (paren == std::string::npos) {
            continue;
        }
        std::istringstream fields(text.substr(paren + 1));
        std::string field;
        unsigned long flags = 0;
        for (int i = 3; i <= 9 && fields >> field; i++) {
            if (i == 9) {
                flags = std::stoul(field);
            }
        }
        tasks.push_back(Task{std::atoi(entry->d_name), (flags & 0x10) != 0});
    }
    closedir(dir);
    return tasks;
}

}  // namespace process_tasks
