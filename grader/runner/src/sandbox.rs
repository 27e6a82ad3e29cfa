//! The sandbox of a process that runs code under test: what it may still do once the job
//! starts, beyond the resource limits of [`limits`](crate::limits).
//!
//! A check's process is confined before any code under test runs in it (before the learner's
//! library is loaded, so its constructors are confined too). On Linux it gets:
//! - **no new privileges** (`PR_SET_NO_NEW_PRIVS`), which the two below need;
//! - a **Landlock** ruleset: it may read only the files it was given (the learner's library)
//!   and the system's shared libraries (which that library may need), and create, write or
//!   remove nothing: the one file it writes, its
//!   report, is opened before, and stays the only writable thing it holds. No TCP, no
//!   abstract sockets, and no signals to processes outside the sandbox;
//! - a **seccomp** filter that refuses (`EPERM`) what a pure function never needs: new
//!   processes (threads are allowed), running programs, sockets, tracing or reading other
//!   processes, signals to any process but itself (also through a file's owner, which gets
//!   SIGIO: `F_SETOWN`, `FIOSETOWN`), file locks and leases (seen by every process that opens
//!   the file), leaving its process group or session,
//!   namespaces, mounts, `io_uring` and `memfd` (memory outside the address-space limit).
//!
//! Where the system cannot give one of them (no Landlock before Linux 5.13, a container
//! whose seccomp profile refuses filters, another system), [`confine`] says which are off;
//! whether a run may go on without them is the grader's choice ([`Mode`]). [`probe`] tells
//! the grader beforehand, without confining anything. This module depends on nothing else in
//! the crate.

use std::path::PathBuf;

/// How strictly a check's process is confined: the grader's choice, carried to the child in
/// [`Limits`](crate::limits::Limits). The default is [`Mode::BestEffort`], or what
/// [`MODE_VAR`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Not at all: for the kit's own tests of the defences that stand in for the sandbox
    /// (process groups, leak detection, limits), which the sandbox would hide.
    Off,
    /// Everything the system gives; what it cannot is left off (a learner's own runs: the
    /// grader says once which protections are off).
    BestEffort,
    /// Everything, or the job does not start ([`EXIT_UNCONFINED`]): grading a class.
    Required,
}

/// The environment variable that sets the default [`Mode`] of a learner's runs (`off`,
/// `best` or `required`; anything else is the default): for the kit's own tests of the
/// defences that stand in for the sandbox, and for a system where it gets in the way.
/// `grade` does not read it.
pub const MODE_VAR: &str = "GRADER_SANDBOX";

impl Default for Mode {
    fn default() -> Self {
        std::env::var(MODE_VAR)
            .ok()
            .and_then(|name| Mode::from_name(name.trim()))
            .unwrap_or(Mode::BestEffort)
    }
}

impl Mode {
    /// The mode's name in [`Limits::encode`](crate::limits::Limits::encode).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::BestEffort => "best",
            Mode::Required => "required",
        }
    }

    /// [`Mode::name`] read back.
    pub(crate) fn from_name(name: &str) -> Option<Mode> {
        [Mode::Off, Mode::BestEffort, Mode::Required]
            .into_iter()
            .find(|m| m.name() == name)
    }
}

/// The exit status of a check's process that could not be confined as [`Mode::Required`]
/// demands: it ran no code under test.
pub const EXIT_UNCONFINED: u8 = 4;

/// Confines this process as the module doc says, letting it read only `readable` (files
/// that do not exist are left out). Returns the protections that could not be applied, each
/// with its reason; empty when all are on.
///
/// Call it while the process has one thread: Landlock and seccomp apply to the calling
/// thread and the threads and processes it starts later, not to threads already running.
pub fn confine(readable: &[PathBuf]) -> Vec<String> {
    let mut missing = confine_files(readable);
    missing.extend(confine_calls(Calls::Whole));
    missing
}

/// The first half of [`confine`]: no new privileges, and the Landlock ruleset. A runner
/// zygote ([`crate::zygote`]) takes this half once (with [`Calls::Lasting`]), and each
/// runner it forks the other (a nested Landlock domain, and [`Calls::Own`]).
pub(crate) fn confine_files(readable: &[PathBuf]) -> Vec<String> {
    #[cfg(target_os = "linux")]
    {
        linux::confine_files(readable)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = readable;
        vec!["the sandbox (Landlock, seccomp) exists only on Linux".to_string()]
    }
}

/// Which part of the system-call filter [`confine_calls`] installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Calls {
    /// All of it.
    Whole,
    /// The part that names no process and that a runner zygote can live with: every refused
    /// call but those about processes (new ones, signals, limits, process groups), which
    /// the zygote makes for its runners; with `clone3` refused. The zygote takes it once,
    /// and each runner it forks inherits it and adds [`Calls::Own`]: together, the same
    /// filter as [`Calls::Whole`], but the kernel compiles the large part once per zygote
    /// rather than once per check (it was a tenth of a small check's time).
    Lasting,
    /// The rest after [`Calls::Lasting`]: the calls about processes, with this process's
    /// own id in their rules.
    Own,
}

