//! The asynchronous advance against a device space whose drains the test holds open: a
//! promotion (a READ_WRITE re-add of ranges the CD holds) does not wait for the drain, is
//! kept READ_WRITE when the pending point becomes current, and the next advance saves the
//! bytes written after the snapshot; a restore during the drain goes to the previous point;
//! with a subscriber, each drain is a span on a thread of the runtime's own.

use crate::util::unique;
use cd_core::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A device whose memory is a host vector at a made-up base address, and whose drains
/// snapshot at the call but deliver to the host only once the test opens the gate.
struct GatedDevice {
    base: usize,
    memory: Mutex<Vec<u8>>,
    open: Arc<AtomicBool>,
    drains: AtomicUsize,
}

impl GatedDevice {
    fn new(base: usize, len: usize) -> Arc<GatedDevice> {
        Arc::new(GatedDevice {
            base,
            memory: Mutex::new(vec![0; len]),
            open: Arc::new(AtomicBool::new(false)),
            drains: AtomicUsize::new(0),
        })
    }

    /// A "kernel" writing the device memory.
    fn write(&self, offset: usize, len: usize, value: u8) {
        self.memory.lock().unwrap()[offset..offset + len].fill(value);
    }

    fn read(&self, offset: usize, len: usize) -> Vec<u8> {
        self.memory.lock().unwrap()[offset..offset + len].to_vec()
    }

    fn spec(&self, offset: usize, len: usize, access: Access) -> AddrSpec {
        AddrSpec::new(self.base + offset, len, access, Scope::Global)
    }
}

impl DeviceMemory for GatedDevice {
    fn name(&self) -> &str {
        "gated"
    }

    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
        let at = src - self.base;
        dst.copy_from_slice(&self.memory.lock().unwrap()[at..at + dst.len()]);
        Ok(())
    }

    fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
        let at = dst - self.base;
        self.memory.lock().unwrap()[at..at + src.len()].copy_from_slice(src);
        Ok(())
    }

    unsafe fn begin_drain(
        &self,
        copies: &[DrainCopy],
        _stream: usize,
    ) -> Result<Option<Box<dyn Drain>>, String> {
        self.drains.fetch_add(1, Ordering::Relaxed);
        let memory = self.memory.lock().unwrap();
        let snapshot = copies
            .iter()
            .map(|c| {
                let at = c.device - self.base;
                (
                    c.host.expose_provenance(),
                    memory[at..at + c.length].to_vec(),
                )
            })
            .collect();
        Ok(Some(Box::new(GatedDrain {
            open: Arc::clone(&self.open),
            snapshot: Some(snapshot),
        })))
    }
}

/// A drain holding its snapshot (host destination, bytes) until the gate opens.
struct GatedDrain {
    open: Arc<AtomicBool>,
    snapshot: Option<Vec<(usize, Vec<u8>)>>,
}

impl GatedDrain {
    fn deliver(&mut self) {
        for (host, bytes) in self.snapshot.take().unwrap_or_default() {
            // SAFETY: `begin_drain`'s contract: the destination is the pending advance's
            // buffer, untouched by anyone else until this drain reports completion.
            unsafe {
                std::slice::from_raw_parts_mut(
                    std::ptr::with_exposed_provenance_mut::<u8>(host),
                    bytes.len(),
                )
            }
            .copy_from_slice(&bytes);
        }
    }
}

impl Drain for GatedDrain {
    fn is_complete(&mut self) -> Result<bool, String> {
        if self.open.load(Ordering::Acquire) {
            self.deliver();
            return Ok(true);
        }
        Ok(false)
    }

    fn wait(&mut self) -> Result<(), String> {
        while !self.open.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.deliver();
        Ok(())
    }
}

/// A device at its own base (in the kernel half, where no host allocation lies), registered
/// and mapped, with a root CD holding two 1 KiB ranges: `a` READ_WRITE, `b` READ_ONLY.
fn setup(n: usize, tag: &str) -> (Arc<GatedDevice>, CdHandle) {
    let device = GatedDevice::new(0xD800_0000_0000_0000 + n * 0x1_0000_0000, 4096);
    let space = register_memory_space(device.clone());
    map_device_region(space, device.base, 4096).unwrap();
    let cd = create_cd(None, None, LoggingMode::Disabled, Some(&unique(tag))).unwrap();
    device.write(0, 2048, 1);
    // SAFETY: device ranges are reached through the space's copy functions only.
    unsafe {
        add_to_cd_via_copy(
            cd,
            &[
                device.spec(0, 1024, Access::ReadWrite),
                device.spec(1024, 1024, Access::ReadOnly),
            ],
        )
        .unwrap()
    };
    (device, cd)
}

fn access_at(cd: CdHandle, address: usize) -> Access {
    cd_entries(cd)
        .unwrap()
        .into_iter()
        .find(|e| e.address <= address && address < e.address + e.length)
        .expect("an entry")
        .access
}

