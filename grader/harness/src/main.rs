//! The learner's harness: links `practice` to the grader's checks. The grader builds it with
//! cargo and starts it once per check; it is not meant to be run by hand.

fn main() -> std::process::ExitCode {
    let practice = grader::Implementation {
        label: "practice",
        retry_request: |policy, request, sleep, log| {
            practice::retry_request(policy, request, sleep, log)
        },
        lookup_availability: |gateway, item_id| practice::lookup_availability(gateway, item_id),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    grader::harness::serve(practice, &args)
}
