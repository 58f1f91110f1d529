// Programs that break the promises of ROMIO's nonblocking I/O if an engine does not keep them
// (test_romio_hostile.cpp); the seccomp case of test_romio_engine.cpp runs them on the POSIX AIO
// that auto falls back to.
#pragma once

namespace reqtest {

// 64 writes of 1 MiB in flight when MPI_File_close comes (waited after the close, or freed
// before it), then an unrelated file opened: every byte lands in the first file, none in the
// second, every wait succeeds with the full count.
void check_close_with_writes_in_flight(bool free_before_close);

// Writes across RLIMIT_FSIZE fail with MPI_ERR_IO (EFBIG) through every completion call, with
// the bytes below the limit written.
void check_writes_across_file_size_limit();

}  // namespace reqtest
