//! `cargo run -p grader -- <command>`: the learner's and the instructor's entry point.
//! The command line lives in `cli/`; everything it uses is in the `grader` library.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
