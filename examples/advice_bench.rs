//! Bench: the total time of a faulty run at the advised advance interval against fixed
//! intervals around it, in one run, interleaved.
//!
//! The work is the one of `adaptive_advance`: a root CD protects 16 MiB, each iteration
//! updates a 64 KiB stripe and works for about 1 ms, the CD advances every `interval`
//! iterations, and faults (a Poisson process in wall time, mean `MTBF_SECONDS`) wipe the state,
//! which is restored and recomputed from the last advance.
//!
//! 1. Calibration: one run at a short interval gives the runtime its measurements (advance
//!    cost, observed time between restores); the advised interval is then read from
//!    `level_advice` (Daly's estimate), in iterations of the measured iteration time.
//! 2. Comparison: the advised interval times 1/4, 1/2, 1, 2 and 4, each run `REPS` times to
//!    do `WORK_SECONDS` of work. Runs are interleaved (one of each factor per repetition, in
//!    a rotated order) and repetition r uses the same fault times for every factor (common
//!    random numbers), so that the load of the machine and the luck of the faults fall on all
//!    the factors alike.
//!
//! Prints one table row per factor: the median and mean total time, faults and advances, and
//! what the first-order model predicts (time / work = 1 + C/T + (T + C)/2M + R/M, with the
//! work the iterations at their measured time and M the observed MTBF).
//!
//! Run: `cargo run --release --example advice_bench [-- MTBF_SECONDS WORK_SECONDS REPS]`
//! (defaults 0.25, 1.5, 7).

use containment::raw::level_advice;
use containment::Domain;
use std::time::{Duration, Instant};

const NAME: &str = "advice-bench";
const WORDS: usize = 1 << 21; // 16 MiB of u64
const STRIPE: usize = 1 << 13; // 64 KiB updated per iteration
const WORK: Duration = Duration::from_millis(1);
const FACTORS: [f64; 5] = [0.25, 0.5, 1.0, 2.0, 4.0];

fn update(state: &mut [u64], i: u64) {
    let start = (i as usize * STRIPE) % state.len();
    for (k, w) in state[start..start + STRIPE].iter_mut().enumerate() {
        *w = w
            .wrapping_mul(6364136223846793005)
            .wrapping_add(i ^ k as u64);
    }
}

fn spin(until: Instant) {
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    fn exp(&mut self, mean: f64) -> Duration {
        Duration::from_secs_f64(-mean * (1.0 - self.unit()).ln())
    }
}

/// What one run did.
struct Run {
    seconds: f64,
    faults: u32,
    advances: u32,
    iteration_s: f64,
}

/// `iterations` iterations advancing every `interval`, faults of mean `mtbf` from `seed`.
fn run(interval: u64, iterations: u64, mtbf: f64, seed: u64) -> Result<Run, containment::Error> {
    let mut domain = Domain::builder().name(NAME).create()?;
    let key = domain.protect(vec![1u64; WORDS])?;
    let mut rng = Rng(seed | 1);
    let started = Instant::now();
    let mut next_fault = started + rng.exp(mtbf);
    let (mut i, mut saved, mut since) = (0u64, 0u64, 0u64);
    let (mut faults, mut advances, mut work_s, mut work_n) = (0u32, 0u32, 0.0, 0u64);
    while i < iterations {
        let t0 = Instant::now();
        update(domain.get_mut(key)?, i);
        spin(t0 + WORK);
        work_s += t0.elapsed().as_secs_f64();
        work_n += 1;
        i += 1;
        since += 1;
        if Instant::now() >= next_fault {
            faults += 1;
            domain.get_mut(key)?.fill(0xdead);
            domain.restore()?;
            i = saved;
            since = 0;
            next_fault = Instant::now() + rng.exp(mtbf);
        } else if since >= interval || i == iterations {
            domain.advance()?;
            advances += 1;
            saved = i;
            since = 0;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    domain.commit().map_err(|e| e.error)?;
    Ok(Run {
        seconds,
        faults,
        advances,
        iteration_s: work_s / work_n as f64,
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let mtbf = args.first().copied().unwrap_or(0.25);
    let work_s = args.get(1).copied().unwrap_or(1.5);
    let reps = args.get(2).copied().unwrap_or(7.0) as usize;
    let iterations = (work_s / WORK.as_secs_f64()) as u64;

    // 1. Calibration.
    let cal = run(8, 2 * iterations, mtbf, 0x5eed)?;
    let advice = level_advice(Some(NAME), 0);
    let interval_s = advice
        .interval_s
        .ok_or("no advice after calibration: no fault happened; lengthen the work")?;
    let advised = ((interval_s / cal.iteration_s).round() as u64).max(1);
    let c = advice.advance_cost_s.unwrap_or(0.0);
    let r = advice.restore_cost_s.unwrap_or(0.0);
    let m = advice.mtbf_s.unwrap_or(mtbf);
    println!(
        "calibration: {} faults, {} advances; advance cost C = {:.3} ms, restore cost R = {:.3} ms, \
         observed MTBF M = {:.3} s (injected {mtbf} s); advised interval {:.1} ms (Young {:.1} ms) \
         = {advised} iterations of {:.3} ms",
        cal.faults,
        cal.advances,
        c * 1e3,
        r * 1e3,
        m,
        interval_s * 1e3,
        advice.young_interval_s.unwrap_or(0.0) * 1e3,
        cal.iteration_s * 1e3,
    );

    // 2. Comparison, interleaved.
    let intervals: Vec<u64> = FACTORS
        .iter()
        .map(|f| ((advised as f64 * f).round() as u64).max(1))
        .collect();
    let mut results: Vec<Vec<Run>> = FACTORS.iter().map(|_| Vec::new()).collect();
    for rep in 0..reps {
        let seed = 0x1234_5678_9abc_def1u64.wrapping_mul(rep as u64 + 1);
        for k in 0..FACTORS.len() {
            let f = (k + rep) % FACTORS.len();
            results[f].push(run(intervals[f], iterations, mtbf, seed)?);
        }
    }
    println!(
        "| interval (x advised) | iterations | median s | mean s | faults (mean) | advances (mean) | model s |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (f, runs) in results.iter_mut().enumerate() {
        runs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
        let n = runs.len() as f64;
        let median = runs[runs.len() / 2].seconds;
        let mean = runs.iter().map(|r| r.seconds).sum::<f64>() / n;
        let faults = runs.iter().map(|r| f64::from(r.faults)).sum::<f64>() / n;
        let advances = runs.iter().map(|r| f64::from(r.advances)).sum::<f64>() / n;
        let t = intervals[f] as f64 * cal.iteration_s;
        let base = iterations as f64 * cal.iteration_s;
        let model = base * (1.0 + c / t + (t + c) / (2.0 * m) + r / m);
        println!(
            "| {:.1} ms ({}x){} | {} | {median:.3} | {mean:.3} | {faults:.1} | {advances:.1} | {model:.3} |",
            t * 1e3,
            FACTORS[f],
            if FACTORS[f] == 1.0 { " advised" } else { "" },
            intervals[f],
        );
    }
    Ok(())
}
