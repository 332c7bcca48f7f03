//! The seam between a test's trials and the system states they alternate
//! between: the runner asks for state `i` before a trial of it; the sweep
//! (`state::sweep::run`) puts the machine there.

/// Why the machine could not be put in a state.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    /// The state in force could not be restored (it stays in the journal
    /// for `engine recover`).
    #[error("could not restore the scheduler: {0}")]
    Restore(#[from] crate::state::change::UndoError),
    /// The next state could not be made.
    #[error(transparent)]
    Apply(#[from] crate::state::StateError),
}

/// The system states a test's trials alternate between: one that changes
/// nothing for a plain run; I/O schedulers and queue settings for an
/// interleaved sweep, so the machine's drift hits every state alike.
pub trait Switch {
    /// How many states.
    fn count(&self) -> usize;
    /// Puts the system in state `i`, before a trial of it.
    fn enter(&mut self, i: usize) -> Result<(), SwitchError>;
    /// The order of the states in the next round.
    fn order(&mut self) -> Vec<usize> {
        (0..self.count()).collect()
    }
}

/// The state the machine is in.
pub struct Unchanged;

impl Switch for Unchanged {
    fn count(&self) -> usize {
        1
    }
    fn enter(&mut self, _: usize) -> Result<(), SwitchError> {
        Ok(())
    }
}

/// The states of `inner` listed in `states`, as states 0, 1, … (the states
/// of a test that still lack it, when some identifiers have it already).
pub struct Subset<'a> {
    pub inner: &'a mut dyn Switch,
    pub states: &'a [usize],
}

impl Switch for Subset<'_> {
    fn count(&self) -> usize {
        self.states.len()
    }
    fn enter(&mut self, i: usize) -> Result<(), SwitchError> {
        self.inner.enter(self.states[i])
    }
    fn order(&mut self) -> Vec<usize> {
        // The inner order, restricted to these states.
        let pos = |s: usize| self.states.iter().position(|&x| x == s);
        self.inner.order().into_iter().filter_map(pos).collect()
    }
}
