//! The files a sample reads, opened once: each read is one `pread` at
//! offset 0 (procfs and sysfs fill the file afresh), into one buffer, parsed
//! in place — a sample allocates nothing.
//!
//! A row of raw counters is `u64`s in a fixed layout ([`Layout`]); a value
//! the machine does not expose is [`NA`].

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// A value this machine does not expose (no PSI, no cpufreq, no hwmon).
pub(crate) const NA: u64 = u64::MAX;

/// `/proc/stat`'s first line: user nice system idle iowait irq softirq steal (ticks).
pub(crate) const CPU: usize = 8;
/// `/proc/meminfo`: Dirty, Writeback, Cached (kB).
pub(crate) const MEM: usize = 3;
/// `/proc/pressure/{io,cpu,memory}`: some and full `total=` (µs) of each.
pub(crate) const PSI: usize = 6;
/// `/sys/class/block/X/stat`: reads, read sectors, read ticks, writes, write
/// sectors, write ticks, in flight, io ticks, time in queue (ms).
pub(crate) const DEV: usize = 9;

/// Where each value sits in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub devices: usize,
}

impl Layout {
    /// Nanoseconds since the recording started.
    pub(crate) const TIME: usize = 0;
    pub(crate) const CPU: usize = 1;
    pub(crate) const MEM: usize = Self::CPU + CPU;
    pub(crate) const PSI: usize = Self::MEM + MEM;
    /// Sum of the CPUs' current frequencies (kHz), then how many.
    pub(crate) const FREQ: usize = Self::PSI + PSI;
    /// Hottest temperature sensor (m°C).
    pub(crate) const TEMP: usize = Self::FREQ + 2;
    pub(crate) const DEVICES: usize = Self::TEMP + 1;

    pub(crate) fn width(self) -> usize {
        Self::DEVICES + DEV * self.devices
    }

    pub(crate) fn device(self, i: usize) -> usize {
        Self::DEVICES + DEV * i
    }
}

/// The open files of one recording.
pub(crate) struct Probes {
    stat: Option<File>,
    meminfo: Option<File>,
    /// io, cpu, memory: the system's, or the test's cgroup's when given.
    psi: [Option<File>; 3],
    freqs: Vec<File>,
    temps: Vec<File>,
    devices: Vec<(String, File)>,
    buf: Vec<u8>,
    /// What this machine does not expose, said once.
    pub unavailable: Vec<String>,
    /// CPUs `/proc/stat` counts (its shares are of these, whatever this
    /// process's affinity or cgroup quota).
    pub cpus: usize,
}

