//! The interposer's log record reader, as a replay runs it (`cd_mpi_intercept::
//! fuzz_read_record`): records come from memory or from a spill file on disk.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cd_mpi_intercept::fuzz_read_record(data);
});
