/* C against Containment::cd: the spec's loop (add, advance, a fault, restore_cd) on a root
 * CD. Prints "cmake_c: ok". */
#include <cd.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "cmake_c: %s failed (%s)\n", #cond,                             \
                    cd_error_name(cd_last_error()));                                        \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

int main(void) {
    double field[32];
    int step, faulted = 0;
    for (int i = 0; i < 32; i++) field[i] = i;
    int error;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_DISABLED, "cmake_c", &error);
    CHECK(cd != NULL && error == SUCCESS);
    struct cd_addrspec state[2] = {{field, sizeof field, READ_WRITE, GLOBAL},
                                   {&step, sizeof step, READ_WRITE, GLOBAL}};
    for (step = 0; step < 4;) {
        CHECK(add_to_cd_via_copy(CURRENT_CD, state, 2) == SUCCESS);
        for (int i = 0; i < 32; i++) field[i] += 1.0;
        if (step == 2 && !faulted) {
            faulted = 1;
            field[5] = -1e300; /* a fault, detected */
            CHECK(restore_cd(CURRENT_CD) == SUCCESS);
            continue;
        }
        step++;
        if (advance_cd_point_in_time(CURRENT_CD) == FAILURE) {
            CHECK(restore_cd(CURRENT_CD) == SUCCESS);
        }
    }
    CHECK(field[5] == 5.0 + 4 && field[31] == 31.0 + 4);
    CHECK(commit_cd(cd) == SUCCESS);
    printf("cmake_c: ok (libcd %s)\n", cd_version());
    return 0;
}
