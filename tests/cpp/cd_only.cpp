// cd.h alone in C++ (g++ -std=c++17): the spec's constants and a CD cycle. Prints "cd_only: ok".
#include <cd.h>

#include "cycle.hpp"

int main() {
    cdtest::cd_cycle("cd_only");
    std::printf("cd_only: ok\n");
    return 0;
}
