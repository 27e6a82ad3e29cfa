//! The threads a runner runs cases on, and the page of marks it shares with its judge.
//!
//! A confined runner has a fixed set of threads for the learner's code — its main one and
//! its [`Workers`] — and may start no other ([`crate::sandbox::refuse_threads`]). Each marks the
//! case it runs on a page the judge also maps ([`mark`]), so that a case that never ends is
//! named by its number.

use crate::sandbox;

/// The descriptor of the page the runner marks its cases on ([`mark`]), when the judge
/// shares one.
pub(crate) const MARKS_FD: i32 = 4;

/// How many marks the page holds: one per thread a runner runs cases on.
pub(crate) const MARKS: usize = 2;

/// The distance between two marks on the page, in `u64`s: a cache line of their own each,
/// so that two threads marking cases do not slow each other down.
pub(crate) const MARK_STRIDE: usize = 16;

/// The size of the page of marks, in bytes.
pub(crate) const MARKS_SIZE: usize = MARKS * MARK_STRIDE * 8;

/// The shared page, once mapped.
static MARKED: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// Marks `case` (a 1-based number; 0: none) as what thread `slot` runs now.
pub(crate) fn mark(slot: usize, case: u64) {
    if let (Some(page), true) = (MARKED.get(), slot < MARKS) {
        let page = *page as *const std::sync::atomic::AtomicU64;
        // SAFETY: the page maps MARKS atomics for the life of the process.
        unsafe {
            (*page.add(slot * MARK_STRIDE)).store(case, std::sync::atomic::Ordering::Relaxed)
        };
    }
}

/// Maps the page the judge passed as [`MARKS_FD`], then closes the descriptor.
pub(crate) fn map_marks() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls; the mapping is kept for the life of the process.
    unsafe {
        let size = MARKS_SIZE;
        let page = libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            MARKS_FD,
            0,
        );
        libc::close(MARKS_FD);
        if page != libc::MAP_FAILED {
            let _ = MARKED.set(page as usize);
        }
    }
}

/// A job for a worker thread.
type Job = Box<dyn FnOnce() + Send>;

/// The threads besides the main one that a confined runner runs the learner's code on,
/// started before new threads are refused ([`sandbox::refuse_threads`], which each also
/// applies to itself): as many as the check's first question says (`workers` in each
/// lesson's module): one for build3's exhaustive check, as many as stage8's concurrent
/// lookups take for stage8, none for the rest.
pub(crate) struct Workers {
    jobs: Vec<std::sync::Mutex<std::sync::mpsc::Sender<Job>>>,
}

/// The workers, once started.
static WORKERS: std::sync::OnceLock<Workers> = std::sync::OnceLock::new();

impl Workers {
    /// Starts `n` workers. Unless every one is confined, none is used: the learner's code
    /// would run on a thread that may start others.
    pub(crate) fn start(n: usize) {
        let mut jobs = Vec::with_capacity(n);
        for i in 0..n {
            let (send, next) = std::sync::mpsc::channel::<Job>();
            let (ready, confined) = std::sync::mpsc::channel::<bool>();
            let started = std::thread::Builder::new()
                .name(format!("cases-{i}"))
                .spawn(move || {
                    let _ = ready.send(sandbox::refuse_threads().is_ok());
                    for job in next {
                        job();
                    }
                });
            if started.is_err() || confined.recv() != Ok(true) {
                return;
            }
            jobs.push(std::sync::Mutex::new(send));
        }
        let _ = WORKERS.set(Workers { jobs });
    }
}

/// How many workers there are (none when the sandbox is off, or they could not be started
/// confined).
pub(crate) fn workers() -> usize {
    WORKERS.get().map_or(0, |w| w.jobs.len())
}

/// Runs `job` on the first worker: [`on_worker_at`] 0.
pub(crate) fn on_worker<T: Send + 'static>(
    job: impl FnOnce() -> T + Send + 'static,
) -> Option<std::sync::mpsc::Receiver<T>> {
    on_worker_at(0, job)
}

/// Runs `job` on worker `i` and returns where its result will arrive; `None` when there is
/// no such worker: the caller then runs the work itself.
pub(crate) fn on_worker_at<T: Send + 'static>(
    i: usize,
    job: impl FnOnce() -> T + Send + 'static,
) -> Option<std::sync::mpsc::Receiver<T>> {
    let worker = WORKERS.get()?.jobs.get(i)?;
    let (done, result) = std::sync::mpsc::channel();
    let job: Job = Box::new(move || {
        let _ = done.send(job());
    });
    let sent = worker.lock().unwrap_or_else(|e| e.into_inner()).send(job);
    sent.ok().map(|()| result)
}
