//! Ctrl-C, and the other signals that end the grader (SIGTERM, SIGHUP). The grader handles
//! them so that, before it exits, it stops every check's process group (what the code under
//! test started there would otherwise go on running) and gives the terminal back the
//! settings a watch changed. It then exits with the shell's status for the signal (130 for
//! Ctrl-C).

/// Starts the thread that waits for an ending signal (Unix; elsewhere nothing).
pub fn handle_ending_signals() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return; // the default: the signal ends the grader alone
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                grader::stop_running_checks();
                super::watch::restore_terminal();
                std::process::exit(128 + signal);
            }
        });
    }
}
