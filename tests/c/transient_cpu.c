/* "One CD used to recover from a transient CPU failure" (spec use case), as written: each
 * iteration re-adds the state, computes, restores on error, and otherwise advances, with the
 * spec's own `advance_cd_point_in_time(cd) == FAILURE` test. compute() fails every third
 * call; the result must equal a fault-free run. */
#include "check.h"

static int data[4];
static int calls, faults;

/* One step of work: accumulates into data, sets compute_done after 20 steps. */
static int compute(int *compute_done) {
    data[0] += 1;
    data[1] += data[0];
    /* Mixed in unsigned arithmetic, which wraps (signed overflow would be undefined). */
    data[2] ^= (int)((unsigned)data[1] * 31u);
    data[3] = (int)((unsigned)data[3] * 7u + (unsigned)data[2]);
    if (++calls % 3 == 0) {
        faults++;
        data[1] = -999; /* the failure corrupts memory */
        return 1;
    }
    *compute_done = (data[0] == 20);
    return 0;
}

int main(void) {
    int done = 0, compute_done = 0, error, compute_error;
    char *storage_info = NULL;
    struct cd_addrspec addrlist[2] = {{&data, sizeof(data), READ_WRITE, GLOBAL},
                                      {&compute_done, sizeof(compute_done), READ_WRITE, GLOBAL}};
    cd_handle cd = create_cd(NULL, storage_info, COMM_LOGGING_DISABLED, "root", &error);
    CHECK(cd != NULL && error == SUCCESS);
    while (!done) {
        OK(add_to_cd_via_copy(cd, addrlist, 2));
        compute_error = compute(&compute_done); /* Sets compute_done when finished. */
        if (compute_error) {
            OK(restore_cd(cd));
        } else {
            if (compute_done) {
                done = 1;
            } else if (advance_cd_point_in_time(cd) == FAILURE) {
                OK(restore_cd(cd));
            }
        }
    }
    OK(commit_cd(cd));

    /* The fault-free run. */
    int ref[4] = {0, 0, 0, 0};
    for (int i = 0; i < 20; i++) {
        ref[0] += 1;
        ref[1] += ref[0];
        ref[2] ^= (int)((unsigned)ref[1] * 31u);
        ref[3] = (int)((unsigned)ref[3] * 7u + (unsigned)ref[2]);
    }
    for (int i = 0; i < 4; i++) CHECK(data[i] == ref[i]);
    CHECK(faults > 0);
    printf("transient_cpu: ok (%d faults recovered)\n", faults);
    return 0;
}
