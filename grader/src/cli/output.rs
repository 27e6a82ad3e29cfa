//! Standard output and error that go quiet when the reader goes away.
//!
//! `cargo run -p grader -- build3 | head -3` closes the pipe after three lines. Like ripgrep
//! and `cargo test`, the grader then stops writing without a message or a panic; it still
//! finishes its work (no check is left running) and exits with the status it would have had.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// Standard output; writes after the reader went away are dropped.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Out;

/// Standard error; writes after the reader went away are dropped.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ErrOut;

fn quiet(closed: &AtomicBool, result: io::Result<usize>, len: usize) -> io::Result<usize> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            closed.store(true, Ordering::SeqCst);
            Ok(len)
        }
        other => other,
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if STDOUT_CLOSED.load(Ordering::SeqCst) {
            return Ok(buf.len());
        }
        quiet(&STDOUT_CLOSED, io::stdout().lock().write(buf), buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if STDOUT_CLOSED.load(Ordering::SeqCst) {
            return Ok(());
        }
        match io::stdout().lock().flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                STDOUT_CLOSED.store(true, Ordering::SeqCst);
                Ok(())
            }
            other => other,
        }
    }
}

impl Write for ErrOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if STDERR_CLOSED.load(Ordering::SeqCst) {
            return Ok(buf.len());
        }
        quiet(&STDERR_CLOSED, io::stderr().lock().write(buf), buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `println!` that goes quiet on a closed pipe.
macro_rules! say {
    () => {{
        use std::io::Write as _;
        let _ = writeln!($crate::cli::output::Out);
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!($crate::cli::output::Out, $($arg)*);
    }};
}

/// `eprintln!` that goes quiet on a closed pipe.
macro_rules! tell {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!($crate::cli::output::ErrOut, $($arg)*);
    }};
}

pub(crate) use {say, tell};
