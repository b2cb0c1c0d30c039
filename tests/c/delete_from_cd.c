/* delete_from_cd (spec use case): calculator() adds its automatic variable y to the caller's
 * CD, restores on error, and deletes y before returning; main's x stays protected. Also:
 * deleting a range that is not in the CD fails and changes nothing, only this CD is searched,
 * and deleting the last entry does not discard the CD. */
#include "check.h"

static int comp_calls;

/* Fails on the first call only. */
static int compute_stuff(int v) {
    (void)v;
    return ++comp_calls == 1;
}

static int calculator(cd_handle cd) { /* Main passed in the cd handle 'root' */
    int comp_error;
    int y = 0; /* Automatic variable */
    struct cd_addrspec ay[1] = {{&y, sizeof(y), READ_WRITE, GLOBAL}};
    OK(add_to_cd_via_copy(cd, ay, 1)); /* cd contains: x=0 and y=0 */
    struct cd_info info;
    OK(cd_get_info(cd, &info));
    CHECK(info.tracked_bytes == 2 * sizeof(int));
TOP:
    y += 1; /* y=1 */
    comp_error = compute_stuff(y);
    if (comp_error) {
        OK(restore_cd(cd)); /* Restore app memory to: x=0 and y=0 */
        CHECK(y == 0);
        goto TOP;
    } else {
        OK(delete_from_cd(cd, ay, 1)); /* cd contains: x=0 */
    }
    OK(cd_get_info(cd, &info));
    CHECK(info.tracked_bytes == sizeof(int));
    return y;
}

int main(void) {
    char *storage_info = NULL;
    int cd_error, comp_error;
    int x = 0, answer;
    int restores = 0;
    cd_handle root = create_cd(NULL, storage_info, COMM_LOGGING_DISABLED, "root", &cd_error);
    CHECK(cd_error == SUCCESS);
    struct cd_addrspec ax[1] = {{&x, sizeof(x), READ_WRITE, GLOBAL}};
    OK(add_to_cd_via_copy(root, ax, 1)); /* root contains: x=0 */
TOP:
    answer = calculator(root);
    CHECK(answer == 1);
    x += 1;
    comp_error = (restores == 0); /* fail once at this level too */
    if (comp_error) {
        restores++;
        OK(restore_cd(root)); /* Restores x = 0 */
        CHECK(x == 0);
        goto TOP;
    }
    CHECK(x == 1);

    /* Deleting what the CD does not hold fails and changes nothing. */
    int w = 0;
    struct cd_addrspec aw[1] = {{&w, sizeof(w), READ_WRITE, GLOBAL}};
    struct cd_addrspec both[2] = {{&x, sizeof(x), READ_WRITE, GLOBAL},
                                  {&w, sizeof(w), READ_WRITE, GLOBAL}};
    EXPECT(CD_ERR_RANGE_NOT_FOUND, delete_from_cd(root, aw, 1));
    EXPECT(CD_ERR_RANGE_NOT_FOUND, delete_from_cd(root, both, 2));
    x = 5;
    OK(restore_cd(root));
    CHECK(x == 0); /* x still protected: the failed delete was atomic */

    /* Only the CD itself is searched: a child cannot delete its parent's entry. */
    cd_handle child = must_create(root, COMM_LOGGING_INHERIT, NULL);
    EXPECT(CD_ERR_RANGE_NOT_FOUND, delete_from_cd(child, ax, 1));
    OK(commit_cd(child));

    /* Part of an entry can be deleted; the rest stays. */
    int arr[4] = {1, 2, 3, 4};
    struct cd_addrspec aa[1] = {{arr, sizeof arr, READ_WRITE, GLOBAL}};
    struct cd_addrspec mid[1] = {{&arr[1], 2 * sizeof(int), READ_WRITE, GLOBAL}};
    OK(add_to_cd_via_copy(root, aa, 1));
    OK(delete_from_cd(root, mid, 1));
    arr[0] = arr[1] = arr[2] = arr[3] = 9;
    OK(restore_cd(root));
    CHECK(arr[0] == 1 && arr[1] == 9 && arr[2] == 9 && arr[3] == 4);

    /* Deleting the last entries does not discard the CD. */
    struct cd_addrspec rest[3] = {{&x, sizeof(x), READ_WRITE, GLOBAL},
                                  {&arr[0], sizeof(int), READ_WRITE, GLOBAL},
                                  {&arr[3], sizeof(int), READ_WRITE, GLOBAL}};
    OK(delete_from_cd(root, rest, 3));
    OK(cd_validate_handle(root));
    struct cd_info info;
    OK(cd_get_info(root, &info));
    CHECK(info.ranges == 0);
    OK(commit_cd(root)); /* This commit will discard the CD 'root'. */
    printf("delete_from_cd: ok\n");
    return 0;
}
