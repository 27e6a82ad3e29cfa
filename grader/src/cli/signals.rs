//! Ctrl-C, and the other signals that end the grader (SIGTERM, SIGHUP). The grader handles
//! them so that, before it ends, it stops every check's process group (what the code under
//! test started there would otherwise go on running), removes its scratch folders, and gives
//! the terminal back the settings a watch changed. Then it dies of the signal, as it would
//! have unhandled: a shell loop that runs the grader stops on Ctrl-C only when its child died
//! of it (an exit with status 130 would let the loop go on).

/// Starts the thread that waits for an ending signal (Unix; elsewhere nothing).
pub(crate) fn handle_ending_signals() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return; // the default: the signal ends the grader alone
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                crate::stop_running_checks();
                crate::scratch::remove_listed();
                super::watch::restore_terminal();
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal); // only if the signal did not end us
            }
        });
    }
}
