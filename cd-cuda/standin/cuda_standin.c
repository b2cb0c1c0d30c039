/* A stand-in for the CUDA driver library (libcuda.so.1), for tests on machines without a GPU.
 *
 * It exports the driver API symbols the built-in CUDA memory space uses, with CUDA's rules:
 * - "device memory" is host memory at its own addresses that the CPU cannot touch: a memfd is
 *   mapped twice, PROT_NONE at the device addresses handed out and read-write at an alias
 *   only this library uses, so a runtime that reads device memory directly crashes as it would
 *   on a GPU;
 * - cuMemAlloc places allocations back to back (as cudaMalloc does), and a copy that spans two
 *   allocations is refused with CUDA_ERROR_INVALID_VALUE;
 * - cuPointerGetAttributes reports memory type, managed flag, ordinal and allocation range,
 *   and default (zero) values for pointers it does not know;
 * - copies and stream work need a current context;
 * - asynchronous copies are queued on their stream and run only when the stream or an event
 *   recorded after them is synchronised, so a caller that reuses a buffer too early reads or
 *   writes the wrong bytes, as with a real DMA engine;
 * - host registration refuses overlaps and unknown ranges;
 * - the NULL stream (and CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) is the legacy default
 *   stream: synchronous copies first run the work queued on it, streams created with
 *   CU_STREAM_NON_BLOCKING are not ordered with it; cuStreamWaitEvent orders one stream after
 *   another's event; cuEventQuery reports CUDA_ERROR_NOT_READY until the work before the
 *   event ran; device-to-device copies and stream-ordered allocation (cuMemAllocAsync,
 *   cuMemFreeAsync, the free queued) follow the same rules, and cuMemGetInfo reports the
 *   arena's free bytes;
 * - cuPointerGetAttributes needs a current context (the real driver answers
 *   CUDA_ERROR_INVALID_CONTEXT without one: triton-lang/triton#5276); a stream-ordered
 *   allocation reports a NULL context (CUDA Programming Guide, "Stream Ordered Memory
 *   Allocator", pointer attributes);
 * - the virtual-memory API (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess,
 *   cuMemUnmap, cuMemRelease, cuMemAddressFree) with the driver API reference's rules: sizes
 *   and addresses in multiples of the granularity (2 MiB, as on an H100), a mapping inside one
 *   reservation and over no other mapping, offset and flags 0, cuMemSetAccess over whole
 *   mappings only, cuMemUnmap of whole mappings only, a physical allocation freed once it is
 *   both released and unmapped; mapped memory is unreadable until cuMemSetAccess, and holds
 *   garbage when mapped. CU_POINTER_ATTRIBUTE_RANGE_START_ADDR and _RANGE_SIZE report the
 *   whole reservation ("not necessarily the address of the mapped region, but the address of
 *   the mappable address range ptr references (e.g. from cuMemAddressReserve)"), and a copy
 *   may span several mappings of one reservation, never two reservations;
 * - stream-ordered allocation from the device's default pool (cuMemAllocAsync,
 *   cuMemAllocFromPoolAsync): a freed block goes back to its pool when the queued free runs,
 *   and the pool hands it out again, at the same address, to a later allocation of its size;
 * - cuStandinReset (and cuDevicePrimaryCtxReset_v2) play cudaDeviceReset: every device
 *   allocation, pool block, physical allocation and mapping, host registration and pinned
 *   host allocation is gone, streams and events made before it are invalid handles, and
 *   allocations made after it land at other addresses (or, with address reuse on, at the old
 *   ones when they are free, as the real driver did: cuStandinReuseAddresses,
 *   CD_CUDA_STANDIN_REUSE=1); address reservations stay, so arrays can be mapped again at the
 *   same virtual addresses. The primary context handle retained
 *   before the reset is destroyed (CUDA_ERROR_CONTEXT_IS_DESTROYED when pushed): the driver
 *   promises nothing about it, so a caller must retain the primary context again.
 * Managed memory (cuMemAllocManaged) is ordinary host memory reported as managed device memory.
 * cuStandinCounters exposes counts for tests; cuStandinRunStreams lets the copy engines catch
 * up (runs every queued operation). Build: cc -shared -fPIC -o libcuda_standin.so. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef int CUdevice;
typedef struct ctx_s *CUcontext;
typedef struct stream_s *CUstream;
typedef struct event_s *CUevent;
typedef struct pool_s *CUmemoryPool;
typedef unsigned long long CUmemGenericAllocationHandle;
/* The virtual-memory API's structures, laid out as in cuda.h (CUDA 12 and 13). */
typedef struct { int type; int id; } CUmemLocation;
typedef struct {
    int type;                 /* CU_MEM_ALLOCATION_TYPE_PINNED = 1 */
    int requestedHandleTypes;
    CUmemLocation location;   /* CU_MEM_LOCATION_TYPE_DEVICE = 1 */
    void *win32HandleMetaData;
    struct { unsigned char compressionType, gpuDirectRDMACapable; unsigned short usage;
             unsigned char reserved[4]; } allocFlags;
} CUmemAllocationProp;
typedef struct { CUmemLocation location; int flags; } CUmemAccessDesc;
enum { MEM_ALLOCATION_TYPE_PINNED = 1, MEM_LOCATION_TYPE_DEVICE = 1, MEM_ACCESS_READ = 1,
       MEM_ACCESS_READWRITE = 3 };