impl Probes {
    /// Opens the system's files and `/sys/class/block/NAME/stat` of each of
    /// `devices`; `root` is `/` (a test passes a made-up tree).
    pub(crate) fn open(root: &Path, devices: &[String]) -> Probes {
        let mut unavailable = Vec::new();
        let mut open = |rel: &str, what: &str| match File::open(root.join(rel)) {
            Ok(f) => Some(f),
            Err(e) => {
                unavailable.push(format!("{what}: /{rel}: {e}"));
                None
            }
        };
        let stat = open("proc/stat", "CPU time");
        let meminfo = open("proc/meminfo", "memory");
        let psi = [
            open("proc/pressure/io", "I/O pressure"),
            open("proc/pressure/cpu", "CPU pressure"),
            open("proc/pressure/memory", "memory pressure"),
        ];
        let devices: Vec<(String, File)> = devices
            .iter()
            .filter_map(|d| open(&format!("sys/class/block/{d}/stat"), &format!("device {d}")).map(|f| (d.clone(), f)))
            .collect();
        let freqs = globbed(root, "sys/devices/system/cpu", "cpu", "cpufreq/scaling_cur_freq");
        if freqs.is_empty() {
            unavailable.push("CPU frequency: no cpufreq on this machine".into());
        }
        let temps = hwmon_temps(root);
        if temps.is_empty() {
            unavailable.push("temperature: no hwmon sensor on this machine".into());
        }
        let cpus = std::fs::read_to_string(root.join("proc/stat"))
            .map(|t| {
                t.lines()
                    .filter(|l| l.strip_prefix("cpu").is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit())))
                    .count()
            })
            .unwrap_or(0);
        let cpus = if cpus > 0 { cpus } else { std::thread::available_parallelism().map_or(1, |n| n.get()) };
        Probes { stat, meminfo, psi, freqs, temps, devices, buf: vec![0; 4096], unavailable, cpus }
    }

    /// The devices read, in row order.
    pub(crate) fn device_names(&self) -> Vec<String> {
        self.devices.iter().map(|(n, _)| n.clone()).collect()
    }

    pub(crate) fn layout(&self) -> Layout {
        Layout { devices: self.devices.len() }
    }

    /// Fills `row` (of [`Layout::width`]) with the counters now; `TIME` is
    /// left to the caller.
    pub(crate) fn read(&mut self, row: &mut [u64]) {
        let buf = &mut self.buf;
        let cpu = &mut row[Layout::CPU..Layout::CPU + CPU];
        match read_into(self.stat.as_ref(), buf) {
            Some(text) => {
                let line = text.split(|&b| b == b'\n').next().unwrap_or(&[]);
                fill_numbers(line, cpu);
            }
            None => cpu.fill(NA),
        }
        let mem = &mut row[Layout::MEM..Layout::MEM + MEM];
        match read_into(self.meminfo.as_ref(), buf) {
            Some(text) => {
                for (slot, key) in mem.iter_mut().zip([&b"Dirty:"[..], b"Writeback:", b"Cached:"]) {
                    *slot = keyed(text, key).unwrap_or(NA);
                }
            }
            None => mem.fill(NA),
        }
        for (k, f) in self.psi.iter().enumerate() {
            let at = Layout::PSI + 2 * k;
            let (some, full) = read_into(f.as_ref(), buf).map(pressure).unwrap_or((NA, NA));
            row[at] = some;
            row[at + 1] = full;
        }
        let (mut sum, mut n) = (0u64, 0u64);
        for f in &self.freqs {
            if let Some(v) = read_into(Some(f), buf).and_then(first_number) {
                sum += v;
                n += 1;
            }
        }
        row[Layout::FREQ] = if n == 0 { NA } else { sum };
        row[Layout::FREQ + 1] = n;
        let hottest = self.temps.iter().filter_map(|f| read_into(Some(f), buf).and_then(first_number)).max();
        row[Layout::TEMP] = hottest.unwrap_or(NA);
        for (i, (_, f)) in self.devices.iter().enumerate() {
            let at = Layout { devices: 0 }.device(i);
            let dev = &mut row[at..at + DEV];
            match read_into(Some(f), buf) {
                Some(text) => device_stat(text, dev),
                None => dev.fill(NA),
            }
        }
    }
}

/// Reads `f` from offset 0 into `buf`: the bytes read, or `None`.
fn read_into<'b>(f: Option<&File>, buf: &'b mut [u8]) -> Option<&'b [u8]> {
    let n = f?.read_at(buf, 0).ok()?;
    Some(&buf[..n])
}

/// The numbers of `text` in order, skipping words (`cpu  4705 356 …`), into `out`.
pub(crate) fn fill_numbers(text: &[u8], out: &mut [u64]) {
    let mut it = text.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty()).filter_map(number);
    for slot in out.iter_mut() {
        *slot = it.next().unwrap_or(NA);
    }
}

/// A word of ASCII digits as a number.
fn number(w: &[u8]) -> Option<u64> {
    if w.is_empty() || !w.iter().all(u8::is_ascii_digit) {
        return None;
    }
    w.iter().try_fold(0u64, |acc, &d| acc.checked_mul(10)?.checked_add(u64::from(d - b'0')))
}

/// The first number of a one-value file (`2400000\n`).
fn first_number(text: &[u8]) -> Option<u64> {
    number(text.split(|b| b.is_ascii_whitespace()).next()?)
}

/// The number after `key` at the start of a line (`Dirty:   1234 kB`).
pub(crate) fn keyed(text: &[u8], key: &[u8]) -> Option<u64> {
    text.split(|&b| b == b'\n')
        .find(|l| l.starts_with(key))
        .and_then(|l| l[key.len()..].split(|b| b.is_ascii_whitespace()).find(|w| !w.is_empty()).and_then(number))
}

/// `some … total=N` and `full … total=N` of a PSI file; [`NA`] for a line
/// the kernel does not write (`full` of CPU pressure before 5.13).
pub(crate) fn pressure(text: &[u8]) -> (u64, u64) {
    let (some, full) = crate::sys::psi::totals(text);
    (some.unwrap_or(NA), full.unwrap_or(NA))
}

