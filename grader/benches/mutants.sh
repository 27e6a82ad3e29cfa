#!/usr/bin/env bash
# How much the named checks can see: cargo-mutants over each lesson's reference answer,
# every mutant judged by that lesson's named checks only (not the exhaustive comparison).
# Prints each lesson's killed / survived / unviable / timeout and the share of viable
# mutants killed (target 100%), each survivor with its diff, then a table. See
# grader/benches/README.md.
#
#   bash grader/benches/mutants.sh [--only LESSON[,LESSON]] [--keep DIR] [--jobs N]
#
# Works from any folder. Mutates a scratch copy of the kit, never the checkout itself.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: bash grader/benches/mutants.sh [OPTIONS]

Runs cargo-mutants over the reference answers and judges every mutant by the lesson's named
checks alone (every check but exhaustive::…). A mutant is killed when a named check fails
on it; one that survives is a rule of the lesson no named check pins down.

Lessons (in this order) and the files mutated:
  build2   reference/src/fetch.rs
  build3   reference/src/retry.rs
  stage8   reference/src/gateway/ (lookup.rs, mod.rs)

How: the kit's working tree (uncommitted changes included) is copied into a scratch folder;
there reference/src is copied again into a crate of its own, mutants-subject, whose library
is also called `reference`, with grader/checks/tests/named_checks.rs as its one test. That
test runs the lesson's named checks in-process (KIT_NAMED_CHECKS=LESSON selects it) on the
copy. The checks' crate still links the untouched reference, so a mutant rebuilds only the
copy and the test, never the checks (opt-level 2). cargo-mutants mutates only the copy;
mutants are reported under their reference/src/… names.

Options:
  --only LESSON    measure only these lessons (repeat it, or separate names with commas)
  --keep DIR       use DIR for the scratch copy, cargo-mutants and the results, and keep it:
                   a second run reuses its builds (cold, the first build takes minutes)
  --jobs N         mutants built and tested at once (default 1). With 1 the scratch copy
                   is mutated in place and its builds stay warm; with more, cargo-mutants
                   makes a copy per job (target/ included), where cargo builds everything
                   again: slower on a small machine (grader/benches/README.md has figures)
  -h, --help       show this help

Environment:
  CARGO_MUTANTS=PATH      a cargo-mutants binary to use (default: the one installed in the
                          scratch folder by `cargo install cargo-mutants --locked --version
                          $CARGO_MUTANTS_VERSION --root SCRATCH/tools`, 27.1.0 unless set)
  MUTANT_TIMEOUT=SECS     the test time after which a mutant counts as a timeout (default:
                          cargo-mutants' own, from the unmutated run)
  KIT=DIR                 the kit to measure (default: the checkout this script is in)

Results: SCRATCH/out/LESSON/mutants.out (cargo-mutants' own output: caught.txt,
missed.txt, unviable.txt, timeout.txt, diff/, log/). A timeout counts as a kill: the grader
fails a check that does not finish. The share is (killed + timeout) / (killed + survived +
timeout); unviable mutants (they do not compile) are not counted in it.
Exit status: 0 when every lesson was measured (whatever its share), 1 when a measurement
failed, 2 when a prerequisite is missing or an argument is wrong.
EOF
}

die() { # one line: what is missing or wrong, and why
    echo "mutants.sh: $*" >&2
    exit 2
}

