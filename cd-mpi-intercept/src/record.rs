//! Log records: what one MPI call leaves in the active CD's log, and reading it back.
//!
//! A record is a small fixed header naming the call and the arguments a re-executed call must
//! match (peer, tag, count, element size, communicator), then call-specific fields (statuses,
//! completed indices, handles), then the received data, each piece packed with `MPI_Pack`
//! from the application's buffer with the application's datatype, so derived datatypes cost
//! nothing special and delivery unpacks with the datatype the re-executed call passes.
//!
//! Layout (native byte order: logs never leave the process):
//! `[u32 meta_len][header][fields ...]` then per data piece `[u64 used][u64 reserved][bytes]`.
//! Records are written straight into the log's arena ([`cd_core::log_append_with`]); the
//! header and fields are assembled in a reused per-thread buffer.

use crate::abi::{self, Comm, Datatype, Status};
use crate::exports::{real, Call};
use cd_core::LogEntry;
use std::cell::Cell;
use std::ffi::{c_int, c_void};

/// The arguments a re-executed call must repeat exactly.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Header {
    pub call: Call,
    /// Destination, source or root as the application gave it (`MPI_ANY_SOURCE` stays so).
    pub peer: c_int,
    pub tag: c_int,
    pub count: i64,
    /// Bytes of one element of the application's datatype (0 where no data moves).
    pub elem: u64,
    pub comm: u64,
}

const HEADER_BYTES: usize = 4 + 2 + 2 + 4 + 4 + 8 + 8 + 8;

impl Header {
    /// A header for `call` with no peer, tag or data.
    pub fn plain(call: Call, comm: Comm) -> Header {
        Header {
            call,
            peer: 0,
            tag: 0,
            count: 0,
            elem: 0,
            comm: comm.bits(),
        }
    }

    /// A header describing `count` elements of `datatype`.
    pub fn data(
        call: Call,
        peer: c_int,
        tag: c_int,
        count: i64,
        datatype: Datatype,
        comm: Comm,
    ) -> Header {
        Header {
            call,
            peer,
            tag,
            count,
            elem: type_size(datatype),
            comm: comm.bits(),
        }
    }
}

impl std::fmt::Display for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}(peer {}, tag {}, {} x {} bytes, comm {:#x})",
            self.call.name(),
            peer_name(self.peer),
            tag_name(self.tag),
            self.count,
            self.elem,
            self.comm
        )
    }
}

fn peer_name(peer: c_int) -> String {
    match peer {
        p if p == abi::ANY_SOURCE => "MPI_ANY_SOURCE".into(),
        p if p == abi::PROC_NULL => "MPI_PROC_NULL".into(),
        p => p.to_string(),
    }
}

fn tag_name(tag: c_int) -> String {
    if tag == abi::ANY_TAG {
        "MPI_ANY_TAG".into()
    } else {
        tag.to_string()
    }
}

/// The size in bytes of one element of `datatype` (0 for a null or invalid one).
pub(crate) fn type_size(datatype: Datatype) -> u64 {
    let mut size: c_int = 0;
    // SAFETY: Type_size only reads the handle and writes `size`.
    let rc = unsafe { real::Type_size(datatype, &mut size) };
    if rc == abi::SUCCESS {
        size.max(0) as u64
    } else {
        0
    }
}

/// A piece of application memory to log (`count` elements of `datatype` at `buf`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    pub buf: *const c_void,
    pub count: c_int,
    pub datatype: Datatype,
    pub comm: Comm,
}

thread_local! {
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A record being built.
pub(crate) struct Writer {
    meta: Vec<u8>,
    pieces: Vec<Piece>,
}

impl Writer {
    /// Starts a record with its header.
    pub fn new(header: Header) -> Writer {
        let mut meta = SCRATCH.with(|s| s.take());
        meta.clear();
        meta.extend_from_slice(&0u32.to_ne_bytes());
        meta.extend_from_slice(&(header.call as u16).to_ne_bytes());
        meta.extend_from_slice(&0u16.to_ne_bytes());
        meta.extend_from_slice(&header.peer.to_ne_bytes());
        meta.extend_from_slice(&header.tag.to_ne_bytes());
        meta.extend_from_slice(&header.count.to_ne_bytes());
        meta.extend_from_slice(&header.elem.to_ne_bytes());
        meta.extend_from_slice(&header.comm.to_ne_bytes());
        Writer {
            meta,
            pieces: Vec::new(),
        }
    }

    /// Adds an integer field.
    pub fn int(&mut self, value: c_int) -> &mut Self {
        self.meta.extend_from_slice(&value.to_ne_bytes());
        self
    }

    /// Adds a 64-bit field.
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.meta.extend_from_slice(&value.to_ne_bytes());
        self
    }

    /// Adds a status.
    pub fn status(&mut self, status: &Status) -> &mut Self {
        self.meta.extend_from_slice(status.as_bytes());
        self
    }

    /// Adds a piece of application memory, packed when the record is appended.
    pub fn piece(&mut self, piece: Piece) -> &mut Self {
        self.pieces.push(piece);
        self
    }

    /// Appends the record to the active CD's log.
    ///
    /// # Safety
    /// Every piece must be readable: `count` elements of its datatype at `buf`.
    pub unsafe fn append(mut self) -> Result<(), cd_core::CdError> {
        let meta_len = self.meta.len() as u32;
        self.meta[..4].copy_from_slice(&meta_len.to_ne_bytes());
        let mut sizes = Vec::with_capacity(self.pieces.len());
        let mut total = self.meta.len();
        for piece in &self.pieces {
            let mut size: c_int = 0;
            // SAFETY: Pack_size reads only its arguments.
            let rc = unsafe { real::Pack_size(piece.count, piece.datatype, piece.comm, &mut size) };
            let size = if rc == abi::SUCCESS {
                size.max(0) as usize
            } else {
                0
            };
            sizes.push(size);
            total += 16 + size;
        }
        let meta = &self.meta;
        let pieces = &self.pieces;
        let result = cd_core::log_append_with(total, |dst| {
            dst[..meta.len()].copy_from_slice(meta);
            let mut at = meta.len();
            for (piece, &size) in pieces.iter().zip(&sizes) {
                let mut used: c_int = 0;
                if size > 0 {
                    // SAFETY: the piece is readable (the caller's contract) and `dst` has
                    // `size` bytes free after the two length words.
                    unsafe {
                        real::Pack(
                            piece.buf,
                            piece.count,
                            piece.datatype,
                            dst[at + 16..].as_mut_ptr().cast(),
                            size as c_int,
                            &mut used,
                            piece.comm,
                        )
                    };
                }
                dst[at..at + 8].copy_from_slice(&(used as u64).to_ne_bytes());
                dst[at + 8..at + 16].copy_from_slice(&(size as u64).to_ne_bytes());
                at += 16 + size;
            }
        });
        let meta = std::mem::take(&mut self.meta);
        SCRATCH.with(|s| s.set(meta));
        if result.is_ok() {
            crate::stats::logged(total);
        }
        result
    }
}

