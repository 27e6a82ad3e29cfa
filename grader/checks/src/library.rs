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

use std::path::{Path, PathBuf};

/// The variable that names the library to load, for a harness built to load one.
pub const LIBRARY_VAR: &str = "KIT_LEARNER_LIBRARY";

/// An opened library. It stays loaded until the process ends: a check never unloads the code
/// it runs.
#[derive(Debug)]
pub struct Library {
    handle: *mut std::ffi::c_void,
    path: PathBuf,
}

impl Library {
    /// Opens the library named by [`LIBRARY_VAR`].
    pub fn from_env() -> Result<Library, String> {
        let path = std::env::var_os(LIBRARY_VAR)
            .ok_or_else(|| format!("{LIBRARY_VAR} names no library of the learner's code"))?;
        Library::open(Path::new(&path))
    }

    /// Opens the library at `path`, binding every symbol at once (so a missing one fails
    /// here, not in the middle of a check).
    #[cfg(unix)]
    pub fn open(path: &Path) -> Result<Library, String> {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| format!("{}: a path with a NUL byte", path.display()))?;
        // SAFETY: `name` is a valid C string. Loading runs the library's initialisers: the
        // practice crate has none of its own, and the learner's code is run here anyway.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(format!("cannot load {}: {}", path.display(), last_error()));
        }
        Ok(Library {
            handle,
            path: path.to_path_buf(),
        })
    }

    /// Opens the library at `path`: only on Unix.
    #[cfg(not(unix))]
    pub fn open(path: &Path) -> Result<Library, String> {
        Err(format!(
            "cannot load {}: the kit loads libraries only on Unix",
            path.display()
        ))
    }

    /// The function lesson `group` exports ([`kit_types::graded::symbol`]).
    ///
    /// # Safety
    ///
    /// `F` must be the type that lesson's function is exported with (its type in
    /// [`kit_types::graded`]), and the library must have been compiled by the same compiler
    /// against the same `kit-types` as this program.
    #[cfg(unix)]
    pub unsafe fn function<F: Copy>(&self, group: &str) -> Result<F, String> {
        let symbol = kit_types::graded::symbol(group);
        let name = std::ffi::CString::new(symbol.as_str()).map_err(|e| e.to_string())?;
        // SAFETY: the handle is open for the life of the process.
        let address = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        if address.is_null() {
            return Err(format!(
                "{} exports no {symbol}: it was built for another lesson",
                self.path.display()
            ));
        }
        // SAFETY: the symbol is a `static` of type `F` (the caller's promise).
        Ok(unsafe { *(address as *const F) })
    }

    /// The function lesson `group` exports: only on Unix.
    ///
    /// # Safety
    ///
    /// As on Unix.
    #[cfg(not(unix))]
    pub unsafe fn function<F: Copy>(&self, group: &str) -> Result<F, String> {
        Err(format!(
            "no {group} function: the kit loads libraries only on Unix"
        ))
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_or_symbol_is_an_error_that_names_it() {
        let missing = Library::open(Path::new("/nonexistent/libpractice.so")).unwrap_err();
        assert!(missing.contains("/nonexistent/libpractice.so"), "{missing}");
        // The C library is loaded in every process, and exports no lesson.
        let libc = Library::open(Path::new("libc.so.6")).expect("the C library loads");
        // SAFETY: the symbol is not found, so nothing is read.
        let absent = unsafe { libc.function::<fn()>("build3") }.unwrap_err();
        assert!(absent.contains("exports no KIT_LEARNER_BUILD3"), "{absent}");
    }
}