#[test]
fn a_promotion_during_the_drain_does_not_wait_and_the_next_advance_saves_it() {
    let (device, cd) = setup(1, "async-promote");
    let (a, b) = (device.base, device.base + 1024);
    device.write(0, 2048, 2);
    // SAFETY: as in `setup`.
    let started = unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() };
    assert!(started.in_flight);
    assert_eq!(started.report.bytes_copied, 1024);
    // The spec's loop: promote before the kernels write. Both ranges are held: no wait.
    // SAFETY: as above.
    unsafe {
        add_to_cd_via_copy(
            cd,
            &[
                device.spec(0, 512, Access::ReadWrite),
                device.spec(1024, 1024, Access::ReadWrite),
            ],
        )
        .unwrap()
    };
    assert!(!advance_test(cd).unwrap(), "the drain is still in flight");
    assert_eq!(access_at(cd, b), Access::ReadWrite);
    // Kernels queued after the snapshot write both ranges.
    device.write(0, 2048, 3);
    device.open.store(true, Ordering::Release);
    advance_wait(cd).unwrap();
    // The pending point is current: the snapshot's bytes, the earlier data of `b`.
    assert_eq!(cd_saved_bytes(cd, a, 1024).unwrap(), vec![2; 1024]);
    assert_eq!(cd_saved_bytes(cd, b, 1024).unwrap(), vec![1; 1024]);
    // Its demotion did not undo the promotions made after the snapshot; the rest of `a`,
    // not promoted, is READ_ONLY.
    assert_eq!(access_at(cd, a), Access::ReadWrite);
    assert_eq!(access_at(cd, a + 512), Access::ReadOnly);
    assert_eq!(access_at(cd, b), Access::ReadWrite);
    // The next advance saves the bytes written after the snapshot, promoted ranges only.
    // SAFETY: as above.
    let report = unsafe { advance_cd_point_in_time(cd).unwrap() };
    assert_eq!(report.bytes_copied, 512 + 1024);
    let mut expected = vec![3; 512];
    expected.extend([2; 512]);
    assert_eq!(cd_saved_bytes(cd, a, 1024).unwrap(), expected);
    assert_eq!(cd_saved_bytes(cd, b, 1024).unwrap(), vec![3; 1024]);
    assert_eq!(access_at(cd, b), Access::ReadOnly);
    // A restore brings back that last point.
    device.write(0, 2048, 9);
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert_eq!(device.read(0, 512), vec![3; 512]);
    assert_eq!(device.read(512, 512), vec![2; 512]);
    assert_eq!(device.read(1024, 1024), vec![3; 1024]);
    commit_cd(cd).unwrap();
    unmap_device_region(device.base).unwrap();
}

#[test]
fn a_restore_during_the_drain_goes_to_the_previous_point_with_the_promotions_kept() {
    let (device, cd) = setup(2, "async-restore");
    let (a, b) = (device.base, device.base + 1024);
    device.write(0, 2048, 2);
    // SAFETY: as in `setup`.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(cd, &[device.spec(1024, 1024, Access::ReadWrite)]).unwrap() };
    device.write(0, 2048, 3);
    // A fault while the drain runs: the pending point is dropped, the previous one restored.
    // SAFETY: as above.
    let restored = unsafe { restore_cd(cd).unwrap() };
    assert_eq!(restored.bytes_restored, 2048);
    assert_eq!(device.read(0, 2048), vec![1; 2048]);
    assert!(
        advance_test(cd).unwrap(),
        "nothing pending after the restore"
    );
    // The labels are those of the previous point plus the promotion: `a` was never demoted
    // (its advance did not happen), `b` was promoted.
    assert_eq!(access_at(cd, a), Access::ReadWrite);
    assert_eq!(access_at(cd, b), Access::ReadWrite);
    assert_eq!(cd_saved_bytes(cd, a, 1024).unwrap(), vec![1; 1024]);
    // Opening the gate now changes nothing: the dropped drain delivered nothing.
    device.open.store(true, Ordering::Release);
    assert_eq!(cd_saved_bytes(cd, a, 1024).unwrap(), vec![1; 1024]);
    // The re-executed step writes again and advances: both ranges are saved.
    device.write(0, 2048, 4);
    // SAFETY: as above.
    assert_eq!(
        unsafe { advance_cd_point_in_time(cd).unwrap() }.bytes_copied,
        2048
    );
    assert_eq!(cd_saved_bytes(cd, b, 1024).unwrap(), vec![4; 1024]);
    commit_cd(cd).unwrap();
    unmap_device_region(device.base).unwrap();
}

