/* add_to_cd_via_parent rules (spec): the range, not the data, is tracked; a restore takes the
 * data from the nearest ancestor holding it (any ancestor, not only the parent); the range
 * must be held by an ancestor, entirely; a range an ancestor restores with a regen function
 * cannot be referred to; a root has no parent to refer to. */
#include "check.h"

static int a[4] = {1, 2, 3, 4};
static int b = 10;
static int g = 20;
static int uncovered = 30;
static int big[8];

static int regen_g(struct cd_addrspec addrlist[], int ascount) {
    (void)addrlist;
    (void)ascount;
    g = 20;
    return 0;
}

int main(void) {
    struct cd_addrspec aa[1] = {{a, sizeof a, READ_WRITE, GLOBAL}};
    struct cd_addrspec ab[1] = {{&b, sizeof b, READ_WRITE, GLOBAL}};
    struct cd_addrspec ag[1] = {{&g, sizeof g, READ_ONLY, GLOBAL}};
    struct cd_addrspec au[1] = {{&uncovered, sizeof uncovered, READ_ONLY, GLOBAL}};

    cd_handle root = must_create(NULL, COMM_LOGGING_DISABLED, "root");
    EXPECT(CD_ERR_NO_PARENT, add_to_cd_via_parent(root, aa, 1));
    OK(add_to_cd_via_copy(root, aa, 1));     /* a = {1,2,3,4} in the root */
    struct cd_addrspec half[1] = {{big, 4 * sizeof(int), READ_ONLY, GLOBAL}};
    OK(add_to_cd_via_copy(root, half, 1));   /* big[0..4) in the root */
    OK(add_to_cd_via_regen(root, ag, 1, regen_g));
    a[0] = 100;                              /* the application moves on */

    cd_handle mid = must_create(root, COMM_LOGGING_INHERIT, NULL);
    OK(add_to_cd_via_copy(mid, ab, 1));      /* b = 10 in the middle CD */
    cd_handle leaf = must_create(mid, COMM_LOGGING_INHERIT, NULL);

    /* Not in any ancestor: error, nothing added. */
    EXPECT(CD_ERR_NOT_IN_ANCESTOR, add_to_cd_via_parent(leaf, au, 1));
    /* Partly in an ancestor: error. */
    struct cd_addrspec partly[1] = {{&big[2], 4 * sizeof(int), READ_ONLY, GLOBAL}};
    EXPECT(CD_ERR_NOT_IN_ANCESTOR, add_to_cd_via_parent(leaf, partly, 1));
    /* Restored by a regen function in an ancestor: error. */
    EXPECT(CD_ERR_REGEN_ANCESTOR, add_to_cd_via_parent(leaf, ag, 1));
    struct cd_info info;
    OK(cd_get_info(leaf, &info));
    CHECK(info.ranges == 0);

    /* From the grandparent (a) and from the parent (b). */
    OK(add_to_cd_via_parent(leaf, aa, 1));
    OK(add_to_cd_via_parent(leaf, ab, 1));
    OK(cd_get_info(leaf, &info));
    CHECK(info.stored_bytes == 0); /* the data is not copied */
    struct cd_entry_info e[4];
    size_t count;
    OK(cd_get_entries(leaf, e, 4, &count));
    CHECK(count == 2 && e[0].restoration == CD_RESTORE_PARENT &&
          e[1].restoration == CD_RESTORE_PARENT);

    a[1] = 200;
    b = 11;
    OK(restore_cd(leaf));
    /* The data of the point in time of the ancestors that hold it. */
    CHECK(a[0] == 1 && a[1] == 2 && a[2] == 3 && a[3] == 4);
    CHECK(b == 10);

    /* An entry the middle CD also refers to via parent resolves further up. */
    struct cd_addrspec a0[1] = {{&a[0], sizeof(int), READ_ONLY, GLOBAL}};
    OK(commit_cd(leaf));
    OK(add_to_cd_via_parent(mid, a0, 1));
    leaf = must_create(mid, COMM_LOGGING_INHERIT, NULL);
    OK(add_to_cd_via_parent(leaf, a0, 1)); /* mid's entry is PARENT, the root's is COPY */
    a[0] = -5;
    OK(restore_cd(leaf));
    CHECK(a[0] == 1);

    /* Advance does not update PARENT entries: the data stays the ancestor's. */
    a[0] = 42;
    struct cd_stats before, after;
    OK(cd_get_stats(leaf, &before));
    OK(advance_cd_point_in_time(leaf));
    OK(cd_get_stats(leaf, &after));
    CHECK(after.bytes_advanced == before.bytes_advanced);
    OK(restore_cd(leaf));
    CHECK(a[0] == 1);

    OK(commit_cd(leaf));
    OK(commit_cd(mid));
    OK(commit_cd(root));
    printf("via_parent: ok\n");
    return 0;
}
