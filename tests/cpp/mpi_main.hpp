// The body of the MPI programs of tests/cpp/ (cd_then_mpi.cpp, mpi_then_cd.cpp), which
// include cd.h and mpi.h in the two orders first; mpicxx (MPICH or Open MPI) compiles them
// with the MPI C++ bindings, which declare MPI::SUCCESS.
#ifndef MPI_MAIN_HPP
#define MPI_MAIN_HPP

#include "cycle.hpp"

// A logged root CD around an MPI_Allreduce loop: rank 0 meets a fault in step 1, restores
// and re-executes the step from its MPI log. Every rank checks its total against the
// fault-free one and prints "NAME rank R total T".
inline int mpi_main(int argc, char **argv, const char *name) {
    using cdtest::check;
    check(MPI_Init(&argc, &argv) == MPI::SUCCESS, "MPI_Init returns MPI::SUCCESS");
    check(MPI::SUCCESS == MPI_SUCCESS, "MPI::SUCCESS is MPI_SUCCESS");
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    cdtest::cd_cycle(name);

    const int steps = 3;
    int step = 0;
    double total = 0.0;
    bool faulted = false; // not in the CD: it survives the restore
    int error = -2;
    cd_handle cd = create_cd(nullptr, nullptr, COMM_LOGGING_ENABLED, name, &error);
    check(cd != nullptr && error == SUCCESS, "create_cd with MPI logging");
    cd_addrspec state[2] = {{&step, sizeof step, READ_WRITE, GLOBAL},
                            {&total, sizeof total, READ_WRITE, GLOBAL}};
    while (step < steps) {
        check(add_to_cd_via_copy(CURRENT_CD, state, 2) == SUCCESS, "add the state");
        double mine = rank + 1 + step, sum = 0.0;
        check(MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) == MPI::SUCCESS,
              "MPI_Allreduce");
        if (rank == 0 && step == 1 && !faulted) {
            faulted = true;
            step = -1;
            total = -1.0;
            check(restore_cd(CURRENT_CD) == SUCCESS, "restore_cd after the fault");
            check(step == 1, "the restore brought step 1 back");
            continue;
        }
        total += sum;
        step++;
        if (advance_cd_point_in_time(CURRENT_CD) == FAILURE) check(false, "advance");
    }
    check(commit_cd(cd) == SUCCESS, "commit_cd");
    double expected = 0.0;
    for (int s = 0; s < steps; s++) expected += size * (size + 1) / 2.0 + double(size) * s;
    check(total == expected, "the total equals the fault-free one");
    check(faulted == (rank == 0), "rank 0 recovered");
    std::printf("%s rank %d total %g\n", name, rank, total);
    check(MPI_Finalize() == MPI::SUCCESS, "MPI_Finalize");
    return 0;
}

#endif
