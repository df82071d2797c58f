//! Randomness: the default CSPRNG and the trait every sampler is generic over.
//!
//! Every sampling method in `dpmech` takes `&mut R` with
//! `R: `[`CryptoRng`]` + ?Sized`, so any cryptographically secure generator plugs in;
//! tests use `rand_chacha::ChaCha20Rng::seed_from_u64` for reproducibility.
//!
//! * [`DefaultRng`] is ChaCha20 keyed from the operating system's entropy source. Its
//!   `Debug` output never shows its state and it is deliberately not `Clone`: a copy
//!   would repeat the same noise.
//! * [`InsecureSimulationRng`] is the only way to feed a non-cryptographic generator
//!   (e.g. a fast PRNG for large simulations) to the samplers. Its name says what it is:
//!   noise from it protects nobody against an adversary who can predict the generator.
//! * The one-call functions ([`crate::laplace`], [`crate::geometric`],
//!   [`crate::gaussian`]) draw from a thread-local [`DefaultRng`] that cannot be seeded
//!   from outside and is re-keyed from the OS in a `fork`ed child before its first
//!   draw, so a child never repeats its parent's noise (not even words the parent had
//!   buffered). The signal is a fork generation counter bumped by a `pthread_atfork`
//!   child handler (the `forkguard` crate; every `fork()` of the C library runs it, and
//!   so do Rust's wrappers of it), read with one atomic load per call instead of a
//!   `getpid` system call. A process copied without fork handlers (a raw `clone`
//!   system call, glibc's `_Fork`) is still caught by the process id, compared every
//!   64 calls (such a child may repeat at most 63 of its parent's one-call releases).
//!   Where `pthread_atfork` fails (out of memory) the process id is compared on every
//!   call, as before. `tests/fork_safety.rs` forks for real.

pub use rand_core;
pub use rand_core::{CryptoRng, Rng, SeedableRng, TryCryptoRng, TryRng};

use crate::Error;
use core::convert::Infallible;
use core::fmt;
use rand_chacha::ChaCha20Rng;

/// ChaCha20 keyed with 256 bits from the operating system.
///
/// ```
/// use dpmech::{DefaultRng, Laplace};
/// let mut rng = DefaultRng::from_os()?;
/// let noisy = Laplace::new(1.0, 0.5)?.release(42.0, &mut rng)?;
/// # let _ = noisy;
/// # Ok::<(), dpmech::Error>(())
/// ```
pub struct DefaultRng(ChaCha20Rng);

impl DefaultRng {
    /// A generator keyed from the operating system's entropy source.
    ///
    /// # Errors
    ///
    /// [`Error::Entropy`] when the operating system's entropy source fails.
    pub fn from_os() -> Result<Self, Error> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| Error::Entropy(e.to_string()))?;
        Ok(Self(ChaCha20Rng::from_seed(seed)))
    }
}

impl fmt::Debug for DefaultRng {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DefaultRng { .. }")
    }
}

impl TryRng for DefaultRng {
    type Error = Infallible;
    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.0.try_next_u32()
    }
    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.0.try_next_u64()
    }
    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.0.try_fill_bytes(dst)
    }
}

impl TryCryptoRng for DefaultRng {}

/// Wraps a generator that is **not** cryptographically secure so that the samplers
/// accept it. For simulations and benchmarks only: noise drawn from a predictable
/// generator gives no privacy against an adversary who can reconstruct its state.
#[derive(Debug)]
pub struct InsecureSimulationRng<R>(pub R);

impl<R: Rng> TryRng for InsecureSimulationRng<R> {
    type Error = Infallible;
    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.0.next_u32())
    }
    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.0.next_u64())
    }
    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.0.fill_bytes(dst);
        Ok(())
    }
}

impl<R: Rng> TryCryptoRng for InsecureSimulationRng<R> {}

/// The one-call generator compares the process id at least once in this many calls,
/// besides the fork handler's signal on every call (see the module docs).
pub(crate) const PID_CHECK_PERIOD: u32 = 64;

/// How a thread's generator learns that its process was forked.
enum ForkSignal {
    /// The `pthread_atfork` generation counter (one atomic load), with the process id
    /// compared every [`PID_CHECK_PERIOD`] calls.
    Handler(forkguard::Guard),
    /// The process id on every call (when the handler could not be registered).
    Pid(forkguard::pid::Guard),
}

/// A thread's generator and what it needs to notice a fork.
struct ThreadRng {
    rng: DefaultRng,
    signal: ForkSignal,
    /// The process id when the generator was keyed.
    pid: u32,
    /// Calls until the next process id comparison.
    until_pid_check: u32,
}

impl ThreadRng {
    /// A generator keyed from the OS, with its fork signal.
    #[cold]
    #[inline(never)]
    fn keyed() -> Result<Self, Error> {
        // The handler is registered (once per process) before the key is drawn, so a
        // fork after keying always bumps the counter this guard compares with.
        let signal = match forkguard::Guard::try_new() {
            Ok(guard) => ForkSignal::Handler(guard),
            Err(_) => ForkSignal::Pid(forkguard::pid::Guard::default()),
        };
        Ok(Self {
            rng: DefaultRng::from_os()?,
            signal,
            pid: std::process::id(),
            until_pid_check: PID_CHECK_PERIOD,
        })
    }

    /// Whether this process may not be the one that keyed the generator.
    #[inline(always)]
    fn forked(&mut self) -> bool {
        match &mut self.signal {
            ForkSignal::Handler(guard) => {
                if guard.detected_fork() {
                    return true;
                }
                self.until_pid_check -= 1;
                if self.until_pid_check == 0 {
                    self.until_pid_check = PID_CHECK_PERIOD;
                    return std::process::id() != self.pid;
                }
                false
            }
            ForkSignal::Pid(guard) => guard.detected_fork(),
        }
    }
}

/// A thread's one-call generator: empty until first used, then keyed from the OS and
/// re-keyed whenever the process was forked since (see the module docs). Held by the
/// one-call functions' thread-local state.
#[derive(Default)]
pub(crate) struct ThreadRngSlot(Option<ThreadRng>);

impl ThreadRngSlot {
    /// An empty slot (keyed on first use).
    pub(crate) const fn new() -> Self {
        Self(None)
    }

    /// The generator, keyed first when this is the first use on this thread or the
    /// process was forked since it was keyed.
    ///
    /// # Errors
    ///
    /// [`Error::Entropy`] when the operating system cannot key it.
    #[inline(always)]
    pub(crate) fn get(&mut self) -> Result<&mut DefaultRng, Error> {
        let fresh = match &mut self.0 {
            Some(state) => state.forked(),
            None => true,
        };
        if fresh {
            self.0 = Some(ThreadRng::keyed()?);
        }
        let state = self.0.as_mut().expect("slot was just filled");
        Ok(&mut state.rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_does_not_print_state() {
        let rng = DefaultRng::from_os().unwrap();
        assert_eq!(format!("{rng:?}"), "DefaultRng { .. }");
    }

    #[test]
    fn os_keyed_generators_differ() {
        let (mut a, mut b) = (DefaultRng::from_os().unwrap(), DefaultRng::from_os().unwrap());
        assert_ne!((a.next_u64(), a.next_u64()), (b.next_u64(), b.next_u64()));
    }

    #[test]
    fn thread_rng_advances() {
        let mut slot = ThreadRngSlot::new();
        let x = slot.get().unwrap().next_u64();
        let y = slot.get().unwrap().next_u64();
        assert_ne!(x, y);
    }
}
