//! narrow: `handle_attempt`. One named check per rule of the lesson
//! (`exercises/narrow/lesson.md`), then an exhaustive comparison with the reference.
//!
//! Each check hands the handler attempts whose requests do one thing each — succeed with a
//! value, fail in a declared way, panic — and compares what the handler did with what the
//! rule demands. A failure shows the attempt, both results, the first difference and the
//! rule, named for the realistic mistake that gives it where one does.

use super::attempt::{describe_given, describe_ran, record_all, same_returned, Given, Ran};
use super::Learner;
use crate::feedback::Feedback;
use crate::lesson::CheckResult;
use crate::view::Field;
use kit_types::{
    Handled, PermanentError, PermanentKind, RequestError, TransientError, TransientReason,
};
use serde_json::{json, Value};

crate::checks! { Learner;
    success::the_request_is_called_once,
    success::the_value_is_returned_as_it_came,
    transient::declared_transient_means_try_again,
    transient::the_server_wait_is_kept,
    permanent::permanent_failures_come_back_unchanged,
    permanent::a_malformed_reply_comes_back_unchanged,
    permanent::an_undeclared_status_comes_back_unchanged,
    panics::a_panic_of_the_request_is_not_caught,
    privacy::detail_is_never_printed,
    exhaustive::matches_reference_on_every_case => 30 s,
}

// ---------- building blocks ----------

/// What the rule demands of one attempt: this return, or the request's panic going on.
#[derive(Debug, Clone)]
pub(super) enum Want {
    /// The handler returns this.
    Returns(super::attempt::Returned),
    /// The request's panic comes out of the handler as it was.
    Unwinds(String),
}

/// What the rule demands for `given` (the reference's behaviour, written out).
pub(super) fn want(given: &Given) -> Want {
    match given {
        Given::Returns(v) => Want::Returns(Ok(Handled::Value(v.clone()))),
        Given::Fails(RequestError::Transient(t)) => Want::Returns(Ok(Handled::TryAgain {
            reason: t.reason,
            retry_after: t.retry_after,
        })),
        Given::Fails(other) => Want::Returns(Err(other.clone())),
        Given::Panics(message) => Want::Unwinds(message.clone()),
    }
}

fn describe_want(want: &Want) -> String {
    match want {
        Want::Returns(r) => super::attempt::describe_returned(r),
        Want::Unwinds(m) => format!("panicked: {m:?}"),
    }
}

/// Whether the handler did what `want` says, having called the request once.
pub(super) fn meets(ran: &Ran, want: &Want) -> bool {
    ran.calls == 1
        && match (&ran.ended, want) {
            (Ok(got), Want::Returns(w)) => same_returned(got, w),
            (Err(panic), Want::Unwinds(m)) => panic.message == *m,
            _ => false,
        }
}

