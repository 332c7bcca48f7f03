//! Terminal interaction: progress line, option menus, width.

use engine::expand::Chooser;
use engine::profile::LoadedProfile;
use engine::profile::model::OptionDef;
use engine::runner::Progress;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

/// Columns for reports: the terminal's, else `COLUMNS`, else 80.
pub fn width() -> usize {
    if let Some((terminal_size::Width(w), _)) = terminal_size::terminal_size_of(std::io::stdout()) {
        return (w as usize).clamp(40, 200);
    }
    std::env::var(engine::env::COLUMNS).ok().and_then(|c| c.parse().ok()).unwrap_or(80usize).clamp(40, 400)
}

/// Whether menus may be shown.
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// `trial 2 of 3` with the elapsed time of the test, on stderr, only on a TTY.
pub struct Spinner {
    bar: Mutex<Option<ProgressBar>>,
    prefix: String,
}

impl Spinner {
    pub fn new(prefix: String) -> Self {
        Spinner { bar: Mutex::new(None), prefix }
    }
}

impl Progress for Spinner {
    fn trial(&self, label: &str, k: u32, planned: u32) {
        let mut g = self.bar.lock().unwrap();
        let bar = g.get_or_insert_with(|| {
            let b = ProgressBar::new_spinner();
            b.set_style(ProgressStyle::with_template("{spinner} {prefix} {wide_msg} {elapsed_precise}").unwrap());
            b.set_prefix(self.prefix.clone());
            b.enable_steady_tick(Duration::from_millis(120));
            b
        });
        let extra = if k > planned { " (added)" } else { "" };
        bar.set_message(format!("{label} — trial {k} of {}{extra}", planned.max(k)));
    }

    fn done(&self) {
        if let Some(b) = self.bar.lock().unwrap().take() {
            b.finish_and_clear();
        }
    }
}

/// Menus on a TTY: every option the command line and suite left open.
pub struct Menu;

impl Chooser for Menu {
    fn choose(&self, profile: &LoadedProfile, option: &OptionDef, defaults: &[usize]) -> Vec<usize> {
        if option.entries.len() == 1 {
            return vec![0];
        }
        let items: Vec<&str> = option.entries.iter().map(|e| e.label.as_str()).collect();
        let checked: Vec<bool> = (0..items.len()).map(|i| defaults.contains(&i)).collect();
        let prompt = format!("{} — {} (space toggles, enter accepts)", profile.profile.title, option.name);
        match dialoguer::MultiSelect::new().with_prompt(prompt).items(&items).defaults(&checked).interact_opt() {
            Ok(Some(sel)) if !sel.is_empty() => sel,
            _ => defaults.to_vec(),
        }
    }
}
