pub mod impls;
#[cfg(target_os = "linux")]
pub mod no_landlock;
