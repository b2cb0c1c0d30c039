//! Sibling CDs on T threads: each thread advances, then restores, its own child CD of S bytes
//! under one parent (re-adding it READ_WRITE first, a promotion that copies nothing, so that
//! every advance copies it whole); against T threads each copying the same bytes with a plain
//! `memcpy` (`copy_from_slice`) into, then out of, a reused huge-page buffer. The two run
//! interleaved (A B A B) in one process; each sample is the wall time of all T threads (started
//! together at a barrier), reported as aggregate throughput (2 x S x T bytes moved), median and
//! range.
//!
//! `cargo bench -p cd-core --bench siblings` (uses only the spec's API, so the same file
//! measures any version of cd-core). `CD_BENCH_SAMPLES` sets the samples per cell (default
//! 11); `CD_BENCH_SIZES_MIB` the sizes (default `64,512`); `CD_BENCH_THREADS` the thread
//! counts (default `1,2`).

use cd_core::*;
use std::sync::Barrier;
use std::time::{Duration, Instant};

const MIB: usize = 1 << 20;

/// A reused buffer of huge pages for the reference: `MAP_HUGETLB` if the kernel has huge
/// pages reserved, else a mapping with `MADV_HUGEPAGE` (transparent huge pages).
struct HugeBuffer {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is owned memory; each is used by one thread at a time.
unsafe impl Send for HugeBuffer {}
// SAFETY: as above; shared references only hand the pointer to the one thread using it.
unsafe impl Sync for HugeBuffer {}

impl HugeBuffer {
    /// The buffer and which kind of huge pages it got.
    fn new(len: usize) -> (HugeBuffer, &'static str) {
        let len = len.next_multiple_of(2 * MIB);
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // SAFETY: an anonymous mapping with no address hint; checked against MAP_FAILED.
        let hugetlb = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags | libc::MAP_HUGETLB,
                -1,
                0,
            )
        };
        let (ptr, kind) = if hugetlb != libc::MAP_FAILED {
            (hugetlb, "MAP_HUGETLB")
        } else {
            // SAFETY: as above.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    flags,
                    -1,
                    0,
                )
            };
            assert!(ptr != libc::MAP_FAILED, "mmap of {len} bytes failed");
            // SAFETY: the mapping just made; a hint only.
            unsafe { libc::madvise(ptr, len, libc::MADV_HUGEPAGE) };
            (ptr, "madvise(MADV_HUGEPAGE) (THP)")
        };
        let buffer = HugeBuffer {
            ptr: ptr.cast(),
            len,
        };
        // Fault every page in once: the buffer is reused, as the store's pooled buffers are.
        buffer.slice().fill(1);
        (buffer, kind)
    }

    #[allow(clippy::mut_from_ref)]
    fn slice(&self) -> &mut [u8] {
        // SAFETY: the mapping is `len` bytes, live while `self` is, and each buffer is used by
        // one thread at a time (the bench's structure), so no two references alias.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for HugeBuffer {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Application memory of one thread: a pre-faulted block reached through its address.
struct App {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: as `HugeBuffer`: owned, used by one thread at a time.
unsafe impl Send for App {}
// SAFETY: as above.
unsafe impl Sync for App {}

impl App {
    fn new(len: usize, value: u8) -> App {
        let ptr = Box::into_raw(vec![value; len].into_boxed_slice()) as *mut u8;
        App { ptr, len }
    }

    #[allow(clippy::mut_from_ref)]
    fn slice(&self) -> &mut [u8] {
        // SAFETY: the live block of `len` bytes; used by one thread at a time, and never
        // while a CD call reads or writes it.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    fn spec(&self) -> AddrSpec {
        AddrSpec::new(
            self.ptr.expose_provenance(),
            self.len,
            Access::ReadWrite,
            Scope::Global,
        )
    }
}

impl Drop for App {
    fn drop(&mut self) {
        // SAFETY: from `Box::into_raw` of a boxed slice of `len` bytes.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ptr, self.len,
            )))
        };
    }
}

