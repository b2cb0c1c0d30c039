// C++ against Containment::cd: SUCCESS and FAILURE are C++ constants (case labels), a CD over
// a std::vector goes through advance, a fault and restore_cd. Prints "cmake_cxx: ok".
#include <cd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

static void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "cmake_cxx: %s failed (%s)\n", what, cd_error_name(cd_last_error()));
        std::exit(1);
    }
}

static const char *outcome(int rc) {
    switch (rc) {
    case SUCCESS:
        return "success";
    case FAILURE:
        return "failure";
    default:
        return "error";
    }
}

int main() {
    std::vector<double> field(1000, 1.0);
    int error = -2;
    cd_handle cd = create_cd(nullptr, nullptr, COMM_LOGGING_DISABLED, "cmake_cxx", &error);
    check(cd != nullptr && error == SUCCESS, "create_cd");
    cd_addrspec spec[1] = {{field.data(), field.size() * sizeof(double), READ_WRITE, GLOBAL}};
    check(add_to_cd_via_copy(CURRENT_CD, spec, 1) == SUCCESS, "add_to_cd_via_copy");
    field[7] = 7.0;
    check(advance_cd_point_in_time(CURRENT_CD) != FAILURE, "advance_cd_point_in_time");
    field.assign(field.size(), -1.0);
    check(outcome(restore_cd(CURRENT_CD))[0] == 's', "restore_cd");
    check(field[7] == 7.0 && field[999] == 1.0, "the advanced vector is back");
    check(advance_cd_point_in_time(nullptr) == FAILURE, "advancing NULL is FAILURE");
    check(commit_cd(cd) == SUCCESS, "commit_cd");
    std::printf("cmake_cxx: ok\n");
    return 0;
}
