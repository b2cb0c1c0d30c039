/* The spec's "Simple API Use Example" on CUDA memory: a GPU kernel loop protected by a root
 * CD, with the GPU state allocated by the CUDA driver (cuMemAlloc) and no copy functions to
 * write: libcd's built-in CUDA space recognises device pointers by itself and saves and
 * restores them with its own pinned copies. Each advance is asynchronous (cd_advance_async):
 * the state is snapshotted on the device and drained to the host while the next iteration's
 * kernels run; the next advance waits for the drain, and a restore meanwhile goes back to the
 * last complete point.
 *
 * The driver is reached with dlopen, as libcd reaches it (no CUDA headers or libraries at
 * build time). The kernel is played by the host through the driver's synchronous copies
 * (copy the state out, update it, copy it back), so that the example needs no kernel
 * compiler; those copies are ordered after the work queued on the default stream, as a
 * kernel launched there is. examples/cuda/simple_gpu.cu is the same program with a real
 * kernel. A launch fails with probability CD_FAULT_RATE (default 0.05), leaving garbage in
 * device memory; the program reboots the GPU (zeroes its memory) and restores the CD. At the
 * end the result is compared with a fault-free run. With CD_RESET=1 every fault also resets the
 * GPU (cuDevicePrimaryCtxReset, what cudaDeviceReset calls) and allocates the state again, at
 * the same address or elsewhere (the real driver hands the old one back; the stand-in does
 * with CD_CUDA_STANDIN_REUSE=1): cd.h's recipe, cd_device_reset then cd_remap_device_region,
 * which is a no-op when the address did not change. For devices other than CUDA, registered
 * with copy functions: simple_gpu.c.
 *
 * Build: cc -O2 simple_cuda.c $(pkg-config --cflags --libs cd) -ldl -o simple_cuda
 * Run:   CD_FAULT_RATE=0.05 CD_SEED=1 ./simple_cuda      (add -Wl,-rpath,... or LD_LIBRARY_PATH)
 *        CD_RESET=1 CD_SEED=1 ./simple_cuda                  (a GPU reset at each fault)
 * Without a GPU, against the stand-in driver of the tests:
 *        cc -shared -fPIC -o libcuda_standin.so cd-cuda/standin/cuda_standin.c
 *        CD_CUDA_LIBRARY=$PWD/libcuda_standin.so ./simple_cuda
 */
#include <cd.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_CD 10
#define OUTER 100
#define STATE_WORDS (1 << 16) /* 256 KiB of device state */
#define DEVICE_BYTES ((STATE_WORDS + 1) * sizeof(uint32_t))

