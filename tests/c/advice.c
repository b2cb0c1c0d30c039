/* Advice on when to advance (cd_get_advice, and the interval in cd_get_info): the advance
 * cost is measured from the first synchronous advance, the interval stays unknown (known = 0,
 * value 0) until a mean time between faults is known, CD_MTBF (seconds) gives one and
 * Young's and Daly's intervals follow from it, a restore gives an observed one; NULL pointers,
 * an unknown value and a stale handle are refused with their codes. */
#include "check.h"
#include <stdint.h>
#include <string.h>

static uint64_t advice(cd_handle cd, int what, int *known) {
    uint64_t value = 12345;
    *known = -1;
    OK(cd_get_advice(cd, what, &value, known));
    CHECK(*known == 0 || *known == 1);
    if (!*known) CHECK(value == 0);
    return value;
}

int main(void) {
    unsetenv("CD_MTBF");
    static unsigned char data[1 << 20];
    memset(data, 1, sizeof data);
    cd_handle cd = must_create(NULL, COMM_LOGGING_DISABLED, "c-advice");
    int known;

    /* Nothing measured: everything unknown but the counts and the source. */
    CHECK(advice(cd, CD_ADVICE_INTERVAL, &known) == 0 && !known);
    CHECK(advice(cd, CD_ADVICE_YOUNG_INTERVAL, &known) == 0 && !known);
    CHECK(advice(cd, CD_ADVICE_ADVANCE_COST, &known) == 0 && !known);
    CHECK(advice(cd, CD_ADVICE_RESTORE_COST, &known) == 0 && !known);
    CHECK(advice(cd, CD_ADVICE_MTBF, &known) == 0 && !known);
    CHECK(advice(cd, CD_ADVICE_MTBF_SOURCE, &known) == CD_MTBF_UNKNOWN && known);
    CHECK(advice(cd, CD_ADVICE_ADVANCES, &known) == 0 && known);

    struct cd_addrspec spec[1] = {{data, sizeof data, READ_WRITE, GLOBAL}};
    OK(add_to_cd_via_copy(cd, spec, 1));
    for (int i = 0; i < 4; i++) {
        data[i] = (unsigned char)(i + 2);
        CHECK(advance_cd_point_in_time(cd) == SUCCESS);
    }
    /* (Each advance demotes the range to READ_ONLY: only the first one copied it.) */
    /* The first advance (1 MiB) is timed; the next ones copy nothing, and after a cheap one
     * a thread times one advance in 32: 1 to 4 are timed. */
    uint64_t timed = advice(cd, CD_ADVICE_ADVANCES, &known);
    CHECK(timed >= 1 && timed <= 4 && known);
    uint64_t cost = advice(cd, CD_ADVICE_ADVANCE_COST, &known);
    CHECK(known && cost > 0);
    struct cd_stats st;
    OK(cd_get_stats(cd, &st));
    CHECK(st.advances == 4);
    /* No restore, no CD_MTBF: the interval is unknown, not guessed (cd_get_info too). */
    CHECK(advice(cd, CD_ADVICE_INTERVAL, &known) == 0 && !known);
    struct cd_info info;
    OK(cd_get_info(cd, &info));
    CHECK(info.advised_interval_ns == 0 && info.advised_interval_known == 0);
    CHECK(advice(cd, CD_ADVICE_MTBF_SOURCE, &known) == CD_MTBF_UNKNOWN);

    /* CD_MTBF = 100 s: Young's interval is sqrt(2 C M), Daly's about Young's - 2C/3. */
    setenv("CD_MTBF", "100", 1);
    CHECK(advice(cd, CD_ADVICE_MTBF_SOURCE, &known) == CD_MTBF_GIVEN);
    CHECK(advice(cd, CD_ADVICE_MTBF, &known) == 100000000000ull && known);
    double young = (double)advice(cd, CD_ADVICE_YOUNG_INTERVAL, &known);
    CHECK(known);
    double c = (double)cost, m = 1e11;
    CHECK(young * young > 2 * c * m * 0.999 && young * young < 2 * c * m * 1.001);
    double daly = (double)advice(cd, CD_ADVICE_INTERVAL, &known);
    CHECK(known);
    double expected = young - 2 * c / 3;
    CHECK(daly > expected - c / 100 - 2 && daly < expected + c / 100 + 2);
    /* cd_get_info carries the same interval. */
    OK(cd_get_info(cd, &info));
    CHECK(info.advised_interval_known == 1 && (double)info.advised_interval_ns == daly);

    /* A restore: observed MTBF once CD_MTBF is unset. */
    memset(data, 0, sizeof data);
    OK(restore_cd(cd));
    CHECK(data[0] == 2 && data[3] == 1); /* an advance demotes: the first one copied */
    unsetenv("CD_MTBF");
    CHECK(advice(cd, CD_ADVICE_RESTORES, &known) == 1 && known);
    CHECK(advice(cd, CD_ADVICE_RESTORE_COST, &known) > 0 && known);
    CHECK(advice(cd, CD_ADVICE_MTBF_SOURCE, &known) == CD_MTBF_OBSERVED);
    CHECK(advice(cd, CD_ADVICE_MTBF, &known) > 0 && known);
    CHECK(advice(cd, CD_ADVICE_INTERVAL, &known) > 0 && known);
    /* A CD_MTBF that is not a positive number is ignored. */
    setenv("CD_MTBF", "soon", 1);
    CHECK(advice(cd, CD_ADVICE_MTBF_SOURCE, &known) == CD_MTBF_OBSERVED);
    unsetenv("CD_MTBF");

    /* Refusals. */
    uint64_t value;
    EXPECT(CD_ERR_NULL_POINTER, cd_get_advice(cd, CD_ADVICE_INTERVAL, NULL, &known));
    EXPECT(CD_ERR_NULL_POINTER, cd_get_advice(cd, CD_ADVICE_INTERVAL, &value, NULL));
    EXPECT(CD_ERR_INVALID_ENUM, cd_get_advice(cd, 99, &value, &known));
    EXPECT(CD_ERR_INVALID_ENUM, cd_get_advice(cd, -1, &value, &known));
    EXPECT(CD_ERR_NULL_HANDLE, cd_get_advice(NULL, CD_ADVICE_INTERVAL, &value, &known));
    OK(cd_get_advice(CURRENT_CD, CD_ADVICE_ADVANCES, &value, &known));
    CHECK(value == timed);
    OK(commit_cd(cd));
    EXPECT(CD_ERR_STALE_HANDLE, cd_get_advice(cd, CD_ADVICE_INTERVAL, &value, &known));
    printf("advice: ok\n");
    return 0;
}
