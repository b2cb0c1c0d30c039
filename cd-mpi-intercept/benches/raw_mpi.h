/* The MPI library's own PMPI_X for the benchmarks' reference mode "raw": taken with dlsym on
 * the MPI library's handle, found among the loaded objects with dl_iterate_phdr +
 * dlopen(RTLD_NOLOAD). dlsym(RTLD_NEXT), or a call by name from the executable, would find
 * libcd's PMPI_X instead. Include after <dlfcn.h>, <link.h>, <mpi.h>, <stdio.h>, <stdlib.h>
 * and <string.h>, with _GNU_SOURCE defined. */

static char raw_mpi_lib[512];

/* The first loaded object other than libcd and the executable that defines PMPI_Send. */
static int raw_mpi_find(struct dl_phdr_info *info, size_t n, void *data) {
    (void)n;
    (void)data;
    const char *name = info->dlpi_name;
    if (name == NULL || name[0] == '\0' || strstr(name, "libcd.") != NULL) return 0;
    void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL) return 0;
    void *f = dlsym(h, "PMPI_Send");
    Dl_info where;
    int found = f != NULL && dladdr(f, &where) != 0 && strcmp(where.dli_fname, name) == 0;
    dlclose(h);
    if (found) snprintf(raw_mpi_lib, sizeof raw_mpi_lib, "%s", name);
    return found;
}

static void raw_mpi_die(const char *what) {
    fprintf(stderr, "%s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* The MPI library's handle. */
static void *raw_mpi_open(void) {
    if (!dl_iterate_phdr(raw_mpi_find, NULL)) raw_mpi_die("no loaded object defines PMPI_Send");
    void *h = dlopen(raw_mpi_lib, RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL) raw_mpi_die("dlopen of the MPI library");
    return h;
}

/* `name` in the MPI library, into the function pointer at `to` (POSIX: dlsym's result
 * converts to a function pointer through its bytes). */
static void raw_mpi_sym(void *h, const char *name, void *to, size_t size) {
    void *f = dlsym(h, name);
    if (f == NULL) raw_mpi_die(name);
    memcpy(to, &f, size);
}

/* The object that defines the function at `f`. */
static const char *raw_mpi_object_of(void *f) {
    Dl_info where;
    return dladdr(f, &where) != 0 ? where.dli_fname : "?";
}