#define GRANULARITY ((size_t)2 << 20)

enum {
    CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3, CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_INVALID_HANDLE = 400, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
    CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713, CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_INVALID_DEVICE = 101, CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
};
enum { ATTR_CONTEXT = 1, ATTR_MEMORY_TYPE = 2, ATTR_IS_MANAGED = 8, ATTR_DEVICE_ORDINAL = 9,
       ATTR_RANGE_START = 11, ATTR_RANGE_SIZE = 12, ATTR_MAPPED = 13, ATTR_MEMPOOL_HANDLE = 17 };
enum { MEMORYTYPE_HOST = 1, MEMORYTYPE_DEVICE = 2 };

#define MAX_ALLOCS 4096
#define MAX_PINNED 1024
/* A cuMemAlloc, cuMemAllocManaged or pool allocation (pool: the pool it came from). */
struct pool_s;
struct alloc { uintptr_t start; size_t size; int managed; int live; struct pool_s *pool; };
/* Address reservations, physical allocations (handle = index + 1) and their mappings. */
#define MAX_VMM 1024
struct reservation { uintptr_t start; size_t size; int live; };
struct physical { size_t size; int live, released, mappings, gen; };
struct mapping { uintptr_t start; size_t size; int live, access; CUmemGenericAllocationHandle handle; };
static struct reservation reservations[MAX_VMM];
static struct physical physicals[MAX_VMM];
static struct mapping mappings[MAX_VMM];
static int nreservations, nphysicals, nmappings;
/* A pool's free blocks (start, rounded size), handed out again first; pools made with
 * cuMemPoolCreate belong to a generation (a reset destroys them). */
struct pool_s { uintptr_t starts[MAX_VMM]; size_t sizes[MAX_VMM]; int nfree, gen; };
static struct pool_s default_pool;
#define MAX_POOLS 64
static struct pool_s *made_pools[MAX_POOLS];
static int nmade_pools;
static int nmodules; /* modules loaded since the last reset (see cuModuleLoadData) */
struct pinned { uintptr_t start; size_t size; int from_alloc_host; };
/* to_device: 0 device to host, 1 host to device, 2 device to device, 3 wait for `wait`
 * up to `n`, 4 free the allocation at `dst`, 5 run kernel `n` (an index into `kernels`) with
 * `args`. */
struct op { int to_device; uintptr_t dst, src; size_t n; struct stream_s *wait;
            unsigned long long args[6]; };
struct stream_s { struct op *ops; size_t len, cap; unsigned long long done, issued; int gen; };
struct event_s { struct stream_s *stream; unsigned long long seq; int gen; };
#define MAX_STREAMS 256
struct ctx_s { int device; };
/* The primary context of each generation (a reset destroys it); handles stay addressable. */
#define MAX_GENERATIONS 256
static struct ctx_s contexts[MAX_GENERATIONS];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialised;
static __thread int current_depth;
static uintptr_t dev_base, alias_base, next_free;
static size_t arena_bytes;
static struct alloc allocs[MAX_ALLOCS];
static int nallocs;
static struct pinned pins[MAX_PINNED];
static int npins;
/* 0 sync D2H bytes, 1 sync H2D bytes, 2 async D2H bytes, 3 async H2D bytes,
 * 4 async copies whose host side was not pinned, 5 live registrations, 6 registrations made,
 * 7 copies refused */
static unsigned long long counters[12];
/* 8 live device allocations, 9 device-to-device bytes, 10 stream-ordered allocations made,
 * 11 resets */
static int refuse_register;
/* Whether freed device addresses are handed out again (first fit), so that an array
 * allocated again after a reset comes back at its old address, as the real driver does:
 * cuStandinReuseAddresses, or CD_CUDA_STANDIN_REUSE=1 at cuInit. Off by default: allocations
 * after a reset land at other addresses. */
static int reuse_addresses;
static size_t free_limit = (size_t)-1;
static int generation;
static struct op legacy_ops[64];
static struct stream_s legacy = {legacy_ops, 0, 64, 0, 0, 0};
static struct stream_s *streams[MAX_STREAMS];
static int nstreams;

