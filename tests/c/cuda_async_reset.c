/* The asynchronous advance, a GPU reset and the remap of device ranges through the C API, on
 * the built-in CUDA space: the test driver (cd-ffi/tests/c_programs.rs) runs this program with
 * CD_CUDA_LIBRARY naming the stand-in driver, whose asynchronous copies run only when a
 * stream or event is synchronised (or cuStandinRunStreams lets the copy engines catch up), and
 * whose cuStandinReset plays cudaDeviceReset.
 *
 * Covered, each with its results checked byte by byte: cd_advance_async (default stream and a
 * created stream; the snapshot sees the kernels queued before it and none after),
 * cd_advance_test (0 while the drain runs, 1 once it completed), cd_advance_wait, a restore
 * during a drain (the previous point), a reset dropping a drain in flight, cd_device_reset,
 * cd_remap_device_region (and its refusals), and CD_ERR_REGION_IN_USE when unmapping a
 * region a CD still holds. */
#include "check.h"
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

typedef int (*alloc_fn)(unsigned long long *, size_t);
typedef int (*ctx_retain_fn)(void **, int);
typedef int (*ctx_push_fn)(void *);
typedef int (*ctx_pop_fn)(void **);
typedef int (*htod_fn)(unsigned long long, const void *, size_t);
typedef int (*dtoh_fn)(void *, unsigned long long, size_t);
typedef int (*stream_create_fn)(void **, unsigned);
typedef int (*stream_sync_fn)(void *);
typedef void (*hook_fn)(void);

#define N (256 << 10)

static ctx_retain_fn retain;
static ctx_push_fn push;
static ctx_pop_fn pop;
static htod_fn htod;
static dtoh_fn dtoh;
static alloc_fn cu_alloc;
static unsigned char host[N], back[N];

/* The application's context made current, as the CUDA runtime does. */
static void enter(void) {
    void *ctx = NULL;
    CHECK(retain(&ctx, 0) == 0);
    CHECK(push(ctx) == 0);
}

static void leave(void) {
    void *ctx = NULL;
    CHECK(pop(&ctx) == 0);
}

/* A "kernel" filling device array `dev` with `value`: a synchronous copy, ordered after the
 * work queued on the default stream, as a kernel launched there would be. */
static void kernel(unsigned long long dev, int value) {
    enter();
    memset(host, value, N);
    CHECK(htod(dev, host, N) == 0);
    leave();
}

/* Device array `dev` holds `value` in every byte. */
static int holds(unsigned long long dev, int value) {
    enter();
    CHECK(dtoh(back, dev, N) == 0);
    leave();
    for (size_t i = 0; i < N; i++)
        if (back[i] != (unsigned char)value) return 0;
    return 1;
}

static unsigned long long device_alloc(void) {
    unsigned long long p = 0;
    enter();
    CHECK(cu_alloc(&p, N) == 0);
    leave();
    return p;
}

static int copy_to_host(void *dst, const void *src, size_t n, void *ctx) {
    (void)ctx;
    memcpy(dst, src, n);
    return 0;
}

static int copy_to_device(void *dst, const void *src, size_t n, void *ctx) {
    (void)ctx;
    memcpy(dst, src, n);
    return 0;
}

