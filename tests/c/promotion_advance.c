/* Promotion, demotion and advance (spec, advance_cd_point_in_time and add_to_cd_via_*):
 * the "1 GB then 9 bytes" example (here 64 MiB: the second advance copies exactly 9 bytes),
 * promotion without copying, partial promotion, demotion by a READ_ONLY re-add, advance only
 * without children (FAILURE, with the reason in cd_last_error()), a child's advance commits
 * it implicitly without invalidating it, and advance discards the CD's MPI log. */
#include "check.h"
#include <string.h>

#define BIG (64u << 20)

static int labels(cd_handle cd, struct cd_entry_info *e, size_t cap) {
    size_t n = 0;
    OK(cd_get_entries(cd, e, cap, &n));
    return (int)n;
}

int main(void) {
    unsigned char *big = malloc(BIG);
    CHECK(big != NULL);
    memset(big, 1, BIG);
    struct cd_stats st;
    struct cd_entry_info e[8];

    cd_handle cd = must_create(NULL, COMM_LOGGING_ENABLED, "advance");
    struct cd_addrspec all[1] = {{big, BIG, READ_WRITE, GLOBAL}};
    OK(add_to_cd_via_copy(cd, all, 1)); /* add_to_cd_via_copy 1GB of READ-WRITE data */
    OK(cd_get_stats(cd, &st));
    CHECK(st.bytes_added == BIG);
    memset(big, 2, BIG);                   /* compute */
    OK(advance_cd_point_in_time(cd));      /* updates all of it and demotes it to READ-ONLY */
    OK(cd_get_stats(cd, &st));
    CHECK(st.bytes_advanced == BIG);
    CHECK(labels(cd, e, 8) == 1 && e[0].spec.addr_tp == READ_ONLY);

    struct cd_addrspec nine[1] = {{big + 1000, 9, READ_WRITE, GLOBAL}};
    OK(add_to_cd_via_copy(cd, nine, 1));   /* add_to_cd_via_copy 9 bytes of READ-WRITE data */
    OK(cd_get_stats(cd, &st));
    CHECK(st.bytes_added == BIG);          /* a promotion copies nothing */
    CHECK(labels(cd, e, 8) == 3);          /* only that portion is promoted */
    CHECK(e[0].spec.addr_tp == READ_ONLY && e[1].spec.addr_tp == READ_WRITE &&
          e[2].spec.addr_tp == READ_ONLY);
    CHECK(e[1].spec.address == big + 1000 && e[1].spec.length == 9);
    memset(big + 1000, 3, 9);
    OK(advance_cd_point_in_time(cd));      /* updates only 9 bytes */
    OK(cd_get_stats(cd, &st));
    CHECK(st.bytes_advanced == BIG + 9);
    CHECK(labels(cd, e, 8) == 1 && e[0].spec.addr_tp == READ_ONLY); /* merged again */

    memset(big, 7, 4096);
    OK(restore_cd(cd));
    CHECK(big[0] == 2 && big[999] == 2 && big[1000] == 3 && big[1008] == 3 && big[1009] == 2);

    /* Demotion: re-adding a READ_WRITE entry as READ_ONLY; the next advance skips it. */
    OK(add_to_cd_via_copy(cd, nine, 1));
    struct cd_addrspec nine_ro[1] = {{big + 1000, 9, READ_ONLY, GLOBAL}};
    OK(add_to_cd_via_copy(cd, nine_ro, 1));
    OK(advance_cd_point_in_time(cd));
    OK(cd_get_stats(cd, &st));
    CHECK(st.bytes_advanced == BIG + 9);

    /* Advance discards this CD's MPI log. */
    char *ent = malloc(16);
    CHECK(ent != NULL);
    strcpy(ent, "log entry");
    OK(add_MPI_log_to_cd(cd, ent, 16));
    struct cd_info info;
    OK(cd_get_info(cd, &info));
    CHECK(info.log_entries == 1);
    OK(advance_cd_point_in_time(cd));
    OK(cd_get_info(cd, &info));
    CHECK(info.log_entries == 0);

    /* Only a CD without children can advance: the spec's own test catches it. */
    int y = 5;
    struct cd_addrspec ay[1] = {{&y, sizeof y, READ_WRITE, GLOBAL}};
    cd_handle child = must_create(cd, COMM_LOGGING_INHERIT, NULL);
    int reacted = 0;
    if (advance_cd_point_in_time(cd) == FAILURE) {
        reacted = 1;
    }
    CHECK(reacted);
    CHECK(cd_last_error() == CD_ERR_HAS_CHILDREN);
    CHECK(advance_cd_point_in_time(cd) != SUCCESS);
    char msg[128];
    size_t n;
    OK(cd_last_error_message(msg, sizeof msg, &n));
    CHECK(n > 0 && strstr(msg, "advance_cd_point_in_time") != NULL);

    /* A child's advance commits it implicitly first: y moves to the parent with its value of
     * the child's point in time, and the child lives on. */
    OK(add_to_cd_via_copy(child, ay, 1)); /* child: y=5 */
    y = 6;
    EXPECT(CD_ERR_RANGE_NOT_FOUND, cd_read_saved(cd, &y, sizeof y, &n));
    OK(advance_cd_point_in_time(child));
    CHECK(saved_int(cd, &y) == 5); /* the parent keeps the older point in time */
    CHECK(saved_int(child, &y) == 6);
    OK(cd_validate_handle(child));
    y = 7;
    OK(advance_cd_point_in_time(child)); /* again: the parent already holds y */
    CHECK(saved_int(cd, &y) == 5 && saved_int(child, &y) == 6); /* RO after the 1st advance */
    OK(add_to_cd_via_copy(child, ay, 1));                       /* promote, then advance */
    OK(advance_cd_point_in_time(child));
    CHECK(saved_int(child, &y) == 7);
    y = 0;
    OK(restore_cd(child));
    CHECK(y == 7);
    OK(restore_cd(cd)); /* the parent's point in time: y=5, and the child is discarded */
    CHECK(y == 5);
    EXPECT(CD_ERR_STALE_HANDLE, advance_cd_point_in_time(child) == FAILURE ? cd_last_error() : 0);

    OK(commit_cd(cd));
    free(big);
    printf("promotion_advance: ok\n");
    return 0;
}
