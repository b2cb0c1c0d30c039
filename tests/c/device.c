/* Device memory (extension): a simulated GPU registers its copy functions; CD ranges inside
 * its region are saved with copy_to_host and restored with copy_to_device. A failing device
 * copy makes the atomic advance fail (the spec's `== FAILURE` test catches it) and leaves the
 * previous point in time intact. */
#include "check.h"
#include <string.h>

#define DEV_BYTES 4096

struct gpu {
    unsigned char *arena; /* "device memory": only the copy functions touch it */
    int to_host, to_device, fail;
};

static int copy_to_host(void *dst, const void *src_dev, size_t n, void *ctx) {
    struct gpu *g = ctx;
    CHECK((const unsigned char *)src_dev >= g->arena &&
          (const unsigned char *)src_dev + n <= g->arena + DEV_BYTES);
    if (g->fail) return 5;
    g->to_host++;
    memcpy(dst, src_dev, n);
    return 0;
}

static int copy_to_device(void *dst_dev, const void *src, size_t n, void *ctx) {
    struct gpu *g = ctx;
    g->to_device++;
    memcpy(dst_dev, src, n);
    return 0;
}

int main(void) {
    struct gpu g = {malloc(DEV_BYTES), 0, 0, 0};
    CHECK(g.arena != NULL);
    memset(g.arena, 1, DEV_BYTES);
    int space = 0;
    OK(cd_register_memory_space("simulated-gpu", copy_to_host, copy_to_device, &g, &space));
    CHECK(space > 0);
    OK(cd_map_device_region(space, g.arena, DEV_BYTES));
    EXPECT(CD_ERR_REGION_OVERLAP, cd_map_device_region(space, g.arena + 100, 10));

    int host = 10;
    cd_handle cd = must_create(NULL, COMM_LOGGING_DISABLED, "gpu");
    struct cd_addrspec as[2] = {{g.arena, 1024, READ_WRITE, GLOBAL},
                                {&host, sizeof host, READ_WRITE, GLOBAL}};
    OK(add_to_cd_via_copy(cd, as, 2));
    CHECK(g.to_host == 1);
    struct cd_entry_info e[4];
    size_t n;
    OK(cd_get_entries(cd, e, 4, &n));
    CHECK(n == 2);
    for (size_t i = 0; i < n; i++)
        CHECK(e[i].space == (e[i].spec.address == g.arena ? (unsigned)space : 0u));

    /* The GPU fails: device memory is garbage; restore brings it back through the device. */
    memset(g.arena, 0xee, DEV_BYTES);
    host = 11;
    OK(restore_cd(cd));
    CHECK(g.to_device >= 1);
    for (int i = 0; i < 1024; i++) CHECK(g.arena[i] == 1);
    CHECK(g.arena[1024] == 0xee && host == 10);

    /* A successful advance reads the device. */
    memset(g.arena, 2, 1024);
    host = 20;
    OK(advance_cd_point_in_time(cd));
    CHECK(g.to_host == 2);

    /* A failing advance changes nothing: the spec's test catches it. */
    OK(add_to_cd_via_copy(cd, as, 2)); /* promote again */
    memset(g.arena, 3, 1024);
    host = 30;
    g.fail = 1;
    int caught = 0;
    if (advance_cd_point_in_time(cd) == FAILURE) {
        caught = 1;
        CHECK(cd_last_error() == CD_ERR_DEVICE_COPY);
        g.fail = 0; /* reboot_GPU(); */
        OK(restore_cd(cd));
    }
    CHECK(caught);
    for (int i = 0; i < 1024; i++) CHECK(g.arena[i] == 2);
    CHECK(host == 20);

    /* A range may not straddle the region's boundary. */
    struct cd_addrspec straddle[1] = {{g.arena + DEV_BYTES - 8, 16, READ_ONLY, GLOBAL}};
    EXPECT(CD_ERR_STRADDLES_MEMORY_SPACE, add_to_cd_via_copy(cd, straddle, 1));

    OK(commit_cd(cd));
    OK(cd_unmap_device_region(g.arena));
    EXPECT(CD_ERR_REGION_NOT_FOUND, cd_unmap_device_region(g.arena));
    free(g.arena);
    printf("device: ok\n");
    return 0;
}
