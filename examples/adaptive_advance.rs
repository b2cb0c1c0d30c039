//! Advances as often as the runtime advises, under injected faults.
//!
//! A root CD protects 16 MiB of state. Each iteration updates a stripe of it and works for
//! about 1 ms; every `interval` iterations the CD advances. Faults arrive at random (a Poisson
//! process in wall time, mean time between them given on the command line): the state is
//! wiped, the CD restored, and the work since the last advance done again. After every
//! advance and every restore the program reads the advice ([`Domain::advice`]: Daly's interval
//! from the measured advance cost and the observed mean time between restores, or `CD_MTBF`)
//! and sets `interval` to the advised time over the measured time of one iteration. Before
//! the advice is known (no fault seen yet, no `CD_MTBF`), it keeps its starting interval.
//!
//! At the end the state is compared with a fault-free computation.
//!
//! Run: `cargo run --release --example adaptive_advance [-- MTBF_SECONDS WORK_SECONDS]`
//! (defaults 0.25 and 3); `CD_MTBF=0.25` gives the mean time between faults instead of letting
//! the runtime observe it.

use containment::{Domain, Key};
use std::time::{Duration, Instant};

const WORDS: usize = 1 << 21; // 16 MiB of u64
const STRIPE: usize = 1 << 13; // 64 KiB updated per iteration
const WORK: Duration = Duration::from_millis(1);
const FIRST_INTERVAL: u64 = 4;

/// One iteration's update of the state (deterministic in `i`).
fn update(state: &mut [u64], i: u64) {
    let start = (i as usize * STRIPE) % state.len();
    for (k, w) in state[start..start + STRIPE].iter_mut().enumerate() {
        *w = w
            .wrapping_mul(6364136223846793005)
            .wrapping_add(i ^ k as u64);
    }
}

/// Busy work until `until`.
fn spin(until: Instant) {
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// A small xorshift generator, for the fault times.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// An exponential draw of mean `mean`.
    fn exp(&mut self, mean: f64) -> Duration {
        Duration::from_secs_f64(-mean * (1.0 - self.unit()).ln())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let mtbf = args.first().copied().unwrap_or(0.25);
    let work_s = args.get(1).copied().unwrap_or(3.0);
    let iterations = (work_s / WORK.as_secs_f64()) as u64;

    let mut reference = vec![1u64; WORDS];
    for i in 0..iterations {
        update(&mut reference, i);
    }

    let mut domain = Domain::builder().name("adaptive").create()?;
    let key: Key<u64> = domain.protect(vec![1u64; WORDS])?;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let started = Instant::now();
    let mut next_fault = started + rng.exp(mtbf);
    let (mut interval, mut since_advance, mut saved_i, mut i) = (FIRST_INTERVAL, 0u64, 0u64, 0u64);
    let (mut faults, mut advances, mut iter_s) = (0u32, 0u32, WORK.as_secs_f64());
    println!(
        "adaptive_advance: {iterations} iterations of ~1 ms, faults every {mtbf} s on average"
    );
    while i < iterations {
        let t0 = Instant::now();
        update(domain.get_mut(key)?, i);
        spin(t0 + WORK);
        iter_s = 0.98 * iter_s + 0.02 * t0.elapsed().as_secs_f64();
        i += 1;
        since_advance += 1;
        let fault = Instant::now() >= next_fault;
        if fault {
            faults += 1;
            domain.get_mut(key)?.fill(0xdead); // the fault wipes the state
            domain.restore()?;
            i = saved_i;
            since_advance = 0;
            next_fault = Instant::now() + rng.exp(mtbf);
        } else if since_advance >= interval || i == iterations {
            domain.advance()?;
            advances += 1;
            saved_i = i;
            since_advance = 0;
        } else {
            continue;
        }
        let advice = domain.advice()?;
        match advice.interval_s {
            Some(t) => {
                let next = ((t / iter_s).round() as u64).clamp(1, 100_000);
                // Follow the advice; report (and switch) only on a change of 10% or more.
                if next.abs_diff(interval) * 10 >= interval {
                    println!(
                        "  at {:6.3} s: advance cost {:.3} ms, MTBF {:.3} s ({:?}): interval \
                         {:.1} ms = {next} iterations (was {interval})",
                        started.elapsed().as_secs_f64(),
                        advice.advance_cost_s.unwrap_or(0.0) * 1e3,
                        advice.mtbf_s.unwrap_or(0.0),
                        advice.mtbf_source,
                        t * 1e3,
                    );
                    interval = next;
                }
            }
            None if fault || advances == 1 => println!(
                "  at {:6.3} s: advice unknown (advance cost {:?} s, MTBF {:?}): keeping {interval} \
                 iterations",
                started.elapsed().as_secs_f64(),
                advice.advance_cost_s,
                advice.mtbf_s,
            ),
            None => {}
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    assert!(
        domain.get(key)? == &reference[..],
        "the state differs from the fault-free run"
    );
    domain.commit().map_err(|e| e.error)?;
    println!(
        "adaptive_advance: ok ({elapsed:.2} s for {work_s} s of work, {faults} faults, \
         {advances} advances, final interval {interval} iterations)"
    );
    Ok(())
}
