//! Test-only implementations of `retry_request` and `lookup_availability`: correct ones,
//! realistic mistakes and hostile behaviour. Each is what a learner could plausibly write.

use grader_checks::lessons::build2::{self, FetchFn, Transport};
use grader_checks::lessons::build3::{self, Reply, RetryFn};
use grader_checks::lessons::stage8::{self, LookupFn, TestGateway};
use kit_types::{
    Admission, Availability, Clock, Failure, FailureCode, Lookup, Outcome, PermanentError,
    PermanentKind, Provider, RequestError, RetryError, RetryEvent, RetryPolicy, StopCause,
    TransientError, TransientReason, TransportFailure,
};

type Request<'a> = &'a mut dyn FnMut() -> Result<Reply, RequestError>;
type Sleep<'a> = &'a mut dyn FnMut(f64);
type Log<'a> = &'a mut dyn FnMut(RetryEvent);

/// Knobs for a parameterised loop, so that each mistake is one changed line of a correct one.
#[derive(Clone, Copy, Default)]
struct Mistakes {
    extra_attempt: bool,
    sleep_after_last: bool,
    clamp_server_wait: bool,
    retry_permanent: bool,
    validate_after_first_call: bool,
    nan_wait_stops: bool,
    stops_at_equal_budget: bool,
    prints_detail: bool,
    sleep_before_log: bool,
    no_validation: bool,
    permanent_becomes_success: bool,
    /// Sleeps before it logs, but only where the server asked for a wait: the branch that
    /// honours `retry_after` written apart from the backoff's.
    sleep_before_log_on_server_wait: bool,
    /// Logs no retry event after a timeout (the branch for timeouts forgets it).
    no_retry_log_on_timeout: bool,
    /// The attempt number kept in a `static`, set back only after a success: a call after
    /// one that failed starts where that one stopped.
    attempt_in_a_static: bool,
}

/// The attempt number of `attempt_in_a_static`.
static ATTEMPT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn written(
    m: Mistakes,
    policy: &RetryPolicy,
    request: Request,
    sleep: Sleep,
    log: Log,
) -> Result<Reply, RetryError> {
    if !m.validate_after_first_call && !m.no_validation {
        policy.validate()?;
    }
    let limit = policy.max_attempts + u32::from(m.extra_attempt);
    for mut attempt in 1..=limit {
        if m.attempt_in_a_static {
            attempt = ATTEMPT.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            if attempt > limit {
                break;
            }
        }
        let outcome = request();
        if m.validate_after_first_call && attempt == 1 {
            policy.validate()?;
        }
        let failure = match outcome {
            Ok(v) => {
                ATTEMPT.store(0, std::sync::atomic::Ordering::SeqCst);
                return Ok(v);
            }
            Err(RequestError::Permanent(p)) if m.permanent_becomes_success => {
                let _ = p;
                return Ok(Reply::Null);
            }
            Err(RequestError::Permanent(p)) if !m.retry_permanent => {
                return Err(RetryError::Permanent(p))
            }
            Err(RequestError::Permanent(_)) => {
                if attempt == limit {
                    return Err(RetryError::Exhausted {
                        attempts: attempt,
                        reason: TransientReason::ServerError,
                        cause: StopCause::AttemptLimit,
                    });
                }
                sleep(policy.base_delay);
                continue;
            }
            Err(RequestError::Transient(t)) => t,
        };
        if m.prints_detail && !failure.detail.is_empty() {
            // The mistake: a debug print of the failure, detail and all (of the failures
            // that have one: printing every case of the exhaustive space takes long).
            eprintln!("attempt {attempt} failed: {failure:?}");
        }
        let backoff = (policy.base_delay * 2f64.powi(attempt as i32 - 1)).min(policy.max_delay);
        if attempt == limit {
            if m.sleep_after_last {
                sleep(backoff);
            }
            log(RetryEvent::stop(
                attempt,
                failure.reason,
                StopCause::AttemptLimit,
            ));
            return Err(RetryError::Exhausted {
                attempts: attempt,
                reason: failure.reason,
                cause: StopCause::AttemptLimit,
            });
        }
        let mut planned = backoff;
        if let Some(w) = failure.retry_after {
            let over = if m.nan_wait_stops {
                // The mistake: NaN compares false, so "not within budget" stops on NaN.
                w.is_nan() || w > policy.max_delay
            } else if m.stops_at_equal_budget {
                // The mistake: >= where the rule says larger than the budget.
                w >= policy.max_delay
            } else {
                w > policy.max_delay
            };
            if over && !m.clamp_server_wait {
                log(RetryEvent::stop(
                    attempt,
                    failure.reason,
                    StopCause::DelayBudget,
                ));
                return Err(RetryError::Exhausted {
                    attempts: attempt,
                    reason: failure.reason,
                    cause: StopCause::DelayBudget,
                });
            }
            if w >= 0.0 {
                planned = planned.max(w.min(policy.max_delay));
            }
        }
        if m.no_retry_log_on_timeout && failure.reason == TransientReason::Timeout {
            sleep(planned);
        } else if m.sleep_before_log
            || (m.sleep_before_log_on_server_wait && failure.retry_after.is_some_and(|w| w > 0.0))
        {
            sleep(planned);
            log(RetryEvent::retry(attempt, failure.reason, planned));
        } else {
            log(RetryEvent::retry(attempt, failure.reason, planned));
            sleep(planned);
        }
    }
    // Only reached when the policy allowed no attempt at all (validation skipped).
    Err(RetryError::Exhausted {
        attempts: 0,
        reason: TransientReason::ServerError,
        cause: StopCause::AttemptLimit,
    })
}

/// The attempt `attempt_kept_after_giving_up` is on.
static KEPT_ATTEMPT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

/// An honest mistake: the attempt number kept in a `static`, set back to 1 on a success or a
/// permanent failure but not after giving up, so that a call after one that gave up starts
/// at the attempt that one stopped at. Otherwise right.
fn attempt_kept_after_giving_up(
    policy: &RetryPolicy,
    request: Request,
    sleep: Sleep,
    log: Log,
) -> Result<Reply, RetryError> {
    use std::sync::atomic::Ordering::SeqCst;
    policy.validate()?;
    loop {
        let n = KEPT_ATTEMPT.load(SeqCst);
        let failure = match request() {
            Ok(v) => {
                KEPT_ATTEMPT.store(1, SeqCst);
                return Ok(v);
            }
            Err(RequestError::Permanent(p)) => {
                KEPT_ATTEMPT.store(1, SeqCst);
                return Err(RetryError::Permanent(p));
            }
            Err(RequestError::Transient(t)) => t,
        };
        let stop = |cause| RetryError::Exhausted {
            attempts: n,
            reason: failure.reason,
            cause,
        };
        if n >= policy.max_attempts {
            log(RetryEvent::stop(n, failure.reason, StopCause::AttemptLimit));
            return Err(stop(StopCause::AttemptLimit));
        }
        let backoff = (policy.base_delay * 2f64.powi(n as i32 - 1)).min(policy.max_delay);
        let pause = match failure.retry_after.filter(|w| *w >= 0.0) {
            Some(w) if w > policy.max_delay => {
                log(RetryEvent::stop(n, failure.reason, StopCause::DelayBudget));
                return Err(stop(StopCause::DelayBudget));
            }
            Some(w) => backoff.max(w),
            None => backoff,
        };
        log(RetryEvent::retry(n, failure.reason, pause));
        sleep(pause);
        KEPT_ATTEMPT.store(n + 1, SeqCst);
    }
}

