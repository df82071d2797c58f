//! A forked child never repeats its parent's noise through the one-call functions, not
//! even the words the parent's thread generator had already buffered: the parent keys
//! its thread generator and draws once, then forks; parent and child each draw the
//! same sequence of one-call releases, and the child's must differ from the parent's.
//!
//! Negative control (run by hand when the fork handler replaced the per-call `getpid`):
//! with the handler's signal ignored, leaving only the process id compared every 64
//! calls, both tests fail — the child repeated 8 of its parent's 8 `laplace` releases
//! (both continue the same buffered ChaCha20 stream).

#![cfg(unix)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

/// Eight releases of each one-call function, as their exact bits.
fn draws() -> Vec<u64> {
    let mut out = Vec::new();
    for i in 0..8 {
        out.push(dpmech::laplace(0.0, 1.0, 0.5).unwrap().to_bits());
        out.push(dpmech::geometric(0, 1, 0.01).unwrap() as u64);
        out.push(dpmech::gaussian(f64::from(i), 1.0, 0.5, 1e-6).unwrap().to_bits());
    }
    out
}

/// One fork: the child sends its draws through a socket and exits; returns them with
/// the parent's own draws after the fork.
fn fork_and_draw() -> (Vec<u64>, Vec<u64>) {
    let (mut parent_end, mut child_end) = UnixStream::pair().unwrap();
    match fork::fork().unwrap() {
        fork::Fork::Child => {
            drop(parent_end);
            let bytes: Vec<u8> = draws().iter().flat_map(|d| d.to_le_bytes()).collect();
            let code = i32::from(child_end.write_all(&bytes).is_err());
            drop(child_end);
            std::process::exit(code);
        }
        fork::Fork::Parent(pid) => {
            drop(child_end);
            let mine = draws();
            let mut bytes = Vec::new();
            parent_end.read_to_end(&mut bytes).unwrap();
            let status = fork::waitpid(pid).unwrap();
            assert_eq!(status, 0, "the child failed");
            let child = bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            (mine, child)
        }
    }
}

#[test]
fn forked_children_never_repeat_the_parents_noise() {
    // Key this thread's generators and leave words buffered in it.
    let _ = draws();
    for round in 0..3 {
        let (parent, child) = fork_and_draw();
        assert_eq!(parent.len(), child.len());
        // Each laplace release is a 64-bit float on a grid far finer than its noise:
        // equal bits by chance has negligible probability; the check is on the whole
        // sequence, element by element for the floats.
        let same = parent
            .iter()
            .zip(&child)
            .step_by(3)
            .filter(|(a, b)| a == b)
            .count();
        assert_eq!(
            same, 0,
            "round {round}: the child repeated {same} of its parent's laplace releases"
        );
        assert_ne!(
            parent, child,
            "round {round}: the child repeated its parent's noise"
        );
    }
}

/// Nested forks: a grandchild differs from its parent (the child) too — the counter is
/// bumped again in every generation.
#[test]
fn grandchildren_never_repeat_their_parents_noise() {
    let _ = draws();
    let (mut parent_end, mut child_end) = UnixStream::pair().unwrap();
    match fork::fork().unwrap() {
        fork::Fork::Child => {
            drop(parent_end);
            let _ = draws();
            let (child, grandchild) = fork_and_draw();
            let ok = child.iter().zip(&grandchild).step_by(3).all(|(a, b)| a != b);
            let code = i32::from(!ok || child_end.write_all(&[u8::from(ok)]).is_err());
            std::process::exit(code);
        }
        fork::Fork::Parent(pid) => {
            drop(child_end);
            let mut verdict = Vec::new();
            parent_end.read_to_end(&mut verdict).unwrap();
            assert_eq!(fork::waitpid(pid).unwrap(), 0, "the child failed");
            assert_eq!(verdict, [1], "a grandchild repeated its parent's noise");
        }
    }
}
