/* STATIC 2 (spec): a child CD stores new, unchanged data (y, and z conditionally) that is used
 * during a commit or restore. The spec's program runs with cray_is_profitable() both ways, and
 * the table "States under different circumstances at time T4" is checked column by column. */
#include "check.h"

int x = 0, y = 0, z = 0;
static int profitable;
static int fail_next;

static int cray_is_profitable(void) { return profitable; }

/* Fails once when fail_next is set. */
static int compute_stuff(void) {
    if (fail_next) {
        fail_next = 0;
        return 1;
    }
    return 0;
}

static int b(cd_handle parent) {
    int error, compute_error;
    struct cd_addrspec addrlist[2] = {{&x, sizeof(x), READ_WRITE, GLOBAL},
                                      {&y, sizeof(y), READ_WRITE, GLOBAL}};
    cd_handle cd_b = create_cd(parent, NULL, MPI_LOGGING_INHERIT, NULL, &error);
    CHECK(error == SUCCESS);
    OK(add_to_cd_via_copy(cd_b, addrlist, 2)); /* cd_b contains: x=1 and y=0 */
    if (cray_is_profitable()) {
        /* Note: this is a single variable and not an array. */
        struct cd_addrspec addrlist1 = {&z, sizeof(z), READ_WRITE, GLOBAL};
        OK(add_to_cd_via_copy(cd_b, &addrlist1, 1)); /* cd_b contains: x=1, y=0, z=0 */
    }
    fail_next = 1;
TOP:
    x += 1; /* x=2 */
    y += 1; /* y=1 */
    if (cray_is_profitable()) z += 1;
    compute_error = compute_stuff();
    if (compute_error) {
        OK(restore_cd(cd_b)); /* Restore app memory to: x=1, y=0, and z=0 (Conditionally) */
        CHECK(x == 1 && y == 0 && z == 0);
        goto TOP;
    } else {
        OK(commit_cd(cd_b)); /* Commit to parent(cd_a): x=0 (parent wins), y=0, z=0 (child wins) */
        CHECK(saved_int(parent, &x) == 0 && saved_int(parent, &y) == 0);
        if (profitable) CHECK(saved_int(parent, &z) == 0);
        else CHECK(cd_read_saved(parent, &z, sizeof z, &error) == CD_ERR_RANGE_NOT_FOUND);
    }
    return 0;
}

static int a(cd_handle parent) {
    int error, compute_error, function_error;
    struct cd_addrspec addrlist[1] = {{&x, sizeof(x), READ_WRITE, GLOBAL}};
    cd_handle cd_a = create_cd(parent, NULL, MPI_LOGGING_INHERIT, NULL, &error);
    CHECK(error == SUCCESS);
    OK(add_to_cd_via_copy(cd_a, addrlist, 1)); /* cd_a contains: x=0 */
    fail_next = 1;
TOP:
    x += 1; /* x=1 */
    compute_error = compute_stuff();
    if (compute_error) {
        OK(restore_cd(cd_a)); /* x=0, y=0 (y is not restored, but this is its value) */
        CHECK(x == 0 && y == 0);
        goto TOP;
    }
    function_error = b(cd_a);
    if (function_error) {
        OK(restore_cd(cd_a));
        goto TOP;
    } else {
        OK(commit_cd(cd_a)); /* Commit to parent(root): x=0 (child wins), y=0 (child wins) */
    }
    return 0;
}

static void at_t4(cd_handle *root, cd_handle *cd_a, cd_handle *cd_b) {
    struct cd_addrspec ax[1] = {{&x, sizeof(x), READ_WRITE, GLOBAL}};
    struct cd_addrspec axy[2] = {{&x, sizeof(x), READ_WRITE, GLOBAL},
                                 {&y, sizeof(y), READ_WRITE, GLOBAL}};
    struct cd_addrspec az = {&z, sizeof(z), READ_WRITE, GLOBAL};
    x = y = z = 0;
    *root = must_create(NULL, COMM_LOGGING_ENABLED, "root");
    *cd_a = must_create(*root, MPI_LOGGING_INHERIT, NULL);
    OK(add_to_cd_via_copy(*cd_a, ax, 1));
    x += 1;
    *cd_b = must_create(*cd_a, MPI_LOGGING_INHERIT, NULL);
    OK(add_to_cd_via_copy(*cd_b, axy, 2));
    OK(add_to_cd_via_copy(*cd_b, &az, 1));
    x += 1, y += 1, z += 1;
    /* Normal: X=2, Y=1, Z=1; CD_B: X=1, Y=0, Z=0; CD_A: X=0 */
    CHECK(x == 2 && y == 1 && z == 1);
    CHECK(saved_int(*cd_b, &x) == 1 && saved_int(*cd_b, &y) == 0 && saved_int(*cd_b, &z) == 0);
    CHECK(saved_int(*cd_a, &x) == 0);
    CHECK(cd_read_saved(*cd_a, &y, sizeof y, &x) == CD_ERR_RANGE_NOT_FOUND);
}

int main(void) {
    int error;
    for (profitable = 0; profitable <= 1; profitable++) {
        x = y = z = 0;
        cd_handle root = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "root", &error);
        CHECK(error == SUCCESS);
        a(root); /* root contains x=0, y=0, z=0 (Conditionally) */
        CHECK(saved_int(root, &x) == 0 && saved_int(root, &y) == 0);
        if (profitable) CHECK(saved_int(root, &z) == 0);
        OK(commit_cd(root));
    }

    cd_handle root, cd_a, cd_b;
    /* Restore CD_B: X=1, Y=0, Z=0; CD_B unchanged; CD_A X=0 */
    at_t4(&root, &cd_a, &cd_b);
    OK(restore_cd(cd_b));
    CHECK(x == 1 && y == 0 && z == 0);
    CHECK(saved_int(cd_b, &x) == 1 && saved_int(cd_b, &y) == 0 && saved_int(cd_b, &z) == 0);
    CHECK(saved_int(cd_a, &x) == 0);
    OK(commit_cd(cd_b));
    OK(commit_cd(cd_a));
    OK(commit_cd(root));

    /* Restore CD_A: X=0 (parent wins), Y=0 (child wins), Z=0 (child wins); CD_B discarded */
    at_t4(&root, &cd_a, &cd_b);
    OK(restore_cd(cd_a));
    CHECK(x == 0 && y == 0 && z == 0);
    EXPECT(CD_ERR_STALE_HANDLE, cd_validate_handle(cd_b));
    CHECK(saved_int(cd_a, &x) == 0);
    OK(commit_cd(cd_a));
    OK(commit_cd(root));

    /* Commit CD_B: memory X=2, Y=1, Z=1; CD_A: X=0 (parent wins), Y=0, Z=0 (child wins) */
    at_t4(&root, &cd_a, &cd_b);
    OK(commit_cd(cd_b));
    CHECK(x == 2 && y == 1 && z == 1);
    CHECK(saved_int(cd_a, &x) == 0 && saved_int(cd_a, &y) == 0 && saved_int(cd_a, &z) == 0);
    OK(commit_cd(cd_a));
    OK(commit_cd(root));

    printf("static_2: ok\n");
    return 0;
}
