// The completion forms of the stress program, each checked as seed 001 describes it.
#include <cstring>

#include "stress_support.hpp"

namespace stress {

const char* form_name(Form f) {
    static const char* const names[kForms] = {"MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
                                              "MPI_Testall", "MPI_Testany", "MPI_Testsome",
                                              "get_status_all+Waitall", "get_status_some+Wait",
                                              "get_status_any+Test"};
    return names[static_cast<int>(f)];
}

namespace {

int count_bytes(const MPI_Status& s) {
    int n = -1;
    MPI_Get_count(&s, MPI_BYTE, &n);
    return n;
}

bool same_status(const MPI_Status& a, const MPI_Status& b) {
    int ca = -1, cb = -1;
    MPI_Test_cancelled(&a, &ca);
    MPI_Test_cancelled(&b, &cb);
    return a.MPI_SOURCE == b.MPI_SOURCE && a.MPI_TAG == b.MPI_TAG &&
           count_bytes(a) == count_bytes(b) && ca == cb;
}

// Records one completion of index i; a second report of the same request is a failure.
class Seen {
public:
    Seen(size_t n, Failures& failures, const char* who, Form f)
        : seen_(n, false), failures_(failures), who_(who), form_(f) {}
    void mark(int i) {
        if (i < 0 || static_cast<size_t>(i) >= seen_.size()) {
            failures_.report("%s: %s reported index %d of %zu", who_, form_name(form_), i,
                             seen_.size());
            return;
        }
        if (seen_[static_cast<size_t>(i)]) {
            failures_.report("%s: %s reported index %d twice", who_, form_name(form_), i);
        }
        seen_[static_cast<size_t>(i)] = true;
        completions_++;
    }
    int completions() const { return completions_; }

private:
    std::vector<bool> seen_;
    Failures& failures_;
    const char* who_;
    Form form_;
    int completions_ = 0;
};

// What every status is preset to: fields a call leaves alone (MPI_SOURCE and MPI_TAG of a send)
// then compare equal.
MPI_Status preset() {
    MPI_Status s;
    std::memset(&s, 0x5a, sizeof s);
    return s;
}

}  // namespace

int complete_all(Form f, std::vector<MPI_Request>& reqs, std::vector<MPI_Status>& statuses,
                 Failures& failures, const char* who) {
    const int n = static_cast<int>(reqs.size());
    statuses.assign(reqs.size(), preset());
    Seen seen(reqs.size(), failures, who, f);
    std::vector<int> idx(reqs.size());
    std::vector<MPI_Status> some(reqs.size());
    MPI_Status one = preset();
    int flag = 0, index = 0, outcount = 0;
    switch (f) {
        case Form::Waitall:
            MPI_Waitall(n, reqs.data(), statuses.data());
            for (int i = 0; i < n; i++) seen.mark(i);
            break;
        case Form::Waitany:
            for (;;) {
                MPI_Waitany(n, reqs.data(), &index, &one);
                if (index == MPI_UNDEFINED) break;
                seen.mark(index);
                statuses[static_cast<size_t>(index)] = one;
            }
            break;
        case Form::Waitsome:
            for (;;) {
                MPI_Waitsome(n, reqs.data(), &outcount, idx.data(), some.data());
                if (outcount == MPI_UNDEFINED) break;
                for (int k = 0; k < outcount; k++) {
                    seen.mark(idx[static_cast<size_t>(k)]);
                    statuses[static_cast<size_t>(idx[static_cast<size_t>(k)])] = some[static_cast<size_t>(k)];
                }
            }
            break;
        case Form::Testall:
            do {
                MPI_Testall(n, reqs.data(), &flag, statuses.data());
            } while (!flag);
            for (int i = 0; i < n; i++) seen.mark(i);
            break;
        case Form::Testany:
            for (;;) {
                MPI_Testany(n, reqs.data(), &index, &flag, &one);
                if (!flag) continue;
                if (index == MPI_UNDEFINED) break;
                seen.mark(index);
                statuses[static_cast<size_t>(index)] = one;
            }
            break;
        case Form::Testsome:
            for (;;) {
                MPI_Testsome(n, reqs.data(), &outcount, idx.data(), some.data());
                if (outcount == MPI_UNDEFINED) break;
                for (int k = 0; k < outcount; k++) {
                    seen.mark(idx[static_cast<size_t>(k)]);
                    statuses[static_cast<size_t>(idx[static_cast<size_t>(k)])] = some[static_cast<size_t>(k)];
                }
            }
            break;
        case Form::StatusAll: {
            std::vector<MPI_Status> peeked(reqs.size(), preset());
            do {
                MPI_Request_get_status_all(n, reqs.data(), &flag, peeked.data());
            } while (!flag);
            MPI_Waitall(n, reqs.data(), statuses.data());
            for (int i = 0; i < n; i++) {
                seen.mark(i);
                if (!same_status(peeked[static_cast<size_t>(i)], statuses[static_cast<size_t>(i)])) {
                    failures.report("%s: get_status_all and MPI_Waitall disagree on request %d", who, i);
                }
            }
            break;
        }
        case Form::StatusSome:
            for (;;) {
                some.assign(reqs.size(), preset());
                MPI_Request_get_status_some(n, reqs.data(), &outcount, idx.data(), some.data());
                if (outcount == MPI_UNDEFINED) break;
                for (int k = 0; k < outcount; k++) {
                    const int i = idx[static_cast<size_t>(k)];
                    seen.mark(i);
                    MPI_Wait(&reqs[static_cast<size_t>(i)], &statuses[static_cast<size_t>(i)]);
                    if (!same_status(some[static_cast<size_t>(k)], statuses[static_cast<size_t>(i)])) {
                        failures.report("%s: get_status_some and MPI_Wait disagree on request %d", who, i);
                    }
                }
            }
            break;
        case Form::StatusAny:
            for (;;) {
                MPI_Status peeked = preset();
                MPI_Request_get_status_any(n, reqs.data(), &index, &flag, &peeked);
                if (!flag) continue;
                if (index == MPI_UNDEFINED) break;
                seen.mark(index);
                int done = 0;
                MPI_Test(&reqs[static_cast<size_t>(index)], &done, &statuses[static_cast<size_t>(index)]);
                if (!done) {
                    failures.report("%s: get_status_any reported request %d complete, MPI_Test did not", who, index);
                    MPI_Wait(&reqs[static_cast<size_t>(index)], &statuses[static_cast<size_t>(index)]);
                } else if (!same_status(peeked, statuses[static_cast<size_t>(index)])) {
                    failures.report("%s: get_status_any and MPI_Test disagree on request %d", who, index);
                }
            }
            break;
    }
    for (int i = 0; i < n; i++) {
        if (reqs[static_cast<size_t>(i)] != MPI_REQUEST_NULL) {
            failures.report("%s: %s left request %d active", who, form_name(f), i);
        }
    }
    if (seen.completions() != n) {
        failures.report("%s: %s reported %d completions of %d", who, form_name(f), seen.completions(), n);
    }
    return seen.completions();
}

}  // namespace stress
