//! Log records: what one MPI call leaves in the active CD's log, and reading it back.
//!
//! A record is a small fixed header naming the call and the arguments a re-executed call must
//! match (peer, tag, count, element size, communicator), then call-specific fields (statuses,
//! completed indices, handles), then the received data, each piece packed with `MPI_Pack`
//! from the application's buffer with the application's datatype, so derived datatypes cost
//! nothing special and delivery unpacks with the datatype the re-executed call passes.
//! Predefined contiguous datatypes, whose packed form is their bytes, are copied with
//! `memcpy` both ways instead (see `types`).
//!
//! Layout (native byte order: logs never leave the process): the header ([`Stored`]: meta
//! length, call, peer, tag, count, element size, communicator), the call's fields, then per
//! data piece `[u64 used][u64 room][bytes]`,
//! the data of pieces of 512 bytes or more padded to start 32-byte aligned (the padding, at
//! most 31 bytes, in the top byte of `used`).
//! Records are written straight into the log's arena ([`cd_core::log_append_with`]): the
//! header from its typed fields, the call-specific fields from a small buffer on the stack (on
//! the heap only past 88 bytes, for completion calls over many requests), so a record costs no
//! allocation and no wide copy of bytes stored a moment before. The two records on the way
//! from a message's arrival to a rank's answer, a small receive's and a blocking send's, skip
//! even that buffer ([`append_received`], [`append_header`]): their fixed shape is written by
//! stores at fixed offsets, the same bytes.

use crate::abi::{self, Comm, Datatype, Status};
use crate::pmpi::{real, safe, Call};
use crate::{copy, types};
use cd_core::LogEntry;
use smallvec::SmallVec;
use std::borrow::Borrow;
use std::ffi::{c_int, c_void};

/// The arguments a re-executed call must repeat exactly.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub call: Call,
    /// Destination, source or root as the application gave it (`MPI_ANY_SOURCE` stays so).
    pub peer: c_int,
    pub tag: c_int,
    pub count: i64,
    /// Bytes of one element of the application's datatype (0 where no data moves).
    pub elem: u64,
    pub comm: u64,
    /// The datatype `elem` was taken from, with what [`types::kind`] said of it: passed down
    /// with the header so that the call's data (the received count, the piece's size and
    /// copy) does not look the same datatype up again. Neither logged nor compared.
    pub typed: Option<(Datatype, types::DatatypeInfo)>,
}

impl PartialEq for Header {
    fn eq(&self, other: &Header) -> bool {
        (
            self.call, self.peer, self.tag, self.count, self.elem, self.comm,
        ) == (
            other.call,
            other.peer,
            other.tag,
            other.count,
            other.elem,
            other.comm,
        )
    }
}

impl Eq for Header {}

/// A record's header as the log holds it: the one definition of its layout, written by
/// [`write_header`] and read by [`Reader::new`].
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Stored {
    /// Bytes of the header and the call-specific fields, before the data pieces.
    meta_len: u32,
    /// [`Call`] as its table index.
    call: u16,
    /// Zero.
    reserved: u16,
    peer: c_int,
    tag: c_int,
    count: i64,
    elem: u64,
    comm: u64,
}

