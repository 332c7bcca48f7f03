//! The crate plugin authors will use to write WASM workloads and parsers for
//! `engine`. Only the value type the host and guests will share exists so far;
//! the WASM executor lands in a later issue.

/// One measured value a workload reports, with its unit spelled exactly
/// (`MB/s` is 10^6 bytes/s, `MiB/s` is 2^20).
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    pub result: String,
    pub value: f64,
    pub unit: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measurement_keeps_its_unit() {
        let m = Measurement { result: "bw".into(), value: 1.5, unit: "MB/s".into() };
        assert_eq!(m.unit, "MB/s");
        assert_ne!(m, Measurement { unit: "MiB/s".into(), ..m.clone() });
    }
}
