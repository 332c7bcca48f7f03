//! The plugin configuration decoder: a profile's `config:` map (rendered
//! strings) read through the SDK's typed accessors, the `limits:` a
//! profile gives a plugin, and the path check on a plugin's error text.
//! Input lines are `key=value`; every accessor runs on every key.
#![no_main]
use engine_sdk::Config;
use libfuzzer_sys::fuzz_target;
use std::time::Duration;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let config: Config = text.lines().filter_map(|l| l.split_once('=')).collect();
    let keys: Vec<String> = config.iter().map(|(k, _)| k.to_string()).collect();
    let _ = config.only(&["size", "runtime", "mode", "direct"]).map_err(|e| e.to_string());
    for k in &keys {
        let _ = config.text(k);
        let _ = config.required(k);
        let _ = config.parse_or::<u64>(k, 0);
        let _ = config.parse_or::<f64>(k, 0.0);
        let _ = config.parse_or::<i32>(k, 0);
        let _ = config.bool_or(k, false);
        let _ = config.choice_or(k, &["read", "write", "randrw"], "read");
        let _ = config.size_or(k, 4096);
        let _ = config.duration_or(k, Duration::from_secs(1));
    }
    for (_, v) in config.iter() {
        // A size and a duration are read once, by the grammar profiles use.
        let limits = engine::model::profile::PluginLimits { memory: v.parse().ok(), time: v.parse().ok() };
        let _ = engine::plugin::file::limits(&limits);
    }
    let _ = engine::plugin::outside_path(&text);
});
