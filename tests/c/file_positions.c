/* File positions (spec, add_file_to_cd and delete_file_from_cd): the CD records a file's
 * offset, not its data; restore seeks back; advance updates the offset; delete stops the
 * monitoring. Closed descriptors, pipes and unknown descriptors are errors. */
#include "check.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static off_t pos(int fd) { return lseek(fd, 0, SEEK_CUR); }

int main(void) {
    char path[] = "/tmp/cd-file-positionsXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    char buf[64];
    memset(buf, 'a', sizeof buf);

    cd_handle cd = must_create(NULL, COMM_LOGGING_DISABLED, "files");
    CHECK(write(fd, buf, 10) == 10);
    OK(add_file_to_cd(cd, fd)); /* the current file position (10) is added to the CD */
    CHECK(write(fd, buf, 20) == 20);
    CHECK(pos(fd) == 30);
    OK(restore_cd(cd)); /* restore_cd restores the current file position */
    CHECK(pos(fd) == 10);

    /* Adding again keeps the older position. */
    CHECK(write(fd, buf, 5) == 5);
    OK(add_file_to_cd(cd, fd));
    OK(restore_cd(cd));
    CHECK(pos(fd) == 10);

    /* Advance updates the position. */
    CHECK(lseek(fd, 40, SEEK_SET) == 40);
    OK(advance_cd_point_in_time(cd));
    CHECK(write(fd, buf, 10) == 10);
    OK(restore_cd(cd));
    CHECK(pos(fd) == 40);

    /* A child's file moves to the parent on commit (the parent has none for it). */
    int fd2 = dup(fd);
    CHECK(fd2 >= 0);
    cd_handle child = must_create(cd, COMM_LOGGING_INHERIT, NULL);
    CHECK(lseek(fd2, 0, SEEK_SET) == 0); /* shares the offset with fd */
    OK(add_file_to_cd(child, fd2));
    OK(commit_cd(child));
    struct cd_info info;
    OK(cd_get_info(cd, &info));
    CHECK(info.files == 2);
    OK(delete_file_from_cd(cd, fd2));
    close(fd2);

    /* Deleted: restore no longer seeks it. */
    OK(delete_file_from_cd(cd, fd));
    EXPECT(CD_ERR_FILE_NOT_FOUND, delete_file_from_cd(cd, fd));
    CHECK(lseek(fd, 3, SEEK_SET) == 3);
    OK(restore_cd(cd));
    CHECK(pos(fd) == 3);

    /* Closed descriptors, pipes and negative descriptors are refused. */
    int closed = dup(fd);
    CHECK(closed >= 0);
    close(closed);
    EXPECT(CD_ERR_FILE_NOT_SEEKABLE, add_file_to_cd(cd, closed));
    EXPECT(CD_ERR_FILE_NOT_SEEKABLE, add_file_to_cd(cd, -1));
    int p[2];
    CHECK(pipe(p) == 0);
    EXPECT(CD_ERR_FILE_NOT_SEEKABLE, add_file_to_cd(cd, p[0]));
    close(p[0]);
    close(p[1]);
    EXPECT(CD_ERR_FILE_NOT_FOUND, delete_file_from_cd(cd, 12345));

    /* A monitored file closed behind the CD's back: restore reports it. */
    int gone = dup(fd);
    CHECK(gone >= 0);
    OK(add_file_to_cd(cd, gone));
    close(gone);
    EXPECT(CD_ERR_FILE_NOT_SEEKABLE, restore_cd(cd));
    CHECK(advance_cd_point_in_time(cd) == FAILURE && cd_last_error() == CD_ERR_FILE_NOT_SEEKABLE);
    OK(delete_file_from_cd(cd, gone));
    OK(restore_cd(cd));

    OK(commit_cd(cd));
    close(fd);
    printf("file_positions: ok\n");
    return 0;
}
