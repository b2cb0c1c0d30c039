/* The spec's "Simple API Use Example": a GPU kernel loop protected by a root CD, with a
 * simulated GPU. The GPU's memory is a separate arena that only its copy functions and its
 * kernel touch (registered with libcd as a device memory space, as a CUDA code registers
 * cudaMemcpy); a kernel launch fails at random, leaving device memory garbage, and the
 * program reboots the GPU and restores the CD. At the end the result is compared with a
 * fault-free run. This is the recipe for devices other than CUDA; CUDA memory needs no copy
 * functions (libcd's built-in CUDA space): see simple_cuda.c.
 *
 * Build: cc -O2 simple_gpu.c $(pkg-config --cflags --libs cd) -o simple_gpu
 * Run:   CD_FAULT_RATE=0.05 CD_SEED=1 ./simple_gpu      (add -Wl,-rpath,... or LD_LIBRARY_PATH)
 */
#include <cd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_CD 10
#define OUTER 100
#define STATE_WORDS (1 << 16) /* 256 KiB of device state */

/* ---- the simulated GPU ---- */
static uint32_t *device_memory; /* the GPU's memory: state words, then one result word */
static uint32_t *gpu_state;     /* device address of the state */
static uint32_t *gpu_result;    /* device address of the result */
static int gpu_failed, faults;
static double fault_rate;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double random_unit(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ULL << 53);
}

static int copy_to_host(void *dst, const void *src_dev, size_t n, void *ctx) {
    (void)ctx;
    memcpy(dst, src_dev, n); /* cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost) */
    return 0;
}

static int copy_to_device(void *dst_dev, const void *src, size_t n, void *ctx) {
    (void)ctx;
    memcpy(dst_dev, src, n); /* cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice) */
    return 0;
}

static void load_gpu_kernel(void) { gpu_failed = 0; }

static void reboot_GPU(void) {
    memset(device_memory, 0, (STATE_WORDS + 1) * sizeof(uint32_t));
    gpu_failed = 0;
}

/* One launch: updates every state word and writes the result word. May fail. */
static void run_gpu_kernel(uint32_t i, uint32_t j) {
    uint32_t result = 0;
    for (uint32_t k = 0; k < STATE_WORDS; k++) {
        gpu_state[k] = gpu_state[k] * 1664525u + (i * 1000u + j + k);
        result = result * 31u + gpu_state[k];
    }
    *gpu_result = result;
    if (fault_rate > 0 && random_unit() < fault_rate) {
        memset(device_memory, 0xde, (STATE_WORDS + 1) * sizeof(uint32_t)); /* garbage */
        gpu_failed = 1;
        faults++;
    }
}

static int gpu_error(void) { return gpu_failed; }

static void copy_from_gpu(const uint32_t *src_dev, uint32_t *dst) {
    copy_to_host(dst, src_dev, sizeof *dst, NULL);
}

static int application_detects_sdc(void) { return 0; }

/* The same computation without faults and without CDs. */
static uint32_t fault_free_run(void) {
    uint32_t *state = calloc(STATE_WORDS, sizeof(uint32_t)), result = 0;
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
    fault_rate = rate ? atof(rate) : 0.05;
    if (seed) rng ^= strtoull(seed, NULL, 10) * 0x2545f4914f6cdd1dULL;
    device_memory = calloc(STATE_WORDS + 1, sizeof(uint32_t));
    gpu_state = device_memory;
    gpu_result = device_memory + STATE_WORDS;
    int space;
    if (cd_register_memory_space("simulated-gpu", copy_to_host, copy_to_device, NULL, &space) ||
        cd_map_device_region(space, gpu_state, STATE_WORDS * sizeof(uint32_t)))
        fail("registering the GPU");

    char *storage_info = NULL;
    uint32_t node_copy_of_result = 0, checksum = 0, i = 1, j = 1;
    int error;
    /* The variable gpu_state is saving GPU memory. */
    /* The variables i, j, node_copy_of_result and checksum are saving Node memory. */
    struct cd_addrspec as[5] = {
        {gpu_state, STATE_WORDS * sizeof(uint32_t), READ_WRITE, GLOBAL},
        {&node_copy_of_result, sizeof(node_copy_of_result), READ_WRITE, GLOBAL},
        {&i, sizeof(i), READ_WRITE, GLOBAL},
        {&j, sizeof(j), READ_WRITE, GLOBAL},
        {&checksum, sizeof(checksum), READ_WRITE, GLOBAL}};
    cd_handle cd = create_cd(NULL, storage_info, COMM_LOGGING_ENABLED, "root", &error);
    if (cd == NULL) fail("create_cd");
    load_gpu_kernel();
    while (i <= OUTER) {
        /* before data modified and after each advance_cd_point_in_time */
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
                reboot_GPU();
                load_gpu_kernel();
                if (restore_cd(cd) != SUCCESS) fail("restore_cd");
                break;
            }
            /* MPI_Send(node_copy_of_result); MPI_Recv(....); -- here: fold it locally */
            checksum = checksum * 7u + (node_copy_of_result ^ i);
        }
        if (!error) {
            i++; /* this outer iteration is done: the advance saves the next one's start */
            if (advance_cd_point_in_time(cd) == FAILURE) {
                reboot_GPU();
                load_gpu_kernel();
                if (restore_cd(cd) != SUCCESS) fail("restore_cd");
            }
        }
    }
    struct cd_stats st;
    cd_get_stats(cd, &st);
    if (commit_cd(cd) != SUCCESS) fail("commit_cd");
    cd_unmap_device_region(gpu_state);
    free(device_memory);

    uint32_t expected = fault_free_run();
    printf("simple_gpu: %d faults met, %llu restores, %llu advances\n", faults,
           (unsigned long long)st.restores, (unsigned long long)st.advances);
    printf("simple_gpu: result %08x, fault-free run %08x: %s\n", checksum, expected,
           checksum == expected ? "equal" : "DIFFERENT");
    return checksum == expected ? 0 : 1;
}
