/* Sibling CDs (spec use case), with pthreads instead of fork: each thread creates a child of
 * the root, saves its row, recovers from its own error in isolation, and commits the row's
 * initial data into the root. Then the root restores everything. Siblings' MPI logs are
 * discarded on commit; concurrent adds on one handle are safe; concurrent commit, restore or
 * advance on one handle are refused with CD_ERR_CONCURRENT_OPERATION. */
#include "check.h"
#include <pthread.h>
#include <semaphore.h>
#include <string.h>

#define NUM_ROWS 8
static int data[NUM_ROWS];
static cd_handle root;
static int extra[NUM_ROWS][16];
static pthread_barrier_t all_created;

static int compute(int *data_ptr, int *attempts) {
    *data_ptr += 100; /* modifies the data, then detects an error on the first attempt */
    return (*attempts)++ == 0;
}

static void *calculator(void *arg) {
    int i = (int)(size_t)arg;
    int *data_ptr = &data[i];
    int cd_error, calc_error, attempts = 0;
    cd_handle child = create_cd(root, NULL, MPI_LOGGING_INHERIT, NULL, &cd_error);
    CHECK(cd_error == SUCCESS && child != NULL);
    CHECK(cd_current() == child); /* the active CD is per thread */
    pthread_barrier_wait(&all_created); /* every sibling exists: they run concurrently */
    struct cd_addrspec as[1] = {{data_ptr, sizeof(int), READ_WRITE, GLOBAL}};
    OK(add_to_cd_via_copy(child, as, 1));
    /* A log entry per sibling: siblings' logs are discarded on commit. */
    int *ent = malloc(sizeof(int));
    CHECK(ent != NULL);
    *ent = i;
    OK(add_MPI_log_to_cd(CURRENT_CD, ent, sizeof(int)));
    /* Recover when encountering an error. */
    while ((calc_error = compute(data_ptr, &attempts))) {
        OK(restore_cd(child));
        CHECK(*data_ptr == i); /* restored in isolation */
    }
    CHECK(*data_ptr == i + 100);
    struct cd_info info;
    OK(cd_get_info(child, &info));
    CHECK(info.depth == 1 && info.had_siblings == 1);
    /* Concurrent adds on the shared root handle. */
    struct cd_addrspec ex[1] = {{extra[i], sizeof extra[i], READ_ONLY, GLOBAL}};
    OK(add_to_cd_via_copy(root, ex, 1));
    /* This commit updates the parent CD with initial data, prior to changing that data. */
    OK(commit_cd(child));
    CHECK(cd_current() == NULL);
    return NULL;
}

/* Concurrent exclusive operations on one handle: a restore is held inside its regen callback
 * while another thread tries to advance, restore and commit the same CD. */
static cd_handle busy_cd;
static sem_t in_regen, release_regen;
static int blocker[4];

static int blocking_regen(struct cd_addrspec addrlist[], int ascount) {
    (void)addrlist;
    (void)ascount;
    sem_post(&in_regen);
    sem_wait(&release_regen);
    return 0;
}

static void *restorer(void *arg) {
    (void)arg;
    OK(restore_cd(busy_cd));
    return NULL;
}

static void concurrent_exclusive_operations(void) {
    CHECK(sem_init(&in_regen, 0, 0) == 0 && sem_init(&release_regen, 0, 0) == 0);
    busy_cd = must_create(NULL, COMM_LOGGING_DISABLED, "busy");
    struct cd_addrspec ab[1] = {{blocker, sizeof blocker, READ_ONLY, GLOBAL}};
    OK(add_to_cd_via_regen(busy_cd, ab, 1, blocking_regen));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, restorer, NULL) == 0);
    sem_wait(&in_regen); /* the restore is running */
    CHECK(advance_cd_point_in_time(busy_cd) == FAILURE);
    CHECK(cd_last_error() == CD_ERR_CONCURRENT_OPERATION);
    EXPECT(CD_ERR_CONCURRENT_OPERATION, restore_cd(busy_cd));
    EXPECT(CD_ERR_CONCURRENT_OPERATION, commit_cd(busy_cd));
    sem_post(&release_regen);
    CHECK(pthread_join(t, NULL) == 0);
    OK(advance_cd_point_in_time(busy_cd)); /* once it finished, all is well */
    OK(commit_cd(busy_cd));
}

int main(void) {
    int cd_error;
    int x = 0, y = 0, z = 0;
    struct cd_addrspec addrlist[3] = {{&x, sizeof(x), READ_WRITE, GLOBAL},
                                      {&y, sizeof(y), READ_WRITE, GLOBAL},
                                      {&z, sizeof(z), READ_ONLY, GLOBAL}};
    for (int i = 0; i < NUM_ROWS; i++) data[i] = i;
    root = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "root", &cd_error);
    CHECK(cd_error == SUCCESS);
    OK(add_to_cd_via_copy(root, addrlist, 3));

    pthread_t t[NUM_ROWS];
    CHECK(pthread_barrier_init(&all_created, NULL, NUM_ROWS) == 0);
    for (int i = 0; i < NUM_ROWS; i++)
        CHECK(pthread_create(&t[i], NULL, calculator, (void *)(size_t)i) == 0);
    for (int i = 0; i < NUM_ROWS; i++) CHECK(pthread_join(t[i], NULL) == 0);

    struct cd_info info;
    OK(cd_get_info(root, &info));
    CHECK(info.children == 0);
    CHECK(info.log_entries == 0); /* siblings' logs are discarded, never merged */
    for (int i = 0; i < NUM_ROWS; i++) {
        CHECK(data[i] == i + 100);
        CHECK(saved_int(root, &data[i]) == i); /* child wins: the initial data */
    }
    /* A top-level recovery restores every row and the root's own state. */
    x = y = 1;
    OK(restore_cd(root));
    CHECK(x == 0 && y == 0);
    for (int i = 0; i < NUM_ROWS; i++) CHECK(data[i] == i);

    /* Two siblings alive at once: both are marked, and their logs are discarded on commit;
     * an only child's log merges into the parent. */
    cd_handle only = must_create(root, MPI_LOGGING_INHERIT, NULL);
    int *e0 = malloc(4);
    CHECK(e0 != NULL);
    OK(add_MPI_log_to_cd(only, e0, 4));
    OK(commit_cd(only));
    OK(cd_get_info(root, &info));
    CHECK(info.log_entries == 1);
    OK(delete_MPI_log_from_cd(root));
    cd_handle s1 = must_create(root, MPI_LOGGING_INHERIT, NULL);
    cd_handle s2 = must_create(root, MPI_LOGGING_INHERIT, NULL);
    int *e1 = malloc(4), *e2 = malloc(4);
    CHECK(e1 && e2);
    OK(add_MPI_log_to_cd(s1, e1, 4));
    OK(add_MPI_log_to_cd(s2, e2, 4));
    OK(cd_get_info(s1, &info));
    CHECK(info.had_siblings == 1 && info.sibling_index == 0);
    OK(cd_get_info(s2, &info));
    CHECK(info.had_siblings == 1 && info.sibling_index == 1);
    OK(commit_cd(s2));
    OK(commit_cd(s1));
    OK(cd_get_info(root, &info));
    CHECK(info.log_entries == 0);

    /* Discard the root CD via commit_cd. */
    OK(commit_cd(root));
    concurrent_exclusive_operations();
    printf("siblings_pthreads: ok\n");
    return 0;
}
