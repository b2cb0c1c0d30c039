/* Regen ordering (spec, add_to_cd_via_regen and restore_cd): inside a CD, COPY entries are
 * restored first, then PARENT entries, then REGEN entries, so a regen function may read
 * memory restored just before it. Also: regen entries must be READ_ONLY, regen may not be
 * NULL, a failing regen fails the restore, a regen calling the CD API gets CD_ERR_REENTRANT,
 * adjacent ranges of one function are passed in one call, a failing regen's error names the
 * ranges not restored, and restore is repeatable. */
#include "check.h"
#include <string.h>

static int n = 3;          /* COPY in the child */
static int base = 1000;    /* in the root, PARENT in the child */
static int table[16];      /* REGEN in the child: table[i] = base + n * i */
static int regen_calls, regen_ranges, regen_status, regen_reenter_rc;
static int seen_n, seen_base;

static int fill_table(struct cd_addrspec addrlist[], int ascount) {
    regen_calls++;
    regen_ranges += ascount;
    seen_n = n;
    seen_base = base;
    for (int k = 0; k < ascount; k++) {
        CHECK(addrlist[k].addr_tp == READ_ONLY);
        int *p = addrlist[k].address;
        for (size_t j = 0; j < addrlist[k].length / sizeof(int); j++)
            p[j] = base + n * (int)((p + j) - table);
    }
    return regen_status;
}

static int reenter(struct cd_addrspec addrlist[], int ascount) {
    (void)addrlist;
    (void)ascount;
    regen_reenter_rc = commit_cd(CURRENT_CD);
    return 0;
}

int main(void) {
    struct cd_addrspec a_n[1] = {{&n, sizeof n, READ_WRITE, GLOBAL}};
    struct cd_addrspec a_base[1] = {{&base, sizeof base, READ_WRITE, GLOBAL}};
    struct cd_addrspec a_base_ro[1] = {{&base, sizeof base, READ_ONLY, GLOBAL}};
    /* Two adjacent halves of the table, added separately: merged for the regen call. */
    struct cd_addrspec a_tab[2] = {{&table[0], 8 * sizeof(int), READ_ONLY, GLOBAL},
                                   {&table[8], 8 * sizeof(int), READ_ONLY, GLOBAL}};
    struct cd_addrspec a_tab_rw[1] = {{table, sizeof table, READ_WRITE, GLOBAL}};

    cd_handle root = must_create(NULL, COMM_LOGGING_DISABLED, "root");
    OK(add_to_cd_via_copy(root, a_base, 1));
    cd_handle child = must_create(root, COMM_LOGGING_INHERIT, NULL);

    /* Misuse first: nothing is added. */
    EXPECT(CD_ERR_READ_WRITE_REGEN, add_to_cd_via_regen(child, a_tab_rw, 1, fill_table));
    EXPECT(CD_ERR_NULL_POINTER, add_to_cd_via_regen(child, a_tab, 2, NULL));
    struct cd_info info;
    OK(cd_get_info(child, &info));
    CHECK(info.ranges == 0);

    OK(add_to_cd_via_copy(child, a_n, 1));
    OK(add_to_cd_via_parent(child, a_base_ro, 1));
    OK(add_to_cd_via_regen(child, &a_tab[0], 1, fill_table));
    OK(add_to_cd_via_regen(child, &a_tab[1], 1, fill_table));
    /* A READ_WRITE re-add would promote a regen entry: refused. */
    EXPECT(CD_ERR_PROMOTE_REGEN, add_to_cd_via_copy(child, a_tab_rw, 1));

    /* Everything is lost. */
    n = -1;
    base = -1;
    for (int i = 0; i < 16; i++) table[i] = -1;
    OK(restore_cd(child));
    /* The regen function saw n (COPY) and base (PARENT) already restored. */
    CHECK(seen_n == 3 && seen_base == 1000);
    CHECK(n == 3 && base == 1000);
    for (int i = 0; i < 16; i++) CHECK(table[i] == 1000 + 3 * i);
    CHECK(regen_calls == 1 && regen_ranges == 1); /* one call, one merged range */
    struct cd_stats st;
    OK(cd_get_stats(child, &st));
    CHECK(st.regen_calls == 1 && st.restores == 1);

    /* Restoring again gives the same memory (the regen function is idempotent). */
    table[5] = 0;
    OK(restore_cd(child));
    for (int i = 0; i < 16; i++) CHECK(table[i] == 1000 + 3 * i);
    CHECK(regen_calls == 2);

    /* A failing regen function fails the restore, with its own code. */
    regen_status = 7;
    EXPECT(CD_ERR_REGEN_FAILED, restore_cd(child));
    /* The message names exactly the ranges not restored: the table (n and base were). */
    char message[512], expected[128];
    size_t message_n;
    OK(cd_last_error_message(message, sizeof message, &message_n));
    snprintf(expected, sizeof expected, "not restored (the others are): %#lx..%#lx",
             (unsigned long)table, (unsigned long)(table + 16));
    CHECK(strstr(message, expected) != NULL);
    regen_status = 0;
    OK(restore_cd(child)); /* and the restore can simply be tried again */

    /* The CD API may not be called from inside a regen function. */
    int t2[4];
    struct cd_addrspec a_t2[1] = {{t2, sizeof t2, READ_ONLY, GLOBAL}};
    OK(add_to_cd_via_regen(child, a_t2, 1, reenter));
    OK(restore_cd(child));
    CHECK(regen_reenter_rc == CD_ERR_REENTRANT);
    OK(cd_validate_handle(child)); /* the reentrant commit did nothing */

    OK(commit_cd(child));
    OK(commit_cd(root));
    printf("regen_order: ok\n");
    return 0;
}
