//! A system without Landlock, played by a process of the kit's tests.

/// Makes Landlock's three system calls unknown (`ENOSYS`) to this process and every process
/// it starts, as a kernel without Landlock answers them, with a seccomp filter of its own;
/// false when the filter could not be installed. Only system calls, and no allocation: it
/// may run between `fork` and `exec`.
pub fn refuse_landlock() -> bool {
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let first = libc::SYS_landlock_create_ruleset as u32;
    let last = libc::SYS_landlock_restrict_self as u32;
    let mut program = [
        // The call's number: the first field of `struct seccomp_data`.
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
        jump(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K, first, 0, 2),
        jump(libc::BPF_JMP | libc::BPF_JGT | libc::BPF_K, last, 1, 0),
        stmt(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        ),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ];
    let filter = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_mut_ptr(),
    };
    // SAFETY: plain prctl calls; `filter` points at a program that lives through the call.
    unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
            && libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &filter as *const libc::sock_fprog,
            ) == 0
    }
}
