/* 1-D heat equation (Jacobi sweeps with a halo exchange) under a persistent root CD that
 * advances, and so persists, every INTERVAL steps (HEAT_INTERVAL, default 10) of STEPS
 * (HEAT_STEPS, default 100). HEAT_CACHE names the base of the simulated nodes' cache
 * directories (dir=$HEAT_CACHE/node{rank}); HEAT_STORAGE_INFO replaces the whole storage_info.
 * With HEAT_KILL_AT=S every rank kills itself (SIGKILL) after step S (only rank R with
 * HEAT_KILL_RANK=R: a lost node, which a ULFM job survives or reports), and with
 * HEAT_KILL2=S:R rank R too after step S (a second loss); HEAT_KILL_ONCE=PATH
 * kills only while PATH does not exist (it is made first: a replacement re-executing the step
 * goes on), HEAT_KILL_WIPE=1 removes the rank's node cache directory first (the node's disk is
 * lost with it), HEAT_KILL_REPLACEMENT=1 kills the replacement too, once, before its MPI_Init
 * (a loss during the survivors' repair). HEAT_REDUCE=1 adds an MPI_Allreduce of the array's sum every step (with
 * HEAT_PERSISTENT_SUM=1 a persistent MPI_Allreduce_init made in the start, MPI-4), folded into
 * the state (HEAT_REDUCE=2 also an MPI_Reduce, in place at rank 0, and an MPI_Gather of it to rank 0,
 * which scatters a share of them back, folded into every rank's state; HEAT_REDUCE=3 instead
 * MPI_Scan, MPI_Exscan (and a non-commutative scan of a derived type), MPI_Alltoall,
 * MPI_Reduce_scatter_block (in place), MPI_Allgatherv (in place), MPI_Reduce_scatter,
 * MPI_Gatherv (in place at rank 0), MPI_Scatterv from rank 0 and MPI_Alltoallv (in place), all
 * folded into every rank's state, and with HEAT_KILL_INSIDE=1 the rank HEAT_KILL_AT kills
 * dies amid them, after the MPI_Alltoall of step S; HEAT_REDUCE=4 the nonblocking collectives whose
 * result differs by rank, in flight together; HEAT_REDUCE=6 the nonblocking v-forms
 * (MPI_Igatherv, MPI_Iscatterv, MPI_Ialltoallv, MPI_Ialltoallw) in flight together, and with
 * HEAT_KILL_INSIDE=1 the rank HEAT_KILL_AT kills dies while they are; HEAT_REDUCE=5 an MPI_Alltoallw with a datatype per block and
 * an in-place one, folded into the state, and with HEAT_START one in the start too; with
 * HEAT_KILL_INSIDE=1 the rank HEAT_KILL_AT kills dies between the two); HEAT_NONBLOCKING=1 exchanges the halo with MPI_Irecv, MPI_Isend and MPI_Waitall
 * instead of MPI_Sendrecv (HEAT_NONBLOCKING=2: MPI_Testall until complete, 3: MPI_Waitany four times, 4: an
 * MPI_Iallreduce completed with them by MPI_Waitall; 5: persistent requests made once in the
 * start, MPI_Recv_init, MPI_Send_init and MPI_Ssend_init, started by MPI_Start and MPI_Startall
 * and completed by MPI_Waitall every step; 6, on a communicator with a topology (HEAT_CART=1 or
 * 3): MPI_Neighbor_alltoall, and each neighbour's rank checked with MPI_Neighbor_allgather,
 * MPI_Neighbor_allgatherv, MPI_Neighbor_alltoallv and MPI_Neighbor_alltoallw; 7: as 1, the
 * sends' requests given to MPI_Request_free and only the receives completed; 8: as 6 with
 * their nonblocking forms, in flight together, completed by MPI_Waitall; 9: MPI_Isendrecv,
 * MPI-4, to the left, and to the right another completed with it by MPI_Waitall, or on odd
 * steps an MPI_Irecv and an MPI_Isend completed with it by MPI_Waitsome; 10: MPI_Sendrecv_replace to the left, and
 * MPI_Isendrecv_replace, MPI-4, completed by MPI_Wait, to the right). A restart finds the persisted version (cd_recovered_version), restores it and
 * goes on from there. HEAT_START=1 makes the program's start (before create_cd) communicate: rank
 * 0 broadcasts the diffusion coefficient, each rank takes a bias from its left neighbour
 * (MPI_Sendrecv) and the ranks' sum (MPI_Allreduce); a replacement re-executes it (HEAT_START=2
 * adds the nonblocking collectives of HEAT_REDUCE=4, HEAT_START=3 an MPI_Ialltoallv).
 * HEAT_CART=1 exchanges the halo on
 * a periodic Cartesian ring (MPI_Cart_create, MPI_Cart_shift; a scratch MPI_Comm_dup of it made
 * and freed in the start) and adds, every step, the sum over a pair of ranks (MPI_Allreduce on
 * an MPI_Comm_split of the ring); HEAT_CART=2 makes an MPI_Comm_split_type communicator in the
 * start; HEAT_CART=3 exchanges the halo on a distributed graph of the ring (its neighbours
 * from MPI_Dist_graph_neighbors) and adds, every step, the sum over an MPI_Graph_create ring
 * (HEAT_CART=4 adds instead the sum over the even and over the odd ranks, each an
 * MPI_Comm_create_group communicator made by its members alone; HEAT_CART=5 the sum over an
 * MPI_Comm_idup duplicate of the world, made in the start with a scratch one; HEAT_CART=6 joins the
 * even and the odd ranks by an intercommunicator made in the start, exchanges each rank's sum
 * with its counterpart over it every step, and adds the sum over the intercommunicator merged;
 * HEAT_CART=7, with HEAT_REDUCE, makes, uses and frees every step an MPI_Comm_split of the world
 * by the parity of rank + step and an MPI_Comm_dup of it, inside the step's CD with HEAT_CHILD). HEAT_WILDCARD=1 receives the left halo from MPI_ANY_SOURCE (with MPI_Sendrecv, or MPI_Irecv); HEAT_WILDCARD=2 also passes a token to the right every step, found by polling MPI_Iprobe and by MPI_Probe from MPI_ANY_SOURCE; HEAT_WILDCARD=3 instead two tokens matched from MPI_ANY_SOURCE, one by polling MPI_Improbe and received with MPI_Mrecv, one by MPI_Mprobe and received with MPI_Imrecv (HEAT_WILDCARD=4: after an MPI_Barrier, and
 * with HEAT_KILL_INSIDE=1 the rank HEAT_KILL_AT kills dies before it, while the others hold the
 * matched message). HEAT_TAGS=1 also passes two messages to the right every step, a large one
 * of tag 3 and a small one of tag 4, received in the other order (with HEAT_KILL_INSIDE=1 the
 * rank HEAT_KILL_AT kills dies right after posting them, and its right neighbour pauses between
 * its receives). HEAT_CHOOSY=R makes rank R alone complete a message to itself with MPI_Waitany every step (two choices). HEAT_ORDER=swapped adds the ranges in the other order, HEAT_SHORT=1 adds
 * a shorter array. With HEAT_PERSIST_ERRORS=continue a failed advance prints its error and the
 * run goes on. Prints "heat rank R resumed S version V" after a restore, "heat rank R error
 * CODE MESSAGE" when a CD call fails (and exits cleanly), "heat rank R result STEPS PART HEX"
 * at the end (the final array's bits in hex, in three parts), then "heat rank R executed N"
 * (the steps this process computed). HEAT_CHILD=1 makes the root CD log MPI (COMM_LOGGING_ENABLED)
 * and runs each step in a child CD that logs too (COMM_LOGGING_INHERIT) and saves the array; HEAT_CHILD_FAULT=S:R[,S:R...] then makes
 * rank R find a transient fault at the end of step S (0-based) once per process: it corrupts
 * the array, restores the child and re-executes the step from its MPI log (printing "heat rank
 * R transient S"); HEAT_CHILD_FAULT_EARLY=S:R[,...] likewise, with HEAT_NONBLOCKING=1 or 5,
 * while the halo's requests are in flight (posted or started, not yet completed by
 * MPI_Waitall; "heat rank R early S"). */
