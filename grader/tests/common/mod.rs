//! Helpers for the end-to-end tests: a copy of the kit as a fresh clone has it, and the
//! grader binary run on it.
//!
//! The copies never hold the learner's state: their lesson files are the pristine stubs,
//! their guidance log is empty, and what a learner may change in `practice/` is taken from
//! git (see `grader::kitcopy`). They live in a few reusable slots under the target folder,
//! so each is compiled once and then only what a test changes.
//!
//! Each copy builds into its own target folder. cargo names a path crate's artifacts after
//! its path *inside the workspace*, so two copies sharing one target folder would share
//! artifacts — and cargo could call one copy's build fresh from the other's sources.
#![allow(dead_code)] // each test module uses its own subset

use grader::kitcopy::{fresh_files, Files, Slot};
use grader::seed;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub const GRADER: &str = env!("CARGO_BIN_EXE_kit-grader");

/// How many kit copies the tests share (each compiles the kit's dependencies once).
const SLOTS: usize = 2;

pub fn kit_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("grader/ is inside the kit")
        .to_path_buf()
}

/// The target folder the kit's own build uses; the copies live under it.
pub fn target() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => kit_root().join(dir),
        _ => kit_root().join("target"),
    }
}

/// The files of a fresh clone, read once per test binary.
pub fn files() -> &'static Files {
    static FILES: OnceLock<Files> = OnceLock::new();
    FILES.get_or_init(|| {
        fresh_files(&kit_root(), grader::kitcopy::Untracked::Taken).expect("the kit's files read")
    })
}

/// A copy of the kit as a fresh clone has it, held until dropped. A copy that has never
/// built is warmed from the kit's own build (`grader::seed`), as `grade` warms its copies.
pub fn fresh_kit() -> Slot {
    let slot = Slot::acquire(&target().join("kit-tests"), SLOTS, files()).expect("a kit copy");
    warm_from_kit(slot.root(), files());
    slot
}

/// The pool of grading copies `grade` uses on the kit at `kit`, as the tests run it (without
/// CARGO_TARGET_DIR: in the kit's own target/).
pub fn grading_pool(kit: &Path) -> PathBuf {
    kit.join("target/kit-grade")
}

/// Warms (see [`warm_from_kit`]) the free slots among the first `count` of the pool of
/// grading copies at `pool`, holding `files`, as `grade` would find them: a grading copy
/// that built an older kit would compile again what changed since, once per copy (`grade`
/// seeds only the copies that never built).
pub fn warm_pool(pool: &Path, count: usize, files: &Files) {
    let mut held = Vec::new();
    while held.len() < count {
        match Slot::try_acquire(pool, count, files).expect("a grading copy") {
            Some(slot) => held.push(slot),
            None => break,
        }
    }
    for slot in &held {
        warm_from_kit(slot.root(), files);
    }
}

/// The file, in a copy's target folder, that says which state of the kit (its files and the
/// toolchain) the copy was last warmed for.
const WARMED_FOR: &str = "kit-tests-warmed-for";

/// Warms the copy of the kit at `root`, holding `files`, from the kit's own build (cargo
/// reuses what it finds up to date; see `grader::seed`): when it has never built, and again
/// after the kit changed since it was last warmed. A copy that had built an older kit would
/// otherwise compile again whatever the change touched (a change to the checks: the whole
/// `grader-checks` crate, in every copy), which the kit's own build has just compiled.
pub fn warm_from_kit(root: &Path, files: &Files) {
    if !seed::is_warm_target(&target()) {
        return;
    }
    let stamp = root.join("target").join(WARMED_FOR);
    let state = kit_state(files);
    if seed::is_warm(root) && std::fs::read_to_string(&stamp).is_ok_and(|s| s == state) {
        return;
    }
    let _lock = grader::compile::lock_builds(&target()).expect("the kit's build lock");
    seed::seed(&kit_root(), &target().join("debug"), root, files)
        .expect("the kit's build copied into the copy");
    // The copy's cached builds were made with the units the seed has just replaced, and the
    // kit's target can hold a unit older than what it depends on (one that only copies of
    // the kit build: grader-checks' without debug information, which nothing in the kit's
    // own folder builds again). Without them, the copy's next build asks cargo, which
    // compiles again whatever is out of date.
    match std::fs::remove_dir_all(root.join("target").join(grader::cache::CACHE_DIR)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            panic!("the copy's cached builds could not be removed: {e}")
        }
        _ => {}
    }
    std::fs::write(&stamp, state).expect("the copy's warm state recorded");
}

