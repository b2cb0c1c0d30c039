/* In-job repair of a lost rank with ULFM, without libcd: the prototype of issue 23's repair.
 *
 *   mpirun --with-ft ulfm --oversubscribe -np 4 repair        (Open MPI 5, see README.md)
 *
 * Rank REPAIR_LOST (environment, default 2) raises SIGKILL while the others wait in an
 * MPI_Allreduce on MPI_COMM_WORLD (which cannot complete anywhere without its contribution;
 * REPAIR_DETECT chooses another call, below).
 * The survivors see the failure inside that call (MPI_ERR_PROC_FAILED, or MPI_ERR_REVOKED once
 * another survivor revoked), then:
 *   revoke MPI_COMM_WORLD, shrink it, take the failed set from the shrink (world's group less
 *   the shrunk one) and check with MPIX_Comm_agree that every survivor has the same set;
 *   MPI_Comm_spawn one replacement per lost rank: this executable (/proc/self/exe, resolved)
 *   with this process's arguments (/proc/self/cmdline);
 *   MPI_Intercomm_merge the spawn's intercommunicator, broadcast the lost ranks, and
 *   MPI_Comm_split with key = the old rank (the replacement: the lost rank's), so the
 *   replacement has the lost rank's number again.
 * The replacement finds its parent in MPI_Init (MPI_Comm_get_parent) and joins the merge and
 * the split. Then all ranks run an MPI_Allreduce and an MPI_Allgather on the repaired world
 * and print them:
 *   repair rank R of N: identity I allreduce S order 0,1,...[ replacement]
 *   repair timing rank R: HOW detect_ms ... class ... known_failed ... revoke_ms ... shrink_ms
 *     ... agree_ms ... spawn_ms ... merge_reorder_ms ... total_ms ...
 *     (survivors; detect_ms since the kill, each phase's own time, total since the kill)
 *   repair timing replacement R: init_ms ... join_ms ...
 * REPAIR_DETECT chooses the call the survivors wait in: allreduce (default), barrier, recv (from
 * the lost rank), anysource (MPI_Recv from MPI_ANY_SOURCE), ianysource (MPI_Irecv from
 * MPI_ANY_SOURCE and MPI_Wait; the class after the revoke follows "then").
 * Exit status 0 when everything checked out on a rank; a rank that finds an error says so on
 * stderr ("repair: ...") and exits 1. REPAIR_SPAWN_INFO=key=value,... passes info keys to the
 * spawn. */
#define _GNU_SOURCE
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef MPIX_ERR_PROC_FAILED
#error "this MPI has no ULFM (no MPIX_ERR_PROC_FAILED): use Open MPI 5 (mpi-ext.h)"
#endif

#define MAX_RANKS 64

static double now(void) {
    struct timespec ts;
    /* CLOCK_REALTIME: one clock for every process on the node, so the survivors can measure
     * from the moment the lost rank chose to die. */
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_until(double t) {
    double d = t - now();
    if (d > 0) {
        struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static const char *class_name(int cls) {
    if (cls == MPI_SUCCESS) return "MPI_SUCCESS";
    if (cls == MPIX_ERR_PROC_FAILED) return "MPI_ERR_PROC_FAILED";
#ifdef MPIX_ERR_PROC_FAILED_PENDING
    if (cls == MPIX_ERR_PROC_FAILED_PENDING) return "MPI_ERR_PROC_FAILED_PENDING";
#endif
    if (cls == MPIX_ERR_REVOKED) return "MPI_ERR_REVOKED";
    return "other";
}

static void fail(const char *what, int rc) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = 0;
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "repair: %s returned %d (class %s): %s\n", what, rc, class_name(cls), text);
    fflush(stderr);
    exit(1);
}

#define CHECK(call)                                                                            \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != MPI_SUCCESS) fail(#call, rc_);                                              \
    } while (0)

/* This process's arguments after the program name, NULL-terminated (MPI_Comm_spawn's argv),
 * from /proc/self/cmdline: what a runtime that does not own main() can read. */
static char **spawn_args(void) {
    static char buf[1 << 16];
    static char *args[256];
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f) {
        perror("repair: /proc/self/cmdline");
        exit(1);
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    int argc = 0;
    for (size_t i = 0; i < n && argc < 255;) {
        args[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    /* args[0] is the program name as launched (maybe relative): the spawn names the
     * executable by /proc/self/exe instead. */
    memmove(args, args + 1, (size_t)(argc > 0 ? argc - 1 : 0) * sizeof *args);
    args[argc > 0 ? argc - 1 : 0] = NULL;
    return args;
}

/* REPAIR_SPAWN_INFO=key=value,key=value as an MPI_Info (MPI_INFO_NULL when unset). */
static MPI_Info spawn_info(void) {
    const char *spec = getenv("REPAIR_SPAWN_INFO");
    if (!spec || !*spec) return MPI_INFO_NULL;
    MPI_Info info;
    MPI_Info_create(&info);
    char *copy = strdup(spec), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) continue;
        *eq = 0;
        MPI_Info_set(info, kv, eq + 1);
    }
    free(copy);
    return info;
}

