//! The table of every MPI function the library exports or calls, one line per function: its
//! C prototype (copied from the MPI standard) and, for a wrapped function, its handler.
//!
//! The table is data: [`mpi_table!`] hands it to a macro, and it is expanded twice. The raw
//! layer ([`crate::pmpi`]) takes the prototypes (the [`Call`](crate::pmpi::Call) enum and
//! `real::X`, the library's own `PMPI_X`) and ignores the handlers; the exported shims
//! ([`crate::exports`], the top of the crate) take the handlers too. So the bottom layer
//! never names a handler's module, and every handler can use the raw layer.
//!
//! The sections, in the order the expanding macros take them:
//! - `lifecycle`: exported, the handler always runs (set-up, persistent requests);
//! - `wrapped`: exported, straight to MPI while nothing logs, counts or traces;
//! - `unreplayable`: exported, passed through, counted, and marked in the active CD's log;
//! - `mpi4_*`: the same for the MPI-4 functions MPICH 4 and Open MPI 5 declare, compiled only
//!   against such a library (`cfg(mpi4)`, set by build.rs), and `mpi4_full_*` for the rest of
//!   MPI-4 (`cfg(mpi4_full)`: `MPI_VERSION >= 4`);
//! - `forwarded`: exported as `MPI_X` only, straight to the library (calls without
//!   communication that the runtime's own MPI code makes besides wrapped ones; see
//!   [`crate::exports`]);
//! - `called`: not exported, only called by the runtime.