macro_rules! mistake {
    ($($field:ident),*) => {
        |p, r, s, l| written(Mistakes { $($field: true,)* ..Mistakes::default() }, p, r, s, l)
    };
}

/// A correct implementation written independently of the reference (a `for` loop).
const CORRECT: RetryFn = mistake!();

/// How long the processes hostile implementations start would sleep: odd numbers, so a
/// test can find them by their command line.
pub const SLEEPER_SECS: &str = "600.137";
/// The same, for the process that leaves the check's group.
pub const DETACHED_SLEEPER_SECS: &str = "600.271";
/// The same, for the process named with escapes (its own number, so that tests running
/// at once never take one's process for another's).
pub const ESCAPED_SLEEPER_SECS: &str = "600.389";

fn swallows_panics(
    policy: &RetryPolicy,
    request: Request,
    sleep: Sleep,
    log: Log,
) -> Result<Reply, RetryError> {
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        written(Mistakes::default(), policy, request, sleep, log)
    }));
    run.unwrap_or(Err(RetryError::Exhausted {
        attempts: 1,
        reason: TransientReason::ServerError,
        cause: StopCause::AttemptLimit,
    }))
}

fn never_stops(
    _: &RetryPolicy,
    request: Request,
    sleep: Sleep,
    _: Log,
) -> Result<Reply, RetryError> {
    loop {
        if let Ok(v) = request() {
            return Ok(v);
        }
        sleep(0.25);
    }
}

#[allow(clippy::empty_loop)]
fn spins(_: &RetryPolicy, _: Request, _: Sleep, _: Log) -> Result<Reply, RetryError> {
    loop {}
}

#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    let frame = [depth; 64];
    std::hint::black_box(&frame);
    1 + recurse(std::hint::black_box(depth + 1))
}

/// Knobs for a learner's gateway lookup: each mistake is one changed line of a correct one.
#[derive(Clone, Copy, Default)]
struct GatewayMistakes {
    lookup_per_attempt: bool,
    breaker_per_attempt: bool,
    retry_429: bool,
    ignore_deadline: bool,
    invent_availability: bool,
    subtract_global: bool,
    skip_breaker: bool,
    /// `now + pause > deadline`: a pause that ends exactly at the deadline is slept.
    pause_to_the_deadline: bool,
    /// record_success on an integration rejection.
    rejection_is_success: bool,
    /// record_failure on an integration rejection.
    rejection_is_failure: bool,
    /// serde's derived struct, which also reads an array by position.
    body_by_derive: bool,
    /// Any Retry-After on a 502/503/504 ends the lookup.
    gives_up_on_retry_after: bool,
    /// The Retry-After replaces the backoff (`unwrap_or(backoff)`), even when shorter.
    retry_after_over_backoff: bool,
    /// Any number is a Retry-After (`"0.5"` waits half a second).
    retry_after_any_number: bool,
    /// One lock held across the whole lookup: lookups run one at a time.
    serialise: bool,
    /// A body with more than the two declared fields is refused (`deny_unknown_fields`).
    refuse_extra_fields: bool,
    /// A pause that does not fit is shortened to what is left, and slept.
    clamps_the_pause: bool,
    /// record_neutral on a breaker_open rejection, which frees a probe's place.
    neutral_on_rejection: bool,
    /// Reads Retry-After on a 503 only (the status RFC 9110 names it with), not on 502 or
    /// 504: a long one there is ignored and the backoff slept. No named check has a 502 or
    /// 504 whose Retry-After outlasts the backoff; the exhaustive check does.
    retry_after_only_on_503: bool,
    /// Not a mistake: a pause of 0 s is not slept (`if pause > 0.0`). The lesson asks for
    /// no sleep of 0 s, so every check passes.
    skip_zero_sleeps: bool,
    /// The backoff computed in `f32`: 0.05 s becomes 0.0500000007 s, a part in 10⁸ off.
    backoff_in_f32: bool,
}

/// The lock of `serialise`.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The declared body, read the way serde derives it.
#[derive(serde::Deserialize)]
struct Body {
    item_id: String,
    available: bool,
}