/// The bytes of a record's header.
const HEADER_BYTES: usize = std::mem::size_of::<Stored>();

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
            typed: None,
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
        let kind = types::kind(datatype);
        Header {
            call,
            peer,
            tag,
            count,
            elem: kind.size,
            comm: comm.bits(),
            typed: Some((datatype, kind)),
        }
    }

    /// What is known of `datatype`: from the header when it was built from that datatype,
    /// else looked up.
    #[inline(always)]
    pub fn kind_of(&self, datatype: Datatype) -> types::DatatypeInfo {
        match self.typed {
            Some((d, kind)) if d == datatype => kind,
            _ => types::kind(datatype),
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

/// A piece of application memory to log (`count` elements of `datatype` at `buf`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    pub buf: *const c_void,
    pub count: c_int,
    pub datatype: Datatype,
    pub comm: Comm,
}

/// Pieces of at least this many bytes start 32-byte aligned in the log: `memcpy` into a
/// misaligned destination runs at 0.6x (4 KiB) to 0.75x (64 KiB) of an aligned one here.
const ALIGN_FROM: usize = 512;
/// The alignment of large pieces' data.
const DATA_ALIGN: usize = 32;
/// Padding is at most this.
const MAX_PAD: usize = DATA_ALIGN - 1;
/// The padding before a piece's data is kept in the top byte of its `used` word.
const PAD_SHIFT: u32 = 56;

/// A piece with the room its packed form takes, and how it is written.
#[derive(Clone, Copy, Debug)]
struct Planned {
    piece: Piece,
    /// Bytes of the packed form (at most).
    size: usize,
    /// A raw datatype ([`types`]): the bytes are copied as they are.
    raw: bool,
    /// The packed bytes to keep, when fewer than the elements' (a message ending in a
    /// partial element: only the bytes received).
    limit: Option<usize>,
}

impl Planned {
    // Always inlined: returned through memory, the struct was read back right after the call
    // and stalled on the store (perf: a fifth of the wrapper's samples on that load).
    #[inline(always)]
    fn new(piece: Piece, kind: types::DatatypeInfo) -> Planned {
        if kind.raw {
            if let Some(size) = types::raw_bytes(piece.count, kind.size) {
                return Planned {
                    piece,
                    size,
                    raw: true,
                    limit: None,
                };
            }
        }
        let size = safe::pack_size(piece.count, piece.datatype, piece.comm).unwrap_or(0);
        Planned {
            piece,
            size: size.max(0) as usize,
            raw: false,
            limit: None,
        }
    }

    /// Bytes after the two words: the data and room to align it.
    fn room(&self) -> usize {
        if self.size >= ALIGN_FROM {
            self.size + MAX_PAD
        } else {
            self.size
        }
    }

    /// Writes `[used | pad << 56][room][pad][bytes]` into `dst` (`16 + room` bytes).
    ///
    /// # Safety
    /// The piece must be readable: `count` elements of its datatype at `buf`.
    unsafe fn write(&self, dst: &mut [u8]) {
        let (words, data) = dst.split_at_mut(16);
        let pad = if self.size >= ALIGN_FROM {
            data.as_ptr().align_offset(DATA_ALIGN).min(MAX_PAD)
        } else {
            0
        };
        let data = &mut data[pad..];
        let used = if self.size == 0 {
            0
        } else if self.raw {
            let size = self.limit.map_or(self.size, |limit| limit.min(self.size));
            // SAFETY: a raw datatype's `count` elements are `self.size` contiguous bytes at
            // `buf`, readable by the caller's contract, and `size` is no more.
            let src = unsafe { std::slice::from_raw_parts(self.piece.buf.cast::<u8>(), size) };
            copy::into_log(&mut data[..size], src);
            size
        } else {
            let mut used: c_int = 0;
            // SAFETY: the piece is readable (the caller's contract) and `data` has `size`
            // bytes, what Pack_size asked for.
            unsafe {
                real::Pack(
                    self.piece.buf,
                    self.piece.count,
                    self.piece.datatype,
                    data.as_mut_ptr().cast(),
                    self.size as c_int,
                    &mut used,
                    self.piece.comm,
                )
            };
            (used.max(0) as usize).min(self.limit.unwrap_or(usize::MAX))
        };
        let used = used.min(self.size) as u64 | ((pad as u64) << PAD_SHIFT);
        words[..8].copy_from_slice(&used.to_ne_bytes());
        words[8..].copy_from_slice(&(self.room() as u64).to_ne_bytes());
    }
}

/// The pieces of a call's data: on the stack for up to two (every call but the v/w
/// collectives).
pub(crate) type Pieces = SmallVec<[Piece; 2]>;

/// Fields of a record up to this size are built on the stack.
const INLINE_FIELDS: usize = 88;

/// A record's fields (after the header): on the stack up to [`INLINE_FIELDS`] bytes, then on
/// the heap (completion calls over many requests).
struct Fields {
    len: usize,
    inline: [u8; INLINE_FIELDS],
    heap: Vec<u8>,
}

impl Fields {
    #[inline(always)]
    fn push(&mut self, bytes: &[u8]) {
        let end = self.len + bytes.len();
        if end <= INLINE_FIELDS {
            self.inline[self.len..end].copy_from_slice(bytes);
        } else {
            self.spill(bytes);
        }
        self.len = end;
    }

    #[cold]
    fn spill(&mut self, bytes: &[u8]) {
        if self.heap.is_empty() {
            self.heap.extend_from_slice(&self.inline[..self.len]);
        }
        self.heap.extend_from_slice(bytes);
    }

    /// Copies the fields into `dst` (of their length). The inline ones go 4 bytes at a time:
    /// they were stored a moment ago as 4-, 8- and 16-byte pieces, and a wider load spanning
    /// two of those stores would wait for both to reach the cache (a store-forwarding stall,
    /// which perf showed as most of the append's time when the record was copied in 16-byte
    /// loads).
    #[inline(always)]
    fn write(&self, dst: &mut [u8]) {
        if self.len > INLINE_FIELDS {
            dst.copy_from_slice(&self.heap);
            return;
        }
        let (dst, src) = (&mut dst[..self.len], &self.inline[..self.len]);
        let words = self.len / 4 * 4;
        let (out, from) = (dst.as_mut_ptr(), src.as_ptr());
        for i in (0..words).step_by(4) {
            // SAFETY: `i + 4 <= words <= len`, inside both slices of `len` bytes. The volatile
            // read keeps the compiler from merging the loop into one `memcpy` (wide loads).
            unsafe {
                let word = std::ptr::read_volatile(from.add(i).cast::<[u8; 4]>());
                out.add(i).cast::<[u8; 4]>().write_unaligned(word);
            }
        }
        if words < self.len {
            // Fields are whole ints, so this does not happen; kept for any length.
            dst[words..].copy_from_slice(&src[words..]);
        }
    }
}

/// A record being built, on the stack for the common shapes (no heap allocation): the header
/// is kept as it is (or borrowed, `H = &Header`) and written straight into the log.
///
/// The hot wrappers borrow the header they built: moved into the writer, it was copied in
/// 16-byte loads from the caller's narrower stores of its fields a moment before, and perf
/// put a third of the `stages` bench's wrapper samples on that copy (a store-forwarding
/// stall).
pub(crate) struct Writer<H: Borrow<Header> = Header> {
    header: H,
    fields: Fields,
    pieces: SmallVec<[Planned; 2]>,
}

impl<H: Borrow<Header>> Writer<H> {
    /// Starts a record with its header.
    #[inline(always)]
    pub fn new(header: H) -> Writer<H> {
        Writer {
            header,
            fields: Fields {
                len: 0,
                inline: [0; INLINE_FIELDS],
                heap: Vec::new(),
            },
            pieces: SmallVec::new(),
        }
    }

    /// Adds an integer field.
    #[inline]
    pub fn int(&mut self, value: c_int) -> &mut Self {
        self.fields.push(&value.to_ne_bytes());
        self
    }

    /// Adds a 64-bit field.
    #[inline]
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.fields.push(&value.to_ne_bytes());
        self
    }

    /// Adds a status.
    #[inline]
    pub fn status(&mut self, status: &Status) -> &mut Self {
        self.fields.push(status.as_bytes());
        self
    }

    /// Adds a piece of application memory, copied (or packed) when the record is appended.
    /// Its datatype is looked up unless it is the header's. Always inlined: called, it read
    /// the piece and the header back from the caller's stores (perf: a store-forwarding stall
    /// on a tenth of all samples of the `stages` bench).
    #[inline(always)]
    pub fn piece(&mut self, piece: Piece) -> &mut Self {
        let kind = self.header.borrow().kind_of(piece.datatype);
        self.pieces.push(Planned::new(piece, kind));
        self
    }

    /// [`Writer::piece`] of a receive's buffer, keeping only the `partial` bytes received
    /// when the message ended in a partial element (see `engine::status::Received`): the
    /// replay then delivers exactly them ([`Reader::unpack_into`]).
    pub fn piece_received(&mut self, piece: Piece, partial: Option<u64>) -> &mut Self {
        self.piece(piece);
        if let (Some(planned), Some(bytes)) = (self.pieces.last_mut(), partial) {
            planned.limit = Some(usize::try_from(bytes).unwrap_or(usize::MAX));
        }
        self
    }

    /// Appends the record to the active CD's log, through the thread's context `cx` when the
    /// caller has it (else cd-core finds it).
    ///
    /// # Safety
    /// Every piece must be readable: `count` elements of its datatype at `buf`.
    #[inline(always)]
    pub unsafe fn append(&self, cx: Option<cd_core::ThreadCx<'_>>) -> Result<(), cd_core::CdError> {
        let total = self.len();
        // SAFETY: the caller's contract.
        let fill = |dst: &mut [u8]| unsafe { self.write(dst) };
        let result = match cx {
            Some(cx) => cx.log_append_with(total, fill),
            None => cd_core::log_append_with(total, fill),
        };
        if result.is_ok() {
            crate::stats::logged(total);
        }
        result
    }

    /// The record's bytes.
    #[inline(always)]
    fn len(&self) -> usize {
        let meta_len = HEADER_BYTES + self.fields.len;
        self.pieces
            .iter()
            .fold(meta_len, |n, p| n.saturating_add(16 + p.room()))
    }

    /// Writes the record into `dst` ([`Writer::len`] bytes).
    ///
    /// # Safety
    /// Every piece must be readable: `count` elements of its datatype at `buf`.
    #[inline(always)]
    unsafe fn write(&self, dst: &mut [u8]) {
        let meta_len = HEADER_BYTES + self.fields.len;
        let (head, mut rest) = dst.split_at_mut(meta_len);
        let (head, tail) = head.split_at_mut(HEADER_BYTES);
        write_header(head, self.header.borrow(), meta_len);
        self.fields.write(tail);
        for piece in &self.pieces {
            let (this, after) = rest.split_at_mut(16 + piece.room());
            // SAFETY: the caller's contract.
            unsafe { piece.write(this) };
            rest = after;
        }
    }
}

