/* A 1-D heat equation (Jacobi) over MPI, protected by a Containment Domain that logs MPI.
 *
 * Each rank owns N cells plus two ghost cells; every step exchanges halos with its neighbours
 * (MPI_Irecv / MPI_Isend / MPI_Waitall), updates its cells and sums a global residual with
 * MPI_Allreduce. A root CD created with COMM_LOGGING_ENABLED protects the field, the step
 * counter and the residual sum, and is advanced every K steps. libcd's MPI interposer logs the
 * rank's traffic into the CD while it runs.
 *
 * A fault is injected on one rank: at the given step it corrupts its field (flips a bit of a
 * stripe of values, after that step's communication), the end-of-step check detects it (the
 * heat equation keeps every value between the boundary values), and the rank calls
 * restore_cd: the field and the step counter go back to the last advance, and the rank
 * re-executes the interval alone. Its MPI calls are then served from the CD's log (receives
 * and the allreduce get the logged data, sends are dropped), so the other ranks never notice;
 * when the log is consumed the rank goes live again.
 *
 * Persistence (optional): with CD_STORAGE_INFO naming a cache directory (for example
 * "dir=/tmp/cache/node{rank};scheme=xor;set_size=4"), every advance also persists the CD to
 * that node-local directory, protected across ranks with XOR. CD_KILL_STEP=S makes every rank
 * kill itself (SIGKILL) at step S, as a node failure would end the job. Run again with the
 * same storage_info, the program finds the newest complete persisted version at create_cd
 * (cd_recovered_version), rebuilding the files of a node whose cache was lost, and restore_cd
 * brings the field, the step counter and the residual sum back: the run goes on from there.
 *
 * At the end every rank hashes its field and rank 0 gathers the hashes. With CD_VERIFY=FILE,
 * a run writes them to FILE when it does not exist (the fault-free reference) and otherwise
 * compares: "verified: result bitwise equal to the fault-free run", or exit status 1.
 *
 * Environment:
 *   CD_FAULT_RANK   the faulty rank (default 2 when there are more than 2 ranks; -1 or none: no
 *                   fault)
 *   CD_FAULT_STEP   the step(s) at which it fails, comma-separated (default 53; none: no fault)
 *   CD_VERIFY       the reference file (see above)
 *   CD_HEAT_STEPS   steps (default 200), CD_HEAT_INTERVAL steps between advances (default 20)
 *   CD_MPI_STATS    libcd writes per-rank MPI statistics to <prefix><rank> at MPI_Finalize
 *   CD_STORAGE_INFO the root CD's storage_info: persistence (see above)
 *   CD_KILL_STEP    every rank kills itself at this step (default: never)
 *
 * Build: mpicc -O2 heat_mpi.c -I<workspace>/cd-ffi/include -L<target>/debug -lcd \
 *              -Wl,-rpath,<target>/debug -o heat_mpi     (or $(pkg-config --cflags --libs cd))
 * Run:   CD_VERIFY=/tmp/heat.ref CD_FAULT_STEP=none mpirun -np 4 ./heat_mpi   # reference
 *        CD_VERIFY=/tmp/heat.ref mpirun -np 4 ./heat_mpi                      # with a fault
 */
#include <cd.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1 << 14)      /* cells per rank */
#define MAX_FAULTS 64

static int rank, size;