/// Why the handler's run of `given` breaks a rule, in the words of the mistake that
/// realistically gives it.
pub(super) fn why(given: &Given, ran: &Ran) -> String {
    use RequestError::{Permanent, Transient};
    if ran.calls == 0 {
        return "the handler returned without calling the request: it cannot know what the \
                attempt came to before it calls `request()`, once."
            .into();
    }
    let got = match (&ran.ended, given) {
        (Ok(got), _) => got,
        (Err(_), Given::Panics(m)) => {
            return format!(
                "the request panicked with {m:?} and a different panic came out of the handler: \
                 let the request's own panic go on as it is."
            )
        }
        (Err(_), _) => {
            return "the handler panicked: it handles results, and has no reason to panic on one."
                .into()
        }
    };
    match (given, got) {
        (Given::Panics(_), returned) => format!(
            "the request panicked and the handler returned ({}): the panic was caught \
             (`std::panic::catch_unwind`?). A panic is a bug, not a failure to handle: let it \
             unwind to the caller.",
            super::attempt::describe_returned(returned)
        ),
        (Given::Fails(_), Ok(Handled::Value(v))) => format!(
            "a failure came back as a success ({v}): `unwrap_or_default()`, `unwrap_or(…)` or \
             `.ok()` hides a failure behind a made-up value the caller cannot tell from a real \
             one. Give the failure back, or say to try again."
        ),
        (Given::Fails(Permanent(p)), Ok(Handled::TryAgain { .. })) => match p.kind {
            PermanentKind::Unexpected => "an undeclared status (`unexpected`) is permanent: not \
                knowing a status is no reason to retry it. Only `RequestError::Transient` means \
                try again; a catch-all `Err(_)` arm, or an arm that guesses from the status, \
                catches this one too."
                .into(),
            PermanentKind::MalformedResponse => "a malformed reply is permanent: the same \
                request gets the same body again. Only `RequestError::Transient` means try \
                again; a catch-all `Err(_)` arm, or an arm that guesses from the status, \
                catches this one too."
                .into(),
            kind => format!(
                "a permanent failure ({kind}) is not worth another attempt: only \
                 `RequestError::Transient` means try again. A catch-all arm (`Err(_) =>`), or \
                 an arm that guesses from the status, catches the permanent failures too: match \
                 the transient variant alone, and give every other error back."
            ),
        },
        (Given::Fails(Permanent(_)), Err(_)) => "the error came back changed: give back the \
            very error (`Err(other) => Err(other)`), every field as it was, not a new one built \
            from its text (that copies its detail, and loses what it declared)."
            .into(),
        (Given::Fails(Transient(_)), Err(_)) => "a declared transient failure means try again: \
            `Ok(Handled::TryAgain { reason, retry_after })`, not the error back to the caller."
            .into(),
        (
            Given::Fails(Transient(t)),
            Ok(Handled::TryAgain {
                reason,
                retry_after,
            }),
        ) => {
            if *reason != t.reason {
                format!(
                    "the reason is the failure's own (`reason: t.reason`, for the \
                     `RequestError::Transient(t)` you matched): here {}, not {reason}.",
                    t.reason
                )
            } else {
                match (t.retry_after, retry_after) {
                    (None, Some(w)) => format!(
                        "no server wait was declared: `retry_after` stays `None` ({w:?} would \
                         say the server asked for that wait)."
                    ),
                    (Some(_), None) => "the server's wait was dropped: copy `retry_after` \
                        across as it was declared."
                        .into(),
                    (Some(w), Some(v)) => format!(
                        "the server's wait goes across exactly as declared: {w:?}, not {v:?}."
                    ),
                    (None, None) => "the run differs from the rule.".into(),
                }
            }
        }
        (Given::Returns(_), Ok(Handled::Value(_))) => "the value came back changed: return the \
            request's value exactly as it came, whatever it looks like."
            .into(),
        (Given::Returns(_), _) => "a success is not a failure: `Ok(value)` becomes \
            `Ok(Handled::Value(value))`, even when the value looks empty."
            .into(),
    }
}

/// Hands every attempt to the handler and compares each with the rule; the first that
/// differs fails the check. A learner's own panic (or `todo!()`) goes on to the harness.
fn expect_each(learner: &Learner, attempts: &[Given]) -> CheckResult {
    let runs = record_all(learner, attempts);
    for (given, ran) in attempts.iter().zip(&runs) {
        raise_learners_panic(given, ran);
        let want = want(given);
        if meets(ran, &want) {
            continue;
        }
        let summary = format!(
            "handle_attempt gave {}; the rule expects {}.",
            describe_ran(ran),
            describe_want(&want)
        );
        return Err(Feedback::new(summary, why(given, ran))
            .input(vec![Field::line("attempt", describe_given(given))])
            .did(fields(ran.calls, &describe_ran_ended(ran)))
            .expected(fields(1, &describe_want(&want)))
            .first_difference()
            .render());
    }
    // Fewer runs than attempts only after a todo!(), which was raised above.
    Ok(())
}

fn fields(calls: usize, ended: &str) -> Vec<Field> {
    vec![
        Field::line("request calls", calls.to_string()),
        Field::line("handler", ended.to_string()),
    ]
}

fn describe_ran_ended(ran: &Ran) -> String {
    describe_ran(&Ran {
        calls: 1,
        ended: ran.ended.clone(),
    })
}

/// Raises a panic of the learner's own again, for the harness to report: `todo!()` as
/// unfinished, any other panic that is not the request's as a panic of the learner's code.
pub(super) fn raise_learners_panic(given: &Given, ran: &Ran) {
    let Err(panic) = &ran.ended else {
        return;
    };
    let the_requests = matches!(given, Given::Panics(m) if *m == panic.message);
    if the_requests && ran.calls == 1 {
        return;
    }
    if crate::panics::is_stub_panic(&panic.message) || !matches!(given, Given::Panics(_)) {
        let payload: Box<dyn std::any::Any + Send> = Box::new(panic.clone());
        crate::serve::note_if_learners(payload.as_ref(), || {
            vec![Field::line("attempt", describe_given(given))]
        });
        std::panic::resume_unwind(payload);
    }
}

fn transient(reason: TransientReason, retry_after: Option<f64>) -> Given {
    let mut e = TransientError::new(reason).with_detail("GET https://api.example/jobs/3 → 503");
    e.retry_after = retry_after;
    Given::Fails(e.into())
}

fn permanent(kind: PermanentKind, status: Option<u16>) -> Given {
    let mut e = PermanentError::new(kind).with_detail("GET https://api.example/jobs/3 → no");
    e.status = status;
    Given::Fails(e.into())
}

