//! Noticing that files were saved: the folder of the lessons' files is watched, and each
//! file saved in it is named once per burst of changes (an editor's save is several: write,
//! truncate, or a new file renamed over the old one), when that file has been quiet for a
//! moment. Another file that never stops changing delays no save. Changes the kernel could
//! not queue count as changes of every file; a folder removed ends the watch, and says so.
//!
//! On Linux the kernel's inotify tells, through `rustix` (already here for the sandbox):
//! the `notify` crate and its debouncer, which this replaces there, were eight more crates
//! that cargo checks on every `cargo run -p grader`, about 4 ms of each edit's wait
//! (grader/benches/README.md). Elsewhere (macOS's FSEvents, BSD's kqueue, Windows) `notify`
//! does it. The tests run both here.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A watch on a folder: saves are reported until it is dropped.
pub(crate) struct Saves {
    _watch: Watch,
}

/// What a watch tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// This file of the folder changed.
    Saved(PathBuf),
    /// The watch stopped, for this reason (the folder was removed, say): no more saves will
    /// be told.
    Stopped(String),
}

#[cfg(target_os = "linux")]
use inotify::Watch;
#[cfg(not(target_os = "linux"))]
use with_notify::Watch;

impl Saves {
    /// Watches `folder` (not what is under its subfolders) and tells `on_change` the path of
    /// each file of it that changed — written, truncated, made, renamed to or from,
    /// removed — once that file has had no change for `quiet` (or, changing all along, every
    /// [`QUIET_AT_MOST`] `quiet`s).
    pub(crate) fn watch(
        folder: &Path,
        quiet: Duration,
        on_change: impl FnMut(Change) + Send + 'static,
    ) -> io::Result<Saves> {
        Ok(Saves {
            _watch: Watch::start(folder, quiet, on_change)?,
        })
    }
}

/// A file that never stops changing is still told, every this many quiet times.
pub(crate) const QUIET_AT_MOST: u32 = 10;

