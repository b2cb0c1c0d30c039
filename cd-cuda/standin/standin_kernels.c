/* Part of the stand-in CUDA driver (included at the end of cuda_standin.c, whose state and
 * helpers it uses): memory pools made with cuMemPoolCreate, modules of PTX text
 * (cuModuleLoadData notes the names of their .entry functions) and the kernels the stand-in
 * knows by name, played on the host when their stream runs (the arithmetic of
 * cd-cuda/kernels/kernels.ll). Not compiled on its own. */

/* ---- Memory pools made with cuMemPoolCreate ---- */

/* A pool on device 0 (the properties are not read: pinned device memory is all there is). */
CUresult cuMemPoolCreate(CUmemoryPool *pool, const void *props) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (!pool || !props) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    CUresult rc = CUDA_SUCCESS;
    struct pool_s *p = nmade_pools < MAX_POOLS ? calloc(1, sizeof *p) : NULL;
    if (!p) rc = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        p->gen = generation;
        made_pools[nmade_pools++] = p;
        *pool = p;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
/* Every attribute is accepted (the release threshold, 4, among them); none changes anything
 * here: freed blocks always stay in their pool. */
CUresult cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void *value) {
    pthread_mutex_lock(&lock);
    int known = valid_pool(pool);
    pthread_mutex_unlock(&lock);
    return known && attr >= 1 && attr <= 8 && value ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
/* Gives the pool's free blocks back (all of them: `keep` is not honoured). */
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
    (void)keep;
    pthread_mutex_lock(&lock);
    int known = valid_pool(pool);
    if (known) pool->nfree = 0;
    pthread_mutex_unlock(&lock);
    return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- Modules and kernels: PTX text, played on the host by name ---- */

enum { CUDA_ERROR_INVALID_IMAGE = 200, CUDA_ERROR_NOT_FOUND = 500 };
typedef struct module_s *CUmodule;
typedef const struct kernel_s *CUfunction;
/* A kernel the stand-in knows: its name, parameter count (each 8 bytes) and largest block. */
struct kernel_s { const char *name; int nparams; unsigned max_threads; };
static const struct kernel_s kernels[] = {
    {"cd_block_sums", 5, 256},
    {"cd_gather_blocks", 6, 1024},
    {"cd_bench_stencil", 3, 1024},
};
#define NKERNELS ((int)(sizeof kernels / sizeof kernels[0]))
#define MAX_MODULES 64
#define MAX_ENTRIES 16
struct module_s { char names[MAX_ENTRIES][64]; int nnames, gen; };
static struct module_s modules[MAX_MODULES];
static unsigned long long launches;

/* Loads PTX text: notes the names of its `.entry` functions. */
CUresult cuModuleLoadData(CUmodule *module, const void *image) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    const char *text = image;
    if (!strstr(text, ".version") || !strstr(text, ".target")) return CUDA_ERROR_INVALID_IMAGE;
    pthread_mutex_lock(&lock);
    CUresult rc = CUDA_SUCCESS;
    if (nmodules == MAX_MODULES) { rc = CUDA_ERROR_OUT_OF_MEMORY; goto out; }
    struct module_s *m = &modules[nmodules];
    memset(m, 0, sizeof *m);
    for (const char *at = strstr(text, ".entry "); at && m->nnames < MAX_ENTRIES;
         at = strstr(at + 1, ".entry ")) {
        at += strlen(".entry ");
        size_t n = strcspn(at, "( \t\r\n");
        if (n == 0 || n >= sizeof m->names[0]) continue;
        memcpy(m->names[m->nnames++], at, n);
    }
    if (m->nnames == 0) { rc = CUDA_ERROR_INVALID_IMAGE; goto out; }
    m->gen = generation;
    nmodules++;
    *module = m;
out:
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    if (!f || !m || !name) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    CUresult rc = m->gen == generation ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < m->nnames && rc == CUDA_ERROR_NOT_FOUND; i++)
        if (strcmp(m->names[i], name) == 0)
            for (int k = 0; k < NKERNELS; k++)
                if (strcmp(kernels[k].name, name) == 0) { *f = &kernels[k]; rc = CUDA_SUCCESS; }
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuModuleUnload(CUmodule m) {
    if (!m) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    CUresult rc = m->gen == generation ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS) m->gen = -1;
    pthread_mutex_unlock(&lock);
    return rc;
}

static unsigned long long fmix64(unsigned long long x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}
/* The device ranges a launch reads and writes, checked when it is queued (lock held): the
 * real driver would fault the kernel (a sticky error); here the launch is refused. */