/// The values a success may carry, the ones that look empty among them.
pub(super) fn values() -> Vec<Value> {
    vec![
        json!({"job_id": "fresh_3", "state": "done"}),
        Value::Null,
        json!(false),
        json!(0),
        json!(""),
        json!([]),
        json!({}),
    ]
}

mod success {
    use super::*;

    pub(crate) fn the_request_is_called_once(imp: &Learner) -> CheckResult {
        let attempts = [
            Given::Returns(json!({"job_id": "fresh_3"})),
            transient(TransientReason::Timeout, None),
            permanent(PermanentKind::NotFound, Some(404)),
        ];
        let runs = record_all(imp, &attempts);
        for (given, ran) in attempts.iter().zip(&runs) {
            raise_learners_panic(given, ran);
            if ran.calls != 1 {
                return Err(Feedback::new(
                    format!(
                        "the request was called {}; the rule expects once.",
                        crate::feedback::plural(ran.calls as u64, "time")
                    ),
                    why(given, ran),
                )
                .input(vec![Field::line("attempt", describe_given(given))])
                .did(vec![Field::line("request calls", ran.calls.to_string())])
                .expected(vec![Field::line("request calls", "1")])
                .render());
            }
        }
        Ok(())
    }

    pub(crate) fn the_value_is_returned_as_it_came(imp: &Learner) -> CheckResult {
        let attempts: Vec<Given> = values().into_iter().map(Given::Returns).collect();
        expect_each(imp, &attempts)
    }
}

mod transient {
    use super::*;

    pub(crate) fn declared_transient_means_try_again(imp: &Learner) -> CheckResult {
        let attempts: Vec<Given> = TransientReason::ALL
            .into_iter()
            .map(|r| transient(r, None))
            .collect();
        expect_each(imp, &attempts)
    }

    pub(crate) fn the_server_wait_is_kept(imp: &Learner) -> CheckResult {
        let attempts: Vec<Given> = [Some(2.0), Some(0.0), Some(0.25), Some(120.0), None]
            .into_iter()
            .map(|w| transient(TransientReason::RateLimited, w))
            .collect();
        expect_each(imp, &attempts)
    }
}

mod permanent {
    use super::*;

    pub(crate) fn permanent_failures_come_back_unchanged(imp: &Learner) -> CheckResult {
        let attempts = [
            permanent(PermanentKind::NotFound, Some(404)),
            permanent(PermanentKind::Unauthorized, Some(401)),
            permanent(PermanentKind::Forbidden, Some(403)),
            permanent(PermanentKind::BadRequest, None),
            permanent(PermanentKind::BadRequest, Some(400)),
        ];
        expect_each(imp, &attempts)
    }

    pub(crate) fn a_malformed_reply_comes_back_unchanged(imp: &Learner) -> CheckResult {
        expect_each(
            imp,
            &[permanent(PermanentKind::MalformedResponse, Some(200))],
        )
    }

    pub(crate) fn an_undeclared_status_comes_back_unchanged(imp: &Learner) -> CheckResult {
        let attempts = [
            permanent(PermanentKind::Unexpected, Some(500)),
            permanent(PermanentKind::Unexpected, Some(302)),
        ];
        expect_each(imp, &attempts)
    }
}

mod panics {
    use super::*;

    pub(crate) fn a_panic_of_the_request_is_not_caught(imp: &Learner) -> CheckResult {
        expect_each(
            imp,
            &[Given::Panics(
                "index out of bounds: the len is 0 but the index is 3".into(),
            )],
        )
    }
}

mod privacy {
    use super::*;
    use crate::report::PRIVATE_MARKER;

    /// The run itself is the other checks'; what the code printed is judged by the grader,
    /// which reads the check's output for [`PRIVATE_MARKER`].
    pub(crate) fn detail_is_never_printed(imp: &Learner) -> CheckResult {
        let private = |what: &str| {
            format!("GET https://api.example/jobs/3?token={PRIVATE_MARKER}-{what} → {what}")
        };
        let attempts = [
            Given::Fails(
                TransientError::new(TransientReason::ServerError)
                    .with_detail(private("503"))
                    .into(),
            ),
            Given::Fails(
                PermanentError::new(PermanentKind::NotFound)
                    .with_status(404)
                    .with_detail(private("404"))
                    .into(),
            ),
        ];
        let runs = record_all(imp, &attempts);
        for (given, ran) in attempts.iter().zip(&runs) {
            raise_learners_panic(given, ran);
        }
        Ok(())
    }
}

mod exhaustive {
    use super::*;

    pub(crate) fn matches_reference_on_every_case(imp: &Learner) -> CheckResult {
        super::super::exhaustive::check(imp)
    }
}
