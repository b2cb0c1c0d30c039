//! One `mpirun` launch's private temporary directory, and the wait for its processes to end.
//!
//! Open MPI keeps a session directory per host and user in `$TMPDIR` (4.1: `ompi.<host>.<uid>`,
//! 5: `prte.<host>.<uid>`); launches that overlap share it, and one launch's clean-up can remove
//! it while another creates it (`orte_init` then fails with `mkdir /tmp/ompi.<host>.0: File
//! exists`). A killed job can also leave ranks behind for a moment after `mpirun` returns.
//! So every launch gets its own `$TMPDIR` and a marker in its environment, and when the launch
//! is dropped, it waits until no process carries the marker before removing the directory.
//!
//! Shared by cd-ffi's and cd-redset's multi-rank tests (`#[path]`), so the rule is written once.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The environment variable that marks the processes of one launch.
const MARKER: &str = "CD_TEST_LAUNCH";

/// How long a launch waits for its processes to end once `mpirun` has returned.
const GONE_WITHIN: Duration = Duration::from_secs(60);

/// An `mpirun` command (deref to [`Command`]) with its [`Launch`]: the launch ends when this
/// is dropped, after the command's output was collected.
pub struct Mpirun {
    cmd: Command,
    _launch: Launch,
}

impl Mpirun {
    /// `words` is the launcher and its options (`$MPIRUN` split at whitespace).
    pub fn new(words: &[String]) -> Mpirun {
        let mut cmd = Command::new(&words[0]);
        cmd.args(&words[1..]);
        let launch = Launch::new();
        launch.apply(&mut cmd, is_open_mpi(&words[0]));
        Mpirun {
            cmd,
            _launch: launch,
        }
    }
}

impl Deref for Mpirun {
    type Target = Command;
    fn deref(&self) -> &Command {
        &self.cmd
    }
}

impl DerefMut for Mpirun {
    fn deref_mut(&mut self) -> &mut Command {
        &mut self.cmd
    }
}

/// Whether `launcher` is Open MPI's (`--version` says so), asked once per launcher: its
/// ranks get only the environment named with `-x`, where MPICH's hydra passes all of it.
pub fn is_open_mpi(launcher: &str) -> bool {
    static KNOWN: Mutex<BTreeMap<String, bool>> = Mutex::new(BTreeMap::new());
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    *known.entry(launcher.to_owned()).or_insert_with(|| {
        Command::new(launcher)
            .arg("--version")
            .output()
            .is_ok_and(|out| {
                let text = String::from_utf8_lossy(&out.stdout).to_lowercase()
                    + &String::from_utf8_lossy(&out.stderr).to_lowercase();
                text.contains("open mpi") || text.contains("open-mpi")
            })
    })
}

/// A launch's temporary directory and marker; dropping it waits for the launch's processes.
struct Launch {
    dir: PathBuf,
    marker: String,
}

impl Launch {
    /// A fresh directory (short: Open MPI puts Unix sockets under it) and a marker unique to
    /// this launch among every test process on the machine.
    fn new() -> Launch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let marker = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = std::env::temp_dir().join(format!("cdl-{marker}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a launch's temporary directory");
        Launch { dir, marker }
    }

    /// Gives `cmd` (an `mpirun`) the launch's `$TMPDIR` and marker; with Open MPI's launcher
    /// (`openmpi`), also passes the marker on to the ranks with `-x`.
    fn apply(&self, cmd: &mut Command, openmpi: bool) {
        if openmpi {
            cmd.arg("-x").arg(MARKER);
        }
        cmd.env("TMPDIR", &self.dir).env(MARKER, &self.marker);
    }

    /// Whether some process still carries this launch's marker.
    fn running(&self) -> bool {
        let needle = format!("{MARKER}={}\0", self.marker);
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return false;
        };
        procs.flatten().any(|entry| {
            // A process that ended meanwhile (or a zombie) has no readable environment.
            std::fs::read(entry.path().join("environ"))
                .is_ok_and(|env| env.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
    }
}

impl Drop for Launch {
    fn drop(&mut self) {
        let start = Instant::now();
        while self.running() && start.elapsed() < GONE_WITHIN {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
