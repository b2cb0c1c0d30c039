/* Create/add/restore/advance/commit cycles over nested CDs, regen entries and MPI log entries:
 * the program the memory check runs under valgrind. Every byte libcd allocates for these CDs
 * must be freed by their commits, and no access may be invalid. */
#include "check.h"
#include <string.h>

static double field[256];
static int counter;

static int regen(struct cd_addrspec addrlist[], int ascount) {
    for (int k = 0; k < ascount; k++) memset(addrlist[k].address, 0, addrlist[k].length);
    return 0;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    static char scratch[64];
    struct cd_addrspec af[1] = {{field, sizeof field, READ_WRITE, GLOBAL}};
    struct cd_addrspec ac[1] = {{&counter, sizeof counter, READ_WRITE, GLOBAL}};
    struct cd_addrspec as[1] = {{scratch, sizeof scratch, READ_ONLY, GLOBAL}};
    for (int r = 0; r < rounds; r++) {
        cd_handle root = must_create(NULL, COMM_LOGGING_ENABLED, "cycles");
        OK(add_to_cd_via_copy(root, af, 1));
        OK(add_to_cd_via_regen(root, as, 1, regen));
        for (int step = 0; step < 5; step++) {
            cd_handle child = must_create(CURRENT_CD, COMM_LOGGING_INHERIT, NULL);
            OK(add_to_cd_via_copy(child, ac, 1));
            void *ent = malloc(32 + step);
            CHECK(ent != NULL);
            memset(ent, step, 32 + step);
            OK(add_MPI_log_to_cd(child, ent, 32 + step));
            counter++;
            field[step] += 1.0;
            if (step % 2) {
                OK(restore_cd(child));
                while (get_MPI_log_from_cd(child, NULL) != NULL) {
                }
            }
            OK(advance_cd_point_in_time(child));
            OK(commit_cd(child));
        }
        OK(restore_cd(root)); /* replay state with merged logs */
        CHECK(get_MPI_log_from_cd(root, NULL) != NULL);
        OK(add_to_cd_via_copy(root, af, 1));
        OK(advance_cd_point_in_time(root));
        /* Leave a second root with entries and a log to be freed by its commit. */
        cd_handle other = must_create(NULL, COMM_LOGGING_ENABLED, "other");
        OK(add_to_cd_via_copy(other, ac, 1));
        OK(add_MPI_log_to_cd(other, malloc(8), 8));
        OK(commit_cd(other));
        OK(commit_cd(root));
        /* Errors allocate messages: they must be freed too. */
        EXPECT(CD_ERR_STALE_HANDLE, restore_cd(root));
    }
    printf("cycles: ok (%d rounds)\n", rounds);
    return 0;
}
