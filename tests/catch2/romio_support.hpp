// ROMIO for the tests: a private file of this rank, a lowered file-size limit.
#pragma once

#include <catch2/catch.hpp>
#include <mpi.h>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "mpi_test_support.hpp"

namespace reqtest {

// A private file of this rank in a fresh directory, removed at the end.
class PrivateFile {
public:
    // in a fresh directory under parent (a file system of the test's choice)
    explicit PrivateFile(const std::string& parent = "/tmp") {
        std::string dir = parent + "/reqstatus-romio-XXXXXX";
        REQUIRE(mkdtemp(dir.data()) != nullptr);
        dir_ = dir;
        path_ = dir_ + "/rank" + std::to_string(world_rank()) + ".dat";
        REQUIRE(MPI_File_open(MPI_COMM_SELF, path_.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                              MPI_INFO_NULL, &fh) == MPI_SUCCESS);
        MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    }
    ~PrivateFile() {
        if (fh != MPI_FILE_NULL) {
            MPI_File_close(&fh);
        }
        std::remove(path_.c_str());
        rmdir(dir_.c_str());
    }
    PrivateFile(const PrivateFile&) = delete;
    PrivateFile& operator=(const PrivateFile&) = delete;
    const std::string& path() const { return path_; }
    // MPI_File_close now (the file stays until the end); its return code
    int close() { return MPI_File_close(&fh); }
    // opens the closed file again with amode (errors returned); the return code of MPI_File_open
    int reopen(int amode) {
        const int rc = MPI_File_open(MPI_COMM_SELF, path_.c_str(), amode, MPI_INFO_NULL, &fh);
        if (rc == MPI_SUCCESS) {
            MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
        }
        return rc;
    }
    MPI_File fh = MPI_FILE_NULL;

private:
    std::string dir_, path_;
};

// The value of a file's hint key, "" if it has none.
inline std::string file_hint(MPI_File fh, const char* key) {
    MPI_Info info = MPI_INFO_NULL;
    REQUIRE(MPI_File_get_info(fh, &info) == MPI_SUCCESS);
    char value[MPI_MAX_INFO_VAL + 1] = {0};
    int flag = 0;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    return flag ? value : "";
}

// RLIMIT_FSIZE lowered and SIGXFSZ ignored for the scope: a write past the limit fails with
// EFBIG instead of killing the process.
class FileSizeLimit {
public:
    explicit FileSizeLimit(rlim_t bytes) {
        getrlimit(RLIMIT_FSIZE, &saved_);
        rlimit lowered = saved_;
        lowered.rlim_cur = bytes;
        setrlimit(RLIMIT_FSIZE, &lowered);
        saved_handler_ = signal(SIGXFSZ, SIG_IGN);
    }
    ~FileSizeLimit() {
        setrlimit(RLIMIT_FSIZE, &saved_);
        signal(SIGXFSZ, saved_handler_);
    }
    FileSizeLimit(const FileSizeLimit&) = delete;
    FileSizeLimit& operator=(const FileSizeLimit&) = delete;

private:
    rlimit saved_{};
    sighandler_t saved_handler_ = SIG_DFL;
};

}  // namespace reqtest
