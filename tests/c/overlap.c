/* The overlap diagram (spec, "Rules for adding data to CDs"): adding 0-10 with 1's, then 5-15
 * with 2's keeps 1's in 5-10; only 10-15 is added (with 2's). Also: overlapping ranges inside
 * one list are an error, and re-adding with another scope is refused. */
#include "check.h"
#include <string.h>

static unsigned char mem[16];

int main(void) {
    cd_handle cd = must_create(NULL, COMM_LOGGING_DISABLED, "overlap");

    memset(mem, 1, 10);
    struct cd_addrspec first[1] = {{&mem[0], 10, READ_WRITE, GLOBAL}};
    OK(add_to_cd_via_copy(cd, first, 1)); /* 0 - 10: 1's */

    memset(&mem[5], 2, 10);
    struct cd_addrspec second[1] = {{&mem[5], 10, READ_WRITE, GLOBAL}};
    struct cd_stats st;
    OK(cd_get_stats(cd, &st));
    unsigned long long added = st.bytes_added;
    OK(add_to_cd_via_copy(cd, second, 1)); /* 5 - 15: 2's; only 10 - 15 is new */
    OK(cd_get_stats(cd, &st));
    CHECK(st.bytes_added - added == 5);

    unsigned char saved[15];
    OK(cd_read_saved(cd, mem, 15, saved));
    for (int i = 0; i < 10; i++) CHECK(saved[i] == 1);  /* 0 - 10 kept its 1's */
    for (int i = 10; i < 15; i++) CHECK(saved[i] == 2); /* 10 - 15 added with 2's */

    memset(mem, 9, sizeof mem);
    OK(restore_cd(cd));
    for (int i = 0; i < 10; i++) CHECK(mem[i] == 1);
    for (int i = 10; i < 15; i++) CHECK(mem[i] == 2);
    CHECK(mem[15] == 9); /* never added */

    /* Two ranges of one list that overlap each other: an error, nothing added. */
    unsigned char other[8];
    struct cd_addrspec bad[2] = {{&other[0], 6, READ_WRITE, GLOBAL},
                                 {&other[4], 4, READ_WRITE, GLOBAL}};
    EXPECT(CD_ERR_OVERLAPPING_LIST, add_to_cd_via_copy(cd, bad, 2));
    EXPECT(CD_ERR_RANGE_NOT_FOUND, cd_read_saved(cd, other, 1, saved));
    /* Adjacent ranges are fine. */
    struct cd_addrspec adjacent[2] = {{&other[0], 4, READ_WRITE, GLOBAL},
                                      {&other[4], 4, READ_WRITE, GLOBAL}};
    OK(add_to_cd_via_copy(cd, adjacent, 2));

    /* A re-add may not change the scope. */
    struct cd_addrspec constrained[1] = {{&mem[2], 4, READ_WRITE, CONSTRAINED}};
    EXPECT(CD_ERR_SCOPE_CHANGE, add_to_cd_via_copy(cd, constrained, 1));

    OK(commit_cd(cd));
    printf("overlap: ok\n");
    return 0;
}
