//! `--setups N` (Kalibera & Jones): a test set up afresh N times or more,
//! its trials interleaved across the states inside each set-up as without
//! set-ups; after each set-up the two-level rule (`stats::levels`) says
//! whether another is needed and how many trials it gets.

use super::executor::ExecError;
use super::trials::{Job, TrialData, Trials};
use super::verdicts::Measured;
use crate::state::switch::Switch;
use crate::stats::AdaptivePlan;
use crate::stats::adaptive::Stop;
use crate::stats::levels::{Costs, Next, SetupPlan};
use crate::sys::interrupt;
use std::time::{Duration, Instant};

/// The set-ups of one test across the states of `switch`.
pub(super) struct Rounds<'a, 'j> {
    pub job: &'a Job<'j>,
    pub switch: &'a mut dyn Switch,
    pub plan: &'a AdaptivePlan,
    /// The first round's order (its first state had the warm-ups).
    pub order: Vec<usize>,
    /// Rounds so far, across set-ups (each trial's round is recorded).
    pub round: u32,
}

/// Per state: its time so far (set-ups included).
struct State {
    elapsed: Duration,
}

impl Rounds<'_, '_> {
    /// Set-ups until every state's results stop; the first set-up is the
    /// one the test already has (`first` its cost).
    pub(super) fn run(
        &mut self,
        t: &mut Trials<'_>,
        data: &mut [TrialData],
        scheduled: u32,
        first: Duration,
    ) -> Result<(), ExecError> {
        let sp = SetupPlan::new(self.plan, scheduled);
        let baseline = super::trials::baseline(self.job, self.plan, data.len());
        // The comparisons' units are set-ups: two at least, not the plan's
        // least trials.
        let by_setups = AdaptivePlan { min: 2, ..self.plan.clone() };
        let mut states: Vec<State> = (0..data.len()).map(|_| State { elapsed: first }).collect();
        let (mut per, mut setup_time) = (sp.per, first);
        for j in 1u32.. {
            if j > 1 {
                let began = Instant::now();
                t.renew()?;
                let took = began.elapsed();
                setup_time += took;
                states.iter_mut().for_each(|s| s.elapsed += took);
                let first = self.order[0];
                let job = self.job;
                let warm = job.settings.warmup.unwrap_or(job.test.profile.profile.trials.warmup);
                self.enter(t, first)?;
                t.warmups(warm, job.events, &mut data[first])?;
            }
            self.trials(t, data, &mut states, j, per)?;
            let costs = Costs { setup: setup_time.as_secs_f64() / j as f64, trial: 0.0 };
            // Balanced: every state has every set-up and round while any
            // state's results want more.
            let wants: Vec<Option<(u32, Option<String>)>> = (states.iter().zip(data.iter_mut()))
                .map(|(s, d)| decide(&sp, self.plan, d, s.elapsed, costs))
                .collect();
            per = wants.iter().flatten().map(|(p, _)| *p).max().unwrap_or(0);
            if let Some(b) = &baseline {
                // With a baseline the comparisons decide (set-ups are their
                // units): another set-up while one is undecided and the
                // budget can likely settle it.
                let elapsed: Vec<Duration> = states.iter().map(|s| s.elapsed).collect();
                let measured: Vec<Measured<'_>> =
                    data.iter().map(|d| Measured { values: &d.values, setups: &d.setups }).collect();
                let Some(why) = super::verdicts::wants_more(b, &by_setups, &measured, &elapsed, j) else {
                    for (d, w) in data.iter_mut().zip(&wants) {
                        if w.is_some() {
                            d.stops = vec![(Stop::Verdict, None); d.values.len()];
                        }
                    }
                    return Ok(());
                };
                if !why.is_empty() {
                    data.iter_mut().for_each(|d| d.added.push(format!("set-up {}: {why}", j + 1)));
                }
                per = if per == 0 { sp.per } else { per };
                continue;
            }
            if per == 0 {
                return Ok(());
            }
            for (d, w) in data.iter_mut().zip(wants) {
                if let Some((_, Some(why))) = w {
                    d.added.push(why);
                }
            }
        }
        Ok(())
    }

    /// `per` rounds of one trial per state, each trial recorded as set-up `j`.
    fn trials(
        &mut self,
        t: &mut Trials<'_>,
        data: &mut [TrialData],
        states: &mut [State],
        j: u32,
        per: u32,
    ) -> Result<(), ExecError> {
        let events = self.job.events;
        let many = self.switch.count() > 1;
        for _ in 0..per {
            self.round += 1;
            for i in std::mem::take(&mut self.order) {
                if interrupt::requested() {
                    return Err(ExecError::Interrupted);
                }
                let start = Instant::now();
                self.enter(t, i)?;
                if many {
                    events.trial_state(self.round, self.job.names.get(i).copied().unwrap_or(""));
                }
                let d = &mut data[i];
                let k = d.walls.len() as u32 + 1;
                events.trial_started(k, self.job.settings.runs.unwrap_or(self.plan.times), false);
                let wall = t.measured(k, d)?;
                d.setups.push(j);
                if many {
                    d.rounds.push(self.round);
                }
                events.trial_done(k, false, wall.as_secs_f64());
                states[i].elapsed += start.elapsed();
            }
            self.order = self.switch.order();
        }
        Ok(())
    }

    /// Puts the machine in state `i` for its next trial.
    fn enter(&mut self, t: &mut Trials<'_>, i: usize) -> Result<(), ExecError> {
        if self.switch.count() > 1 {
            self.switch.enter(i)?;
            t.logs = self.job.logs[i].to_path_buf();
        }
        t.state = i;
        Ok(())
    }
}

/// After a set-up, for one state: `None` when every result has stopped
/// (each keeps why), else the trials the next set-up should get (the most
/// any result wants) and, when it is an added set-up, why.
fn decide(
    sp: &SetupPlan,
    plan: &AdaptivePlan,
    d: &mut TrialData,
    elapsed: Duration,
    costs: Costs,
) -> Option<(u32, Option<String>)> {
    let walls: f64 = d.walls.iter().map(Duration::as_secs_f64).sum();
    let costs = Costs { trial: walls / d.walls.len().max(1) as f64, ..costs };
    let mut stops: Vec<(Stop, Option<String>)> = Vec::with_capacity(d.values.len());
    let mut more: Option<(u32, Option<String>)> = None;
    for v in &d.values {
        match sp.decide(plan, v, &d.setups, elapsed, costs) {
            Next::Stop(why, w) => stops.push((why, w)),
            Next::More { per, why } => {
                let (p, w) = more.take().unwrap_or((0, None));
                more = Some((p.max(per), w.or(why)));
            }
        }
    }
    match more {
        None => {
            d.stops = stops;
            None
        }
        more => more,
    }
}
