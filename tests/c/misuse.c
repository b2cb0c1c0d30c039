/* Every misuse returns an error code and changes nothing; nothing crashes. Handles: NULL,
 * committed, discarded by a restore, restored-away, made-up, CURRENT_CD without an active
 * CD. Arguments: NULL lists, negative and zero counts, zero lengths, NULL addresses,
 * overflowing and overlapping ranges, invalid enum values, NULL regen functions, invalid
 * strings, closed descriptors, NULL out-parameters. Rules: root INHERIT, logging mismatch,
 * named child, duplicate root name, commit/advance with children. Codes are distinct and
 * described. */
#include "check.h"
#include <string.h>
#include <unistd.h>

static int x, y;
static int seekable_fd; /* a temporary file: file functions reach the handle check */
static int dummy_regen(struct cd_addrspec addrlist[], int ascount) {
    (void)addrlist;
    (void)ascount;
    return 0;
}

/* Every handle-taking function must return `code` for `h`. */
static void all_refuse(cd_handle h, int code) {
    struct cd_addrspec as[1] = {{&x, sizeof x, READ_ONLY, GLOBAL}};
    struct cd_stats st;
    struct cd_info info;
    size_t n;
    int error = -1;
    EXPECT(code, commit_cd(h));
    EXPECT(code, restore_cd(h));
    CHECK(advance_cd_point_in_time(h) == FAILURE);
    CHECK(cd_last_error() == code);
    EXPECT(code, add_to_cd_via_copy(h, as, 1));
    EXPECT(code, add_to_cd_via_parent(h, as, 1));
    EXPECT(code, add_to_cd_via_regen(h, as, 1, dummy_regen));
    EXPECT(code, delete_from_cd(h, as, 1));
    EXPECT(code, add_file_to_cd(h, seekable_fd));
    EXPECT(code, delete_file_from_cd(h, seekable_fd));
    void *buf = malloc(4);
    CHECK(buf != NULL);
    EXPECT(code, add_MPI_log_to_cd(h, buf, 4));
    free(buf); /* refused: still ours */
    CHECK(get_MPI_log_from_cd(h, &error) == NULL && error == code);
    EXPECT(code, delete_MPI_log_from_cd(h));
    EXPECT(code, cd_get_stats(h, &st));
    EXPECT(code, cd_get_info(h, &info));
    EXPECT(code, cd_get_entries(h, NULL, 0, &n));
    EXPECT(code, cd_read_saved(h, &x, sizeof x, &y));
    EXPECT(code, cd_validate_handle(h));
    error = -1;
    if (h != NULL) {
        CHECK(create_cd(h, NULL, COMM_LOGGING_INHERIT, NULL, &error) == NULL);
        CHECK(error == code);
    }
}