CUresult cuInit(unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    if (!initialised) {
        const char *env = getenv("CD_CUDA_STANDIN_BYTES");
        arena_bytes = env ? strtoull(env, NULL, 10) : (size_t)512 << 20;
        const char *reuse = getenv("CD_CUDA_STANDIN_REUSE");
        reuse_addresses = reuse && reuse[0] == '1';
        int fd = memfd_create("cuda-standin", 0);
        if (fd < 0 || ftruncate(fd, (off_t)arena_bytes) != 0) goto fail;
        void *dev = mmap(NULL, arena_bytes, PROT_NONE, MAP_SHARED, fd, 0);
        void *alias = mmap(NULL, arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (dev == MAP_FAILED || alias == MAP_FAILED) goto fail;
        dev_base = next_free = (uintptr_t)dev;
        alias_base = (uintptr_t)alias;
        initialised = 1;
    }
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
fail:
    pthread_mutex_unlock(&lock);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuGetErrorString(CUresult e, const char **s) {
    switch (e) {
    case CUDA_SUCCESS: *s = "no error"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *s = "initialization error"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *s = "invalid device context"; break;
    case CUDA_ERROR_INVALID_DEVICE: *s = "invalid device ordinal"; break;
    case CUDA_ERROR_CONTEXT_IS_DESTROYED: *s = "context is destroyed"; break;
    case CUDA_ERROR_INVALID_HANDLE: *s = "invalid resource handle"; break;
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: *s = "part or all of the requested memory range is already mapped"; break;
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: *s = "pointer does not correspond to a registered memory region"; break;
    default: *s = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal != 0) return CUDA_ERROR_INVALID_VALUE;
    *d = 0;
    return CUDA_SUCCESS;
}
static CUcontext primary(void) { return &contexts[generation % MAX_GENERATIONS]; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (d != 0) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    *c = primary();
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}
/* Safe after a reset too (the driver API reference says so for cuDevicePrimaryCtxReset). */
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
CUresult cuCtxPushCurrent_v2(CUcontext c) {
    pthread_mutex_lock(&lock);
    CUcontext current = primary();
    pthread_mutex_unlock(&lock);
    if (c >= contexts && c < contexts + MAX_GENERATIONS && c != current)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (c != current) return CUDA_ERROR_INVALID_CONTEXT;
    current_depth++;
    return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent_v2(CUcontext *c) {
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    current_depth--;
    if (c) *c = primary();
    return CUDA_SUCCESS;
}

static struct alloc *find_alloc(uintptr_t p) {
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].live && p >= allocs[i].start && p < allocs[i].start + allocs[i].size)
            return &allocs[i];
    return NULL;
}
static struct pinned *find_pinned(uintptr_t p, size_t n) {
    for (int i = 0; i < npins; i++)
        if (p >= pins[i].start && p + n <= pins[i].start + pins[i].size) return &pins[i];
    return NULL;
}
static struct reservation *find_reservation(uintptr_t p) {
    for (int i = 0; i < nreservations; i++)
        if (reservations[i].live && p >= reservations[i].start
            && p < reservations[i].start + reservations[i].size)
            return &reservations[i];
    return NULL;
}
static struct mapping *find_mapping(uintptr_t p) {
    for (int i = 0; i < nmappings; i++)
        if (mappings[i].live && p >= mappings[i].start && p < mappings[i].start + mappings[i].size)
            return &mappings[i];
    return NULL;
}
/* Whether p..p+n lies in one reservation, every byte mapped with at least `access`. */
static int mapped_with(uintptr_t p, size_t n, int access) {
    struct reservation *r = find_reservation(p);
    if (!r || n > r->start + r->size - p) return 0;
    for (uintptr_t at = p; at < p + n;) {
        struct mapping *m = find_mapping(at);
        if (!m || (m->access & access) != access) return 0;
        at = m->start + m->size;
    }
    return 1;
}
/* The CPU-visible address of device range p..p+n, or 0 when it is not inside one allocation
 * (or one reservation's mappings, accessible for `access`). */
static uintptr_t device_view(uintptr_t p, size_t n, int access) {
    struct alloc *a = find_alloc(p);
    if (a && n <= a->start + a->size - p) return a->managed ? p : p - dev_base + alias_base;
    if (!a && mapped_with(p, n, access)) return p - dev_base + alias_base;
    counters[7]++;
    return 0;
}

/* Whether p..p+n meets a live device allocation, a live reservation or a free pool block
 * (lock held). */
static int occupied(uintptr_t p, size_t n) {
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].live && !allocs[i].managed && p < allocs[i].start + allocs[i].size
            && allocs[i].start < p + n)
            return 1;
    for (int i = 0; i < nreservations; i++)
        if (reservations[i].live && p < reservations[i].start + reservations[i].size
            && reservations[i].start < p + n)
            return 1;
    for (int k = -1; k < nmade_pools; k++) {
        struct pool_s *pl = k < 0 ? &default_pool : made_pools[k];
        for (int i = 0; i < pl->nfree; i++)
            if (p < pl->starts[i] + pl->sizes[i] && pl->starts[i] < p + n) return 1;
    }
    return 0;
}
/* Carves `rounded` bytes, aligned to `align`, from the arena (lock held); 0 when full. With
 * address reuse on, the lowest free place (first fit over the arena's start and the ends of
 * live allocations, reservations and free pool blocks, as a real driver's address space
 * hands a freed range out again; free pool blocks stay their pool's), else the end of the
 * last allocation. */
