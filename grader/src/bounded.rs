//! Running cargo or the compiler on the learner's code within bounds: time, memory and
//! output ([`CompileLimits`]), in a process group of its own that is stopped whole at the
//! bound (the way a check's group is: see `child`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The bounds every compile of the learner's code runs under: a file that keeps the
/// compiler busy for ever (an endless `const` evaluation), eats its memory, or makes it print
/// without end must not stop a learner's run or a class's batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompileLimits {
    /// How long the compiler may work on the learner's crate, and then on the harness that
    /// links it, each ([`COMPILE_TIMEOUT_VAR`] or `grade --compile-timeout` change it). The
    /// kit's own crates are not timed: a first build compiles them, and that is not the
    /// learner's doing.
    pub(crate) time: Duration,
    /// Bytes of data memory (`RLIMIT_DATA`) cargo and each compiler process may use.
    pub(crate) memory: u64,
    /// Bytes of the compiler's messages kept for the learner (the rest is counted, not kept).
    pub(crate) output: usize,
    /// Whether the compile runs confined to what a build needs (`bounded::confine`): a class's
    /// grade, where a submission must not name another's files, or the instructor's, into
    /// its build.
    pub(crate) confine: bool,
}

/// The environment variable that sets `CompileLimits::time`, in seconds.
pub const COMPILE_TIMEOUT_VAR: &str = "KIT_COMPILE_TIMEOUT";

impl Default for CompileLimits {
    /// 60 s, 4 GiB, 64 KiB: far more than a lesson's file, or a first build of the kit's
    /// crates, needs; a screenful of errors is a few KiB.
    fn default() -> Self {
        CompileLimits {
            time: Duration::from_secs(60),
            memory: 4 << 30,
            output: 64 * 1024,
            confine: false,
        }
    }
}

impl CompileLimits {
    /// The defaults, with the time from [`COMPILE_TIMEOUT_VAR`] when it holds a number of
    /// seconds above zero.
    pub(crate) fn from_env() -> CompileLimits {
        let time = std::env::var(COMPILE_TIMEOUT_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|secs| secs.is_finite() && *secs > 0.0 && *secs < 1e9)
            .map(Duration::from_secs_f64);
        CompileLimits {
            time: time.unwrap_or(CompileLimits::default().time),
            ..CompileLimits::default()
        }
    }
}

/// What a submission's compile may read of the kit copy at `root`: what cargo and the
/// compiler read when the kit's own crates are already built (a grading copy is warmed from
/// the kit's files alone, and built again from them whenever the kit changed, before any
/// submission compiles there: `grade`'s `prepare_slot`): the practice crate, the harness's
/// source (compiled with it), the types' crate, and the workspace's manifests and
/// configuration. Never the answers (`reference/src/` but its types), the checks'
/// expectations (`grader/checks/src/`), the tests' implementations (`grader/tests/`) or the
/// lessons' help: a compile quotes what it reads (`include_str!` in a `const` that panics),
/// and a grade's report shows what the compiler said.
fn readable_of_copy(root: &Path) -> Vec<PathBuf> {
    let mut readable: Vec<PathBuf> = ["practice", "grader/harness", "reference/src/types"]
        .iter()
        .map(|dir| root.join(dir))
        .collect();
    for file in [
        "Cargo.lock",
        ".cargo",
        "rust-toolchain",
        "rust-toolchain.toml",
    ] {
        readable.push(root.join(file));
    }
    // The workspace's manifest and its members' (cargo reads them all): the members as the
    // manifest names them, so that no other manifest in the copy (a test's fixture) is
    // read. A manifest that cannot be read leaves only its own.
    let manifest = root.join("Cargo.toml");
    let members: Vec<String> = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .and_then(|table| {
            let members = table.get("workspace")?.get("members")?.as_array()?.clone();
            Some(
                members
                    .iter()
                    .filter_map(|m| m.as_str().map(str::to_string))
                    .collect(),
            )
        })
        .unwrap_or_default();
    readable.push(manifest);
    for member in members {
        // A member is a plain folder of the copy (no glob, no way out of it).
        let plain = Path::new(&member)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if plain && !member.contains('*') {
            readable.push(root.join(member).join("Cargo.toml"));
        }
    }
    readable.retain(|path| path.exists());
    readable
}

