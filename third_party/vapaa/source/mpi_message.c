// SPDX-License-Identifier: MIT

#include <mpi.h>