/// A digest of what a copy's build depends on besides its own edits: the kit's files and
/// the toolchain this build uses.
fn kit_state(files: &Files) -> String {
    use grader::cache::content_hash;
    let mut text = String::new();
    // RUSTC_BOOTSTRAP too: cargo compiles every crate again when it changes.
    for var in [
        "CARGO",
        "RUSTC",
        "RUSTUP_TOOLCHAIN",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_BOOTSTRAP",
    ] {
        text.push_str(&format!("{var}={:?}\n", std::env::var_os(var)));
    }
    for (path, content) in files {
        text.push_str(&format!("{} {}\n", path.display(), content_hash(content)));
    }
    content_hash(text.as_bytes())
}

pub fn grader(root: &Path, args: &[&str]) -> Output {
    grader_command(root, args)
        .output()
        .expect("the grader binary starts")
}

/// Runs the grader on the copy at `root`, requires exit status `code` (showing both streams
/// when it differs) and returns standard output.
pub fn grader_exits(root: &Path, args: &[&str], code: i32) -> String {
    let out = grader(root, args);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    stdout
}

pub fn grader_command(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(GRADER);
    command
        .arg("--root")
        .arg(root)
        .args(args)
        // The copy builds into its own target/ (see the module's doc).
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("NO_COLOR");
    command
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The pristine stub of `lesson`, as the shipped exercise folder has it.
pub fn stub(lesson: &str) -> String {
    let path = PathBuf::from(format!("exercises/{lesson}/stub.rs"));
    String::from_utf8(files().get(&path).expect("the lesson has a stub").clone())
        .expect("the stub is text")
}

/// The learner's file of `lesson` in the copy at `kit`.
pub fn learner_file(kit: &Path, lesson: &str) -> PathBuf {
    let info = grader::LessonInfo::load(kit, lesson).expect("the lesson has an info.toml");
    kit.join(info.file)
}

/// Runs lesson `name` in the copy at `kit`, whose learner file is the pristine stub, and checks
/// what a learner sees: every check unfinished, where the stub stopped, and exit status 1.
/// Returns standard output.
pub fn assert_stub_is_unfinished(kit: &Path, name: &str) -> String {
    let stdout = grader_exits(kit, &[name], 1);
    let lesson = grader::lessons::lesson(name).expect("a registered lesson");
    let total = lesson.checks.len();
    assert!(
        stdout.contains(&format!(
            "0 passed; 0 failed; {total} unfinished; 0 filtered out"
        )),
        "{stdout}"
    );
    let info = grader::LessonInfo::load(kit, name).expect("the lesson has an info.toml");
    let stopped = format!(
        "{} reached todo!() at {}:",
        lesson.function,
        info.file.display()
    );
    assert!(stdout.contains(&stopped), "{stdout}");
    assert!(!stdout.contains(" ... ok"), "{stdout}");
    stdout
}

/// Writes the learner's file of `lesson` in the copy at `kit`.
pub fn write_learner(kit: &Path, lesson: &str, text: &str) {
    std::fs::write(learner_file(kit, lesson), text).unwrap();
}

/// `lesson`'s stub with its `todo!(...)` replaced by `body`: a learner's file.
pub fn stub_with(lesson: &str, body: &str) -> String {
    let stub = stub(lesson);
    let start = stub.find("todo!(").expect("the stub has a todo!()");
    let end = start
        + stub[start..]
            .find(")\n")
            .expect("the todo!() ends its line")
        + 1;
    format!("{}{body}{}", &stub[..start], &stub[end..])
}

/// A learner's own `retry_request`, written against the stub's imports only.
pub const CORRECT_BUILD3: &str = r#"{
    policy.validate()?;
    let (mut request, mut sleep, mut log) = (request, sleep, log);
    let mut attempt = 1;
    loop {
        let e = match request() {
            Ok(v) => return Ok(v),
            Err(RequestError::Permanent(p)) => return Err(RetryError::Permanent(p)),
            Err(RequestError::Transient(e)) => e,
        };
        if attempt == policy.max_attempts {
            log(RetryEvent::stop(attempt, e.reason, StopCause::AttemptLimit));
            return Err(RetryError::Exhausted { attempts: attempt, reason: e.reason, cause: StopCause::AttemptLimit });
        }
        let backoff = (policy.base_delay * 2f64.powi(attempt as i32 - 1)).min(policy.max_delay);
        let wait = e.retry_after.filter(|w| *w >= 0.0);
        if wait.is_some_and(|w| w > policy.max_delay) {
            log(RetryEvent::stop(attempt, e.reason, StopCause::DelayBudget));
            return Err(RetryError::Exhausted { attempts: attempt, reason: e.reason, cause: StopCause::DelayBudget });
        }
        let planned = wait.map_or(backoff, |w| w.max(backoff));
        log(RetryEvent::retry(attempt, e.reason, planned));
        sleep(planned);
        attempt += 1;
    }
}"#;