/// A record being read back during a replay.
pub(crate) struct Reader {
    entry: LogEntry,
    at: usize,
    data_at: usize,
    pub header: Header,
}

/// A record that cannot be read: the log does not hold what this layer wrote.
#[derive(Debug)]
pub(crate) struct Corrupt;

impl Reader {
    /// Opens a record.
    pub fn new(entry: LogEntry) -> Result<Reader, Corrupt> {
        let bytes = entry.bytes();
        if bytes.len() < HEADER_BYTES {
            return Err(Corrupt);
        }
        let meta_len = u32::from_ne_bytes(bytes[0..4].try_into().unwrap()) as usize;
        if meta_len < HEADER_BYTES || meta_len > bytes.len() {
            return Err(Corrupt);
        }
        let call =
            Call::from_code(u16::from_ne_bytes(bytes[4..6].try_into().unwrap())).ok_or(Corrupt)?;
        let header = Header {
            call,
            peer: c_int::from_ne_bytes(bytes[8..12].try_into().unwrap()),
            tag: c_int::from_ne_bytes(bytes[12..16].try_into().unwrap()),
            count: i64::from_ne_bytes(bytes[16..24].try_into().unwrap()),
            elem: u64::from_ne_bytes(bytes[24..32].try_into().unwrap()),
            comm: u64::from_ne_bytes(bytes[32..40].try_into().unwrap()),
        };
        Ok(Reader {
            entry,
            at: HEADER_BYTES,
            data_at: meta_len,
            header,
        })
    }

    fn take(&mut self, n: usize) -> Result<&[u8], Corrupt> {
        let bytes = self.entry.bytes();
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.data_at)
            .ok_or(Corrupt)?;
        let slice = &bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    /// Reads an integer field.
    pub fn int(&mut self) -> Result<c_int, Corrupt> {
        Ok(c_int::from_ne_bytes(self.take(4)?.try_into().unwrap()))
    }

    /// Reads a 64-bit field.
    pub fn u64(&mut self) -> Result<u64, Corrupt> {
        Ok(u64::from_ne_bytes(self.take(8)?.try_into().unwrap()))
    }

    /// Reads a status.
    pub fn status(&mut self) -> Result<Status, Corrupt> {
        Status::from_bytes(self.take(abi::STATUS_SIZE)?).ok_or(Corrupt)
    }

    /// The next data piece's packed bytes.
    pub fn piece(&mut self) -> Result<&[u8], Corrupt> {
        let bytes = self.entry.bytes();
        let at = self.data_at;
        if at + 16 > bytes.len() {
            return Err(Corrupt);
        }
        let used = u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
        let reserved = u64::from_ne_bytes(bytes[at + 8..at + 16].try_into().unwrap()) as usize;
        if used > reserved || at + 16 + reserved > bytes.len() {
            return Err(Corrupt);
        }
        self.data_at = at + 16 + reserved;
        Ok(&bytes[at + 16..at + 16 + used])
    }

    /// Unpacks the next data piece into application memory.
    ///
    /// # Safety
    /// `count` elements of `datatype` at `buf` must be writable.
    pub unsafe fn unpack_into(
        &mut self,
        buf: *mut c_void,
        count: c_int,
        datatype: Datatype,
        comm: Comm,
    ) -> Result<(), Corrupt> {
        let data = self.piece()?;
        if data.is_empty() {
            return Ok(());
        }
        let mut position: c_int = 0;
        // SAFETY: `data` is the packed form of `count` elements of this datatype (the record
        // matched the call); the caller vouched for the destination.
        let rc = unsafe {
            real::Unpack(
                data.as_ptr().cast(),
                data.len() as c_int,
                &mut position,
                buf,
                count,
                datatype,
                comm,
            )
        };
        if rc == abi::SUCCESS {
            Ok(())
        } else {
            Err(Corrupt)
        }
    }
}
