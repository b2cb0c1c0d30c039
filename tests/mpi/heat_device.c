/* The 1-D heat equation of heat_persist.c with its array in device memory, under a persistent
 * root CD: the device ranges are persisted with the host ones, and a restart (a new process,
 * new device addresses) brings them back through the device's copy functions.
 *
 * HEAT_DEVICE selects the device:
 *   space  a simulated GPU registered with cd_register_memory_space: its memory is an arena
 *          that only its copy functions touch (they check every range they are given);
 *   cuda   the built-in CUDA space, no callbacks: device memory from cuMemAlloc of the driver
 *          that CD_CUDA_LIBRARY names (the tests' stand-in, whose memory the CPU cannot touch).
 * Each step is a "kernel": the array is copied to the host, swept, and copied back. The CD
 * persists every INTERVAL steps (dir=$HEAT_CACHE/node{rank}, XOR over 4 ranks); HEAT_KILL_AT=S
 * kills every rank after step S. Prints "heat rank R resumed S version V" after a restart's
 * restore and "heat rank R result STEPS PART HEX" at the end, like heat_persist.c. */
#include <cd.h>
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "heat"
#include "support.h"

#define N 64
#define STEPS 100
#define INTERVAL 10
#define RESULT_PARTS 3
#define PART ((N + 2) / RESULT_PARTS)
#define BYTES ((N + 2) * sizeof(double))

static int rank;

/* ---- the simulated GPU of HEAT_DEVICE=space ---- */
static unsigned char *arena; /* its memory: only the two copy functions touch it */

static int arena_holds(const void *p, size_t n) {
    const unsigned char *b = p;
    return b >= arena && b + n <= arena + BYTES;
}

static int sim_to_host(void *dst, const void *src_dev, size_t n, void *ctx) {
    (void)ctx;
    if (!arena_holds(src_dev, n)) return 1;
    memcpy(dst, src_dev, n);
    return 0;
}

static int sim_to_device(void *dst_dev, const void *src, size_t n, void *ctx) {
    (void)ctx;
    if (!arena_holds(dst_dev, n)) return 1;
    memcpy(dst_dev, src, n);
    return 0;
}

/* ---- the CUDA driver of HEAT_DEVICE=cuda (resolved at run time, like libcd does) ---- */
static int (*cu_htod)(unsigned long long, const void *, size_t);
static int (*cu_dtoh)(void *, unsigned long long, size_t);
static int (*cu_push)(void *);
static int (*cu_pop)(void **);
static void *cu_context;

/* The device array and how to reach it. */
static int use_cuda;
static void *device_u;

static void to_host(double *host) {
    if (use_cuda) {
        void *popped;
        if (cu_push(cu_context) || cu_dtoh(host, (uintptr_t)device_u, BYTES) ||
            cu_pop(&popped))
            die("cuMemcpyDtoH");
    } else if (sim_to_host(host, device_u, BYTES, NULL)) {
        die("copy to host");
    }
}

static void to_device(const double *host) {
    if (use_cuda) {
        void *popped;
        if (cu_push(cu_context) || cu_htod((uintptr_t)device_u, host, BYTES) ||
            cu_pop(&popped))
            die("cuMemcpyHtoD");
    } else if (sim_to_device(device_u, host, BYTES, NULL)) {
        die("copy to device");
    }
}

static void *cuda_symbol(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (!f) die(name);
    return f;
}