int main(void) {
    const char *lib = getenv("CD_CUDA_LIBRARY");
    CHECK(lib != NULL);
    void *h = dlopen(lib, RTLD_NOW);
    CHECK(h != NULL);
    cu_alloc = (alloc_fn)dlsym(h, "cuMemAlloc_v2");
    retain = (ctx_retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain");
    push = (ctx_push_fn)dlsym(h, "cuCtxPushCurrent_v2");
    pop = (ctx_pop_fn)dlsym(h, "cuCtxPopCurrent_v2");
    htod = (htod_fn)dlsym(h, "cuMemcpyHtoD_v2");
    dtoh = (dtoh_fn)dlsym(h, "cuMemcpyDtoH_v2");
    stream_create_fn stream_create = (stream_create_fn)dlsym(h, "cuStreamCreate");
    stream_sync_fn stream_sync = (stream_sync_fn)dlsym(h, "cuStreamSynchronize");
    hook_fn run_streams = (hook_fn)dlsym(h, "cuStandinRunStreams");
    hook_fn reset = (hook_fn)dlsym(h, "cuStandinReset");
    CHECK(cu_alloc && retain && push && pop && htod && dtoh && stream_create && stream_sync);
    CHECK(run_streams && reset);
    CHECK(((int (*)(unsigned))dlsym(h, "cuInit"))(0) == 0);

    unsigned long long a = device_alloc(), b = device_alloc();
    kernel(a, 1);
    kernel(b, 1);
    cd_handle cd = must_create(NULL, COMM_LOGGING_DISABLED, "cuda-async");
    struct cd_addrspec specs[2] = {
        {(void *)(uintptr_t)a, N, READ_WRITE, GLOBAL},
        {(void *)(uintptr_t)b, N, READ_WRITE, GLOBAL},
    };
    OK(add_to_cd_via_copy(cd, specs, 2));

    /* 1. Default stream: the drain waits for a synchronisation; the kernel queued after the
     * call is not in the snapshot; the point is current after cd_advance_wait. */
    kernel(a, 2);
    kernel(b, 2);
    int in_flight = -1, done = -1;
    OK(cd_advance_async(cd, NULL, &in_flight));
    CHECK(in_flight == 1);
    OK(cd_advance_test(cd, &done));
    CHECK(done == 0);
    OK(add_to_cd_via_copy(cd, specs, 2)); /* the promotion does not wait */
    OK(cd_advance_test(cd, &done));
    CHECK(done == 0);
    kernel(a, 3); /* after the snapshot */
    OK(cd_advance_wait(cd));
    OK(cd_advance_test(cd, &done));
    CHECK(done == 1);
    OK(cd_advance_wait(cd)); /* nothing in flight: returns at once */
    kernel(b, 3);
    OK(restore_cd(cd));
    CHECK(holds(a, 2) && holds(b, 2));

    /* 2. A stream of the application's; cd_advance_test makes a completed drain current. */
    void *stream = NULL;
    enter();
    CHECK(stream_create(&stream, 0) == 0);
    leave();
    kernel(a, 4);
    kernel(b, 4);
    OK(cd_advance_async(cd, stream, &in_flight));
    CHECK(in_flight == 1);
    run_streams(); /* the copy engines catch up */
    OK(cd_advance_test(cd, &done));
    CHECK(done == 1);
    kernel(a, 5);
    OK(restore_cd(cd));
    CHECK(holds(a, 4) && holds(b, 4));

    /* 3. A restore during the drain restores the previous point; the drain is dropped. */
    OK(add_to_cd_via_copy(cd, specs, 2));
    kernel(a, 6);
    kernel(b, 6);
    OK(cd_advance_async(cd, NULL, NULL));
    kernel(a, 7);
    OK(restore_cd(cd));
    CHECK(holds(a, 4) && holds(b, 4));
    OK(cd_advance_test(cd, &done));
    CHECK(done == 1);
    kernel(b, 7);
    OK(restore_cd(cd));
    CHECK(holds(a, 4) && holds(b, 4));

    /* 4. A GPU reset with a drain in flight: the drain is dropped, the CD stays at its
     * previous point; the arrays come back elsewhere and the CD's ranges follow them. */
    OK(add_to_cd_via_copy(cd, specs, 2));
    kernel(a, 8);
    kernel(b, 8);
    OK(cd_advance_async(cd, stream, &in_flight));
    CHECK(in_flight == 1);
    reset(); /* cudaDeviceReset: every allocation, stream and event is gone */
    OK(cd_device_reset());
    OK(cd_advance_test(cd, &done));
    CHECK(done == 1);
    unsigned long long a2 = device_alloc(), b2 = device_alloc();
    CHECK(a2 != a && b2 != b && a2 != b);
    kernel(a2, 0x55);
    kernel(b2, 0x55);
    /* Refusals change nothing: overlapping ranges, a target the CD already holds, host
     * memory as the target. */
    EXPECT(CD_ERR_REMAP_REFUSED, cd_remap_device_region((void *)(uintptr_t)a,
                                                        (void *)(uintptr_t)(a + N / 2), N));
    OK(cd_remap_device_region((void *)(uintptr_t)a, (void *)(uintptr_t)a2, N));
    EXPECT(CD_ERR_REMAP_REFUSED, cd_remap_device_region((void *)(uintptr_t)b,
                                                        (void *)(uintptr_t)a2, N));
    EXPECT(CD_ERR_REMAP_REFUSED, cd_remap_device_region((void *)(uintptr_t)b, host, N));
    OK(cd_remap_device_region((void *)(uintptr_t)b, (void *)(uintptr_t)b2, N));
    OK(restore_cd(cd));
    CHECK(holds(a2, 4) && holds(b2, 4));

    /* 5. After the reset the space makes new streams: an asynchronous advance works again. */
    struct cd_addrspec moved[2] = {
        {(void *)(uintptr_t)a2, N, READ_WRITE, GLOBAL},
        {(void *)(uintptr_t)b2, N, READ_WRITE, GLOBAL},
    };
    OK(add_to_cd_via_copy(cd, moved, 2));
    kernel(a2, 9);
    kernel(b2, 9);
    OK(cd_advance_async(cd, NULL, &in_flight));
    CHECK(in_flight == 1);
    OK(cd_advance_wait(cd));
    kernel(a2, 10);
    OK(restore_cd(cd));
    CHECK(holds(a2, 9) && holds(b2, 9));
    OK(commit_cd(cd));
    EXPECT(CD_ERR_STALE_HANDLE, cd_advance_async(cd, NULL, &in_flight));
    EXPECT(CD_ERR_STALE_HANDLE, cd_advance_test(cd, &done));
    EXPECT(CD_ERR_STALE_HANDLE, cd_advance_wait(cd));

    /* 6. A region a live CD holds cannot be unmapped (a device space of callbacks). */
    static unsigned char arena[4096];
    int space = 0;
    OK(cd_register_memory_space("other-device", copy_to_host, copy_to_device, NULL, &space));
    OK(cd_map_device_region(space, arena, sizeof arena));
    cd_handle holder = must_create(NULL, COMM_LOGGING_DISABLED, "region-holder");
    struct cd_addrspec in_region = {arena + 64, 128, READ_WRITE, GLOBAL};
    OK(add_to_cd_via_copy(holder, &in_region, 1));
    EXPECT(CD_ERR_REGION_IN_USE, cd_unmap_device_region(arena));
    OK(delete_from_cd(holder, &in_region, 1));
    OK(cd_unmap_device_region(arena));
    EXPECT(CD_ERR_REGION_NOT_FOUND, cd_unmap_device_region(arena));
    OK(commit_cd(holder));

    printf("cuda_async_reset: ok\n");
    return 0;
}