#[test]
fn an_add_of_new_ground_during_the_drain_waits_for_it() {
    let (device, cd) = setup(3, "async-new-ground");
    device.write(0, 4096, 2);
    // SAFETY: as in `setup`.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
    let gate = Arc::clone(&device);
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        gate.open.store(true, Ordering::Release);
    });
    // Half held, half new: it needs new data, so it waits for the drain first.
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(cd, &[device.spec(1536, 1024, Access::ReadWrite)]).unwrap() };
    assert!(
        device.open.load(Ordering::Acquire),
        "the add waited for the drain"
    );
    opener.join().unwrap();
    assert!(advance_test(cd).unwrap());
    assert_eq!(
        cd_saved_bytes(cd, device.base, 1024).unwrap(),
        vec![2; 1024]
    );
    // The re-add is after the advance: the held part promoted, the new part copied now.
    assert_eq!(access_at(cd, device.base + 1536), Access::ReadWrite);
    assert_eq!(access_at(cd, device.base + 2048), Access::ReadWrite);
    assert_eq!(access_at(cd, device.base), Access::ReadOnly);
    assert_eq!(
        cd_saved_bytes(cd, device.base + 2048, 512).unwrap(),
        vec![2; 512]
    );
    assert_eq!(device.drains.load(Ordering::Relaxed), 1);
    commit_cd(cd).unwrap();
    unmap_device_region(device.base).unwrap();
}

/// A subscriber that records, of each span, its name, the threads that entered it, its exits
/// and the `end` recorded in it.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<SpanSeen>>>);

#[derive(Default)]
struct SpanSeen {
    name: &'static str,
    threads: Vec<Option<String>>,
    exits: usize,
    end: Option<String>,
}

impl Spans {
    fn with<R>(&self, id: &tracing::span::Id, f: impl FnOnce(&mut SpanSeen) -> R) -> R {
        let index = usize::try_from(id.into_u64()).unwrap() - 1;
        f(&mut self.0.lock().unwrap()[index])
    }

    /// `(threads that entered it, end)` of each `drain` span that was left.
    fn drains(&self) -> Vec<(Vec<Option<String>>, Option<String>)> {
        let spans = self.0.lock().unwrap();
        spans
            .iter()
            .filter(|s| s.name == "drain" && s.exits > 0)
            .map(|s| (s.threads.clone(), s.end.clone()))
            .collect()
    }
}

/// Reads the `end` field.
struct End<'a>(&'a mut Option<String>);

impl tracing::field::Visit for End<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "end" {
            *self.0 = Some(format!("{value:?}"));
        }
    }
}

impl tracing::Subscriber for Spans {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut spans = self.0.lock().unwrap();
        spans.push(SpanSeen {
            name: span.metadata().name(),
            ..SpanSeen::default()
        });
        tracing::span::Id::from_u64(spans.len() as u64)
    }

    fn record(&self, id: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        self.with(id, |s| values.record(&mut End(&mut s.end)));
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, _: &tracing::Event<'_>) {}

    fn enter(&self, id: &tracing::span::Id) {
        let thread = std::thread::current().name().map(str::to_owned);
        self.with(id, |s| s.threads.push(thread));
    }

    fn exit(&self, id: &tracing::span::Id) {
        self.with(id, |s| s.exits += 1);
    }
}

/// With a subscriber that wants the `drain` span (libcd's `CD_TIMELINE`), each drain is that
/// span on a thread of the runtime's own, `cd drain`, left when the drain is over: found
/// completed by the watcher itself (the application's next look gets the same outcome and
/// the snapshot the watcher's look delivered), or discarded by a restore in flight.
///
/// `tracing` caches for every thread whether a callsite is enabled: another test's thread, with
/// no subscriber, can leave this test's `drain` span disabled. So the test runs alone, in a
/// process of its own (this test binary again, with a filter).
#[test]
fn with_a_subscriber_each_drain_is_a_span_on_a_watcher_thread() {
    const NAME: &str = "advance_async::with_a_subscriber_each_drain_is_a_span_on_a_watcher_thread";
    if std::env::var_os("CD_TEST_ALONE").is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--test-threads=1"])
            .env("CD_TEST_ALONE", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && text.contains("1 passed"), "{text}");
        return;
    }
    let spans = Spans::default();
    tracing::subscriber::with_default(spans.clone(), || {
        let (device, cd) = setup(4, "async-watched");
        let a = device.base;
        device.write(0, 2048, 2);
        // SAFETY: as in `setup`.
        assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
        device.open.store(true, Ordering::Release);
        let waited = std::time::Instant::now();
        while spans.drains().is_empty() {
            assert!(
                waited.elapsed() < Duration::from_secs(10),
                "the watcher did not find the open drain over"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(advance_test(cd).unwrap());
        assert_eq!(cd_saved_bytes(cd, a, 1024).unwrap(), vec![2; 1024]);
        // The next advance, dropped in flight by a restore.
        device.open.store(false, Ordering::Release);
        // SAFETY: as above.
        unsafe { add_to_cd_via_copy(cd, &[device.spec(0, 1024, Access::ReadWrite)]).unwrap() };
        device.write(0, 1024, 3);
        // SAFETY: as above.
        assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
        // SAFETY: as above.
        unsafe { restore_cd(cd).unwrap() };
        assert_eq!(device.read(0, 1024), vec![2; 1024]);
        commit_cd(cd).unwrap();
        unmap_device_region(device.base).unwrap();
    });
    // The restore returned after the watcher left the span: both are there.
    let drains = spans.drains();
    let watcher = vec![Some("cd drain".to_owned())];
    assert_eq!(
        drains,
        [
            (watcher.clone(), Some("completed".to_owned())),
            (watcher, Some("discarded".to_owned())),
        ]
    );
}