/// Check words a receive record written by [`append_received`] may have.
const MAX_CHECK: usize = 4;

/// The record of a completed receive of the common shape, appended through the thread's
/// context `cx`: at most [`MAX_CHECK`] check words (`MPI_Sendrecv`'s receive side), a raw
/// datatype ([`types`]), fewer than [`ALIGN_FROM`] bytes received (`piece.count`
/// elements). One closure of stores at fixed offsets writes exactly the bytes of a [`Writer`]
/// given the header, the check words, the status, the count and the piece (so replay reads
/// it as any other), without the writer's field buffer, piece vector and size loop: this
/// record is on the way from a message's arrival to the rank's answer, and the generic
/// assembly cost more than its stores into the log. `None` when the receive is not of that
/// shape (the caller uses a [`Writer`]).
///
/// # Safety
/// `piece` must be readable: `count` elements of its datatype at `buf`.
#[inline(always)]
pub(crate) unsafe fn append_received(
    cx: cd_core::ThreadCx<'_>,
    header: &Header,
    check: &[c_int],
    status: &Status,
    piece: Piece,
    kind: types::DatatypeInfo,
) -> Option<Result<(), cd_core::CdError>> {
    if !kind.raw || check.len() > MAX_CHECK {
        return None;
    }
    let n = piece.count;
    let size = types::raw_bytes(n, kind.size).filter(|&size| size < ALIGN_FROM)?;
    let meta = HEADER_BYTES + 4 * check.len() + abi::STATUS_SIZE + 4;
    let total = meta + 16 + size;
    let fill = |dst: &mut [u8]| {
        let (head, rest) = dst.split_at_mut(HEADER_BYTES);
        write_header(head, header, meta);
        let (checks, rest) = rest.split_at_mut(4 * check.len());
        for (to, c) in checks.chunks_exact_mut(4).zip(check) {
            to.copy_from_slice(&c.to_ne_bytes());
        }
        let (words, rest) = rest.split_at_mut(abi::STATUS_SIZE + 4);
        // The status 4 bytes at a time, as MPI stored its fields (a wider load spanning
        // them would stall on store forwarding; see `Fields::write`).
        let from = status.as_bytes().as_ptr().cast::<u32>();
        for i in 0..abi::STATUS_INTS {
            // SAFETY: `4 * i + 4 <= STATUS_SIZE`, inside the status and inside `words`; a
            // status is an array of ints, so `from` is aligned for `u32`. The volatile read
            // keeps the loop from becoming one wide copy (a `[u8; 4]` one became byte moves).
            unsafe {
                let word = std::ptr::read_volatile(from.add(i));
                words
                    .as_mut_ptr()
                    .add(4 * i)
                    .cast::<u32>()
                    .write_unaligned(word);
            }
        }
        words[abi::STATUS_SIZE..].copy_from_slice(&n.to_ne_bytes());
        // `[used][room][bytes]`: below `ALIGN_FROM`, no padding and the room is the size.
        let (piece_words, data) = rest.split_at_mut(16);
        piece_words[..8].copy_from_slice(&(size as u64).to_ne_bytes());
        piece_words[8..].copy_from_slice(&(size as u64).to_ne_bytes());
        if size > 0 {
            // SAFETY: a raw datatype's `n` elements are `size` contiguous bytes at `buf`,
            // readable by the caller's contract.
            let src = unsafe { std::slice::from_raw_parts(piece.buf.cast::<u8>(), size) };
            copy::bytes(data, src);
        }
        // Debug builds (the tests) check every such record against the writer's bytes.
        #[cfg(debug_assertions)]
        {
            let mut writer = Writer::new(header);
            for &c in check {
                writer.int(c);
            }
            writer.status(status).int(n).piece(piece);
            let mut want = vec![0; writer.len()];
            // SAFETY: the caller's contract.
            unsafe { writer.write(&mut want) };
            debug_assert_eq!(dst, &want[..], "a compact receive record is the writer's");
        }
    };
    let result = cx.log_append_with(total, fill);
    if result.is_ok() {
        crate::stats::logged(total);
    }
    Some(result)
}