/// Confines `command`, a compile in the kit copy at `root` that writes to `target`, with a
/// [`grader_checks::sandbox::CompileLayer`]: it reads only what a build needs of the copy
/// ([`readable_of_copy`]; the rest may be listed, not read), the toolchain, the parts of
/// cargo's home a build uses and the system's programs and libraries, and writes only
/// `target` (its temporary files too) and cargo's registry and locks. Returns the
/// protections the system could not give.
pub(crate) fn confine(command: &mut Command, root: &Path, target: &Path) -> Vec<String> {
    confine_to(command, root, target, &[], &[target])
}

/// [`confine`], reading also `readable` and writing only `writable` of the copy (not the
/// whole target folder: the compiler run the grader makes itself, which reads the kit's
/// compiled crates only as links it was given, never the reference's or the checks').
pub(crate) fn confine_to(
    command: &mut Command,
    root: &Path,
    target: &Path,
    readable_too: &[&Path],
    writable_in_copy: &[&Path],
) -> Vec<String> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let from_env = |var: &str, default: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(default)))
    };
    let temp = target.join("kit-tmp");
    let _ = std::fs::create_dir_all(&temp);
    let mut readable: Vec<PathBuf> = readable_of_copy(root);
    readable.extend(readable_too.iter().map(|p| p.to_path_buf()));
    readable.extend(from_env("RUSTUP_HOME", ".rustup").filter(|p| p.is_dir()));
    // The program itself, found on PATH when it is a bare name: its folder (a rustup proxy's,
    // `~/.cargo/bin`, which need not be cargo's home) and the toolchain it leads to
    // (…/toolchains/NAME/bin/cargo), wherever they are.
    let program = PathBuf::from(command.get_program());
    let found = if program.components().count() == 1 {
        std::env::var_os("PATH")
            .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .map(|dir| dir.join(&program))
            .find(|candidate| candidate.is_file())
    } else {
        Some(program)
    };
    for program in std::env::var_os("CARGO")
        .map(PathBuf::from)
        .into_iter()
        .chain(found)
    {
        readable.extend(program.parent().map(Path::to_path_buf));
        if let Ok(real) = std::fs::canonicalize(&program) {
            // A rustup proxy leads to rustup itself, in cargo's home: the toolchain it runs
            // is under RUSTUP_HOME (readable above), and cargo's home is not opened whole.
            let proxy = real
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rustup"));
            if !proxy {
                readable.extend(real.parent().and_then(Path::parent).map(Path::to_path_buf));
            }
        }
    }
    let mut writable: Vec<PathBuf> = writable_in_copy.iter().map(|p| p.to_path_buf()).collect();
    writable.push(temp.clone());
    // Of cargo's home, only what a build uses: the registry's sources and index, git
    // checkouts, cargo's programs, its configuration and the lock files at its top (made
    // first if missing: a rule needs the file). Never the rest: `credentials.toml` holds a
    // publishing token, and a compile quotes what `include_str!` reads.
    if let Some(cargo_home) = from_env("CARGO_HOME", ".cargo").filter(|p| p.is_dir()) {
        for dir in ["registry", "git"] {
            let dir = cargo_home.join(dir);
            if dir.is_dir() {
                writable.push(dir);
            }
        }
        for file in [".package-cache", ".package-cache-mutate", ".global-cache"] {
            let file = cargo_home.join(file);
            let made = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&file)
                .is_ok();
            if made {
                writable.push(file);
            }
        }
        let bin = cargo_home.join("bin");
        if bin.is_dir() {
            readable.push(bin);
        }
        // Cargo's configuration may hold a registry token too (`[registry] token`): read
        // only when it holds none.
        for config in ["config.toml", "config"] {
            let config = cargo_home.join(config);
            let tokenless = std::fs::read_to_string(&config)
                .is_ok_and(|text| !text.to_ascii_lowercase().contains("token"));
            if tokenless {
                readable.push(config);
            }
        }
    }
    let readable: Vec<&Path> = readable.iter().map(PathBuf::as_path).collect();
    let writable: Vec<&Path> = writable.iter().map(PathBuf::as_path).collect();
    // The whole copy may be listed (cargo looks for its packages' targets), not read.
    let layer = grader_checks::sandbox::CompileLayer::prepare(&readable, &[root], &writable);
    let missing = layer.missing.clone();
    keep_only_build_env(command);
    command.env("TMPDIR", &temp);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: both make only system calls, as a hook between fork and exec must.
        unsafe {
            // No file the grader inherited open: Landlock rules only opening files, and a
            // pipe is opened again by its path (`include_str!("/dev/fd/8")`) whatever it
            // says. Before the layer, which may refuse the calls this needs.
            command.pre_exec(|| kit_runner::descriptors::close_on_exec_from(3));
            command.pre_exec(move || layer.apply());
        }
    }
    missing
}

