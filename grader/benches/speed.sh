#!/usr/bin/env bash
# The kit's speed, side by side with rustlings: edit→verdict, watch mode, list, grading
# throughput, and the first run from a fresh clone. Prints every figure, its target and the
# ratio, then a table. See grader/benches/README.md for what each section measures.
#
#   bash grader/benches/speed.sh [--quick] [--only NAME[,NAME]] [--keep DIR]
#
# Works from any folder. Measures copies in a scratch folder, never the checkout itself.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: bash grader/benches/speed.sh [OPTIONS]

Measures the kit's speed and prints each figure with its target and ratio, then a table.
Everything runs in scratch copies: the checkout it lives in is only read.

Sections (in this order; the first run is last because it takes minutes):
  edit       a one-character edit to a correct practice/src/lib.rs, then
             `cargo run -q -p grader -- build3`, against `rustlings run if1` after the same
             kind of edit to a solved if1 (A B A B). Target: kit/rustlings <= 0.6
  watch      from the file write to the verdict on screen: `cargo run -q -p grader -- watch
             build3` against rustlings' watch mode, both in a pseudo-terminal.
             Target: kit/rustlings <= 0.6
  list       `cargo run -q -p grader -- list` after a run (target <= 0.3 s), and the command
             line's program alone (target/debug/kit-grader), to show cargo's and the
             launcher's share
  grade      `cargo bench -q -p kit-grader --bench grade`: submissions graded per minute
             (target >= 200); its lines are passed through
  first-run  a fresh git clone and an empty cargo home: `cargo run -q -p grader -- build3`
             to the first verdict (target <= 45 s, downloads included), then
             `cargo test --workspace --exclude practice` warm: its second run, after a first
             that builds the tests and their kit copies (target <= 90 s). Needs the package
             registry.

Options:
  --quick          3 timed runs of each instead of 7 (after 2 warm-ups either way)
  --only NAME      run only these sections (repeat it, or separate names with commas)
  --keep DIR       use DIR for the scratch copies and keep it: a second run reuses its
                   builds and its rustlings (faster; the figures are the same kind)
  -h, --help       show this help

Environment:
  RUNS=N           timed runs of each (overrides --quick); WARMUPS=N (default 2)
  RUSTLINGS=PATH   a rustlings binary to use (default: `cargo install rustlings --locked
                   --version $RUSTLINGS_VERSION --root SCRATCH`, 6.5.0 unless set)
  RUSTLINGS_DIR=D  an initialised rustlings folder to copy (default: `rustlings init` in
                   the scratch folder); the copy is what gets edited, never D
  KIT=DIR          the kit to measure (default: the checkout this script is in; its working
                   tree is copied, uncommitted changes included; the first run clones HEAD)

The machine is a shared 2-core box: the load average is printed before and after, and any
figure taken while something else compiles is slower than the quiet-machine figure.
Exit status: 0 when every measurement was taken (met or not), 1 when one failed, 2 when a
prerequisite is missing or an argument is wrong.
EOF
}

die() { # one line: what is missing or wrong, and why
    echo "speed.sh: $*" >&2
    exit 2
}

