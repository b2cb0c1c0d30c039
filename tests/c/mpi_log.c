/* The MPI-log functions (spec, "Containment Domain API for MPI Interposition Layer"): a FIFO
 * of malloc'd entries per CD. restore_cd starts a replay from the first entry; each
 * get_MPI_log_from_cd returns the next one (the very pointer added), NULL when exhausted;
 * cd_get_MPI_log_entry (an extension) the same with its length;
 * adding during a replay is an error; the CD frees the entries (valgrind checks that this
 * program leaks nothing). A child's log merges into its parent on commit and restore. */
#include "check.h"
#include <string.h>

static void *entry(const char *text) {
    char *p = malloc(strlen(text) + 1);
    CHECK(p != NULL);
    strcpy(p, text);
    return p;
}

static void add(cd_handle cd, const char *text) {
    OK(add_MPI_log_to_cd(cd, entry(text), (int)strlen(text) + 1));
}

/* The next replayed entry must be `text`. */
static void expect_next(cd_handle cd, const char *text) {
    int error = -1;
    char *p = get_MPI_log_from_cd(cd, &error);
    CHECK(error == SUCCESS);
    if (text == NULL) {
        CHECK(p == NULL);
    } else {
        CHECK(p != NULL && strcmp(p, text) == 0);
    }
}

int main(void) {
    int error;
    cd_handle root = must_create(NULL, COMM_LOGGING_ENABLED, "root");

    /* No replay yet: nothing to get. */
    expect_next(root, NULL);

    void *first = entry("send 1");
    OK(add_MPI_log_to_cd(root, first, 7));
    add(root, "recv 2");
    add(root, "bcast 3");
    struct cd_info info;
    OK(cd_get_info(root, &info));
    CHECK(info.log_entries == 3 && info.log_bytes == 7 + 7 + 8 && info.replaying == 0);

    OK(restore_cd(root)); /* initializes get_MPI_log_from_cd to the first entry */
    OK(cd_get_info(root, &info));
    CHECK(info.replaying == 1);
    CHECK(get_MPI_log_from_cd(root, &error) == first); /* the same pointer */
    /* Adding during the replay is an error; the caller keeps its buffer. */
    void *late = entry("late");
    EXPECT(CD_ERR_LOG_REPLAYING, add_MPI_log_to_cd(root, late, 5));
    free(late);
    expect_next(root, "recv 2");
    expect_next(root, "bcast 3");
    expect_next(root, NULL); /* exhausted: the replay is over */
    OK(cd_get_info(root, &info));
    CHECK(info.replaying == 0);
    add(root, "send 4"); /* logging again */

    /* A second restore replays everything from the start, FIFO. */
    OK(restore_cd(root));
    CHECK(get_MPI_log_from_cd(root, NULL) == first); /* error may be NULL */
    expect_next(root, "recv 2");
    expect_next(root, "bcast 3");
    expect_next(root, "send 4");
    expect_next(root, NULL);

    /* cd_get_MPI_log_entry: the same FIFO, each entry with its length, read-only. */
    OK(restore_cd(root));
    const void *bytes = NULL;
    size_t length = 99;
    OK(cd_get_MPI_log_entry(root, &bytes, &length));
    CHECK(bytes == first && length == 7);
    expect_next(root, "recv 2"); /* both calls advance one replay */
    OK(cd_get_MPI_log_entry(root, &bytes, &length));
    CHECK(length == 8 && memcmp(bytes, "bcast 3", 8) == 0);
    OK(cd_get_MPI_log_entry(root, &bytes, &length));
    CHECK(length == 7 && memcmp(bytes, "send 4", 7) == 0);
    OK(cd_get_MPI_log_entry(root, &bytes, &length));
    CHECK(bytes == NULL && length == 0); /* exhausted: the replay is over */
    OK(cd_get_MPI_log_entry(root, &bytes, &length));
    CHECK(bytes == NULL && length == 0); /* no replay in progress */
    EXPECT(CD_ERR_NULL_POINTER, cd_get_MPI_log_entry(root, NULL, &length));
    EXPECT(CD_ERR_NULL_POINTER, cd_get_MPI_log_entry(root, &bytes, NULL));
    EXPECT(CD_ERR_NULL_HANDLE, cd_get_MPI_log_entry(NULL, &bytes, &length));

    /* An only child's log merges into the parent on commit, after the parent's entries. */
    cd_handle child = must_create(root, COMM_LOGGING_INHERIT, NULL);
    add(CURRENT_CD, "child 5");
    OK(commit_cd(child));
    OK(restore_cd(root));
    expect_next(root, "send 1");
    expect_next(root, "recv 2");
    expect_next(root, "bcast 3");
    expect_next(root, "send 4");
    expect_next(root, "child 5");
    expect_next(root, NULL);

    /* ... and on a restore of the parent, which discards the child. */
    child = must_create(root, COMM_LOGGING_INHERIT, NULL);
    cd_handle grandchild = must_create(child, COMM_LOGGING_ENABLED, NULL);
    add(child, "child 6");
    add(grandchild, "grandchild 7");
    OK(restore_cd(root));
    EXPECT(CD_ERR_STALE_HANDLE, cd_validate_handle(grandchild));
    OK(cd_get_info(root, &info));
    CHECK(info.log_entries == 7);
    for (int i = 0; i < 5; i++) CHECK(get_MPI_log_from_cd(root, &error) != NULL);
    expect_next(root, "child 6");
    expect_next(root, "grandchild 7");
    expect_next(root, NULL);

    /* delete_MPI_log_from_cd discards the log (and frees the entries). */
    OK(delete_MPI_log_from_cd(root));
    OK(cd_get_info(root, &info));
    CHECK(info.log_entries == 0);
    OK(restore_cd(root));
    expect_next(root, NULL);

    /* Bad arguments: the caller keeps its buffer. */
    void *buf = entry("x");
    EXPECT(CD_ERR_NULL_POINTER, add_MPI_log_to_cd(root, NULL, 4));
    EXPECT(CD_ERR_NEGATIVE_COUNT, add_MPI_log_to_cd(root, buf, -2));
    EXPECT(CD_ERR_EMPTY_LOG_ENTRY, add_MPI_log_to_cd(root, buf, 0));
    EXPECT(CD_ERR_NULL_HANDLE, add_MPI_log_to_cd(NULL, buf, 2));
    CHECK(get_MPI_log_from_cd(NULL, &error) == NULL && error == CD_ERR_NULL_HANDLE);

    /* A CD that does not log communication keeps no log. */
    cd_handle quiet = must_create(NULL, COMM_LOGGING_DISABLED, "quiet");
    EXPECT(CD_ERR_LOGGING_DISABLED, add_MPI_log_to_cd(quiet, buf, 2));
    free(buf);
    OK(commit_cd(quiet));

    /* Entries still in the log are freed with the CD. */
    add(root, "freed by commit");
    OK(commit_cd(root));
    printf("mpi_log: ok\n");
    return 0;
}