fn written_lookup(m: GatewayMistakes, g: &TestGateway, item: &str) -> Lookup {
    let fail = |code| Outcome::Failed(Failure::new(code));
    let cfg = g.config();
    let clock = g.clock();
    let deadline = clock.now() + cfg.deadline;
    let global_before = g.counters().attempts;
    if !m.lookup_per_attempt {
        g.count_lookup();
    }
    if !m.skip_breaker && g.breaker().admit(clock.now()) == Admission::Rejected {
        if m.neutral_on_rejection {
            g.breaker().record_neutral();
        }
        return Lookup {
            outcome: fail(FailureCode::BreakerOpen),
            attempts: 0,
        };
    }
    let _one = m
        .serialise
        .then(|| ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()));
    let global_before = if m.serialise {
        g.counters().attempts
    } else {
        global_before
    };
    let mut attempts = 0;
    let outcome = loop {
        let timeout = if m.ignore_deadline {
            cfg.attempt_timeout
        } else {
            cfg.attempt_timeout.min(deadline - clock.now())
        };
        attempts += 1;
        g.count_attempt();
        if m.lookup_per_attempt {
            g.count_lookup();
        }
        let mut server_wait = None;
        let retry = match g.provider().get(item, timeout) {
            Err(TransportFailure::Timeout | TransportFailure::Connection) => true,
            Ok(r) => match r.status {
                200 if m.body_by_derive => match serde_json::from_str::<Body>(&r.body) {
                    Ok(b) if b.item_id == item => {
                        break Outcome::Available(Availability {
                            item_id: b.item_id,
                            available: b.available,
                        })
                    }
                    _ => break fail(FailureCode::InvalidPayload),
                },
                200 => match serde_json::from_str::<serde_json::Value>(&r.body) {
                    Ok(v)
                        if m.refuse_extra_fields && v.as_object().is_some_and(|o| o.len() > 2) =>
                    {
                        break fail(FailureCode::InvalidPayload)
                    }
                    Ok(v) if v["item_id"] == item && v["available"].is_boolean() => {
                        let available = v["available"].as_bool().unwrap_or(false);
                        break Outcome::Available(Availability {
                            item_id: item.into(),
                            available,
                        });
                    }
                    _ => break fail(FailureCode::InvalidPayload),
                },
                404 => break Outcome::Missing,
                429 if m.retry_429 => true,
                429 => break fail(FailureCode::ProviderRateLimited),
                400 | 401 | 403 => break fail(FailureCode::IntegrationRejected),
                502..=504 if m.gives_up_on_retry_after && r.retry_after.is_some() => {
                    break fail(FailureCode::ProviderUnavailable)
                }
                502 | 504 if m.retry_after_only_on_503 => true,
                502..=504 => {
                    server_wait = r.retry_after.as_deref().and_then(|v| {
                        let v = v.trim_matches([' ', '\t']);
                        let delay_seconds = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
                        if m.retry_after_any_number || delay_seconds {
                            v.parse::<f64>().ok()
                        } else {
                            None
                        }
                    });
                    true
                }
                _ => break fail(FailureCode::UnexpectedResponse),
            },
        };
        debug_assert!(retry);
        if m.breaker_per_attempt {
            g.breaker().record_failure(clock.now());
        }
        if attempts >= cfg.max_attempts {
            break fail(FailureCode::ProviderUnavailable);
        }
        let mut backoff = (cfg.base_delay * 2f64.powi(attempts as i32 - 1)).min(cfg.max_delay);
        if m.backoff_in_f32 {
            backoff = f64::from(
                (cfg.base_delay as f32 * 2f32.powi(attempts as i32 - 1)).min(cfg.max_delay as f32),
            );
        }
        if let Some(wait) = server_wait {
            backoff = if m.retry_after_over_backoff {
                wait
            } else {
                backoff.max(wait)
            };
        }
        if m.clamps_the_pause {
            backoff = backoff.min(deadline - clock.now());
        }
        // A clamped pause ends at the deadline at the latest: only one past it would stop.
        let too_late = if m.clamps_the_pause || m.pause_to_the_deadline {
            clock.now() + backoff > deadline
        } else {
            clock.now() + backoff >= deadline
        };
        if !m.ignore_deadline && too_late {
            break fail(FailureCode::ProviderUnavailable);
        }
        if !(m.skip_zero_sleeps && backoff == 0.0) {
            clock.sleep(backoff);
        }
    };
    let outcome = match outcome {
        Outcome::Failed(f)
            if m.invent_availability && f.code == FailureCode::ProviderUnavailable =>
        {
            Outcome::Available(Availability {
                item_id: item.into(),
                available: true,
            })
        }
        other => other,
    };
    match &outcome {
        Outcome::Available(_) | Outcome::Missing => g.breaker().record_success(),
        Outcome::Failed(f)
            if f.code == FailureCode::IntegrationRejected && m.rejection_is_success =>
        {
            g.breaker().record_success()
        }
        Outcome::Failed(f)
            if f.code == FailureCode::IntegrationRejected && m.rejection_is_failure =>
        {
            g.breaker().record_failure(clock.now())
        }
        Outcome::Failed(f) if f.code == FailureCode::IntegrationRejected => {
            g.breaker().record_neutral()
        }
        Outcome::Failed(_) if m.breaker_per_attempt => {}
        Outcome::Failed(_) => g.breaker().record_failure(clock.now()),
    }
    if m.subtract_global {
        // The mistake: deriving this lookup's attempts from global totals.
        std::thread::yield_now();
        attempts = (g.counters().attempts - global_before) as u32;
    }
    Lookup { outcome, attempts }
}

macro_rules! gateway_mistake {
    ($($field:ident),*) => {
        |g, item| written_lookup(GatewayMistakes { $($field: true,)* ..GatewayMistakes::default() }, g, item)
    };
}

/// The variable that names the marker file of `fouls_its_folder_once`.
pub const FOUL_MARKER_VAR: &str = "GRADER_TEST_FOUL_MARKER";

/// This process's parent when it is a fork server, as in a session (or, for code in a
/// runner, the runner zygote that forks runners for the checks a fork server forks); anything
/// else is a kit bug for the tests that use it (they would stop the test run itself).
fn fork_server() -> rustix::process::Pid {
    let parent = rustix::process::getppid().expect("a parent");
    let cmdline =
        std::fs::read(format!("/proc/{}/cmdline", parent.as_raw_nonzero())).unwrap_or_default();
    let cmdline = String::from_utf8_lossy(&cmdline);
    assert!(
        // The zygote's argument (`kit_runner`'s, private there).
        cmdline.contains(grader_checks::forks::SERVER_ARG) || cmdline.contains("__zygote"),
        "not forked from a fork server"
    );
    parent
}