int main(int argc, char **argv) {
    double t_init0 = now();
    MPI_Init(&argc, &argv);
    double t_init1 = now();
    MPI_Comm parent, merged, world, inter = MPI_COMM_NULL;
    MPI_Comm_get_parent(&parent);
    const char *lost_env = getenv("REPAIR_LOST");
    int lost_rank = lost_env ? atoi(lost_env) : 2;
    /* buf[0]: the number of lost ranks, then their numbers (broadcast on the merged comm) */
    int lost[1 + MAX_RANKS] = {0};
    int identity; /* the rank this process has (survivor) or takes over (replacement) */
    int replacement = parent != MPI_COMM_NULL;

    if (!replacement) {
        int rank, size;
        /* Without this a process failure is fatal (MPI_ERRORS_ARE_FATAL) to every survivor
         * that sees it: nothing below would run. */
        CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size > MAX_RANKS || lost_rank < 0 || lost_rank >= size) {
            fprintf(stderr, "repair: %d ranks, lost rank %d: unsupported\n", size, lost_rank);
            return 1;
        }
        identity = rank;
        int one = 1, healthy = 0;
        CHECK(MPI_Allreduce(&one, &healthy, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        if (healthy != size) fail("the healthy allreduce", MPI_ERR_OTHER);
        /* The moment of the loss, the same on every rank. */
        double t_kill = now() + 0.2;
        CHECK(MPI_Bcast(&t_kill, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        if (rank == lost_rank) {
            printf("repair rank %d: raising SIGKILL\n", rank);
            fflush(stdout);
            sleep_until(t_kill);
            raise(SIGKILL);
        }

        /* Detection: inside a call that needs the lost rank (REPAIR_DETECT). */
        const char *how = getenv("REPAIR_DETECT") ? getenv("REPAIR_DETECT") : "allreduce";
        int v = rank + 1, sum = 0, rc;
        MPI_Request pending = MPI_REQUEST_NULL;
        if (!strcmp(how, "allreduce")) {
            rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        } else if (!strcmp(how, "barrier")) {
            rc = MPI_Barrier(MPI_COMM_WORLD);
        } else if (!strcmp(how, "recv")) { /* from the lost rank */
            rc = MPI_Recv(&v, 1, MPI_INT, lost_rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (!strcmp(how, "anysource")) { /* blocking, from anyone: nobody sends */
            rc = MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (!strcmp(how, "ianysource")) { /* nonblocking, from anyone, then MPI_Wait */
            CHECK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &pending));
            rc = MPI_Wait(&pending, MPI_STATUS_IGNORE);
        } else {
            fprintf(stderr, "repair: REPAIR_DETECT=%s: allreduce, barrier, recv, anysource or "
                    "ianysource\n", how);
            return 1;
        }
        double t_detect = now();
        if (rc == MPI_SUCCESS) {
            fprintf(stderr, "repair: rank %d: the %s succeeded without rank %d\n", rank, how,
                    lost_rank);
            return 1;
        }
        int cls;
        MPI_Error_class(rc, &cls);

        /* Revoke, shrink, agree on the failed set. */
        CHECK(MPIX_Comm_revoke(MPI_COMM_WORLD));
        double t_revoke = now();
        int pending_cls = MPI_SUCCESS;
        if (pending != MPI_REQUEST_NULL) {
            /* MPI_ERR_PROC_FAILED_PENDING left the receive posted: on the revoked
             * communicator it completes (in error) */
            MPI_Error_class(MPI_Wait(&pending, MPI_STATUS_IGNORE), &pending_cls);
        }
        MPI_Comm shrunk;
        CHECK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
        double t_shrink = now();
        MPI_Group wgroup, sgroup, fgroup, known;
        MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
        MPI_Comm_group(shrunk, &sgroup);
        /* The shrink agreed on who is gone: world's group less the shrunk one. */
        MPI_Group_difference(wgroup, sgroup, &fgroup);
        int nfailed, nknown = -1;
        MPI_Group_size(fgroup, &nfailed);
        int fr[MAX_RANKS];
        for (int i = 0; i < nfailed; i++) fr[i] = i;
        MPI_Group_translate_ranks(fgroup, nfailed, fr, wgroup, lost + 1);
        lost[0] = nfailed;
        /* What this process's own detector knows (not agreed: for the report). */
        if (MPIX_Comm_get_failed(MPI_COMM_WORLD, &known) == MPI_SUCCESS) {
            MPI_Group_size(known, &nknown);
            MPI_Group_free(&known);
        }
        int mask = 0;
        for (int i = 0; i < nfailed; i++) mask |= 1 << lost[1 + i];
        int agreed = mask;
        CHECK(MPIX_Comm_agree(shrunk, &agreed)); /* bitwise AND over the survivors */
        int same = agreed == mask;
        CHECK(MPIX_Comm_agree(shrunk, &same)); /* every survivor had the intersection */
        double t_agree = now();
        if (!same || nfailed != 1 || lost[1] != lost_rank) {
            fprintf(stderr, "repair: rank %d: failed set %#x (agreed %#x, same %d), expected "
                    "rank %d\n", rank, mask, agreed, same, lost_rank);
            return 1;
        }

        /* Spawn the replacement(s): the same executable and arguments. */
        int errcodes[MAX_RANKS];
        MPI_Info info = spawn_info();
        /* The path itself, not "/proc/self/exe": the launcher resolves the command in its own
         * process (it would start another mpirun). */
        char exe[4096];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (len <= 0) fail("readlink /proc/self/exe", MPI_ERR_OTHER);
        exe[len] = 0;
        CHECK(MPI_Comm_spawn(exe, spawn_args(), nfailed, info, 0, shrunk, &inter, errcodes));
        if (info != MPI_INFO_NULL) MPI_Info_free(&info);
        double t_spawn = now();

        /* Merge (survivors first), tell the replacements whom they replace, reorder. */
        CHECK(MPI_Intercomm_merge(inter, 0, &merged));
        CHECK(MPI_Bcast(lost, 1 + MAX_RANKS, MPI_INT, 0, merged));
        CHECK(MPI_Comm_split(merged, 0, identity, &world));
        double t_merge = now();
        printf("repair timing rank %d: %s detect_ms %.1f class %s%s%s known_failed %d "
               "revoke_ms %.1f shrink_ms %.1f agree_ms %.1f spawn_ms %.1f merge_reorder_ms %.1f "
               "total_ms %.1f\n",
               rank, how, (t_detect - t_kill) * 1e3, class_name(cls),
               pending_cls != MPI_SUCCESS ? " then " : "",
               pending_cls != MPI_SUCCESS ? class_name(pending_cls) : "", nknown,
               (t_revoke - t_detect) * 1e3, (t_shrink - t_revoke) * 1e3,
               (t_agree - t_shrink) * 1e3, (t_spawn - t_agree) * 1e3,
               (t_merge - t_spawn) * 1e3, (t_merge - t_kill) * 1e3);
        MPI_Comm_free(&shrunk);
        MPI_Group_free(&wgroup);
        MPI_Group_free(&sgroup);
        MPI_Group_free(&fgroup);
    } else {
        /* The replacement: its MPI_COMM_WORLD holds only itself; the job's world is the
         * merge of the spawn's intercommunicator, reordered. */
        double t_join0 = now();
        MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
        CHECK(MPI_Intercomm_merge(parent, 1, &merged));
        CHECK(MPI_Bcast(lost, 1 + MAX_RANKS, MPI_INT, 0, merged));
        int mrank, msize;
        MPI_Comm_rank(merged, &mrank);
        MPI_Comm_size(merged, &msize);
        int index = mrank - (msize - lost[0]);
        if (index < 0 || index >= lost[0]) fail("finding the rank to replace", MPI_ERR_OTHER);
        identity = lost[1 + index];
        CHECK(MPI_Comm_split(merged, 0, identity, &world));
        double t_join1 = now();
        int wrank;
        MPI_Comm_rank(world, &wrank);
        printf("repair timing replacement %d: init_ms %.1f join_ms %.1f\n", wrank,
               (t_init1 - t_init0) * 1e3, (t_join1 - t_join0) * 1e3);
    }
    CHECK(MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN));

    /* The repaired world: every rank at its old number. */
    int rank, size;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    int v = (rank + 1) * (rank + 1), sum = 0;
    int order[MAX_RANKS];
    CHECK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, world));
    CHECK(MPI_Allgather(&identity, 1, MPI_INT, order, 1, MPI_INT, world));
    char text[16 * MAX_RANKS] = "";
    for (int i = 0; i < size && i < MAX_RANKS; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d", i ? "," : "", order[i]);
    printf("repair rank %d of %d: identity %d allreduce %d order %s%s\n", rank, size, identity,
           sum, text, replacement ? " replacement" : "");
    fflush(stdout);
    int ok = rank == identity && sum == size * (size + 1) * (2 * size + 1) / 6;
    for (int i = 0; i < size; i++) ok &= order[i] == i;
    /* Every rank is done communicating before any leaves: a rank that exits while another
     * still waits for its last message is a failure to that one (MPI_ERR_PROC_FAILED in the
     * Allgather, seen here), even when the message was already sent. The agreement tolerates
     * the exits that follow it; its result is not needed. */
    int done = ok;
    MPIX_Comm_agree(world, &done);
    MPI_Comm_free(&world);
    MPI_Comm_free(&merged);
    if (inter != MPI_COMM_NULL) MPI_Comm_free(&inter);
    /* Open MPI 5.0.11: after a process failure, MPI_Finalize on the survivors hangs in about a
     * third to a half of the runs (in ompi_mpi_finalize, after its fault-tolerant agreement,
     * waiting on the PMIx fence of the job that lost a process; see README.md), with or without
     * the spawn. So the survivors end without it unless REPAIR_FINALIZE=1: their output is out
     * and mpirun --with-ft ulfm reports success either way. The replacement finalizes. */
    if (!replacement && !(getenv("REPAIR_FINALIZE") && atoi(getenv("REPAIR_FINALIZE")))) {
        fflush(stdout);
        fflush(stderr);
        _exit(ok ? 0 : 1);
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