#[cfg(target_os = "linux")]
mod inotify {
    use super::{Change, QUIET_AT_MOST};
    use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags, Timespec};
    use rustix::fd::{AsFd, OwnedFd};
    use rustix::fs::inotify::{self as kernel, CreateFlags, ReadFlags, WatchFlags};
    use std::io;
    use std::mem::MaybeUninit;
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    /// The changes that count as a save (those `notify` reported for a file of a folder).
    const CHANGES: WatchFlags = WatchFlags::MODIFY
        .union(WatchFlags::CLOSE_WRITE)
        .union(WatchFlags::ATTRIB)
        .union(WatchFlags::CREATE)
        .union(WatchFlags::DELETE)
        .union(WatchFlags::MOVED_FROM)
        .union(WatchFlags::MOVED_TO);

    /// The thread that reads the kernel's events, and the descriptor that stops it.
    pub(super) struct Watch {
        stop: OwnedFd,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    /// The files changed and not told yet: each with its first and last change.
    struct Pending {
        quiet: Duration,
        files: Vec<(PathBuf, Instant, Instant)>,
    }

    impl Pending {
        fn note(&mut self, path: PathBuf) {
            let now = Instant::now();
            match self.files.iter_mut().find(|(p, _, _)| *p == path) {
                Some((_, _, last)) => *last = now,
                None => self.files.push((path, now, now)),
            }
        }

        /// When the next file is due (`None`: nothing pending).
        fn next_due(&self) -> Option<Instant> {
            let at_most = self.quiet * QUIET_AT_MOST;
            self.files
                .iter()
                .map(|(_, first, last)| (*last + self.quiet).min(*first + at_most))
                .min()
        }

        /// Tells and forgets the files due now, in the order they first changed.
        fn tell_due(&mut self, on_change: &mut impl FnMut(Change)) {
            let (now, at_most) = (Instant::now(), self.quiet * QUIET_AT_MOST);
            let due = |(_, first, last): &(PathBuf, Instant, Instant)| {
                now >= *last + self.quiet || now >= *first + at_most
            };
            let (told, kept) = std::mem::take(&mut self.files).into_iter().partition(due);
            self.files = kept;
            for (path, _, _) in told {
                on_change(Change::Saved(path));
            }
        }
    }

    impl Watch {
        pub(super) fn start(
            folder: &Path,
            quiet: Duration,
            mut on_change: impl FnMut(Change) + Send + 'static,
        ) -> io::Result<Watch> {
            let events = kernel::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
            kernel::add_watch(&events, folder, CHANGES)?;
            let stop = eventfd(0, EventfdFlags::CLOEXEC)?;
            let stopped = stop.try_clone()?;
            let folder = folder.to_path_buf();
            let thread = std::thread::Builder::new()
                .name("saves".into())
                .spawn(move || {
                    if let Err(why) = read(&folder, &events, &stopped, quiet, &mut on_change) {
                        on_change(Change::Stopped(why));
                    }
                })?;
            Ok(Watch {
                stop,
                thread: Some(thread),
            })
        }
    }

    /// Reads the kernel's events about `folder` from `events` and tells the changes, until
    /// `stopped` is written (`Ok`) or the watch cannot go on (`Err`: why).
    fn read(
        folder: &Path,
        events: &OwnedFd,
        stopped: &OwnedFd,
        quiet: Duration,
        on_change: &mut impl FnMut(Change),
    ) -> Result<(), String> {
        let mut pending = Pending {
            quiet,
            files: Vec::new(),
        };
        let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
        loop {
            pending.tell_due(on_change);
            // Wait for a change, for the end, or for the next file due.
            let timeout = pending
                .next_due()
                .map(|due| due.saturating_duration_since(Instant::now()))
                .and_then(|wait| Timespec::try_from(wait).ok());
            let mut fds = [
                PollFd::new(events, PollFlags::IN),
                PollFd::new(stopped, PollFlags::IN),
            ];
            match poll(&mut fds, timeout.as_ref()) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(format!("waiting for changes failed: {e}")),
            }
            if !fds[1].revents().is_empty() {
                return Ok(());
            }
            if fds[0].revents().is_empty() {
                continue;
            }
            let mut reader = kernel::Reader::new(events.as_fd(), &mut buf);
            loop {
                let event = match reader.next() {
                    Ok(event) => event,
                    Err(rustix::io::Errno::AGAIN) => break,
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(e) => return Err(format!("reading the changes failed: {e}")),
                };
                let flags = event.events();
                if flags.contains(ReadFlags::IGNORED) {
                    return Err(format!(
                        "{} was removed, moved away or unmounted",
                        folder.display()
                    ));
                }
                if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                    // Changes were lost: every file of the folder may have changed.
                    for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
                        pending.note(entry.path());
                    }
                } else if let Some(name) = event.file_name() {
                    pending.note(folder.join(std::ffi::OsStr::from_bytes(name.to_bytes())));
                }
            }
        }
    }

    impl Drop for Watch {
        fn drop(&mut self) {
            let _ = rustix::io::write(&self.stop, &1u64.to_ne_bytes());
            if let Some(thread) = self.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

#[cfg(any(test, not(target_os = "linux")))]
mod with_notify {
    use std::io;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    /// The paths in `events`, each once, in the order they first came.
    fn distinct(events: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = Vec::new();
        for path in events {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        paths
    }

    /// `notify`'s debounced watcher.
    pub(super) struct Watch {
        _debouncer: notify_debouncer_mini::Debouncer<notify::RecommendedWatcher>,
    }

    impl Watch {
        pub(super) fn start(
            folder: &Path,
            quiet: Duration,
            mut on_change: impl FnMut(super::Change) + Send + 'static,
        ) -> io::Result<Watch> {
            let mut debouncer = notify_debouncer_mini::new_debouncer(
                quiet,
                move |events: notify_debouncer_mini::DebounceEventResult| {
                    let Ok(events) = events else { return };
                    for path in distinct(events.into_iter().map(|e| e.path)) {
                        on_change(super::Change::Saved(path));
                    }
                },
            )
            .map_err(io::Error::other)?;
            debouncer
                .watcher()
                .watch(folder, notify::RecursiveMode::NonRecursive)
                .map_err(io::Error::other)?;
            Ok(Watch {
                _debouncer: debouncer,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::mpsc;
    use std::time::Instant;

    /// What a watch reports, and a way to wait for it.
    struct Seen(mpsc::Receiver<Change>);

    impl Seen {
        /// The paths saved within `within`, then nothing more for `quiet`.
        fn settle(&self, within: Duration, quiet: Duration) -> Vec<PathBuf> {
            let mut seen = Vec::new();
            let deadline = Instant::now() + within;
            let mut take = |change| match change {
                Change::Saved(path) => seen.push(path),
                Change::Stopped(why) => panic!("the watch stopped: {why}"),
            };
            if let Ok(first) = self.0.recv_timeout(within) {
                take(first);
            }
            while let Ok(change) = self.0.recv_timeout(quiet) {
                take(change);
                assert!(Instant::now() < deadline + within, "saves never stop");
            }
            seen
        }
    }

    /// A watch on a new folder holding `lib.rs`, made by `start` with quiet time `quiet`.
    fn watched<W>(
        start: impl Fn(&Path, Duration, mpsc::Sender<Change>) -> W,
        quiet: Duration,
    ) -> (tempfile::TempDir, PathBuf, W, Seen) {
        let dir = tempfile::tempdir().unwrap();
        // As the grader names it: canonical.
        let folder = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(folder.join("lib.rs"), "fn a() {}\n").unwrap();
        let (tx, rx) = mpsc::channel();
        let watch = start(&folder, quiet, tx);
        (dir, folder, watch, Seen(rx))
    }

    /// Runs the same saves under a watch made by `start`, and checks what it reports.
    /// `quiet` is the watch's quiet time: one that a busy machine's pause between two writes
    /// (or between two events' delivery) does not reach.
    fn reports_each_save_once<W>(
        start: impl Fn(&Path, Duration, mpsc::Sender<Change>) -> W,
        quiet: Duration,
    ) {
        let (_dir, folder, watch, seen) = watched(start, quiet);
        let lesson = folder.join("lib.rs");
        let (within, settle) = (Duration::from_secs(10), quiet * 2);

        // Written in place, in several writes: one save (when the writes took less than
        // the quiet time: a machine busy enough to stop this thread longer between two of
        // them may tell each part).
        let writing = Instant::now();
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&lesson)
            .unwrap();
        for part in ["fn ", "b() ", "{}\n"] {
            file.write_all(part.as_bytes()).unwrap();
            file.flush().unwrap();
        }
        drop(file);
        let quick = writing.elapsed() < Duration::from_millis(100);
        let told = seen.settle(within, settle);
        assert!(
            !told.is_empty() && told.iter().all(|p| *p == lesson),
            "in place: {told:?}"
        );
        assert!(!quick || told.len() == 1, "in place, at once: {told:?}");

        // A new file renamed over it, as many editors save: one save, of the lesson's
        // path (the temporary file is named too, as a file of the folder that changed).
        let temporary = folder.join(".lib.rs.swp");
        std::fs::write(&temporary, "fn c() {}\n").unwrap();
        std::fs::rename(&temporary, &lesson).unwrap();
        let renamed = seen.settle(within, settle);
        assert!(renamed.contains(&lesson), "renamed over: {renamed:?}");
        assert_eq!(
            renamed.iter().filter(|p| **p == lesson).count(),
            1,
            "once per burst: {renamed:?}"
        );

        // A file in a subfolder is not the folder's (the subfolder itself may be told, as a
        // name in the folder that changed, however late a busy machine tells it).
        let inner = folder.join("sub").join("lib.rs");
        std::fs::create_dir(folder.join("sub")).unwrap();
        std::fs::write(&inner, "x").unwrap();
        let told = seen.settle(Duration::from_millis(500), settle);
        assert!(!told.contains(&inner), "a subfolder's file: {told:?}");

        // Dropped: a save after it is not told, and no thread is left reading.
        drop(watch);
        std::fs::write(&lesson, "fn d() {}\n").unwrap();
        let told = seen.settle(Duration::from_millis(500), settle);
        assert!(!told.contains(&lesson), "after the watch ended: {told:?}");
    }

    /// The kit's watch.
    fn kits(folder: &Path, quiet: Duration, tx: mpsc::Sender<Change>) -> Saves {
        Saves::watch(folder, quiet, move |change| {
            let _ = tx.send(change);
        })
        .expect("the folder can be watched")
    }

    #[test]
    fn the_watch_reports_each_save_once_by_its_path() {
        reports_each_save_once(kits, Duration::from_millis(200));
    }

    #[test]
    fn notifys_watch_used_off_linux_reports_the_same() {
        // notify's events pass two threads of its own (the reader, and the debouncer's
        // ticker), either of which a loaded machine can stall between two events of one
        // save: a longer quiet time, so that a stall does not split the save in two.
        reports_each_save_once(
            |folder, quiet, tx| {
                with_notify::Watch::start(folder, quiet, move |change| {
                    let _ = tx.send(change);
                })
                .expect("the folder can be watched")
            },
            Duration::from_millis(500),
        );
    }

    #[test]
    fn a_file_changing_all_the_time_delays_no_other_files_save_and_is_told_now_and_then() {
        let (_dir, folder, _watch, seen) = watched(kits, Duration::from_millis(50));
        let (lesson, noise) = (folder.join("lib.rs"), folder.join("noise.txt"));
        let writing = std::sync::atomic::AtomicBool::new(true);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while writing.load(std::sync::atomic::Ordering::Relaxed) {
                    std::fs::write(&noise, "x").unwrap();
                    std::thread::sleep(Duration::from_millis(5));
                }
            });
            std::thread::sleep(Duration::from_millis(200));
            let saved = Instant::now();
            std::fs::write(&lesson, "fn b() {}\n").unwrap();
            let mut noise_told = 0;
            let told_after = loop {
                match seen.0.recv_timeout(Duration::from_secs(10)) {
                    Ok(Change::Saved(path)) if path == lesson => break saved.elapsed(),
                    Ok(Change::Saved(path)) if path == noise => noise_told += 1,
                    other => panic!("{other:?}"),
                }
            };
            // Its own quiet time, not the folder's (which never comes while the noise goes).
            assert!(
                told_after < Duration::from_millis(400),
                "the save was told {told_after:?} after it"
            );
            // The noise, changing all along, is told at least every ten quiet times.
            std::thread::sleep(Duration::from_millis(1200));
            writing.store(false, std::sync::atomic::Ordering::Relaxed);
            while let Ok(change) = seen.0.recv_timeout(Duration::from_millis(300)) {
                assert_eq!(change, Change::Saved(noise.clone()));
                noise_told += 1;
            }
            assert!(noise_told >= 2, "the noise was told {noise_told} times");
        });
    }

    #[test]
    fn a_watch_whose_folder_is_removed_says_it_stopped() {
        let (_dir, folder, _watch, seen) = watched(kits, Duration::from_millis(50));
        std::fs::remove_dir_all(&folder).unwrap();
        let stopped = loop {
            match seen.0.recv_timeout(Duration::from_secs(10)) {
                Ok(Change::Saved(_)) => continue,
                Ok(Change::Stopped(why)) => break why,
                Err(e) => panic!("the watch never said it stopped: {e}"),
            }
        };
        assert!(stopped.contains("was removed"), "{stopped}");
    }

    #[test]
    fn a_folder_that_is_not_there_cannot_be_watched() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        assert!(Saves::watch(&gone, Duration::from_millis(50), |_| {}).is_err());
    }
}
