// One completion form on ARRAYS arrays of N receives from self, for counting the instructions a
// call costs under valgrind's callgrind (bench/run-bench instructions: --toggle-collect on the
// form's MPI_ and PMPI_ symbols, so only the calls themselves are counted; deterministic, unlike
// times on a shared 2-core machine).
//   complete  the receives are matched and complete before the form runs: Wait and Test one
//             request at a time, Waitany/Testany N times, Waitsome/Testsome until done,
//             Waitall/Testall once
//   pending   nothing completes: Test and Request_get_status on each request, the array forms
//             once, and the get_status forms where the build has them
// usage: bench_instructions complete|pending FORM N ARRAYS
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Requests = std::vector<MPI_Request>;
constexpr int kMatchedTag = 2;
constexpr int kPendingTag = 1;

int count_of(const Requests& r) { return static_cast<int>(r.size()); }

void post_complete(Requests& r, std::vector<int>& buf) {
    static const int payload = 42;
    Requests sends(r.size());
    for (size_t i = 0; i < r.size(); i++) {
        MPI_Irecv(&buf[i], 1, MPI_INT, 0, kMatchedTag, MPI_COMM_SELF, &r[i]);
    }
    for (auto& s : sends) {
        MPI_Isend(&payload, 1, MPI_INT, 0, kMatchedTag, MPI_COMM_SELF, &s);
    }
    // released with calls no complete-state form is: callgrind counts every call of the form
    for (auto& s : sends) {
        int done = 0;
        while (!done) {
            MPI_Request_get_status(s, &done, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&s);
    }
    for (auto req : r) {
        int flag = 0;
        while (!flag) {
            MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        }
    }
}

bool complete_with(const std::string& form, Requests& r, std::vector<int>& idx) {
    int index = 0, flag = 0, out = 0;
    const int n = count_of(r);
    if (form == "Wait") {
        for (auto& req : r) MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (form == "Test") {
        for (auto& req : r) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    } else if (form == "Waitany") {
        for (int k = 0; k < n; k++) MPI_Waitany(n, r.data(), &index, MPI_STATUS_IGNORE);
    } else if (form == "Testany") {
        for (int k = 0; k < n; k++) MPI_Testany(n, r.data(), &index, &flag, MPI_STATUS_IGNORE);
    } else if (form == "Waitsome") {
        while (out != MPI_UNDEFINED) MPI_Waitsome(n, r.data(), &out, idx.data(), MPI_STATUSES_IGNORE);
    } else if (form == "Testsome") {
        while (out != MPI_UNDEFINED) MPI_Testsome(n, r.data(), &out, idx.data(), MPI_STATUSES_IGNORE);
    } else if (form == "Waitall") {
        MPI_Waitall(n, r.data(), MPI_STATUSES_IGNORE);
    } else if (form == "Testall") {
        MPI_Testall(n, r.data(), &flag, MPI_STATUSES_IGNORE);
    } else {
        return false;
    }
    return true;
}

bool call_pending(const std::string& form, Requests& r, std::vector<int>& idx) {
    int index = 0, flag = 0, out = 0;
    const int n = count_of(r);
    if (form == "Test") {
        for (auto& req : r) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    } else if (form == "Request_get_status") {
        for (auto req : r) MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
    } else if (form == "Testany") {
        MPI_Testany(n, r.data(), &index, &flag, MPI_STATUS_IGNORE);
    } else if (form == "Testsome") {
        MPI_Testsome(n, r.data(), &out, idx.data(), MPI_STATUSES_IGNORE);
    } else if (form == "Testall") {
        MPI_Testall(n, r.data(), &flag, MPI_STATUSES_IGNORE);
#ifdef MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE
    } else if (form == "Request_get_status_any") {
        MPI_Request_get_status_any(n, r.data(), &index, &flag, MPI_STATUS_IGNORE);
    } else if (form == "Request_get_status_some") {
        MPI_Request_get_status_some(n, r.data(), &out, idx.data(), MPI_STATUSES_IGNORE);
    } else if (form == "Request_get_status_all") {
        MPI_Request_get_status_all(n, r.data(), &flag, MPI_STATUSES_IGNORE);
#endif
    } else {
        return false;
    }
    return true;
}

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    if (argc != 5) {
        std::fprintf(stderr, "usage: bench_instructions complete|pending FORM N ARRAYS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const std::string state = argv[1], form = argv[2];
    const int n = std::atoi(argv[3]), arrays = std::atoi(argv[4]);
    Requests r(static_cast<size_t>(n));
    std::vector<int> buf(static_cast<size_t>(n)), idx(static_cast<size_t>(n));
    bool known = true;
    if (state == "complete") {
        for (int a = 0; a < arrays && known; a++) {
            post_complete(r, buf);
            known = complete_with(form, r, idx);
        }
    } else {
        for (int i = 0; i < n; i++) {
            MPI_Irecv(&buf[static_cast<size_t>(i)], 1, MPI_INT, 0, kPendingTag, MPI_COMM_SELF,
                      &r[static_cast<size_t>(i)]);
        }
        for (int a = 0; a < arrays && known; a++) {
            known = call_pending(form, r, idx);
        }
        for (auto& req : r) MPI_Cancel(&req);
        MPI_Waitall(n, r.data(), MPI_STATUSES_IGNORE);
    }
    if (!known) {
        std::fprintf(stderr, "bench_instructions: no form %s for %s requests here\n", form.c_str(),
                     state.c_str());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