# ---------------------------------------------------------------- arguments
LESSONS=(build2 build3 stage8)
ONLY=()
KEEP=""
JOBS=1
while (($#)); do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --only)
        (($# >= 2)) || die "--only needs a lesson (build2, build3, stage8)"
        IFS=, read -r -a names <<<"$2"
        ONLY+=("${names[@]}")
        shift ;;
    --only=*) IFS=, read -r -a names <<<"${1#--only=}"; ONLY+=("${names[@]}") ;;
    --keep)
        (($# >= 2)) || die "--keep needs a folder"
        KEEP=$2
        shift ;;
    --keep=*) KEEP=${1#--keep=} ;;
    --jobs)
        (($# >= 2)) || die "--jobs needs a number"
        JOBS=$2
        shift ;;
    --jobs=*) JOBS=${1#--jobs=} ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done
for name in ${ONLY[@]+"${ONLY[@]}"}; do
    case " ${LESSONS[*]} " in
    *" $name "*) ;;
    *) die "unknown lesson '$name': choose from ${LESSONS[*]}" ;;
    esac
done
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a positive number, not '$JOBS'"
MUTANT_TIMEOUT=${MUTANT_TIMEOUT:-}
[[ -z $MUTANT_TIMEOUT || $MUTANT_TIMEOUT =~ ^[1-9][0-9]*$ ]] ||
    die "MUTANT_TIMEOUT must be a whole number of seconds, not '$MUTANT_TIMEOUT'"
CARGO_MUTANTS_VERSION=${CARGO_MUTANTS_VERSION:-27.1.0}

wanted() {
    local name
    ((${#ONLY[@]} == 0)) && return 0
    for name in "${ONLY[@]}"; do [[ $name == "$1" ]] && return 0; done
    return 1
}

# The files of each lesson's answer, as globs relative to the scratch copy's root.
lesson_files() {
    case "$1" in
    build2) echo "mutants-subject/src/fetch.rs" ;;
    build3) echo "mutants-subject/src/retry.rs" ;;
    stage8) echo "mutants-subject/src/gateway/lookup.rs mutants-subject/src/gateway/mod.rs" ;;
    esac
}

# ---------------------------------------------------------------- prerequisites
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KIT=$(cd "${KIT:-$SCRIPT_DIR/../..}" 2>/dev/null && pwd) || die "KIT=$KIT is not a folder"
[[ -f $KIT/Cargo.toml && -d $KIT/reference/src/gateway && -f $KIT/reference/src/retry.rs ]] ||
    die "$KIT is not the kit (no Cargo.toml, reference/src/gateway/ or reference/src/retry.rs)"
NAMED=$KIT/grader/checks/tests/named_checks.rs
[[ -f $NAMED ]] || die "$NAMED is missing: it is the test every mutant is judged by"
grep -q '^members = \[$' "$KIT/Cargo.toml" ||
    die "$KIT/Cargo.toml has no 'members = [' line to add the mutated copy's crate to"
command -v cargo >/dev/null || die "cargo is not on PATH: install Rust (rustup) first"
command -v tar >/dev/null || die "tar is not on PATH: the kit is copied with it"
# The copy builds into its own target/; a target folder set from outside would share
# builds with other work (and its lock).
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR

# ---------------------------------------------------------------- scratch and cleanup
if [[ -n $KEEP ]]; then
    mkdir -p "$KEEP" || die "cannot create --keep folder $KEEP"
    WORK=$(cd "$KEEP" && pwd)
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/mutants-XXXXXX")
fi
case "$WORK/" in
"$KIT"/*) die "the scratch folder $WORK is inside the kit $KIT: choose one outside it" ;;
esac
CHILD=""

# shellcheck disable=SC2317 # kill_group and cleanup are reached through the traps
kill_group() { # a process group this script started (setsid makes the pid the group id)
    local pid=$1
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.2
    done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
}

# shellcheck disable=SC2317 # see kill_group
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    [[ -n $CHILD ]] && kill_group "$CHILD"
    [[ -z $KEEP ]] && rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'echo "mutants.sh: interrupted" >&2; exit 130' INT
trap 'echo "mutants.sh: stopped by a signal" >&2; exit 143' TERM HUP

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

now_s() { date +%s; }
mins() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime | sed 's/.*average: //'; }
say() { printf '  %s\n' "$*"; }
tail_of() { # the last lines of a log, indented, to stderr
    sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' "$1" | tail -n "${2:-15}" | sed 's/^/    | /' >&2
}
lines_in() { # lines of a file, 0 when it is missing
    if [[ -f $1 ]]; then grep -c . "$1" || true; else echo 0; fi
}
# A mutant's name as the reader knows the file: reference/src/…, not the copy's path.
renamed() { sed 's#mutants-subject/src/#reference/src/#g'; }

# ---------------------------------------------------------------- cargo-mutants
if [[ -n ${CARGO_MUTANTS:-} ]]; then
    CM=$CARGO_MUTANTS
    [[ -x $CM ]] || die "CARGO_MUTANTS=$CM is not an executable file"
else
    CM=$WORK/tools/bin/cargo-mutants
    if [[ ! -x $CM ]]; then
        echo "mutants.sh: installing cargo-mutants $CARGO_MUTANTS_VERSION into $WORK/tools (minutes; set CARGO_MUTANTS=PATH to reuse one) ..."
        rc=0
        run_bg "$WORK" "$WORK/install.log" cargo install cargo-mutants --locked \
            --version "$CARGO_MUTANTS_VERSION" --root "$WORK/tools" || rc=$?
        if ((rc != 0)); then
            tail_of "$WORK/install.log"
            die "cargo install cargo-mutants $CARGO_MUTANTS_VERSION failed (exit $rc): is the package registry reachable?"
        fi
    fi
fi
CM_VERSION=$("$CM" mutants --version 2>/dev/null) || die "$CM mutants --version failed: not cargo-mutants?"

# ---------------------------------------------------------------- the scratch copy
# The working tree without target/, .git and any mutants.out; a kept copy's target/ stays.
# Then the copy's crate of the reference's sources (mutants-subject), its test and its
# place in the workspace. The copy's files are touched: a kept copy's build may be of the
# last mutant, and a copied file keeps the checkout's older time.
KIT_COPY=$WORK/kit
SUBJECT=$KIT_COPY/mutants-subject
prepare_kit() {
    mkdir -p "$KIT_COPY"
    tar -C "$KIT" --exclude=./target --exclude=./.git --exclude=./mutants.out -cf - . |
        tar -C "$KIT_COPY" -xf - || die "cannot copy $KIT to $KIT_COPY"
    rm -rf "$SUBJECT/src" "$SUBJECT/tests"
    mkdir -p "$SUBJECT/src" "$SUBJECT/tests"
    tar -C "$KIT/reference/src" --exclude=./types -cf - . | tar -C "$SUBJECT/src" -xf - ||
        die "cannot copy $KIT/reference/src to $SUBJECT/src"
    cp "$NAMED" "$SUBJECT/tests/named_checks.rs"
    find "$SUBJECT/src" "$SUBJECT/tests" -type f -exec touch {} +
    cat >"$SUBJECT/Cargo.toml" <<'EOF'
# Made by grader/benches/mutants.sh in its scratch copy: the reference's sources again, in a
# crate no check depends on, so that mutating them never rebuilds the checks. Its library is
# called `reference`, so tests/named_checks.rs (a copy of grader/checks/tests/) judges it.
[package]
name = "mutants-subject"
version.workspace = true
edition.workspace = true
license.workspace = true
publish.workspace = true
rust-version.workspace = true

[lib]
name = "reference"
path = "src/lib.rs"
# Only tests/named_checks.rs judges a mutant: not the answers' own unit tests, nor their
# examples.
test = false
doctest = false

[dependencies]
kit-types.workspace = true
serde.workspace = true
serde_json.workspace = true

[dev-dependencies]
grader-checks.workspace = true
EOF
    sed -i 's/^members = \[$/members = [\n    "mutants-subject",/' "$KIT_COPY/Cargo.toml"
    grep -q '^    "mutants-subject",$' "$KIT_COPY/Cargo.toml" ||
        die "could not add mutants-subject to $KIT_COPY/Cargo.toml's members"
}

# ---------------------------------------------------------------- one lesson
ROWS=()
FAILED=0
row() { ROWS+=("$1|$2|$3|$4|$5|$6|$7"); }

measure() {
    local lesson=$1 out=$WORK/out/$1 files=() args=() f rc=0 t
    printf '\n── %s ── %s (load average %s)\n' "$lesson" \
        "$(lesson_files "$lesson" | renamed)" "$(loadavg)"
    for f in $(lesson_files "$lesson"); do files+=(--file "$f"); done
    args=(mutants --dir "$KIT_COPY" --package mutants-subject "${files[@]}"
        --output "$out" --colors never --caught --unviable)
    if ((JOBS == 1)); then args+=(--in-place); else args+=(--jobs "$JOBS" --copy-target true); fi
    [[ -n $MUTANT_TIMEOUT ]] && args+=(--timeout "$MUTANT_TIMEOUT")
    rm -rf "$out"
    mkdir -p "$out"
    say "KIT_NAMED_CHECKS=$lesson cargo mutants ${args[*]:1} -- --test named_checks"
    t=$(now_s)
    run_bg "$KIT_COPY" "$out/cargo-mutants.log" env KIT_NAMED_CHECKS="$lesson" \
        "$CM" "${args[@]}" -- --test named_checks || rc=$?
    local secs=$(($(now_s) - t)) dir=$out/mutants.out
    # cargo-mutants: 0 every mutant caught, 2 some missed, 3 some timed out; anything else
    # (1 usage, 4 the unmutated tree failed its tests) is no measurement.
    if [[ $rc != 0 && $rc != 2 && $rc != 3 ]] || [[ ! -d $dir ]]; then
        tail_of "$out/cargo-mutants.log" 25
        say "cargo-mutants exited $rc after $(mins "$secs"): no figures for $lesson (log: $out/cargo-mutants.log)"
        row "$lesson" "-" "-" "-" "-" "failed" "$(mins "$secs")"
        FAILED=1
        return
    fi
    local caught missed unviable timeout viable share
    caught=$(lines_in "$dir/caught.txt")
    missed=$(lines_in "$dir/missed.txt")
    unviable=$(lines_in "$dir/unviable.txt")
    timeout=$(lines_in "$dir/timeout.txt")
    viable=$((caught + missed + timeout))
    share=$(awk -v k=$((caught + timeout)) -v v="$viable" \
        'BEGIN { if (v == 0) print "n/a"; else printf "%.1f%%", 100 * k / v }')
    say "killed $caught, survived $missed, unviable $unviable, timeout $timeout" \
        "in $(mins "$secs") ($CM_VERSION, $JOBS job(s))"
    say "viable mutants killed: $((caught + timeout)) of $viable = $share (target 100%)"
    if ((timeout > 0)); then
        say "timed out (counted as killed):"
        renamed <"$dir/timeout.txt" | sed 's/^/    /'
    fi
    if ((missed > 0)); then
        say "survivors: no named check of $lesson fails on these (add the check that would):"
        local line log
        while IFS= read -r line; do
            printf '\n    %s\n' "$(renamed <<<"$line")"
            # The mutant's log starts with "*** NAME" and holds its diff (also under diff/).
            log=$(grep -lxF -- "*** $line" "$dir"/log/*.log 2>/dev/null | head -n 1 || true)
            if [[ -n $log ]]; then
                awk '/^\*\*\* mutation diff:/ { on = 1; next } on && /^\*\*\* / { exit } on' \
                    "$log" | renamed | sed '/^$/d; s/^/      /'
            else
                say "  (no log of it under $dir/log)"
            fi
        done <"$dir/missed.txt"
    fi
    row "$lesson" "$caught" "$missed" "$unviable" "$timeout" "$share" "$(mins "$secs")"
}

# ---------------------------------------------------------------- main
T0=$(now_s)
LOAD_BEFORE=$(loadavg)
echo "mutants.sh: the kit at $KIT (working tree, copied to $KIT_COPY)"
echo "  $CM_VERSION ($CM); $JOBS job(s); $(nproc 2>/dev/null || echo '?') cores, shared:" \
    "load average before $LOAD_BEFORE"
prepare_kit
for lesson in "${LESSONS[@]}"; do
    wanted "$lesson" && measure "$lesson"
done

echo
echo "── results ── ($(mins $(($(now_s) - T0))) in all; load average before $LOAD_BEFORE, after $(loadavg))"
{
    echo "lesson|killed|survived|unviable|timeout|viable killed|time"
    for r in ${ROWS[@]+"${ROWS[@]}"}; do echo "$r"; done
} | awk -F'|' '
    { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
      if (NF > cols) cols = NF }
    END { for (r = 1; r <= NR; r++) { line = "  "
            for (i = 1; i <= cols; i++) {
                line = line cell[r, i]
                if (i < cols) for (p = length(cell[r, i]); p < w[i] + 2; p++) line = line " " }
            print line } }'
echo "  judged by the named checks only; target: 100% of viable mutants killed (a timeout"
if [[ -n $KEEP ]]; then
    echo "  counts as killed). cargo-mutants' output: $WORK/out/LESSON/mutants.out"
else
    echo "  counts as killed). Run with --keep DIR to keep cargo-mutants' output (logs, diffs)."
fi
exit "$FAILED"
