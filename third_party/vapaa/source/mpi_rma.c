// SPDX-License-Identifier: MIT

#include <mpi.h>

// NOT STANDARD STUFF

// STANDARD STUFF

