//! The learner's function, loaded from a shared library that the grader built from the
//! practice crate.
//!
//! After an edit, linking the learner's code into a harness of its own took most of the
//! time to a verdict (about 0.07 s of the link alone, on every edit). So the grader builds
//! one harness per state of the kit, which loads the learner's code at start, and after an
//! edit compiles only the practice crate, as a small library that exports each lesson's
//! function under [`kit_types::graded::symbol`]. Both sides link the standard library
//! dynamically, so a panic in the learner's code unwinds through the harness, reaches its
//! panic hook and is caught and reported as in a harness that links everything.
//!
//! What this relies on, and what a change must keep true:
//! - both sides are compiled by one compiler from the same `kit-types` (one recipe, see
//!   `grader/src/replay.rs`, which checks the files the library links);
//! - they share nothing through statics: each has its own copy of `kit-types` and of the
//!   checks' types, so a `static` or `thread_local!` there (the fake clock's is one) is two
//!   variables, one per side. A check that sets such a value for the learner's code to read
//!   must set it through an argument, as the checks do now;
//! - neither declares a `#[global_allocator]`: memory allocated on one side is freed on the
//!   other, through the standard library's allocator, which they share.

use crate::setup::SetupError;
use std::path::{Path, PathBuf};

/// The variable that names the library to load, for a harness built to load one.
pub const LIBRARY_VAR: &str = "KIT_LEARNER_LIBRARY";

/// An opened library. It stays loaded until the process ends (this type has no `Drop`, and
/// must not get one): the functions read from it are valid only while it is loaded.
#[derive(Debug)]
pub struct Library {
    handle: *mut std::ffi::c_void,
    path: PathBuf,
}

impl Library {
    /// Opens the library named by [`LIBRARY_VAR`].
    ///
    /// # Safety
    ///
    /// As `Library::open`.
    pub unsafe fn from_env() -> Result<Library, SetupError> {
        let path = std::env::var_os(LIBRARY_VAR).ok_or(SetupError::Unset {
            var: LIBRARY_VAR,
            what: "library of the learner's code",
        })?;
        // SAFETY: the caller's promise.
        unsafe { Library::open(Path::new(&path)) }
    }

    /// Opens the library at `path`, binding every symbol at once (so a missing one fails
    /// here, not in the middle of a check).
    ///
    /// # Safety
    ///
    /// Loading runs the library's initialisers, in this process: open only a library
    /// whose code may run here (the learner's, in a check's own process, after its limits
    /// are set).
    #[cfg(unix)]
    pub(crate) unsafe fn open(path: &Path) -> Result<Library, SetupError> {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| SetupError::NulInPath(path.to_path_buf()))?;
        // SAFETY: `name` is a valid C string; running the initialisers is the caller's
        // promise.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(SetupError::Load {
                path: path.to_path_buf(),
                reason: last_error(),
            });
        }
        Ok(Library {
            handle,
            path: path.to_path_buf(),
        })
    }

    /// Opens the library at `path`: only on Unix.
    ///
    /// # Safety
    ///
    /// As on Unix.
    #[cfg(not(unix))]
    pub(crate) unsafe fn open(path: &Path) -> Result<Library, SetupError> {
        Err(SetupError::LibraryNeedsUnix(path.to_path_buf()))
    }

    /// The function `lesson` exports ([`kit_types::graded::symbol`]).
    ///
    /// # Safety
    ///
    /// `F` must be the type that lesson's function is exported with (its type in
    /// [`kit_types::graded`]), and the library must have been compiled by the same compiler
    /// against the same `kit-types` as this program.
    #[cfg(unix)]
    pub(crate) unsafe fn function<F: Copy>(&self, lesson: &str) -> Result<F, SetupError> {
        let symbol = kit_types::graded::symbol(lesson);
        let name = std::ffi::CString::new(symbol.as_str())
            .map_err(|_| SetupError::BadLessonName(lesson.to_string()))?;
        // SAFETY: the handle is open for the life of the process.
        let address = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        if address.is_null() {
            return Err(SetupError::NoFunction {
                path: self.path.clone(),
                symbol,
            });
        }
        // SAFETY: the symbol is a `static` of type `F` (the caller's promise).
        Ok(unsafe { *(address as *const F) })
    }

    /// The function `lesson` exports: only on Unix.
    ///
    /// # Safety
    ///
    /// As on Unix.
    #[cfg(not(unix))]
    pub(crate) unsafe fn function<F: Copy>(&self, lesson: &str) -> Result<F, SetupError> {
        let _ = lesson;
        Err(SetupError::LibraryNeedsUnix(self.path.clone()))
    }
}

/// What the dynamic loader said about the last call that failed.
#[cfg(unix)]
fn last_error() -> String {
    // SAFETY: dlerror returns null or a C string valid until the next call on this thread.
    let text = unsafe { libc::dlerror() };
    if text.is_null() {
        return "no reason given".to_string();
    }
    // SAFETY: non-null, so a valid C string (see above).
    unsafe { std::ffi::CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_or_symbol_is_an_error_that_names_it() {
        // SAFETY (both): nothing is loaded, or glibc's C library, already loaded here.
        let missing =
            unsafe { Library::open(Path::new("/nonexistent/libpractice.so")) }.unwrap_err();
        assert!(
            matches!(&missing, SetupError::Load { path, .. } if path == Path::new("/nonexistent/libpractice.so")),
            "{missing}"
        );
        assert!(
            missing.to_string().contains("/nonexistent/libpractice.so"),
            "{missing}"
        );
        // The C library is loaded in every process, and exports no lesson.
        let libc = unsafe { Library::open(Path::new("libc.so.6")) }.expect("the C library loads");
        // SAFETY: the symbol is not found, so nothing is read.
        let absent = unsafe { libc.function::<fn()>("build3") }.unwrap_err();
        assert!(
            matches!(&absent, SetupError::NoFunction { symbol, .. } if symbol == "KIT_LEARNER_BUILD3"),
            "{absent}"
        );
        assert!(
            absent.to_string().contains("exports no KIT_LEARNER_BUILD3"),
            "{absent}"
        );
    }
}