/// A record of the header alone (a blocking send's), appended through the thread's context
/// `cx`: the bytes of `Writer::new(header)`, without building the writer.
#[inline(always)]
pub(crate) fn append_header(
    cx: cd_core::ThreadCx<'_>,
    header: &Header,
) -> Result<(), cd_core::CdError> {
    let result = cx.log_append_with(HEADER_BYTES, |dst| write_header(dst, header, HEADER_BYTES));
    if result.is_ok() {
        crate::stats::logged(HEADER_BYTES);
    }
    result
}

/// Writes the header (a [`Stored`]) into `dst` ([`HEADER_BYTES`] long), each field with one
/// store: the struct is built in place, never copied from a temporary (a wide load of fields
/// stored a moment before would stall on store forwarding).
#[inline(always)]
fn write_header(dst: &mut [u8], header: &Header, meta_len: usize) {
    let dst: &mut [u8; HEADER_BYTES] = dst.try_into().expect("header room");
    let stored = Stored {
        meta_len: meta_len as u32,
        call: header.call as u16,
        reserved: 0,
        peer: header.peer,
        tag: header.tag,
        count: header.count,
        elem: header.elem,
        comm: header.comm,
    };
    // SAFETY: `dst` is exactly `size_of::<Stored>()` bytes; the write is unaligned, and a
    // `Stored` is plain bytes (`Pod`).
    unsafe { dst.as_mut_ptr().cast::<Stored>().write_unaligned(stored) };
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
        let stored: Stored = bytemuck::pod_read_unaligned(&bytes[..HEADER_BYTES]);
        let meta_len = stored.meta_len as usize;
        if meta_len < HEADER_BYTES || meta_len > bytes.len() {
            return Err(Corrupt);
        }
        let header = Header {
            call: Call::from_code(stored.call).ok_or(Corrupt)?,
            peer: stored.peer,
            tag: stored.tag,
            count: stored.count,
            elem: stored.elem,
            comm: stored.comm,
            typed: None,
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
        let word = u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap());
        let pad = (word >> PAD_SHIFT) as usize;
        let used = usize::try_from(word & ((1 << PAD_SHIFT) - 1)).map_err(|_| Corrupt)?;
        let room = usize::try_from(u64::from_ne_bytes(
            bytes[at + 8..at + 16].try_into().unwrap(),
        ))
        .map_err(|_| Corrupt)?;
        let end = (at + 16).checked_add(room).ok_or(Corrupt)?;
        if pad > MAX_PAD || used.checked_add(pad).is_none_or(|n| n > room) || end > bytes.len() {
            return Err(Corrupt);
        }
        self.data_at = end;
        Ok(&bytes[at + 16 + pad..at + 16 + pad + used])
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
        let kind = types::kind(datatype);
        if kind.raw && types::raw_bytes(count, kind.size).is_some_and(|n| n >= data.len()) {
            // SAFETY: a raw datatype's `count` elements are that many contiguous bytes at
            // `buf`, writable by the caller's contract, and `data` is no longer; its packed
            // form is its bytes (see `types`).
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buf.cast::<u8>(), data.len()) };
            return Ok(());
        }
        if data.len() < types::raw_bytes(count, kind.size).unwrap_or(0) {
            // The bytes of a message that ended in a partial element: delivered as MPI
            // delivered them, by MPI itself (a message of packed bytes matches any datatype).
            // SAFETY: as below.
            return unsafe { deliver_packed(data, buf, count, datatype) };
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

/// Delivers `data`, the packed bytes of a message that ended in a partial element of
/// `datatype`, into `count` elements at `buf` the way the original receive did: as a message
/// to this rank on the runtime's own duplicate of `MPI_COMM_SELF` (no application message can
/// match it), sent as `MPI_PACKED` and received with the datatype, so that MPI writes exactly
/// the bytes it wrote then and nothing past them.
///
/// # Safety
/// `count` elements of `datatype` at `buf` must be writable.
unsafe fn deliver_packed(
    data: &[u8],
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
) -> Result<(), Corrupt> {
    static OWN: std::sync::OnceLock<Option<Comm>> = std::sync::OnceLock::new();
    let predefined = abi::predefined();
    let own = OWN.get_or_init(|| safe::comm_dup(predefined.comm_self).ok());
    let (Some(comm), Ok(len)) = (*own, c_int::try_from(data.len())) else {
        return Err(Corrupt);
    };
    let mut status = Status::zeroed();
    // SAFETY: `data` is readable for `len` bytes; the caller vouched for the destination;
    // the message goes from this rank to itself on a communicator only this function uses.
    let rc = unsafe {
        real::Sendrecv(
            data.as_ptr().cast(),
            len,
            predefined.packed,
            0,
            0,
            buf,
            count,
            datatype,
            0,
            0,
            comm,
            &mut status,
        )
    };
    if rc == abi::SUCCESS {
        Ok(())
    } else {
        Err(Corrupt)
    }
}

/// Reads `bytes` as a replay reads a log record, field after field in an order chosen by the
/// first byte (two bits per field: int, 64-bit, status, data piece), for `cargo fuzz`
/// (`fuzz/`): whatever the bytes, it returns without panicking, reading out of bounds or
/// allocating from a length it read.
#[cfg(fuzzing)]
pub fn fuzz_read(bytes: &[u8]) {
    let Some((&plan, rest)) = bytes.split_first() else {
        return;
    };
    let Ok(mut reader) = Reader::new(LogEntry::from(rest.to_vec())) else {
        return;
    };
    let _ = reader.header.to_string();
    for field in 0..4 {
        let read = match (plan >> (2 * field)) & 3 {
            0 => reader.int().map(drop),
            1 => reader.u64().map(drop),
            2 => reader.status().map(drop),
            _ => reader.piece().map(drop),
        };
        if read.is_err() {
            return;
        }
    }
}
