//! Terminal interaction shared by the displays: width, and the questions a
//! run may ask (option menus, whether to install) when someone can answer.

use engine_model::model::profile::{LoadedProfile, OptionDef};
use engine_sys::text::one_line;
use std::io::{IsTerminal, Write};

/// Columns for reports: the terminal's, else `COLUMNS`, else 80.
pub fn width() -> usize {
    if let Some((terminal_size::Width(w), _)) = terminal_size::terminal_size_of(std::io::stdout()) {
        return (w as usize).clamp(40, 200);
    }
    std::env::var(engine_sys::env::COLUMNS).ok().and_then(|c| c.parse().ok()).unwrap_or(80usize).clamp(40, 400)
}

/// Whether someone can answer questions: standard input and error are a terminal.
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks on the terminal when [`interactive`].
#[derive(Debug, Clone, Copy)]
pub struct Prompts {
    pub interactive: bool,
}

impl Prompts {
    pub fn new() -> Self {
        Prompts { interactive: interactive() }
    }

    /// `question` answered yes (the default) on the terminal; no when nobody can answer.
    pub fn confirm(&self, question: &str) -> bool {
        self.interactive
            && dialoguer::Confirm::new()
                .with_prompt(engine_sys::text::terminal(question))
                .default(true)
                .interact()
                .unwrap_or(false)
    }

    /// A menu of `option`'s entries; none when nobody can answer.
    pub fn choose(&self, profile: &LoadedProfile, option: &OptionDef, defaults: &[usize]) -> Option<Vec<usize>> {
        if !self.interactive {
            return None;
        }
        if option.entries.len() == 1 {
            return Some(vec![0]);
        }
        // The menu draws labels and the prompt itself: each made one inert line first.
        let items: Vec<String> = option.entries.iter().map(|e| one_line(&e.label).into_owned()).collect();
        let checked: Vec<bool> = (0..items.len()).map(|i| defaults.contains(&i)).collect();
        let prompt = format!(
            "{} — {} (space toggles, enter accepts, Esc skips)",
            one_line(&profile.profile.title),
            one_line(&option.name)
        );
        loop {
            match dialoguer::MultiSelect::new().with_prompt(&prompt).items(&items).defaults(&checked).interact_opt() {
                Ok(Some(sel)) if !sel.is_empty() => return Some(sel),
                // Enter with nothing ticked: ask again rather than guess.
                Ok(Some(_)) => errln!(
                    "nothing is ticked: tick at least one entry with space, or press Esc to skip {}",
                    profile.profile.id
                ),
                // Esc (or a terminal that went away): nothing chosen.
                Ok(None) | Err(_) => return Some(Vec::new()),
            }
        }
    }
}

/// `bytes` to `output` (atomically, said on stderr) or to standard output.
pub fn emit(bytes: &[u8], output: Option<&std::path::Path>, what: &str) -> Result<(), super::Failure> {
    match output {
        Some(path) => {
            engine_sys::fs::write_atomic(path, bytes)
                .map_err(|e| super::Failure::error(format!("cannot write {}: {e}", path.display())))?;
            errln!("wrote {}", path.display());
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(|e| super::Failure::error(format!("cannot write {what}: {e}")))?;
        }
    }
    Ok(())
}
