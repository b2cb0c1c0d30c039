/* check.h: the assertions of the C test programs. A failed check prints where and why and
 * exits with status 1; the Rust test driver (cd-ffi/tests/c_programs.rs) checks the status. */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <cd.h>

/* The condition must hold. */
#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* A call must return `expected` (SUCCESS or a CD_ERR_* code). */
#define EXPECT(expected, call)                                                         \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != (expected)) {                                                       \
            char msg_[256];                                                            \
            size_t n_;                                                                 \
            cd_last_error_message(msg_, sizeof msg_, &n_);                             \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n  last: %s\n",\
                    __FILE__, __LINE__, #call, rc_, cd_error_name(rc_), (int)(expected),\
                    cd_error_name(expected), msg_);                                    \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#define OK(call) EXPECT(SUCCESS, call)

/* Creates a CD, which must succeed. */
static inline cd_handle must_create(cd_handle parent, int log_comm, const char *name) {
    int error = -12345;
    cd_handle cd = create_cd(parent, NULL, log_comm, name, &error);
    if (cd == NULL || error != SUCCESS) {
        fprintf(stderr, "create_cd(%s) failed: %d (%s)\n", name ? name : "child", error,
                cd_error_name(error));
        exit(1);
    }
    return cd;
}

/* The int the CD saved at `p` (its "CD contents"). */
static inline int saved_int(cd_handle cd, const int *p) {
    int v = -1;
    OK(cd_read_saved(cd, p, sizeof *p, &v));
    return v;
}

#endif
