//! narrow's test implementations of `handle_attempt`, for the kit's own tests
//! ([`crate::lesson::Trials`]): the correct handler, each realistic mistake with the check
//! that must catch it first and what its message must say, and hostile code. Never used to
//! grade a learner.

use super::{AttemptFn, Learner};
use crate::lesson::{Mistake, Trials};
use kit_types::graded::Reply;
use kit_types::narrow::Request;
use kit_types::{
    Handled, PermanentError, PermanentKind, RequestError, TransientError, TransientReason,
};

type Returned = Result<Handled<Reply>, RequestError>;

/// The lesson's trials.
pub(crate) const TRIALS: Trials = Trials {
    run: |label, job, runner| {
        let learner = match runner {
            Some(runner) => Learner::Runner(runner),
            None if label == "reference" => super::reference(),
            None => Learner::Here(implementation(label)?),
        };
        Some(super::run(job, &learner))
    },
    function: |label| {
        let f: AttemptFn = match label {
            "reference" => match super::reference() {
                Learner::Here(f) => f,
                Learner::Runner(_) => return None,
            },
            other => implementation(other)?,
        };
        Some(kit_runner::runner::Function::Narrow(f))
    },
    mistakes: MISTAKES,
};

const MISTAKES: &[Mistake] = &[
    Mistake {
        label: "catch_all",
        first: "permanent::permanent_failures_come_back_unchanged",
        says: &[
            "handle_attempt gave try again: server_error, no retry_after; the rule expects \
             back to the caller: permanent not_found, status 404",
            "A catch-all arm (`Err(_) =>`), or an arm that guesses from the status",
        ],
    },
    Mistake {
        label: "unwrap_or_default",
        first: "permanent::permanent_failures_come_back_unchanged",
        says: &[
            "a failure came back as a success (null)",
            "`unwrap_or_default()`",
        ],
    },
    Mistake {
        label: "catch_unwind",
        first: "panics::a_panic_of_the_request_is_not_caught",
        says: &["the panic was caught (`std::panic::catch_unwind`?)"],
    },
    Mistake {
        label: "retries_unexpected",
        first: "permanent::an_undeclared_status_comes_back_unchanged",
        says: &["not knowing a status is no reason to retry it"],
    },
    Mistake {
        label: "rebuilds_the_error",
        first: "permanent::permanent_failures_come_back_unchanged",
        says: &[
            "the error came back changed",
            "not a new one built from its text",
        ],
    },
    Mistake {
        label: "prints_detail",
        first: "privacy::detail_is_never_printed",
        says: &["detail"],
    },
    Mistake {
        label: "drops_the_wait",
        first: "transient::the_server_wait_is_kept",
        says: &["the server's wait was dropped"],
    },
    Mistake {
        label: "wait_defaults_to_zero",
        first: "transient::declared_transient_means_try_again",
        says: &["no server wait was declared: `retry_after` stays `None` (0.0 would"],
    },
    Mistake {
        label: "one_reason",
        first: "transient::declared_transient_means_try_again",
        says: &["the reason is the failure's own (`reason: t.reason`"],
    },
    Mistake {
        label: "never_calls",
        first: "success::the_request_is_called_once",
        says: &[
            "the request was called 0 times",
            "before it calls `request()`",
        ],
    },
];

/// Test implementation `label` of `handle_attempt`: the correct handler, and each realistic
/// mistake as the one arm a learner would write differently.
fn implementation(label: &str) -> Option<AttemptFn> {
    fn try_again(t: &TransientError) -> Returned {
        Ok(Handled::TryAgain {
            reason: t.reason,
            retry_after: t.retry_after,
        })
    }
    fn correct(request: Request<'_>) -> Returned {
        match request() {
            Ok(v) => Ok(Handled::Value(v)),
            Err(RequestError::Transient(t)) => try_again(&t),
            Err(other) => Err(other),
        }
    }
    let handler: AttemptFn = match label {
        "correct" => correct,
        "stub" => |_| todo!(),
        // `Err(_) =>`: every failure is worth another attempt.
        "catch_all" => |request| match request() {
            Ok(v) => Ok(Handled::Value(v)),
            Err(RequestError::Transient(t)) => try_again(&t),
            Err(_) => Ok(Handled::TryAgain {
                reason: TransientReason::ServerError,
                retry_after: None,
            }),
        },
        // A failure hidden behind a success-shaped value (with a `T: Default` bound).
        "unwrap_or_default" => |request| match request() {
            Err(RequestError::Transient(t)) => try_again(&t),
            other => Ok(Handled::Value(other.unwrap_or_default())),
        },
        // The request's panic caught and turned into an error.
        "catch_unwind" => {
            |request| match std::panic::catch_unwind(std::panic::AssertUnwindSafe(request)) {
                Ok(result) => correct(Box::new(|| result)),
                Err(_) => Err(PermanentError::new(PermanentKind::Unexpected).into()),
            }
        }
        // An unknown status retried "to be safe".
        "retries_unexpected" => |request| match request() {
            Err(RequestError::Permanent(p)) if p.kind == PermanentKind::Unexpected => {
                Ok(Handled::TryAgain {
                    reason: TransientReason::ServerError,
                    retry_after: None,
                })
            }
            other => correct(Box::new(|| other)),
        },
        // A new error built from the old one's text: it changes, and copies the detail.
        "rebuilds_the_error" => |request| match request() {
            Err(RequestError::Permanent(p)) => Err(PermanentError::new(p.kind)
                .with_detail(format!("request failed: {p} ({})", p.detail))
                .into()),
            other => correct(Box::new(|| other)),
        },
        // The detail printed for the logs.
        "prints_detail" => |request| {
            let result = request();
            if let Err(e) = &result {
                eprintln!("attempt failed: {e:?}");
            }
            correct(Box::new(|| result))
        },
        // The server's wait dropped, or defaulted to zero.
        "drops_the_wait" => |request| match request() {
            Err(RequestError::Transient(t)) => Ok(Handled::TryAgain {
                reason: t.reason,
                retry_after: None,
            }),
            other => correct(Box::new(|| other)),
        },
        "wait_defaults_to_zero" => |request| match request() {
            Err(RequestError::Transient(t)) => Ok(Handled::TryAgain {
                reason: t.reason,
                retry_after: Some(t.retry_after.unwrap_or(0.0)),
            }),
            other => correct(Box::new(|| other)),
        },
        // Every transient failure given one reason.
        "one_reason" => |request| match request() {
            Err(RequestError::Transient(t)) => Ok(Handled::TryAgain {
                reason: TransientReason::ServerError,
                retry_after: t.retry_after,
            }),
            other => correct(Box::new(|| other)),
        },
        // Decides before it calls the request.
        "never_calls" => |_| Err(PermanentError::new(PermanentKind::Unexpected).into()),
        "spins" => |_| loop {
            std::hint::spin_loop()
        },
        "panics" => |_| panic!("boom: index 7 out of range"),
        "aborts" => |_| std::process::abort(),
        _ => return None,
    };
    Some(handler)
}
