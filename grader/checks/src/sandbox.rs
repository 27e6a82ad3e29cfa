//! The sandbox of a process that runs code under test: what it may still do once the job
//! starts, beyond the resource limits of [`limits`](crate::limits).
//!
//! A check's process is confined before any code under test runs in it (before the learner's
//! library is loaded, so its constructors are confined too). On Linux it gets:
//! - **no new privileges** (`PR_SET_NO_NEW_PRIVS`), which the two below need;
//! - a **Landlock** ruleset: it may read only the files it was given (the learner's library)
//!   and create, write or remove nothing: the one file it writes, its
//!   report, is opened before, and stays the only writable thing it holds. No TCP, no
//!   abstract sockets, and no signals to processes outside the sandbox;
//! - a **seccomp** filter that refuses (`EPERM`) what a pure function never needs: new
//!   processes (threads are allowed), running programs, sockets, tracing or reading other
//!   processes, signals to any process but itself, leaving its process group or session,
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
    pub fn from_name(name: &str) -> Option<Mode> {
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
    #[cfg(target_os = "linux")]
    {
        linux::confine(readable)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = readable;
        vec!["the sandbox (Landlock, seccomp) exists only on Linux".to_string()]
    }
}

/// A first layer of the sandbox, made ready in the grader for a harness program it starts, and
/// applied in the started process between `fork` and `exec` ([`BeforeExec::apply`]): so that
/// code linked into the program, which may run before its `main` (constructors), already runs
/// confined. It lets the process read and run the program and the system's shared libraries
/// (which the dynamic loader needs) and write its report, and refuses new processes, sockets, tracing, leaving
/// its process group, and signals to process groups or to every process. The program's `main`
/// then confines itself fully ([`confine`]), which narrows this layer further.
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
    use landlock::{
        Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
        RulesetStatus, Scope, ABI,
    };
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    /// The newest Landlock interface the rules below were written and tested for; a kernel
    /// with an older one enforces what it knows ([`probe`] names the rest).
    const ABI_USED: ABI = ABI::V6;

    pub(super) fn confine(readable: &[PathBuf]) -> Vec<String> {
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
        if let Err(e) = seccomp() {
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
        if landlock_abi() < 1 {
            return Err(NO_LANDLOCK.to_string());
        }
        let run = AccessFs::ReadFile | AccessFs::Execute;
        let libraries = AccessFs::ReadFile | AccessFs::ReadDir | AccessFs::Execute;
        let mut ruleset = denying_all()?;
        let fd = PathFd::new(program).map_err(|e| {
            format!(
                "filesystem confinement (Landlock): {}: {e}",
                program.display()
            )
        })?;
        ruleset = ruleset.add_rule(PathBeneath::new(fd, run)).map_err(fail)?;
        let fd = PathFd::new(report).map_err(|e| {
            format!(
                "filesystem confinement (Landlock): {}: {e}",
                report.display()
            )
        })?;
        let write = AccessFs::WriteFile | AccessFs::Truncate;
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, write))
            .map_err(fail)?;
        for file in readable {
            if let Ok(fd) = PathFd::new(file) {
                ruleset = ruleset
                    .add_rule(PathBeneath::new(fd, AccessFs::ReadFile))
                    .map_err(fail)?;
            }
        }
        for shared in [
            "/lib",
            "/lib64",
            "/usr/lib",
            "/usr/lib64",
            "/etc/ld.so.cache",
        ] {
            if let Ok(fd) = PathFd::new(shared) {
                let access = if shared.ends_with(".cache") {
                    AccessFs::ReadFile.into()
                } else {
                    libraries
                };
                ruleset = ruleset
                    .add_rule(PathBeneath::new(fd, access))
                    .map_err(fail)?;
            }
        }
        Ok(Option::<std::os::fd::OwnedFd>::from(ruleset))
    }

    /// The calls refused before `exec`: those of [`refused_calls`] that the start of a
    /// program never needs. Running a program stays allowed (the one being started), and
    /// signals are refused only to process groups and to every process: this process's own
    /// id is not known yet. Both are narrowed by [`confine`] once `main` runs.
    fn before_exec_calls() -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
        let mut rules = refused_calls()?;
        for call in [
            libc::SYS_execve,
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
        Ok(rules)
    }

    fn arch() -> Result<TargetArch, String> {
        TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())
    }

    pub(super) fn probe() -> Vec<String> {
        let mut missing = Vec::new();
        let abi = landlock_abi();
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

    /// The kernel's Landlock ABI version, or 0 or less when it has none.
    fn landlock_abi() -> i64 {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
        // SAFETY: this form of the call only asks for the version; it creates nothing.
        unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        }
    }

    /// What a Landlock failure is called.
    fn fail(e: landlock::RulesetError) -> String {
        format!("filesystem confinement (Landlock): {e}")
    }

    /// Why a kernel without Landlock gives no filesystem confinement.
    const NO_LANDLOCK: &str = "filesystem confinement (Landlock): this kernel has none (Linux \
                               5.13 or later with Landlock enabled has it)";

    /// A ruleset that refuses every access Landlock knows of (files, TCP, signals and abstract
    /// sockets outside the sandbox) until rules allow some.
    fn denying_all() -> Result<landlock::RulesetCreated, String> {
        Ruleset::default()
            .handle_access(AccessFs::from_all(ABI_USED))
            .map_err(fail)?
            .handle_access(AccessNet::from_all(ABI_USED))
            .map_err(fail)?
            .scope(Scope::from_all(ABI_USED))
            .map_err(fail)?
            .create()
            .map_err(fail)
    }

    fn landlock(readable: &[PathBuf]) -> Result<(), String> {
        let read = AccessFs::ReadFile;
        let mut ruleset = denying_all()?;
        for file in readable {
            // A file that is not there is not needed.
            if let Ok(fd) = PathFd::new(file) {
                ruleset = ruleset.add_rule(PathBeneath::new(fd, read)).map_err(fail)?;
            }
        }
        let status = ruleset.restrict_self().map_err(fail)?;
        match status.ruleset {
            RulesetStatus::FullyEnforced => Ok(()),
            RulesetStatus::PartiallyEnforced => Err(format!(
                "part of the filesystem confinement (Landlock): this kernel has ABI {}, the \
                 kit asks for {}",
                landlock_abi(),
                ABI_USED as i32
            )),
            RulesetStatus::NotEnforced => Err(NO_LANDLOCK.to_string()),
        }
    }

    fn seccomp() -> Result<(), String> {
        let fail = |e: String| format!("system-call filter (seccomp): {e}");
        let arch = arch().map_err(fail)?;
        // `clone3` passes its flags in memory, where a filter cannot read them: refused as
        // unknown, so that the C library starts threads with `clone`, whose flags it can.
        let clone3 = filter(
            BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
            libc::ENOSYS,
            arch,
        )
        .map_err(fail)?;
        let refused = filter(refused_calls().map_err(fail)?, libc::EPERM, arch).map_err(fail)?;
        for program in [&clone3, &refused] {
            seccompiler::apply_filter(program).map_err(|e| fail(e.to_string()))?;
        }
        Ok(())
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
        filter
            .try_into()
            .map_err(|e: seccompiler::BackendError| e.to_string())
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
        // A signal's target: this process (or, for `kill`, 0: its own process group, which
        // holds nothing else once no process can be started).
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
        rules.insert(
            libc::SYS_kill,
            vec![rule(vec![not_me()?, arg(0, SeccompCmpOp::Ne, 0)?])?],
        );
        for call in [
            libc::SYS_tgkill,
            libc::SYS_rt_sigqueueinfo,
            libc::SYS_rt_tgsigqueueinfo,
        ] {
            rules.insert(call, vec![rule(vec![not_me()?])?]);
        }
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
        ];
        for call in always {
            rules.insert(call, Vec::new());
        }
        // Only some architectures have the old calls.
        #[cfg(target_arch = "x86_64")]
        for call in [libc::SYS_fork, libc::SYS_vfork] {
            rules.insert(call, Vec::new());
        }
        Ok(rules)
    }
}
