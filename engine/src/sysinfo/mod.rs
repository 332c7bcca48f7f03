//! What a result ran on: processor, memory, OS, kernel, and the file system of
//! the target directory. Reads files only; a missing source reads `unknown`.

use crate::result::System;
use indexmap::IndexMap;
use std::path::Path;

pub mod mounts;

const UNKNOWN: &str = "unknown";

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// `AMD EPYC 7601 32-Core Processor (2 Cores / 4 Threads)`.
pub fn processor() -> String {
    let Some(text) = read("/proc/cpuinfo") else { return UNKNOWN.into() };
    let model = text
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim().to_string()))
        .unwrap_or_else(|| UNKNOWN.into());
    let threads = text.lines().filter(|l| l.starts_with("processor")).count();
    let mut cores = std::collections::HashSet::new();
    let (mut phys, mut core) = (String::new(), String::new());
    for l in text.lines() {
        if let Some((k, v)) = l.split_once(':') {
            match k.trim() {
                "physical id" => phys = v.trim().to_string(),
                "core id" => {
                    core = v.trim().to_string();
                    cores.insert((phys.clone(), core.clone()));
                }
                _ => {}
            }
        }
    }
    let _ = core;
    let cores = if cores.is_empty() { threads } else { cores.len() };
    if threads == 0 {
        return model;
    }
    if cores == threads {
        format!("{model} ({cores} Cores)")
    } else {
        format!("{model} ({cores} Cores / {threads} Threads)")
    }
}

/// Total memory, binary units (MemTotal is in KiB).
pub fn memory() -> String {
    read("/proc/meminfo")
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map(|kib| crate::units::format_bytes_binary(kib * 1024))
        .unwrap_or_else(|| UNKNOWN.into())
}

pub fn os() -> String {
    let Some(t) = read("/etc/os-release") else { return UNKNOWN.into() };
    let get = |k: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix('=')).map(|v| v.trim_matches('"').to_string()))
    };
    get("PRETTY_NAME").or_else(|| get("NAME")).unwrap_or_else(|| UNKNOWN.into())
}

pub fn kernel() -> String {
    let release = read("/proc/sys/kernel/osrelease").unwrap_or_else(|| UNKNOWN.into());
    format!("{release} ({})", std::env::consts::ARCH)
}

pub fn hostname() -> String {
    read("/proc/sys/kernel/hostname").unwrap_or_else(|| "localhost".into())
}

/// Captures the system for a new identifier whose tests run in `target`.
pub fn capture(identifier: &str, target: &Path) -> System {
    let mut hardware = IndexMap::new();
    hardware.insert("Processor".into(), processor());
    hardware.insert("Memory".into(), memory());
    let mut software = IndexMap::new();
    software.insert("OS".into(), os());
    software.insert("Kernel".into(), kernel());
    let mut notes = IndexMap::new();
    match mounts::mount_of(target) {
        Some(m) => {
            software.insert("File-System".into(), m.fstype.clone());
            notes.insert(
                "Target".into(),
                format!("{} on {} ({}, {})", target.display(), m.source, m.fstype, m.sorted_options()),
            );
        }
        None => {
            software.insert("File-System".into(), UNKNOWN.into());
        }
    }
    System {
        identifier: identifier.to_string(),
        hardware,
        software,
        notes,
        target_dir: Some(target.display().to_string()),
        started: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        finished: None,
        engine_version: env!("CARGO_PKG_VERSION").to_string(),
    }
}