/// The grader's environment variables a compile keeps: what finds and drives the toolchain,
/// and the settings that change what cargo builds. Nothing else reaches it — a submission's
/// `env!("GITHUB_TOKEN")` is a compile error, not the instructor's token in a message.
const BUILD_ENV: [&str; 16] = [
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_HOME",
    "CARGO_TARGET_DIR",
    "CARGO_TERM_COLOR",
    "NO_COLOR",
    "RUSTC",
    "RUSTC_WRAPPER",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
];

/// Clears `command`'s environment but for [`BUILD_ENV`], cargo's own `CARGO_BUILD_*` and
/// `CARGO_PROFILE_*` settings, and what the kit set on the command itself.
fn keep_only_build_env(command: &mut Command) {
    let set: Vec<(std::ffi::OsString, Option<std::ffi::OsString>)> = command
        .get_envs()
        .map(|(k, v)| (k.to_os_string(), v.map(|v| v.to_os_string())))
        .collect();
    let inherited: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
        .filter(|(name, _)| {
            name.to_str().is_some_and(|name| {
                BUILD_ENV.contains(&name)
                    || name.starts_with("CARGO_BUILD_")
                    || name.starts_with("CARGO_PROFILE_")
            })
        })
        .collect();
    command.env_clear().envs(inherited);
    for (name, value) in set {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
}

/// A bound the compiler reached: it was stopped (or it failed for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    /// It ran longer than this.
    Time(Duration),
    /// It went over this many bytes of memory.
    Memory(u64),
}

impl Exceeded {
    /// The compile error it stands for, as the learner reads it.
    pub(crate) fn message(self) -> String {
        match self {
            Exceeded::Time(limit) => format!(
                "error: the compiler ran longer than {} on this code and was stopped (an \
                 endless loop in a `const`?)\n",
                secs(limit)
            ),
            Exceeded::Memory(limit) => format!(
                "error: the compiler went over its memory limit ({}) on this code and was \
                 stopped\n",
                grader_checks::limits::bytes(limit)
            ),
        }
    }
}

/// `60 s`, `2.5 s`.
fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

/// One line of a bounded run's output, without its line end: standard output or error.
pub(crate) enum Line {
    Out(Vec<u8>),
    Err(Vec<u8>),
    /// A line longer than [`LINE_KEPT`], of this many bytes: dropped unread.
    Cut(usize),
}

/// What a line does to the clock of a bounded run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clock {
    /// The learner's code is being compiled from now: the time bound starts (again).
    Start,
    /// It is done: no bound until the next start.
    Stop,
    /// Nothing changes.
    Keep,
}

/// How a bounded run ended.
pub(crate) struct BoundedEnd {
    /// Its exit status.
    pub(crate) status: std::process::ExitStatus,
    /// The bound it reached, if it did.
    pub(crate) exceeded: Option<Exceeded>,
}

/// The longest line a bounded run passes on; a longer one is passed on as its length alone
/// ([`Line::Cut`]), never held whole.
const LINE_KEPT: usize = 256 * 1024;

/// The most lines read from a bounded run and not yet looked at.
const LINES_QUEUED: usize = 1024;