# ---------------------------------------------------------------- arguments
RUNS_DEFAULT=7
ONLY=()
KEEP=""
while (($#)); do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --quick) RUNS_DEFAULT=3 ;;
    --only)
        (($# >= 2)) || die "--only needs a section name (edit, watch, list, grade, first-run)"
        IFS=, read -r -a names <<<"$2"
        ONLY+=("${names[@]}")
        shift ;;
    --only=*) IFS=, read -r -a names <<<"${1#--only=}"; ONLY+=("${names[@]}") ;;
    --keep)
        (($# >= 2)) || die "--keep needs a folder"
        KEEP=$2
        shift ;;
    --keep=*) KEEP=${1#--keep=} ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done
SECTIONS=(edit watch list grade first-run)
for name in ${ONLY[@]+"${ONLY[@]}"}; do
    case " ${SECTIONS[*]} " in
    *" $name "*) ;;
    *) die "unknown section '$name': choose from ${SECTIONS[*]}" ;;
    esac
done
RUNS=${RUNS:-$RUNS_DEFAULT}
WARMUPS=${WARMUPS:-2}
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number, not '$RUNS'"
[[ $WARMUPS =~ ^[0-9]+$ ]] || die "WARMUPS must be a number, not '$WARMUPS'"
RUSTLINGS_VERSION=${RUSTLINGS_VERSION:-6.5.0}

wanted() {
    local name
    ((${#ONLY[@]} == 0)) && return 0
    for name in "${ONLY[@]}"; do [[ $name == "$1" ]] && return 0; done
    return 1
}

# ---------------------------------------------------------------- prerequisites
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KIT=$(cd "${KIT:-$SCRIPT_DIR/../..}" 2>/dev/null && pwd) || die "KIT=$KIT is not a folder"
[[ -f $KIT/Cargo.toml && -d $KIT/exercises && -f $KIT/reference/src/retry.rs ]] ||
    die "$KIT is not the kit (no Cargo.toml, exercises/ or reference/src/retry.rs)"
command -v cargo >/dev/null || die "cargo is not on PATH: install Rust (rustup) first"
command -v git >/dev/null || die "git is not on PATH: the kit's copies and the first run need it"
command -v tar >/dev/null || die "tar is not on PATH: the kit is copied with it"
[[ $(date +%N) =~ ^[0-9]+$ ]] || die "date +%N does not print nanoseconds (GNU date is needed)"
if wanted watch; then
    command -v python3 >/dev/null ||
        die "python3 is not on PATH: the watch section drives both watch modes in a pseudo-terminal with it"
    python3 -c 'import pty, termios, fcntl' 2>/dev/null ||
        die "python3 has no pty/termios module: the watch section needs a Unix python3"
fi
# The kit's copies build into their own target/; a target folder set from outside would
# share builds with other work (and its lock).
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR

# ---------------------------------------------------------------- scratch and cleanup
if [[ -n $KEEP ]]; then
    mkdir -p "$KEEP" || die "cannot create --keep folder $KEEP"
    WORK=$(cd "$KEEP" && pwd)
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/speed-XXXXXX")
fi
PIDFILE=$WORK/.pids
: >"$PIDFILE"
CHILD=""

kill_group() { # a process group this script started (setsid makes the pid the group id)
    local pid=$1
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.2
    done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    [[ -n $CHILD ]] && kill_group "$CHILD"
    if [[ -s $PIDFILE ]]; then # the watch sessions' own groups, if their driver died
        while read -r pid; do [[ -n $pid ]] && kill_group "$pid"; done <"$PIDFILE"
    fi
    if [[ -z $KEEP ]]; then
        rm -rf "$WORK"
    else
        rm -f "$PIDFILE"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'echo "speed.sh: interrupted" >&2; exit 130' INT
trap 'echo "speed.sh: stopped by a signal" >&2; exit 143' TERM HUP

# run_bg DIR LOG COMMAND...: runs COMMAND in DIR, output to LOG, in a process group of its
# own (not the terminal's), so that an interrupt ends all of it through the trap above.
run_bg() {
    local dir=$1 log=$2 rc=0
    shift 2
    (cd "$dir" && exec setsid "$@") >"$log" 2>&1 </dev/null &
    CHILD=$!
    wait "$CHILD" || rc=$?
    CHILD=""
    return "$rc"
}

# ---------------------------------------------------------------- figures
now_ns() { date +%s%N; }
ms_since() { echo $((($(now_ns) - $1) / 1000000)); }
median() { # of whole milliseconds
    printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {
        if (NR % 2) print a[(NR + 1) / 2]; else printf "%d\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
secs() { awk -v ms="$1" 'BEGIN { printf "%.2f s", ms / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'; }
at_most() { awk -v r="$1" -v t="$2" 'BEGIN { exit !(r != "n/a" && r + 0 <= t + 0) }'; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime | sed 's/.*average: //'; }

ROWS=()
FAILED=0
row() { ROWS+=("$1|$2|$3|$4|$5"); }
verdict() { if at_most "$1" "$2"; then echo "met"; else echo "not met"; fi; }
failed_row() { # name, target, why
    row "$1" "failed" "$2" "-" "failed: $3"
    FAILED=1
}
section() { printf '\n── %s ── (load average %s)\n' "$1" "$(loadavg)"; }
say() { printf '  %s\n' "$*"; }
tail_of() { # the last lines of a log, indented, to stderr
    sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' "$1" | tail -n "${2:-15}" | sed 's/^/    | /' >&2
}

# side_by_side NAME KIT_LABEL KIT_NOTE RL_LABEL RL_NOTE: the runs in KIT_RUNS and RL_RUNS
# (ms), their medians and the ratio kit/rustlings against the target of 0.60, printed and
# added to the table.
KIT_RUNS=()
RL_RUNS=()
side_by_side() {
    local mk mr r
    mk=$(median "${KIT_RUNS[@]}")
    mr=$(median "${RL_RUNS[@]}")
    r=$(ratio "$mk" "$mr")
    say "$2 runs (ms): ${KIT_RUNS[*]}   median $(secs "$mk")$3"
    say "$4 runs (ms): ${RL_RUNS[*]}   median $(secs "$mr")$5"
    say "ratio kit/rustlings: $r (target <= 0.60): $(verdict "$r" 0.60)"
    row "$1" "$(secs "$mk") / $(secs "$mr")" "<= 0.60" "$r" "$(verdict "$r" 0.60)"
}

# ---------------------------------------------------------------- the kit's copy
KIT_COPY=$WORK/kit
KIT_READY=0
GIT_ID=(-c user.name=speed.sh -c user.email=speed.sh@localhost -c commit.gpgsign=false)

# The working tree (uncommitted changes included, without target/ and .git), with a git
# repository of its own (the grader's copies read git), and the reference's answer as the
# learner's build3 file. Built once, untimed.
prepare_kit() {
    ((KIT_READY)) && return 0
    say "preparing the kit's copy in $KIT_COPY (first build untimed; minutes when cold) ..."
    mkdir -p "$KIT_COPY"
    tar -C "$KIT" --exclude=./target --exclude=./.git -cf - . | tar -C "$KIT_COPY" -xf - ||
        die "cannot copy $KIT to $KIT_COPY"
    if [[ ! -d $KIT_COPY/.git ]]; then
        git -C "$KIT_COPY" init -q || die "git init failed in $KIT_COPY"
    fi
    git -C "$KIT_COPY" add -A && git "${GIT_ID[@]}" -C "$KIT_COPY" commit -qm "speed.sh copy" \
        --allow-empty >/dev/null || die "cannot commit the kit's copy in $KIT_COPY"
    cp "$KIT_COPY/reference/src/retry.rs" "$KIT_COPY/practice/src/lib.rs"
    local log=$WORK/kit-prepare.log rc=0
    run_bg "$KIT_COPY" "$log" cargo run -q -p grader -- build3 || rc=$?
    if ((rc != 0)); then
        tail_of "$log"
        die "the kit's copy with the reference answer did not pass build3 (exit $rc; expected 0)"
    fi
    KIT_READY=1
}

# ---------------------------------------------------------------- rustlings
RL_BIN=""
RL_TREE=$WORK/rl/rustlings
RL_READY=0
IF1=exercises/03_if/if1.rs

rustlings_state() { # if1 current (watch mode runs the current exercise) and done
    printf "DON'T EDIT THIS FILE!\n\nif1\n\nif1\n" >"$RL_TREE/.rustlings-state.txt"
}

prepare_rustlings() {
    ((RL_READY)) && return 0
    if [[ -n ${RUSTLINGS:-} ]]; then
        RL_BIN=$RUSTLINGS
        [[ -x $RL_BIN ]] || die "RUSTLINGS=$RL_BIN is not an executable file"
    else
        RL_BIN=$WORK/rustlings-install/bin/rustlings
        if [[ ! -x $RL_BIN ]]; then
            say "installing rustlings $RUSTLINGS_VERSION into $WORK/rustlings-install (untimed; set RUSTLINGS=PATH to reuse one) ..."
            local rc=0
            run_bg "$WORK" "$WORK/rustlings-install.log" cargo install rustlings --locked \
                --version "$RUSTLINGS_VERSION" --root "$WORK/rustlings-install" || rc=$?
            if ((rc != 0)); then
                tail_of "$WORK/rustlings-install.log"
                die "cargo install rustlings $RUSTLINGS_VERSION failed (exit $rc): is the package registry reachable?"
            fi
        fi
    fi
    local version
    version=$("$RL_BIN" --version 2>/dev/null) || die "$RL_BIN --version failed: not a rustlings binary?"
    [[ $version == "rustlings 6."* ]] ||
        die "$RL_BIN is '$version': the markers this script reads are rustlings 6.x's"

    if [[ ! -f $RL_TREE/$IF1 ]]; then
        rm -rf "$WORK/rl" && mkdir -p "$WORK/rl"
        if [[ -n ${RUSTLINGS_DIR:-} ]]; then
            [[ -f $RUSTLINGS_DIR/$IF1 ]] || die "RUSTLINGS_DIR=$RUSTLINGS_DIR has no $IF1"
            cp -a "$RUSTLINGS_DIR" "$RL_TREE" || die "cannot copy $RUSTLINGS_DIR"
        else
            # Outside any cargo workspace, `init` makes rustlings/ (its Enter prompt reads the
            # empty input as Enter).
            run_bg "$WORK/rl" "$WORK/rl-init.log" "$RL_BIN" init || {
                tail_of "$WORK/rl-init.log"
                die "rustlings init failed in $WORK/rl"
            }
        fi
    fi
    # Solve if1: a correct `bigger` in place of the stub's (or the previous answer).
    local tmp=$RL_TREE/$IF1.speed
    awk 'skip && /^}/ { skip = 0; next }
         skip { next }
         /^fn bigger\(/ { print "fn bigger(a: i32, b: i32) -> i32 {"
                          print "    if a > b { a } else { b }"
                          print "}"; skip = 1; next }
         { print }' "$RL_TREE/$IF1" >"$tmp" && mv "$tmp" "$RL_TREE/$IF1"
    grep -q 'if a > b { a } else { b }' "$RL_TREE/$IF1" ||
        die "cannot solve if1: $RL_TREE/$IF1 has no 'fn bigger(' to replace"
    rustlings_state
    say "rustlings: $version ($RL_BIN), if1 solved in $RL_TREE; first build untimed ..."
    local rc=0
    run_bg "$RL_TREE" "$WORK/rl-prepare.log" "$RL_BIN" run if1 || rc=$?
    if ((rc != 0)); then
        tail_of "$WORK/rl-prepare.log"
        die "rustlings run if1 with the solved if1 exited $rc (expected 0)"
    fi
    RL_READY=1
}

# ---------------------------------------------------------------- 1. edit→verdict
EDITS=0
edit_file() { # an edit of one line: a comment with a counter, appended
    EDITS=$((EDITS + 1))
    printf '// speed.sh edit %d\n' "$EDITS" >>"$1"
}

time_kit_run() { # prints ms; fails unless the verdict is a pass (exit 0)
    local t rc=0
    edit_file "$KIT_COPY/practice/src/lib.rs"
    t=$(now_ns)
    (cd "$KIT_COPY" && cargo run -q -p grader -- build3) >"$WORK/edit-kit.log" 2>&1 || rc=$?
    LAST_MS=$(ms_since "$t")
    return "$rc"
}

time_rustlings_run() {
    local t rc=0
    edit_file "$RL_TREE/$IF1"
    t=$(now_ns)
    (cd "$RL_TREE" && "$RL_BIN" run if1) >"$WORK/edit-rl.log" 2>&1 || rc=$?
    LAST_MS=$(ms_since "$t")
    return "$rc"
}

bench_edit() {
    section "1. edit→verdict: a one-line edit, then the verdict (kit vs rustlings, A B A B)"
    prepare_kit
    prepare_rustlings
    local i kit=() rl=() rc
    for ((i = 1; i <= WARMUPS + RUNS; i++)); do
        rc=0; time_kit_run || rc=$?
        if ((rc != 0)); then
            tail_of "$WORK/edit-kit.log"
            failed_row "edit→verdict kit/rustlings" "<= 0.60" "kit run $i exited $rc (expected 0)"
            return
        fi
        ((i > WARMUPS)) && kit+=("$LAST_MS")
        rc=0; time_rustlings_run || rc=$?
        if ((rc != 0)); then
            tail_of "$WORK/edit-rl.log"
            failed_row "edit→verdict kit/rustlings" "<= 0.60" "rustlings run $i exited $rc (expected 0)"
            return
        fi
        ((i > WARMUPS)) && rl+=("$LAST_MS")
    done
    KIT_RUNS=("${kit[@]}") RL_RUNS=("${rl[@]}")
    side_by_side "edit→verdict kit/rustlings" \
        "kit        cargo run -q -p grader -- build3  " "" \
        "rustlings  rustlings run if1                 " ""
}

# ---------------------------------------------------------------- 2. watch
# Both watch modes run in pseudo-terminals (python3's pty module), side by side. After each
# one's first verdict, the script appends a line to its file and times until the verdict of
# the new run appears in what it printed, waits for the screen to settle, and goes on with
# the other (A B A B). Quits both with q; kills whatever is left of their sessions.
WATCH_PY=$(
    cat <<'PY'
import fcntl, json, os, pty, re, select, signal, struct, sys, termios, time

cfg = json.loads(os.environ["SPEED_WATCH_CONFIG"])
ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
SETTLE = cfg["settle"]


def stop(*_):
    raise SystemExit(3)


for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(sig, stop)


class Failed(Exception):
    pass


class Session:
    def __init__(self, spec):
        self.spec = spec
        self.name = spec["name"]
        self.verdict = re.compile(spec["verdict"].encode())
        self.passed = re.compile(spec["pass"].encode())
        self.raw = bytearray()
        self.clean = b""
        self.dirty = False
        self.last = time.monotonic()
        self.log = open(spec["log"], "wb")
        self.status = None
        env = dict(os.environ, TERM="xterm-256color")
        pid, fd = pty.fork()
        if pid == 0:
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
                os.chdir(spec["cwd"])
                os.execvpe(spec["argv"][0], spec["argv"], env)
            except BaseException as e:
                os.write(2, f"cannot start {spec['argv'][0]}: {e}\r\n".encode())
            os._exit(127)
        self.pid, self.fd = pid, fd
        with open(cfg["pidfile"], "a") as f:
            f.write(f"{pid}\n")

    def text(self):
        if self.dirty:
            self.clean = ANSI.sub(b"", bytes(self.raw)).replace(b"\r", b"")
            self.dirty = False
        return self.clean

    def count(self):
        return len(self.verdict.findall(self.text()))

    def reap(self):
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
        return self.status is not None

    def tail(self, lines=12):
        shown = self.text().decode("utf-8", "replace").rstrip().splitlines()[-lines:]
        return "\n".join("    | " + l for l in shown)


def pump(sessions, timeout):
    """Reads what the sessions printed, for at most `timeout` seconds."""
    fds = {s.fd: s for s in sessions if s.fd is not None}
    if not fds:
        time.sleep(timeout)
        return
    ready, _, _ = select.select(list(fds), [], [], max(timeout, 0))
    for fd in ready:
        s = fds[fd]
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        now = time.monotonic()
        if not data:
            os.close(fd)
            s.fd = None
            continue
        if b"\x1b[6n" in data:  # a cursor position request: answer as a terminal would
            os.write(fd, b"\x1b[1;1R")
        s.raw += data
        s.log.write(data)
        s.log.flush()
        s.dirty = True
        s.last = now


def wait_for(s, n, timeout, what):
    """Waits until `s` has printed its verdict `n` times; returns when that output arrived."""
    deadline = time.monotonic() + timeout
    while s.count() < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failed(f"{s.name}: no {what} within {timeout:.0f} s; the last lines it printed:\n{s.tail()}")
        if s.fd is None and s.reap():
            raise Failed(f"{s.name}: exited before {what}; the last lines it printed:\n{s.tail()}")
        pump(sessions, min(left, 0.5))
    return s.last


def settle(s):
    """Waits until `s` has printed nothing for SETTLE seconds (the rest of its screen)."""
    deadline = time.monotonic() + 60
    while time.monotonic() - s.last < SETTLE and time.monotonic() < deadline:
        pump(sessions, SETTLE / 4)


def close(s):
    if s.fd is not None:
        try:
            os.write(s.fd, s.spec["quit"].encode())
        except OSError:
            pass
    deadline = time.monotonic() + 10
    while not s.reap() and time.monotonic() < deadline:
        pump(sessions, 0.1)
    clean = s.status is not None and os.waitstatus_to_exitcode(s.status) == 0
    if not clean:
        print(f"  note: {s.name} did not quit cleanly on '{s.spec['quit']}'; stopping it", file=sys.stderr)
    kill_session(s)
    return clean


def members(s):
    """The processes of the session `s` leads (its pid is the session id)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == s.pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def kill_session(s):
    """Ends whatever is left of the session: its leader and anything it started."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        s.reap()
        left = members(s)
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and members(s):
            pump(sessions, 0.1)
            s.reap()
    s.reap()


sessions = []
code = 0
try:
    for spec in cfg["sessions"]:
        sessions.append(Session(spec))
    for s in sessions:
        wait_for(s, 1, cfg["start_timeout"], "first verdict")
    for s in sessions:
        settle(s)
    runs = {s.name: [] for s in sessions}
    for i in range(cfg["warmups"] + cfg["runs"]):
        for s in sessions:
            n, seen = s.count(), len(s.text())
            t0 = time.monotonic()
            with open(s.spec["file"], "a") as f:
                f.write(f"// speed.sh watch save {i + 1}\n")
            t1 = wait_for(s, n + 1, cfg["run_timeout"], f"verdict after save {i + 1}")
            settle(s)
            if not s.passed.search(s.text()[seen:]):
                raise Failed(f"{s.name}: the verdict after save {i + 1} is not a pass:\n{s.tail()}")
            if i >= cfg["warmups"]:
                runs[s.name].append(round((t1 - t0) * 1000))
    quits = {s.name: close(s) for s in sessions}
    with open(cfg["results"], "w") as f:
        for s in sessions:
            f.write(f"{s.name} {'quit' if quits[s.name] else 'killed'} {' '.join(map(str, runs[s.name]))}\n")
except Failed as e:
    print(f"speed.sh: watch: {e}", file=sys.stderr)
    code = 1
finally:
    for s in sessions:
        kill_session(s)
    with open(cfg["pidfile"], "w") as f:  # nothing of theirs is left to stop
        f.writelines(f"{s.pid}\n" for s in sessions if members(s))
sys.exit(code)
PY
)

json_str() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }

bench_watch() {
    section "2. watch: from the file write to the verdict on screen (kit vs rustlings, A B A B)"
    prepare_kit
    prepare_rustlings
    rustlings_state # `run if1` moved rustlings on to if2; watch mode re-runs the current one
    local cargo_bin results=$WORK/watch-results rc=0
    cargo_bin=$(command -v cargo)
    rm -f "$results"
    # The kit prints `check result: ok. 39 passed; ...` once per run; rustlings prints
    # `Exercise done ✓` once per run of a solved exercise.
    export SPEED_WATCH_CONFIG
    SPEED_WATCH_CONFIG=$(
        cat <<EOF
{"runs": $RUNS, "warmups": $WARMUPS, "settle": 1.0, "start_timeout": 600, "run_timeout": 120,
 "pidfile": $(json_str "$PIDFILE"), "results": $(json_str "$results"),
 "sessions": [
  {"name": "kit", "cwd": $(json_str "$KIT_COPY"),
   "argv": [$(json_str "$cargo_bin"), "run", "-q", "-p", "grader", "--", "watch", "build3"],
   "file": $(json_str "$KIT_COPY/practice/src/lib.rs"), "log": $(json_str "$WORK/watch-kit.log"),
   "verdict": "check result:", "pass": "check result: ok", "quit": "q"},
  {"name": "rustlings", "cwd": $(json_str "$RL_TREE"), "argv": [$(json_str "$RL_BIN")],
   "file": $(json_str "$RL_TREE/$IF1"), "log": $(json_str "$WORK/watch-rl.log"),
   "verdict": "Exercise done", "pass": "Exercise done", "quit": "q"}
 ]}
EOF
    )
    run_bg "$WORK" "$WORK/watch-driver.log" python3 -c "$WATCH_PY" || rc=$?
    [[ -s $WORK/watch-driver.log ]] && sed 's/^/  /' "$WORK/watch-driver.log" >&2
    if ((rc != 0)) || [[ ! -s $results ]]; then
        failed_row "watch kit/rustlings" "<= 0.60" "the watch driver exited $rc (see the lines above)"
        return
    fi
    local name how rest kit=() rl=() kit_how rl_how
    while read -r name how rest; do
        read -r -a times <<<"$rest"
        case $name in
        kit) kit=("${times[@]}"); kit_how=$how ;;
        rustlings) rl=("${times[@]}"); rl_how=$how ;;
        esac
    done <"$results"
    KIT_RUNS=("${kit[@]}") RL_RUNS=("${rl[@]}")
    side_by_side "watch kit/rustlings" \
        "kit        cargo run -q -p grader -- watch build3  " "  (q: $kit_how)" \
        "rustlings  rustlings (watch mode)                  " "  (q: $rl_how)"
}

# ---------------------------------------------------------------- 4. list
bench_list() {
    section "4. list after a run (cargo run, and the command line's binary alone)"
    prepare_kit
    local rc=0 log=$WORK/list.log
    (cd "$KIT_COPY" && cargo run -q -p grader -- build3) >"$log" 2>&1 || rc=$?
    ((rc == 0)) || { tail_of "$log"; failed_row "list" "<= 0.30 s" "the run before it exited $rc"; return; }
    local bin=$KIT_COPY/target/debug/kit-grader i t cargo_runs=() bin_runs=() envs=()
    [[ -x $bin ]] || { failed_row "list" "<= 0.30 s" "no $bin after the build"; return; }
    # The binary alone gets the variables cargo (and rustup's proxy) would give it: the
    # grader keys its remembered results on them, and would say "changed since last run".
    mkdir -p "$WORK/bin"
    printf '#!/bin/sh\nenv | grep -E "^(CARGO|RUSTUP_TOOLCHAIN|RUSTUP_HOME|CARGO_HOME)="\n' \
        >"$WORK/bin/cargo-speed-env"
    chmod +x "$WORK/bin/cargo-speed-env"
    mapfile -t envs < <(cd "$KIT_COPY" && PATH=$WORK/bin:$PATH cargo speed-env)
    local clog=$WORK/list-cargo.log blog=$WORK/list-binary.log
    for ((i = 1; i <= WARMUPS + RUNS; i++)); do
        rc=0
        t=$(now_ns)
        (cd "$KIT_COPY" && cargo run -q -p grader -- list) >"$clog" 2>&1 || rc=$?
        LAST_MS=$(ms_since "$t")
        ((rc == 0)) || { tail_of "$clog"; failed_row "list" "<= 0.30 s" "cargo run -- list exited $rc"; return; }
        ((i > WARMUPS)) && cargo_runs+=("$LAST_MS")
        t=$(now_ns)
        (cd "$KIT_COPY" && env ${envs[@]+"${envs[@]}"} "$bin" list) >"$blog" 2>&1 || rc=$?
        LAST_MS=$(ms_since "$t")
        ((rc == 0)) || { tail_of "$blog"; failed_row "list" "<= 0.30 s" "grader list exited $rc"; return; }
        ((i > WARMUPS)) && bin_runs+=("$LAST_MS")
    done
    for log in "$clog" "$blog"; do # both should answer from the remembered result
        grep -q '^build3 .*passing' "$log" ||
            say "note: list did not show build3 as passing: $(grep '^build3' "$log" | tr -s ' ')"
    done
    local mc mb rc_ rb
    mc=$(median "${cargo_runs[@]}")
    mb=$(median "${bin_runs[@]}")
    rc_=$(ratio "$mc" 300)
    rb=$(ratio "$mb" 300)
    say "cargo run -q -p grader -- list   runs (ms): ${cargo_runs[*]}   median $(secs "$mc")"
    say "target/debug/kit-grader list     runs (ms): ${bin_runs[*]}   median $(secs "$mb")"
    say "cargo's and the launcher's share: $(secs $((mc - mb))) of $(secs "$mc"); target <= 0.30 s: $(verdict "$rc_" 1)"
    row "list (cargo run)" "$(secs "$mc")" "<= 0.30 s" "$rc_" "$(verdict "$rc_" 1)"
    row "list (kit-grader alone)" "$(secs "$mb")" "<= 0.30 s" "$rb" "$(verdict "$rb" 1)"
}

# ---------------------------------------------------------------- 5. grade throughput
bench_grade() {
    section "5. grade throughput: cargo bench -q -p kit-grader --bench grade"
    prepare_kit
    [[ -f $KIT_COPY/grader/benches/grade.rs ]] ||
        { failed_row "grade throughput" ">= 200/min" "no grader/benches/grade.rs in the kit"; return; }
    say "(builds the bench profile first: minutes when cold, untimed by the bench)"
    local rc=0 log=$WORK/grade.log
    run_bg "$KIT_COPY" "$log" cargo bench -q -p kit-grader --bench grade || rc=$?
    sed 's/^/  grade | /' "$log" | grep -v '^  grade | *$' | grep -iv 'warning' || true
    if ((rc != 0)); then
        failed_row "grade throughput" ">= 200/min" "cargo bench exited $rc"
        return
    fi
    local per_minute
    per_minute=$(sed -n 's/.* \([0-9][0-9]*\) per minute.*/\1/p' "$log" | tail -n 1)
    if [[ -z $per_minute ]]; then
        failed_row "grade throughput" ">= 200/min" "no 'N per minute' line in the bench's output"
        return
    fi
    local r met
    r=$(ratio "$per_minute" 200)
    if at_most 1 "$r"; then met="met"; else met="not met"; fi
    row "grade throughput" "$per_minute/min" ">= 200/min" "$r" "$met"
}

# ---------------------------------------------------------------- 3. first run
bench_first_run() {
    section "3. first run: fresh clone, empty cargo home (downloads included), then cargo test warm"
    git -C "$KIT" rev-parse --verify -q HEAD >/dev/null ||
        { failed_row "first run" "<= 45 s" "$KIT is not a git repository with a commit"; return; }
    local dir=$WORK/first home=$WORK/first/cargo-home head
    rm -rf "$dir" && mkdir -p "$home"
    # Keep the machine's registry settings (mirrors, source replacement), nothing else.
    local src
    for src in "${CARGO_HOME:-$HOME/.cargo}"/config.toml "${CARGO_HOME:-$HOME/.cargo}"/config; do
        [[ -f $src ]] && cp "$src" "$home/"
    done
    # The registry must answer: resolve one small crate with a throwaway cargo home.
    mkdir -p "$dir/netcheck/src" "$dir/netcheck-home"
    cp "$home"/config* "$dir/netcheck-home/" 2>/dev/null || true
    printf '[package]\nname = "netcheck"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\nitoa = "1"\n' \
        >"$dir/netcheck/Cargo.toml"
    echo 'fn main() {}' >"$dir/netcheck/src/main.rs"
    if ! run_bg "$dir/netcheck" "$dir/netcheck.log" env CARGO_HOME="$dir/netcheck-home" \
        timeout 60 cargo generate-lockfile -q; then
        tail_of "$dir/netcheck.log" 5
        die "first-run: the package registry does not answer (cargo could not resolve one crate within 60 s): no network?"
    fi
    rm -rf "$dir/netcheck" "$dir/netcheck-home"

    git clone -q "$KIT" "$dir/kit" || die "git clone of $KIT failed"
    head=$(git -C "$dir/kit" log -1 --format='%h %s' | cut -c1-70)
    say "clone of HEAD ($head); uncommitted changes are not in it"
    [[ -z $(git -C "$KIT" status --porcelain 2>/dev/null | head -n 1) ]] ||
        say "note: $KIT has uncommitted changes: this section measures the last commit"

    local t rc=0 ms log=$dir/first-run.log
    t=$(now_ns)
    run_bg "$dir/kit" "$log" env CARGO_HOME="$home" cargo run -q -p grader -- build3 || rc=$?
    ms=$(ms_since "$t")
    if ((rc == 1)) && grep -q 'check result:' "$log"; then
        local r
        r=$(ratio "$ms" 45000)
        say "cargo run -q -p grader -- build3 (stub: exit 1 is the verdict): $(secs "$ms")   target <= 45 s: $(verdict "$r" 1)"
        row "first run to a verdict" "$(secs "$ms")" "<= 45 s" "$r" "$(verdict "$r" 1)"
    else
        tail_of "$log"
        failed_row "first run to a verdict" "<= 45 s" "exit $rc after $(secs "$ms") (expected 1, a verdict on the stubs)"
        return
    fi

    # Warm: a first run builds the tests and the kit copies they grade in (under
    # target/kit-tests/); it is said, not held to the target. The second run is timed.
    rc=0
    log=$dir/test-first.log
    t=$(now_ns)
    run_bg "$dir/kit" "$log" env CARGO_HOME="$home" cargo test -q --workspace --exclude practice || rc=$?
    ms=$(ms_since "$t")
    if ((rc != 0)); then
        tail_of "$log"
        failed_row "cargo test warm" "<= 90 s" "the first test run: exit $rc after $(secs "$ms")"
        return
    fi
    say "the tests' first run (builds them and their kit copies; not held to the target): $(secs "$ms")"
    log=$dir/test.log
    t=$(now_ns)
    run_bg "$dir/kit" "$log" env CARGO_HOME="$home" cargo test -q --workspace --exclude practice || rc=$?
    ms=$(ms_since "$t")
    if ((rc == 0)); then
        local r
        r=$(ratio "$ms" 90000)
        say "cargo test --workspace --exclude practice (warm): $(secs "$ms")   target <= 90 s: $(verdict "$r" 1)"
        row "cargo test warm" "$(secs "$ms")" "<= 90 s" "$r" "$(verdict "$r" 1)"
    else
        tail_of "$log"
        failed_row "cargo test warm" "<= 90 s" "exit $rc after $(secs "$ms")"
    fi
}

# ---------------------------------------------------------------- main
LOAD_BEFORE=$(loadavg)
CORES=$(nproc 2>/dev/null || echo "?")
echo "speed.sh: the kit at $KIT (working tree, copied to $WORK)"
echo "  $RUNS timed runs of each after $WARMUPS warm-ups; medians; times from date +%s%N"
echo "  machine: $CORES cores, shared with other work: load average before $LOAD_BEFORE"
echo "  (1, 5, 15 min). Figures taken under load are slower than on a quiet machine."

wanted edit && bench_edit
wanted watch && bench_watch
wanted list && bench_list
wanted grade && bench_grade
wanted first-run && bench_first_run

LOAD_AFTER=$(loadavg)
echo
echo "── results ── (load average before $LOAD_BEFORE, after $LOAD_AFTER; $CORES cores, shared)"
{
    echo "name|figure|target|ratio|met"
    for r in ${ROWS[@]+"${ROWS[@]}"}; do echo "$r"; done
} | awk -F'|' '
    function width(s) { gsub(/[\200-\277]/, "", s); return length(s) } # UTF-8 characters
    { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (width($i) > w[i]) w[i] = width($i) }
      if (NF > cols) cols = NF }
    END { for (r = 1; r <= NR; r++) { line = "  "
            for (i = 1; i <= cols; i++) {
                line = line cell[r, i]
                if (i < cols) for (p = width(cell[r, i]); p < w[i] + 2; p++) line = line " " }
            print line } }'
echo "  ratio: kit/rustlings for edit and watch (target 0.60); figure/target for list, first"
echo "  run and cargo test (met at <= 1); figure/target for grade throughput (met at >= 1)."
exit "$FAILED"
