/* The built-in CUDA space through the C API, with no callbacks registered: the test driver
 * (cd-ffi/tests/c_programs.rs) runs this program with CD_CUDA_LIBRARY naming the stand-in
 * driver, whose device memory the CPU cannot touch. Two arrays that the "driver" placed back
 * to back are protected, advanced and restored; a range across both is refused. */
#include "check.h"
#include <dlfcn.h>
#include <string.h>

typedef int (*alloc_fn)(unsigned long long *, size_t);
typedef int (*ctx_retain_fn)(void **, int);
typedef int (*ctx_push_fn)(void *);
typedef int (*ctx_pop_fn)(void **);
typedef int (*htod_fn)(unsigned long long, const void *, size_t);
typedef int (*dtoh_fn)(void *, unsigned long long, size_t);

#define N (1 << 20)
static ctx_retain_fn retain;
static ctx_push_fn push;
static ctx_pop_fn pop;

static void *context(void) {
    void *ctx = NULL;
    CHECK(retain(&ctx, 0) == 0);
    CHECK(push(ctx) == 0);
    return ctx;
}

int main(void) {
    const char *lib = getenv("CD_CUDA_LIBRARY");
    CHECK(lib != NULL);
    void *h = dlopen(lib, RTLD_NOW);
    CHECK(h != NULL);
    alloc_fn cu_alloc = (alloc_fn)dlsym(h, "cuMemAlloc_v2");
    retain = (ctx_retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain");
    push = (ctx_push_fn)dlsym(h, "cuCtxPushCurrent_v2");
    pop = (ctx_pop_fn)dlsym(h, "cuCtxPopCurrent_v2");
    htod_fn htod = (htod_fn)dlsym(h, "cuMemcpyHtoD_v2");
    dtoh_fn dtoh = (dtoh_fn)dlsym(h, "cuMemcpyDtoH_v2");
    CHECK(cu_alloc && retain && push && pop && htod && dtoh);
    CHECK(((int (*)(unsigned))dlsym(h, "cuInit"))(0) == 0);

    unsigned long long a, b;
    CHECK(cu_alloc(&a, N) == 0 && cu_alloc(&b, N) == 0);
    CHECK(b == a + N); /* back to back, as cudaMalloc places equal arrays */
    static unsigned char host[N], back[N];
    void *ctx = context();
    memset(host, 1, N);
    CHECK(htod(a, host, N) == 0 && htod(b, host, N) == 0);
    CHECK(pop(&ctx) == 0);

    int error = -1;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_DISABLED, "cuda-builtin", &error);
    CHECK(cd != NULL && error == SUCCESS);
    struct cd_addrspec specs[2] = {
        {(void *)(uintptr_t)a, N, READ_WRITE, GLOBAL},
        {(void *)(uintptr_t)b, N, READ_WRITE, GLOBAL},
    };
    OK(add_to_cd_via_copy(cd, specs, 2));
    struct cd_addrspec across = {(void *)(uintptr_t)(a + N / 2), N, READ_ONLY, GLOBAL};
    EXPECT(CD_ERR_STRADDLES_MEMORY_SPACE, add_to_cd_via_copy(cd, &across, 1));

    ctx = context();
    memset(host, 2, N);
    CHECK(htod(a, host, N) == 0 && htod(b, host, N) == 0);
    CHECK(pop(&ctx) == 0);
    CHECK(advance_cd_point_in_time(cd) != FAILURE);
    ctx = context();
    memset(host, 3, N);
    CHECK(htod(a, host, N) == 0 && htod(b, host, N) == 0);
    CHECK(pop(&ctx) == 0);
    OK(restore_cd(cd));
    ctx = context();
    memset(host, 2, N);
    CHECK(dtoh(back, a, N) == 0 && memcmp(back, host, N) == 0);
    CHECK(dtoh(back, b, N) == 0 && memcmp(back, host, N) == 0);
    CHECK(pop(&ctx) == 0);
    CHECK(commit_cd(cd) == SUCCESS);
    printf("cuda_builtin: ok\n");
    return 0;
}