/// The second half of [`confine`]: the seccomp filter (`part` of it), whose rules name this
/// process's own id (the one process it may signal), so it is made in the process it
/// confines.
pub(crate) fn confine_calls(part: Calls) -> Vec<String> {
    #[cfg(target_os = "linux")]
    {
        linux::seccomp(part).err().into_iter().collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = part;
        Vec::new()
    }
}

/// Refuses this thread, and the threads it starts (none: that is what is refused), any new
/// thread or process (`EPERM`): a runner's threads call it once it has started the threads
/// it runs cases on, so that the learner's code, which has no use for threads (its
/// callbacks cannot leave the thread they were given on), cannot spin up more, and a
/// submission in a class cannot take the CPU from the others. `Err` says why it could not
/// be done.
pub(crate) fn refuse_threads() -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        linux::refuse_threads()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err("refusing new threads (seccomp) exists only on Linux".to_string())
    }
}

/// A first layer of the sandbox, made ready in the grader for a harness program it starts, and
/// applied in the started process between `fork` and `exec` ([`BeforeExec::apply`]): so that
/// code linked into the program, which may run before its `main` (constructors), already runs
/// confined. It lets the process read and run the program and the system's shared libraries
/// (which the dynamic loader needs) and write its report, and refuses new processes, sockets,
/// tracing, leaving its process group, and signals to process groups or to every process.
/// The program's `main` then confines itself fully ([`confine`]), which narrows this layer
/// further.
#[derive(Debug)]
pub struct BeforeExec {
    #[cfg(target_os = "linux")]
    ruleset: Option<std::os::fd::OwnedFd>,
    #[cfg(target_os = "linux")]
    filter: Option<Vec<seccompiler::sock_filter>>,
    /// The protections this layer lacks, each with its reason.
    pub missing: Vec<String>,
}

impl BeforeExec {
    /// Makes the layer ready for starting `program`, which may write the existing file
    /// `report` and read the files `readable` (allocates: call it before `fork`).
    pub fn prepare(
        program: &std::path::Path,
        report: &std::path::Path,
        readable: &[&std::path::Path],
    ) -> BeforeExec {
        #[cfg(target_os = "linux")]
        {
            linux::before_exec(program, report, readable)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (program, report, readable);
            BeforeExec {
                missing: vec!["the sandbox (Landlock, seccomp) exists only on Linux".into()],
            }
        }
    }

    /// Applies the layer to this process: only system calls, no allocation, so that it may
    /// run between `fork` and `exec` in a process with other threads.
    ///
    /// # Errors
    ///
    /// The system call that failed, when a part made ready could not be applied.
    pub fn apply(&self) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: plain system calls; the ruleset's descriptor and the filter stay alive
            // through them (they are `self`'s).
            unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if let Some(ruleset) = &self.ruleset {
                    if libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                if let Some(filter) = &self.filter {
                    let program = libc::sock_fprog {
                        len: filter.len() as u16,
                        filter: filter.as_ptr() as *mut libc::sock_filter,
                    };
                    if libc::prctl(
                        libc::PR_SET_SECCOMP,
                        libc::SECCOMP_MODE_FILTER,
                        &program as *const libc::sock_fprog,
                    ) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
            }
        }
        Ok(())
    }
}

/// The layer a compile of the learner's code (cargo, or the compiler alone) runs under, made
/// ready in the grader and applied between `fork` and `exec` ([`CompileLayer::apply`]).
///
/// Compiling runs no code of the learner's, but it reads files the learner's code names
/// (`include_str!`, `#[path]`), and quotes them in its messages. Under this layer it reads
/// only what a build needs — the kit's copy, the toolchain, cargo's home, the system's
/// programs and libraries — and writes only the copy's target folder and cargo's home:
/// another submission, the gradebook or any other file on the machine cannot be named into
/// a build. TCP, and signals and abstract sockets outside the build, are refused too.
#[derive(Debug)]
pub struct CompileLayer {
    #[cfg(target_os = "linux")]
    ruleset: Option<std::os::fd::OwnedFd>,
    /// The protections this layer lacks, each with its reason.
    pub missing: Vec<String>,
}

impl CompileLayer {
    /// Makes the layer ready (allocates: call it before `fork`): `readable` may be read and
    /// its programs run, `listable` only listed (the names of what a folder holds, at any
    /// depth, never a file's content), `writable` also written. The system's folders of
    /// programs and libraries are readable too.
    pub fn prepare(
        readable: &[&std::path::Path],
        listable: &[&std::path::Path],
        writable: &[&std::path::Path],
    ) -> CompileLayer {
        #[cfg(target_os = "linux")]
        {
            match linux::compile_ruleset(readable, listable, writable) {
                Ok(ruleset) => CompileLayer {
                    ruleset: Some(ruleset),
                    missing: Vec::new(),
                },
                Err(e) => CompileLayer {
                    ruleset: None,
                    missing: vec![e],
                },
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (readable, listable, writable);
            CompileLayer {
                missing: vec!["the sandbox (Landlock, seccomp) exists only on Linux".to_string()],
            }
        }
    }

    /// Applies the layer to this process: only system calls, no allocation, so that it may
    /// run between `fork` and `exec`.
    ///
    /// # Errors
    ///
    /// The system call that failed.
    pub fn apply(&self) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            if let Some(ruleset) = &self.ruleset {
                // SAFETY: plain system calls; the ruleset's descriptor stays alive through
                // them (it is `self`'s).
                unsafe {
                    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    if libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
            }
        }
        Ok(())
    }
}

