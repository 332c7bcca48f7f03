//! Processor: model, sockets, cores, threads, frequency, microcode, and the
//! frequency-scaling state that changes results (driver, governor, boost, EPP).

use super::source::{self, Source};
use crate::model::system::Processor;
use std::collections::HashSet;

/// Trims vendor noise the way result viewers show models
/// (`AMD EPYC 7601 32-Core Processor` → `AMD EPYC 7601 32-Core`).
fn tidy_model(m: &str) -> String {
    let mut s = m.replace("(R)", "").replace("(TM)", "").replace("(tm)", "").replace(" CPU ", " ");
    for suffix in [" Processor", " processor"] {
        if let Some(x) = s.strip_suffix(suffix) {
            s = x.to_string();
        }
    }
    if let Some(i) = s.find(" @ ") {
        s.truncate(i);
    }
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(crate) fn probe(src: &dyn Source) -> Processor {
    let mut p = Processor::default();
    if let Ok(text) = src.read("/proc/cpuinfo") {
        let mut threads = 0;
        let mut cores = HashSet::new();
        let mut sockets = HashSet::new();
        let mut phys = String::new();
        for line in text.lines() {
            let Some((k, v)) = line.split_once(':') else { continue };
            let v = v.trim();
            match k.trim() {
                "processor" => threads += 1,
                "model name" if p.model.is_none() && !v.is_empty() => p.model = Some(tidy_model(v)),
                "microcode" if p.microcode.is_none() && !v.is_empty() => p.microcode = Some(v.to_string()),
                "physical id" => {
                    phys = v.to_string();
                    sockets.insert(phys.clone());
                }
                "core id" => {
                    cores.insert((phys.clone(), v.to_string()));
                }
                _ => {}
            }
        }
        if threads > 0 {
            p.threads = Some(threads);
            p.cores = Some(if cores.is_empty() { threads } else { cores.len() });
            p.sockets = Some(sockets.len().max(1));
        }
    }
    let cf = "/sys/devices/system/cpu/cpu0/cpufreq";
    p.max_mhz = source::number::<u64>(src, &format!("{cf}/cpuinfo_max_freq")).map(|khz| khz / 1000);
    p.scaling_driver = source::text(src, &format!("{cf}/scaling_driver"));
    p.governor = source::text(src, &format!("{cf}/scaling_governor"));
    p.energy_preference = source::text(src, &format!("{cf}/energy_performance_preference"));
    p.boost = source::number::<u8>(src, "/sys/devices/system/cpu/cpufreq/boost")
        .map(|b| b == 1)
        .or_else(|| source::number::<u8>(src, "/sys/devices/system/cpu/intel_pstate/no_turbo").map(|n| n == 0));
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_tidied() {
        assert_eq!(tidy_model("AMD EPYC 7601 32-Core Processor"), "AMD EPYC 7601 32-Core");
        assert_eq!(tidy_model("Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz"), "Intel Core i7-8700");
    }
}