#include <cd.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROGRAM "heat"
#include "support.h"

#define N 64
#define RESULT_PARTS 3
#define PART ((N + 2) / RESULT_PARTS)

static int rank;

/* Raises SIGKILL (see HEAT_KILL_ONCE and HEAT_KILL_WIPE above; `suffix` is added to
 * HEAT_KILL_ONCE's path: each kill has its own marker). */
static void kill_self(const char *suffix) {
    const char *once = getenv("HEAT_KILL_ONCE");
    if (once) {
        char path[1100];
        snprintf(path, sizeof path, "%s%s", once, suffix);
        FILE *f = fopen(path, "wx");
        if (!f) return; /* killed before: this is the replacement */
        fclose(f);
    }
    if (env_int("HEAT_KILL_WIPE", 0) && getenv("HEAT_CACHE")) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s/node%d'", getenv("HEAT_CACHE"), rank);
        if (system(cmd) != 0) return;
    }
    fflush(stdout);
    raise(SIGKILL);
}

/* HEAT_CHILD_FAULT=S:R[,S:R...] (up to 8; or the list `var` names): the index of the entry
 * that faults this rank in step S (0-based, before it ends) and has not yet in this process,
 * else -1 */
static int transient_fault(const char *var, int step, const int *faulted) {
    const char *list = getenv(var);
    for (int k = 0; list && *list && k < 8; k++) {
        int at, who, used = 0;
        if (sscanf(list, "%d:%d%n", &at, &who, &used) != 2) return -1;
        if (at == step && who == rank && !faulted[k]) return k;
        list += used;
        if (*list == ',') list++;
    }
    return -1;
}

/* A transient fault of the list `var` names in step `step`, if one is due (marked in
 * `faulted`): corrupts the array, restores `child` (which drains the requests in flight) and
 * prints "heat rank R <word> S". Returns 1 when the step must re-execute, -1 when the restore
 * failed, else 0 (also without `child`). */
static int transient(cd_handle child, const char *var, const char *word, int step, int *faulted,
                     double *u) {
    int k = child ? transient_fault(var, step, faulted) : -1;
    if (k < 0) return 0;
    faulted[k] = 1;
    for (int i = 1; i <= N; i += 5) u[i] = -1e300;
    if (restore_cd(child)) return -1;
    printf("heat rank %d %s %d\n", rank, word, step);
    fflush(stdout);
    return 1;
}

/* HEAT_REDUCE=3's op, not commutative: a pair (a, b) is the map x -> a x + b, and `inout`
 * becomes itself after `in` */
static void compose_maps(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    double *f = in, *g = inout;
    for (int i = 0; i < *len; i++, f += 2, g += 2) g[1] = g[0] * f[1] + g[1], g[0] *= f[0];
}

/* The nonblocking collectives whose result differs by rank, all in flight at once and
 * completed by one MPI_Waitall (HEAT_START=2, HEAT_REDUCE=4; up to 64 ranks): an MPI_Ireduce
 * (the largest) and an MPI_Igather of `mine` to rank 0, both in place there, an MPI_Iscatter
 * from rank 0, an MPI_Ialltoall, an MPI_Iscan, an MPI_Iexscan (in place), an
 * MPI_Ireduce_scatter_block, an MPI_Ireduce_scatter (blocks of 1 and 2) and an
 * MPI_Iallgatherv (blocks of 1 and 2, laid out backwards); folded into one value, which differs
 * by rank. */
static double nonblocking_allforms(double mine) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double most = rank == 0 ? mine : 0, all[64] = {0}, pieces[64] = {0}, piece = 0;
    double to[64], from[64] = {0}, prefix = 0, before = -1, vector[64], block = 0;
    double uneven[128], blocks[2] = {0, 0}, gathered[128] = {0}, own[2] = {mine, mine * 2};
    int counts[64], places[64], total = 0;
    if (rank == 0) all[0] = mine;
    for (int j = 0; j < size && j < 64; j++) {
        pieces[j] = rank == 0 ? mine * (j + 2) : 0;
        to[j] = mine + j;
        vector[j] = mine * (j + 1);
        counts[j] = j % 2 + 1, total += counts[j];
    }
    for (int k = 0; k < total; k++) uneven[k] = mine * (k + 3);
    for (int j = 0, at = total; j < size && j < 64; j++) at -= counts[j], places[j] = at;
    before = mine; /* MPI_Iexscan in place: the input, and rank 0's result stays it */
    MPI_Request r[9];
    MPI_Ireduce(rank == 0 ? MPI_IN_PLACE : &mine, &most, 1, MPI_DOUBLE, MPI_MAX, 0,
                MPI_COMM_WORLD, &r[0]);
    MPI_Igather(rank == 0 ? MPI_IN_PLACE : &mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0,
                MPI_COMM_WORLD, &r[1]);
    MPI_Iscatter(pieces, 1, MPI_DOUBLE, &piece, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r[2]);
    MPI_Ialltoall(to, 1, MPI_DOUBLE, from, 1, MPI_DOUBLE, MPI_COMM_WORLD, &r[3]);
    MPI_Iscan(&mine, &prefix, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r[4]);
    MPI_Iexscan(MPI_IN_PLACE, &before, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &r[5]);
    MPI_Ireduce_scatter_block(vector, &block, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r[6]);
    MPI_Ireduce_scatter(uneven, blocks, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r[7]);
    MPI_Iallgatherv(own, counts[rank], MPI_DOUBLE, gathered, counts, places, MPI_DOUBLE,
                    MPI_COMM_WORLD, &r[8]);
    MPI_Waitall(9, r, MPI_STATUSES_IGNORE);
    double fold = most + piece * 3 + prefix * 5 + before * 7 + block * 11;
    fold += blocks[0] * 17 + blocks[1] * 19;
    for (int k = 0; k < total; k++) fold += gathered[k] * (k + 23);
    for (int j = 0; j < size && j < 64; j++) fold += all[j] * (j + 1) + from[j] * (j + 13);
    return fold;
}