/* ---- the CUDA driver, loaded at run time ---- */
typedef unsigned long long CUdeviceptr;
static int (*cuInit)(unsigned);
static int (*cuDevicePrimaryCtxRetain)(void **, int);
static int (*cuCtxPushCurrent)(void *);
static int (*cuCtxPopCurrent)(void **);
static int (*cuDeviceGet)(int *, int);
static int (*cuDevicePrimaryCtxReset)(int);
static int (*cuMemAlloc)(CUdeviceptr *, size_t);
static int (*cuMemFree)(CUdeviceptr);
static int (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static int (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);

static void die(const char *what) {
    fprintf(stderr, "simple_cuda: %s\n", what);
    exit(1);
}

static void cuda_ok(int rc, const char *call) {
    if (rc != 0) {
        fprintf(stderr, "simple_cuda: %s failed: CUDA error %d\n", call, rc);
        exit(1);
    }
}

/* Resolves one driver symbol into the function pointer at `slot`. */
static void resolve(void *lib, const char *name, void *slot) {
    void *f = dlsym(lib, name);
    if (!f) die(name);
    memcpy(slot, &f, sizeof f); /* POSIX: a data pointer to a function pointer */
}

/* Loads the driver libcd loads (CD_CUDA_LIBRARY, else libcuda.so.1) and makes device 0's
 * primary context current, as the CUDA runtime does. */
static void load_cuda(void) {
    const char *name = getenv("CD_CUDA_LIBRARY");
    void *lib = dlopen(name ? name : "libcuda.so.1", RTLD_NOW);
    if (!lib) die(dlerror());
    resolve(lib, "cuInit", &cuInit);
    resolve(lib, "cuDevicePrimaryCtxRetain", &cuDevicePrimaryCtxRetain);
    resolve(lib, "cuCtxPushCurrent_v2", &cuCtxPushCurrent);
    resolve(lib, "cuCtxPopCurrent_v2", &cuCtxPopCurrent);
    resolve(lib, "cuDeviceGet", &cuDeviceGet);
    resolve(lib, "cuDevicePrimaryCtxReset_v2", &cuDevicePrimaryCtxReset);
    resolve(lib, "cuMemAlloc_v2", &cuMemAlloc);
    resolve(lib, "cuMemFree_v2", &cuMemFree);
    resolve(lib, "cuMemcpyHtoD_v2", &cuMemcpyHtoD);
    resolve(lib, "cuMemcpyDtoH_v2", &cuMemcpyDtoH);
    void *ctx = NULL;
    cuda_ok(cuInit(0), "cuInit");
    cuda_ok(cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain");
    cuda_ok(cuCtxPushCurrent(ctx), "cuCtxPushCurrent");
}

/* ---- the GPU program ---- */
static CUdeviceptr gpu_state;  /* device address of the state */
static CUdeviceptr gpu_result; /* device address of the result word, after the state */
static uint32_t kernel_words[STATE_WORDS + 1]; /* the host's view while it plays the kernel */
static int gpu_failed, faults;
static double fault_rate;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double random_unit(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ULL << 53);
}

static void reboot_GPU(void) {
    memset(kernel_words, 0, sizeof kernel_words);
    cuda_ok(cuMemcpyHtoD(gpu_state, kernel_words, DEVICE_BYTES), "cuMemcpyHtoD");
    gpu_failed = 0;
}

/* One launch: updates every state word and writes the result word. May fail. */
static void run_gpu_kernel(uint32_t i, uint32_t j) {
    cuda_ok(cuMemcpyDtoH(kernel_words, gpu_state, DEVICE_BYTES), "cuMemcpyDtoH");
    uint32_t result = 0;
    for (uint32_t k = 0; k < STATE_WORDS; k++) {
        kernel_words[k] = kernel_words[k] * 1664525u + (i * 1000u + j + k);
        result = result * 31u + kernel_words[k];
    }
    kernel_words[STATE_WORDS] = result;
    if (fault_rate > 0 && random_unit() < fault_rate) {
        memset(kernel_words, 0xde, sizeof kernel_words); /* garbage */
        gpu_failed = 1;
        faults++;
    }
    cuda_ok(cuMemcpyHtoD(gpu_state, kernel_words, DEVICE_BYTES), "cuMemcpyHtoD");
}

static int gpu_error(void) { return gpu_failed; }

/* cudaDeviceReset: every allocation is gone and the primary context with them; the context
 * retained again is made current. Then the state is allocated again (maybe at its old
 * address) and zeroed. */
static void reset_GPU(void) {
    int device = 0;
    void *ctx = NULL;
    cuda_ok(cuCtxPopCurrent(&ctx), "cuCtxPopCurrent");
    cuda_ok(cuDeviceGet(&device, 0), "cuDeviceGet");
    cuda_ok(cuDevicePrimaryCtxReset(device), "cuDevicePrimaryCtxReset");
    cuda_ok(cuDevicePrimaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain");
    cuda_ok(cuCtxPushCurrent(ctx), "cuCtxPushCurrent");
    cuda_ok(cuMemAlloc(&gpu_state, DEVICE_BYTES), "cuMemAlloc");
    gpu_result = gpu_state + STATE_WORDS * sizeof(uint32_t);
    reboot_GPU();
}

static void copy_from_gpu(CUdeviceptr src, uint32_t *dst) {
    cuda_ok(cuMemcpyDtoH(dst, src, sizeof *dst), "cuMemcpyDtoH");
}

static int application_detects_sdc(void) { return 0; }

/* The same computation without faults and without CDs. */
static uint32_t fault_free_run(void) {
    uint32_t *state = calloc(STATE_WORDS, sizeof(uint32_t)), result = 0;
    if (!state) die("out of memory");
    for (uint32_t i = 1; i <= OUTER; i++)
        for (uint32_t j = 1; j <= N_CD; j++) {
            uint32_t r = 0;
            for (uint32_t k = 0; k < STATE_WORDS; k++) {
                state[k] = state[k] * 1664525u + (i * 1000u + j + k);
                r = r * 31u + state[k];
            }
            result = result * 7u + (r ^ i);
        }
    free(state);
    return result;
}

static void fail(const char *what) {
    char msg[256];
    size_t n;
    cd_last_error_message(msg, sizeof msg, &n);
    fprintf(stderr, "%s failed: %s\n", what, msg);
    exit(1);
}

int main(void) {
    const char *rate = getenv("CD_FAULT_RATE"), *seed = getenv("CD_SEED");
    const int reset = getenv("CD_RESET") && atoi(getenv("CD_RESET"));
    int resets = 0, same_address = 0;
    fault_rate = rate ? atof(rate) : 0.05;
    if (seed) rng ^= strtoull(seed, NULL, 10) * 0x2545f4914f6cdd1dULL;
    load_cuda();
    cuda_ok(cuMemAlloc(&gpu_state, DEVICE_BYTES), "cuMemAlloc");
    gpu_result = gpu_state + STATE_WORDS * sizeof(uint32_t);
    reboot_GPU(); /* zeroed state */

    char *storage_info = NULL;
    uint32_t node_copy_of_result = 0, checksum = 0, i = 1, j = 1;
    int error, in_flight = 0, drained = 0;
    /* The variable gpu_state is saving GPU memory: a plain device pointer. */
    /* The variables i, j, node_copy_of_result and checksum are saving Node memory. */
    struct cd_addrspec as[5] = {
        {(void *)(uintptr_t)gpu_state, STATE_WORDS * sizeof(uint32_t), READ_WRITE, GLOBAL},
        {&node_copy_of_result, sizeof(node_copy_of_result), READ_WRITE, GLOBAL},
        {&i, sizeof(i), READ_WRITE, GLOBAL},
        {&j, sizeof(j), READ_WRITE, GLOBAL},
        {&checksum, sizeof(checksum), READ_WRITE, GLOBAL}};
    cd_handle cd = create_cd(NULL, storage_info, COMM_LOGGING_ENABLED, "root", &error);
    if (cd == NULL) fail("create_cd");
    while (i <= OUTER) {
        /* before data modified and after each advance: a promotion, which does not wait for
         * the drain of the previous advance */
        if (add_to_cd_via_copy(cd, as, 5) != SUCCESS) fail("add_to_cd_via_copy");
        error = 0;
        for (j = 1; j <= N_CD; j++) {
            run_gpu_kernel(i, j);
            error = gpu_error();
            if (!error) {
                copy_from_gpu(gpu_result, &node_copy_of_result); /* GPU -> node */
                error = gpu_error();
            }
            error = error || application_detects_sdc();
            if (error) {
                if (reset) {
                    /* the recipe for cuMemAlloc arrays: reset, allocate again, tell libcd,
                     * move the CD's device range to the new address (or onto itself) */
                    CUdeviceptr old_state = gpu_state;
                    reset_GPU();
                    if (cd_device_reset() != SUCCESS) fail("cd_device_reset");
                    if (cd_remap_device_region((void *)(uintptr_t)old_state,
                                               (void *)(uintptr_t)gpu_state,
                                               STATE_WORDS * sizeof(uint32_t)) != SUCCESS)
                        fail("cd_remap_device_region");
                    as[0].address = (void *)(uintptr_t)gpu_state;
                    resets++;
                    same_address += gpu_state == old_state;
                } else {
                    reboot_GPU();
                }
                /* back to the last complete point: a drain still running is dropped */
                if (restore_cd(cd) != SUCCESS) fail("restore_cd");
                break;
            }
            /* MPI_Send(node_copy_of_result); MPI_Recv(....); -- here: fold it locally */
            checksum = checksum * 7u + (node_copy_of_result ^ i);
        }
        if (!error) {
            i++; /* this outer iteration is done: the advance saves the next one's start */
            /* waits for the previous drain, snapshots on the default stream, drains behind */
            if (cd_advance_async(cd, NULL, &in_flight) != SUCCESS) {
                reboot_GPU();
                if (restore_cd(cd) != SUCCESS) fail("restore_cd");
            }
            drained += in_flight;
        }
    }
    if (cd_advance_wait(cd) != SUCCESS) fail("cd_advance_wait");
    struct cd_stats st;
    cd_get_stats(cd, &st);
    if (commit_cd(cd) != SUCCESS) fail("commit_cd");
    cuda_ok(cuMemFree(gpu_state), "cuMemFree");

    uint32_t expected = fault_free_run();
    /* An advance counts once its drain completed: one dropped by a restore does not. */
    printf("simple_cuda: %d faults met, %llu restores, %llu advances (%d started behind the "
           "kernels)\n",
           faults, (unsigned long long)st.restores, (unsigned long long)st.advances, drained);
    if (reset)
        printf("simple_cuda: %d GPU resets, the state back at its old address %d times\n",
               resets, same_address);
    printf("simple_cuda: result %08x, fault-free run %08x: %s\n", checksum, expected,
           checksum == expected ? "equal" : "DIFFERENT");
    return checksum == expected ? 0 : 1;
}
