/* Committing CDs (spec, "Committing CDs" table), plus the commit rules: entries only in the
 * child move up, the parent's win, READ_WRITE in the child promotes the parent's READ_ONLY,
 * CONSTRAINED entries never move, a CD with children cannot be committed, and a committed
 * CD's handle is invalid. */
#include "check.h"

int x = 0, y = 0;

/* The access label of the entry holding `p` in `cd`. */
static int label_of(cd_handle cd, const void *p) {
    struct cd_entry_info e[16];
    size_t n = 0;
    OK(cd_get_entries(cd, e, 16, &n));
    for (size_t i = 0; i < n; i++) {
        char *s = e[i].spec.address;
        if ((char *)p >= s && (char *)p < s + e[i].spec.length) return e[i].spec.addr_tp;
    }
    return -1;
}

int main(void) {
    struct cd_addrspec ax[1] = {{&x, sizeof(x), READ_WRITE, GLOBAL}};
    struct cd_addrspec axy[2] = {{&x, sizeof(x), READ_WRITE, GLOBAL},
                                 {&y, sizeof(y), READ_WRITE, GLOBAL}};

    cd_handle root = must_create(NULL, COMM_LOGGING_ENABLED, "root");
    cd_handle cd_a = must_create(root, COMM_LOGGING_INHERIT, NULL);
    OK(add_to_cd_via_copy(cd_a, ax, 1)); /* x=0 */
    x += 1;
    cd_handle cd_b = must_create(cd_a, COMM_LOGGING_INHERIT, NULL);
    OK(add_to_cd_via_copy(cd_b, axy, 2)); /* x=1, y=0 */
    x += 1, y += 1;

    /* Normal: memory X=2, Y=1; CD_B X=1, Y=0; CD_A X=0; Root EMPTY */
    CHECK(x == 2 && y == 1);
    CHECK(saved_int(cd_b, &x) == 1 && saved_int(cd_b, &y) == 0);
    CHECK(saved_int(cd_a, &x) == 0);
    struct cd_info info;
    OK(cd_get_info(root, &info));
    CHECK(info.ranges == 0 && info.children == 1);

    /* Committing a CD with uncommitted children is an error. */
    EXPECT(CD_ERR_HAS_CHILDREN, commit_cd(cd_a));
    EXPECT(CD_ERR_HAS_CHILDREN, commit_cd(root));

    /* Commit CD_B: CD_B DISCARDED; CD_A X=0 (parent wins), Y=0 (child wins) */
    OK(commit_cd(cd_b));
    CHECK(x == 2 && y == 1);
    EXPECT(CD_ERR_STALE_HANDLE, cd_validate_handle(cd_b));
    CHECK(saved_int(cd_a, &x) == 0 && saved_int(cd_a, &y) == 0);

    /* Commit CD_A: Root X=0 (child wins), Y=0 (child wins) */
    OK(commit_cd(cd_a));
    CHECK(saved_int(root, &x) == 0 && saved_int(root, &y) == 0);
    CHECK(cd_current() == root);

    /* Commit Root: DISCARDED */
    OK(commit_cd(root));
    EXPECT(CD_ERR_STALE_HANDLE, commit_cd(root));
    CHECK(x == 2 && y == 1);
    CHECK(cd_current() == NULL);

    /* READ_WRITE in the child promotes the parent's READ_ONLY entry; CONSTRAINED stays. */
    int local = 7;
    struct cd_addrspec ro[1] = {{&x, sizeof(x), READ_ONLY, GLOBAL}};
    struct cd_addrspec rw[1] = {{&x, sizeof(x), READ_WRITE, GLOBAL}};
    struct cd_addrspec cons[1] = {{&local, sizeof(local), READ_WRITE, CONSTRAINED}};
    root = must_create(NULL, COMM_LOGGING_DISABLED, "promote");
    OK(add_to_cd_via_copy(root, ro, 1));
    CHECK(label_of(root, &x) == READ_ONLY);
    cd_handle child = must_create(root, COMM_LOGGING_INHERIT, NULL);
    OK(add_to_cd_via_copy(child, rw, 1));
    OK(add_to_cd_via_copy(child, cons, 1));
    OK(commit_cd(child));
    CHECK(label_of(root, &x) == READ_WRITE);
    CHECK(label_of(root, &local) == -1); /* CONSTRAINED never moves up */
    OK(cd_get_info(root, &info));
    CHECK(info.ranges == 1);
    OK(commit_cd(root));

    printf("committing: ok\n");
    return 0;
}