/* Allocates the device array: N+2 doubles. */
static void device_setup(void) {
    const char *device = getenv("HEAT_DEVICE") ? getenv("HEAT_DEVICE") : "space";
    if (strcmp(device, "cuda") == 0) {
        use_cuda = 1;
        const char *path = getenv("CD_CUDA_LIBRARY") ? getenv("CD_CUDA_LIBRARY") : "libcuda.so.1";
        void *lib = dlopen(path, RTLD_NOW);
        if (!lib) die("dlopen the CUDA driver");
        int (*init)(unsigned) = (int (*)(unsigned))cuda_symbol(lib, "cuInit");
        int (*retain)(void **, int) =
            (int (*)(void **, int))cuda_symbol(lib, "cuDevicePrimaryCtxRetain");
        int (*alloc)(unsigned long long *, size_t) =
            (int (*)(unsigned long long *, size_t))cuda_symbol(lib, "cuMemAlloc_v2");
        cu_push = (int (*)(void *))cuda_symbol(lib, "cuCtxPushCurrent_v2");
        cu_pop = (int (*)(void **))cuda_symbol(lib, "cuCtxPopCurrent_v2");
        cu_htod = (int (*)(unsigned long long, const void *, size_t))cuda_symbol(
            lib, "cuMemcpyHtoD_v2");
        cu_dtoh = (int (*)(void *, unsigned long long, size_t))cuda_symbol(lib,
                                                                          "cuMemcpyDtoH_v2");
        unsigned long long address = 0;
        void *popped;
        if (init(0) || retain(&cu_context, 0) || cu_push(cu_context) || alloc(&address, BYTES) ||
            cu_pop(&popped))
            die("cuMemAlloc");
        device_u = (void *)(uintptr_t)address;
    } else if (strcmp(device, "space") == 0) {
        arena = malloc(BYTES);
        if (!arena) die("malloc");
        int space = 0;
        if (cd_register_memory_space("simulated-gpu", sim_to_host, sim_to_device, NULL, &space) ||
            cd_map_device_region(space, arena, BYTES))
            die("register the simulated GPU");
        device_u = arena;
    } else {
        die("HEAT_DEVICE is neither space nor cuda");
    }
}

int main(int argc, char **argv) {
    static char out[1 << 16]; /* each line leaves in one write (see heat_persist.c) */
    setvbuf(stdout, out, _IOFBF, sizeof out);
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int kill_at = getenv("HEAT_KILL_AT") ? atoi(getenv("HEAT_KILL_AT")) : -1;

    device_setup();
    static double u[N + 2], v[N + 2];
    for (int i = 0; i < N + 2; i++) u[i] = (rank * 31 + i * 7) % 101;
    to_device(u);
    int step = 0;

    char info[1024];
    snprintf(info, sizeof info, "dir=%s/node{rank};scheme=xor;set_size=4;keep=2",
             getenv("HEAT_CACHE") ? getenv("HEAT_CACHE") : "/tmp");
    cd_handle cd = create_cd(NULL, info, COMM_LOGGING_DISABLED, "heat-device", NULL);
    if (!cd) return report_cd_error("create_cd");
    struct cd_addrspec state[] = {
        {device_u, BYTES, READ_WRITE, GLOBAL},
        {&step, sizeof step, READ_WRITE, GLOBAL},
    };
    if (add_to_cd_via_copy(cd, state, 2)) return report_cd_error("add_to_cd_via_copy");
    uint64_t version = 0;
    if (cd_recovered_version(cd, &version)) return report_cd_error("cd_recovered_version");
    if (version) {
        /* the device holds the initial condition, not the persisted point in time */
        if (restore_cd(cd)) return report_cd_error("restore_cd");
        printf("heat rank %d resumed %d version %llu\n", rank, step, (unsigned long long)version);
        fflush(stdout);
    }

    while (step < STEPS) {
        to_host(u); /* the "kernel": copy down, sweep, copy back */
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[N + 1], 1, MPI_DOUBLE, right, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[N], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 1; i <= N; i++) v[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
        memcpy(&u[1], &v[1], N * sizeof(double));
        to_device(u);
        step++;
        if (step % INTERVAL == 0) {
            if (advance_cd_point_in_time(cd) != 0)
                return report_cd_error("advance_cd_point_in_time");
            /* an advance demotes the ranges to READ_ONLY: promote them again */
            if (add_to_cd_via_copy(cd, state, 2)) return report_cd_error("add_to_cd_via_copy");
        }
        if (step == kill_at) raise(SIGKILL);
    }

    to_host(u);
    for (int p = 0; p < RESULT_PARTS; p++) {
        char hex[PART * 16 + 1];
        for (int i = 0; i < PART; i++) {
            uint64_t bits;
            memcpy(&bits, &u[p * PART + i], sizeof bits);
            snprintf(hex + i * 16, 17, "%016llx", (unsigned long long)bits);
        }
        printf("heat rank %d result %d %d %s\n", rank, step, p, hex);
        fflush(stdout);
    }
    if (commit_cd(cd)) return report_cd_error("commit_cd");
    MPI_Finalize();
    return 0;
}