/// Runs `command` (cargo, or the compiler) under `limits`: in a process group of its own
/// (see [`crate::child`]), its data memory limited, its standard output and error read line
/// by line and handed to `each`, whose answer starts or stops the clock (`timed` says
/// whether it runs from the start). When the clock runs past [`CompileLimits::time`], the
/// whole group is stopped. A compiler that failed to allocate is reported as over its
/// memory.
pub(crate) fn run_bounded(
    command: &mut Command,
    limits: &CompileLimits,
    timed: bool,
    mut each: impl FnMut(Line) -> Clock,
) -> std::io::Result<BoundedEnd> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    limit_memory(command, limits.memory);
    let mut process = crate::child::Contained::spawn(command)?;
    // Bounded: a compiler that floods its output waits on its pipe, rather than filling
    // the grader's memory with lines not yet looked at.
    let (sender, lines) = std::sync::mpsc::sync_channel::<Line>(LINES_QUEUED);
    let child = process.child();
    let streams: [Option<Box<dyn std::io::Read + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    ];
    for (index, stream) in streams.into_iter().enumerate() {
        let Some(stream) = stream else { continue };
        let sender = sender.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stream);
            while let Some((line, cut)) = read_line_bounded(&mut reader, LINE_KEPT) {
                let line = match (cut, index) {
                    (0, 0) => Line::Out(line),
                    (0, _) => Line::Err(line),
                    (cut, _) => Line::Cut(line.len() + cut),
                };
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
    }
    drop(sender);
    let mut deadline = timed.then(|| Instant::now() + limits.time);
    let mut out_of_memory = false;
    loop {
        let next = match deadline {
            // Looked at before every line: lines waiting in the queue never hold the clock
            // back (a receive with no time left still hands over what is queued).
            Some(at) if Instant::now() >= at => {
                let status = process.stop()?;
                return Ok(BoundedEnd {
                    status,
                    exceeded: Some(Exceeded::Time(limits.time)),
                });
            }
            Some(at) => match lines.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(line) => Some(line),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    let status = process.stop()?;
                    return Ok(BoundedEnd {
                        status,
                        exceeded: Some(Exceeded::Time(limits.time)),
                    });
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => None,
            },
            None => lines.recv().ok(),
        };
        let Some(line) = next else { break };
        if let Line::Err(text) = &line {
            out_of_memory |= says_out_of_memory(text);
        }
        match each(line) {
            Clock::Start => deadline = Some(Instant::now() + limits.time),
            Clock::Stop => deadline = None,
            Clock::Keep => {}
        }
    }
    // Both streams closed: the process is ending (or handed them on and left, and then the
    // group is stopped all the same).
    let status = match deadline {
        Some(at) => loop {
            if let Some(status) = process.child().try_wait()? {
                break status;
            }
            if Instant::now() >= at {
                let status = process.stop()?;
                return Ok(BoundedEnd {
                    status,
                    exceeded: Some(Exceeded::Time(limits.time)),
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        },
        None => process.child().wait()?,
    };
    // Whatever it left running goes now.
    process.stop()?;
    let exceeded = (out_of_memory && !status.success()).then_some(Exceeded::Memory(limits.memory));
    Ok(BoundedEnd { status, exceeded })
}

/// Whether a line of the compiler's standard error says it could not allocate (Rust's
/// `memory allocation of N bytes failed`, LLVM's `out of memory`).
fn says_out_of_memory(line: &[u8]) -> bool {
    let text = String::from_utf8_lossy(line);
    (text.contains("memory allocation of") && text.contains("failed"))
        || text.contains("LLVM ERROR: out of memory")
}

/// The next line of `reader` without its line end, at most `max` bytes of it, and how many
/// bytes of a longer line were read and dropped; `None` at the end.
fn read_line_bounded(reader: &mut impl BufRead, max: usize) -> Option<(Vec<u8>, usize)> {
    let mut line = Vec::new();
    let mut cut = 0;
    let mut any = false;
    loop {
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return any.then_some((line, cut)),
        };
        if buffer.is_empty() {
            return any.then_some((line, cut));
        }
        any = true;
        let (part, used, ends) = match buffer.iter().position(|b| *b == b'\n') {
            Some(i) => (&buffer[..i], i + 1, true),
            None => (buffer, buffer.len(), false),
        };
        let room = max.saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        cut += part.len().saturating_sub(room);
        reader.consume(used);
        if ends {
            if cut == 0 && line.last() == Some(&b'\r') {
                line.pop();
            }
            return Some((line, cut));
        }
    }
}

/// Limits the data memory of the process `command` starts, and so of every process it
/// starts (Unix).
fn limit_memory(command: &mut Command, bytes: u64) {
    #[cfg(unix)]
    {
        use rustix::process::{getrlimit, Resource};
        use std::os::unix::process::CommandExt;
        // Never above the limit the grader itself runs under: raising it would be refused.
        let hard = getrlimit(Resource::Data).maximum;
        let bytes = hard.map_or(bytes, |hard| hard.min(bytes));
        let limit = rustix::process::Rlimit {
            current: Some(bytes),
            maximum: hard,
        };
        // SAFETY: the closure runs in the child between fork and exec, and makes one
        // system call (setrlimit), which is async-signal-safe; it allocates nothing and
        // takes no lock.
        unsafe {
            command.pre_exec(move || {
                rustix::process::setrlimit(rustix::process::Resource::Data, limit)
                    .map_err(std::io::Error::from)
            });
        }
    }
    #[cfg(not(unix))]
    let _ = (command, bytes);
}

/// How much of the compiler's messages is kept: up to a budget of bytes; what is over it is
/// counted, for one line that says so.
pub(crate) struct Kept {
    left: usize,
    dropped: usize,
}

impl Kept {
    /// A budget of `bytes`.
    pub(crate) fn new(bytes: usize) -> Kept {
        Kept {
            left: bytes,
            dropped: 0,
        }
    }

    /// Whether a message of `len` bytes is kept (it fits); counted as dropped otherwise.
    pub(crate) fn take(&mut self, len: usize) -> bool {
        if len <= self.left {
            self.left -= len;
            true
        } else {
            self.left = 0;
            self.dropped += len;
            false
        }
    }

    /// Counts `len` bytes that were not kept, whatever the budget.
    pub(crate) fn lose(&mut self, len: usize) {
        self.dropped += len;
    }

    /// The line that says how much was not kept, if anything was not.
    pub(crate) fn more(&self) -> Option<String> {
        (self.dropped > 0).then(|| {
            format!(
                "… {} bytes more of the compiler's messages not shown\n",
                self.dropped
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate that names a file into its build, as a submission could name another
    /// learner's file or one of the instructor's: compiled by the real compiler, confined.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_confined_compile_reads_nothing_outside_its_copy_and_the_toolchain() {
        if !grader_checks::sandbox::probe().is_empty() {
            // Where Landlock is missing, grade refuses without --allow-weak-sandbox (tests
            // of that live in tests/sandbox.rs); there is nothing to confine with here.
            assert!(grader_checks::sandbox::CompileLayer::prepare(&[], &[], &[])
                .missing
                .iter()
                .any(|m| m.contains("Landlock")));
            return;
        }
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        std::fs::write(&secret, "another learner's answer").unwrap();
        let copy = tempfile::tempdir().unwrap();
        let target = copy.path().join("target");
        std::fs::create_dir_all(&target).unwrap();
        let src = copy.path().join("practice/src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("inside.txt"), "mine").unwrap();
        // The copy's answers: in it, and not the learner's to read.
        let answers = copy.path().join("reference/src");
        std::fs::create_dir_all(&answers).unwrap();
        std::fs::write(answers.join("retry.rs"), "the reference answer").unwrap();
        let compile = |source: String| {
            std::fs::write(src.join("lib.rs"), source).unwrap();
            let mut command = Command::new(std::env::var("RUSTC").unwrap_or("rustc".into()));
            command
                .args([
                    "--crate-type=lib",
                    "--edition=2021",
                    "practice/src/lib.rs",
                    "--out-dir",
                ])
                .arg(&target)
                .current_dir(copy.path());
            let missing = confine(&mut command, copy.path(), &target);
            assert!(missing.is_empty(), "{missing:?}");
            let mut said = String::new();
            let ended = run_bounded(&mut command, &CompileLimits::default(), true, |line| {
                if let Line::Err(text) = line {
                    said.push_str(&String::from_utf8_lossy(&text));
                    said.push('\n');
                }
                Clock::Keep
            })
            .unwrap();
            (ended.status.success(), said)
        };
        let (ok, said) = compile("pub const MINE: &str = include_str!(\"inside.txt\");\n".into());
        assert!(ok, "a file inside the copy is read: {said}");
        let (ok, said) = compile(format!(
            "pub const THEIRS: &str = include_str!({:?});\n",
            secret.display()
        ));
        assert!(!ok, "a file outside the copy was read");
        assert!(said.contains("Permission denied"), "{said}");
        assert!(!said.contains("another learner's answer"), "{said}");
        let (ok, said) =
            compile("pub const R: &str = include_str!(\"../../reference/src/retry.rs\");\n".into());
        assert!(!ok, "the copy's answers were read");
        assert!(said.contains("Permission denied"), "{said}");
        assert!(!said.contains("the reference answer"), "{said}");
        // The system's git settings may hold credentials: not read either.
        if Path::new("/etc/gitconfig").is_file() {
            let (ok, said) =
                compile("pub const G: &str = include_str!(\"/etc/gitconfig\");\n".into());
            assert!(!ok && said.contains("Permission denied"), "{said}");
        } else {
            eprintln!("!! no /etc/gitconfig here: its refusal is not tested");
        }
        // Cargo's home is open only where a build needs it: its credentials are not.
        let credentials = std::env::var_os("HOME")
            .map(PathBuf::from)
            .map(|home| home.join(".cargo"))
            .filter(|home| std::env::var_os("CARGO_HOME").is_none() && home.is_dir())
            .or_else(|| std::env::var_os("CARGO_HOME").map(PathBuf::from))
            .map(|home| home.join("credentials.toml"));
        if let Some(credentials) = credentials.filter(|c| c.parent().is_some_and(Path::is_dir)) {
            let made = !credentials.exists();
            if made {
                std::fs::write(&credentials, "token = \"kit-test-not-a-token\"\n").unwrap();
            }
            let (ok, said) = compile(format!(
                "pub const TOKEN: &str = include_str!({:?});\n",
                credentials.display()
            ));
            if made {
                let _ = std::fs::remove_file(&credentials);
            }
            assert!(!ok && said.contains("Permission denied"), "{said}");
            assert!(!said.contains("token ="), "{said}");
            // Nor a configuration that holds a registry token.
            let config = credentials.with_file_name("config.toml");
            if !config.exists() {
                std::fs::write(&config, "[registry]\ntoken = \"kit-test-not-a-token\"\n").unwrap();
                let (ok, said) = compile(format!(
                    "pub const CONFIG: &str = include_str!({:?});\n",
                    config.display()
                ));
                let _ = std::fs::remove_file(&config);
                assert!(!ok && said.contains("Permission denied"), "{said}");
                assert!(!said.contains("token ="), "{said}");
            }
        }
        // It writes nowhere but its target folder: not beside the file it names either.
        let (ok, said) = compile(format!(
            "#[path = {:?}] mod theirs;\n",
            outside.path().join("missing.rs").display()
        ));
        assert!(!ok && said.contains("missing.rs"), "{said}");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn the_compiler_runs_under_its_memory_limit_and_an_allocation_failure_is_named() {
        let limits = CompileLimits {
            memory: 256 << 20,
            ..CompileLimits::default()
        };
        let mut said = Vec::new();
        let ended = run_bounded(
            Command::new("sh").args(["-c", "ulimit -d"]),
            &limits,
            true,
            |line| {
                if let Line::Out(text) = line {
                    said.push(String::from_utf8_lossy(&text).into_owned());
                }
                Clock::Keep
            },
        )
        .unwrap();
        assert!(ended.status.success());
        // `ulimit -d` counts KiB.
        assert_eq!(said, [(256 * 1024).to_string()]);
        let failing = "echo 'memory allocation of 4096 bytes failed' >&2; exit 134";
        let ended = run_bounded(
            Command::new("sh").args(["-c", failing]),
            &limits,
            true,
            |_| Clock::Keep,
        )
        .unwrap();
        assert_eq!(ended.exceeded, Some(Exceeded::Memory(256 << 20)));
        assert!(Exceeded::Memory(256 << 20)
            .message()
            .contains("the compiler went over its memory limit (256 MiB)"));
    }

    #[test]
    fn the_clock_runs_only_while_the_learners_code_compiles() {
        let limits = CompileLimits {
            time: Duration::from_millis(300),
            ..CompileLimits::default()
        };
        // A second of silence before the learner's crate starts is not counted; the same
        // after it starts is.
        let script = "sleep 1; echo start; echo stop; sleep 1; echo start; sleep 30";
        let started = Instant::now();
        let mut seen = Vec::new();
        let ended = run_bounded(
            Command::new("sh").args(["-c", script]),
            &limits,
            false,
            |line| match line {
                Line::Out(text) if text == b"start" => {
                    seen.push("start");
                    Clock::Start
                }
                Line::Out(text) if text == b"stop" => {
                    seen.push("stop");
                    Clock::Stop
                }
                _ => Clock::Keep,
            },
        )
        .unwrap();
        assert_eq!(ended.exceeded, Some(Exceeded::Time(limits.time)));
        assert_eq!(seen, ["start", "stop", "start"]);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_copy_is_readable_only_where_a_build_reads_it() {
        let copy = tempfile::tempdir().unwrap();
        let root = copy.path();
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "Cargo.toml",
            "[workspace]\nmembers = [\"practice\", \"reference\", \"grader/checks\", \"../outside\"]\n",
        );
        for member in ["practice", "reference", "grader/checks"] {
            write(&format!("{member}/Cargo.toml"), "[package]\n");
        }
        write("practice/src/lib.rs", "");
        write("reference/src/retry.rs", "");
        write("reference/src/types/lib.rs", "");
        write("grader/tests/fixture/Cargo.toml", "[package]\n");
        write("Cargo.lock", "");
        let readable = readable_of_copy(root);
        let relative: Vec<String> = readable
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        let mut expected = vec![
            "practice",
            "reference/src/types",
            "Cargo.lock",
            "Cargo.toml",
            "practice/Cargo.toml",
            "reference/Cargo.toml",
            "grader/checks/Cargo.toml",
        ];
        let mut relative: Vec<&str> = relative.iter().map(String::as_str).collect();
        expected.sort_unstable();
        relative.sort_unstable();
        // Not the answers, the checks' sources, another manifest, nor a member outside.
        assert_eq!(relative, expected);
    }

    #[test]
    fn a_flood_of_output_does_not_hold_back_the_clock() {
        // A hundred thousand lines, read faster than they are looked at: the bound still
        // stops the run on time (it once took the queue's length to notice, here some
        // seconds). Looked at slowly by sleeping, not spinning: the other tests of this
        // binary (a watch's timing among them) keep the cores. Bounded if it fails: the
        // writer ends by itself.
        let limits = CompileLimits {
            time: Duration::from_millis(500),
            ..CompileLimits::default()
        };
        let started = Instant::now();
        let ended = run_bounded(
            Command::new("sh").args(["-c", "yes | head -n 100000; sleep 30"]),
            &limits,
            true,
            |_| {
                std::thread::sleep(Duration::from_micros(50));
                Clock::Keep
            },
        )
        .unwrap();
        assert_eq!(ended.exceeded, Some(Exceeded::Time(limits.time)));
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }

    /// A confined compile sees the toolchain's variables and what the kit set, never the
    /// rest of the grader's environment (a platform's token).
    #[test]
    fn a_confined_compile_keeps_only_the_build_environment() {
        let dir = tempfile::tempdir().unwrap();
        let mut command = Command::new("env");
        command.env("KIT_SET_THIS", "1");
        // The test's own environment stands in for the grader's, with a secret in it (a
        // name no other test reads).
        let secret = "GRADER_TEST_SECRET_TOKEN";
        std::env::set_var(secret, "ghp_secret");
        keep_only_build_env(&mut command);
        let out = command.current_dir(dir.path()).output().unwrap();
        std::env::remove_var(secret);
        let seen = String::from_utf8_lossy(&out.stdout);
        assert!(seen.contains("KIT_SET_THIS=1"), "{seen}");
        assert!(seen.lines().any(|l| l.starts_with("PATH=")), "{seen}");
        assert!(!seen.contains("ghp_secret"), "{seen}");
    }

    #[test]
    fn messages_past_the_budget_are_counted_and_long_lines_cut() {
        let mut kept = Kept::new(10);
        assert!(kept.take(6));
        assert!(!kept.take(6), "over the budget");
        assert!(!kept.take(1), "nothing after the first one dropped");
        kept.lose(100);
        assert_eq!(
            kept.more().as_deref(),
            Some("… 107 bytes more of the compiler's messages not shown\n")
        );
        assert_eq!(Kept::new(10).more(), None);
        let mut reader = std::io::Cursor::new(b"short\r\n0123456789abc\nend".to_vec());
        assert_eq!(
            read_line_bounded(&mut reader, 8),
            Some((b"short".to_vec(), 0))
        );
        assert_eq!(
            read_line_bounded(&mut reader, 8),
            Some((b"01234567".to_vec(), 5))
        );
        assert_eq!(
            read_line_bounded(&mut reader, 8),
            Some((b"end".to_vec(), 0))
        );
        assert_eq!(read_line_bounded(&mut reader, 8), None);
    }
}