/// What a hostile learner's code tries once the check runs, each attempt as `name` with
/// whether the system let it: `refused: fork, exec, … | allowed: a thread, …`. Each attempt
/// ends at once (a forked child exits straight away), so it stays bounded when a
/// protection fails.
pub fn probe_sandbox() -> String {
    use std::io::Write;
    let kit_file = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let parent = rustix::process::getppid();
    let attempts: Vec<(&str, bool)> = vec![
        ("a thread", {
            std::thread::Builder::new()
                .spawn(|| 7)
                .is_ok_and(|t| t.join().is_ok())
        }),
        ("a signal to itself", {
            rustix::process::test_kill_process(rustix::process::getpid()).is_ok()
        }),
        ("fork", {
            // SAFETY: the child only exits.
            match unsafe { libc::fork() } {
                0 => unsafe { libc::_exit(0) },
                -1 => false,
                pid => {
                    let mut status = 0;
                    // SAFETY: waits for the child just made.
                    unsafe { libc::waitpid(pid, &mut status, 0) };
                    true
                }
            }
        }),
        ("exec", std::process::Command::new("true").status().is_ok()),
        ("read a kit file", std::fs::read(kit_file).is_ok()),
        ("read its own program (the symbol table)", {
            std::env::current_exe().is_ok_and(|me| std::fs::read(me).is_ok())
        }),
        ("read /etc/passwd", std::fs::read("/etc/passwd").is_ok()),
        // Its libraries, yes; their separate debug information (which a backtrace would
        // read and inflate at every panic), no: not even where a debug package put it.
        (
            "list the system's libraries",
            std::fs::read_dir("/usr/lib").is_ok(),
        ),
        ("read the libraries' debug information", {
            ["/usr/lib/debug", "/lib/debug"]
                .iter()
                .any(|folder| std::fs::read_dir(folder).is_ok())
        }),
        // A link in a library folder to a file outside them (Debian's `/usr/lib/cpp`, to
        // `/usr/bin/cpp-12`): a rule on the link would be a rule on the program.
        (
            "read a program through a link in the library folders",
            std::fs::read("/usr/lib/cpp").is_ok(),
        ),
        (
            "read its own memory",
            std::fs::File::open("/proc/self/mem").is_ok(),
        ),
        // The judge, in a runner: the checks' expectations and the reference's digests.
        ("read its parent's memory", {
            parent.is_some_and(|p| {
                std::fs::File::open(format!("/proc/{}/mem", p.as_raw_nonzero())).is_ok()
            })
        }),
        ("read its parent's input", {
            parent.is_some_and(|p| {
                std::fs::File::open(format!("/proc/{}/fd/0", p.as_raw_nonzero())).is_ok()
            })
        }),
        ("read its parent's memory (process_vm_readv)", {
            parent.is_some_and(|p| {
                let mut byte = [0u8; 1];
                let local = libc::iovec {
                    iov_base: byte.as_mut_ptr().cast(),
                    iov_len: 1,
                };
                // Any address: refused or not, the call says whether it may look.
                let remote = libc::iovec {
                    iov_base: 0x1000 as *mut libc::c_void,
                    iov_len: 1,
                };
                // SAFETY: one byte into a local buffer; the remote side is only read.
                let n = unsafe {
                    libc::process_vm_readv(p.as_raw_nonzero().get(), &local, 1, &remote, 1, 0)
                };
                n >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EPERM)
            })
        }),
        ("list its folder", std::fs::read_dir(".").is_ok()),
        ("write a file", {
            std::fs::File::create("escape.txt").is_ok_and(|mut f| f.write_all(b"x").is_ok())
        }),
        ("write /tmp", {
            // Removed again where it could be made (unconfined): the probe leaves nothing.
            let path = format!("/tmp/kit-sandbox-probe-{}", std::process::id());
            let made = std::fs::File::create(&path).is_ok();
            if made {
                let _ = std::fs::remove_file(&path);
            }
            made
        }),
        ("a signal to its parent", {
            parent.is_some_and(|p| rustix::process::test_kill_process(p).is_ok())
        }),
        ("a signal to its process group", {
            // SAFETY: signal 0 only asks whether it could be sent.
            unsafe { libc::kill(0, 0) == 0 }
        }),
        // A file's owner gets SIGIO when the file is ready: a signal no `kill` sends. Owned
        // by itself, and never made ready, so harmless where it is let through.
        ("a file's owner (F_SETOWN)", {
            let mut fds = [0; 2];
            // SAFETY: plain system calls on a pipe of its own, left to the process's end.
            unsafe {
                libc::pipe(fds.as_mut_ptr()) == 0
                    && libc::fcntl(fds[0], libc::F_SETOWN, libc::getpid()) == 0
            }
        }),
        ("a file's owner (FIOSETOWN)", {
            let mut fds = [0; 2];
            let me: libc::c_int = std::process::id() as libc::c_int;
            // SAFETY: as above; the owner is read from `me`.
            unsafe { libc::pipe(fds.as_mut_ptr()) == 0 && libc::ioctl(fds[0], 0x8901, &me) == 0 }
        }),
        // A lock is seen by every process that opens the file: here its own standard input,
        // taken and let go at once.
        ("a lock on a file (flock)", {
            // SAFETY: plain system calls on its own standard input.
            unsafe {
                libc::flock(0, libc::LOCK_SH | libc::LOCK_NB) == 0
                    && libc::flock(0, libc::LOCK_UN) == 0
            }
        }),
        ("a lock on a file (fcntl)", {
            let mut lock: libc::flock = unsafe { std::mem::zeroed() };
            lock.l_type = libc::F_RDLCK as libc::c_short;
            // SAFETY: only asks whether a lock would conflict; takes none.
            unsafe { libc::fcntl(0, libc::F_OFD_GETLK, &mut lock) == 0 }
        }),
        ("clear its parent-death signal", {
            // SAFETY: a plain system call on this process.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, 0, 0, 0, 0) == 0 }
        }),
        ("a signal to every process", {
            // SAFETY: signal 0 only asks whether it could be sent.
            unsafe { libc::kill(-1, 0) == 0 }
        }),
        (
            "a TCP socket",
            std::net::TcpListener::bind("127.0.0.1:0").is_ok(),
        ),
        ("a new session", rustix::process::setsid().is_ok()),
        ("memory outside the limit (memfd)", {
            // SAFETY: a plain system call with a valid name.
            let fd = unsafe { libc::memfd_create(c"hoard".as_ptr(), 0) };
            fd >= 0
        }),
        // Each of these is harmless where it is let through: on its own report, on itself,
        // read-only, or undone at once.
        ("change a file's mode", {
            // SAFETY: descriptor 3 is its own report (see `names_its_descriptors`).
            unsafe { libc::fchmod(3, 0o600) == 0 }
        }),
        ("read another process's limits", {
            let mut old = libc::rlimit64 {
                rlim_cur: 0,
                rlim_max: 0,
            };
            let pid = parent.map_or(1, |p| p.as_raw_nonzero().get());
            // SAFETY: reads the limit into `old`; sets nothing.
            unsafe { libc::prlimit64(pid, libc::RLIMIT_NOFILE, std::ptr::null(), &mut old) == 0 }
        }),
        ("set a priority", {
            // SAFETY: its own priority, to the value it has.
            unsafe {
                libc::setpriority(
                    libc::PRIO_PROCESS,
                    0,
                    libc::getpriority(libc::PRIO_PROCESS, 0),
                ) == 0
            }
        }),
        ("watch files (fanotify)", {
            // SAFETY: a plain system call; the descriptor is left to the process's end.
            unsafe { libc::fanotify_init(libc::FAN_CLASS_NOTIF, 0) >= 0 }
        }),
        ("watch files (inotify)", {
            // SAFETY: as above.
            unsafe { libc::inotify_init1(0) >= 0 }
        }),
        ("System V shared memory", {
            // SAFETY: a plain system call; a segment made is removed at once.
            let id = unsafe { libc::shmget(libc::IPC_PRIVATE, 4096, 0o600) };
            if id >= 0 {
                unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
            }
            id >= 0
        }),
        ("read the kernel log's size", {
            // SAFETY: action 10 only asks for the size of the kernel's log buffer.
            unsafe { libc::syscall(libc::SYS_syslog, 10, std::ptr::null_mut::<u8>(), 0) >= 0 }
        }),
    ];
    let (allowed, refused): (Vec<_>, Vec<_>) = attempts.into_iter().partition(|(_, ok)| *ok);
    let names = |list: Vec<(&str, bool)>| {
        list.into_iter()
            .map(|(name, _)| name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("refused: {} | allowed: {}", names(refused), names(allowed))
}

/// Writes `bytes` as a frame on descriptor 3 (the runner's socket to the judge), as a
/// learner's code in a runner can.
/// Whether `forges_space_digests` has forged its answer.
static FORGED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn forge_answer(bytes: &[u8]) {
    #[cfg(unix)]
    {
        use std::os::fd::FromRawFd;
        // SAFETY: the runner's socket; not closed here (the value is forgotten).
        let socket = unsafe { std::fs::File::from_raw_fd(3) };
        let mut socket = std::mem::ManuallyDrop::new(socket);
        let _ = kit_runner::wire::write_frame(&mut *socket, bytes);
    }
}

/// The names of this process's environment variables, sorted: what a learner's code could
/// read of the grader's environment.
fn environment_names() -> String {
    let mut names: Vec<String> = std::env::vars_os()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    names.sort();
    format!("environment: {}", names.join(" "))
}

/// Whether a thread could be started where a runner loads the learner's library (as a
/// library's constructor would), for `threads_at_load`: set by the test's runner.
pub static THREAD_AT_LOAD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// The 0-based call of the process on which `wrong_on_one_call` answers wrong: past the
/// exhaustive check's first question to a runner.
pub const WRONG_CALL: usize = 5000;

/// Counts the calls of `retry_request` this process made, for `counts_across_checks` and
/// `wrong_on_one_call`.
static CALLS_SO_FAR: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A build3 implementation of `retry_request`, by name.
pub fn build3(label: &str) -> Option<build3::Learner> {
    let retry_request: RetryFn = match label {
        "reference" => return Some(build3::reference()),
        "correct" => CORRECT,
        "stub" => |_, _, _, _| todo!(),
        "unimplemented" => |_, _, _, _| unimplemented!("later"),
        "extra_attempt" => mistake!(extra_attempt),
        "sleep_after_last" => mistake!(sleep_after_last),
        "clamp_server_wait" => mistake!(clamp_server_wait),
        "retry_permanent" => mistake!(retry_permanent),
        "validate_after_first_call" => mistake!(validate_after_first_call),
        "no_validation" => mistake!(no_validation),
        "nan_wait_stops" => mistake!(nan_wait_stops),
        "stops_at_equal_budget" => mistake!(stops_at_equal_budget),
        "prints_detail" => mistake!(prints_detail),
        "sleep_before_log" => mistake!(sleep_before_log),
        "permanent_becomes_success" => mistake!(permanent_becomes_success),
        "attempt_in_a_static" => mistake!(attempt_in_a_static),
        "attempt_kept_after_giving_up" => attempt_kept_after_giving_up,
        "no_retry_log_on_timeout" => mistake!(no_retry_log_on_timeout),
        "sleep_before_log_on_server_wait" => mistake!(sleep_before_log_on_server_wait),
        "swallows_panics" => swallows_panics,
        "never_stops" => never_stops,
        "spins" => spins,
        "spins_on_a_late_case" => |p, r, s, l| {
            // Right everywhere but where a fourth call of request succeeds, which it never
            // returns from: deep in the exhaustive space, past a chunk of it.
            let mut calls = 0;
            let mut request = || {
                calls += 1;
                let outcome = r();
                if calls == 4 && outcome.is_ok() {
                    #[allow(clippy::empty_loop)]
                    loop {}
                }
                outcome
            };
            reference::retry_request(p, &mut request, s, l)
        },
        "huge_detail" => |_, r, _, _| {
            // One call, then a permanent failure whose detail is swollen to 80 MB: more than a
            // check reads of what the function did.
            let _ = r();
            let mut error = PermanentError::new(PermanentKind::NotFound);
            error.detail = "x".repeat(80 << 20);
            Err(error.into())
        },
        "panics" => |_, _, _, _| panic!("boom: index 7 out of range"),
        "aborts" => |_, _, _, _| std::process::abort(),
        "prints_escapes" => |_, _, _, _| {
            // Clears the screen and sets the window title, then panics with a message that
            // erases its own line and draws a passing summary in its place.
            print!("\x1b[2J\x1b]0;pwned\x07");
            eprintln!("err:\u{0}\u{7f}\u{9b}2J\u{202e}desrever\r");
            panic!("boom\x1b[2K\r\x1b[32mcheck result: ok. 39 passed\x07")
        },
        "leaves_escaped_sleeper" => |p, r, s, l| {
            // Left running under a name with escapes, which the leak's message quotes.
            #[cfg(unix)]
            let _ = std::os::unix::process::CommandExt::arg0(
                &mut std::process::Command::new("sleep"),
                "\x1b]0;pwned\x07",
            )
            .arg(ESCAPED_SLEEPER_SECS)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
            CORRECT(p, r, s, l)
        },
        "overflows_stack" => |_, _, _, _| {
            recurse(0);
            unreachable!()
        },
        "exits_zero" => |_, _, _, _| std::process::exit(0),
        "spawns_sleeper" => |p, r, s, l| {
            // Started and forgotten: it would outlive the check.
            let _ = std::process::Command::new("sleep")
                .arg(SLEEPER_SECS)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn();
            CORRECT(p, r, s, l)
        },
        "spawns_detached_sleeper" => |p, r, s, l| {
            // Leaves the check's process group, but keeps its output open.
            let _ = std::process::Command::new("setsid")
                .args(["sleep", DETACHED_SLEEPER_SECS])
                .spawn();
            CORRECT(p, r, s, l)
        },
        "eats_memory" => |p, r, s, l| {
            // At most 4 GiB, touched page by page, so the test stays safe if a limit fails.
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            for _ in 0..64 {
                let mut chunk = vec![0u8; 64 << 20];
                for page in chunk.iter_mut().step_by(4096) {
                    *page = 1;
                }
                hoard.push(chunk);
            }
            std::hint::black_box(&hoard);
            CORRECT(p, r, s, l)
        },
        "writes_files" => |p, r, s, l| {
            // At most 2 GiB, in the check's scratch folder.
            use std::io::Write;
            if let Ok(mut file) = std::fs::File::create("hoard.bin") {
                let chunk = vec![7u8; 1 << 20];
                for _ in 0..2048 {
                    if file.write_all(&chunk).is_err() {
                        break;
                    }
                }
            }
            CORRECT(p, r, s, l)
        },
        "spawns_threads" => |p, r, s, l| {
            // At most 500 threads, each asleep for a while.
            let handles: Vec<_> = (0..500)
                .map(|_| {
                    std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_secs(5)))
                })
                .collect();
            std::hint::black_box(&handles);
            CORRECT(p, r, s, l)
        },
        "probes_its_sandbox" => |_, _, _, _| panic!("{}", probe_sandbox()),
        // In a runner, descriptor 3 is the socket to the judge: these write answers of their
        // own on it, ahead of the runner's.
        "forges_garbage_answers" => |p, r, s, l| {
            forge_answer(&[0xff, 0xff, 0xff]);
            reference::retry_request(p, r, s, l)
        },
        "forges_a_deliberate_panic" => |p, r, s, l| {
            // Says the check's deliberate panic in request came out, for a question that
            // asked for none: a bug of the check's, were it believed.
            forge_answer(&kit_runner::wire::encode(
                &kit_runner::build3::Told::Recorded {
                    recording: build3::recording::Recording::empty(),
                    ending: Some(kit_runner::build3::Ending::Deliberate(
                        build3::recording::Callback::Request,
                    )),
                },
            ));
            reference::retry_request(p, r, s, l)
        },
        "forges_an_inconsistent_answer" => |p, r, s, l| {
            // Three calls, as the fixtures' scripts take, with no callback in the order.
            let mut recording = build3::recording::Recording::empty();
            recording.calls = 3;
            recording.result = Some(Ok(serde_json::json!({"job_id": "fresh_3"})));
            forge_answer(&kit_runner::wire::encode(
                &kit_runner::build3::Told::Recorded {
                    recording,
                    ending: None,
                },
            ));
            reference::retry_request(p, r, s, l)
        },
        "wrong_on_one_call" => |p, r, s, l| {
            // Right on every call of the process but one, deep in the exhaustive space: that
            // case comes out wrong among the others and right when it is run again alone.
            let n = CALLS_SO_FAR.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n == WRONG_CALL {
                Ok(Reply::Null)
            } else {
                reference::retry_request(p, r, s, l)
            }
        },
        "counts_across_checks" => |p, r, s, l| {
            // Right for the first two calls of the process, wrong after: a verdict that
            // depended on the checks run before it would show here.
            let n = CALLS_SO_FAR.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n < 2 {
                reference::retry_request(p, r, s, l)
            } else {
                Ok(Reply::Null)
            }
        },
        "forges_a_kit_bug" => |_, r, _, _| {
            // Calls request until the kit's call guard panics, catches that, and raises a
            // payload of its own with resume_unwind, which runs no panic hook: the last
            // location the hook saw would be the kit's.
            let guard = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| loop {
                let _ = r();
            }));
            std::panic::resume_unwind(Box::new(format!("caught: {}", guard.is_err())))
        },
        "rewrites_its_report_at_exit" => |p, r, s, l| {
            // Runs after the report is written, if anything does: replaces it with one that
            // cannot be read (the report is descriptor 3, as `names_its_descriptors` shows).
            extern "C" fn clobber() {
                // SAFETY: plain system calls on a descriptor number; harmless if it is closed.
                unsafe {
                    libc::ftruncate(3, 0);
                    libc::pwrite(3, b"x".as_ptr().cast(), 1, 0);
                }
            }
            // SAFETY: registers a function that takes nothing and returns nothing.
            unsafe { libc::atexit(clobber) };
            CORRECT(p, r, s, l)
        },
        "kills_its_parent" => |p, r, s, l| {
            // In a session, the parent is the fork server; the check goes down with it.
            let _ = rustix::process::kill_process(fork_server(), rustix::process::Signal::KILL);
            std::thread::sleep(std::time::Duration::from_secs(2));
            CORRECT(p, r, s, l)
        },
        "stops_its_parent_through_a_files_owner" => |p, r, s, l| {
            // Its parent (the runner zygote, or the judge) as the owner of a pipe, which gets
            // the signal F_SETSIG names when the pipe is ready: SIGSTOP, which no `kill` of
            // the sandbox's would let through. Stopped, a zygote could fork no more runners.
            let mut fds = [0; 2];
            // SAFETY: plain system calls on a pipe of its own.
            unsafe {
                if libc::pipe(fds.as_mut_ptr()) == 0 {
                    libc::fcntl(fds[0], libc::F_SETOWN, libc::getppid());
                    libc::fcntl(fds[0], 10, libc::SIGSTOP); // F_SETSIG
                    let flags = libc::fcntl(fds[0], libc::F_GETFL);
                    libc::fcntl(fds[0], libc::F_SETFL, flags | libc::O_ASYNC);
                    libc::write(fds[1], b"x".as_ptr().cast(), 1);
                }
            }
            CORRECT(p, r, s, l)
        },
        "leaves_marks_for_the_next_check" => |p, r, s, l| {
            // Once per process: fails if an earlier check's process left a mark where this
            // one can see it — its standard input's flags (shared by every runner, if they
            // shared one), or a lock on it (seen by every process that opens the same file)
            // — then leaves both marks for the next.
            static LOOKED: std::sync::atomic::AtomicBool =
                std::sync::atomic::AtomicBool::new(false);
            if !LOOKED.swap(true, std::sync::atomic::Ordering::SeqCst) {
                let mut lock: libc::flock = unsafe { std::mem::zeroed() };
                lock.l_type = libc::F_WRLCK as libc::c_short;
                lock.l_start = 4242;
                lock.l_len = 1;
                // SAFETY: plain system calls on its own standard input.
                let (flags, locked) = unsafe {
                    let flags = libc::fcntl(0, libc::F_GETFL);
                    let asked = libc::fcntl(0, libc::F_OFD_GETLK, &mut lock) == 0;
                    (
                        flags,
                        asked && lock.l_type != libc::F_UNLCK as libc::c_short,
                    )
                };
                assert!(
                    flags < 0 || flags & libc::O_APPEND == 0,
                    "an earlier check's mark on its input"
                );
                assert!(!locked, "an earlier check's lock on its input");
                // SAFETY: as above; the lock is a read lock, at one byte.
                unsafe {
                    libc::fcntl(0, libc::F_SETFL, flags.max(0) | libc::O_APPEND);
                    lock.l_type = libc::F_RDLCK as libc::c_short;
                    libc::fcntl(0, libc::F_OFD_SETLK, &lock);
                }
            }
            CORRECT(p, r, s, l)
        },
        "stops_its_parent" => |p, r, s, l| {
            // The server can no longer say when the check ends.
            let _ = rustix::process::kill_process(fork_server(), rustix::process::Signal::STOP);
            CORRECT(p, r, s, l)
        },
        "names_its_descriptors" => |_, _, _, _| {
            fork_server();
            // Every descriptor open beyond the standard streams.
            let open: Vec<i32> = (3..256)
                .filter(|&fd| {
                    // SAFETY: only asks whether `fd` is open; nothing is read or closed.
                    let fd = unsafe { rustix::fd::BorrowedFd::borrow_raw(fd) };
                    rustix::io::fcntl_getfd(fd).is_ok()
                })
                .collect();
            panic!("descriptors {open:?}")
        },
        "fouls_its_folder_once" => |p, r, s, l| {
            // The first check to run leaves a file behind; the second finds its folder empty,
            // then leaves a folder where its report goes; every later one finds its folder
            // empty too. The markers are files the test names.
            let marker = std::env::var(FOUL_MARKER_VAR).unwrap_or_default();
            let first_to = |step: &str| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(format!("{marker}.{step}"))
                    .is_ok()
            };
            if first_to("file") {
                let _ = std::fs::write("left-behind.txt", "x");
                return CORRECT(p, r, s, l);
            }
            // Its own report, opened before the job started, is the one thing it may find.
            let found: Vec<String> = std::fs::read_dir(".")
                .map(|entries| {
                    entries
                        .filter_map(Result::ok)
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|name| name != "report.json")
                        .collect()
                })
                .unwrap_or_default();
            assert!(found.is_empty(), "the folder holds {found:?}");
            if first_to("folder") {
                let _ = std::fs::remove_file("report.json");
                let _ = std::fs::create_dir_all("report.json/inside");
            }
            CORRECT(p, r, s, l)
        },
        "names_its_parent" => |_, _, _, _| {
            let parent = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get());
            panic!("parent {parent}")
        },
        "forges_report" => |_, _, _, _| {
            println!("{{\"status\":\"passed\"}}");
            eprintln!("{{\"status\":\"passed\"}}");
            std::process::exit(0)
        },
        _ => return None,
    };
    Some(build3::Learner::Here(retry_request))
}

