//! Point-to-point calls: sends are logged as events and dropped when re-executed; receives and
//! probes log their status and data and are served from the log when re-executed.

use crate::abi::{self, Comm, Datatype, Request, Status};
use crate::engine::{self, Delivery, Route, Tracked};
use crate::exports::{real, Call};
use crate::record::{Header, Piece, Writer};
use crate::stats;
use std::ffi::{c_int, c_void};

/// A blocking send of any mode.
unsafe fn send_mode(
    call: Call,
    real: impl FnOnce() -> c_int,
    count: c_int,
    datatype: Datatype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
) -> c_int {
    let header = Header::data(call, dest, tag, count.into(), datatype, comm);
    match engine::route(call) {
        Route::Direct => real(),
        Route::Record(_guard) => {
            let rc = real();
            if rc == abi::SUCCESS {
                // SAFETY: no data pieces.
                unsafe { engine::log(Writer::new(header)) };
            }
            rc
        }
        Route::Replay(_guard, reader) => match engine::expect(&reader, &header, comm) {
            Ok(()) => {
                stats::dropped();
                abi::SUCCESS
            }
            Err(code) => code,
        },
    }
}

macro_rules! blocking_sends {
    ($($fn:ident => $call:ident;)*) => {$(
        /// The wrapper of the MPI send of this name.
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn(buf: *const c_void, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm) -> c_int {
            // SAFETY: forwarded.
            unsafe { send_mode(Call::$call, || real::$call(buf, count, datatype, dest, tag, comm), count, datatype, dest, tag, comm) }
        }
    )*};
}

blocking_sends! {
    send => Send;
    ssend => Ssend;
    bsend => Bsend;
    rsend => Rsend;
}

/// A nonblocking send of any mode: the post is logged with its number; re-executed, it gets a
/// virtual request.
unsafe fn isend_mode(
    call: Call,
    header: Header,
    comm: Comm,
    real: impl FnOnce(*mut Request) -> c_int,
    request: *mut Request,
) -> c_int {
    match engine::route(call) {
        Route::Direct => real(request),
        Route::Record(_guard) => {
            let rc = real(request);
            if rc == abi::SUCCESS {
                let seq = engine::next_seq();
                // SAFETY: MPI wrote the request.
                engine::track(
                    unsafe { *request },
                    Tracked {
                        seq,
                        delivery: Delivery::Nothing,
                    },
                );
                let mut w = Writer::new(header);
                w.u64(seq);
                // SAFETY: no data pieces.
                unsafe { engine::log(w) };
            }
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            let Ok(seq) = reader.u64() else {
                return engine::corrupt(call, comm);
            };
            stats::dropped();
            // SAFETY: `request` is the application's out-parameter.
            unsafe { engine::virtual_request(seq, Delivery::Nothing, request) }
        }
    }
}

macro_rules! nonblocking_sends {
    ($($fn:ident => $call:ident;)*) => {$(
        /// The wrapper of the MPI send of this name.
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn(buf: *const c_void, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm, request: *mut Request) -> c_int {
            let header = Header::data(Call::$call, dest, tag, count.into(), datatype, comm);
            // SAFETY: forwarded.
            unsafe { isend_mode(Call::$call, header, comm, |r| real::$call(buf, count, datatype, dest, tag, comm, r), request) }
        }
    )*};
}

nonblocking_sends! {
    isend => Isend;
    issend => Issend;
    ibsend => Ibsend;
    irsend => Irsend;
}