/// A learner's own `lookup_availability`, written against the stub's imports only: proof
/// that the exercise can be done with what the practice crate is given.
pub const CORRECT_STAGE8: &str = r#"{
    let fail = |code| Outcome::Failed(Failure::new(code));
    let cfg = gateway.config();
    let clock = gateway.clock();
    let deadline = clock.now() + cfg.deadline;
    gateway.count_lookup();
    if gateway.breaker().admit(clock.now()) == Admission::Rejected {
        return Lookup { outcome: fail(FailureCode::BreakerOpen), attempts: 0 };
    }
    let mut attempts = 0;
    let outcome = loop {
        let timeout = cfg.attempt_timeout.min(deadline - clock.now());
        attempts += 1;
        gateway.count_attempt();
        let mut wait = None;
        match gateway.provider().get(item_id, timeout) {
            Err(TransportFailure::Timeout | TransportFailure::Connection) => {}
            Ok(r) => match r.status {
                200 => {
                    let body: serde_json::Value = match serde_json::from_str(&r.body) {
                        Ok(v) => v,
                        Err(_) => break fail(FailureCode::InvalidPayload),
                    };
                    match (body.get("item_id").and_then(|v| v.as_str()), body.get("available").and_then(|v| v.as_bool())) {
                        (Some(id), Some(available)) if body.is_object() && id == item_id => {
                            break Outcome::Available(Availability { item_id: id.to_string(), available })
                        }
                        _ => break fail(FailureCode::InvalidPayload),
                    }
                }
                404 => break Outcome::Missing,
                429 => break fail(FailureCode::ProviderRateLimited),
                400 | 401 | 403 => break fail(FailureCode::IntegrationRejected),
                502..=504 => {
                    wait = r.retry_after.as_deref().map(|v| v.trim_matches([' ', '\t']))
                        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                        .and_then(|v| v.parse::<f64>().ok());
                }
                _ => break fail(FailureCode::UnexpectedResponse),
            },
        }
        if attempts >= cfg.max_attempts {
            break fail(FailureCode::ProviderUnavailable);
        }
        let backoff = (cfg.base_delay * 2f64.powi(attempts as i32 - 1)).min(cfg.max_delay);
        let pause = wait.map_or(backoff, |w: f64| w.max(backoff));
        if clock.now() + pause >= deadline {
            break fail(FailureCode::ProviderUnavailable);
        }
        clock.sleep(pause);
    };
    match &outcome {
        Outcome::Available(_) | Outcome::Missing => gateway.breaker().record_success(),
        Outcome::Failed(f) if f.code == FailureCode::IntegrationRejected => gateway.breaker().record_neutral(),
        Outcome::Failed(_) => gateway.breaker().record_failure(clock.now()),
    }
    Lookup { outcome, attempts }
}"#;