static uintptr_t carve(size_t rounded, size_t align) {
    uintptr_t start = (next_free + align - 1) & ~(uintptr_t)(align - 1);
    if (reuse_addresses) {
        /* candidates: the arena's start and the end of every occupied range */
        uintptr_t best = 0;
        for (int i = -1; i < nallocs + nreservations; i++) {
            uintptr_t c = dev_base;
            if (i >= 0 && i < nallocs) {
                if (!allocs[i].live || allocs[i].managed) continue;
                c = allocs[i].start + allocs[i].size;
            } else if (i >= nallocs) {
                struct reservation *r = &reservations[i - nallocs];
                if (!r->live) continue;
                c = r->start + r->size;
            }
            c = (c + align - 1) & ~(uintptr_t)(align - 1);
            if ((best == 0 || c < best) && c + rounded <= dev_base + arena_bytes
                && c + rounded > c && !occupied(c, rounded))
                best = c;
        }
        for (int k = -1; k < nmade_pools; k++) { /* and the ends of free pool blocks */
            struct pool_s *pl = k < 0 ? &default_pool : made_pools[k];
            for (int i = 0; i < pl->nfree; i++) {
                uintptr_t c = (pl->starts[i] + pl->sizes[i] + align - 1) & ~(uintptr_t)(align - 1);
                if ((best == 0 || c < best) && c + rounded <= dev_base + arena_bytes
                    && c + rounded > c && !occupied(c, rounded))
                    best = c;
            }
        }
        if (best == 0) return 0;
        if (best + rounded > next_free) next_free = best + rounded;
        return best;
    }
    if (start + rounded > dev_base + arena_bytes || start + rounded < start) return 0;
    next_free = start + rounded;
    return start;
}
static CUresult alloc_common(CUdeviceptr *p, size_t size, int managed, struct pool_s *pool) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (size == 0 || !p) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    CUresult rc = CUDA_SUCCESS;
    uintptr_t start = 0;
    size_t rounded = (size + 255) & ~(size_t)255; /* back to back, 256-byte aligned */
    if (managed) {
        void *m = NULL;
        if (posix_memalign(&m, 4096, size) != 0) { rc = CUDA_ERROR_OUT_OF_MEMORY; goto out; }
        start = (uintptr_t)m;
    } else {
        if (pool) /* a freed block of the pool of this size, at its old address */
            for (int i = 0; i < pool->nfree && !start; i++)
                if (pool->sizes[i] == rounded) {
                    start = pool->starts[i];
                    pool->nfree--;
                    pool->starts[i] = pool->starts[pool->nfree];
                    pool->sizes[i] = pool->sizes[pool->nfree];
                }
        if (!start && !(start = carve(rounded, 256))) { rc = CUDA_ERROR_OUT_OF_MEMORY; goto out; }
    }
    if (nallocs == MAX_ALLOCS) { /* forget dead allocations (nothing refers to them) */
        int kept = 0;
        for (int i = 0; i < nallocs; i++)
            if (allocs[i].live) allocs[kept++] = allocs[i];
        nallocs = kept;
    }
    if (nallocs == MAX_ALLOCS) { rc = CUDA_ERROR_OUT_OF_MEMORY; goto out; }
    allocs[nallocs++] = (struct alloc){start, size, managed, 1, pool};
    if (!managed) counters[8]++;
    *p = start;
out:
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size) { return alloc_common(p, size, 0, NULL); }
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t size, unsigned int flags) {
    (void)flags;
    return alloc_common(p, size, 1, NULL);
}
/* Frees an allocation (lock held): a pool block goes back to its pool, the arena's last
 * allocation gives its space back. */