/// Expands `$expand! { <the table> }` where it is invoked: the types the table names
/// ([`crate::abi`]'s handles and [`crate::pmpi`]'s aliases) must be in scope there.
macro_rules! mpi_table {
    ($expand:ident) => {
        $expand! {
            // Handlers that run with or without a CD: set-up, and the persistent requests this
            // thread made (remembered when made, forgotten when freed).
            lifecycle {
                Init(argc: *mut c_int, argv: *mut *mut *mut c_char) => init::init;
                Init_thread(argc: *mut c_int, argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) => init::init_thread;
                Finalize() => init::finalize;
                Send_init(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => recovery::send_init;
                Ssend_init(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => recovery::ssend_init;
                Bsend_init(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => recovery::bsend_init;
                Rsend_init(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => recovery::rsend_init;
                Recv_init(buf: BufMut, count: c_int, datatype: Datatype, source: c_int, tag: c_int, comm: Comm, request: *mut Request) => recovery::recv_init;
                Request_free(request: *mut Request) => recovery::request_free;
                Comm_create_errhandler(function: ErrhandlerFn, errhandler: *mut Errhandler) => errors::comm_create_errhandler;
                Comm_set_errhandler(comm: Comm, errhandler: Errhandler) => errors::comm_set_errhandler;
                Comm_get_errhandler(comm: Comm, errhandler: *mut Errhandler) => errors::comm_get_errhandler;
                Comm_get_parent(parent: *mut Comm) => recovery::comm_get_parent;
            }
            // With no CD logging on the thread and no statistics, these go straight to MPI.
            wrapped {

                Send(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm) => recovery::send;
                Ssend(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm) => recovery::ssend;
                Bsend(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm) => p2p::bsend;
                Rsend(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm) => p2p::rsend;
                Isend(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => recovery::isend;
                Issend(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => recovery::issend;
                Ibsend(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::ibsend;
                Irsend(buf: Buf, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::irsend;
                Recv(buf: BufMut, count: c_int, datatype: Datatype, source: c_int, tag: c_int, comm: Comm, status: *mut Status) => recovery::recv;
                Irecv(buf: BufMut, count: c_int, datatype: Datatype, source: c_int, tag: c_int, comm: Comm, request: *mut Request) => recovery::irecv;
                Sendrecv(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, dest: c_int, sendtag: c_int, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, source: c_int, recvtag: c_int, comm: Comm, status: *mut Status) => recovery::sendrecv;
                Sendrecv_replace(buf: BufMut, count: c_int, datatype: Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: Comm, status: *mut Status) => recovery::sendrecv_replace;
                Probe(source: c_int, tag: c_int, comm: Comm, status: *mut Status) => recovery::probe;
                Iprobe(source: c_int, tag: c_int, comm: Comm, flag: *mut c_int, status: *mut Status) => recovery::iprobe;
                Mprobe(source: c_int, tag: c_int, comm: Comm, message: *mut Message, status: *mut Status) => recovery::mprobe;
                Improbe(source: c_int, tag: c_int, comm: Comm, flag: *mut c_int, message: *mut Message, status: *mut Status) => recovery::improbe;
                Mrecv(buf: BufMut, count: c_int, datatype: Datatype, message: *mut Message, status: *mut Status) => recovery::mrecv;
                Imrecv(buf: BufMut, count: c_int, datatype: Datatype, message: *mut Message, request: *mut Request) => recovery::imrecv;

                Wait(request: *mut Request, status: *mut Status) => recovery::wait;
                Waitall(count: c_int, requests: *mut Request, statuses: *mut Status) => recovery::waitall;
                Waitany(count: c_int, requests: *mut Request, index: *mut c_int, status: *mut Status) => recovery::waitany;
                Waitsome(incount: c_int, requests: *mut Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut Status) => recovery::waitsome;
                Test(request: *mut Request, flag: *mut c_int, status: *mut Status) => recovery::test;
                Testall(count: c_int, requests: *mut Request, flag: *mut c_int, statuses: *mut Status) => recovery::testall;
                Testany(count: c_int, requests: *mut Request, index: *mut c_int, flag: *mut c_int, status: *mut Status) => recovery::testany;
                Testsome(incount: c_int, requests: *mut Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut Status) => recovery::testsome;
                Request_get_status(request: Request, flag: *mut c_int, status: *mut Status) => recovery::request_get_status;
                Cancel(request: *mut Request) => recovery::cancel;
                Start(request: *mut Request) => recovery::start;
                Startall(count: c_int, requests: *mut Request) => recovery::startall;

                Barrier(comm: Comm) => recovery::barrier;
                Bcast(buffer: BufMut, count: c_int, datatype: Datatype, root: c_int, comm: Comm) => recovery::bcast;
                Reduce(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, root: c_int, comm: Comm) => recovery::reduce;
                Allreduce(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, comm: Comm) => recovery::allreduce;
                Gather(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm) => recovery::gather;
                Gatherv(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, displs: Ints, recvtype: Datatype, root: c_int, comm: Comm) => recovery::gatherv;
                Scatter(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm) => recovery::scatter;
                Scatterv(sendbuf: Buf, sendcounts: Ints, displs: Ints, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm) => recovery::scatterv;
                Allgather(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm) => recovery::allgather;
                Allgatherv(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, displs: Ints, recvtype: Datatype, comm: Comm) => recovery::allgatherv;
                Alltoall(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm) => recovery::alltoall;
                Alltoallv(sendbuf: Buf, sendcounts: Ints, sdispls: Ints, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, rdispls: Ints, recvtype: Datatype, comm: Comm) => recovery::alltoallv;
                Reduce_scatter_block(sendbuf: Buf, recvbuf: BufMut, recvcount: c_int, datatype: Datatype, op: Op, comm: Comm) => recovery::reduce_scatter_block;
                Reduce_scatter(sendbuf: Buf, recvbuf: BufMut, recvcounts: Ints, datatype: Datatype, op: Op, comm: Comm) => recovery::reduce_scatter;
                Scan(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, comm: Comm) => recovery::scan;
                Exscan(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, comm: Comm) => recovery::exscan;
                Alltoallw(sendbuf: Buf, sendcounts: Ints, sdispls: Ints, sendtypes: Types, recvbuf: BufMut, recvcounts: Ints, rdispls: Ints, recvtypes: Types, comm: Comm) => recovery::alltoallw;
                Neighbor_allgather(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm) => recovery::neighbor_allgather;
                Neighbor_allgatherv(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, displs: Ints, recvtype: Datatype, comm: Comm) => recovery::neighbor_allgatherv;
                Neighbor_alltoall(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm) => recovery::neighbor_alltoall;
                Neighbor_alltoallv(sendbuf: Buf, sendcounts: Ints, sdispls: Ints, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, rdispls: Ints, recvtype: Datatype, comm: Comm) => recovery::neighbor_alltoallv;
                Neighbor_alltoallw(sendbuf: Buf, sendcounts: Ints, sdispls: Aints, sendtypes: Types, recvbuf: BufMut, recvcounts: Ints, rdispls: Aints, recvtypes: Types, comm: Comm) => recovery::neighbor_alltoallw;

                Ibarrier(comm: Comm, request: *mut Request) => recovery::ibarrier;
                Ibcast(buffer: BufMut, count: c_int, datatype: Datatype, root: c_int, comm: Comm, request: *mut Request) => recovery::ibcast;
                Ireduce(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, root: c_int, comm: Comm, request: *mut Request) => recovery::ireduce;
                Iallreduce(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, comm: Comm, request: *mut Request) => recovery::iallreduce;
                Igather(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm, request: *mut Request) => recovery::igather;
                Igatherv(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, displs: Ints, recvtype: Datatype, root: c_int, comm: Comm, request: *mut Request) => recovery::igatherv;
                Iscatter(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm, request: *mut Request) => recovery::iscatter;
                Iscatterv(sendbuf: Buf, sendcounts: Ints, displs: Ints, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm, request: *mut Request) => recovery::iscatterv;
                Iallgather(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm, request: *mut Request) => recovery::iallgather;
                Iallgatherv(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, displs: Ints, recvtype: Datatype, comm: Comm, request: *mut Request) => recovery::iallgatherv;
                Ialltoall(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm, request: *mut Request) => recovery::ialltoall;
                Ialltoallv(sendbuf: Buf, sendcounts: Ints, sdispls: Ints, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, rdispls: Ints, recvtype: Datatype, comm: Comm, request: *mut Request) => recovery::ialltoallv;
                Ialltoallw(sendbuf: Buf, sendcounts: Ints, sdispls: Ints, sendtypes: Types, recvbuf: BufMut, recvcounts: Ints, rdispls: Ints, recvtypes: Types, comm: Comm, request: *mut Request) => recovery::ialltoallw;
                Ireduce_scatter_block(sendbuf: Buf, recvbuf: BufMut, recvcount: c_int, datatype: Datatype, op: Op, comm: Comm, request: *mut Request) => recovery::ireduce_scatter_block;
                Ireduce_scatter(sendbuf: Buf, recvbuf: BufMut, recvcounts: Ints, datatype: Datatype, op: Op, comm: Comm, request: *mut Request) => recovery::ireduce_scatter;
                Iscan(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, comm: Comm, request: *mut Request) => recovery::iscan;
                Iexscan(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, comm: Comm, request: *mut Request) => recovery::iexscan;
                Ineighbor_allgather(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm, request: *mut Request) => recovery::ineighbor_allgather;
                Ineighbor_allgatherv(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, displs: Ints, recvtype: Datatype, comm: Comm, request: *mut Request) => recovery::ineighbor_allgatherv;
                Ineighbor_alltoall(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm, request: *mut Request) => recovery::ineighbor_alltoall;
                Ineighbor_alltoallv(sendbuf: Buf, sendcounts: Ints, sdispls: Ints, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, rdispls: Ints, recvtype: Datatype, comm: Comm, request: *mut Request) => recovery::ineighbor_alltoallv;
                Ineighbor_alltoallw(sendbuf: Buf, sendcounts: Ints, sdispls: Aints, sendtypes: Types, recvbuf: BufMut, recvcounts: Ints, rdispls: Aints, recvtypes: Types, comm: Comm, request: *mut Request) => recovery::ineighbor_alltoallw;

                Comm_dup(comm: Comm, newcomm: *mut Comm) => comm::comm_dup;
                Comm_idup(comm: Comm, newcomm: *mut Comm, request: *mut Request) => recovery::comm_idup;
                Comm_dup_with_info(comm: Comm, info: Info, newcomm: *mut Comm) => comm::comm_dup_with_info;
                Comm_split(comm: Comm, color: c_int, key: c_int, newcomm: *mut Comm) => comm::comm_split;
                Comm_split_type(comm: Comm, split_type: c_int, key: c_int, info: Info, newcomm: *mut Comm) => comm::comm_split_type;
                Comm_create(comm: Comm, group: Group, newcomm: *mut Comm) => comm::comm_create;
                Comm_create_group(comm: Comm, group: Group, tag: c_int, newcomm: *mut Comm) => comm::comm_create_group;
                Cart_create(comm_old: Comm, ndims: c_int, dims: Ints, periods: Ints, reorder: c_int, comm_cart: *mut Comm) => comm::cart_create;
                Cart_sub(comm: Comm, remain_dims: Ints, newcomm: *mut Comm) => comm::cart_sub;
                Graph_create(comm_old: Comm, nnodes: c_int, index: Ints, edges: Ints, reorder: c_int, comm_graph: *mut Comm) => comm::graph_create;
                Dist_graph_create_adjacent(comm_old: Comm, indegree: c_int, sources: Ints, sourceweights: Ints, outdegree: c_int, destinations: Ints, destweights: Ints, info: Info, reorder: c_int, comm_dist_graph: *mut Comm) => comm::dist_graph_create_adjacent;
                Dist_graph_create(comm_old: Comm, n: c_int, sources: Ints, degrees: Ints, destinations: Ints, weights: Ints, info: Info, reorder: c_int, comm_dist_graph: *mut Comm) => comm::dist_graph_create;
                Intercomm_create(local_comm: Comm, local_leader: c_int, peer_comm: Comm, remote_leader: c_int, tag: c_int, newintercomm: *mut Comm) => comm::intercomm_create;
                Intercomm_merge(intercomm: Comm, high: c_int, newintracomm: *mut Comm) => comm::intercomm_merge;
                Comm_free(comm: *mut Comm) => comm::comm_free;
            }
            unreplayable {
                Win_create(base: BufMut, size: i64, disp_unit: c_int, info: Info, comm: Comm, win: *mut Win);
                Win_allocate(size: i64, disp_unit: c_int, info: Info, comm: Comm, baseptr: BufMut, win: *mut Win);
                Win_allocate_shared(size: i64, disp_unit: c_int, info: Info, comm: Comm, baseptr: BufMut, win: *mut Win);
                Win_create_dynamic(info: Info, comm: Comm, win: *mut Win);
                Win_fence(assert: c_int, win: Win);
                Win_free(win: *mut Win);
                Win_lock(lock_type: c_int, rank: c_int, assert: c_int, win: Win);
                Win_unlock(rank: c_int, win: Win);
                Win_lock_all(assert: c_int, win: Win);
                Win_unlock_all(win: Win);
                Win_flush(rank: c_int, win: Win);
                Win_flush_all(win: Win);
                Win_flush_local(rank: c_int, win: Win);
                Win_flush_local_all(win: Win);
                Win_sync(win: Win);
                Win_post(group: Group, assert: c_int, win: Win);
                Win_start(group: Group, assert: c_int, win: Win);
                Win_complete(win: Win);
                Win_wait(win: Win);
                Win_test(win: Win, flag: *mut c_int);
                Put(origin_addr: Buf, origin_count: c_int, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: c_int, target_datatype: Datatype, win: Win);
                Get(origin_addr: BufMut, origin_count: c_int, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: c_int, target_datatype: Datatype, win: Win);
                Accumulate(origin_addr: Buf, origin_count: c_int, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: c_int, target_datatype: Datatype, op: Op, win: Win);
                Rput(origin_addr: Buf, origin_count: c_int, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: c_int, target_datatype: Datatype, win: Win, request: *mut Request);
                Rget(origin_addr: BufMut, origin_count: c_int, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: c_int, target_datatype: Datatype, win: Win, request: *mut Request);
                Raccumulate(origin_addr: Buf, origin_count: c_int, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: c_int, target_datatype: Datatype, op: Op, win: Win, request: *mut Request);
                Rget_accumulate(origin_addr: Buf, origin_count: c_int, origin_datatype: Datatype, result_addr: BufMut, result_count: c_int, result_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: c_int, target_datatype: Datatype, op: Op, win: Win, request: *mut Request);
                Get_accumulate(origin_addr: Buf, origin_count: c_int, origin_datatype: Datatype, result_addr: BufMut, result_count: c_int, result_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: c_int, target_datatype: Datatype, op: Op, win: Win);
                Fetch_and_op(origin_addr: Buf, result_addr: BufMut, datatype: Datatype, target_rank: c_int, target_disp: i64, op: Op, win: Win);
                Compare_and_swap(origin_addr: Buf, compare_addr: Buf, result_addr: BufMut, datatype: Datatype, target_rank: c_int, target_disp: i64, win: Win);
                File_open(comm: Comm, filename: *const c_char, amode: c_int, info: Info, fh: *mut File);
                File_close(fh: *mut File);
                File_read(fh: File, buf: BufMut, count: c_int, datatype: Datatype, status: *mut Status);
                File_write(fh: File, buf: Buf, count: c_int, datatype: Datatype, status: *mut Status);
                File_read_at(fh: File, offset: i64, buf: BufMut, count: c_int, datatype: Datatype, status: *mut Status);
                File_write_at(fh: File, offset: i64, buf: Buf, count: c_int, datatype: Datatype, status: *mut Status);
                File_read_all(fh: File, buf: BufMut, count: c_int, datatype: Datatype, status: *mut Status);
                File_write_all(fh: File, buf: Buf, count: c_int, datatype: Datatype, status: *mut Status);
                File_read_at_all(fh: File, offset: i64, buf: BufMut, count: c_int, datatype: Datatype, status: *mut Status);
                File_write_at_all(fh: File, offset: i64, buf: Buf, count: c_int, datatype: Datatype, status: *mut Status);
                File_iread(fh: File, buf: BufMut, count: c_int, datatype: Datatype, request: *mut Request);
                File_iwrite(fh: File, buf: Buf, count: c_int, datatype: Datatype, request: *mut Request);
                File_iread_at(fh: File, offset: i64, buf: BufMut, count: c_int, datatype: Datatype, request: *mut Request);
                File_iwrite_at(fh: File, offset: i64, buf: Buf, count: c_int, datatype: Datatype, request: *mut Request);
                File_read_shared(fh: File, buf: BufMut, count: c_int, datatype: Datatype, status: *mut Status);
                File_write_shared(fh: File, buf: Buf, count: c_int, datatype: Datatype, status: *mut Status);
                File_read_ordered(fh: File, buf: BufMut, count: c_int, datatype: Datatype, status: *mut Status);
                File_write_ordered(fh: File, buf: Buf, count: c_int, datatype: Datatype, status: *mut Status);
                File_set_view(fh: File, disp: i64, etype: Datatype, filetype: Datatype, datarep: *const c_char, info: Info);
                File_set_size(fh: File, size: i64);
                File_preallocate(fh: File, size: i64);
                File_sync(fh: File);
                File_delete(filename: *const c_char, info: Info);
                Comm_spawn_multiple(count: c_int, array_of_commands: *mut *mut c_char, array_of_argv: *mut *mut *mut c_char, array_of_maxprocs: Ints, array_of_info: *const Info, root: c_int, comm: Comm, intercomm: *mut Comm, array_of_errcodes: *mut c_int);
                Comm_accept(port_name: *const c_char, info: Info, root: c_int, comm: Comm, newcomm: *mut Comm);
                Comm_connect(port_name: *const c_char, info: Info, root: c_int, comm: Comm, newcomm: *mut Comm);
                Comm_join(fd: c_int, intercomm: *mut Comm);
                Comm_spawn(command: *const c_char, argv: *mut *mut c_char, maxprocs: c_int, info: Info, root: c_int, comm: Comm, intercomm: *mut Comm, array_of_errcodes: *mut c_int);
            }
            // MPI-4's calls that MPICH 4 and Open MPI 5 declare (Open MPI 5's headers still say
            // `MPI_VERSION` 3): exported only by a build against such a library (build.rs sets
            // `cfg(mpi4)`), so that no wrapper of a function the library lacks exists. Persistent
            // collectives are made in every mode, like the point-to-point `_init` calls.
            mpi4_lifecycle {
                Barrier_init(comm: Comm, info: Info, request: *mut Request) => coll::barrier_init;
                Bcast_init(buffer: BufMut, count: c_int, datatype: Datatype, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::bcast_init;
                Reduce_init(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::reduce_init;
                Allreduce_init(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, comm: Comm, info: Info, request: *mut Request) => coll::allreduce_init;
                Gather_init(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::gather_init;
                Gatherv_init(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, displs: Ints, recvtype: Datatype, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::gatherv_init;
                Scatter_init(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::scatter_init;
                Scatterv_init(sendbuf: Buf, sendcounts: Ints, displs: Ints, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::scatterv_init;
                Allgather_init(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::allgather_init;
                Allgatherv_init(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, displs: Ints, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::allgatherv_init;
                Alltoall_init(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::alltoall_init;
                Alltoallv_init(sendbuf: Buf, sendcounts: Ints, sdispls: Ints, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, rdispls: Ints, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::alltoallv_init;
                Alltoallw_init(sendbuf: Buf, sendcounts: Ints, sdispls: Ints, sendtypes: Types, recvbuf: BufMut, recvcounts: Ints, rdispls: Ints, recvtypes: Types, comm: Comm, info: Info, request: *mut Request) => coll::alltoallw_init;
                Reduce_scatter_init(sendbuf: Buf, recvbuf: BufMut, recvcounts: Ints, datatype: Datatype, op: Op, comm: Comm, info: Info, request: *mut Request) => coll::reduce_scatter_init;
                Reduce_scatter_block_init(sendbuf: Buf, recvbuf: BufMut, recvcount: c_int, datatype: Datatype, op: Op, comm: Comm, info: Info, request: *mut Request) => coll::reduce_scatter_block_init;
                Scan_init(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, comm: Comm, info: Info, request: *mut Request) => coll::scan_init;
                Exscan_init(sendbuf: Buf, recvbuf: BufMut, count: c_int, datatype: Datatype, op: Op, comm: Comm, info: Info, request: *mut Request) => coll::exscan_init;
                Neighbor_allgather_init(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::neighbor_allgather_init;
                Neighbor_allgatherv_init(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, displs: Ints, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::neighbor_allgatherv_init;
                Neighbor_alltoall_init(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::neighbor_alltoall_init;
                Neighbor_alltoallv_init(sendbuf: Buf, sendcounts: Ints, sdispls: Ints, sendtype: Datatype, recvbuf: BufMut, recvcounts: Ints, rdispls: Ints, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::neighbor_alltoallv_init;
                Neighbor_alltoallw_init(sendbuf: Buf, sendcounts: Ints, sdispls: Aints, sendtypes: Types, recvbuf: BufMut, recvcounts: Ints, rdispls: Aints, recvtypes: Types, comm: Comm, info: Info, request: *mut Request) => coll::neighbor_alltoallw_init;
            }
            mpi4_wrapped {
                Isendrecv(sendbuf: Buf, sendcount: c_int, sendtype: Datatype, dest: c_int, sendtag: c_int, recvbuf: BufMut, recvcount: c_int, recvtype: Datatype, source: c_int, recvtag: c_int, comm: Comm, request: *mut Request) => recovery::isendrecv;
                Isendrecv_replace(buf: BufMut, count: c_int, datatype: Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: Comm, request: *mut Request) => recovery::isendrecv_replace;
                Comm_idup_with_info(comm: Comm, info: Info, newcomm: *mut Comm, request: *mut Request) => recovery::comm_idup_with_info;
                Comm_create_from_group(group: Group, stringtag: *const c_char, info: Info, errhandler: Errhandler, newcomm: *mut Comm) => comm::comm_create_from_group;
            }
            // Partitioned communication: the partitions of one message arrive separately, in an
            // order and at times no log of this design records.
            mpi4_unreplayable {
                Psend_init(buf: Buf, partitions: c_int, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, info: Info, request: *mut Request);
                Precv_init(buf: BufMut, partitions: c_int, count: i64, datatype: Datatype, source: c_int, tag: c_int, comm: Comm, info: Info, request: *mut Request);
                Pready(partition: c_int, request: Request);
                Pready_range(partition_low: c_int, partition_high: c_int, request: Request);
                Pready_list(length: c_int, array_of_partitions: Ints, request: Request);
                Parrived(request: Request, partition: c_int, flag: *mut c_int);
            }
            // The rest of MPI-4 (MPICH 4: `MPI_VERSION >= 4`, build.rs sets `cfg(mpi4_full)`;
            // Open MPI 5 lacks them): the large-count (`MPI_Count`) forms, and
            // `MPI_Intercomm_create_from_groups`.
            mpi4_full_lifecycle {
                // The large-count (`MPI_Count`) forms of the persistent requests (see `large`).
                Allgather_init_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::allgather_init_c;
                Allgatherv_init_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, displs: Aints, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::allgatherv_init_c;
                Allreduce_init_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, comm: Comm, info: Info, request: *mut Request) => coll::allreduce_init_c;
                Alltoall_init_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::alltoall_init_c;
                Alltoallv_init_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::alltoallv_init_c;
                Alltoallw_init_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtypes: Types, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtypes: Types, comm: Comm, info: Info, request: *mut Request) => coll::alltoallw_init_c;
                Bcast_init_c(buffer: BufMut, count: i64, datatype: Datatype, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::bcast_init_c;
                Bsend_init_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::bsend_init_c;
                Exscan_init_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, comm: Comm, info: Info, request: *mut Request) => coll::exscan_init_c;
                Gather_init_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::gather_init_c;
                Gatherv_init_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, displs: Aints, recvtype: Datatype, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::gatherv_init_c;
                Neighbor_allgather_init_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::neighbor_allgather_init_c;
                Neighbor_allgatherv_init_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, displs: Aints, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::neighbor_allgatherv_init_c;
                Neighbor_alltoall_init_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::neighbor_alltoall_init_c;
                Neighbor_alltoallv_init_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtype: Datatype, comm: Comm, info: Info, request: *mut Request) => coll::neighbor_alltoallv_init_c;
                Neighbor_alltoallw_init_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtypes: Types, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtypes: Types, comm: Comm, info: Info, request: *mut Request) => coll::neighbor_alltoallw_init_c;
                Recv_init_c(buf: BufMut, count: i64, datatype: Datatype, source: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::recv_init_c;
                Reduce_init_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::reduce_init_c;
                Reduce_scatter_block_init_c(sendbuf: Buf, recvbuf: BufMut, recvcount: i64, datatype: Datatype, op: Op, comm: Comm, info: Info, request: *mut Request) => coll::reduce_scatter_block_init_c;
                Reduce_scatter_init_c(sendbuf: Buf, recvbuf: BufMut, recvcounts: *const i64, datatype: Datatype, op: Op, comm: Comm, info: Info, request: *mut Request) => coll::reduce_scatter_init_c;
                Rsend_init_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::rsend_init_c;
                Scan_init_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, comm: Comm, info: Info, request: *mut Request) => coll::scan_init_c;
                Scatter_init_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::scatter_init_c;
                Scatterv_init_c(sendbuf: Buf, sendcounts: *const i64, displs: Aints, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, root: c_int, comm: Comm, info: Info, request: *mut Request) => coll::scatterv_init_c;
                Send_init_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::send_init_c;
                Ssend_init_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::ssend_init_c;
            }
            mpi4_full_wrapped {
                Intercomm_create_from_groups(local_group: Group, local_leader: c_int, remote_group: Group, remote_leader: c_int, stringtag: *const c_char, info: Info, errhandler: Errhandler, newintercomm: *mut Comm) => comm::intercomm_create_from_groups;
                // The large-count (`MPI_Count`) forms of every wrapped call: logged and replayed as
                // their int forms when their counts fit in an `int`, else passed through as
                // unreplayable (see `large`).
                Allgather_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm) => coll::allgather_c;
                Allgatherv_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, displs: Aints, recvtype: Datatype, comm: Comm) => coll::allgatherv_c;
                Allreduce_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, comm: Comm) => coll::allreduce_c;
                Alltoall_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm) => coll::alltoall_c;
                Alltoallv_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtype: Datatype, comm: Comm) => coll::alltoallv_c;
                Alltoallw_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtypes: Types, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtypes: Types, comm: Comm) => coll::alltoallw_c;
                Bcast_c(buffer: BufMut, count: i64, datatype: Datatype, root: c_int, comm: Comm) => coll::bcast_c;
                Bsend_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm) => p2p::bsend_c;
                Exscan_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, comm: Comm) => coll::exscan_c;
                Gather_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, root: c_int, comm: Comm) => coll::gather_c;
                Gatherv_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, displs: Aints, recvtype: Datatype, root: c_int, comm: Comm) => coll::gatherv_c;
                Iallgather_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm, request: *mut Request) => coll::iallgather_c;
                Iallgatherv_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, displs: Aints, recvtype: Datatype, comm: Comm, request: *mut Request) => coll::iallgatherv_c;
                Iallreduce_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, comm: Comm, request: *mut Request) => coll::iallreduce_c;
                Ialltoall_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm, request: *mut Request) => coll::ialltoall_c;
                Ialltoallv_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtype: Datatype, comm: Comm, request: *mut Request) => coll::ialltoallv_c;
                Ialltoallw_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtypes: Types, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtypes: Types, comm: Comm, request: *mut Request) => coll::ialltoallw_c;
                Ibcast_c(buffer: BufMut, count: i64, datatype: Datatype, root: c_int, comm: Comm, request: *mut Request) => coll::ibcast_c;
                Ibsend_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::ibsend_c;
                Iexscan_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, comm: Comm, request: *mut Request) => coll::iexscan_c;
                Igather_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, root: c_int, comm: Comm, request: *mut Request) => coll::igather_c;
                Igatherv_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, displs: Aints, recvtype: Datatype, root: c_int, comm: Comm, request: *mut Request) => coll::igatherv_c;
                Imrecv_c(buf: BufMut, count: i64, datatype: Datatype, message: *mut Message, request: *mut Request) => p2p::imrecv_c;
                Ineighbor_allgather_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm, request: *mut Request) => coll::ineighbor_allgather_c;
                Ineighbor_allgatherv_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, displs: Aints, recvtype: Datatype, comm: Comm, request: *mut Request) => coll::ineighbor_allgatherv_c;
                Ineighbor_alltoall_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm, request: *mut Request) => coll::ineighbor_alltoall_c;
                Ineighbor_alltoallv_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtype: Datatype, comm: Comm, request: *mut Request) => coll::ineighbor_alltoallv_c;
                Ineighbor_alltoallw_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtypes: Types, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtypes: Types, comm: Comm, request: *mut Request) => coll::ineighbor_alltoallw_c;
                Irecv_c(buf: BufMut, count: i64, datatype: Datatype, source: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::irecv_c;
                Ireduce_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, root: c_int, comm: Comm, request: *mut Request) => coll::ireduce_c;
                Ireduce_scatter_block_c(sendbuf: Buf, recvbuf: BufMut, recvcount: i64, datatype: Datatype, op: Op, comm: Comm, request: *mut Request) => coll::ireduce_scatter_block_c;
                Ireduce_scatter_c(sendbuf: Buf, recvbuf: BufMut, recvcounts: *const i64, datatype: Datatype, op: Op, comm: Comm, request: *mut Request) => coll::ireduce_scatter_c;
                Irsend_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::irsend_c;
                Iscan_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, comm: Comm, request: *mut Request) => coll::iscan_c;
                Iscatter_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, root: c_int, comm: Comm, request: *mut Request) => coll::iscatter_c;
                Iscatterv_c(sendbuf: Buf, sendcounts: *const i64, displs: Aints, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, root: c_int, comm: Comm, request: *mut Request) => coll::iscatterv_c;
                Isend_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::isend_c;
                Isendrecv_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, dest: c_int, sendtag: c_int, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, source: c_int, recvtag: c_int, comm: Comm, request: *mut Request) => mpi4::isendrecv_c;
                Isendrecv_replace_c(buf: BufMut, count: i64, datatype: Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: Comm, request: *mut Request) => mpi4::isendrecv_replace_c;
                Issend_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) => p2p::issend_c;
                Mrecv_c(buf: BufMut, count: i64, datatype: Datatype, message: *mut Message, status: *mut Status) => p2p::mrecv_c;
                Neighbor_allgather_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm) => coll::neighbor_allgather_c;
                Neighbor_allgatherv_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, displs: Aints, recvtype: Datatype, comm: Comm) => coll::neighbor_allgatherv_c;
                Neighbor_alltoall_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, comm: Comm) => coll::neighbor_alltoall_c;
                Neighbor_alltoallv_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtype: Datatype, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtype: Datatype, comm: Comm) => coll::neighbor_alltoallv_c;
                Neighbor_alltoallw_c(sendbuf: Buf, sendcounts: *const i64, sdispls: Aints, sendtypes: Types, recvbuf: BufMut, recvcounts: *const i64, rdispls: Aints, recvtypes: Types, comm: Comm) => coll::neighbor_alltoallw_c;
                Recv_c(buf: BufMut, count: i64, datatype: Datatype, source: c_int, tag: c_int, comm: Comm, status: *mut Status) => p2p::recv_c;
                Reduce_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, root: c_int, comm: Comm) => coll::reduce_c;
                Reduce_scatter_block_c(sendbuf: Buf, recvbuf: BufMut, recvcount: i64, datatype: Datatype, op: Op, comm: Comm) => coll::reduce_scatter_block_c;
                Reduce_scatter_c(sendbuf: Buf, recvbuf: BufMut, recvcounts: *const i64, datatype: Datatype, op: Op, comm: Comm) => coll::reduce_scatter_c;
                Rsend_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm) => p2p::rsend_c;
                Scan_c(sendbuf: Buf, recvbuf: BufMut, count: i64, datatype: Datatype, op: Op, comm: Comm) => coll::scan_c;
                Scatter_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, root: c_int, comm: Comm) => coll::scatter_c;
                Scatterv_c(sendbuf: Buf, sendcounts: *const i64, displs: Aints, sendtype: Datatype, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, root: c_int, comm: Comm) => coll::scatterv_c;
                Send_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm) => p2p::send_c;
                Sendrecv_c(sendbuf: Buf, sendcount: i64, sendtype: Datatype, dest: c_int, sendtag: c_int, recvbuf: BufMut, recvcount: i64, recvtype: Datatype, source: c_int, recvtag: c_int, comm: Comm, status: *mut Status) => p2p::sendrecv_c;
                Sendrecv_replace_c(buf: BufMut, count: i64, datatype: Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: Comm, status: *mut Status) => p2p::sendrecv_replace_c;
                Ssend_c(buf: Buf, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm) => p2p::ssend_c;
            }
            // The large-count forms of the one-sided and MPI-IO calls.
            mpi4_full_unreplayable {
                // The large-count forms of the one-sided calls and windows.
                Accumulate_c(origin_addr: Buf, origin_count: i64, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: i64, target_datatype: Datatype, op: Op, win: Win);
                Get_accumulate_c(origin_addr: Buf, origin_count: i64, origin_datatype: Datatype, result_addr: BufMut, result_count: i64, result_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: i64, target_datatype: Datatype, op: Op, win: Win);
                Get_c(origin_addr: BufMut, origin_count: i64, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: i64, target_datatype: Datatype, win: Win);
                Put_c(origin_addr: Buf, origin_count: i64, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: i64, target_datatype: Datatype, win: Win);
                Raccumulate_c(origin_addr: Buf, origin_count: i64, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: i64, target_datatype: Datatype, op: Op, win: Win, request: *mut Request);
                Rget_accumulate_c(origin_addr: Buf, origin_count: i64, origin_datatype: Datatype, result_addr: BufMut, result_count: i64, result_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: i64, target_datatype: Datatype, op: Op, win: Win, request: *mut Request);
                Rget_c(origin_addr: BufMut, origin_count: i64, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: i64, target_datatype: Datatype, win: Win, request: *mut Request);
                Rput_c(origin_addr: Buf, origin_count: i64, origin_datatype: Datatype, target_rank: c_int, target_disp: i64, target_count: i64, target_datatype: Datatype, win: Win, request: *mut Request);
                Win_allocate_c(size: i64, disp_unit: i64, info: Info, comm: Comm, baseptr: BufMut, win: *mut Win);
                Win_allocate_shared_c(size: i64, disp_unit: i64, info: Info, comm: Comm, baseptr: BufMut, win: *mut Win);
                Win_create_c(base: BufMut, size: i64, disp_unit: i64, info: Info, comm: Comm, win: *mut Win);
                // The large-count forms of the MPI-IO reads and writes above (mpi4py 4 calls
                // these).
                File_read_c(fh: File, buf: BufMut, count: i64, datatype: Datatype, status: *mut Status);
                File_write_c(fh: File, buf: Buf, count: i64, datatype: Datatype, status: *mut Status);
                File_read_at_c(fh: File, offset: i64, buf: BufMut, count: i64, datatype: Datatype, status: *mut Status);
                File_write_at_c(fh: File, offset: i64, buf: Buf, count: i64, datatype: Datatype, status: *mut Status);
                File_read_all_c(fh: File, buf: BufMut, count: i64, datatype: Datatype, status: *mut Status);
                File_write_all_c(fh: File, buf: Buf, count: i64, datatype: Datatype, status: *mut Status);
                File_read_at_all_c(fh: File, offset: i64, buf: BufMut, count: i64, datatype: Datatype, status: *mut Status);
                File_write_at_all_c(fh: File, offset: i64, buf: Buf, count: i64, datatype: Datatype, status: *mut Status);
                File_iread_c(fh: File, buf: BufMut, count: i64, datatype: Datatype, request: *mut Request);
                File_iwrite_c(fh: File, buf: Buf, count: i64, datatype: Datatype, request: *mut Request);
                File_iread_at_c(fh: File, offset: i64, buf: BufMut, count: i64, datatype: Datatype, request: *mut Request);
                File_iwrite_at_c(fh: File, offset: i64, buf: Buf, count: i64, datatype: Datatype, request: *mut Request);
                File_read_shared_c(fh: File, buf: BufMut, count: i64, datatype: Datatype, status: *mut Status);
                File_write_shared_c(fh: File, buf: Buf, count: i64, datatype: Datatype, status: *mut Status);
                File_read_ordered_c(fh: File, buf: BufMut, count: i64, datatype: Datatype, status: *mut Status);
                File_write_ordered_c(fh: File, buf: Buf, count: i64, datatype: Datatype, status: *mut Status);
            }
            forwarded {
                Comm_rank(comm: Comm, rank: *mut c_int);
                Comm_size(comm: Comm, size: *mut c_int);
                Comm_test_inter(comm: Comm, flag: *mut c_int);
                Comm_group(comm: Comm, group: *mut Group);
                Comm_disconnect(comm: *mut Comm);
            }

            called {
                Comm_remote_size(comm: Comm, size: *mut c_int);
                Comm_remote_group(comm: Comm, group: *mut Group);
                Group_size(group: Group, size: *mut c_int);
                Group_translate_ranks(group1: Group, n: c_int, ranks1: Ints, group2: Group, ranks2: *mut c_int);
                Group_free(group: *mut Group);
                Topo_test(comm: Comm, status: *mut c_int);
                Cartdim_get(comm: Comm, ndims: *mut c_int);
                Cart_get(comm: Comm, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int);
                Graph_neighbors_count(comm: Comm, rank: c_int, nneighbors: *mut c_int);
                Graph_neighbors(comm: Comm, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int);
                Cart_shift(comm: Comm, direction: c_int, disp: c_int, rank_source: *mut c_int, rank_dest: *mut c_int);
                Dist_graph_neighbors_count(comm: Comm, indegree: *mut c_int, outdegree: *mut c_int, weighted: *mut c_int);
                Dist_graph_neighbors(comm: Comm, maxindegree: c_int, sources: *mut c_int, sourceweights: *mut c_int, maxoutdegree: c_int, destinations: *mut c_int, destweights: *mut c_int);
                Graphdims_get(comm: Comm, nnodes: *mut c_int, nedges: *mut c_int);
                Graph_get(comm: Comm, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int);
                Comm_call_errhandler(comm: Comm, errorcode: c_int);
                Win_set_errhandler(win: Win, errhandler: Errhandler);
                Error_class(errorcode: c_int, errorclass: *mut c_int);
                Error_string(errorcode: c_int, string: *mut c_char, resultlen: *mut c_int);
                Abort(comm: Comm, errorcode: c_int);
                Add_error_class(errorclass: *mut c_int);
                Add_error_code(errorclass: c_int, errorcode: *mut c_int);
                Add_error_string(errorcode: c_int, string: *const c_char);
                Pack(inbuf: Buf, incount: c_int, datatype: Datatype, outbuf: BufMut, outsize: c_int, position: *mut c_int, comm: Comm);
                Unpack(inbuf: Buf, insize: c_int, position: *mut c_int, outbuf: BufMut, outcount: c_int, datatype: Datatype, comm: Comm);
                Pack_size(incount: c_int, datatype: Datatype, comm: Comm, size: *mut c_int);
                Get_count(status: *const Status, datatype: Datatype, count: *mut c_int);
                Reduce_local(inbuf: Buf, inoutbuf: BufMut, count: c_int, datatype: Datatype, op: Op);
                Type_size(datatype: Datatype, size: *mut c_int);
                Type_get_extent(datatype: Datatype, lb: *mut i64, extent: *mut i64);
                Type_get_true_extent(datatype: Datatype, true_lb: *mut i64, true_extent: *mut i64);
                Type_get_envelope(datatype: Datatype, num_integers: *mut c_int, num_addresses: *mut c_int, num_datatypes: *mut c_int, combiner: *mut c_int);
                Test_cancelled(status: *const Status, flag: *mut c_int);
                Grequest_start(query_fn: QueryFn, free_fn: FreeFn, cancel_fn: CancelFn, extra_state: BufMut, request: *mut Request);
                Grequest_complete(request: Request);
                Info_create(info: *mut Info);
                Info_set(info: Info, key: *const c_char, value: *const c_char);
                Info_free(info: *mut Info);
                Initialized(flag: *mut c_int);
                Finalized(flag: *mut c_int);
                Query_thread(provided: *mut c_int);
            }
        }
    };
}
pub(crate) use mpi_table;