/// A learner's own `fetch`, written against the stub's imports only.
pub const CORRECT_BUILD2: &str = r#"{
    if method != "GET" {
        return Err(PermanentError::new(PermanentKind::BadRequest).into());
    }
    let reply = match transport(url) {
        Ok(reply) => reply,
        Err(TransportFailure::Timeout) => return Err(TransientError::new(TransientReason::Timeout).into()),
        Err(TransportFailure::Connection) => return Err(TransientError::new(TransientReason::Connection).into()),
    };
    let detail: String = reply.body.chars().take(200).collect();
    let permanent = |kind| -> Result<serde_json::Value, RequestError> {
        Err(PermanentError::new(kind).with_status(reply.status).with_detail(detail.clone()).into())
    };
    match reply.status {
        200 => serde_json::from_str(&reply.body).or_else(|_| permanent(PermanentKind::MalformedResponse)),
        502..=504 => Err(TransientError::new(TransientReason::ServerError).into()),
        429 => {
            let mut e = TransientError::new(TransientReason::RateLimited);
            e.retry_after = reply
                .header("Retry-After")
                .map(|v| v.trim_matches([' ', '\t']))
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse().ok());
            Err(e.into())
        }
        400 => permanent(PermanentKind::BadRequest),
        401 => permanent(PermanentKind::Unauthorized),
        403 => permanent(PermanentKind::Forbidden),
        404 => permanent(PermanentKind::NotFound),
        _ => permanent(PermanentKind::Unexpected),
    }
}"#;

/// Waits for `child` to end, at most `limit`; past it, kills the child and fails the test
/// with "`what`".
#[allow(dead_code)] // not every test file waits for a child
pub fn wait_within(
    child: &mut std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::ExitStatus {
    let started = std::time::Instant::now();
    // Most children end within milliseconds: poll often at first, then every 20 ms (a fixed
    // 20 ms poll cost the tests that wait for hundreds of short runs seconds of sleep).
    let mut pause = std::time::Duration::from_micros(500);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{what}");
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(20));
    }
}

pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

/// A folder under the target folder that outlives the test, so a kit built in it is reused.
/// The target folder is inside the kit, where a bundle of the kit is refused: make it from
/// a copy of the kit with [`make_lasting_bundle`].
pub fn lasting(name: &str) -> PathBuf {
    target().join("bundle-tests").join(name)
}

/// Writes the bundle `platform lesson` into the [`lasting`] folder `out`, made from a copy
/// of the kit (outside which `out` is), replacing the bundle there.
pub fn make_lasting_bundle(platform: &str, lesson: &str, out: &Path, extra: &[&str]) {
    if out.exists() && !out.join(grader::bundle::MANIFEST).exists() {
        // Left by a kit from before bundles had manifests, which --force now refuses.
        std::fs::remove_dir_all(out).unwrap();
    }
    let copy = fresh_kit();
    let mut args = vec![
        "bundle",
        platform,
        lesson,
        "--out",
        path_str(out),
        "--force",
    ];
    args.extend_from_slice(extra);
    let made = grader(copy.root(), &args);
    assert!(
        made.status.success(),
        "{}\n{}",
        text(&made.stdout),
        text(&made.stderr)
    );
}

/// Every file under `dir` (relative paths), leaving out `skip` folders.
pub fn files_under(dir: &Path, skip: &[&str]) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    fn visit(
        root: &Path,
        dir: &Path,
        skip: &[&str],
        out: &mut std::collections::BTreeMap<PathBuf, Vec<u8>>,
    ) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if skip.iter().any(|s| rel == Path::new(s)) {
                continue;
            }
            if path.is_dir() {
                visit(root, &path, skip, out);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    visit(dir, dir, skip, &mut out);
    out
}