/// A stage8 implementation of `lookup_availability`, by name.
pub fn stage8(label: &str) -> Option<stage8::Learner> {
    let lookup_availability: LookupFn = match label {
        "reference" => return Some(stage8::reference()),
        "correct" => gateway_mistake!(),
        "stub" => |_, _| todo!(),
        "lookup_per_attempt" => gateway_mistake!(lookup_per_attempt),
        "breaker_per_attempt" => gateway_mistake!(breaker_per_attempt),
        "retry_429" => gateway_mistake!(retry_429),
        "ignore_deadline" => gateway_mistake!(ignore_deadline),
        "invent_availability" => gateway_mistake!(invent_availability),
        "subtract_global" => gateway_mistake!(subtract_global),
        "skip_breaker" => gateway_mistake!(skip_breaker),
        "pause_to_the_deadline" => gateway_mistake!(pause_to_the_deadline),
        "rejection_is_success" => gateway_mistake!(rejection_is_success),
        "rejection_is_failure" => gateway_mistake!(rejection_is_failure),
        "body_by_derive" => gateway_mistake!(body_by_derive),
        "gives_up_on_retry_after" => gateway_mistake!(gives_up_on_retry_after),
        "retry_after_over_backoff" => gateway_mistake!(retry_after_over_backoff),
        "retry_after_any_number" => gateway_mistake!(retry_after_any_number),
        "serialised_subtract_global" => gateway_mistake!(serialise, subtract_global),
        "refuse_extra_fields" => gateway_mistake!(refuse_extra_fields),
        "clamps_the_pause" => gateway_mistake!(clamps_the_pause),
        "rejection_frees_the_probe" => gateway_mistake!(neutral_on_rejection),
        "retry_after_only_on_503" => gateway_mistake!(retry_after_only_on_503),
        "backoff_in_f32" => gateway_mistake!(backoff_in_f32),
        "skips_zero_sleeps" => gateway_mistake!(skip_zero_sleeps),
        "lookup_never_stops" => |g, item| loop {
            let _ = g.provider().get(item, 0.1);
        },
        "spins" => |_, _| spins_forever(),
        "spins_on_a_late_case" => |g, item| {
            // Only a lookup whose fifth attempt is answered, which no script of the
            // exhaustive space has before its runs of one transient reply.
            let l = reference::lookup_availability(g, item);
            if l.attempts == 5 && matches!(l.outcome, kit_types::Outcome::Available(_)) {
                return spins_forever();
            }
            l
        },
        "panics" => |_, _| panic!("boom: index 7 out of range"),
        "aborts" => |_, _| std::process::abort(),
        "overflows_stack" => |_, _| {
            recurse(0);
            unreachable!()
        },
        "exits_zero" => |_, _| std::process::exit(0),
        "probes_its_sandbox" => |_, _| panic!("{}", probe_sandbox()),
        "names_its_environment" => |_, _| panic!("{}", environment_names()),
        "huge_item_id" => |g, item| {
            // One extra call, for an item named with 8 MiB: a failure quotes every call.
            let _ = g.provider().get(&"x".repeat(8 << 20), 0.1);
            reference::lookup_availability(g, item)
        },
        "threads_at_load" => |_, _| {
            panic!(
                "a thread started when the library loaded: {:?}",
                THREAD_AT_LOAD.get()
            )
        },
        "spawns_threads" => |g, item| {
            // At most 500 threads, each asleep for a while.
            let handles: Vec<_> = (0..500)
                .map(|_| {
                    std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_secs(5)))
                })
                .collect();
            std::hint::black_box(&handles);
            reference::lookup_availability(g, item)
        },
        // In a runner, descriptor 3 is the socket to the judge: these write answers of their
        // own on it, ahead of the runner's.
        "forges_garbage_answers" => |g, item| {
            forge_answer(&[0xff, 0xff, 0xff]);
            reference::lookup_availability(g, item)
        },
        "forges_an_inconsistent_answer" => |g, item| {
            // The fixture's answer, with provider calls that do not follow the provider's
            // numbering (the first call numbered 7).
            let call = |number, seq| kit_types::gateway::fakes::Call {
                item_id: item.to_string(),
                timeout: 0.4,
                at: 0.0,
                number,
                number_for_item: number,
                seq,
            };
            forge_answer(&kit_runner::wire::encode(
                &kit_runner::stage8::Told::Looked {
                    ran: Ok(Lookup {
                        outcome: kit_types::Outcome::Available(kit_types::Availability {
                            item_id: item.to_string(),
                            available: true,
                        }),
                        attempts: 3,
                    }),
                    seen: kit_runner::stage8::session::Seen {
                        calls: vec![call(7, 1), call(8, 3), call(9, 5)],
                        answers: Vec::new(),
                        sleeps: Vec::new(),
                        counters: kit_types::gateway::Counters {
                            logical_lookups: 1,
                            attempts: 3,
                        },
                        breaker: kit_types::BreakerState::Closed { failures: 0 },
                        now: 0.15,
                    },
                },
            ));
            reference::lookup_availability(g, item)
        },
        "forges_space_digests" => |g, item| {
            // Once, on the exhaustive check's first case: an answer for the whole first
            // stretch, every case a digest made up, ahead of the runner's own answer.
            if !FORGED.swap(true, std::sync::atomic::Ordering::SeqCst) {
                let runs = vec![kit_runner::stage8::space::CaseRun::Digest(0x5eed); 1024];
                forge_answer(&kit_runner::wire::encode(&kit_runner::stage8::Told::Space(
                    runs,
                )));
            }
            reference::lookup_availability(g, item)
        },
        "wrong_at_its_first_depth" => |g, item| {
            // Wrong (an attempt too many) wherever it runs at the stack depth of its first
            // lookup in the process — the exhaustive space's runs — and right elsewhere: a
            // judge that compared a run made another way in place of the one sent would see
            // only right runs.
            static FIRST: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
            let here = 0u8;
            let at = std::hint::black_box(std::ptr::addr_of!(here)) as usize;
            let first = *FIRST.get_or_init(|| at);
            let mut lookup = reference::lookup_availability(g, item);
            if at == first {
                lookup.attempts += 1;
            }
            lookup
        },
        "wrong_on_one_call" => |g, item| {
            // Right on every lookup of the process but one, deep in the exhaustive space.
            let n = CALLS_SO_FAR.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n == WRONG_CALL {
                Lookup {
                    outcome: kit_types::Outcome::Missing,
                    attempts: 0,
                }
            } else {
                reference::lookup_availability(g, item)
            }
        },
        "counts_across_checks" => |g, item| {
            // Right for the first twenty lookups of the process, wrong after: a verdict that
            // depended on the checks run before it would show here.
            let n = CALLS_SO_FAR.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n < 20 {
                reference::lookup_availability(g, item)
            } else {
                Lookup {
                    outcome: kit_types::Outcome::Missing,
                    attempts: 0,
                }
            }
        },
        _ => return None,
    };
    Some(stage8::Learner::Here(lookup_availability))
}