/// The protections this system cannot give a check's process, each with its reason; empty
/// when it can give them all. Confines nothing.
pub fn probe() -> Vec<String> {
    #[cfg(target_os = "linux")]
    {
        linux::probe()
    }
    #[cfg(not(target_os = "linux"))]
    {
        vec!["the sandbox (Landlock, seccomp) exists only on Linux".to_string()]
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::landlock::{self, access, Ruleset};
    use super::Calls;
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    /// The newest Landlock interface the rules below were written and tested for; a kernel
    /// with an older one enforces what it knows ([`probe`] names the rest).
    const ABI_USED: i64 = 6;

    pub(super) fn confine_files(readable: &[PathBuf]) -> Vec<String> {
        let mut missing = Vec::new();
        // SAFETY: a plain prctl on this process.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            missing.push(format!(
                "no new privileges: {}",
                std::io::Error::last_os_error()
            ));
        }
        if let Err(e) = landlock(readable) {
            missing.push(e);
        }
        missing
    }

    pub(super) fn before_exec(
        program: &std::path::Path,
        report: &std::path::Path,
        readable: &[&std::path::Path],
    ) -> super::BeforeExec {
        let mut missing = Vec::new();
        let ruleset = match exec_ruleset(program, report, readable) {
            Ok(ruleset) => ruleset,
            Err(e) => {
                missing.push(e);
                None
            }
        };
        let filter = match before_exec_calls().and_then(|rules| filter(rules, libc::EPERM, arch()?))
        {
            Ok(program) => Some(program),
            Err(e) => {
                missing.push(format!("system-call filter (seccomp): {e}"));
                None
            }
        };
        super::BeforeExec {
            ruleset,
            filter,
            missing,
        }
    }

    /// The Landlock ruleset of [`before_exec`], as a descriptor to apply later; `None` where
    /// the kernel has no Landlock.
    fn exec_ruleset(
        program: &std::path::Path,
        report: &std::path::Path,
        readable: &[&std::path::Path],
    ) -> Result<Option<std::os::fd::OwnedFd>, String> {
        let abi = landlock::abi();
        if abi < 1 {
            return Err(NO_LANDLOCK.to_string());
        }
        let mut ruleset = denying_all(abi)?;
        ruleset.allow(program, access::READ_FILE | access::EXECUTE, true)?;
        ruleset.allow(report, access::WRITE_FILE | access::TRUNCATE, true)?;
        for file in readable {
            ruleset.allow(file, access::READ_FILE, false)?;
        }
        allow_system_libraries(
            &mut ruleset,
            access::READ_FILE | access::READ_DIR | access::EXECUTE,
        )?;
        Ok(Some(ruleset.into_fd()))
    }

    /// Lets `ruleset` reach the system's shared libraries with `rights`, and read the
    /// dynamic loader's cache that finds them by name.
    ///
    /// Not the libraries' separate debug information (`debug/` in a library folder, as
    /// Debian's `libc6-dbg` installs it): nothing in a runner needs it but the backtrace of
    /// a panic, whose symbolizer would read and inflate the C library's for every panic
    /// (tens of milliseconds each) to name frames a learner is never shown (only their own
    /// are kept: `panics::learner_frames`). A folder that holds `debug/` is allowed entry by
    /// entry without it, any other whole (where the libraries lie in the folder itself, as
    /// on Arch or Fedora, entry by entry would be thousands of rules, fixed to the files
    /// there when the rules were made); a folder reached by two names (`/lib` as a link to
    /// `/usr/lib`) once.
    ///
    /// An entry that is a symbolic link is left out: its rule would be on what it points
    /// to, maybe outside every library folder (`/usr/lib/cpp` to `/usr/bin/cpp-12`). A link
    /// to a library in these folders is covered by the rule on its target's own entry.
    ///
    /// A process already confined this way (a runner forked from a zygote, which adds a
    /// domain of its own) cannot list the folders: it allows each folder whole, which a
    /// nested domain narrows to what the outer one allows.
    fn allow_system_libraries(ruleset: &mut Ruleset, rights: u64) -> Result<(), String> {
        let mut seen = std::collections::BTreeSet::new();
        for folder in LIBRARY_FOLDERS {
            let Ok(folder) = std::fs::canonicalize(folder) else {
                continue;
            };
            if !seen.insert(folder.clone()) {
                continue;
            }
            let entries: Option<Vec<std::fs::DirEntry>> = std::fs::read_dir(&folder)
                .ok()
                .map(|entries| entries.filter_map(Result::ok).collect());
            match entries {
                Some(entries) if entries.iter().any(|e| e.file_name() == DEBUG_FOLDER) => {
                    for entry in entries {
                        let link = entry.file_type().map_or(true, |t| t.is_symlink());
                        if !link && entry.file_name() != DEBUG_FOLDER {
                            // A rule that cannot be added leaves that entry out: narrower,
                            // never wider.
                            let _ = ruleset.allow(&entry.path(), rights, false);
                        }
                    }
                }
                _ => ruleset.allow(&folder, rights, false)?,
            }
        }
        ruleset.allow(
            std::path::Path::new("/etc/ld.so.cache"),
            access::READ_FILE,
            false,
        )
    }

    /// The Landlock ruleset of a [`super::CompileLayer`], as a descriptor to apply later.
    pub(super) fn compile_ruleset(
        readable: &[&std::path::Path],
        listable: &[&std::path::Path],
        writable: &[&std::path::Path],
    ) -> Result<std::os::fd::OwnedFd, String> {
        let abi = landlock::abi();
        if abi < 1 {
            return Err(NO_LANDLOCK.to_string());
        }
        let mut ruleset = denying_all(abi)?;
        let read = access::READ_FILE | access::READ_DIR | access::EXECUTE;
        for folder in readable {
            ruleset.allow(folder, read, true)?;
        }
        for folder in listable {
            ruleset.allow(folder, access::READ_DIR, true)?;
        }
        for folder in writable {
            ruleset.allow(folder, u64::MAX, true)?;
        }
        for folder in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/usr"] {
            ruleset.allow(std::path::Path::new(folder), read, false)?;
        }
        // What the dynamic loader, the C library and cargo read of the system's settings:
        // named one by one, so that the rest of /etc (its secrets) stays out of a build. Not
        // /etc/gitconfig: a build of path crates needs no git, and it may hold credentials
        // (a helper's settings, a token in a URL) that a compile would quote.
        for file in [
            "/etc/ld.so.cache",
            "/etc/ld.so.conf",
            "/etc/ld.so.conf.d",
            "/etc/passwd",
            "/etc/group",
            "/etc/nsswitch.conf",
            "/etc/localtime",
        ] {
            ruleset.allow(
                std::path::Path::new(file),
                access::READ_FILE | access::READ_DIR,
                false,
            )?;
        }
        for device in ["/dev/null", "/dev/urandom", "/dev/random"] {
            ruleset.allow(
                std::path::Path::new(device),
                access::READ_FILE | access::WRITE_FILE,
                false,
            )?;
        }
        Ok(ruleset.into_fd())
    }

    /// The calls refused before `exec`: those of [`refused_calls`] that the start of a
    /// program never needs. Running a program stays allowed (the one being started), and
    /// signals are refused only to process groups and to every process: this process's own
    /// id is not known yet. Both are narrowed by [`confine`] once `main` runs.
    fn before_exec_calls() -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
        let mut rules = refused_calls()?;
        for call in [
            libc::SYS_execve,
            // The program's `main` sets its parent-death signal with its limits, before it
            // confines itself (which then refuses the call).
            libc::SYS_prctl,
            libc::SYS_kill,
            libc::SYS_tgkill,
            libc::SYS_rt_sigqueueinfo,
            libc::SYS_rt_tgsigqueueinfo,
        ] {
            rules.remove(&call);
        }
        let negative = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(0x8000_0000),
            0x8000_0000,
        )
        .map_err(|e| e.to_string())?;
        rules.insert(
            libc::SYS_kill,
            vec![SeccompRule::new(vec![negative]).map_err(|e| e.to_string())?],
        );
        let not_self = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, 0)
            .map_err(|e| e.to_string())?;
        rules.insert(
            libc::SYS_prlimit64,
            vec![SeccompRule::new(vec![not_self]).map_err(|e| e.to_string())?],
        );
        Ok(rules)
    }

    fn arch() -> Result<TargetArch, String> {
        TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())
    }

    pub(super) fn probe() -> Vec<String> {
        let mut missing = Vec::new();
        let abi = landlock::abi();
        if abi < 1 {
            missing.push(NO_LANDLOCK.to_string());
        } else if abi < 6 {
            missing.push(format!(
                "signal scoping (Landlock ABI 6): this kernel has ABI {abi}; seccomp still \
                 refuses signals to other processes"
            ));
        }
        // SAFETY: a plain prctl that reads this process's seccomp mode.
        if unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } < 0 {
            missing.push(format!(
                "system-call filter (seccomp): {}",
                std::io::Error::last_os_error()
            ));
        }
        missing
    }

    /// Where the system's shared libraries are (see [`allow_system_libraries`]).
    const LIBRARY_FOLDERS: [&str; 4] = ["/lib", "/lib64", "/usr/lib", "/usr/lib64"];

    /// The folder, in a library folder, of the libraries' separate debug information.
    const DEBUG_FOLDER: &str = "debug";

    /// Why a kernel without Landlock gives no filesystem confinement.
    const NO_LANDLOCK: &str = "filesystem confinement (Landlock): this kernel has none (Linux \
                               5.13 or later with Landlock enabled has it)";

    /// A ruleset that refuses every access the kernel's Landlock (ABI `abi`) knows of, up to
    /// [`ABI_USED`]: files, TCP, signals and abstract sockets outside the sandbox, until
    /// rules allow some.
    fn denying_all(abi: i64) -> Result<Ruleset, String> {
        Ruleset::denying_all(abi.min(ABI_USED))
            .map_err(|e| format!("filesystem confinement (Landlock): {e}"))
    }

    fn landlock(readable: &[PathBuf]) -> Result<(), String> {
        let abi = landlock::abi();
        if abi < 1 {
            return Err(NO_LANDLOCK.to_string());
        }
        let mut ruleset = denying_all(abi)?;
        for file in readable {
            // A file that is not there is not needed.
            ruleset.allow(file, access::READ_FILE, false)?;
        }
        // The system's shared libraries, which a learner's library may need beyond the
        // runner's own (`#[link(name = "m")]`), as a runner started as a program may read
        // them ([`exec_ruleset`]): public files, and the same on both paths.
        allow_system_libraries(&mut ruleset, access::READ_FILE | access::READ_DIR)?;
        ruleset.restrict_self()?;
        if abi < ABI_USED {
            return Err(format!(
                "part of the filesystem confinement (Landlock): this kernel has ABI {abi}, the \
                 kit asks for {ABI_USED}"
            ));
        }
        Ok(())
    }

    /// The refused calls whose rules name this process, or that a runner zygote makes for
    /// its runners (forks, process groups, pidfds, signals, limits): the part of the filter
    /// each runner installs for itself ([`Calls::Own`]).
    const OWN_CALLS: [i64; 10] = [
        libc::SYS_clone,
        libc::SYS_kill,
        libc::SYS_tgkill,
        libc::SYS_rt_sigqueueinfo,
        libc::SYS_rt_tgsigqueueinfo,
        libc::SYS_prlimit64,
        libc::SYS_prctl,
        libc::SYS_setpgid,
        libc::SYS_pidfd_open,
        libc::SYS_pidfd_send_signal,
    ];

    /// Whether `call` is in the runner's own part of the filter: [`OWN_CALLS`], and the old
    /// calls that make a process where there are any (a C library may fork with them: musl
    /// does, and a zygote refused them could serve no runner).
    fn own_call(call: i64) -> bool {
        #[cfg(target_arch = "x86_64")]
        if call == libc::SYS_fork || call == libc::SYS_vfork {
            return true;
        }
        OWN_CALLS.contains(&call)
    }

    /// The refused calls of `part`, with their rules.
    pub(super) fn part_calls(part: Calls) -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
        let mut refused = refused_calls()?;
        match part {
            Calls::Whole => {}
            Calls::Lasting => refused.retain(|call, _| !own_call(*call)),
            Calls::Own => refused.retain(|call, _| own_call(*call)),
        }
        Ok(refused)
    }

    pub(super) fn seccomp(part: Calls) -> Result<(), String> {
        let fail = |e: String| format!("system-call filter (seccomp): {e}");
        let arch = arch().map_err(fail)?;
        let mut programs = Vec::new();
        if part != Calls::Own {
            // `clone3` passes its flags in memory, where a filter cannot read them: refused
            // as unknown, so that the C library starts threads with `clone`, whose flags it
            // can.
            programs.push(
                filter(
                    BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
                    libc::ENOSYS,
                    arch,
                )
                .map_err(fail)?,
            );
        }
        let refused = part_calls(part).map_err(fail)?;
        programs.push(filter(refused, libc::EPERM, arch).map_err(fail)?);
        for program in &programs {
            seccompiler::apply_filter(program).map_err(|e| fail(e.to_string()))?;
        }
        Ok(())
    }

    pub(super) fn refuse_threads() -> Result<(), String> {
        let fail = |e: String| format!("refusing new threads (seccomp): {e}");
        let arch = arch().map_err(fail)?;
        let program = filter(
            BTreeMap::from([(libc::SYS_clone, Vec::new())]),
            libc::EPERM,
            arch,
        )
        .map_err(fail)?;
        seccompiler::apply_filter(&program).map_err(|e| fail(e.to_string()))
    }

    fn filter(
        rules: BTreeMap<i64, Vec<SeccompRule>>,
        errno: i32,
        arch: TargetArch,
    ) -> Result<BpfProgram, String> {
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )
        .map_err(|e| e.to_string())?;
        let program: BpfProgram = filter
            .try_into()
            .map_err(|e: seccompiler::BackendError| e.to_string())?;
        Ok(refusing_x32(program))
    }

    /// `program`, after a first test that refuses (`ENOSYS`) every call of the x32 interface
    /// (numbers with bit 30 set): they share the x86-64 architecture's tag, so the rules'
    /// numbers would not match them, and each refused call would have an x32 twin.
    fn refusing_x32(program: BpfProgram) -> BpfProgram {
        #[cfg(target_arch = "x86_64")]
        {
            use seccompiler::sock_filter;
            let op = |code: u32, jt: u8, jf: u8, k: u32| sock_filter {
                code: code as u16,
                jt,
                jf,
                k,
            };
            let mut first = vec![
                // The call's number: the first field of `struct seccomp_data`.
                op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0, 0, 0),
                op(
                    libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K,
                    0,
                    1,
                    0x4000_0000,
                ),
                op(
                    libc::BPF_RET | libc::BPF_K,
                    0,
                    0,
                    libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
                ),
            ];
            first.extend(program);
            first
        }
        #[cfg(not(target_arch = "x86_64"))]
        program
    }

    /// The calls the filter refuses, each with the conditions under which it does (none:
    /// always).
    fn refused_calls() -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
        let me = i64::from(std::process::id());
        let err = |e: seccompiler::BackendError| e.to_string();
        let arg = |index: u8, op: SeccompCmpOp, value: u64| {
            SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value).map_err(err)
        };
        let rule = |conditions: Vec<SeccompCondition>| SeccompRule::new(conditions).map_err(err);
        // A signal's target: this process only. Not 0 (its process group): a runner shares
        // its judge's group.
        let not_me = || arg(0, SeccompCmpOp::Ne, me as u64);
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        // New processes: `clone` without CLONE_THREAD.
        rules.insert(
            libc::SYS_clone,
            vec![rule(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64),
                0,
            )
            .map_err(err)?])?],
        );
        rules.insert(libc::SYS_kill, vec![rule(vec![not_me()?])?]);
        // Its parent-death signal stays: the process ends with the one that started it.
        rules.insert(
            libc::SYS_prctl,
            vec![rule(vec![arg(
                0,
                SeccompCmpOp::Eq,
                libc::PR_SET_PDEATHSIG as u64,
            )?])?],
        );
        for call in [
            libc::SYS_tgkill,
            libc::SYS_rt_sigqueueinfo,
            libc::SYS_rt_tgsigqueueinfo,
        ] {
            rules.insert(call, vec![rule(vec![not_me()?])?]);
        }
        // A signal without `kill`: a file's owner gets SIGIO (or the signal F_SETSIG names)
        // when the file is ready, and its owner may be any process or group. A red team
        // stopped the runner zygote this way, and so every later check of its server. The
        // numbers are Linux's (`asm-generic/fcntl.h`, `asm-generic/sockios.h`), which the
        // libc crate does not name.
        const F_SETOWN_EX: u64 = 15;
        const FIOSETOWN: u64 = 0x8901;
        const SIOCSPGRP: u64 = 0x8902;
        // And a channel between processes that share nothing else: a lock on a file they
        // can both open (the learner's library, `/dev/null`) is seen by every process
        // that opens it, so one check could tell another, or a submission another graded
        // beside it, that it ran. No lock, lease or directory watch, then; a pure function
        // takes none.
        let mut fcntl = Vec::new();
        for command in [
            libc::F_SETOWN as u64,
            F_SETOWN_EX,
            libc::F_GETLK as u64,
            libc::F_SETLK as u64,
            libc::F_SETLKW as u64,
            libc::F_OFD_GETLK as u64,
            libc::F_OFD_SETLK as u64,
            libc::F_OFD_SETLKW as u64,
            libc::F_SETLEASE as u64,
            libc::F_NOTIFY as u64,
        ] {
            fcntl.push(rule(vec![arg(1, SeccompCmpOp::Eq, command)?])?);
        }
        rules.insert(libc::SYS_fcntl, fcntl);
        rules.insert(libc::SYS_flock, Vec::new());
        rules.insert(
            libc::SYS_ioctl,
            vec![
                rule(vec![arg(1, SeccompCmpOp::Eq, FIOSETOWN)?])?,
                rule(vec![arg(1, SeccompCmpOp::Eq, SIOCSPGRP)?])?,
            ],
        );
        // Another process's limits (the C library's own calls name process 0).
        rules.insert(
            libc::SYS_prlimit64,
            vec![rule(vec![not_me()?, arg(0, SeccompCmpOp::Ne, 0)?])?],
        );
        let always = [
            libc::SYS_execve,
            libc::SYS_execveat,
            libc::SYS_tkill,
            libc::SYS_pidfd_open,
            libc::SYS_pidfd_getfd,
            libc::SYS_pidfd_send_signal,
            libc::SYS_ptrace,
            libc::SYS_process_vm_readv,
            libc::SYS_process_vm_writev,
            libc::SYS_kcmp,
            libc::SYS_socket,
            libc::SYS_socketpair,
            libc::SYS_connect,
            libc::SYS_bind,
            libc::SYS_listen,
            libc::SYS_accept,
            libc::SYS_accept4,
            libc::SYS_setsid,
            libc::SYS_setpgid,
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_mount,
            libc::SYS_umount2,
            libc::SYS_pivot_root,
            libc::SYS_chroot,
            libc::SYS_bpf,
            libc::SYS_perf_event_open,
            libc::SYS_userfaultfd,
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
            libc::SYS_memfd_create,
            libc::SYS_keyctl,
            libc::SYS_add_key,
            libc::SYS_request_key,
            libc::SYS_open_by_handle_at,
            libc::SYS_name_to_handle_at,
            // What Landlock does not cover: a file's mode, owner, times and extended
            // attributes (a harness made unrunnable for every later submission).
            libc::SYS_chmod,
            libc::SYS_fchmod,
            libc::SYS_fchmodat,
            libc::SYS_fchmodat2,
            libc::SYS_chown,
            libc::SYS_fchown,
            libc::SYS_lchown,
            libc::SYS_fchownat,
            libc::SYS_utime,
            libc::SYS_utimes,
            libc::SYS_utimensat,
            libc::SYS_futimesat,
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_fsetxattr,
            libc::SYS_removexattr,
            libc::SYS_lremovexattr,
            libc::SYS_fremovexattr,
            // Other processes' priority, scheduling, memory placement and memory.
            libc::SYS_setpriority,
            libc::SYS_ioprio_set,
            libc::SYS_sched_setaffinity,
            libc::SYS_sched_setscheduler,
            libc::SYS_sched_setparam,
            libc::SYS_sched_setattr,
            libc::SYS_migrate_pages,
            libc::SYS_move_pages,
            libc::SYS_process_madvise,
            libc::SYS_process_mrelease,
            // Watching or blocking other processes' file accesses.
            libc::SYS_fanotify_init,
            libc::SYS_fanotify_mark,
            libc::SYS_inotify_init,
            libc::SYS_inotify_init1,
            libc::SYS_inotify_add_watch,
            // System V IPC: memory outside the address-space limit, kept after the check,
            // and a channel between submissions.
            libc::SYS_shmget,
            libc::SYS_shmat,
            libc::SYS_shmctl,
            libc::SYS_msgget,
            libc::SYS_msgsnd,
            libc::SYS_msgrcv,
            libc::SYS_msgctl,
            libc::SYS_semget,
            libc::SYS_semop,
            libc::SYS_semtimedop,
            libc::SYS_semctl,
            // The machine's clock, names, kernel log, mounts and modules.
            libc::SYS_clock_settime,
            libc::SYS_clock_adjtime,
            libc::SYS_settimeofday,
            libc::SYS_adjtimex,
            libc::SYS_sethostname,
            libc::SYS_setdomainname,
            libc::SYS_syslog,
            libc::SYS_open_tree,
            libc::SYS_move_mount,
            libc::SYS_fsopen,
            libc::SYS_fsmount,
            libc::SYS_fsconfig,
            libc::SYS_fspick,
            libc::SYS_mount_setattr,
            libc::SYS_quotactl,
            libc::SYS_acct,
            libc::SYS_reboot,
            libc::SYS_kexec_load,
            libc::SYS_kexec_file_load,
            libc::SYS_init_module,
            libc::SYS_finit_module,
            libc::SYS_delete_module,
            libc::SYS_swapon,
            libc::SYS_swapoff,
            libc::SYS_vhangup,
        ];
        for call in always {
            rules.insert(call, Vec::new());
        }
        // Only some architectures have the old calls.
        #[cfg(target_arch = "x86_64")]
        for call in [
            libc::SYS_fork,
            libc::SYS_vfork,
            libc::SYS_iopl,
            libc::SYS_ioperm,
        ] {
            rules.insert(call, Vec::new());
        }
        Ok(rules)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::linux::part_calls;
    use super::Calls;

    #[test]
    fn the_zygotes_part_and_the_runners_own_make_the_whole_filter() {
        let keys = |part| -> Vec<i64> { part_calls(part).unwrap().into_keys().collect() };
        let (whole, lasting, own) = (keys(Calls::Whole), keys(Calls::Lasting), keys(Calls::Own));
        assert!(lasting.iter().all(|call| !own.contains(call)), "apart");
        let mut both: Vec<i64> = lasting.iter().chain(&own).copied().collect();
        both.sort_unstable();
        assert_eq!(both, whole, "together, the whole filter");
        // Every rule that names this process (a signal's or a limit's target), and every
        // call that makes a process or a group, is the runner's own: the zygote's part is
        // the same in every runner, and leaves the zygote able to serve.
        for call in [
            libc::SYS_kill,
            libc::SYS_tgkill,
            libc::SYS_rt_sigqueueinfo,
            libc::SYS_rt_tgsigqueueinfo,
            libc::SYS_prlimit64,
            libc::SYS_clone,
            libc::SYS_setpgid,
            libc::SYS_pidfd_open,
            libc::SYS_pidfd_send_signal,
            libc::SYS_prctl,
        ] {
            assert!(own.contains(&call), "{call} is the runner's own");
        }
        #[cfg(target_arch = "x86_64")]
        assert!(own.contains(&libc::SYS_fork) && own.contains(&libc::SYS_vfork));
        // The large part is the zygote's.
        assert!(
            lasting.len() > 100 && own.len() < 15,
            "{} {}",
            lasting.len(),
            own.len()
        );
    }
}

