//! The argument forms of `edges.c` (MPI_IN_PLACE in every collective that allows it,
//! Sendrecv_replace with a strided datatype, receives of a derived datatype shorter than
//! posted, zero counts and MPI_PROC_NULL, a Waitany/Testsome array with MPI_REQUEST_NULL and an
//! inactive persistent request) replayed after a fault: bitwise the fault-free results, the
//! same completion order as the first execution, nothing written beyond a message.

use super::{assert_isolated_polling, compile, launch};

/// Runs `edges.c` fault-free and with a fault on rank 2, with `env` in both.
fn edges(tag: &str, env: &[(&str, &str)]) {
    let exe = compile("edges");
    let clean = launch(&exe, &format!("{tag}-clean"), "edges rank", env);
    let mut with_fault = env.to_vec();
    with_fault.push(("FAULT_RANK", "2"));
    let faulty = launch(&exe, &format!("{tag}-fault"), "edges rank", &with_fault);
    for run in [&clean, &faulty] {
        for line in run.lines.values() {
            assert!(
                line.contains(" order 0 beyond 0 "),
                "a re-execution saw another order, or a receive wrote beyond its message: {line}"
            );
        }
    }
    // the Testsome loop polls as often as the messages take
    assert_isolated_polling(&clean, &faulty, 2, 1, &["MPI_Testsome"]);
}

/// In place everywhere MPI allows it, MPI_DATATYPE_NULL where MPI ignores the datatype (which
/// aborted the program inside the wrappers' headers before), derived datatypes, zero counts,
/// MPI_PROC_NULL, and mixed Waitany/Testsome arrays.
#[test]
fn in_place_collectives_derived_types_zero_counts_and_mixed_arrays_replay_exactly() {
    edges("edges", &[]);
}

/// A message that ends in a partial element of the receive's derived datatype (7 doubles into
/// 4 triples): `MPI_Get_count` is `MPI_UNDEFINED`, and the receive is logged as the whole posted
/// count.
#[test]
fn a_message_ending_in_a_partial_element_replays_exactly() {
    edges("edges-partial", &[("PARTIAL", "1")]);
}

/// A re-executed `MPI_Waitall` given the same two receive requests in the other order
/// (`mismatch.c`, `MISMATCH_CALL=waitall`): the logged completions name other posts than the
/// slots hold. A clear mismatch, and neither receive buffer written.
#[test]
fn a_waitall_re_executed_with_its_requests_swapped_is_a_clear_error() {
    let exe = compile("mismatch");
    let run = launch(
        &exe,
        "mismatch-waitall",
        "mismatch rank",
        &[("MISMATCH_CALL", "waitall")],
    );
    assert!(
        run.lines[&1].starts_with("mismatch rank 1 ok: CD replay mismatch"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stats[1]["replay.mismatches"], 1);
}

/// `errhandlers.c`: the application's error handlers behave as MPI defines them under every
/// family, also in a ULFM job, where libcd's own handler sits on `MPI_COMM_WORLD` and the
/// application's are kept aside (`MPI_ERRORS_RETURN` returns the code, a created handler is
/// called with the communicator and the code, `MPI_Comm_get_errhandler` returns the choice).
#[test]
fn the_applications_error_handlers_behave_as_mpi_defines_them() {
    let run = launch(
        &compile("errhandlers"),
        "errhandlers",
        "errhandlers rank",
        &[],
    );
    for rank in 0..super::RANKS {
        assert_eq!(
            run.lines.get(&rank).map(String::as_str),
            Some(format!("errhandlers rank {rank} ok 2").as_str()),
            "{}",
            run.stdout
        );
    }
}