/* An MPI_Ialltoallv of `mine` (HEAT_START=3; up to 64 ranks): the sum of every rank's. */
static double ialltoallv_sum(double mine) {
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double to[64], from[64] = {0}, sum = 0;
    int ones[64], at[64];
    for (int j = 0; j < size && j < 64; j++) to[j] = mine, ones[j] = 1, at[j] = j;
    MPI_Request r;
    MPI_Ialltoallv(to, ones, at, MPI_DOUBLE, from, ones, at, MPI_DOUBLE, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int j = 0; j < size && j < 64; j++) sum += from[j];
    return sum;
}

/* HEAT_REDUCE=6 (up to 64 ranks): an MPI_Igatherv and an MPI_Iscatterv rooted at rank 0 (in
 * place at the root), an MPI_Ialltoallv in place and an MPI_Ialltoallw, all in flight together
 * (with `die` this rank is lost while they are), completed by MPI_Waitany twice and by polling
 * MPI_Testall; a weighted sum of what this rank received. */
static double nonblocking_vforms(const double *u, int size, int die) {
    static double gathered[192], sources[192], scattered[3], x[128], to[64], from[64];
    double mine[3], fold = 0;
    int counts[64], displs[64], pairs[64], at[64], ones[64], bytes[64], n = 0;
    MPI_Datatype doubles[64];
    for (int j = 0; j < size; j++) {
        counts[j] = j % 3 + 1, displs[j] = n, n += counts[j];
        pairs[j] = (rank + j) % 2 + 1, at[j] = 2 * j, ones[j] = 1, doubles[j] = MPI_DOUBLE;
        bytes[j] = (size - 1 - j) * (int)sizeof(double);
        for (int k = 0; k < pairs[j]; k++) x[2 * j + k] = u[6 + k] * (j + 1) + rank;
        to[size - 1 - j] = u[1 + j % N] * (rank + 1) + j;
    }
    for (int k = 0; k < counts[rank]; k++) mine[k] = u[2 + k] + rank;
    MPI_Request r[4];
    if (rank == 0) {
        for (int k = 0; k < counts[0]; k++) gathered[k] = mine[k];
        for (int j = 0; j < n; j++) sources[j] = u[1 + j % N] * 0.5 + j;
        MPI_Igatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, counts, displs, MPI_DOUBLE, 0,
                     MPI_COMM_WORLD, &r[0]);
        MPI_Iscatterv(sources, counts, displs, MPI_DOUBLE, MPI_IN_PLACE, 0, MPI_DOUBLE, 0,
                      MPI_COMM_WORLD, &r[1]);
    } else {
        MPI_Igatherv(mine, counts[rank], MPI_DOUBLE, NULL, NULL, NULL, MPI_DOUBLE, 0,
                     MPI_COMM_WORLD, &r[0]);
        MPI_Iscatterv(NULL, NULL, NULL, MPI_DOUBLE, scattered, counts[rank], MPI_DOUBLE, 0,
                      MPI_COMM_WORLD, &r[1]);
    }
    MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, x, pairs, at, MPI_DOUBLE,
                   MPI_COMM_WORLD, &r[2]);
    MPI_Ialltoallw(to, ones, bytes, doubles, from, ones, bytes, doubles, MPI_COMM_WORLD, &r[3]);
    if (die) kill_self("");
    for (int k = 0, index; k < 2; k++) MPI_Waitany(4, r, &index, MPI_STATUS_IGNORE);
    for (int done = 0; !done;) MPI_Testall(4, r, &done, MPI_STATUSES_IGNORE);
    if (rank == 0)
        for (int j = 0; j < n; j++) fold += gathered[j] * (j + 1) + sources[j] * 1e-3;
    else
        for (int k = 0; k < counts[rank]; k++) fold += scattered[k] * (k + 2);
    for (int j = 0; j < size; j++) fold += (x[2 * j] + x[2 * j + 1]) * (j + 3) + from[j] * (j + 5);
    return fold;
}

/* HEAT_REDUCE=5 (up to 64 ranks): an MPI_Alltoallw of two values of `u` to every rank, laid
 * out backwards in bytes, as two MPI_DOUBLE to even ranks and one `pair` to odd ones (received
 * as the other: signatures match), then an in-place one of one value per rank, strided; the
 * sum of what this rank received, weighted. With `die` this rank is lost between the two. */
static double alltoallw_fold(const double *u, int size, MPI_Datatype pair, int die) {
    double to[128] = {0}, from[128] = {0}, x[192] = {0}, fold = 0;
    int counts[64] = {0}, rcounts[64] = {0}, displs[64] = {0}, ones[64] = {0}, strided[64] = {0};
    MPI_Datatype types[64] = {0}, rtypes[64] = {0}, doubles[64] = {0};
    for (int j = 0; j < size; j++) {
        displs[j] = (size - 1 - j) * 2 * (int)sizeof(double);
        to[2 * (size - 1 - j)] = u[1 + j % N] * (rank + 1), to[2 * (size - 1 - j) + 1] = u[1 + (j + 8) % N] + j;
        counts[j] = j % 2 ? 1 : 2, types[j] = j % 2 ? pair : MPI_DOUBLE;
        rcounts[j] = rank % 2 ? 2 : 1, rtypes[j] = rank % 2 ? MPI_DOUBLE : pair;
        ones[j] = 1, strided[j] = 3 * j * (int)sizeof(double), doubles[j] = MPI_DOUBLE;
        x[3 * j] = u[1 + (j + 16) % N] * (j + 2) + rank;
    }
    MPI_Alltoallw(to, counts, displs, types, from, rcounts, displs, rtypes, MPI_COMM_WORLD);
    if (die) kill_self("");
    MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, x, ones, strided, doubles, MPI_COMM_WORLD);
    for (int j = 0; j < size; j++)
        fold += from[2 * (size - 1 - j)] * (j + 1) + from[2 * (size - 1 - j) + 1] + x[3 * j] * 1e-3;
    return fold;
}

