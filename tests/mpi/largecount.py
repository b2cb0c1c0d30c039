"""An mpi4py program re-executed from its CD's log: mpi4py 4 built against MPICH 4 calls only
the large-count forms (MPI_Send_c, MPI_Sendrecv_c, MPI_Allreduce_c, ...), so this is what a
Python MPI code needs from libcd. Run with libcd.so preloaded (LD_PRELOAD): the CD API is
called through ctypes on the preloaded library.

Each round exchanges on a ring (Sendrecv, Isend/Irecv + Waitall, Send/Recv), then Bcast,
Allreduce and Alltoallv; the state lives in array buffers registered with the CD. With
FAULT_RANK set, that rank faults in round FAULT_ROUND, restores to the last advance and
re-executes alone from its log.
Prints "largecount-py rank R checksum X recoveries N"."""

import ctypes
import os
import struct
from array import array

from mpi4py import MPI

ROUNDS = 6
N = 8
COMM_LOGGING_ENABLED = 1
READ_WRITE = 1
GLOBAL = 0


class AddrSpec(ctypes.Structure):
    """`struct cd_addrspec` of cd.h."""

    _fields_ = [
        ("address", ctypes.c_void_p),
        ("length", ctypes.c_size_t),
        ("addr_tp", ctypes.c_int),
        ("addr_scope", ctypes.c_int),
    ]


def load_cd():
    """The preloaded libcd, with the prototypes used here."""
    cd = ctypes.CDLL("libcd.so")
    cd.create_cd.restype = ctypes.c_void_p
    cd.create_cd.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_int),
    ]
    for name in ("commit_cd", "restore_cd", "advance_cd_point_in_time"):
        getattr(cd, name).argtypes = [ctypes.c_void_p]
    cd.add_to_cd_via_copy.argtypes = [ctypes.c_void_p, ctypes.POINTER(AddrSpec), ctypes.c_int]
    return cd


def check(what, rc):
    if rc != 0:
        raise SystemExit(f"largecount.py: {what} failed ({rc})")


def round_trip(comm, rnd, u, acc):
    """One round of traffic; results summed into acc."""
    rank, size = comm.rank, comm.size
    left, right = (rank + size - 1) % size, (rank + 1) % size
    out = array("d", [x + rnd for x in u])
    inn = array("d", [0.0] * N)
    comm.Sendrecv([out, MPI.DOUBLE], right, 1, [inn, MPI.DOUBLE], left, 1)
    acc[0] += sum(x * (i + 1) for i, x in enumerate(inn))

    nb_out = array("d", [rank + 0.5, rnd * 2.0, u[1]])
    nb_in = array("d", [0.0] * 3)
    reqs = [
        comm.Irecv([nb_in, MPI.DOUBLE], MPI.ANY_SOURCE, 2),
        comm.Isend([nb_out, MPI.DOUBLE], right, 2),
    ]
    MPI.Request.Waitall(reqs)
    acc[1] += nb_in[0] + nb_in[1] * 3 + nb_in[2] * 5

    one = array("d", [u[2] * 2 + rnd])
    got = array("d", [0.0])
    if rank % 2 == 0:
        comm.Send([one, MPI.DOUBLE], right, 3)
        comm.Recv([got, MPI.DOUBLE], left, 3)
    else:
        comm.Recv([got, MPI.DOUBLE], left, 3)
        comm.Send([one, MPI.DOUBLE], right, 3)
    acc[1] += got[0] * 7

    root = rnd % size
    b = array("d", [u[3] + rnd if rank == root else 0.0])
    comm.Bcast([b, MPI.DOUBLE], root)
    mine = array("d", [u[4], rank + rnd * 0.5])
    total = array("d", [0.0, 0.0])
    comm.Allreduce([mine, MPI.DOUBLE], [total, MPI.DOUBLE], MPI.SUM)
    acc[2] += b[0] * 11 + total[0] * 13 + total[1]

    counts = [1 + (rank + k) % 2 for k in range(size)]
    displs = [sum(counts[:k]) for k in range(size)]
    a_out = array("i", [rank * 1000 + k + rnd for k in range(sum(counts))])
    a_in = array("i", [-1] * sum(counts))
    comm.Alltoallv([a_out, (counts, displs), MPI.INT], [a_in, (counts, displs), MPI.INT])
    acc[3] += sum(x * (k + 1) for k, x in enumerate(a_in))


def main():
    cd = load_cd()
    comm = MPI.COMM_WORLD
    rank = comm.rank
    fault_rank = int(os.environ.get("FAULT_RANK", "-1"))
    fault_round = int(os.environ.get("FAULT_ROUND", "4"))
    u = array("d", [rank * 10.0 + i for i in range(N)])
    acc = array("d", [0.0] * 4)
    rnd = array("i", [0])
    error = ctypes.c_int(0)
    handle = cd.create_cd(None, None, COMM_LOGGING_ENABLED, b"largecount-py", ctypes.byref(error))
    if not handle:
        raise SystemExit(f"largecount.py: create_cd failed ({error.value})")
    state = (AddrSpec * 3)(
        *(
            AddrSpec(a.buffer_info()[0], a.buffer_info()[1] * a.itemsize, READ_WRITE, GLOBAL)
            for a in (u, acc, rnd)
        )
    )
    check("add_to_cd_via_copy", cd.add_to_cd_via_copy(handle, state, 3))
    faulted = False
    recoveries = 0
    while rnd[0] < ROUNDS:
        round_trip(comm, rnd[0], u, acc)
        for i in range(N):
            u[i] = 0.5 * u[i] + acc[(i + rnd[0]) % 4] * 1e-4
        if rank == fault_rank and rnd[0] == fault_round and not faulted:
            faulted = True
            recoveries += 1
            for i in range(N):
                u[i] = -1e300
            check("restore_cd", cd.restore_cd(handle))
            continue
        rnd[0] += 1
        if rnd[0] == 2:
            check("advance_cd_point_in_time", cd.advance_cd_point_in_time(handle))
            check("add_to_cd_via_copy", cd.add_to_cd_via_copy(handle, state, 3))
    check("commit_cd", cd.commit_cd(handle))
    h = 1469598103934665603
    for x in list(acc) + [sum(x * (i + 1) for i, x in enumerate(u))]:
        (bits,) = struct.unpack("<Q", struct.pack("<d", x))
        h = ((h ^ bits) * 1099511628211) % (1 << 64)
    # one write(2) of the whole line: print() may write the text and its newline apart (an
    # unbuffered stdout), and mpirun would then interleave other ranks' lines between them
    line = f"largecount-py rank {rank} checksum {h:016x} recoveries {recoveries}\n"
    os.write(1, line.encode())


main()
