/* Calls that cannot be replayed, logged in a logging CD, make restore_cd refuse with
 * CD_ERR_UNREPLAYABLE naming the call; once the CD advanced (the log and its mark discarded)
 * a restore succeeds again. With MPI_VERSION >= 4 (MPICH 4): partitioned communication
 * (MPI_Psend_init/Precv_init, Start, Pready/Pready_range, Parrived) and a large-count
 * MPI_Send_c/MPI_Recv_c whose count does not fit in an int (3,000,000,000 elements of a
 * datatype of size 0: legal, and no byte moves), then an MPI_Bcast_c of as many, a
 * large-count MPI-IO write (MPI_File_write_at_c, to a file of its own opened before the CD),
 * and MPI_Start of a persistent request made by MPI_Send_init_c/MPI_Recv_init_c with such a
 * count before the last advance. Under both families: MPI_Start of a persistent request made
 * by another thread (MPI_THREAD_SERIALIZED). Then the final restore.
 * Ranks pair up (0-1, 2-3, ...). Prints "unreplayable rank R <report>" where the report
 * lists, per step, what the refusal said the log holds, then "restored". */
#include <cd.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define PROGRAM "unreplayable"
#include "support.h"

static char report[1024];

/* What a thread of its own makes: a persistent send or receive of one double. */
struct maker {
    double *buf;
    int partner, sends;
    MPI_Request request;
};

static void *make_persistent(void *arg) {
    struct maker *m = arg;
    if (m->sends)
        mpi_check(MPI_Send_init(m->buf, 1, MPI_DOUBLE, m->partner, 11, MPI_COMM_WORLD, &m->request),
                  "Send_init");
    else
        mpi_check(MPI_Recv_init(m->buf, 1, MPI_DOUBLE, m->partner, 11, MPI_COMM_WORLD, &m->request),
                  "Recv_init");
    return NULL;
}

/* restore_cd of `cd`: appends what it said to the report (what the log holds, as the refusal
 * names it: "the MPI log holds X, which cannot be replayed ...") */
static void try_restore(cd_handle cd) {
    int rc = restore_cd(cd);
    size_t n = strlen(report);
    if (rc == 0) {
        snprintf(report + n, sizeof report - n, " restored");
    } else if (rc == CD_ERR_UNREPLAYABLE) {
        char msg[512];
        size_t len = 0;
        const char *holds = cd_last_error_message(msg, sizeof msg, &len) == 0 ? strstr(msg, "holds ") : NULL;
        char *end = holds ? strstr(holds, ", which cannot") : NULL;
        if (end) *end = 0;
        snprintf(report + n, sizeof report - n, " refused:%s", end ? holds + 6 : "?");
    } else {
        snprintf(report + n, sizeof report - n, " error:%d", rc);
    }
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    if (provided < MPI_THREAD_SERIALIZED) die("no MPI_THREAD_SERIALIZED");
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
    try_restore(cd);
    if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 6);
    /* large-count MPI-IO */
    mpi_check(MPI_File_write_at_c(file, 0, data, (MPI_Count)8, MPI_DOUBLE, MPI_STATUS_IGNORE),
              "File_write_at_c");
    try_restore(cd);
    if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 5);
    /* a persistent request made beyond INT_MAX (its making marks the log, which the advance
     * discards), then started in the logging CD: its start cannot be logged */
    if (rank % 2 == 0)
        mpi_check(MPI_Send_init_c(data, huge, empty, partner, 10, MPI_COMM_WORLD, &req),
                  "Send_init_c");
    else
        mpi_check(MPI_Recv_init_c(data, huge, empty, partner, 10, MPI_COMM_WORLD, &req),
                  "Recv_init_c");
    if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 7);
    mpi_check(MPI_Start(&req), "Start");
    mpi_check(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
    try_restore(cd);
    if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 8);
    MPI_Request_free(&req);
    MPI_Type_free(&empty);
#endif
    /* a persistent request made by another thread, started by this one in the logging CD */
    struct maker maker = {data, partner, rank % 2 == 0, MPI_REQUEST_NULL};
    pthread_t thread;
    if (pthread_create(&thread, NULL, make_persistent, &maker) || pthread_join(thread, NULL))
        die("pthread");
    mpi_check(MPI_Start(&maker.request), "Start");
    mpi_check(MPI_Wait(&maker.request, MPI_STATUS_IGNORE), "Wait");
    try_restore(cd);
    if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 9);
    MPI_Request_free(&maker.request);
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