int main(int argc, char **argv) {
    /* each line leaves in one write at its fflush (Open MPI's pseudo-terminals give stdout a
     * 1 KiB buffer, which cuts longer lines into pieces that other ranks' lines can split) */
    static char out[1 << 16];
    setvbuf(stdout, out, _IOFBF, sizeof out);
    if (env_int("HEAT_KILL_REPLACEMENT", 0) && getenv("HEAT_KILL_ONCE")) {
        /* a replacement (the first kill's marker exists) dies once, before MPI_Init: while
         * the survivors repair */
        char path[1100];
        snprintf(path, sizeof path, "%s", getenv("HEAT_KILL_ONCE"));
        FILE *killed = fopen(path, "r");
        if (killed) {
            fclose(killed);
            snprintf(path, sizeof path, "%s.replacement", getenv("HEAT_KILL_ONCE"));
            FILE *f = fopen(path, "wx");
            if (f) {
                fclose(f);
                raise(SIGKILL);
            }
        }
    }
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    const int cart = env_int("HEAT_CART", 0);
    MPI_Comm halo = MPI_COMM_WORLD, pair = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    if (cart == 1) {
        int dims[1] = {size}, periods[1] = {1};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &halo);
        MPI_Cart_shift(halo, 0, 1, &left, &right);
        MPI_Comm scratch;
        MPI_Comm_dup(halo, &scratch);
        MPI_Barrier(scratch);
        MPI_Comm_free(&scratch);
        MPI_Comm_split(halo, rank / 2, rank, &pair);
    } else if (cart == 2) {
        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Barrier(node);
        MPI_Comm_free(&node);
    } else if (cart == 3) {
        /* each rank gives its own neighbours, left first, weighted; the halo takes them back */
        int ring[2] = {left, right}, weights[2] = {2, 3}, got[2], got_weights[2];
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, ring, weights, 2, ring, weights,
                                       MPI_INFO_NULL, 0, &halo);
        MPI_Dist_graph_neighbors(halo, 2, got, got_weights, 2, ring, weights);
        left = got[0], right = got[1];
        int index[64], edges[128];
        if (size <= 64) {
            for (int r = 0; r < size; r++) {
                index[r] = 2 * (r + 1);
                edges[2 * r] = (r + size - 1) % size, edges[2 * r + 1] = (r + 1) % size;
            }
            MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &pair);
        }
    } else if (cart == 4) {
        /* the even ranks and the odd ranks each make a communicator, by the same tag */
        MPI_Group all, mine;
        int ranks[64], n = 0;
        MPI_Comm_group(MPI_COMM_WORLD, &all);
        for (int r = rank % 2; r < size && n < 64; r += 2) ranks[n++] = r;
        MPI_Group_incl(all, n, ranks, &mine);
        MPI_Comm_create_group(MPI_COMM_WORLD, mine, 7, &pair);
        MPI_Group_free(&mine);
        MPI_Group_free(&all);
    } else if (cart == 6) {
        /* the even and the odd ranks, joined by an intercommunicator, then merged */
        MPI_Comm side;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &side);
        MPI_Intercomm_create(side, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &inter);
        MPI_Intercomm_merge(inter, rank % 2, &pair);
        MPI_Comm_free(&side);
    } else if (cart == 5) {
        /* a scratch duplicate made and freed, and one of the ring whose sum every step adds */
        MPI_Comm copy;
        MPI_Request made[2];
        MPI_Comm_idup(MPI_COMM_WORLD, &copy, &made[0]);
        MPI_Comm_idup(MPI_COMM_WORLD, &pair, &made[1]);
        MPI_Waitall(2, made, MPI_STATUSES_IGNORE);
        MPI_Barrier(copy);
        MPI_Comm_free(&copy);
    }
    const int from_left = env_int("HEAT_WILDCARD", 0) ? MPI_ANY_SOURCE : left;
    int kill_at = getenv("HEAT_KILL_AT") ? atoi(getenv("HEAT_KILL_AT")) : -1;
    int kill_rank = getenv("HEAT_KILL_RANK") ? atoi(getenv("HEAT_KILL_RANK")) : -1;
    const int STEPS = env_int("HEAT_STEPS", 100), INTERVAL = env_int("HEAT_INTERVAL", 10);
    int kill2_at = -1, kill2_rank = -1;
    if (getenv("HEAT_KILL2") && sscanf(getenv("HEAT_KILL2"), "%d:%d", &kill2_at, &kill2_rank) != 2)
        kill2_at = -1;
    const int reduce = env_int("HEAT_REDUCE", 0), nonblocking = env_int("HEAT_NONBLOCKING", 0);
    int executed = 0;
    MPI_Datatype two_doubles = MPI_DATATYPE_NULL; /* HEAT_REDUCE=5's */
    if (reduce == 5 && size <= 64) {
        MPI_Type_contiguous(2, MPI_DOUBLE, &two_doubles);
        MPI_Type_commit(&two_doubles);
    }

    static double u[N + 2], v[N + 2];
    for (int i = 0; i < N + 2; i++) u[i] = (rank * 31 + i * 7) % 101;
    MPI_Request halo_requests[4];
    if (nonblocking == 5) {
        MPI_Recv_init(&u[N + 1], 1, MPI_DOUBLE, right, 0, halo, &halo_requests[0]);
        MPI_Recv_init(&u[0], 1, MPI_DOUBLE, from_left, 1, halo, &halo_requests[1]);
        MPI_Send_init(&u[1], 1, MPI_DOUBLE, left, 0, halo, &halo_requests[2]);
        MPI_Ssend_init(&u[N], 1, MPI_DOUBLE, right, 1, halo, &halo_requests[3]);
    }
    /* HEAT_PERSISTENT_SUM=1: the array's sum (HEAT_REDUCE) by a persistent MPI_Allreduce_init */
    static double sum_in, sum_out;
    MPI_Request sum_request = MPI_REQUEST_NULL;
    if (env_int("HEAT_PERSISTENT_SUM", 0)) {
#if HAS_MPI4
        MPI_Allreduce_init(&sum_in, &sum_out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &sum_request);
#else
        (void)sum_in; /* (read by MPI's persistent request only) */
        fprintf(stderr, "heat: HEAT_PERSISTENT_SUM=1 needs MPI_Allreduce_init (MPI-4)\n");
        return 1;
#endif
    }
    int step = 0;
    double coefficient = 0.25, bias = 0;
    if (env_int("HEAT_START", 0)) {
        double params[2] = {0, 0};
        if (rank == 0) params[0] = 0.2 + 1.0 / (size + 7), params[1] = 1e-4;
        MPI_Bcast(params, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        double mine = rank + 1.0, theirs = 0, sum = 0;
        MPI_Sendrecv(&mine, 1, MPI_DOUBLE, right, 2, &theirs, 1, MPI_DOUBLE, left, 2,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (env_int("HEAT_START", 0) == 2) bias += nonblocking_allforms(mine) * 1e-12;
        if (env_int("HEAT_START", 0) == 3) ialltoallv_sum(mine);
        coefficient = params[0];
        bias = params[1] * theirs / sum;
        if (two_doubles != MPI_DATATYPE_NULL) bias += alltoallw_fold(u, size, two_doubles, 0) * 1e-12;
    }

    char info[1024];
    if (getenv("HEAT_STORAGE_INFO"))
        snprintf(info, sizeof info, "%s", getenv("HEAT_STORAGE_INFO"));
    else
        snprintf(info, sizeof info, "dir=%s/node{rank};scheme=xor;set_size=4;keep=2",
                 getenv("HEAT_CACHE") ? getenv("HEAT_CACHE") : "/tmp");
    /* HEAT_CHILD's children log MPI, which only a logging parent allows */
    const int child_mode = env_int("HEAT_CHILD", 0);
    cd_handle cd = create_cd(NULL, info, child_mode ? COMM_LOGGING_ENABLED : COMM_LOGGING_DISABLED,
                             "heat", NULL);
    if (!cd) return report_cd_error("create_cd");
    size_t ulen = getenv("HEAT_SHORT") ? sizeof u - sizeof(double) : sizeof u;
    struct cd_addrspec state[] = {
        {u, ulen, READ_WRITE, GLOBAL},
        {&step, sizeof step, READ_WRITE, GLOBAL},
    };
    if (getenv("HEAT_ORDER") && strcmp(getenv("HEAT_ORDER"), "swapped") == 0) {
        struct cd_addrspec t = state[0];
        state[0] = state[1];
        state[1] = t;
    }
    if (add_to_cd_via_copy(cd, state, 2)) return report_cd_error("add_to_cd_via_copy");
    uint64_t version = 0;
    if (cd_recovered_version(cd, &version)) return report_cd_error("cd_recovered_version");
    if (version) {
        if (restore_cd(cd)) return report_cd_error("restore_cd");
        printf("heat rank %d resumed %d version %llu\n", rank, step, (unsigned long long)version);
        fflush(stdout);
    }

    /* HEAT_CHILD_FAULT's and HEAT_CHILD_FAULT_EARLY's entries this process injected */
    int faulted[8] = {0}, faulted_early[8] = {0};
    while (step < STEPS) {
        cd_handle child = NULL;
        if (child_mode) {
            /* the step in a child CD that logs MPI; a transient fault restores it */
            child = create_cd(cd, NULL, COMM_LOGGING_INHERIT, NULL, NULL);
            if (!child) return report_cd_error("create_cd(step)");
            struct cd_addrspec mine[] = {{u, sizeof u, READ_WRITE, GLOBAL}};
            if (add_to_cd_via_copy(child, mine, 1)) return report_cd_error("add_to_cd_via_copy(step)");
        }
    step_again:
        if (nonblocking == 6 || nonblocking == 8) {
            /* neighbours: left, then right (a ring, Cartesian or a distributed graph) */
            double out[2] = {u[1], u[N]}, in[2];
            int me = rank, got[2] = {-1, -1}, gotv[2] = {-1, -1}, twice[3] = {-1, -1, -1};
            int ones[2] = {1, 1}, at[2] = {0, 1};
            /* one int to the left, two to the right: from the left two, from the right one */
            int to[3] = {left, right, right}, sends[2] = {1, 2}, receives[2] = {2, 1};
            int sent_at[2] = {0, 1}, received_at[2] = {0, 2};
            /* each rank's own number: once to the left as an MPI_INT, twice to the right as an
             * MPI_2INT (received as two MPI_INT), at byte displacements */
            int mine[3] = {rank, rank, rank}, theirs[3] = {-1, -1, -1}, counts_w[2] = {1, 1};
            int from_w[2] = {2, 1};
            MPI_Aint sent_w[2] = {0, sizeof(int)}, received_w[2] = {0, 2 * sizeof(int)};
            MPI_Datatype sent_types[2] = {MPI_INT, MPI_2INT}, received_types[2] = {MPI_INT, MPI_INT};
            if (nonblocking == 6) {
                MPI_Neighbor_alltoall(out, 1, MPI_DOUBLE, in, 1, MPI_DOUBLE, halo);
                MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, halo);
                MPI_Neighbor_allgatherv(&me, 1, MPI_INT, gotv, ones, at, MPI_INT, halo);
                MPI_Neighbor_alltoallv(to, sends, sent_at, MPI_INT, twice, receives, received_at,
                                       MPI_INT, halo);
                MPI_Neighbor_alltoallw(mine, counts_w, sent_w, sent_types, theirs, from_w,
                                       received_w, received_types, halo);
            } else {
                /* the same, nonblocking and in flight together */
                MPI_Request r[5];
                MPI_Ineighbor_alltoall(out, 1, MPI_DOUBLE, in, 1, MPI_DOUBLE, halo, &r[0]);
                MPI_Ineighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, halo, &r[1]);
                MPI_Ineighbor_allgatherv(&me, 1, MPI_INT, gotv, ones, at, MPI_INT, halo, &r[2]);
                MPI_Ineighbor_alltoallv(to, sends, sent_at, MPI_INT, twice, receives, received_at,
                                        MPI_INT, halo, &r[3]);
                MPI_Ineighbor_alltoallw(mine, counts_w, sent_w, sent_types, theirs, from_w,
                                        received_w, received_types, halo, &r[4]);
                MPI_Waitall(5, r, MPI_STATUSES_IGNORE);
            }
            u[0] = in[0], u[N + 1] = in[1];
            if (got[0] != left || got[1] != right || gotv[0] != left || gotv[1] != right ||
                twice[0] != rank || twice[1] != rank || twice[2] != rank || theirs[0] != left ||
                theirs[1] != left || theirs[2] != right) {
                fprintf(stderr, "heat rank %d: neighbours %d %d %d %d %d %d %d %d %d %d at step %d\n",
                        rank, got[0], got[1], gotv[0], gotv[1], twice[0], twice[1], twice[2],
                        theirs[0], theirs[1], theirs[2], step);
                return 1;
            }
        } else if (nonblocking == 5) {
            MPI_Start(&halo_requests[0]);
            MPI_Startall(3, &halo_requests[1]);
            /* a transient fault while they are in flight: the restore drains them */
            int fault = transient(child, "HEAT_CHILD_FAULT_EARLY", "early", step, faulted_early, u);
            if (fault < 0) return report_cd_error("restore_cd(step)");
            if (fault) goto step_again;
            MPI_Waitall(4, halo_requests, MPI_STATUSES_IGNORE);
        } else if (nonblocking == 7) {
            /* the sends go on unseen (MPI_Request_free), each from a buffer of this step's
             * parity: reused two steps later, when the neighbours' next halo shows they have
             * received it */
            static double out[2][2];
            MPI_Request r[2], sent;
            out[step % 2][0] = u[1], out[step % 2][1] = u[N];
            MPI_Irecv(&u[N + 1], 1, MPI_DOUBLE, right, 0, halo, &r[0]);
            MPI_Irecv(&u[0], 1, MPI_DOUBLE, from_left, 1, halo, &r[1]);
            MPI_Isend(&out[step % 2][0], 1, MPI_DOUBLE, left, 0, halo, &sent);
            MPI_Request_free(&sent);
            MPI_Isend(&out[step % 2][1], 1, MPI_DOUBLE, right, 1, halo, &sent);
            MPI_Request_free(&sent);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        } else if (nonblocking == 9) {
#if HAS_MPI4
            /* an MPI_Isendrecv (MPI-4) to the left, and to the right an MPI_Isendrecv with
             * MPI_Waitall, or (odd steps) an MPI_Irecv and an MPI_Isend with all three completed
             * by MPI_Waitsome, whose statuses come in completion order; each receive's status
             * names the neighbour it received from */
            MPI_Request r[3];
            MPI_Status st[3], done_st[3];
            MPI_Isendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[N + 1], 1, MPI_DOUBLE, right, 0, halo,
                          &r[0]);
            if (step % 2) {
                MPI_Irecv(&u[0], 1, MPI_DOUBLE, from_left, 1, halo, &r[1]);
                MPI_Isend(&u[N], 1, MPI_DOUBLE, right, 1, halo, &r[2]);
                for (int left_to_do = 3; left_to_do > 0;) {
                    int outcount, indices[3];
                    MPI_Waitsome(3, r, &outcount, indices, done_st);
                    for (int k = 0; k < outcount; k++) st[indices[k]] = done_st[k];
                    left_to_do -= outcount;
                }
            } else {
                MPI_Isendrecv(&u[N], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, from_left, 1,
                              halo, &r[1]);
                MPI_Waitall(2, r, st);
            }
            if (st[0].MPI_SOURCE != right || st[1].MPI_SOURCE != left) {
                fprintf(stderr, "heat rank %d: halo from %d and %d at step %d\n", rank,
                        st[0].MPI_SOURCE, st[1].MPI_SOURCE, step);
                return 1;
            }
#else
            fprintf(stderr, "heat: HEAT_NONBLOCKING=9 needs MPI_Isendrecv (MPI-4)\n");
            return 1;
#endif
        } else if (nonblocking == 10) {
            /* MPI_Sendrecv_replace to the left, and MPI-4's MPI_Isendrecv_replace (where the
             * headers have it) to the right; each status names the neighbour */
            double to_left = u[1], to_right = u[N];
            MPI_Status st[2];
            MPI_Sendrecv_replace(&to_left, 1, MPI_DOUBLE, left, 0, right, 0, halo, &st[0]);
#if HAS_MPI4
            MPI_Request r;
            MPI_Isendrecv_replace(&to_right, 1, MPI_DOUBLE, right, 1, from_left, 1, halo, &r);
            MPI_Wait(&r, &st[1]);
#else
            MPI_Sendrecv_replace(&to_right, 1, MPI_DOUBLE, right, 1, from_left, 1, halo, &st[1]);
#endif
            u[N + 1] = to_left, u[0] = to_right;
            if (st[0].MPI_SOURCE != right || st[1].MPI_SOURCE != left) {
                fprintf(stderr, "heat rank %d: halo from %d and %d at step %d\n", rank,
                        st[0].MPI_SOURCE, st[1].MPI_SOURCE, step);
                return 1;
            }
        } else if (nonblocking) {
            MPI_Request r[5];
            MPI_Irecv(&u[N + 1], 1, MPI_DOUBLE, right, 0, halo, &r[0]);
            MPI_Irecv(&u[0], 1, MPI_DOUBLE, from_left, 1, halo, &r[1]);
            MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 0, halo, &r[2]);
            MPI_Isend(&u[N], 1, MPI_DOUBLE, right, 1, halo, &r[3]);
            if (nonblocking == 4) {
                /* a nonblocking collective in flight with the halo exchange */
                static double one = 1, ranks;
                MPI_Iallreduce(&one, &ranks, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r[4]);
                MPI_Waitall(5, r, MPI_STATUSES_IGNORE);
            } else if (nonblocking == 2) {
                int done = 0;
                while (!done) MPI_Testall(4, r, &done, MPI_STATUSES_IGNORE);
            } else if (nonblocking == 3) {
                for (int k = 0, index; k < 4; k++) MPI_Waitany(4, r, &index, MPI_STATUS_IGNORE);
            } else {
                int fault = transient(child, "HEAT_CHILD_FAULT_EARLY", "early", step, faulted_early, u);
                if (fault < 0) return report_cd_error("restore_cd(step)");
                if (fault) goto step_again;
                MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
            }
        } else {
            MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[N + 1], 1, MPI_DOUBLE, right, 0,
                         halo, MPI_STATUS_IGNORE);
            MPI_Sendrecv(&u[N], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, from_left, 1,
                         halo, MPI_STATUS_IGNORE);
        }
        if (env_int("HEAT_TAGS", 0)) {
            /* two messages to the right, a large one of tag 3 (64 KiB: MPI's rendezvous
             * protocol) and then a small one of tag 4, received in the other order (MPI keeps
             * order per tag only); with HEAT_KILL_INSIDE=1 the rank HEAT_KILL_AT kills dies
             * right after posting them, and its right neighbour pauses between its two
             * receives: the small message arrived, the large one never does */
            enum { LARGE = 8192 };
            static double large_out[LARGE], large_in[LARGE];
            double small_out = 0.5 * u[N - 1], small_in = 0;
            MPI_Request sent[2];
            for (int k = 0; k < LARGE; k++) large_out[k] = u[N] + k * 1e-9;
            const int inside = env_int("HEAT_KILL_INSIDE", 0) && step + 1 == kill_at;
            MPI_Isend(large_out, LARGE, MPI_DOUBLE, right, 3, halo, &sent[0]);
            MPI_Isend(&small_out, 1, MPI_DOUBLE, right, 4, halo, &sent[1]);
            if (inside && kill_rank == rank) kill_self("");
            MPI_Recv(&small_in, 1, MPI_DOUBLE, left, 4, halo, MPI_STATUS_IGNORE);
            if (inside && kill_rank == left) {
                struct timespec pause = {1, 0};
                nanosleep(&pause, NULL);
            }
            MPI_Recv(large_in, LARGE, MPI_DOUBLE, left, 3, halo, MPI_STATUS_IGNORE);
            MPI_Waitall(2, sent, MPI_STATUSES_IGNORE);
            u[1] += 1e-3 * (large_in[LARGE - 1] - small_in);
        }
        if (env_int("HEAT_CHOOSY", -1) == rank) {
            /* two choices more a step on this rank alone: a message to itself on
             * MPI_COMM_SELF, its send and receive completed by MPI_Waitany */
            MPI_Request self[2];
            double out = step, in = -1;
            MPI_Irecv(&in, 1, MPI_DOUBLE, 0, 6, MPI_COMM_SELF, &self[0]);
            MPI_Isend(&out, 1, MPI_DOUBLE, 0, 6, MPI_COMM_SELF, &self[1]);
            for (int k = 0, index; k < 2; k++) MPI_Waitany(2, self, &index, MPI_STATUS_IGNORE);
        }
        if (env_int("HEAT_WILDCARD", 0) == 2) {
            /* a token to the right, found by polling MPI_Iprobe and by MPI_Probe, both from
             * MPI_ANY_SOURCE, then received from the source found */
            MPI_Request sent;
            double token = step, got = -1;
            int found = 0;
            MPI_Status st;
            MPI_Isend(&token, 1, MPI_DOUBLE, right, 5, halo, &sent);
            while (!found) MPI_Iprobe(MPI_ANY_SOURCE, 5, halo, &found, &st);
            MPI_Probe(MPI_ANY_SOURCE, 5, halo, &st);
            MPI_Recv(&got, 1, MPI_DOUBLE, st.MPI_SOURCE, 5, halo, MPI_STATUS_IGNORE);
            MPI_Wait(&sent, MPI_STATUS_IGNORE);
            if (got != step) {
                fprintf(stderr, "heat rank %d: token %g from rank %d at step %d\n", rank, got,
                        st.MPI_SOURCE, step);
                return 1;
            }
        }
        if (env_int("HEAT_WILDCARD", 0) >= 3) {
            /* two tokens to the right, matched from MPI_ANY_SOURCE: one by polling
             * MPI_Improbe and received with MPI_Mrecv, the other by MPI_Mprobe and received
             * with MPI_Imrecv */
            MPI_Request sent[2], receiving;
            double tokens[2] = {step, -step}, got[2] = {-1, -1};
            int found = 0;
            MPI_Message matched;
            MPI_Status st;
            MPI_Isend(&tokens[0], 1, MPI_DOUBLE, right, 5, halo, &sent[0]);
            MPI_Isend(&tokens[1], 1, MPI_DOUBLE, right, 7, halo, &sent[1]);
            while (!found) MPI_Improbe(MPI_ANY_SOURCE, 5, halo, &found, &matched, &st);
            MPI_Mrecv(&got[0], 1, MPI_DOUBLE, &matched, MPI_STATUS_IGNORE);
            MPI_Mprobe(MPI_ANY_SOURCE, 7, halo, &matched, &st);
            if (env_int("HEAT_WILDCARD", 0) == 4) {
                /* a collective while the message is matched, not received */
                if (env_int("HEAT_KILL_INSIDE", 0) && step + 1 == kill_at && kill_rank == rank)
                    kill_self("");
                MPI_Barrier(halo);
            }
            MPI_Imrecv(&got[1], 1, MPI_DOUBLE, &matched, &receiving);
            MPI_Wait(&receiving, MPI_STATUS_IGNORE);
            MPI_Waitall(2, sent, MPI_STATUSES_IGNORE);
            if (got[0] != step || got[1] != -step) {
                fprintf(stderr, "heat rank %d: tokens %g %g from rank %d at step %d\n", rank,
                        got[0], got[1], st.MPI_SOURCE, step);
                return 1;
            }
        }
        for (int i = 1; i <= N; i++) v[i] = u[i] + coefficient * (u[i - 1] - 2 * u[i] + u[i + 1]) + bias;
        memcpy(&u[1], &v[1], N * sizeof(double));
        if (reduce) {
            double local = 0, total = 0;
            for (int i = 1; i <= N; i++) local += u[i];
            if (sum_request != MPI_REQUEST_NULL) {
                sum_in = local;
                MPI_Start(&sum_request);
                MPI_Wait(&sum_request, MPI_STATUS_IGNORE);
                total = sum_out;
            } else {
                MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            }
            u[1] += total * 1e-6;
            if (reduce == 2 && size <= 64) {
                /* the root reduces in place; it scatters a share of the gathered values */
                double at_root = local, all[64] = {0}, share = 0;
                if (rank == 0)
                    MPI_Reduce(MPI_IN_PLACE, &at_root, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                else
                    MPI_Reduce(&local, NULL, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                MPI_Gather(&u[1], 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                if (rank == 0)
                    for (int r = 0; r < size; r++) all[r] = all[r] * 1e-8 + at_root * 1e-9;
                MPI_Scatter(all, 1, MPI_DOUBLE, &share, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                u[3] += share;
            } else if (reduce == 3 && size <= 64) {
                /* the collectives whose result differs per rank, and the v-forms (the rooted
                 * ones at rank 0), each folded into every rank's state */
                static MPI_Op compose = MPI_OP_NULL;
                static MPI_Datatype pair;
                if (compose == MPI_OP_NULL) {
                    MPI_Op_create(compose_maps, 0, &compose);
                    MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
                    MPI_Type_commit(&pair);
                }
                double prefix = 0, before = 0, map[2] = {1 + rank * 1e-3, local * 1e-6}, maps[2];
                MPI_Scan(&local, &prefix, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                MPI_Exscan(&local, &before, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                MPI_Scan(map, maps, 1, pair, compose, MPI_COMM_WORLD);
                double to[64], from[64], block[64], all[192], mix[192], some[3], back[3];
                double x[128] = {0};
                int counts[64], displs[64], n = 0;
                for (int j = 0; j < size; j++) {
                    to[j] = u[1 + j] * (rank + 1), block[j] = u[2 + j];
                    counts[j] = j % 3 + 1, displs[j] = n, n += counts[j];
                }
                MPI_Alltoall(to, 1, MPI_DOUBLE, from, 1, MPI_DOUBLE, MPI_COMM_WORLD);
                if (env_int("HEAT_KILL_INSIDE", 0) && step + 1 == kill_at && kill_rank == rank)
                    kill_self("");
                MPI_Reduce_scatter_block(MPI_IN_PLACE, block, 1, MPI_DOUBLE, MPI_SUM,
                                         MPI_COMM_WORLD);
                for (int j = 0; j < counts[rank]; j++) all[displs[rank] + j] = u[5 + j] + rank;
                MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, counts, displs, MPI_DOUBLE,
                               MPI_COMM_WORLD);
                for (int j = 0; j < n; j++) mix[j] = all[j] * (rank + 1);
                MPI_Reduce_scatter(mix, some, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                /* rank 0 gathers the pieces (its own in place), changes them and scatters them
                 * back; the other ranks pass no counts */
                if (rank == 0) {
                    for (int j = 0; j < counts[0]; j++) mix[j] = some[j];
                    MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, mix, counts, displs,
                                MPI_DOUBLE, 0, MPI_COMM_WORLD);
                    for (int j = 0; j < n; j++) mix[j] = mix[j] * 0.5 + j;
                    MPI_Scatterv(mix, counts, displs, MPI_DOUBLE, back, counts[0], MPI_DOUBLE, 0,
                                 MPI_COMM_WORLD);
                } else {
                    MPI_Gatherv(some, counts[rank], MPI_DOUBLE, NULL, NULL, NULL, MPI_DOUBLE, 0,
                                MPI_COMM_WORLD);
                    MPI_Scatterv(NULL, NULL, NULL, MPI_DOUBLE, back, counts[rank], MPI_DOUBLE, 0,
                                 MPI_COMM_WORLD);
                }
                /* in place: (rank + j) % 2 + 1 values each way between this rank and rank j */
                int pairs[64], at[64];
                for (int j = 0; j < size; j++) {
                    pairs[j] = (rank + j) % 2 + 1, at[j] = 2 * j;
                    for (int k = 0; k < pairs[j]; k++) x[2 * j + k] = u[6 + k] * (j + 1) + rank;
                }
                MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, x, pairs, at,
                              MPI_DOUBLE, MPI_COMM_WORLD);
                double fold = prefix + (rank ? before : 0) + maps[0] + maps[1] * 1e3 + block[0];
                for (int j = 0; j < size; j++) fold += from[j] * (j + 1) + x[2 * j] + x[2 * j + 1];
                for (int j = 0; j < counts[rank]; j++) fold += (some[j] + back[j]) * (j + 1);
                u[4] += fold * 1e-9;
            } else if (reduce == 4) {
                u[4] += nonblocking_allforms(local) * 1e-9;
            } else if (reduce == 6 && size <= 64) {
                int die = env_int("HEAT_KILL_INSIDE", 0) && step + 1 == kill_at && kill_rank == rank;
                u[4] += nonblocking_vforms(u, size, die) * 1e-9;
            } else if (two_doubles != MPI_DATATYPE_NULL) {
                int die = env_int("HEAT_KILL_INSIDE", 0) && step + 1 == kill_at && kill_rank == rank;
                u[4] += alltoallw_fold(u, size, two_doubles, die) * 1e-9;
            }
            if (pair != MPI_COMM_NULL) {
                MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, pair);
                u[2] += total * 1e-7;
            }
            if (inter != MPI_COMM_NULL) {
                /* the rank of the same place on the other side, over the intercommunicator */
                int place, remote;
                double theirs = 0;
                MPI_Comm_rank(inter, &place);
                MPI_Comm_remote_size(inter, &remote);
                if (place < remote)
                    MPI_Sendrecv(&local, 1, MPI_DOUBLE, place, 4, &theirs, 1, MPI_DOUBLE, place,
                                 4, inter, MPI_STATUS_IGNORE);
                u[5] += theirs * 1e-8;
            }
            if (cart == 7) {
                /* communicators made, used and freed every step (inside the step's CD that
                 * logs, with HEAT_CHILD): the ranks of one parity of rank + step, and a
                 * duplicate of them */
                MPI_Comm part, copy;
                double most = 0;
                MPI_Comm_split(MPI_COMM_WORLD, (rank + step) % 2, size - rank, &part);
                MPI_Comm_dup(part, &copy);
                MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, part);
                MPI_Allreduce(&u[2], &most, 1, MPI_DOUBLE, MPI_MAX, copy);
                MPI_Comm_free(&copy);
                MPI_Comm_free(&part);
                u[2] += total * 1e-7 + most * 1e-8;
            }
        }
        if (child) {
            /* a transient fault found before the state leaves the rank: the step re-executes
             * from the child's MPI log, the other ranks never see it */
            int fault = transient(child, "HEAT_CHILD_FAULT", "transient", step, faulted, u);
            if (fault < 0) return report_cd_error("restore_cd(step)");
            if (fault) goto step_again;
            if (commit_cd(child)) return report_cd_error("commit_cd(step)");
        }
        step++;
        executed++;
        if (step % INTERVAL == 0) {
            if (advance_cd_point_in_time(cd) != 0) {
                if (!getenv("HEAT_PERSIST_ERRORS") ||
                    strcmp(getenv("HEAT_PERSIST_ERRORS"), "continue") != 0)
                    return report_cd_error("advance_cd_point_in_time");
                char msg[1024];
                size_t n = 0;
                cd_last_error_message(msg, sizeof msg - 1, &n);
                msg[n < sizeof msg ? n : sizeof msg - 1] = '\0';
                printf("heat rank %d persist error at %d: %s\n", rank, step, msg);
                fflush(stdout);
            }
            /* an advance demotes the ranges to READ_ONLY: promote them again */
            if (add_to_cd_via_copy(cd, state, 2)) return report_cd_error("add_to_cd_via_copy");
        }
        if (step == kill_at && (kill_rank < 0 || kill_rank == rank)) kill_self("");
        if (step == kill2_at && kill2_rank == rank) kill_self(".2");
    }

    /* in RESULT_PARTS lines of PART values: a line longer than stdout's buffer (1 KiB on
     * Open MPI's pseudo-terminals) is written in pieces that other ranks' output can split */
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
    printf("heat rank %d executed %d\n", rank, executed);
    fflush(stdout);
    commit_cd(cd);
    if (nonblocking == 5)
        for (int k = 0; k < 4; k++) MPI_Request_free(&halo_requests[k]);
    if (sum_request != MPI_REQUEST_NULL) MPI_Request_free(&sum_request);
    if (pair != MPI_COMM_NULL) MPI_Comm_free(&pair);
    if (inter != MPI_COMM_NULL) MPI_Comm_free(&inter);
    if (halo != MPI_COMM_WORLD) MPI_Comm_free(&halo);
    MPI_Finalize();
    return 0;
}
