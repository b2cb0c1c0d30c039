/* Calls that cannot be replayed, logged in a logging CD, make restore_cd refuse with
 * CD_ERR_UNREPLAYABLE naming the call; once the CD advanced (the log and its mark discarded)
 * a restore succeeds again. With MPI_VERSION >= 4 (MPICH 4): partitioned communication
 * (MPI_Psend_init/Precv_init, Start, Pready/Pready_range, Parrived) and a large-count
 * MPI_Send_c/MPI_Recv_c whose count does not fit in an int (3,000,000,000 elements of a
 * datatype of size 0: legal, and no byte moves), then an MPI_Bcast_c of as many, and a
 * large-count MPI-IO write
 * (MPI_File_write_at_c, to a file of its own opened before the CD); with an older MPI only the
 * final restore is checked.
 * Ranks pair up (0-1, 2-3, ...). Prints "unreplayable rank R <report>" where the report
 * lists, per step, the call the refusal named, then "restored". */
#include <cd.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define PROGRAM "unreplayable"
#include "support.h"

static char report[512];

/* restore_cd of `cd`: appends what it said to the report */
static void try_restore(cd_handle cd) {
    int rc = restore_cd(cd);
    size_t n = strlen(report);
    if (rc == 0) {
        snprintf(report + n, sizeof report - n, " restored");
    } else if (rc == CD_ERR_UNREPLAYABLE) {
        char msg[512];
        size_t len = 0;
        const char *call = cd_last_error_message(msg, sizeof msg, &len) == 0 ? strstr(msg, "MPI_") : NULL;
        char name[64] = "?";
        if (call) sscanf(call, "%63[A-Za-z_]", name);
        snprintf(report + n, sizeof report - n, " refused:%s", name);
    } else {
        snprintf(report + n, sizeof report - n, " error:%d", rc);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int partner = rank ^ 1;
    if (partner >= size) partner = MPI_PROC_NULL;
    double data[8];
    for (int i = 0; i < 8; i++) data[i] = rank * 10 + i;
#if MPI_VERSION >= 4
    char path[64];
    snprintf(path, sizeof path, "unreplayable-%d.bin", rank);
    MPI_File file;
    mpi_check(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                            &file),
              "File_open");
#endif
    int error = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "unreplayable", &error);
    if (!cd) cd_fail("create_cd", error);
    struct cd_addrspec state[] = {{data, sizeof data, READ_WRITE, GLOBAL}};
    if (add_to_cd_via_copy(cd, state, 1)) MPI_Abort(MPI_COMM_WORLD, 2);
#if MPI_VERSION >= 4
    /* partitioned: 4 partitions of 2 doubles, the even rank sends */
    MPI_Request req;
    if (rank % 2 == 0) {
        MPI_Psend_init(data, 4, 2, MPI_DOUBLE, partner, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        MPI_Start(&req);
        MPI_Pready_range(0, 1, req);
        MPI_Pready(2, req);
        MPI_Pready(3, req);
    } else {
        MPI_Precv_init(data, 4, 2, MPI_DOUBLE, partner, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        MPI_Start(&req);
        int arrived = 0;
        while (!arrived) MPI_Parrived(req, 3, &arrived);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Request_free(&req);
    try_restore(cd);
    if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 3);
    /* large-count point-to-point beyond INT_MAX elements (the forms with counts that fit are
     * logged and replayed: largecount.c) */
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_BYTE, &empty);
    MPI_Type_commit(&empty);
    const MPI_Count huge = 3000000000;
    if (rank % 2 == 0)
        mpi_check(MPI_Send_c(data, huge, empty, partner, 8, MPI_COMM_WORLD), "Send_c");
    else
        mpi_check(MPI_Recv_c(data, huge, empty, partner, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                  "Recv_c");
    try_restore(cd);
    if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 4);
    /* and a collective */
    mpi_check(MPI_Bcast_c(data, huge, empty, 0, MPI_COMM_WORLD), "Bcast_c");
    MPI_Type_free(&empty);
    try_restore(cd);
    if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 6);
    /* large-count MPI-IO */
    mpi_check(MPI_File_write_at_c(file, 0, data, (MPI_Count)8, MPI_DOUBLE, MPI_STATUS_IGNORE),
              "File_write_at_c");
    try_restore(cd);
    if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 5);
#endif
    try_restore(cd);
    commit_cd(cd);
#if MPI_VERSION >= 4
    MPI_File_close(&file);
    MPI_File_delete(path, MPI_INFO_NULL);
#endif
    printf("unreplayable rank %d%s\n", rank, report);
    MPI_Finalize();
    return 0;
}
