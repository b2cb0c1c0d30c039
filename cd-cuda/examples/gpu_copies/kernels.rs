//! The bench's real-kernel figures (issue 26): the stall an asynchronous advance adds to a
//! loop of memory-bound kernels loaded from PTX text at run time, and the time the
//! `advance_cd_point_in_time_async` call itself holds the host.

use super::{cu, time, Handle, Raw, Samples};
use cd_core::{advance_cd_point_in_time_async, advance_wait, CdHandle};
use std::ffi::{c_uint, c_void, CString};

/// `cd_bench_stencil` (out, in, n floats), loaded from `cd_cuda::KERNELS_PTX` with the
/// driver's `cuModuleLoadData`: no nvcc at build time.
pub(crate) struct Stencil<'a> {
    raw: &'a Raw,
    function: Handle,
}

impl<'a> Stencil<'a> {
    pub(crate) fn load(raw: &'a Raw) -> Result<Stencil<'a>, String> {
        let text = CString::new(cd_cuda::KERNELS_PTX).map_err(|_| "PTX with a NUL")?;
        let (mut module, mut function): (Handle, Handle) =
            (std::ptr::null_mut(), std::ptr::null_mut());
        let name = CString::new("cd_bench_stencil").expect("no NUL");
        // SAFETY: out-pointers to locals, NUL-terminated PTX text and name; the primary
        // context is current; the module stays loaded for the life of the process.
        unsafe {
            cu(
                (raw.module_load_data)(&mut module, text.as_ptr().cast()),
                "cuModuleLoadData",
            )?;
            cu(
                (raw.module_get_function)(&mut function, module, name.as_ptr()),
                "cuModuleGetFunction",
            )?;
        }
        Ok(Stencil { raw, function })
    }

    /// Queues `out[i] = (in[i-1] + 2 in[i] + in[i+1]) / 4` over `floats` floats on `stream`.
    pub(crate) fn launch(
        &self,
        out: u64,
        input: u64,
        floats: usize,
        stream: Handle,
    ) -> Result<(), String> {
        let mut args = [out, input, floats as u64];
        let mut params: Vec<*mut c_void> = args
            .iter_mut()
            .map(|a| (a as *mut u64).cast::<c_void>())
            .collect();
        let blocks = (floats as u64).div_ceil(256).clamp(1, 1 << 16) as c_uint;
        // SAFETY: the kernel reads `floats` floats at `input` and writes as many at `out`,
        // two distinct device arrays of that size; the parameters are copied during the call.
        let rc = unsafe {
            (self.raw.launch_kernel)(
                self.function,
                blocks,
                1,
                1,
                256,
                1,
                1,
                0,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        cu(rc, "cuLaunchKernel")
    }
}

/// The stall figures of one loop (device-to-device copies, or kernels).
#[derive(Debug, Default)]
pub(crate) struct Stall {
    /// The loop alone.
    pub(crate) alone: Samples,
    /// An asynchronous advance, then the loop, to the end of the loop.
    pub(crate) after_async: Samples,
    /// From the end of the loop to the end of the drain.
    pub(crate) drain_rest: Samples,
    /// The `advance_cd_point_in_time_async` call alone (the host held before the loop is
    /// queued).
    pub(crate) call: Samples,
    /// Steps of the loop (copies or launches), sized to about 1.5 synchronous advances.
    pub(crate) steps: usize,
}

impl Stall {
    /// One rep: the loop alone, then an asynchronous advance of `cd` (promoted first by
    /// `promote`) followed by the loop, then the rest of the drain.
    pub(crate) fn rep(
        &mut self,
        raw: &Raw,
        cd: CdHandle,
        stream: (Handle, usize),
        promote: &dyn Fn() -> Result<(), String>,
        step: &dyn Fn(usize) -> Result<(), String>,
    ) -> Result<(), String> {
        let sync = || {
            // SAFETY: the bench's compute stream.
            cu(
                unsafe { (raw.stream_sync)(stream.0) },
                "cuStreamSynchronize",
            )
        };
        let steps = self.steps;
        let run = || (0..steps).try_for_each(step).and_then(|()| sync());
        self.alone.0.push(time(run)?.0);
        promote()?;
        let mut call = 0.0;
        let (t, ()) = time(|| {
            let (t, _) = time(|| {
                // SAFETY: the CD's range stays allocated until the drain completes (waited
                // for below); the stream is live.
                unsafe { advance_cd_point_in_time_async(cd, stream.1) }
                    .map_err(|e| format!("async advance: {e}"))
            })?;
            call = t;
            run()
        })?;
        self.after_async.0.push(t);
        self.call.0.push(call);
        let (t, ()) = time(|| advance_wait(cd).map_err(|e| format!("drain: {e}")))?;
        self.drain_rest.0.push(t);
        Ok(())
    }

    /// Sizes the loop to about 1.5 times `sync_time` from a calibration of 8 steps.
    pub(crate) fn calibrate(
        &mut self,
        raw: &Raw,
        sync_time: f64,
        stream: Handle,
        step: &dyn Fn(usize) -> Result<(), String>,
    ) -> Result<(), String> {
        let calibration = 8;
        let (t, ()) = time(|| {
            (0..calibration).try_for_each(step)?;
            // SAFETY: the bench's compute stream.
            cu(unsafe { (raw.stream_sync)(stream) }, "cuStreamSynchronize")
        })?;
        self.steps =
            ((1.5 * sync_time / (t / calibration as f64)).ceil() as usize).clamp(1, 1 << 20);
        Ok(())
    }

    /// The figure lines, under `label`.
    pub(crate) fn lines(&self, label: &str, advance: &Samples) -> Vec<(String, String)> {
        let stall = self.after_async.minus(&self.alone);
        vec![
            (format!("{label} alone"), self.alone.show("ms", 1e3)),
            (
                "  async advance + the loop".into(),
                self.after_async.show("ms", 1e3),
            ),
            ("  the async call itself".into(), self.call.show("ms", 1e3)),
            (
                "  drain left after the loop".into(),
                self.drain_rest.show("ms", 1e3),
            ),
            ("  stall added to the loop".into(), stall.show("ms", 1e3)),
            (
                "    stall added / sync advance".into(),
                stall.ratio(advance).show("%", 100.0),
            ),
        ]
    }
}