/// `MPI_Recv`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn recv(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    source: c_int,
    tag: c_int,
    comm: Comm,
    status: *mut Status,
) -> c_int {
    let header = Header::data(Call::Recv, source, tag, count.into(), datatype, comm);
    let dest = Piece {
        buf,
        count,
        datatype,
        comm,
    };
    match engine::route(Call::Recv) {
        // SAFETY: forwarded.
        Route::Direct => unsafe { real::Recv(buf, count, datatype, source, tag, comm, status) },
        Route::Record(_guard) => {
            let mut st = Status::zeroed();
            // SAFETY: forwarded, with our own status.
            let rc = unsafe { real::Recv(buf, count, datatype, source, tag, comm, &mut st) };
            if rc == abi::SUCCESS {
                let n = engine::received_count(&st, &dest);
                let mut w = Writer::new(header);
                w.status(&st).int(n).piece(Piece { count: n, ..dest });
                // SAFETY: the receive completed into `buf`.
                unsafe { engine::log(w) };
            }
            // SAFETY: the application's status argument.
            unsafe { st.store(status) };
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            let served = (|| {
                let st = reader.status()?;
                let n = reader.int()?;
                // SAFETY: the application's receive buffer, `count >= n` elements.
                unsafe { reader.unpack_into(buf, n, datatype, comm)? };
                Ok::<_, crate::record::Corrupt>(st)
            })();
            match served {
                Ok(st) => {
                    // SAFETY: the application's status argument.
                    unsafe { st.store(status) };
                    abi::SUCCESS
                }
                Err(_) => engine::corrupt(Call::Recv, comm),
            }
        }
    }
}

/// `MPI_Irecv`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    source: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let header = Header::data(Call::Irecv, source, tag, count.into(), datatype, comm);
    let delivery = Delivery::Receive {
        dest: Piece {
            buf,
            count,
            datatype,
            comm,
        },
        source,
        tag,
    };
    match engine::route(Call::Irecv) {
        // SAFETY: forwarded.
        Route::Direct => unsafe { real::Irecv(buf, count, datatype, source, tag, comm, request) },
        Route::Record(_guard) => {
            // SAFETY: forwarded.
            let rc = unsafe { real::Irecv(buf, count, datatype, source, tag, comm, request) };
            if rc == abi::SUCCESS {
                let seq = engine::next_seq();
                // SAFETY: MPI wrote the request.
                engine::track(unsafe { *request }, Tracked { seq, delivery });
                let mut w = Writer::new(header);
                w.u64(seq);
                // SAFETY: no data pieces.
                unsafe { engine::log(w) };
            }
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            let Ok(seq) = reader.u64() else {
                return engine::corrupt(Call::Irecv, comm);
            };
            // SAFETY: `request` is the application's out-parameter.
            unsafe { engine::virtual_request(seq, delivery, request) }
        }
    }
}

/// `MPI_Sendrecv`: the send half is an event, the receive half logs its data.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    source: c_int,
    recvtag: c_int,
    comm: Comm,
    status: *mut Status,
) -> c_int {
    let header = Header::data(
        Call::Sendrecv,
        dest,
        sendtag,
        sendcount.into(),
        sendtype,
        comm,
    );
    let check = [
        source,
        recvtag,
        recvcount,
        crate::record::type_size(recvtype) as c_int,
    ];
    // SAFETY: forwarded (the status pointer is chosen by the caller of `run`).
    let run = |st: *mut Status| unsafe {
        real::Sendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm, st,
        )
    };
    // SAFETY: forwarded.
    unsafe {
        receive_into(
            Call::Sendrecv,
            header,
            &check,
            Piece {
                buf: recvbuf,
                count: recvcount,
                datatype: recvtype,
                comm,
            },
            status,
            run,
        )
    }
}

/// `MPI_Sendrecv_replace`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: Comm,
    status: *mut Status,
) -> c_int {
    let header = Header::data(
        Call::Sendrecv_replace,
        dest,
        sendtag,
        count.into(),
        datatype,
        comm,
    );
    let check = [source, recvtag];
    // SAFETY: forwarded.
    let run = |st: *mut Status| unsafe {
        real::Sendrecv_replace(
            buf, count, datatype, dest, sendtag, source, recvtag, comm, st,
        )
    };
    // SAFETY: forwarded.
    unsafe {
        receive_into(
            Call::Sendrecv_replace,
            header,
            &check,
            Piece {
                buf,
                count,
                datatype,
                comm,
            },
            status,
            run,
        )
    }
}

