/* The application's error handlers behave as MPI defines them, whatever libcd does underneath
 * (in a ULFM job libcd puts its own handler on MPI_COMM_WORLD and keeps the application's
 * aside): MPI_Comm_get_errhandler returns what the application set, MPI_ERRORS_RETURN returns
 * the error code, a handler the application created is called with the communicator and the
 * code, and a communicator it never set one on answers with MPI_COMM_WORLD's. The errors are
 * a send to a rank that does not exist (MPI_ERR_RANK). Run under a CD that logs, so that the
 * calls go through libcd's handlers. Prints "errhandlers rank R ok CALLS" where CALLS counts
 * the user handler's calls (2: one per communicator it was set on). */
#include <string.h>

#define PROGRAM "errhandlers"
#include "support.h"

static int calls;
static MPI_Comm last_comm = MPI_COMM_NULL;
static int last_code = MPI_SUCCESS;

static void count(MPI_Comm *comm, int *code, ...) {
    calls++;
    last_comm = *comm;
    last_code = *code;
}

#define EXPECT(cond, what)                                                                     \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, PROGRAM " rank %d: %s\n", world_rank(), what);                     \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                      \
        }                                                                                      \
    } while (0)

/* A send to rank `size` (no such rank): an error of class MPI_ERR_RANK. */
static int bad_send(MPI_Comm comm) {
    int size, x = 0;
    MPI_Comm_size(comm, &size);
    return MPI_Send(&x, 1, MPI_INT, size, 0, comm);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, error;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "errhandlers", &error);
    EXPECT(cd != NULL, "create_cd");

    /* MPI_ERRORS_RETURN on world: the code comes back, and get returns the choice */
    MPI_Errhandler got;
    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) == MPI_SUCCESS, "set");
    EXPECT(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got) == MPI_SUCCESS, "get");
    EXPECT(got == MPI_ERRORS_RETURN, "get returns MPI_ERRORS_RETURN");
    int rc = bad_send(MPI_COMM_WORLD), class = MPI_SUCCESS;
    MPI_Error_class(rc, &class);
    EXPECT(rc != MPI_SUCCESS && class == MPI_ERR_RANK, "MPI_ERRORS_RETURN returns MPI_ERR_RANK");

    /* a duplicate the application set nothing on answers like world */
    MPI_Comm dup;
    EXPECT(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS, "dup");
    EXPECT(bad_send(dup) != MPI_SUCCESS, "a duplicate returns the code too");

    /* a handler of the application's, on the duplicate and then on world */
    MPI_Errhandler mine;
    EXPECT(MPI_Comm_create_errhandler(count, &mine) == MPI_SUCCESS, "create");
    EXPECT(MPI_Comm_set_errhandler(dup, mine) == MPI_SUCCESS, "set on the duplicate");
    EXPECT(MPI_Comm_get_errhandler(dup, &got) == MPI_SUCCESS && got == mine,
           "get returns the application's handler");
    bad_send(dup);
    EXPECT(calls == 1 && last_comm == dup, "the handler is called with the duplicate");
    MPI_Error_class(last_code, &class);
    EXPECT(class == MPI_ERR_RANK, "the handler gets the code");
    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, mine) == MPI_SUCCESS, "set on world");
    bad_send(MPI_COMM_WORLD);
    EXPECT(calls == 2 && last_comm == MPI_COMM_WORLD, "the handler is called with world");

    /* the run goes on: a collective still works */
    int one = 1, sum = 0;
    EXPECT(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup) == MPI_SUCCESS, "allreduce");
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT(sum == size, "allreduce sum");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&mine);
    MPI_Comm_free(&dup);
    commit_cd(cd);
    printf(PROGRAM " rank %d ok %d\n", rank, calls);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