/// The kernel's Landlock interface, as its documentation (`landlock(7)`,
/// `include/uapi/linux/landlock.h`) gives it: a ruleset that handles some rights, rules that
/// allow some of them beneath a file or folder, and the call that applies it. Written here
/// rather than taken from the `landlock` crate, whose bitflags derive brings a second copy of
/// `syn` to the first build of the kit.
#[cfg(target_os = "linux")]
mod landlock {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::path::Path;

    /// The access rights, each with the ABI version that brought it.
    pub(crate) mod access {
        pub(crate) const EXECUTE: u64 = 1 << 0;
        pub(crate) const WRITE_FILE: u64 = 1 << 1;
        pub(crate) const READ_FILE: u64 = 1 << 2;
        pub(crate) const READ_DIR: u64 = 1 << 3;
        /// ABI 1 has the rights up to this one (making symbolic links).
        pub(crate) const MAKE_SYM: u64 = 1 << 12;
        /// ABI 2: moving or linking a file to another folder.
        pub(crate) const REFER: u64 = 1 << 13;
        /// ABI 3.
        pub(crate) const TRUNCATE: u64 = 1 << 14;
        /// ABI 5.
        pub(crate) const IOCTL_DEV: u64 = 1 << 15;
        /// The rights a rule on a file (not a folder) may allow.
        pub(crate) const ON_A_FILE: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;
    }