#[allow(clippy::empty_loop)]
fn spins_forever() -> Lookup {
    loop {}
}

/// Knobs for a learner's fetcher: each mistake is one changed line of a correct one.
#[derive(Clone, Copy, Default)]
struct FetchMistakes {
    treats_429_as_permanent: bool,
    treats_500_as_transient: bool,
    reads_retry_after_on_503: bool,
    accepts_any_case_get: bool,
    non_json_200_is_null: bool,
    date_retry_after_is_zero: bool,
    parses_fractions: bool,
    case_sensitive_header: bool,
    last_header_wins: bool,
    no_trim: bool,
    /// `str::trim`, which also removes line breaks and other whitespace.
    trims_all_whitespace: bool,
    /// The excerpt is the body's first 200 bytes (`&body[..200]`).
    cuts_bytes: bool,
    whole_body_in_detail: bool,
    any_2xx_is_data: bool,
    transport_before_method: bool,
}

fn written_fetch(
    m: FetchMistakes,
    method: &str,
    url: &str,
    transport: Transport<'_>,
) -> Result<serde_json::Value, RequestError> {
    let refuse = || -> Result<serde_json::Value, RequestError> {
        Err(PermanentError::new(PermanentKind::BadRequest).into())
    };
    let is_get = if m.accepts_any_case_get {
        method.trim().eq_ignore_ascii_case("GET")
    } else {
        method == "GET"
    };
    if !is_get && !m.transport_before_method {
        return refuse();
    }
    let reply = match transport(url) {
        Ok(reply) => reply,
        Err(_) if !is_get => return refuse(),
        Err(TransportFailure::Timeout) => {
            return Err(TransientError::new(TransientReason::Timeout).into())
        }
        Err(TransportFailure::Connection) => {
            return Err(TransientError::new(TransientReason::Connection).into())
        }
    };
    if !is_get {
        return refuse();
    }
    let detail = if m.whole_body_in_detail {
        reply.body.clone()
    } else if m.cuts_bytes {
        reply.body[..reply.body.len().min(200)].to_string()
    } else {
        reply.body.chars().take(100).collect()
    };
    let permanent = |kind| -> Result<serde_json::Value, RequestError> {
        Err(PermanentError::new(kind)
            .with_status(reply.status)
            .with_detail(detail.clone())
            .into())
    };
    let retry_after = || -> Option<f64> {
        let mut values = reply.headers.iter().filter(|(n, _)| {
            if m.case_sensitive_header {
                n == "Retry-After"
            } else {
                n.eq_ignore_ascii_case("retry-after")
            }
        });
        let (_, value) = if m.last_header_wins {
            values.next_back()?
        } else {
            values.next()?
        };
        let value = if m.no_trim {
            value.as_str()
        } else if m.trims_all_whitespace {
            value.trim()
        } else {
            value.trim_matches([' ', '\t'])
        };
        if m.parses_fractions {
            return value.parse::<f64>().ok();
        }
        if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
            value.parse::<f64>().ok()
        } else if m.date_retry_after_is_zero {
            Some(0.0)
        } else {
            None
        }
    };
    match reply.status {
        200 => match serde_json::from_str(&reply.body) {
            Ok(v) => Ok(v),
            Err(_) if m.non_json_200_is_null => Ok(serde_json::Value::Null),
            Err(_) => permanent(PermanentKind::MalformedResponse),
        },
        201..=299 if m.any_2xx_is_data => Ok(serde_json::from_str(&reply.body).unwrap_or_default()),
        500 if m.treats_500_as_transient => {
            Err(TransientError::new(TransientReason::ServerError).into())
        }
        502..=504 => {
            let mut e =
                TransientError::new(TransientReason::ServerError).with_detail(detail.clone());
            if m.reads_retry_after_on_503 {
                e.retry_after = retry_after();
            }
            Err(e.into())
        }
        429 if m.treats_429_as_permanent => permanent(PermanentKind::Unexpected),
        429 => {
            let mut e =
                TransientError::new(TransientReason::RateLimited).with_detail(detail.clone());
            e.retry_after = retry_after();
            Err(e.into())
        }
        400 => permanent(PermanentKind::BadRequest),
        401 => permanent(PermanentKind::Unauthorized),
        403 => permanent(PermanentKind::Forbidden),
        404 => permanent(PermanentKind::NotFound),
        _ => permanent(PermanentKind::Unexpected),
    }
}