/// Runs `work(i)` on `threads` threads started together at a barrier; the time from the first
/// start to the last end, as the threads themselves saw it (the spawning thread may be
/// descheduled on a busy machine, so it does not take the time).
fn timed(threads: usize, work: impl Fn(usize) + Sync) -> Duration {
    let start = Barrier::new(threads);
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (start, work) = (&start, &work);
                s.spawn(move || {
                    start.wait();
                    let t0 = Instant::now();
                    work(i);
                    (t0, Instant::now())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let first = spans.iter().map(|s| s.0).min().expect("one thread");
    let last = spans.iter().map(|s| s.1).max().expect("one thread");
    last - first
}

fn list(var: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(var)
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| default.to_vec())
}

/// Median, min and max of aggregate throughput in GB/s.
fn summary(bytes: usize, times: &[Duration]) -> (f64, f64, f64) {
    let mut rates: Vec<f64> = times
        .iter()
        .map(|t| bytes as f64 / t.as_secs_f64() / 1e9)
        .collect();
    rates.sort_by(f64::total_cmp);
    (rates[rates.len() / 2], rates[0], rates[rates.len() - 1])
}

fn main() {
    // criterion-style invocations pass flags such as `--bench`; nothing here reads them.
    let samples = list("CD_BENCH_SAMPLES", &[11])[0].max(1);
    let sizes = list("CD_BENCH_SIZES_MIB", &[64, 512]);
    let thread_counts = list("CD_BENCH_THREADS", &[1, 2]);
    println!(
        "siblings: {samples} samples per cell, interleaved CD / reference; CD_COPY_THREADS={}",
        std::env::var("CD_COPY_THREADS").unwrap_or_else(|_| "(default)".into())
    );
    println!(
        "| size | T | reference memcpy GB/s (min-max) | CD advance+restore GB/s (min-max) | CD / ref |"
    );
    println!("|---|---|---|---|---|");
    let mut kind = "";
    let mut results = Vec::new();
    for &mib in &sizes {
        let size = mib * MIB;
        for &threads in &thread_counts {
            let parent = create_cd(
                None,
                None,
                LoggingMode::Disabled,
                Some(&format!("siblings-{mib}-{threads}")),
            )
            .unwrap();
            let apps: Vec<App> = (0..threads).map(|i| App::new(size, i as u8 + 1)).collect();
            let kids: Vec<CdHandle> = apps
                .iter()
                .map(|app| {
                    let kid =
                        create_cd(Some(parent.into()), None, LoggingMode::Inherit, None).unwrap();
                    // SAFETY: `app` outlives the CD; only this thread touches it now.
                    unsafe { add_to_cd_via_copy(kid, &[app.spec()]).unwrap() };
                    kid
                })
                .collect();
            let huge: Vec<HugeBuffer> = (0..threads)
                .map(|_| {
                    let (buffer, k) = HugeBuffer::new(size);
                    kind = k;
                    buffer
                })
                .collect();
            let cd_op = |i: usize| {
                // SAFETY: thread `i` alone uses `apps[i]` and `kids[i]` during the sample.
                unsafe {
                    // An advance demotes the range to READ_ONLY: re-adding it READ_WRITE
                    // promotes it again (no copy), so that each advance copies it whole.
                    add_to_cd_via_copy(kids[i], &[apps[i].spec()]).unwrap();
                    let report = advance_cd_point_in_time(kids[i]).unwrap();
                    assert_eq!(report.bytes_copied, size);
                    let report = restore_cd(kids[i]).unwrap();
                    assert_eq!(report.bytes_restored, size);
                }
            };
            let ref_op = |i: usize| {
                let (app, store) = (apps[i].slice(), &mut huge[i].slice()[..size]);
                store.copy_from_slice(std::hint::black_box(app));
                app.copy_from_slice(std::hint::black_box(store));
            };
            // One warm-up of each: the CD's second store buffer comes into the pool.
            timed(threads, cd_op);
            timed(threads, ref_op);
            let (mut cd_times, mut ref_times) = (Vec::new(), Vec::new());
            for _ in 0..samples {
                cd_times.push(timed(threads, cd_op));
                ref_times.push(timed(threads, ref_op));
            }
            let bytes = 2 * size * threads;
            let (cd, cd_lo, cd_hi) = summary(bytes, &cd_times);
            let (rf, rf_lo, rf_hi) = summary(bytes, &ref_times);
            println!(
                "| {mib} MiB | {threads} | {rf:.2} ({rf_lo:.2}-{rf_hi:.2}) | {cd:.2} ({cd_lo:.2}-{cd_hi:.2}) | {:.2}x |",
                cd / rf
            );
            results.push((mib, threads, rf, cd));
            for kid in kids {
                commit_cd(kid).unwrap();
            }
            commit_cd(parent).unwrap();
        }
    }
    println!("reference buffers: {kind}");
    for &mib in &sizes {
        let at = |t: usize| results.iter().find(|r| r.0 == mib && r.1 == t);
        if let (Some(one), Some(two)) = (at(1), at(2)) {
            println!(
                "{mib} MiB scaling T=2 / T=1: reference {:.2}x, CD {:.2}x",
                two.2 / one.2,
                two.3 / one.3
            );
        }
    }
}
