//! Software: OS, kernel, compiler, Python, desktop, virtualization or
//! container layer, CPU vulnerability mitigations.

use super::command;
use super::source::{self, Source};
use crate::model::system::Compiler;
use indexmap::IndexMap;

/// `Debian 12`, `Ubuntu 24.04` (name and version, as result viewers show them).
pub(crate) fn os(src: &dyn Source) -> Option<String> {
    let t = src.read("/etc/os-release").or_else(|_| src.read("/usr/lib/os-release")).ok()?;
    let get = |k: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix('=')))
            .map(|v| v.trim().trim_matches('"').to_string())
            .filter(|v| !v.is_empty())
    };
    match (get("NAME"), get("VERSION_ID")) {
        (Some(n), Some(v)) => Some(format!("{} {v}", n.replace(" GNU/Linux", ""))),
        _ => get("PRETTY_NAME").or_else(|| get("NAME")),
    }
}

pub(crate) fn kernel(src: &dyn Source) -> Option<String> {
    source::text(src, "/proc/sys/kernel/osrelease")
}

pub(crate) fn cmdline(src: &dyn Source) -> Option<String> {
    source::text(src, "/proc/cmdline")
}

/// The bracketed choice of transparent_hugepage/enabled.
pub(crate) fn thp(src: &dyn Source) -> Option<String> {
    let t = source::text(src, "/sys/kernel/mm/transparent_hugepage/enabled")?;
    crate::sysinfo::device::parse_scheduler(&t).0
}

/// `name: state` for every file in the vulnerabilities folder; unreadable ones read `unknown`.
pub(crate) fn security(src: &dyn Source) -> IndexMap<String, String> {
    let dir = "/sys/devices/system/cpu/vulnerabilities";
    src.list(dir)
        .unwrap_or_default()
        .into_iter()
        .map(|n| {
            let v = source::text(src, &format!("{dir}/{n}")).unwrap_or_else(|| "unknown".into());
            (n, v)
        })
        .collect()
}

/// Virtualization and container layers, outermost first (`KVM + docker`).
pub(crate) fn system_layer(src: &dyn Source) -> Option<String> {
    let mut layers = Vec::new();
    let dmi = |n: &str| source::text(src, &format!("/sys/class/dmi/id/{n}")).unwrap_or_default();
    let (vendor, product) = (dmi("sys_vendor"), dmi("product_name"));
    let vm = if vendor.contains("QEMU") || product.contains("QEMU") {
        Some("QEMU")
    } else if product.contains("KVM") || vendor.contains("KVM") {
        Some("KVM")
    } else if vendor.contains("VMware") {
        Some("VMware")
    } else if vendor.contains("innotek") || product.contains("VirtualBox") {
        Some("VirtualBox")
    } else if vendor.contains("Microsoft") && product.contains("Virtual") {
        Some("Hyper-V")
    } else if vendor.contains("Xen") || source::text(src, "/sys/hypervisor/type").is_some_and(|t| t == "xen") {
        Some("Xen")
    } else if vendor.contains("Amazon EC2") {
        Some("Amazon EC2")
    } else if product.contains("Google Compute Engine") {
        Some("Google Compute Engine")
    } else if src
        .read("/proc/cpuinfo")
        .is_ok_and(|c| c.lines().any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor")))
    {
        Some("VM")
    } else {
        None
    };
    layers.extend(vm.map(str::to_string));
    let container = if let Some(c) = source::text(src, "/run/systemd/container") {
        Some(c)
    } else if src.exists("/.dockerenv") {
        Some("docker".to_string())
    } else if src.exists("/run/.containerenv") {
        Some("podman".to_string())
    } else {
        let cg = src.read("/proc/1/cgroup").unwrap_or_default();
        ["docker", "lxc", "kubepods", "containerd"].iter().find(|k| cg.contains(*k)).map(|k| k.to_string())
    };
    layers.extend(container);
    (!layers.is_empty()).then(|| layers.join(" + "))
}

/// Parses `cc -v` stderr: version and configure flags.
pub(crate) fn parse_cc(stderr: &str) -> Option<Compiler> {
    let version = stderr.lines().find_map(|l| {
        if let Some(r) = l.strip_prefix("gcc version ") {
            Some(format!("GCC {}", r.split_whitespace().next()?))
        } else if l.contains("clang version ") {
            let v = l.split("clang version ").nth(1)?.split_whitespace().next()?;
            Some(format!("Clang {v}"))
        } else {
            None
        }
    })?;
    let configure = stderr.lines().find_map(|l| l.strip_prefix("Configured with: ")).map(|c| {
        let mut flags: Vec<&str> = c
            .split_whitespace()
            .filter(|f| f.starts_with("--"))
            .filter(|f| !f.contains('/') && !f.starts_with("--with-pkgversion") && !f.starts_with("--with-bugurl"))
            .collect();
        flags.sort();
        flags.dedup();
        flags.join(" ")
    });
    Some(Compiler { version, configure: configure.filter(|c| !c.is_empty()) })
}

/// Compiler and Python, from their commands (in parallel; live system only).
pub(crate) fn toolchain(src: &dyn Source) -> (Option<Compiler>, Option<String>) {
    if !src.live() {
        return (None, None);
    }
    std::thread::scope(|s| {
        let cc = s.spawn(|| command::output("cc", &["-v"]).and_then(|(_, e)| parse_cc(&e)));
        let llvm = s.spawn(|| {
            command::output("clang", &["--version"]).and_then(|(o, _)| {
                o.split("clang version ").nth(1).and_then(|r| r.split_whitespace().next()).map(|v| format!("LLVM {v}"))
            })
        });
        let py = s.spawn(|| {
            command::output("python3", &["--version"])
                .map(|(o, e)| format!("{}{}", o.trim(), e.trim()))
                .filter(|v| v.starts_with("Python"))
        });
        let mut cc = cc.join().ok().flatten();
        if let (Some(c), Some(l)) = (cc.as_mut(), llvm.join().ok().flatten())
            && !c.version.starts_with("Clang")
        {
            c.version = format!("{} + {l}", c.version);
        }
        (cc, py.join().ok().flatten())
    })
}

/// Desktop and display server from the session's environment.
pub(crate) fn session(environ: &super::Environ) -> (Option<String>, Option<String>) {
    let desktop = environ.get("XDG_CURRENT_DESKTOP").filter(|v| !v.is_empty()).cloned();
    let display = if environ.contains_key("WAYLAND_DISPLAY") {
        Some("Wayland".to_string())
    } else if environ.contains_key("DISPLAY") {
        Some("X Server".to_string())
    } else {
        None
    };
    (desktop, display)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gcc_version_and_flags() {
        let e = "Using built-in specs.\nCOLLECT_GCC=cc\nTarget: x86_64-linux-gnu\nConfigured with: ../src/configure -v --with-pkgversion='Debian 12.2.0-14' --with-bugurl=file:///usr/share/doc/gcc-12/README.Bugs --enable-languages=c,ada,c++ --prefix=/usr --enable-shared --build=x86_64-linux-gnu\nThread model: posix\ngcc version 12.2.0 (Debian 12.2.0-14+deb12u1) \n";
        let c = parse_cc(e).unwrap();
        assert_eq!(c.version, "GCC 12.2.0");
        assert_eq!(
            c.configure.as_deref(),
            Some("--build=x86_64-linux-gnu --enable-languages=c,ada,c++ --enable-shared")
        );
        assert!(parse_cc("garbage").is_none());
    }
}