static int kernel_ranges_ok(int k, const unsigned long long *a) {
    if (k == 0) { /* data, nwords, words_per_block, sums, seed */
        if (a[2] == 0) return 0;
        unsigned long long blocks = (a[1] + a[2] - 1) / a[2];
        return (a[1] == 0 || device_view(a[0], a[1] * 8, MEM_ACCESS_READ))
            && (blocks == 0 || device_view(a[3], blocks * 16, MEM_ACCESS_READWRITE));
    }
    if (k == 1) { /* dst, src, list, count, block_bytes, src_len */
        if (a[4] == 0 || a[4] % 8) return 0;
        return a[3] == 0
            || (device_view(a[0], a[3] * a[4], MEM_ACCESS_READWRITE)
                && device_view(a[1], a[5], MEM_ACCESS_READ)
                && device_view(a[2], a[3] * 8, MEM_ACCESS_READ));
    }
    /* out, in, n */
    return a[2] == 0 || (device_view(a[0], a[2] * 4, MEM_ACCESS_READWRITE)
                         && device_view(a[1], a[2] * 4, MEM_ACCESS_READ));
}
/* Runs a queued kernel on the host (lock held), as kernels.ll describes it. */
static void run_kernel(int k, const unsigned long long *a) {
    launches++;
    if (k == 0) {
        if (a[1] == 0) return;
        const unsigned long long *w = (const void *)device_view(a[0], a[1] * 8, MEM_ACCESS_READ);
        unsigned long long blocks = (a[1] + a[2] - 1) / a[2];
        unsigned long long *sums = (void *)device_view(a[3], blocks * 16, MEM_ACCESS_READWRITE);
        for (unsigned long long b = 0; b < blocks; b++) {
            unsigned long long s1 = 0, s2 = 0, end = (b + 1) * a[2] < a[1] ? (b + 1) * a[2] : a[1];
            for (unsigned long long i = b * a[2]; i < end; i++) {
                unsigned long long x = w[i];
                s1 += fmix64(x ^ (i * 0x9E3779B97F4A7C15ULL + a[4]));
                s2 += fmix64(((x << 29) | (x >> 35)) ^ (i * 0xC2B2AE3D27D4EB4FULL + ~a[4]));
            }
            sums[2 * b] = s1;
            sums[2 * b + 1] = s2;
        }
    } else if (k == 1) {
        if (a[3] == 0) return;
        unsigned char *dst = (void *)device_view(a[0], a[3] * a[4], MEM_ACCESS_READWRITE);
        const unsigned char *src = (const void *)device_view(a[1], a[5], MEM_ACCESS_READ);
        const unsigned long long *list = (const void *)device_view(a[2], a[3] * 8, MEM_ACCESS_READ);
        for (unsigned long long j = 0; j < a[3]; j++) {
            unsigned long long o = list[j] * a[4];
            if (o >= a[5]) continue; /* a block past the end: nothing to copy */
            size_t n = a[5] - o < a[4] ? a[5] - o : a[4];
            memcpy(dst + j * a[4], src + o, n);
        }
    } else {
        if (a[2] == 0) return;
        float *out = (void *)device_view(a[0], a[2] * 4, MEM_ACCESS_READWRITE);
        const float *in = (const void *)device_view(a[1], a[2] * 4, MEM_ACCESS_READ);
        /* every output from the input as it was: in and out are separate arrays */
        for (unsigned long long t = 0; t < a[2]; t++) {
            unsigned long long l = t == 0 ? 0 : t - 1, r = t + 1 >= a[2] ? t : t + 1;
            out[t] = in[l] * 0.25f + in[t] * 0.5f + in[r] * 0.25f;
        }
    }
}
/* Queues a kernel on a stream: its 8-byte parameters are copied now, as the driver does. */
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream handle,
                        void **params, void **extra) {
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    int k = -1;
    for (int i = 0; i < NKERNELS; i++)
        if (f == &kernels[i]) k = i;
    if (k < 0) return CUDA_ERROR_INVALID_HANDLE;
    if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > kernels[k].max_threads
        || shared > 48 << 10 || extra || !params)
        return CUDA_ERROR_INVALID_VALUE;
    struct op o = {5, 0, 0, (size_t)k, NULL, {0}};
    for (int i = 0; i < kernels[k].nparams; i++) {
        if (!params[i]) return CUDA_ERROR_INVALID_VALUE;
        memcpy(&o.args[i], params[i], 8);
    }
    pthread_mutex_lock(&lock);
    struct stream_s *s = stream_of(handle);
    CUresult rc = !s ? CUDA_ERROR_INVALID_HANDLE
                : kernel_ranges_ok(k, o.args) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) push_op(s, o);
    pthread_mutex_unlock(&lock);
    return rc;
}

/* Test hook: the number of kernels run so far. */
unsigned long long cuStandinKernelLaunches(void) {
    pthread_mutex_lock(&lock);
    unsigned long long n = launches;
    pthread_mutex_unlock(&lock);
    return n;
}