/// The nine values a row keeps of a block device's `stat` file.
pub(crate) fn device_stat(text: &[u8], out: &mut [u64]) {
    let mut all = [NA; 11];
    fill_numbers(text, &mut all);
    // reads, sectors, ticks (0, 2, 3); writes (4, 6, 7); in flight, io ticks, time in queue (8, 9, 10).
    for (slot, i) in out.iter_mut().zip([0, 2, 3, 4, 6, 7, 8, 9, 10]) {
        *slot = all[i];
    }
}

/// `root/dir/PREFIX*/leaf` for every entry whose name is the prefix and digits.
fn globbed(root: &Path, dir: &str, prefix: &str, leaf: &str) -> Vec<File> {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.strip_prefix(prefix).is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())))
        .collect();
    names.sort();
    names.iter().filter_map(|n| File::open(root.join(dir).join(n).join(leaf)).ok()).collect()
}

/// Every `temp*_input` of every hwmon device.
fn hwmon_temps(root: &Path) -> Vec<File> {
    let Ok(entries) = std::fs::read_dir(root.join("sys/class/hwmon")) else { return Vec::new() };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let Ok(inner) = std::fs::read_dir(e.path()) else { continue };
        for f in inner.flatten() {
            let name = f.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("temp")
                && name.ends_with("_input")
                && let Ok(file) = File::open(f.path())
            {
                out.push(file);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_and_sys_files_parse_in_place() {
        let mut cpu = [0; CPU];
        fill_numbers(b"cpu  4705 356 584 3699176 23060 0 277 7 0 0", &mut cpu);
        assert_eq!(cpu, [4705, 356, 584, 3699176, 23060, 0, 277, 7]);
        let mut short = [0; CPU];
        fill_numbers(b"cpu 1 2 3 4", &mut short);
        assert_eq!(short[4..], [NA; 4], "an old kernel's missing columns are not available");
        let meminfo = b"MemTotal:  100 kB\nCached:    2048 kB\nDirty:   12 kB\nWriteback:  0 kB\n";
        assert_eq!(
            (keyed(meminfo, b"Dirty:"), keyed(meminfo, b"Writeback:"), keyed(meminfo, b"Cached:")),
            (Some(12), Some(0), Some(2048))
        );
        assert_eq!(keyed(meminfo, b"SwapCached:"), None);
        let psi = b"some avg10=0.00 avg60=0.26 avg300=1.15 total=2366855412\nfull avg10=0.00 avg60=0.20 avg300=0.81 total=1401903424\n";
        assert_eq!(pressure(psi), (2366855412, 1401903424));
        assert_eq!(pressure(b"some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"), (5, NA));
        let mut dev = [0; DEV];
        device_stat(
            b"    4245      129   402762     2001    11087     6420   763906    26853        0    19424    30080",
            &mut dev,
        );
        assert_eq!(dev, [4245, 402762, 2001, 11087, 763906, 26853, 0, 19424, 30080]);
        assert_eq!(number(b"99999999999999999999999"), None, "an overflowing counter is not a number");
    }

    /// A machine without PSI, cpufreq or hwmon: those are not available,
    /// never an error, and the row says so with [`NA`].
    #[test]
    fn a_bare_machine_reads_what_it_has() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("proc")).unwrap();
        std::fs::write(root.path().join("proc/stat"), "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n").unwrap();
        std::fs::create_dir_all(root.path().join("sys/class/block/vdz")).unwrap();
        std::fs::write(root.path().join("sys/class/block/vdz/stat"), "1 0 8 3 4 0 16 5 0 7 9\n").unwrap();
        let mut p = Probes::open(root.path(), &["vdz".to_string(), "gone".to_string()]);
        assert_eq!(p.device_names(), ["vdz"]);
        assert_eq!(p.cpus, 1, "the cpuN lines of /proc/stat");
        let mut row = vec![0; p.layout().width()];
        p.read(&mut row);
        assert_eq!(row[Layout::CPU..Layout::CPU + CPU], [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(row[Layout::MEM..Layout::FREQ], [NA; MEM + PSI]);
        assert_eq!((row[Layout::FREQ], row[Layout::TEMP]), (NA, NA));
        assert_eq!(row[Layout::DEVICES..], [1, 8, 3, 4, 16, 5, 0, 7, 9]);
        let said = p.unavailable.join("\n");
        for what in ["I/O pressure", "memory:", "CPU frequency", "temperature", "device gone"] {
            assert!(said.contains(what), "{what}: {said}");
        }
    }
}