int main(void) {
    int error = -1;
    struct cd_addrspec ax[1] = {{&x, sizeof x, READ_WRITE, GLOBAL}};
    FILE *tmp = tmpfile();
    CHECK(tmp != NULL);
    seekable_fd = fileno(tmp);

    /* Handles. */
    all_refuse(NULL, CD_ERR_NULL_HANDLE);
    all_refuse(CURRENT_CD, CD_ERR_NO_ACTIVE_CD);
    all_refuse((cd_handle)(uintptr_t)2, CD_ERR_INVALID_HANDLE);
    all_refuse((cd_handle)(uintptr_t)0xdeadbeefcafeULL, CD_ERR_INVALID_HANDLE);
    all_refuse((cd_handle)&x, CD_ERR_INVALID_HANDLE);

    cd_handle committed = must_create(NULL, COMM_LOGGING_DISABLED, "committed");
    OK(commit_cd(committed));
    all_refuse(committed, CD_ERR_STALE_HANDLE);

    cd_handle root = must_create(NULL, COMM_LOGGING_DISABLED, "root");
    cd_handle child = must_create(root, COMM_LOGGING_INHERIT, NULL);
    cd_handle grandchild = must_create(child, COMM_LOGGING_INHERIT, NULL);
    OK(restore_cd(root)); /* discards child and grandchild */
    all_refuse(child, CD_ERR_STALE_HANDLE);
    all_refuse(grandchild, CD_ERR_STALE_HANDLE);
    /* A made-up handle next to a real one: same slot, wrong generation. */
    all_refuse((cd_handle)((uintptr_t)root + ((uintptr_t)1 << 32)), CD_ERR_INVALID_HANDLE);
    CHECK(cd_current() == root);

    /* create_cd rules. */
    CHECK(create_cd(NULL, NULL, COMM_LOGGING_INHERIT, "r", &error) == NULL);
    CHECK(error == CD_ERR_ROOT_INHERITS_LOGGING);
    CHECK(create_cd(root, NULL, COMM_LOGGING_ENABLED, NULL, &error) == NULL);
    CHECK(error == CD_ERR_LOGGING_MISMATCH);
    CHECK(create_cd(root, NULL, MPI_LOGGING_INHERIT, "named", &error) == NULL);
    CHECK(error == CD_ERR_CHILD_NAMED);
    CHECK(create_cd(NULL, NULL, COMM_LOGGING_DISABLED, "root", &error) == NULL);
    CHECK(error == CD_ERR_DUPLICATE_NAME);
    CHECK(create_cd(NULL, NULL, COMM_LOGGING_DISABLED, "", &error) == NULL);
    CHECK(error == CD_ERR_BAD_NAME);
    CHECK(create_cd(NULL, NULL, 3, "r", &error) == NULL && error == CD_ERR_INVALID_ENUM);
    CHECK(create_cd(NULL, NULL, -1, "r", &error) == NULL && error == CD_ERR_INVALID_ENUM);
    CHECK(create_cd(NULL, "no-such-key=1", COMM_LOGGING_DISABLED, "r", &error) == NULL);
    CHECK(error == CD_ERR_STORAGE_INFO);
    CHECK(create_cd(NULL, "\xff\xfe", COMM_LOGGING_DISABLED, "r", &error) == NULL);
    CHECK(error == CD_ERR_INVALID_STRING);
    CHECK(create_cd(NULL, NULL, COMM_LOGGING_DISABLED, "\xc3\x28", NULL) == NULL);
    CHECK(cd_last_error() == CD_ERR_INVALID_STRING); /* error may be NULL */
    CHECK(cd_current() == root);

    /* Address lists. */
    struct cd_addrspec zero[1] = {{&x, 0, READ_WRITE, GLOBAL}};
    struct cd_addrspec nul[1] = {{NULL, 4, READ_WRITE, GLOBAL}};
    struct cd_addrspec wrap[1] = {{(void *)(uintptr_t)-8, 16, READ_WRITE, GLOBAL}};
    struct cd_addrspec overlap[2] = {{&x, sizeof x, READ_WRITE, GLOBAL},
                                     {&x, sizeof x, READ_ONLY, GLOBAL}};
    struct cd_addrspec bad_tp[1] = {{&x, sizeof x, 2, GLOBAL}};
    struct cd_addrspec bad_scope[1] = {{&x, sizeof x, READ_WRITE, -1}};
    /* Each add function refuses each bad list, leaving the CD empty. */
    for (int which = 0; which < 4; which++) {
#define ADD(list, count)                                                    \
    (which == 0   ? add_to_cd_via_copy(root, list, count)                  \
     : which == 1 ? add_to_cd_via_parent(root, list, count)                \
     : which == 2 ? add_to_cd_via_regen(root, list, count, dummy_regen)    \
                  : delete_from_cd(root, list, count))
        EXPECT(CD_ERR_NULL_POINTER, ADD(NULL, 1));
        EXPECT(CD_ERR_NULL_POINTER, ADD(NULL, 0));
        EXPECT(CD_ERR_NEGATIVE_COUNT, ADD(ax, -1));
        EXPECT(CD_ERR_EMPTY_LIST, ADD(ax, 0));
        EXPECT(CD_ERR_ZERO_LENGTH, ADD(zero, 1));
        EXPECT(CD_ERR_NULL_ADDRESS, ADD(nul, 1));
        EXPECT(CD_ERR_ADDRESS_OVERFLOW, ADD(wrap, 1));
        EXPECT(CD_ERR_OVERLAPPING_LIST, ADD(overlap, 2));
        EXPECT(CD_ERR_INVALID_ENUM, ADD(bad_tp, 1));
        EXPECT(CD_ERR_INVALID_ENUM, ADD(bad_scope, 1));
#undef ADD
    }
    EXPECT(CD_ERR_NULL_POINTER, add_to_cd_via_regen(root, ax, 1, NULL));
    struct cd_info info;
    OK(cd_get_info(root, &info));
    CHECK(info.ranges == 0);

    /* Out-parameters. */
    EXPECT(CD_ERR_NULL_POINTER, cd_get_info(root, NULL));
    EXPECT(CD_ERR_NULL_POINTER, cd_get_stats(root, NULL));
    EXPECT(CD_ERR_NULL_POINTER, cd_global_stats(NULL));
    EXPECT(CD_ERR_NULL_POINTER, cd_get_entries(root, NULL, 0, NULL));
    EXPECT(CD_ERR_NULL_POINTER, cd_read_saved(root, &x, sizeof x, NULL));
    OK(add_to_cd_via_copy(root, ax, 1));
    size_t n = 0;
    EXPECT(CD_ERR_BUFFER_TOO_SMALL, cd_get_entries(root, NULL, 0, &n));
    CHECK(n == 1);
    EXPECT(CD_ERR_ZERO_LENGTH, cd_read_saved(root, &x, 0, &y));

    /* Files. */
    int fd = dup(1);
    CHECK(fd >= 0);
    close(fd);
    EXPECT(CD_ERR_FILE_NOT_SEEKABLE, add_file_to_cd(root, fd));
    EXPECT(CD_ERR_FILE_NOT_SEEKABLE, add_file_to_cd(root, -5));
    EXPECT(CD_ERR_FILE_NOT_FOUND, delete_file_from_cd(root, fd));

    /* Commit and advance need a CD without children. */
    child = must_create(root, COMM_LOGGING_INHERIT, NULL);
    EXPECT(CD_ERR_HAS_CHILDREN, commit_cd(root));
    CHECK(advance_cd_point_in_time(root) == FAILURE);
    CHECK(cd_last_error() == CD_ERR_HAS_CHILDREN);
    EXPECT(CD_ERR_NO_PARENT, add_to_cd_via_parent(root, ax, 1));
    OK(commit_cd(child));

    /* Device memory spaces. */
    int space = -1;
    EXPECT(CD_ERR_NULL_POINTER, cd_register_memory_space("x", NULL, NULL, NULL, &space));
    EXPECT(CD_ERR_UNKNOWN_MEMORY_SPACE, cd_map_device_region(0, &y, sizeof y));
    EXPECT(CD_ERR_UNKNOWN_MEMORY_SPACE, cd_map_device_region(9999, &y, sizeof y));
    EXPECT(CD_ERR_NEGATIVE_COUNT, cd_map_device_region(-1, &y, sizeof y));
    EXPECT(CD_ERR_NULL_POINTER, cd_map_device_region(1, NULL, 4));
    EXPECT(CD_ERR_REGION_NOT_FOUND, cd_unmap_device_region(&y));
    EXPECT(CD_ERR_NEGATIVE_COUNT, cd_set_rank(-1));

    /* Error codes: distinct, named and described; unknown ones too. */
    int codes[] = {SUCCESS, FAILURE, CD_ERR_INVALID_HANDLE, CD_ERR_STALE_HANDLE,
                   CD_ERR_NO_ACTIVE_CD, CD_ERR_REENTRANT, CD_ERR_ROOT_INHERITS_LOGGING,
                   CD_ERR_LOGGING_MISMATCH, CD_ERR_CHILD_NAMED, CD_ERR_DUPLICATE_NAME,
                   CD_ERR_BAD_NAME, CD_ERR_STORAGE_INFO, CD_ERR_ZERO_LENGTH,
                   CD_ERR_NULL_ADDRESS, CD_ERR_ADDRESS_OVERFLOW, CD_ERR_OVERLAPPING_LIST,
                   CD_ERR_READ_WRITE_REGEN, CD_ERR_PROMOTE_REGEN, CD_ERR_SCOPE_CHANGE,
                   CD_ERR_NOT_IN_ANCESTOR, CD_ERR_REGEN_ANCESTOR, CD_ERR_NO_PARENT,
                   CD_ERR_RANGE_NOT_FOUND, CD_ERR_STRADDLES_MEMORY_SPACE,
                   CD_ERR_REGION_OVERLAP, CD_ERR_UNKNOWN_MEMORY_SPACE, CD_ERR_REGION_NOT_FOUND,
                   CD_ERR_FILE_NOT_SEEKABLE, CD_ERR_FILE_NOT_FOUND, CD_ERR_HAS_CHILDREN,
                   CD_ERR_CONCURRENT_OPERATION, CD_ERR_OUT_OF_MEMORY, CD_ERR_DEVICE_COPY,
                   CD_ERR_REGEN_FAILED, CD_ERR_PARENT_DATA_MISSING, CD_ERR_INJECTED_FAULT,
                   CD_ERR_LOGGING_DISABLED, CD_ERR_LOG_REPLAYING, CD_ERR_EMPTY_LOG_ENTRY,
                   CD_ERR_NULL_HANDLE, CD_ERR_NULL_POINTER, CD_ERR_NEGATIVE_COUNT,
                   CD_ERR_EMPTY_LIST, CD_ERR_INVALID_ENUM, CD_ERR_INVALID_STRING,
                   CD_ERR_BUFFER_TOO_SMALL, CD_ERR_PANIC};
    size_t count = sizeof codes / sizeof codes[0];
    const char *unknown = cd_error_string(12345);
    for (size_t i = 0; i < count; i++) {
        CHECK(cd_error_string(codes[i]) != NULL && cd_error_string(codes[i]) != unknown);
        CHECK(strcmp(cd_error_name(codes[i]), "CD_ERR_UNKNOWN") != 0);
        for (size_t j = i + 1; j < count; j++) {
            CHECK(codes[i] != codes[j]);
            CHECK(strcmp(cd_error_string(codes[i]), cd_error_string(codes[j])) != 0);
        }
    }
    CHECK(strcmp(cd_error_name(CD_ERR_STALE_HANDLE), "CD_ERR_STALE_HANDLE") == 0);
    CHECK(strcmp(cd_error_name(-77), "CD_ERR_UNKNOWN") == 0);
    char msg[16];
    size_t len;
    OK(cd_error_message(CD_ERR_HAS_CHILDREN, msg, sizeof msg, &len));
    CHECK(len == sizeof msg - 1 && msg[len] == '\0');
    CHECK(strncmp(msg, cd_error_string(CD_ERR_HAS_CHILDREN), len) == 0);
    EXPECT(CD_ERR_NULL_POINTER, cd_error_message(1, NULL, 4, &len));
    CHECK(strcmp(cd_version(), CD_VERSION) == 0);

    OK(commit_cd(root));
    printf("misuse: ok\n");
    return 0;
}