static CUresult free_alloc(uintptr_t p) {
    struct alloc *a = find_alloc(p);
    if (!a || a->start != p) return CUDA_ERROR_INVALID_VALUE;
    a->live = 0;
    size_t rounded = (a->size + 255) & ~(size_t)255;
    if (a->managed) {
        free((void *)a->start);
    } else if (a->pool && a->pool->nfree < MAX_VMM) {
        counters[8]--;
        a->pool->starts[a->pool->nfree] = a->start;
        a->pool->sizes[a->pool->nfree++] = rounded;
    } else {
        counters[8]--;
        if (a->start + rounded == next_free) next_free = a->start;
    }
    return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
    pthread_mutex_lock(&lock);
    CUresult rc = free_alloc((uintptr_t)p);
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    size_t left = dev_base + arena_bytes - next_free;
    *free_bytes = left < free_limit ? left : free_limit;
    *total = arena_bytes;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

/* ---- The virtual-memory API ---- */

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                       int option) {
    (void)option;
    if (!granularity || !prop || prop->type != MEM_ALLOCATION_TYPE_PINNED
        || prop->location.type != MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    *granularity = GRANULARITY;
    return CUDA_SUCCESS;
}
/* `addr` is a hint, which the stand-in does not follow (nor must the driver). */
CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags) {
    (void)addr;
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (!ptr || size == 0 || size % GRANULARITY || flags || (alignment & (alignment - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t start;
    if (nreservations < MAX_VMM
        && (start = carve(size, alignment > GRANULARITY ? alignment : GRANULARITY))) {
        reservations[nreservations++] = (struct reservation){start, size, 1};
        *ptr = start;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
/* The size and address must be those the reservation was made with; no mapping may remain
 * (the reference does not say; the stand-in is strict). */
CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
    pthread_mutex_lock(&lock);
    struct reservation *r = find_reservation((uintptr_t)ptr);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (r && r->start == ptr && r->size == size) {
        int mapped = 0;
        for (int i = 0; i < nmappings; i++)
            mapped |= mappings[i].live && mappings[i].start >= r->start
                      && mappings[i].start < r->start + r->size;
        if (!mapped) { r->live = 0; rc = CUDA_SUCCESS; }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                     const CUmemAllocationProp *prop, unsigned long long flags) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (!handle || !prop || flags || size == 0 || size % GRANULARITY
        || prop->type != MEM_ALLOCATION_TYPE_PINNED || prop->location.type != MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.id != 0) return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (nphysicals < MAX_VMM) {
        physicals[nphysicals] = (struct physical){size, 1, 0, 0, generation};
        *handle = (CUmemGenericAllocationHandle)++nphysicals;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
/* The physical allocation a handle names, if it is live (lock held). */
static struct physical *physical_of(CUmemGenericAllocationHandle h) {
    if (h == 0 || h > (CUmemGenericAllocationHandle)nphysicals) return NULL;
    struct physical *ph = &physicals[h - 1];
    return ph->live && ph->gen == generation ? ph : NULL;
}
static void put_physical(struct physical *ph) {
    if (ph->released && ph->mappings == 0) ph->live = 0;
}
CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
    pthread_mutex_lock(&lock);
    struct physical *ph = physical_of(handle);
    CUresult rc = ph && !ph->released ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        ph->released = 1;
        put_physical(ph);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                  CUmemGenericAllocationHandle handle, unsigned long long flags) {
    pthread_mutex_lock(&lock);
    struct physical *ph = physical_of(handle);
    struct reservation *r = find_reservation((uintptr_t)ptr);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (!ph || ph->released) goto out; /* a released handle cannot be mapped again */
    if (!r || offset || flags || size == 0 || size % GRANULARITY || ptr % GRANULARITY
        || size > ph->size || size > r->start + r->size - ptr)
        goto out;
    for (int i = 0; i < nmappings; i++)
        if (mappings[i].live && mappings[i].start < ptr + size && ptr < mappings[i].start + mappings[i].size)
            goto out;
    if (nmappings == MAX_VMM) { rc = CUDA_ERROR_OUT_OF_MEMORY; goto out; }
    mappings[nmappings++] = (struct mapping){(uintptr_t)ptr, size, 1, 0, handle};
    ph->mappings++;
    /* Fresh physical memory holds whatever was there: not the bytes of an earlier mapping. */
    memset((void *)((uintptr_t)ptr - dev_base + alias_base), 0xa5, size);
    rc = CUDA_SUCCESS;
out:
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count) {
    if (!desc || count == 0) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
        if (desc[i].location.id != 0) return CUDA_ERROR_INVALID_DEVICE;
    }
    pthread_mutex_lock(&lock);
    /* Whole mappings only, covering the range without a hole. */
    CUresult rc = mapped_with((uintptr_t)ptr, size, 0) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < nmappings && rc == CUDA_SUCCESS; i++)
        if (mappings[i].live && mappings[i].start < ptr + size && ptr < mappings[i].start + mappings[i].size
            && (mappings[i].start < ptr || mappings[i].start + mappings[i].size > ptr + size))
            rc = CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < nmappings && rc == CUDA_SUCCESS; i++)
        if (mappings[i].live && mappings[i].start >= ptr && mappings[i].start < ptr + size)
            mappings[i].access = desc[count - 1].flags;
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
    pthread_mutex_lock(&lock);
    /* The entire address range of whole mappings: no part of one. */
    CUresult rc = size && mapped_with((uintptr_t)ptr, size, 0) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < nmappings && rc == CUDA_SUCCESS; i++)
        if (mappings[i].live && mappings[i].start < ptr + size && ptr < mappings[i].start + mappings[i].size
            && (mappings[i].start < ptr || mappings[i].start + mappings[i].size > ptr + size))
            rc = CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < nmappings && rc == CUDA_SUCCESS; i++)
        if (mappings[i].live && mappings[i].start >= ptr && mappings[i].start < ptr + size) {
            mappings[i].live = 0;
            struct physical *ph = physical_of(mappings[i].handle);
            if (ph) {
                ph->mappings--;
                put_physical(ph);
            }
        }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* ---- Stream-ordered allocation: the device's default pool ---- */

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice d) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    *pool = &default_pool;
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttributes(unsigned int n, int *attrs, void **data, CUdeviceptr ptr) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    struct alloc *a = find_alloc((uintptr_t)ptr);
    struct reservation *r = a ? NULL : find_reservation((uintptr_t)ptr);
    struct pinned *h = (a || r) ? NULL : find_pinned((uintptr_t)ptr, 1);
    uintptr_t start = a ? a->start : r ? r->start : h ? h->start : 0;
    size_t size = a ? a->size : r ? r->size : h ? h->size : 0;
    CUresult rc = CUDA_SUCCESS;
    for (unsigned int i = 0; i < n; i++) {
        switch (attrs[i]) {
        case ATTR_CONTEXT:
            *(CUcontext *)data[i] = ((a && !a->pool) || r || h) ? primary() : NULL;
            break;
        case ATTR_MEMORY_TYPE:
            *(unsigned int *)data[i] = (a || r) ? MEMORYTYPE_DEVICE : h ? MEMORYTYPE_HOST : 0;
            break;
        case ATTR_IS_MANAGED: *(unsigned int *)data[i] = a ? (unsigned)a->managed : 0; break;
        case ATTR_DEVICE_ORDINAL: *(int *)data[i] = (a || r || h) ? 0 : -2; break;
        case ATTR_RANGE_START: *(CUdeviceptr *)data[i] = start; break;
        case ATTR_RANGE_SIZE: *(size_t *)data[i] = size; break;
        case ATTR_MAPPED:
            *(int *)data[i] = a || h || (r && find_mapping((uintptr_t)ptr));
            break;
        case ATTR_MEMPOOL_HANDLE:
            *(CUmemoryPool *)data[i] = a ? a->pool : NULL;
            break;
        default: rc = CUDA_ERROR_INVALID_VALUE;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static void drain(struct stream_s *s, unsigned long long upto);
static void run_kernel(int kernel, const unsigned long long *args);
static CUresult copy_now(int to_device, uintptr_t dst, uintptr_t src, size_t n) {
    if (to_device == 2) {
        uintptr_t d = device_view(dst, n, MEM_ACCESS_READWRITE), v = device_view(src, n, MEM_ACCESS_READ);
        if (!d || !v) return CUDA_ERROR_INVALID_VALUE;
        memmove((void *)d, (void *)v, n);
        counters[9] += n;
        return CUDA_SUCCESS;
    }
    uintptr_t view = device_view(to_device ? dst : src, n,
                                 to_device ? MEM_ACCESS_READWRITE : MEM_ACCESS_READ);
    if (!view) return CUDA_ERROR_INVALID_VALUE;
    if (to_device) memcpy((void *)view, (void *)src, n);
    else memcpy((void *)dst, (void *)view, n);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    drain(&legacy, legacy.issued); /* a synchronous copy runs after the legacy stream's work */
    CUresult rc = copy_now(0, (uintptr_t)dst, (uintptr_t)src, n);
    if (rc == CUDA_SUCCESS) counters[0] += n;
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    drain(&legacy, legacy.issued);
    CUresult rc = copy_now(1, (uintptr_t)dst, (uintptr_t)src, n);
    if (rc == CUDA_SUCCESS) counters[1] += n;
    pthread_mutex_unlock(&lock);
    return rc;
}

/* Runs the stream's queued copies up to sequence number `upto`. */
static void drain(struct stream_s *s, unsigned long long upto) {
    while (s->done < upto) {
        struct op o = s->ops[s->done % s->cap];
        s->done++;
        if (o.to_device == 3) drain(o.wait, o.n);
        else if (o.to_device == 4) free_alloc(o.dst);
        else if (o.to_device == 5) run_kernel((int)o.n, o.args); /* checked when queued */
        else copy_now(o.to_device, o.dst, o.src, o.n); /* checked when queued */
    }
}
/* The stream a handle names (the NULL, legacy and per-thread handles are the legacy
 * stream), or NULL for a stream made before a reset. */
static struct stream_s *stream_of(CUstream s) {
    if ((uintptr_t)s <= 2) return &legacy;
    return s->gen == generation ? s : NULL;
}
/* Queues an operation (lock held). */
static void push_op(struct stream_s *s, struct op o) {
    if (s->issued - s->done == s->cap) drain(s, s->issued); /* queue full: the engine catches up */
    s->ops[s->issued % s->cap] = o;
    s->issued++;
}
static CUresult enqueue(int to_device, uintptr_t dst, uintptr_t src, size_t n, CUstream handle) {
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    struct stream_s *s = stream_of(handle);
    CUresult rc = CUDA_SUCCESS;
    if (!s) { rc = CUDA_ERROR_INVALID_HANDLE; goto out; }
    if (to_device == 2) {
        if (!device_view(dst, n, MEM_ACCESS_READWRITE) || !device_view(src, n, MEM_ACCESS_READ)) {
            rc = CUDA_ERROR_INVALID_VALUE;
            goto out;
        }
    } else {
        if (!device_view(to_device ? dst : src, n, to_device ? MEM_ACCESS_READWRITE : MEM_ACCESS_READ)) {
            rc = CUDA_ERROR_INVALID_VALUE;
            goto out;
        }
        if (!find_pinned(to_device ? src : dst, n)) counters[4]++;
        counters[to_device ? 3 : 2] += n;
    }
    push_op(s, (struct op){to_device, dst, src, n, NULL, {0}});
out:
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    return enqueue(2, (uintptr_t)dst, (uintptr_t)src, n, s);
}
/* Whether `pool` is the default pool or a pool made since the last reset (lock held). */
static int valid_pool(CUmemoryPool pool) {
    if (pool == &default_pool) return 1;
    for (int i = 0; i < nmade_pools; i++)
        if (made_pools[i] == pool) return pool->gen == generation;
    return 0;
}
/* From the default pool or one made with cuMemPoolCreate. */
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t size, CUmemoryPool pool, CUstream s) {
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    int valid = stream_of(s) != NULL, known = valid_pool(pool);
    pthread_mutex_unlock(&lock);
    if (!known) return CUDA_ERROR_INVALID_VALUE;
    if (!valid) return CUDA_ERROR_INVALID_HANDLE;
    CUresult rc = alloc_common(p, size, 0, pool);
    if (rc == CUDA_SUCCESS) {
        pthread_mutex_lock(&lock);
        counters[10]++;
        pthread_mutex_unlock(&lock);
    }
    return rc;
}
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t size, CUstream s) {
    return cuMemAllocFromPoolAsync(p, size, &default_pool, s);
}
/* Any device allocation (cudaFreeAsync may free cudaMalloc memory too), in stream order. */
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream handle) {
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    struct stream_s *s = stream_of(handle);
    struct alloc *a = find_alloc((uintptr_t)p);
    CUresult rc = !s ? CUDA_ERROR_INVALID_HANDLE
                : (a && a->start == p && !a->managed) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) push_op(s, (struct op){4, (uintptr_t)p, 0, 0, NULL, {0}});
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) {
    return enqueue(0, (uintptr_t)dst, (uintptr_t)src, n, s);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
    return enqueue(1, (uintptr_t)dst, (uintptr_t)src, n, s);
}