static void fail(const char *what) {
    char msg[256];
    size_t n;
    cd_last_error_message(msg, sizeof msg, &n);
    fprintf(stderr, "rank %d: %s failed: %s\n", rank, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static long env_long(const char *name, long fallback) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') return fallback;
    if (strcmp(v, "none") == 0) return -1;
    return strtol(v, NULL, 10);
}

/* The fault steps of CD_FAULT_STEP ("53", "53,57,130", "none"). */
static int parse_fault_steps(int *steps) {
    const char *v = getenv("CD_FAULT_STEP");
    if (v == NULL || *v == '\0') v = "53";
    if (strcmp(v, "none") == 0) return 0;
    int n = 0;
    while (*v && n < MAX_FAULTS) {
        char *end;
        long s = strtol(v, &end, 10);
        if (end == v) break;
        steps[n++] = (int)s;
        v = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* FNV-1a over bytes. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t len) {
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* The maximum principle: every value stays between the boundary values 0 and 1. */
static int field_is_sane(const double *u) {
    for (int i = 1; i <= N; i++)
        if (!(u[i] >= 0.0 && u[i] <= 1.0)) return 0;
    return 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double t0 = MPI_Wtime();

    const int steps = (int)env_long("CD_HEAT_STEPS", 200);
    const int interval = (int)env_long("CD_HEAT_INTERVAL", 20);
    const int fault_rank = (int)env_long("CD_FAULT_RANK", size > 2 ? 2 : -1);
    const int kill_step = (int)env_long("CD_KILL_STEP", -1);
    const char *storage = getenv("CD_STORAGE_INFO");
    const int persistent = storage != NULL && *storage != '\0';
    int fault_steps[MAX_FAULTS], fault_fired[MAX_FAULTS] = {0};
    int n_faults = fault_rank >= 0 && fault_rank < size ? parse_fault_steps(fault_steps) : 0;
    const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

    if (rank == 0) {
        printf("heat_mpi: %d ranks x %d cells, %d steps, CD advanced every %d steps", size, N,
               steps, interval);
        if (n_faults > 0) {
            printf("; fault on rank %d at step", fault_rank);
            for (int f = 0; f < n_faults; f++) printf("%s%d", f ? "," : " ", fault_steps[f]);
        } else {
            printf("; no fault");
        }
        printf("\n");
        fflush(stdout);
    }

    /* The state: the field with its ghost cells, the step counter, the residual sum. */
    double *u = malloc((N + 2) * sizeof(double));
    double *unew = malloc((N + 2) * sizeof(double)); /* scratch, rewritten every step */
    int step = 0;
    double resid_sum = 0.0;
    for (int i = 0; i <= N + 1; i++) {
        long g = (long)rank * N + i - 1; /* global index of cell i */
        u[i] = (double)((g * 7919) % 1000) / 1000.0;
    }
    if (left == MPI_PROC_NULL) u[0] = 1.0;      /* hot left wall */
    if (right == MPI_PROC_NULL) u[N + 1] = 0.0; /* cold right wall */

    struct cd_addrspec as[3] = {{u, (N + 2) * sizeof(double), READ_WRITE, GLOBAL},
                                {&step, sizeof step, READ_WRITE, GLOBAL},
                                {&resid_sum, sizeof resid_sum, READ_WRITE, GLOBAL}};
    int error;
    /* storage_info NULL: a root CD takes CD_STORAGE_INFO's, if set. */
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "heat", &error);
    if (cd == NULL) fail("create_cd");
    if (add_to_cd_via_copy(cd, as, 3) != SUCCESS) fail("add_to_cd_via_copy");
    uint64_t version = 0;
    if (cd_recovered_version(cd, &version) != SUCCESS) fail("cd_recovered_version");
    if (version > 0) { /* a restart: go on from the newest persisted point in time */
        if (restore_cd(cd) != SUCCESS) fail("restore_cd");
        printf("rank %d: restarted: persisted version %llu restored, resuming at step %d\n",
               rank, (unsigned long long)version, step);
        fflush(stdout);
    }

    int recovering = 0, recovered_from = 0, restored_to = 0;
    size_t log_records = 0;
    while (step < steps) {
        /* At the start of each interval: promote the entries to READ_WRITE (the first call
         * saves them), so that the next advance saves what this interval changes. */
        if (add_to_cd_via_copy(cd, as, 3) != SUCCESS) fail("add_to_cd_via_copy");
        const int end = step + interval < steps ? step + interval : steps;
        int restored = 0;
        while (step < end) {
            MPI_Request req[4];
            MPI_Status status[4]; /* not MPI_STATUSES_IGNORE: gcc 12 warns about it with MPICH */
            MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
            MPI_Irecv(&u[N + 1], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[1]);
            MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[2]);
            MPI_Isend(&u[N], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[3]);
            MPI_Waitall(4, req, status);

            double local = 0.0, global;
            for (int i = 1; i <= N; i++) {
                unew[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
                local += (unew[i] - u[i]) * (unew[i] - u[i]);
            }
            memcpy(&u[1], &unew[1], N * sizeof(double));
            MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            resid_sum += global;

            if (rank == fault_rank)
                for (int f = 0; f < n_faults; f++)
                    if (fault_steps[f] == step && !fault_fired[f]) {
                        fault_fired[f] = 1; /* kept outside the CD: the fault does not repeat */
                        for (int i = N / 4; i < N / 4 + 64; i++) {
                            uint64_t bits;
                            memcpy(&bits, &u[i], sizeof bits);
                            bits ^= 1ULL << 62; /* a flipped exponent bit */
                            memcpy(&u[i], &bits, sizeof bits);
                        }
                        break; /* a step listed twice fails again when re-executed */
                    }
            step++;
            if (step == kill_step) { /* the job dies, as when a node fails */
                printf("rank %d: killed at step %d (SIGKILL)\n", rank, step);
                fflush(stdout);
                raise(SIGKILL);
            }

            if (recovering && step == recovered_from + 1) {
                printf("rank %d: caught up with step %d: re-executed steps %d..%d alone, "
                       "%zu MPI records served from the log, live again\n",
                       rank, recovered_from, restored_to, recovered_from, log_records);
                fflush(stdout);
                recovering = 0;
            }
            if (!field_is_sane(u)) { /* the application detects the corruption */
                struct cd_info info;
                if (cd_get_info(cd, &info) != SUCCESS) fail("cd_get_info");
                log_records = info.log_entries;
                const int at = step - 1;
                if (restore_cd(cd) != SUCCESS) fail("restore_cd");
                printf("rank %d: fault at step %d detected, restored to step %d, "
                       "re-executing from the MPI log (%zu records)\n",
                       rank, at, step, log_records);
                fflush(stdout);
                recovering = 1;
                recovered_from = at;
                restored_to = step;
                restored = 1;
                break;
            }
        }
        if (!restored) {
            if (advance_cd_point_in_time(cd) == FAILURE) fail("advance_cd_point_in_time");
            if (persistent && rank == 0) {
                printf("heat_mpi: step %d: point in time advanced and persisted\n", step);
                fflush(stdout);
            }
        }
    }
    struct cd_stats st;
    if (cd_get_stats(cd, &st) != SUCCESS) fail("cd_get_stats");
    if (commit_cd(cd) != SUCCESS) fail("commit_cd");

    /* The result: a hash of the field's exact bits and of the residual sum. */
    uint64_t h = 0xcbf29ce484222325ULL;
    h = fnv1a(h, &u[1], N * sizeof(double));
    h = fnv1a(h, &resid_sum, sizeof resid_sum);
    uint64_t *all = malloc(size * sizeof(uint64_t));
    MPI_Gather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    unsigned long long restores = st.restores, total_restores;
    MPI_Reduce(&restores, &total_restores, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
               MPI_COMM_WORLD);

    int ok = 1;
    if (rank == 0) {
        printf("heat_mpi: %d steps in %.2f s, %llu restore(s), residual sum %.17g\n", steps,
               MPI_Wtime() - t0, total_restores, resid_sum);
        for (int r = 0; r < size; r++) printf("  rank %d: checksum %016llx\n", r,
                                              (unsigned long long)all[r]);
        const char *verify = getenv("CD_VERIFY");
        if (verify != NULL && *verify != '\0') {
            char header[128];
            snprintf(header, sizeof header, "heat_mpi ranks=%d cells=%d steps=%d", size, N,
                     steps);
            FILE *f = fopen(verify, "r");
            if (f == NULL) {
                f = fopen(verify, "w");
                if (f == NULL) {
                    perror(verify);
                    ok = 0;
                } else {
                    fprintf(f, "%s\n", header);
                    for (int r = 0; r < size; r++)
                        fprintf(f, "%d %016llx\n", r, (unsigned long long)all[r]);
                    fclose(f);
                    printf("reference written to %s\n", verify);
                }
            } else {
                char line[128];
                int same = fgets(line, sizeof line, f) != NULL &&
                           strncmp(line, header, strlen(header)) == 0 &&
                           line[strlen(header)] == '\n';
                if (!same) printf("%s is the reference of another run (not \"%s\")\n", verify,
                                  header);
                for (int r = 0; same && r < size; r++) {
                    int rr;
                    unsigned long long ref;
                    same = fscanf(f, "%d %llx", &rr, &ref) == 2 && rr == r && ref == all[r];
                    if (!same) printf("rank %d differs from the reference in %s\n", r, verify);
                }
                fclose(f);
                if (same) {
                    printf("verified: result bitwise equal to the fault-free run\n");
                } else {
                    printf("VERIFICATION FAILED: result differs from the fault-free run (%s)\n",
                           verify);
                    ok = 0;
                }
            }
        }
        fflush(stdout);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    free(unew);
    free(u);
    MPI_Finalize();
    return ok ? 0 : 1;
}
