//! The one backoff of what askpane starts again after it ended (the Matrix bridge, a remote
//! link's ssh): 1 s, doubling to 30 s, back to 1 s once a run held. Pure: the callers decide
//! what "held" means and when to give up.

use std::time::Duration;

/// The wait before each next try: [`Backoff::FIRST`], doubling with each failure in a row up to
/// [`Backoff::LONGEST`]; [`Backoff::held`] starts it over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: Self::FIRST }
    }
}

impl Backoff {
    /// The first wait.
    pub const FIRST: Duration = Duration::from_secs(1);
    /// The longest wait: long enough not to hammer what keeps failing, short enough that a
    /// person who fixed it does not wait long.
    pub const LONGEST: Duration = Duration::from_secs(30);

    /// Another failure: the wait before the next try; the one after it is twice as long (at
    /// most [`Backoff::LONGEST`]).
    pub fn failed(&mut self) -> Duration {
        let wait = self.next;
        self.next = self.next.saturating_mul(2).min(Self::LONGEST);
        wait
    }

    /// The last run held: the next failure waits the shortest again.
    pub fn held(&mut self) {
        self.next = Self::FIRST;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_one_second_to_thirty_and_stays_there() {
        let mut backoff = Backoff::default();
        let waits: Vec<u64> = (0..8).map(|_| backoff.failed().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
    }

    #[test]
    fn a_run_that_held_starts_it_over() {
        let mut backoff = Backoff::default();
        for _ in 0..3 {
            backoff.failed();
        }
        backoff.held();
        assert_eq!(backoff.failed(), Backoff::FIRST);
        assert_eq!(backoff.failed(), Duration::from_secs(2));
    }

    #[test]
    fn a_thousand_failures_never_overflow() {
        let mut backoff = Backoff::default();
        for _ in 0..1000 {
            assert!(backoff.failed() <= Backoff::LONGEST);
        }
    }
}