    /// ABI 4: binding and connecting TCP sockets.
    const NET_TCP: u64 = 0b11;
    /// ABI 6: abstract UNIX sockets and signals outside the sandbox.
    const SCOPE_ALL: u64 = 0b11;
    const CREATE_RULESET_VERSION: libc::c_uint = 1;
    const RULE_PATH_BENEATH: libc::c_int = 1;

    #[repr(C)]
    struct RulesetAttr {
        handled_access_fs: u64,
        handled_access_net: u64,
        scoped: u64,
    }

    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }

    /// The kernel's Landlock ABI version, or 0 or less when it has none.
    pub(crate) fn abi() -> i64 {
        // SAFETY: this form of the call only asks for the version; it creates nothing.
        unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                CREATE_RULESET_VERSION,
            )
        }
    }

    /// A ruleset being made: a descriptor, and the file rights it handles.
    pub(crate) struct Ruleset {
        fd: OwnedFd,
        handled_fs: u64,
    }

    impl Ruleset {
        /// A ruleset that handles (and so refuses, but for its rules) every right of ABI
        /// `abi`.
        pub(crate) fn denying_all(abi: i64) -> std::io::Result<Ruleset> {
            let mut fs = (access::MAKE_SYM << 1) - 1;
            if abi >= 2 {
                fs |= access::REFER;
            }
            if abi >= 3 {
                fs |= access::TRUNCATE;
            }
            if abi >= 5 {
                fs |= access::IOCTL_DEV;
            }
            let attr = RulesetAttr {
                handled_access_fs: fs,
                handled_access_net: if abi >= 4 { NET_TCP } else { 0 },
                scoped: if abi >= 6 { SCOPE_ALL } else { 0 },
            };
            // SAFETY: `attr` is a valid ruleset attribute of the size given; the kernel
            // returns a new descriptor (close-on-exec) or -1.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_landlock_create_ruleset,
                    &attr as *const RulesetAttr,
                    std::mem::size_of::<RulesetAttr>(),
                    0u32,
                )
            };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(Ruleset {
                // SAFETY: a descriptor the kernel just made for this process.
                fd: unsafe { OwnedFd::from_raw_fd(fd as i32) },
                handled_fs: fs,
            })
        }

        /// Allows `rights` (those this ruleset handles; on a file, those a file can have)
        /// beneath `path`. A path that cannot be opened is an error when `needed`, and is
        /// left out otherwise.
        pub(crate) fn allow(
            &mut self,
            path: &Path,
            rights: u64,
            needed: bool,
        ) -> Result<(), String> {
            let fail = |e: std::io::Error| {
                format!("filesystem confinement (Landlock): {}: {e}", path.display())
            };
            let file = match open_path(path) {
                Ok(file) => file,
                Err(_) if !needed => return Ok(()),
                Err(e) => return Err(fail(e)),
            };
            let is_dir = file.metadata().map(|m| m.is_dir()).map_err(fail)?;
            let mut allowed = rights & self.handled_fs;
            if !is_dir {
                allowed &= access::ON_A_FILE;
            }
            let attr = PathBeneathAttr {
                allowed_access: allowed,
                parent_fd: file.as_raw_fd(),
            };
            // SAFETY: both descriptors are open; `attr` is a valid rule.
            let added = unsafe {
                libc::syscall(
                    libc::SYS_landlock_add_rule,
                    self.fd.as_raw_fd(),
                    RULE_PATH_BENEATH,
                    &attr as *const PathBeneathAttr,
                    0u32,
                )
            };
            if added != 0 {
                return Err(fail(std::io::Error::last_os_error()));
            }
            Ok(())
        }

        /// Applies the ruleset to this thread and what it starts later (no new privileges
        /// must be set first).
        pub(crate) fn restrict_self(self) -> Result<(), String> {
            // SAFETY: a plain system call on an open ruleset descriptor.
            if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, self.fd.as_raw_fd(), 0u32) }
                != 0
            {
                return Err(format!(
                    "filesystem confinement (Landlock): {}",
                    std::io::Error::last_os_error()
                ));
            }
            Ok(())
        }

        /// The ruleset's descriptor, to apply later (between fork and exec).
        pub(crate) fn into_fd(self) -> OwnedFd {
            self.fd
        }
    }

    /// `path` opened as a rule's parent: `O_PATH`, which needs no right to read it.
    fn open_path(path: &Path) -> std::io::Result<std::fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::File::options()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
            .open(path)
    }
}
