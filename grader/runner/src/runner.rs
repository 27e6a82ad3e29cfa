//! A runner's `main`: the process in which the learner's function runs for one check.
//!
//! The judge starts it ([`crate::remote`]) with the lesson's name as its one argument, the
//! end of a stream socket as descriptor [`SOCKET_FD`], standard input closed, and the
//! check's output and error streams. In order, before any of the learner's code runs:
//! limits ([`crate::limits`]), the quiet panic hook, the sandbox ([`crate::sandbox`]: it
//! may read the learner's library and nothing else, write nothing, start nothing, signal
//! nothing outside itself); then the learner's function is loaded and each request read
//! from the socket is answered on it, until the judge closes it.
//!
//! It holds nothing worth taking: no reference answer, no expectation of a check, no token,
//! no report. What it sends is observation, which the judge checks as it reads it.

use crate::limits::{Limits, LIMITS_VAR};
use crate::sandbox::{self, Mode};
use crate::wire;
use kit_types::graded::{FetchFn, LookupFn, RetryFn};
use std::path::PathBuf;
use std::process::ExitCode;

/// The descriptor on which a runner reads requests and writes what it observed.
pub const SOCKET_FD: i32 = 3;

/// The exit status of a runner started wrongly (no socket, an unknown lesson).
pub const EXIT_USAGE: u8 = 2;

/// A lesson's function, as a runner holds it.
#[derive(Debug, Clone, Copy)]
pub enum Function {
    /// build2's `fetch`.
    Build2(FetchFn),
    /// build3's `retry_request`.
    Build3(RetryFn),
    /// stage8's `lookup_availability`.
    Stage8(LookupFn),
}

impl Function {
    /// Answers one request's bytes; `None` when they are not a request of this lesson.
    /// `state` is what a lesson keeps between one check's questions (stage8's gateway).
    fn serve(self, ask: &[u8], state: &mut State) -> Option<Vec<u8>> {
        match self {
            Function::Build2(f) => crate::build2::serve_bytes(f, ask),
            Function::Build3(f) => crate::build3::serve_bytes(f, ask),
            Function::Stage8(f) => crate::stage8::serve_bytes(f, ask, &mut state.stage8),
        }
    }

    /// How many threads besides the main one lesson `group`'s questions run the function
    /// on: build3's exhaustive stretches split in two; stage8's concurrent lookups. Known
    /// from the lesson's name alone, so that they start before the learner's library loads.
    fn workers(group: &str) -> usize {
        match group {
            "stage8" => crate::stage8::session::THREADS,
            _ => 1,
        }
    }
}

/// What a runner keeps between the questions of its one check.
#[derive(Default)]
struct State {
    /// stage8: the check's gateway.
    stage8: Option<crate::stage8::session::Session>,
}

/// The runner's `main`: `load` finds lesson `group`'s function (from the learner's library,
/// or linked in), and is called only once the process is confined.
pub fn main(load: fn(&str) -> Result<Function, String>) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [group] = args.as_slice() else {
        eprintln!("usage: GROUP\nThis program is started by the grader's checks.");
        return ExitCode::from(EXIT_USAGE);
    };
    let limits = std::env::var(LIMITS_VAR)
        .ok()
        .and_then(|text| Limits::decode(&text));
    if let Some(limits) = limits {
        for missed in limits.apply_to_self() {
            eprintln!("limit not applied: {missed}");
        }
    }
    crate::panics::install_quiet_hook();
    crate::cases::map_marks();
    drop_capabilities();
    let mode = limits.map_or(Mode::default(), |l| l.sandbox);
    if mode != Mode::Off {
        // The learner's library: loaded, and read by a backtrace for the learner's lines
        // (this program stays unreadable: a backtrace names no frame of it, and needs none).
        let readable: Vec<PathBuf> = std::env::var_os(crate::library::LIBRARY_VAR)
            .map(PathBuf::from)
            .into_iter()
            .collect();
        let missing = sandbox::confine(&readable);
        if mode == Mode::Required && !missing.is_empty() {
            // The grader quotes this line.
            eprintln!("the sandbox could not be set up: {}", missing.join("; "));
            end_now(i32::from(sandbox::EXIT_UNCONFINED));
        }
    }
    if mode != Mode::Off {
        // The threads cases run on, started now; then no more, on any of them. Before the
        // library loads: its constructors run with threads already refused.
        crate::cases::Workers::start(Function::workers(group));
        if let Err(missing) = sandbox::refuse_threads() {
            if mode == Mode::Required {
                eprintln!("the sandbox could not be set up: {missing}");
                end_now(i32::from(sandbox::EXIT_UNCONFINED));
            }
        }
    }
    let function = match load(group) {
        Ok(function) => function,
        Err(message) => {
            eprintln!("{message}");
            end_now(i32::from(EXIT_USAGE));
        }
    };
    serve(function)
}

#[cfg(unix)]
fn serve(function: Function) -> ! {
    use std::os::fd::FromRawFd;
    // SAFETY: the judge passes the socket as this descriptor and nothing else owns it.
    let mut socket = unsafe { std::os::unix::net::UnixStream::from_raw_fd(SOCKET_FD) };
    let mut state = State::default();
    loop {
        let ask = match wire::read_frame(&mut socket) {
            Ok(Some(ask)) => ask,
            // The judge is done (or gone): nothing more to do.
            Ok(None) | Err(_) => end_now(0),
        };
        let Some(told) = function.serve(&ask, &mut state) else {
            eprintln!("the runner got a request it cannot read");
            end_now(i32::from(EXIT_USAGE));
        };
        // What the function printed goes out before the judge hears the run ended: the
        // judge may end this process as soon as it has its answer.
        {
            use std::io::Write;
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().flush();
        }
        if wire::write_frame(&mut socket, &told).is_err() {
            end_now(0);
        }
    }
}

#[cfg(not(unix))]
fn serve(_: Function) -> ! {
    eprintln!("a runner needs Unix");
    end_now(i32::from(EXIT_USAGE))
}

/// Gives up every capability, for good: run as root (a platform's container), the runner
/// keeps root's files' owner rights but loses its powers over other processes and files —
/// tracing or reading the judge (which is not dumpable), overriding permissions, changing
/// owners. Nothing is lost for a runner that had none.
fn drop_capabilities() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on this process, with buffers of the kernel's layout.
    unsafe {
        // The bounding set first (it needs CAP_SETPCAP, which goes next): none comes back.
        for capability in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
        }
        // Then the effective, permitted and inheritable sets, all empty (version 3).
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let header = Header {
            version: 0x2008_0522,
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        libc::syscall(libc::SYS_capset, &header, data.as_ptr());
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
    }
}

/// Ends the process at once, its output flushed: no exit handler (`atexit`) nor destructor
/// that code under test registered runs after it (one could rewrite a report).
pub fn end_now(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(unix)]
    {
        // SAFETY: `_exit` ends the process; nothing runs after it.
        unsafe { libc::_exit(code) }
    }
    #[cfg(not(unix))]
    std::process::exit(code)
}