macro_rules! fetch_mistake {
    ($($field:ident),*) => {
        |method, url, transport| written_fetch(FetchMistakes { $($field: true,)* ..FetchMistakes::default() }, method, url, transport)
    };
}

/// A build2 implementation of `fetch`, by name.
pub fn build2(label: &str) -> Option<build2::Learner> {
    let fetch: FetchFn = match label {
        "reference" => return Some(build2::reference()),
        "correct" => fetch_mistake!(),
        "stub" => |_, _, _| todo!(),
        "treats_429_as_permanent" => fetch_mistake!(treats_429_as_permanent),
        "treats_500_as_transient" => fetch_mistake!(treats_500_as_transient),
        "reads_retry_after_on_503" => fetch_mistake!(reads_retry_after_on_503),
        "accepts_any_case_get" => fetch_mistake!(accepts_any_case_get),
        "non_json_200_is_null" => fetch_mistake!(non_json_200_is_null),
        "date_retry_after_is_zero" => fetch_mistake!(date_retry_after_is_zero),
        "parses_fractions" => fetch_mistake!(parses_fractions),
        "case_sensitive_header" => fetch_mistake!(case_sensitive_header),
        "last_header_wins" => fetch_mistake!(last_header_wins),
        "no_trim" => fetch_mistake!(no_trim),
        "trims_all_whitespace" => fetch_mistake!(trims_all_whitespace),
        "cuts_bytes" => fetch_mistake!(cuts_bytes),
        "whole_body_in_detail" => fetch_mistake!(whole_body_in_detail),
        "any_2xx_is_data" => fetch_mistake!(any_2xx_is_data),
        "transport_before_method" => fetch_mistake!(transport_before_method),
        "spins" => |_, _, _| loop {
            std::hint::spin_loop()
        },
        "panics" => |_, _, _| panic!("boom: index 7 out of range"),
        "aborts" => |_, _, _| std::process::abort(),
        _ => return None,
    };
    Some(build2::Learner::Here(fetch))
}