/// The descriptors [`hand_open_files`] hands the grader: a file to write, a file to read,
/// and a pipe to read. Above what the programs between the grader and the learner's code
/// open of their own (cargo's jobserver pipe, the compiler's files), so that an attack finds
/// the handed file or nothing.
pub const HANDED_FDS: [i32; 3] = [207, 208, 209];

/// A learner's function body that uses the files the grader was handed open by whatever
/// started it ([`hand_open_files`]): writes to the first, reads the second, and panics
/// with what it got. Only regular files: a descriptor of the check's own (a pipe) is left
/// alone, so the attack never blocks nor breaks its check where it finds one.
pub fn inherited_files_attack() -> String {
    let [write, read, _] = HANDED_FDS;
    format!(
        r#"use std::io::{{Read, Write}};
    use std::os::fd::FromRawFd;
    let mut said = Vec::new();
    // SAFETY: an attack's; the files are never closed here (ManuallyDrop).
    let mut log = std::mem::ManuallyDrop::new(unsafe {{ std::fs::File::from_raw_fd({write}) }});
    if log.metadata().is_ok_and(|m| m.is_file()) {{
        said.push(format!("write {write}: {{:?}}", log.write(b"reached\n").is_ok()));
    }}
    let mut secret = std::mem::ManuallyDrop::new(unsafe {{ std::fs::File::from_raw_fd({read}) }});
    if secret.metadata().is_ok_and(|m| m.is_file()) {{
        let mut text = String::new();
        let _ = secret.read_to_string(&mut text);
        said.push(format!("read {read}: {{text:?}}"));
    }}
    panic!("inherited: {{said:?}}")"#
    )
}

/// A lesson file that compiles in what the handed pipe holds (a pipe is opened again by its
/// path whatever Landlock says), then panics with it.
pub fn pipe_included_attack(lesson: &str) -> String {
    let pipe = HANDED_FDS[2];
    stub_with(
        lesson,
        &format!(r#"panic!("included: {{}}", include_str!("/dev/fd/{pipe}"))"#),
    )
}

/// What the file and the pipe handed to be read hold: found in no report.
pub const HANDED_SECRET: &str = "instructor-secret-5b7d";

/// Hands `command` open files, as a shell's `207>>log 208<secret 209< <(echo secret)` would
/// (not close-on-exec), as [`HANDED_FDS`]: `log` (for appending), a file holding
/// [`HANDED_SECRET`], and a pipe holding it; `dir` keeps the file. What the learner's code must never
/// reach, compiled or run.
pub fn hand_open_files(command: &mut Command, log: &Path, dir: &Path) {
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, HANDED_SECRET).unwrap();
    // Moved above 300 first, so that none lands on another's target.
    let high = |fd: &dyn AsRawFd| -> OwnedFd {
        // SAFETY: a plain system call; the new descriptor is owned from here.
        unsafe {
            let fd = libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 300);
            assert!(fd >= 0, "{}", std::io::Error::last_os_error());
            std::os::fd::FromRawFd::from_raw_fd(fd)
        }
    };
    let pipe = {
        let mut ends = [0; 2];
        // SAFETY: a plain system call writing two descriptors, owned from here.
        let [read, write]: [OwnedFd; 2] = unsafe {
            assert_eq!(libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC), 0);
            ends.map(|fd| std::os::fd::FromRawFd::from_raw_fd(fd))
        };
        let mut write = std::fs::File::from(write);
        std::io::Write::write_all(&mut write, HANDED_SECRET.as_bytes()).unwrap();
        // Written and closed: a reader gets the secret, then its end.
        drop(write);
        high(&read)
    };
    let files: [OwnedFd; 3] = [
        high(
            &std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(log)
                .unwrap(),
        ),
        high(&std::fs::File::open(&secret).unwrap()),
        pipe,
    ];
    let raw = files.each_ref().map(AsRawFd::as_raw_fd);
    // SAFETY: dup2 only, between fork and exec; the files live as long as the closure.
    unsafe {
        command.pre_exec(move || {
            let _keep = &files;
            for (from, to) in raw.into_iter().zip(HANDED_FDS) {
                if libc::dup2(from, to) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}
