//! The cells of this process: the generic cell rate algorithm, one
//! theoretical arrival time (TAT) per key.

use super::Rate;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Keys kept at most. At the bound, a cell whose TAT has passed holds
/// nothing (a new cell is the same), so those are dropped first; then, if
/// that left less than a tenth of the bound free, the cells that owe the
/// fewest calls go until a tenth is, with every cell that owes as few as
/// the last of them (all of them, when none owes a call). A dropped cell's
/// caller gets its burst back: the calls it owes, at its own rate. A caller
/// held back past a burst of more than one owes calls, and new keys,
/// however many, owe none: they do not free it. Each sweep frees a tenth,
/// so the next tenth of new keys are inserted without one: a stream of new
/// keys costs a few steps a key, not a scan of the table each.
const MAX_CELLS: usize = 100_000;

/// Spends one call of a rate per key, in memory.
pub(crate) struct Cells {
    start: Instant,
    /// Each key's TAT, and the interval of the rate it is spent at.
    cells: Mutex<HashMap<Box<str>, (u64, u64)>>,
    max: usize,
}

impl Cells {
    pub(crate) fn new() -> Self {
        Self::bounded(MAX_CELLS)
    }

    fn bounded(max: usize) -> Self {
        Cells {
            start: Instant::now(),
            cells: Mutex::new(HashMap::new()),
            max,
        }
    }

    fn now_us(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// `None`: admitted (and spent); `Some(wait)`: refused, retry after `wait`.
    pub(crate) fn spend(&self, key: &str, rate: Rate) -> Option<Duration> {
        let now = self.now_us();
        let mut cells = self.cells.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let tat = cells.get(key).map_or(now, |(tat, _)| *tat).max(now);
        if let Some(wait) = gcra(now, tat, rate) {
            return Some(wait);
        }
        let interval = rate.interval_us();
        let next = (tat.saturating_add(interval), interval);
        if let Some(cell) = cells.get_mut(key) {
            *cell = next;
        } else {
            if cells.len() >= self.max {
                cells.retain(|_, (tat, _)| *tat > now);
                let room = self.max - self.max.div_ceil(10);
                if cells.len() > room {
                    // The calls a cell owes: what dropping it would give back.
                    let owed = |(tat, interval): &(u64, u64)| tat.saturating_sub(now) / (*interval).max(1);
                    let mut debts: Vec<u64> = cells.values().map(owed).collect();
                    // Those that owe no more than the one at `excess` go (and
                    // any that owe as little): at least the excess.
                    let excess = cells.len() - room - 1;
                    let (_, least, _) = debts.select_nth_unstable(excess);
                    let least = *least;
                    cells.retain(|_, cell| owed(cell) > least);
                }
            }
            cells.insert(key.into(), next);
        }
        None
    }
}

impl Cells {
    /// Gives back one call [`spend`](Self::spend) took from `key`'s cell.
    pub(crate) fn give_back(&self, key: &str, rate: Rate) {
        let mut cells = self.cells.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((tat, _)) = cells.get_mut(key) {
            *tat = tat.saturating_sub(rate.interval_us());
        }
    }
}

/// One step of GCRA at `now` for a cell at `tat` (not before `now`): how
/// long to wait, or `None` to admit.
fn gcra(now: u64, tat: u64, rate: Rate) -> Option<Duration> {
    let allowed_from = tat.saturating_sub(rate.tolerance_us());
    (now < allowed_from).then(|| Duration::from_micros(allowed_from.saturating_sub(now)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_the_steady_rate() {
        let cells = Cells::new();
        let rate: Rate = "5/s".parse().unwrap();
        for i in 0..5 {
            assert_eq!(cells.spend("a", rate), None, "call {i} of the burst");
        }
        let wait = cells.spend("a", rate).expect("the sixth is refused");
        assert!(
            wait <= Duration::from_millis(200) && wait > Duration::from_millis(150),
            "{wait:?}"
        );
        // Another caller has a cell of its own.
        assert_eq!(cells.spend("b", rate), None);
        std::thread::sleep(wait);
        assert_eq!(cells.spend("a", rate), None, "admitted again after the wait");
    }

    #[test]
    fn new_keys_past_the_bound_do_not_free_a_caller_held_back() {
        let cells = Cells::bounded(1_000);
        let rate: Rate = "1/min burst 5".parse().unwrap();
        while cells.spend("held", rate).is_none() {}
        for i in 0..5_000 {
            assert_eq!(cells.spend(&format!("new {i}"), rate), None);
        }
        assert!(cells.cells.lock().unwrap().len() <= 1_000);
        assert!(cells.spend("held", rate).is_some(), "the held caller is still held");
        // New keys at a slower rate (their TAT further ahead, though they owe
        // one call each) do not free a caller that owes many at a fast one.
        let cells = Cells::bounded(1_000);
        let fast: Rate = "1/s burst 50".parse().unwrap();
        while cells.spend("held", fast).is_none() {}
        let slow: Rate = "1/min burst 1".parse().unwrap();
        for i in 0..5_000 {
            assert_eq!(cells.spend(&format!("new {i}"), slow), None);
        }
        assert!(cells.spend("held", fast).is_some(), "the held caller is still held");
    }

    #[test]
    fn a_sweep_at_the_bound_frees_a_tenth_even_when_few_cells_have_expired() {
        let cells = Cells::bounded(1_000);
        // One cell that expires at once (its TAT a microsecond ahead), the
        // rest owing from 0 to 9 calls for minutes.
        let quick = Rate::new(1_000_000, Duration::from_secs(1)).unwrap();
        let slow: Rate = "1/min burst 10".parse().unwrap();
        assert_eq!(cells.spend("quick", quick), None);
        for i in 0..999 {
            for _ in 0..=i % 10 {
                assert_eq!(cells.spend(&format!("live {i}"), slow), None);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(cells.spend("new 0", slow), None);
        let kept = |cells: &Cells| cells.cells.lock().unwrap().len();
        // Dropping the expired cell alone would leave the table full, and the
        // next new key would sweep it again; the cells that owe least go.
        assert_eq!(kept(&cells), 900, "the 100 that owe none went, and the new key came in");
        assert!(
            cells.spend("live 9", slow).is_some(),
            "a caller that owes many is still held"
        );
        for i in 1..=99 {
            assert_eq!(cells.spend(&format!("new {i}"), slow), None);
        }
        assert_eq!(kept(&cells), 999, "no sweep in the next tenth of new keys");
    }
}