CUresult cuStreamCreate(CUstream *out, unsigned int flags) {
    (void)flags;
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    struct stream_s *s = calloc(1, sizeof *s);
    if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
    s->cap = 64;
    s->ops = calloc(s->cap, sizeof *s->ops);
    if (!s->ops) { free(s); return CUDA_ERROR_OUT_OF_MEMORY; }
    pthread_mutex_lock(&lock);
    s->gen = generation;
    if (nstreams < MAX_STREAMS) streams[nstreams++] = s;
    pthread_mutex_unlock(&lock);
    *out = s;
    return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream handle) {
    pthread_mutex_lock(&lock);
    struct stream_s *s = stream_of(handle);
    if (s) drain(s, s->issued);
    pthread_mutex_unlock(&lock);
    return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult cuStreamWaitEvent(CUstream handle, CUevent e, unsigned int flags) {
    if (flags != 0 || !e) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    struct stream_s *s = stream_of(handle);
    CUresult rc = (s && e->gen == generation) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS && e->stream)
        push_op(s, (struct op){3, 0, 0, (size_t)e->seq, e->stream, {0}});
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuStreamDestroy_v2(CUstream s) {
    if ((uintptr_t)s <= 2) return CUDA_ERROR_INVALID_HANDLE;
    cuStreamSynchronize(s);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nstreams; i++)
        if (streams[i] == s) { streams[i] = streams[--nstreams]; break; }
    pthread_mutex_unlock(&lock);
    free(s->ops);
    free(s);
    return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent *out, unsigned int flags) {
    (void)flags;
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    *out = calloc(1, sizeof **out);
    if (!*out) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    (*out)->gen = generation;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent e, CUstream handle) {
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&lock);
    struct stream_s *s = stream_of(handle);
    CUresult rc = (s && e->gen == generation) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS) {
        e->stream = s;
        e->seq = s->issued;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuEventSynchronize(CUevent e) {
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&lock);
    CUresult rc = e->gen == generation ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS && e->stream) drain(e->stream, e->seq);
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuEventQuery(CUevent e) {
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&lock);
    CUresult rc = e->gen != generation ? CUDA_ERROR_INVALID_HANDLE
                : (!e->stream || e->stream->done >= e->seq) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuEventDestroy_v2(CUevent e) {
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    free(e);
    return CUDA_SUCCESS;
}

