/* CD_MEMORY_LIMIT and the memory fields of cd_stats: an add past the cap returns
 * CD_ERR_MEMORY_LIMIT with a message naming the limit, changes nothing, and the CD stays
 * usable; cd_global_stats reports the bytes held in stores, the pool and logs, and the peak. */
#include "check.h"
#include <string.h>

#define MIB (1024u * 1024u)

int main(void) {
    /* Read at the first store allocation: set before any CD call. */
    setenv("CD_MEMORY_LIMIT", "16M", 1);
    static unsigned char small[1 * MIB], mid[3 * MIB], big[13 * MIB];
    cd_handle cd = must_create(NULL, COMM_LOGGING_ENABLED, "memory_limit");

    memset(small, 1, sizeof small);
    memset(mid, 2, sizeof mid);
    memset(big, 3, sizeof big);
    struct cd_addrspec first[2] = {{small, sizeof small, READ_WRITE, GLOBAL},
                                   {mid, sizeof mid, READ_WRITE, GLOBAL}};
    OK(add_to_cd_via_copy(cd, first, 2)); /* one mapped buffer of 4 MiB for both */

    struct cd_stats st;
    OK(cd_global_stats(&st));
    CHECK(st.store_bytes == 4 * MIB);
    CHECK(st.peak_bytes >= st.store_bytes + st.pool_bytes + st.log_bytes);

    /* 13 MiB more (14 MiB in huge pages) would pass 16 MiB: refused, nothing added. */
    struct cd_addrspec more[1] = {{big, sizeof big, READ_WRITE, GLOBAL}};
    EXPECT(CD_ERR_MEMORY_LIMIT, add_to_cd_via_copy(cd, more, 1));
    char msg[512];
    size_t n;
    OK(cd_last_error_message(msg, sizeof msg, &n));
    CHECK(strstr(msg, "CD_MEMORY_LIMIT is 16777216 bytes") != NULL);
    CHECK(strstr(msg, "asked for 14680064 more bytes") != NULL);
    CHECK(strcmp(cd_error_name(CD_ERR_MEMORY_LIMIT), "CD_ERR_MEMORY_LIMIT") == 0);
    struct cd_info info;
    OK(cd_get_info(cd, &info));
    CHECK(info.stored_bytes == 4 * MIB); /* the two ranges only */

    /* The CD still works: restore, log, commit. */
    memset(small, 9, sizeof small);
    OK(restore_cd(cd));
    for (size_t i = 0; i < sizeof small; i++) CHECK(small[i] == 1);
    void *entry = malloc(100);
    CHECK(entry != NULL);
    memset(entry, 4, 100);
    OK(add_MPI_log_to_cd(cd, entry, 100));
    OK(cd_global_stats(&st));
    CHECK(st.log_bytes >= 100);
    OK(commit_cd(cd));

    OK(cd_global_stats(&st));
    CHECK(st.store_bytes == 0);       /* every store freed */
    CHECK(st.pool_bytes == 4 * MIB);  /* the mapping kept for reuse */
    CHECK(st.peak_bytes >= 4 * MIB);
    printf("memory_limit: ok\n");
    return 0;
}
