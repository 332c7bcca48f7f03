//! PCI devices by class (graphics, audio, network, the host bridge that names
//! the chipset), named from the pci.ids database when it is installed.

use super::source::{self, Source};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PciDevice {
    pub class: u32,
    pub vendor: u16,
    pub device: u16,
}

fn hex<T: TryFrom<u64>>(s: Option<String>) -> Option<T> {
    let s = s?;
    let v = u64::from_str_radix(s.trim_start_matches("0x"), 16).ok()?;
    T::try_from(v).ok()
}

pub(crate) fn devices(src: &dyn Source) -> Vec<PciDevice> {
    let base = "/sys/bus/pci/devices";
    src.list(base)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|d| {
            let f = |n: &str| source::text(src, &format!("{base}/{d}/{n}"));
            Some(PciDevice { class: hex(f("class"))?, vendor: hex(f("vendor"))?, device: hex(f("device"))? })
        })
        .collect()
}

/// Names for `(vendor, device)` pairs from pci.ids text: `Vendor Device`.
pub(crate) fn names(ids_text: &str, wanted: &[(u16, u16)]) -> Vec<Option<String>> {
    let mut out = vec![None; wanted.len()];
    let mut vendor: Option<(u16, &str)> = None;
    for line in ids_text.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if line.starts_with("C ") {
            break; // device classes follow; no more vendors
        }
        if !line.starts_with('\t') {
            vendor = line.get(..4).and_then(|h| u16::from_str_radix(h, 16).ok()).map(|v| (v, line[4..].trim()));
            if let Some((v, name)) = vendor {
                for (i, (wv, _)) in wanted.iter().enumerate() {
                    if *wv == v && out[i].is_none() {
                        out[i] = Some(format!("{} Device {:04x}", short_vendor(name), wanted[i].1));
                    }
                }
            }
        } else if !line.starts_with("\t\t")
            && let Some((v, vname)) = vendor
            && let Some(d) = line.get(1..5).and_then(|h| u16::from_str_radix(h, 16).ok())
        {
            for (i, (wv, wd)) in wanted.iter().enumerate() {
                if *wv == v && *wd == d {
                    out[i] = Some(format!("{} {}", short_vendor(vname), line[5..].trim()));
                }
            }
        }
    }
    out
}

/// `Intel Corporation` → `Intel`, `Advanced Micro Devices, Inc. [AMD]` → `AMD`.
fn short_vendor(v: &str) -> String {
    if let (Some(a), Some(b)) = (v.rfind('['), v.rfind(']'))
        && a < b
    {
        return v[a + 1..b].split('/').next().unwrap_or(v).to_string();
    }
    let mut s = v.to_string();
    for suffix in [" Corporation", " Corp.", ", Inc.", " Inc.", " Co., Ltd.", " Technology", " Semiconductor"] {
        s = s.replace(suffix, "");
    }
    s.trim().to_string()
}

/// The pci.ids database text, if installed.
pub(crate) fn ids_text(src: &dyn Source) -> Option<String> {
    ["/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "/usr/share/pci.ids"].iter().find_map(|p| src.read(p).ok())
}

/// Device names per category: (graphics, audio, network, chipset).
pub(crate) fn categorize(src: &dyn Source) -> (Vec<String>, Vec<String>, Vec<String>, Option<String>) {
    let devs = devices(src);
    let wanted: Vec<(u16, u16)> = devs.iter().map(|d| (d.vendor, d.device)).collect();
    let named = match ids_text(src) {
        Some(t) => names(&t, &wanted),
        None => vec![None; wanted.len()],
    };
    let label =
        |i: usize| named[i].clone().unwrap_or_else(|| format!("PCI {:04x}:{:04x}", devs[i].vendor, devs[i].device));
    let (mut g, mut a, mut n, mut chipset) = (Vec::new(), Vec::new(), Vec::new(), None);
    for (i, d) in devs.iter().enumerate() {
        match d.class >> 8 {
            0x0300..=0x03ff => g.push(label(i)),
            0x0401 | 0x0403 => a.push(label(i)),
            0x0200..=0x02ff => n.push(label(i)),
            0x0600 if chipset.is_none() => chipset = Some(label(i)),
            _ => {}
        }
    }
    (g, a, n, chipset)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: &str = "# comment\n1af4  Red Hat, Inc.\n\t1041  Virtio 1.0 network device\n\t1042  Virtio 1.0 block device\n8086  Intel Corporation\n\t0d57  Ethernet Controller\n\t\t8086 0001  Sub thing\n1022  Advanced Micro Devices, Inc. [AMD]\n\t1480  Starship/Matisse Root Complex\nC 00  Unclassified device\n";

    #[test]
    fn names_from_pci_ids() {
        let n = names(IDS, &[(0x1af4, 0x1041), (0x8086, 0x0d57), (0x1022, 0x1480), (0x1af4, 0x9999), (0xabcd, 1)]);
        assert_eq!(n[0].as_deref(), Some("Red Hat Virtio 1.0 network device"));
        assert_eq!(n[1].as_deref(), Some("Intel Ethernet Controller"));
        assert_eq!(n[2].as_deref(), Some("AMD Starship/Matisse Root Complex"));
        assert_eq!(n[3].as_deref(), Some("Red Hat Device 9999"));
        assert_eq!(n[4], None);
    }
}
