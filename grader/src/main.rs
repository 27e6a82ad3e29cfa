//! `cargo run -p grader -- <command>`: the learner's and the instructor's entry point. The
//! command line itself is the library's (`grader::main`), so that what it uses need not be
//! public.

fn main() -> std::process::ExitCode {
    grader::main()
}
