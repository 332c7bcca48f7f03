//! `engine result …`: saved results.

use super::ui;
use super::{Failure, exit};
use clap::Subcommand;
use engine::home::Home;
use engine::report;
use engine::result::{Store, StoreError};

#[derive(Subcommand, Debug)]
pub enum ResultCommand {
    /// Print a saved result: bars with SE and N per identifier, or the JSON file
    Show {
        /// Result name
        name: String,
        /// Output format
        #[arg(long, default_value = "text", value_parser = clap::builder::PossibleValuesParser::new(report::FORMATS))]
        format: String,
    },
}

pub fn run(cmd: ResultCommand) -> Result<i32, Failure> {
    let store = Store::new(Home::from_env().results());
    match cmd {
        ResultCommand::Show { name, format } => {
            let file = store.load(&name).map_err(|e| {
                let code = match e {
                    StoreError::BadName(..) | StoreError::NotFound(_) => exit::USAGE,
                    _ => exit::ERROR,
                };
                let f = Failure::new(code, e.to_string());
                if code == exit::USAGE { f.hint("list saved results with `engine list results`") } else { f }
            })?;
            let exporter = report::by_name(&format, ui::width()).expect("clap checked the format");
            print!("{}", exporter.export(&file));
            Ok(exit::OK)
        }
    }
}
