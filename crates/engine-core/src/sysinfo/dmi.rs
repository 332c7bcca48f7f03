//! Motherboard and BIOS from `/sys/class/dmi/id`, and memory devices (type 17)
//! from the raw SMBIOS table `/sys/firmware/dmi/tables/DMI` (readable by root).

use super::source::{self, Source};
use crate::model::system::{Board, Dimm};

/// DMI strings that mean "nobody filled this in".
fn real(s: Option<String>) -> Option<String> {
    s.filter(|v| {
        let l = v.to_ascii_lowercase();
        ![
            "to be filled by o.e.m.",
            "default string",
            "not specified",
            "system product name",
            "none",
            "0123456789",
            "not applicable",
        ]
        .contains(&l.as_str())
    })
}

pub(crate) fn board(src: &dyn Source) -> Option<Board> {
    let f = |n: &str| real(source::text(src, &format!("/sys/class/dmi/id/{n}")));
    let b = Board {
        system_vendor: f("sys_vendor"),
        product: f("product_name"),
        vendor: f("board_vendor"),
        name: f("board_name"),
        bios_vendor: f("bios_vendor"),
        bios_version: f("bios_version"),
        bios_date: f("bios_date"),
    };
    (b != Board::default()).then_some(b)
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]))
}
fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes([*b.get(at)?, *b.get(at + 1)?, *b.get(at + 2)?, *b.get(at + 3)?]))
}

const MEMORY_TYPES: &[(u8, &str)] = &[
    (0x12, "DDR"),
    (0x13, "DDR2"),
    (0x18, "DDR3"),
    (0x1A, "DDR4"),
    (0x1B, "LPDDR"),
    (0x1C, "LPDDR2"),
    (0x1D, "LPDDR3"),
    (0x1E, "LPDDR4"),
    (0x22, "DDR5"),
    (0x23, "LPDDR5"),
];

/// Memory devices in a raw SMBIOS structure table; empty slots are skipped.
pub(crate) fn parse_dimms(table: &[u8]) -> Vec<Dimm> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 4 <= table.len() {
        let kind = table[i];
        let len = table[i + 1] as usize;
        if len < 4 || i + len > table.len() {
            break;
        }
        let formatted = &table[i..i + len];
        // Strings follow the formatted area, each NUL-terminated, the set ending in a double NUL.
        let mut j = i + len;
        let mut strings = Vec::new();
        loop {
            let start = j;
            while j < table.len() && table[j] != 0 {
                j += 1;
            }
            if j >= table.len() {
                break;
            }
            if j == start {
                j += 1;
                if strings.is_empty() && j < table.len() && table[j] == 0 {
                    j += 1;
                }
                break;
            }
            strings.push(String::from_utf8_lossy(&table[start..j]).trim().to_string());
            j += 1;
        }
        let string = |at: usize| -> Option<String> {
            let idx = *formatted.get(at)? as usize;
            real(strings.get(idx.checked_sub(1)?).cloned().filter(|s| !s.is_empty()))
        };
        if kind == 127 {
            break;
        }
        if kind == 17 && len >= 0x15 {
            let size_field = le16(formatted, 0x0C).unwrap_or(0);
            let size_bytes = match size_field {
                0 | 0xFFFF => 0,
                0x7FFF => le32(formatted, 0x1C).map(|mb| mb as u64 * (1 << 20)).unwrap_or(0),
                s if s & 0x8000 != 0 => (s & 0x7FFF) as u64 * 1024,
                s => s as u64 * (1 << 20),
            };
            if size_bytes > 0 {
                let configured = le16(formatted, 0x20).filter(|&v| v != 0 && v != 0xFFFF);
                let speed = configured.or_else(|| le16(formatted, 0x15).filter(|&v| v != 0 && v != 0xFFFF));
                out.push(Dimm {
                    locator: string(0x10),
                    size_bytes,
                    kind: formatted
                        .get(0x12)
                        .and_then(|t| MEMORY_TYPES.iter().find(|(c, _)| c == t))
                        .map(|(_, n)| n.to_string()),
                    speed_mts: speed.map(u32::from),
                    manufacturer: string(0x17),
                    part_number: string(0x1A),
                });
            }
        }
        i = j;
    }
    out
}

/// Memory devices of the live machine, when the table is readable.
pub(crate) fn dimms() -> Vec<Dimm> {
    std::fs::read("/sys/firmware/dmi/tables/DMI").map(|t| parse_dimms(&t)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A type 17 structure of SMBIOS 3.x with the given size field and strings.
    fn type17(size: u16, ty: u8, speed: u16, strings: &[&str]) -> Vec<u8> {
        let mut f = vec![0u8; 0x28];
        f[0] = 17;
        f[1] = 0x28;
        f[0x0C..0x0E].copy_from_slice(&size.to_le_bytes());
        f[0x10] = 1; // device locator
        f[0x12] = ty;
        f[0x15..0x17].copy_from_slice(&speed.to_le_bytes());
        f[0x17] = 2; // manufacturer
        f[0x1A] = 3; // part number
        f[0x20..0x22].copy_from_slice(&speed.to_le_bytes());
        for s in strings {
            f.extend_from_slice(s.as_bytes());
            f.push(0);
        }
        f.push(0);
        f
    }

    #[test]
    fn reads_memory_devices_and_skips_empty_slots() {
        let mut t = type17(16384, 0x1A, 2400, &["DIMM_A1", "Micron", "36ASF4G72PZ-2G6D2"]);
        t.extend(type17(0, 0x02, 0, &["DIMM_A2", "NO DIMM", "NO DIMM"]));
        // 32 GiB does not fit the 15-bit field: 0x7FFF and the extended size in MB.
        let mut big = type17(0x7FFF, 0x22, 4800, &["DIMM_B1", "Samsung", "M321R4GA3BB6-CQK"]);
        big[0x1C..0x20].copy_from_slice(&32768u32.to_le_bytes());
        t.extend(big);
        // Sizes in KB when bit 15 is set: 0x8000 | 512 = 512 KB.
        t.extend(type17(0x8000 | 512, 0x18, 0, &["X", "Y", "Z"]));
        // A type 0 (BIOS) structure with no strings, then the end marker.
        t.extend([0u8, 4, 0, 0, 0, 0]);
        t.extend([127u8, 4, 0, 0, 0, 0]);
        let d = parse_dimms(&t);
        assert_eq!(d.len(), 3);
        assert_eq!(d[0].size_bytes, 16 << 30);
        assert_eq!((d[1].size_bytes, d[1].kind.as_deref(), d[1].speed_mts), (32 << 30, Some("DDR5"), Some(4800)));
        assert_eq!((d[2].size_bytes, d[2].speed_mts), (512 * 1024, None));
        assert_eq!(d[0].kind.as_deref(), Some("DDR4"));
        assert_eq!(d[0].speed_mts, Some(2400));
        assert_eq!(d[0].locator.as_deref(), Some("DIMM_A1"));
        assert_eq!(d[0].part_number.as_deref(), Some("36ASF4G72PZ-2G6D2"));
    }

    #[test]
    fn truncated_tables_do_not_panic() {
        let t = type17(8192, 0x1A, 3200, &["A", "B", "C"]);
        for n in 0..t.len() {
            let _ = parse_dimms(&t[..n]);
        }
        assert!(parse_dimms(&[17, 200, 0]).is_empty());
    }
}
