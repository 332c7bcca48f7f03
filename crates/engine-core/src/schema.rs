//! JSON Schemas (draft-07, what yaml-language-server reads) generated from the
//! serde types; the committed copies in `schemas/` are checked against these.

use crate::model::schema_json;

/// `(file name, content)` of every schema in `schemas/`.
pub fn all() -> Vec<(&'static str, String)> {
    vec![
        (
            "profile.schema.json",
            schema_json::<crate::model::profile::Profile>("https://engine.invalid/schemas/profile.schema.json"),
        ),
        (
            "suite.schema.json",
            schema_json::<crate::model::profile::Suite>("https://engine.invalid/schemas/suite.schema.json"),
        ),
        ("result.schema.json", schema_json::<crate::model::result::ResultFile>(crate::model::result::SCHEMA_ID)),
        (
            "progress.schema.json",
            schema_json::<crate::events::wire::EventLine>("https://engine.invalid/schemas/progress.schema.json"),
        ),
        (
            "monitor.schema.json",
            schema_json::<crate::model::series::Series>("https://engine.invalid/schemas/monitor.schema.json"),
        ),
        (
            "repository-index.schema.json",
            schema_json::<crate::repo::index::Index>("https://engine.invalid/schemas/repository-index.schema.json"),
        ),
    ]
}

/// Writes every schema into `dir` (`ENGINE_HOME/schemas`), replacing copies
/// an older engine wrote, so an editor line can point at a file that is
/// there and matches this engine; returns the profile schema's path.
pub fn install(dir: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)?;
    for (name, text) in all() {
        let p = dir.join(name);
        if std::fs::read_to_string(&p).ok().as_deref() != Some(text.as_str()) {
            crate::sys::fs::write_atomic(&p, text.as_bytes())?;
        }
    }
    Ok(dir.join("profile.schema.json"))
}