/// A blocking call that receives into `dest`: recorded with its extra matching arguments
/// `check`, its status and data; replayed from them.
unsafe fn receive_into(
    call: Call,
    header: Header,
    check: &[c_int],
    dest: Piece,
    status: *mut Status,
    run: impl FnOnce(*mut Status) -> c_int,
) -> c_int {
    let comm = dest.comm;
    match engine::route(call) {
        Route::Direct => run(status),
        Route::Record(_guard) => {
            let mut st = Status::zeroed();
            let rc = run(&mut st);
            if rc == abi::SUCCESS {
                let n = engine::received_count(&st, &dest);
                let mut w = Writer::new(header);
                for &c in check {
                    w.int(c);
                }
                w.status(&st).int(n).piece(Piece { count: n, ..dest });
                // SAFETY: the receive completed into `dest`.
                unsafe { engine::log(w) };
            }
            // SAFETY: the application's status argument.
            unsafe { st.store(status) };
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            let mut logged = Vec::with_capacity(check.len());
            for _ in check {
                match reader.int() {
                    Ok(c) => logged.push(c),
                    Err(_) => return engine::corrupt(call, comm),
                }
            }
            if logged != check {
                return engine::mismatch(&format!("CD replay mismatch: the re-executed {} receives with (source/tag/count/size) {check:?}, the log holds {logged:?}", call.name()), comm);
            }
            let served = (|| {
                let st = reader.status()?;
                let n = reader.int()?;
                // SAFETY: the application's receive buffer.
                unsafe { reader.unpack_into(dest.buf.cast_mut(), n, dest.datatype, comm)? };
                Ok::<_, crate::record::Corrupt>(st)
            })();
            match served {
                Ok(st) => {
                    stats::dropped();
                    // SAFETY: the application's status argument.
                    unsafe { st.store(status) };
                    abi::SUCCESS
                }
                Err(_) => engine::corrupt(call, comm),
            }
        }
    }
}

/// `MPI_Probe`: the status found is logged (the matched source and tag are determinants).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn probe(source: c_int, tag: c_int, comm: Comm, status: *mut Status) -> c_int {
    let header = Header {
        peer: source,
        tag,
        ..Header::plain(Call::Probe, comm)
    };
    match engine::route(Call::Probe) {
        // SAFETY: forwarded.
        Route::Direct => unsafe { real::Probe(source, tag, comm, status) },
        Route::Record(_guard) => {
            let mut st = Status::zeroed();
            // SAFETY: forwarded.
            let rc = unsafe { real::Probe(source, tag, comm, &mut st) };
            if rc == abi::SUCCESS {
                let mut w = Writer::new(header);
                w.status(&st);
                // SAFETY: no pieces.
                unsafe { engine::log(w) };
            }
            // SAFETY: the application's status argument.
            unsafe { st.store(status) };
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            match reader.status() {
                Ok(st) => {
                    // SAFETY: the application's status argument.
                    unsafe { st.store(status) };
                    abi::SUCCESS
                }
                Err(_) => engine::corrupt(Call::Probe, comm),
            }
        }
    }
}

/// `MPI_Iprobe`: the flag and status are logged and replayed.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn iprobe(
    source: c_int,
    tag: c_int,
    comm: Comm,
    flag: *mut c_int,
    status: *mut Status,
) -> c_int {
    let header = Header {
        peer: source,
        tag,
        ..Header::plain(Call::Iprobe, comm)
    };
    match engine::route(Call::Iprobe) {
        // SAFETY: forwarded.
        Route::Direct => unsafe { real::Iprobe(source, tag, comm, flag, status) },
        Route::Record(_guard) => {
            let mut st = Status::zeroed();
            let mut f: c_int = 0;
            // SAFETY: forwarded.
            let rc = unsafe { real::Iprobe(source, tag, comm, &mut f, &mut st) };
            if rc == abi::SUCCESS {
                let mut w = Writer::new(header);
                w.int(f).status(&st);
                // SAFETY: no pieces.
                unsafe { engine::log(w) };
                // SAFETY: the application's out-parameters.
                unsafe {
                    *flag = f;
                    if f != 0 {
                        st.store(status);
                    }
                }
            }
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            match (reader.int(), reader.status()) {
                (Ok(f), Ok(st)) => {
                    // SAFETY: the application's out-parameters.
                    unsafe {
                        *flag = f;
                        if f != 0 {
                            st.store(status);
                        }
                    }
                    abi::SUCCESS
                }
                _ => engine::corrupt(Call::Iprobe, comm),
            }
        }
    }
}
