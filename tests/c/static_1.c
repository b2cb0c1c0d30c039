/* STATIC 1 (spec, "CDs representing static points in time"): a child CD stores changed data
 * that is not used during a commit or restore of its parent. The program is the spec's, with
 * compute_stuff() failing once in each function so that every restore path runs; then the
 * table "X's Value under different circumstances at time T4" is checked column by column. */
#include "check.h"
#include <string.h>

int x = 0;
static int calls = 0;
static int fail_on_call[8];

/* Fails (returns 1) on the calls listed in fail_on_call. */
static int compute_stuff(void) {
    int this_call = ++calls;
    for (size_t i = 0; i < sizeof fail_on_call / sizeof fail_on_call[0]; i++)
        if (fail_on_call[i] == this_call) return 1;
    return 0;
}

static int b(cd_handle parent) {
    int error, compute_error;
    struct cd_addrspec addrlist[1] = {{&x, sizeof(x), READ_WRITE, GLOBAL}};
    cd_handle cd_b = create_cd(parent, NULL, MPI_LOGGING_INHERIT, NULL, &error);
    CHECK(error == SUCCESS);
    OK(add_to_cd_via_copy(cd_b, addrlist, 1)); /* cd_b contains: x=1 */
    CHECK(saved_int(cd_b, &x) == 1);
TOP:
    x += 1; /* x=2 */
    compute_error = compute_stuff();
    if (compute_error) {
        OK(restore_cd(cd_b)); /* Restore app memory to: x=1 */
        CHECK(x == 1);
        goto TOP;
    } else {
        CHECK(x == 2);
        OK(commit_cd(cd_b)); /* Commit to parent(cd_a): x=0 (parent wins) */
        CHECK(saved_int(parent, &x) == 0);
    }
    return 0; /* do_some_other_stuff_that_may_error() succeeds */
}

static int a(cd_handle parent) {
    int error, compute_error, function_error;
    struct cd_addrspec addrlist[1] = {{&x, sizeof(x), READ_WRITE, GLOBAL}};
    cd_handle cd_a = create_cd(parent, NULL, MPI_LOGGING_INHERIT, NULL, &error);
    CHECK(error == SUCCESS);
    OK(add_to_cd_via_copy(cd_a, addrlist, 1)); /* cd_a contains: x=0 */
TOP:
    x += 1; /* x=1 */
    compute_error = compute_stuff();
    if (compute_error) {
        OK(restore_cd(cd_a)); /* Restore app memory to: x=0 */
        CHECK(x == 0);
        goto TOP;
    }
    function_error = b(cd_a);
    if (function_error) {
        OK(restore_cd(cd_a));
        goto TOP;
    } else {
        OK(commit_cd(cd_a)); /* Commit to parent(root): x=0 (child wins) */
        CHECK(saved_int(parent, &x) == 0);
    }
    return 0;
}

/* Builds the state at time T4: root, cd_a (x=0), cd_b (x=1), application x=2. */
static void at_t4(cd_handle *root, cd_handle *cd_a, cd_handle *cd_b) {
    struct cd_addrspec as[1] = {{&x, sizeof(x), READ_WRITE, GLOBAL}};
    x = 0;
    *root = must_create(NULL, COMM_LOGGING_ENABLED, "root");
    *cd_a = must_create(*root, MPI_LOGGING_INHERIT, NULL);
    OK(add_to_cd_via_copy(*cd_a, as, 1));
    x += 1;
    *cd_b = must_create(*cd_a, MPI_LOGGING_INHERIT, NULL);
    OK(add_to_cd_via_copy(*cd_b, as, 1));
    x += 1;
    /* Normal column */
    CHECK(x == 2);
    CHECK(saved_int(*cd_b, &x) == 1);
    CHECK(saved_int(*cd_a, &x) == 0);
}

static void finish(cd_handle root, cd_handle cd_a) {
    OK(commit_cd(cd_a));
    OK(commit_cd(root));
}

int main(void) {
    char *storage_info = NULL;
    int error;

    /* The spec's program: compute fails in a() (call 1), then in b() (call 3). */
    fail_on_call[0] = 1;
    fail_on_call[1] = 3;
    cd_handle root = create_cd(NULL, storage_info, COMM_LOGGING_ENABLED, "root", &error);
    CHECK(root != NULL && error == SUCCESS);
    a(root); /* Upon return from function a(), the CD 'root' contains x=0 */
    CHECK(saved_int(root, &x) == 0);
    CHECK(x == 2);
    OK(commit_cd(root)); /* This commit will discard the CD 'root'. */
    EXPECT(CD_ERR_STALE_HANDLE, restore_cd(root));

    cd_handle cd_a, cd_b;
    /* Restore CD_B: x=1; CD_B=1; CD_A=0 */
    at_t4(&root, &cd_a, &cd_b);
    OK(restore_cd(cd_b));
    CHECK(x == 1 && saved_int(cd_b, &x) == 1 && saved_int(cd_a, &x) == 0);
    OK(commit_cd(cd_b));
    finish(root, cd_a);

    /* Restore CD_A: x=0 (parent wins); CD_B discarded; CD_A=0 */
    at_t4(&root, &cd_a, &cd_b);
    OK(restore_cd(cd_a));
    CHECK(x == 0 && saved_int(cd_a, &x) == 0);
    EXPECT(CD_ERR_STALE_HANDLE, cd_validate_handle(cd_b));
    CHECK(cd_current() == cd_a);
    finish(root, cd_a);

    /* Commit CD_B: x=2; CD_B discarded; CD_A=0 (parent wins) */
    at_t4(&root, &cd_a, &cd_b);
    OK(commit_cd(cd_b));
    CHECK(x == 2 && saved_int(cd_a, &x) == 0);
    EXPECT(CD_ERR_STALE_HANDLE, cd_validate_handle(cd_b));
    finish(root, cd_a);

    printf("static_1: ok\n");
    return 0;
}
