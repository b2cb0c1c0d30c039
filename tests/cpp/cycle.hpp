// The C API from C++: SUCCESS, FAILURE and CURRENT_CD mean what the spec says, as constants
// (cd.h defines SUCCESS and FAILURE as macros only for C). Included by every program of
// tests/cpp/ after its own includes, so cd.h's include guard keeps their order.
#ifndef CYCLE_HPP
#define CYCLE_HPP

#include <cd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

#ifdef SUCCESS
#error "cd.h left SUCCESS a macro in C++"
#endif
#ifdef FAILURE
#error "cd.h left FAILURE a macro in C++"
#endif
static_assert(SUCCESS == 0 && FAILURE == -1, "the spec's values");
static_assert(std::is_same<decltype(SUCCESS), const int>::value, "SUCCESS is an int constant");
static_assert(std::is_same<decltype(FAILURE), const int>::value, "FAILURE is an int constant");

namespace cdtest {

// Exits with status 1, naming the check and the library's last error, unless `ok`.
inline void check(bool ok, const char *what) {
    if (!ok) {
        int code = cd_last_error();
        std::fprintf(stderr, "check failed: %s (cd_last_error %d, %s)\n", what, code,
                     cd_error_name(code));
        std::exit(1);
    }
}

// SUCCESS and FAILURE are constant expressions: case labels.
inline std::string outcome(int rc) {
    switch (rc) {
    case SUCCESS:
        return "success";
    case FAILURE:
        return "failure";
    default:
        return std::string("error ") + cd_error_name(rc);
    }
}

// A root CD over an array, reached through CURRENT_CD: the advance saves the array, a fault
// overwrites it, restore_cd puts it back; a failed advance is FAILURE with the reason in
// cd_last_error(); the commit ends the CD.
inline void cd_cycle(const char *name) {
    int error = -2;
    cd_handle root = create_cd(nullptr, nullptr, COMM_LOGGING_DISABLED, name, &error);
    check(root != nullptr && error == SUCCESS, "create_cd");
    check(cd_current() == root, "the new CD is the active one");

    std::array<double, 64> field{};
    for (std::size_t i = 0; i < field.size(); i++) field[i] = double(i);
    cd_addrspec spec[1] = {{field.data(), sizeof field, READ_WRITE, GLOBAL}};
    check(add_to_cd_via_copy(CURRENT_CD, spec, 1) == SUCCESS, "add_to_cd_via_copy(CURRENT_CD)");
    field[3] = 100.0;
    check(advance_cd_point_in_time(CURRENT_CD) != FAILURE, "advance_cd_point_in_time");
    field.fill(-1.0);
    check(outcome(restore_cd(CURRENT_CD)) == "success", "restore_cd(CURRENT_CD)");
    check(field[3] == 100.0 && field[4] == 4.0 && field[63] == 63.0, "the advanced array is back");

    check(advance_cd_point_in_time(nullptr) == FAILURE, "advancing NULL is FAILURE");
    check(cd_last_error() == CD_ERR_NULL_HANDLE, "the reason is CD_ERR_NULL_HANDLE");
    check(outcome(advance_cd_point_in_time(root)) == "success", "advance again");
    check(cd_last_error() == SUCCESS, "a success clears the last error");

    check(commit_cd(root) == SUCCESS, "commit_cd");
    check(commit_cd(root) == CD_ERR_STALE_HANDLE, "a committed handle is stale");
    check(restore_cd(CURRENT_CD) == CD_ERR_NO_ACTIVE_CD, "no active CD after the commit");
}

} // namespace cdtest

#endif
