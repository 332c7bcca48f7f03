//! Terminal interaction: progress line, option menus, width.

use engine::expand::Chooser;
use engine::profile::LoadedProfile;
use engine::profile::model::OptionDef;
use std::io::IsTerminal;

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

/// Menus on a TTY: every option the command line and suite left open.
pub struct Menu;

impl Chooser for Menu {
    fn choose(&self, profile: &LoadedProfile, option: &OptionDef, defaults: &[usize]) -> Vec<usize> {
        if option.entries.len() == 1 {
            return vec![0];
        }
        let items: Vec<&str> = option.entries.iter().map(|e| e.label.as_str()).collect();
        let checked: Vec<bool> = (0..items.len()).map(|i| defaults.contains(&i)).collect();
        let prompt = format!("{} — {} (space toggles, enter accepts, Esc skips)", profile.profile.title, option.name);
        loop {
            match dialoguer::MultiSelect::new().with_prompt(&prompt).items(&items).defaults(&checked).interact_opt() {
                Ok(Some(sel)) if !sel.is_empty() => return sel,
                // Enter with nothing ticked: ask again rather than guess.
                Ok(Some(_)) => eprintln!(
                    "nothing is ticked: tick at least one entry with space, or press Esc to skip {}",
                    profile.profile.id
                ),
                // Esc (or a terminal that went away): nothing chosen.
                Ok(None) | Err(_) => return Vec::new(),
            }
        }
    }
}
