//! The journal's memory: chunks that messages are copied into one after the other, kept for
//! the next version when one completes. A message then costs one copy: no allocation, and,
//! once the chunks exist, no page fault (a fresh buffer per message, freed at each version,
//! cost a 1 MiB message 250 page faults, six times its copy: cd-mpi-intercept/BENCHMARKS-ulfm.md).
//! The chunks are zeroed when made (`calloc`'s fresh pages) and written in place after, so
//! every byte is always initialised; their memory counts in `cd_stats`' `log_bytes`.

/// Bytes of a chunk (a larger message gets a chunk of its own size).
const CHUNK: usize = 1 << 20;

/// Where a message's bytes are.
#[derive(Clone, Copy)]
pub(crate) struct Span {
    chunk: usize,
    start: usize,
    len: usize,
}

struct Chunk {
    bytes: Box<[u8]>,
    used: usize,
}

#[derive(Default)]
pub(crate) struct Arena {
    /// The chunks in use, the last one being filled.
    chunks: Vec<Chunk>,
    /// Chunks kept from earlier versions.
    spare: Vec<Chunk>,
}

impl Arena {
    /// Appends `len` bytes that `fill` writes; where they are.
    pub(crate) fn append(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> Span {
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.bytes.len() - c.used >= len);
        if !fits {
            let chunk = self.take(len);
            self.chunks.push(chunk);
        }
        let chunk = self.chunks.len() - 1;
        let c = &mut self.chunks[chunk];
        let start = c.used;
        fill(&mut c.bytes[start..start + len]);
        c.used += len;
        Span { chunk, start, len }
    }

    /// The bytes at `span`.
    pub(crate) fn get(&self, span: Span) -> &[u8] {
        &self.chunks[span.chunk].bytes[span.start..span.start + span.len]
    }

    /// Every span is forgotten; the chunks stay for the next version.
    pub(crate) fn clear(&mut self) {
        for mut c in self.chunks.drain(..) {
            c.used = 0;
            self.spare.push(c);
        }
    }

    /// A chunk with room for `len` bytes: a spare one, else a new one.
    fn take(&mut self, len: usize) -> Chunk {
        if let Some(i) = self.spare.iter().position(|c| c.bytes.len() >= len) {
            return self.spare.swap_remove(i);
        }
        let size = len.max(CHUNK);
        cd_core::charge_log_memory(size);
        Chunk {
            bytes: vec![0u8; size].into_boxed_slice(),
            used: 0,
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let held: usize = self
            .chunks
            .iter()
            .chain(&self.spare)
            .map(|c| c.bytes.len())
            .sum();
        cd_core::release_log_memory(held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spans read back what was written, across chunks; a message larger than a chunk gets one
    /// of its own; after a clear the same chunks take the next version's messages.
    #[test]
    fn spans_read_back_and_chunks_are_reused() {
        let mut arena = Arena::default();
        let small: Vec<Span> = (0..3u8)
            .map(|i| arena.append(600 << 10, |dst| dst.fill(i)))
            .collect();
        let big = arena.append(CHUNK + 1, |dst| dst.fill(9));
        assert_eq!(
            arena.chunks.len(),
            4,
            "600 KiB twice does not fit a 1 MiB chunk"
        );
        for (i, &s) in small.iter().enumerate() {
            assert!(arena.get(s).iter().all(|&b| b == i as u8));
            assert_eq!(arena.get(s).len(), 600 << 10);
        }
        assert_eq!(arena.get(big).len(), CHUNK + 1);
        let addresses: Vec<*const u8> = arena.chunks.iter().map(|c| c.bytes.as_ptr()).collect();
        arena.clear();
        assert!(arena.chunks.is_empty());
        let again = arena.append(CHUNK + 1, |dst| dst.fill(7));
        assert!(
            addresses.contains(&arena.get(again).as_ptr()),
            "the large chunk is reused"
        );
        assert!(arena.get(again).iter().all(|&b| b == 7));
        let empty = arena.append(0, |_| {});
        assert!(arena.get(empty).is_empty());
    }
}
