// A parallel HDF5 program as applications write them, for maint/test-debian-apps: every rank
// writes its block of rows of two datasets in one file through libhdf5-mpich's MPI-IO driver,
// "collective" with collective transfers and "independent" with independent ones, closes the
// file, reopens it and reads back both datasets whole (collective and independent reads) and
// checks every element. Then h5dump and h5diff (serial tools) read the same file.
// usage: hdf5_rw FILE [ROWS_PER_RANK]     exit 0: every value read back as written
#include <hdf5.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr hsize_t kCols = 96;

double value_at(hsize_t row, hsize_t col) { return static_cast<double>(row * 1000 + col) + 0.25; }

hid_t open_file(const char* path, bool create) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
                        : H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    return file;
}

hid_t transfer(H5FD_mpio_xfer_t mode) {
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, mode);
    return dxpl;
}

// Writes this rank's rows [first, first + rows) of dataset name.
bool write_block(hid_t file, const char* name, hsize_t total_rows, hsize_t first, hsize_t rows,
                 H5FD_mpio_xfer_t mode) {
    hsize_t dims[2] = {total_rows, kCols};
    hid_t filespace = H5Screate_simple(2, dims, nullptr);
    hid_t dset = H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, filespace, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    hsize_t start[2] = {first, 0}, count[2] = {rows, kCols};
    H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start, nullptr, count, nullptr);
    hid_t memspace = H5Screate_simple(2, count, nullptr);
    std::vector<double> block(rows * kCols);
    for (hsize_t r = 0; r < rows; r++)
        for (hsize_t c = 0; c < kCols; c++) block[r * kCols + c] = value_at(first + r, c);
    hid_t dxpl = transfer(mode);
    herr_t rc = H5Dwrite(dset, H5T_NATIVE_DOUBLE, memspace, filespace, dxpl, block.data());
    H5Pclose(dxpl);
    H5Sclose(memspace);
    H5Sclose(filespace);
    H5Dclose(dset);
    return rc >= 0;
}

// Reads the whole dataset on every rank; returns the number of wrong elements (-1: no read).
long check_all(hid_t file, const char* name, hsize_t total_rows, H5FD_mpio_xfer_t mode) {
    hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
    if (dset < 0) return -1;
    std::vector<double> all(total_rows * kCols, -1.0);
    hid_t dxpl = transfer(mode);
    herr_t rc = H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, all.data());
    H5Pclose(dxpl);
    H5Dclose(dset);
    if (rc < 0) return -1;
    long wrong = 0;
    for (hsize_t r = 0; r < total_rows; r++)
        for (hsize_t c = 0; c < kCols; c++) wrong += all[r * kCols + c] != value_at(r, c);
    return wrong;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0) std::fprintf(stderr, "usage: hdf5_rw FILE [ROWS_PER_RANK]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const hsize_t rows = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 512;
    const hsize_t total = rows * size, first = rows * rank;

    int ok = 1;
    hid_t file = open_file(argv[1], true);
    ok &= file >= 0;
    ok &= write_block(file, "collective", total, first, rows, H5FD_MPIO_COLLECTIVE);
    ok &= write_block(file, "independent", total, first, rows, H5FD_MPIO_INDEPENDENT);
    ok &= H5Fclose(file) >= 0;

    file = open_file(argv[1], false);
    long wrong_coll = check_all(file, "collective", total, H5FD_MPIO_COLLECTIVE);
    long wrong_ind = check_all(file, "independent", total, H5FD_MPIO_INDEPENDENT);
    ok &= H5Fclose(file) >= 0;
    ok &= wrong_coll == 0 && wrong_ind == 0;

    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    std::printf("rank %d: %llu x %llu doubles, collective wrong %ld, independent wrong %ld\n", rank,
                static_cast<unsigned long long>(total), static_cast<unsigned long long>(kCols),
                wrong_coll, wrong_ind);
    if (rank == 0) std::printf("hdf5_rw: %s\n", all_ok ? "ok" : "FAILED");
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
