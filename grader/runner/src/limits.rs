//! Resource limits on a child process: how much memory it may use, how large a file it may
//! write, how many threads and processes it may run, and how much CPU time it may spend.
//!
//! The parent passes them in an environment variable; the child applies memory, file size
//! and CPU time to itself with `setrlimit` before any code under test runs (so do the
//! processes it starts, which inherit them). The number of threads and processes is watched
//! by the parent, because `RLIMIT_NPROC` counts every process of the user and does not
//! apply to root. What the child may still do once they are set is [`crate::sandbox`]'s.

use crate::sandbox::Mode;
use std::fmt;

/// The environment variable that carries [`Limits`] to a child.
pub const LIMITS_VAR: &str = "GRADER_LIMITS";

const MIB: u64 = 1024 * 1024;

/// The limits of one child process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of address space (`RLIMIT_AS`).
    pub memory: u64,
    /// Bytes one written file may reach (`RLIMIT_FSIZE`).
    pub file_size: u64,
    /// Threads and processes the check may run at once (watched by the parent).
    pub tasks: u32,
    /// Seconds of CPU time (`RLIMIT_CPU`): a backstop for a child whose parent is gone.
    pub cpu_secs: u64,
    /// How strictly the child is confined once its limits are set ([`crate::sandbox`]).
    pub sandbox: Mode,
}

impl Default for Limits {
    /// 1 GiB of memory, 64 MiB files, 256 threads and processes, 10 minutes of CPU, and
    /// every protection of the sandbox the system gives.
    fn default() -> Self {
        Limits {
            memory: 1024 * MIB,
            file_size: 64 * MIB,
            tasks: 256,
            cpu_secs: 600,
            sandbox: Mode::default(),
        }
    }
}

/// A byte count as people say it: `1 GiB`, `64 MiB`, `512 KiB`, `100 bytes`.
///
/// ```
/// use kit_runner::limits::bytes;
/// assert_eq!(bytes(1 << 30), "1 GiB");
/// assert_eq!(bytes(3 << 19), "1.5 MiB");
/// ```
pub fn bytes(n: u64) -> String {
    for (unit, size) in [("GiB", MIB * 1024), ("MiB", MIB), ("KiB", 1024)] {
        if n >= size {
            let value = n as f64 / size as f64;
            return if value.fract() == 0.0 {
                format!("{value:.0} {unit}")
            } else {
                format!("{value:.1} {unit}")
            };
        }
    }
    format!("{n} bytes")
}

impl fmt::Display for Limits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "memory {}, files {}, {} threads and processes",
            bytes(self.memory),
            bytes(self.file_size),
            self.tasks
        )
    }
}

impl Limits {
    /// The limits as the environment variable's value.
    ///
    /// ```
    /// use kit_runner::limits::Limits;
    /// let l = Limits::default();
    /// assert_eq!(Limits::decode(&l.encode()), Some(l));
    /// ```
    pub fn encode(&self) -> String {
        format!(
            "memory={},file_size={},tasks={},cpu_secs={},sandbox={}",
            self.memory,
            self.file_size,
            self.tasks,
            self.cpu_secs,
            self.sandbox.name()
        )
    }

    /// Reads [`Limits::encode`]'s text; `None` when any part is missing or not a number.
    pub fn decode(text: &str) -> Option<Limits> {
        let mut limits = Limits::default();
        let mut seen = 0;
        for part in text.split(',') {
            let (key, value) = part.split_once('=')?;
            if key.trim() == "sandbox" {
                limits.sandbox = Mode::from_name(value.trim())?;
                seen += 1;
                continue;
            }
            let value: u64 = value.trim().parse().ok()?;
            match key.trim() {
                "memory" => limits.memory = value,
                "file_size" => limits.file_size = value,
                "tasks" => limits.tasks = u32::try_from(value).ok()?,
                "cpu_secs" => limits.cpu_secs = value,
                _ => return None,
            }
            seen += 1;
        }
        (seen == 5).then_some(limits)
    }

    /// Applies memory, file size and CPU time to this process (Unix), and asks the kernel to
    /// stop it when its parent dies (Linux). Returns what could not be applied.
    pub fn apply_to_self(&self) -> Vec<String> {
        #[cfg(unix)]
        {
            use rustix::process::{setrlimit, Resource, Rlimit};
            let mut missed = Vec::new();
            for (resource, value, name) in [
                (Resource::As, self.memory, "memory"),
                (Resource::Fsize, self.file_size, "file size"),
                (Resource::Cpu, self.cpu_secs, "CPU time"),
                (Resource::Core, 0, "core dumps"),
            ] {
                let limit = Rlimit {
                    current: Some(value),
                    maximum: Some(value),
                };
                if let Err(e) = setrlimit(resource, limit) {
                    missed.push(format!("{name}: {e}"));
                }
            }
            #[cfg(target_os = "linux")]
            if let Err(e) = rustix::process::set_parent_process_death_signal(Some(
                rustix::process::Signal::KILL,
            )) {
                missed.push(format!("parent death signal: {e}"));
            }
            missed
        }
        #[cfg(not(unix))]
        {
            vec!["memory, file size and CPU limits are not enforced on this platform".to_string()]
        }
    }
}