static CUresult pin(uintptr_t p, size_t n, int from_alloc_host) {
    for (int i = 0; i < npins; i++)
        if (p < pins[i].start + pins[i].size && pins[i].start < p + n)
            return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    if (npins == MAX_PINNED) return CUDA_ERROR_OUT_OF_MEMORY;
    pins[npins++] = (struct pinned){p, n, from_alloc_host};
    counters[5]++;
    counters[6]++;
    return CUDA_SUCCESS;
}
static CUresult unpin(uintptr_t p, int from_alloc_host) {
    for (int i = 0; i < npins; i++)
        if (pins[i].start == p && pins[i].from_alloc_host == from_alloc_host) {
            pins[i] = pins[--npins];
            counters[5]--;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned int flags) {
    (void)flags;
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (!p || n == 0) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    CUresult rc = refuse_register ? CUDA_ERROR_OUT_OF_MEMORY : pin((uintptr_t)p, n, 0);
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuMemHostUnregister(void *p) {
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    CUresult rc = unpin((uintptr_t)p, 0);
    pthread_mutex_unlock(&lock);
    return rc;
}
CUresult cuMemAllocHost_v2(void **pp, size_t n) {
    if (current_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    void *p = NULL;
    if (n == 0 || posix_memalign(&p, 4096, n) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    CUresult rc = pin((uintptr_t)p, n, 1);
    pthread_mutex_unlock(&lock);
    if (rc != CUDA_SUCCESS) { free(p); return rc; }
    *pp = p;
    return CUDA_SUCCESS;
}
CUresult cuMemFreeHost(void *p) {
    pthread_mutex_lock(&lock);
    CUresult rc = unpin((uintptr_t)p, 1);
    pthread_mutex_unlock(&lock);
    if (rc == CUDA_SUCCESS) free(p);
    return rc;
}

/* Test hook: makes cuMemHostRegister fail (as a pinned-memory limit would) while nonzero. */
void cuStandinRefuseRegister(int refuse) {
    pthread_mutex_lock(&lock);
    refuse_register = refuse;
    pthread_mutex_unlock(&lock);
}

/* Test hook: the copy engines catch up: every queued operation of every stream runs. */
void cuStandinRunStreams(void) {
    pthread_mutex_lock(&lock);
    drain(&legacy, legacy.issued);
    for (int i = 0; i < nstreams; i++)
        if (streams[i]->gen == generation) drain(streams[i], streams[i]->issued);
    pthread_mutex_unlock(&lock);
}

/* Test hook: cuMemGetInfo reports at most `bytes` free (as other processes' use would). */
void cuStandinLimitFree(size_t bytes) {
    pthread_mutex_lock(&lock);
    free_limit = bytes;
    pthread_mutex_unlock(&lock);
}

/* Test hook: cudaDeviceReset. Queued work is lost, every device allocation (pool blocks too),
 * physical allocation and mapping, registration and pinned host allocation is gone, streams,
 * events and the primary context become invalid handles; address reservations stay. The
 * arena is not reused, so allocations made afterwards land at other addresses, unless address
 * reuse is on (cuStandinReuseAddresses, CD_CUDA_STANDIN_REUSE=1): then the first allocations
 * after it come back at the old addresses, as with the real driver. */
void cuStandinReset(void) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].live && !allocs[i].managed) { allocs[i].live = 0; counters[8]--; }
    default_pool.nfree = 0;
    for (int i = 0; i < nmade_pools; i++) free(made_pools[i]); /* destroyed by the reset */
    nmade_pools = 0;
    nmodules = 0; /* modules are unloaded: their slots are reused (a stale handle may alias) */
    for (int i = 0; i < nmappings; i++) mappings[i].live = 0;
    for (int i = 0; i < nphysicals; i++) physicals[i].live = 0;
    for (int i = 0; i < npins; i++)
        if (pins[i].from_alloc_host) free((void *)pins[i].start);
    npins = 0;
    counters[5] = 0;
    legacy.done = legacy.issued;
    nstreams = 0;
    generation++;
    counters[11]++;
    if (reuse_addresses) { /* the arena's end: past the reservations that stay */
        next_free = dev_base;
        for (int i = 0; i < nreservations; i++)
            if (reservations[i].live && reservations[i].start + reservations[i].size > next_free)
                next_free = reservations[i].start + reservations[i].size;
    }
    pthread_mutex_unlock(&lock);
}

/* Test hook: hand freed device addresses out again (first fit) while nonzero, so that arrays
 * allocated again after a reset come back at their old addresses (see `reuse_addresses`). */
void cuStandinReuseAddresses(int reuse) {
    pthread_mutex_lock(&lock);
    reuse_addresses = reuse;
    pthread_mutex_unlock(&lock);
}

/* cudaDeviceReset's driver call: the reset above, for device 0. */
CUresult cuDevicePrimaryCtxReset_v2(CUdevice d) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    cuStandinReset();
    return CUDA_SUCCESS;
}

/* Test hook: copies the counters (see `counters`) into out[0..12]. */
void cuStandinCounters(unsigned long long out[12]) {
    pthread_mutex_lock(&lock);
    memcpy(out, counters, sizeof counters);
    pthread_mutex_unlock(&lock);
}

/* Pools made with cuMemPoolCreate, modules of PTX text and the kernels played on the host:
 * one translation unit with this file (every build compiles this file alone). */
#include "standin_kernels.c"
