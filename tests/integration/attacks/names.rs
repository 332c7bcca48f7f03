//! Names are names (issue 37 item 5): every id, version and name a signed
//! index gives becomes a folder name in ENGINE_HOME, and every archive it
//! lists is unpacked there. A hostile publisher writes an index (re-signed
//! with its own valid key, as `minisign -S` would) whose result versions,
//! result names, profile ids and versions and suite ids and versions climb
//! out with `..` and `/` or carry control characters, and archives with a
//! setuid file, a FIFO, a device, a member named with escapes, and a
//! gigabyte of zeros in a megabyte (and a profile download that is a zip
//! bomb). `repo add` refuses each with the index field or archive member
//! named, nothing outside ENGINE_HOME changes (bait files in /var/tmp and
//! beside ENGINE_HOME, which the climbing names aim at), and a refused add
//! leaves nothing in ENGINE_HOME either. Without the name checks, the
//! result-version case does plant a folder in /var/tmp (tried).

use super::{Bait, Hostile, script_profile};
use crate::common::{Env, Run};
use crate::repo::publish;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The hostile publisher's folder with profile `plain` and suite `small`,
/// published and signed; not added yet.
fn published(env: &Env) -> Hostile {
    let h = Hostile::new(env);
    h.profile("plain", &script_profile("plain", "sh", "true", "", ""));
    h.suite("small", "title: Small\ntests:\n  - profile: plain\n");
    let r = publish(env, &h.src, h.out.path(), &h.secret);
    assert_eq!(r.code, 0, "publishing failed: {r:?}");
    h
}

/// Rewrites the published index with `edit` and signs it again with the
/// publisher's own key: the signature verifies, as a hostile publisher's does.
fn resign(h: &Hostile, edit: impl FnOnce(&mut Value)) {
    let p = h.out.path().join("index.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    edit(&mut v);
    let bytes = serde_json::to_vec_pretty(&v).unwrap();
    std::fs::write(&p, &bytes).unwrap();
    let key = engine::repo::sign::SecretKey::load(Path::new(&h.secret), None).unwrap();
    let sig = key.sign(&bytes, engine::repo::publish::TRUSTED_COMMENT).unwrap();
    std::fs::write(h.out.path().join("index.json.minisig"), sig).unwrap();
}

fn add(env: &Env, h: &Hostile) -> Run {
    env.run(&["repo", "add", "team", h.out.path().to_str().unwrap(), "--key", &h.pubkey])
}

/// `repo add` fails saying each of `needles`, and ENGINE_HOME keeps no
/// copy, no temporary folder and no registry entry.
fn refused(env: &Env, h: &Hostile, needles: &[&str]) -> Run {
    assert_refused(env, add(env, h), needles)
}

/// `r`, a `repo add`, failed as [`refused`] says.
fn assert_refused(env: &Env, r: Run, needles: &[&str]) -> Run {
    assert_ne!(r.code, 0, "{r:?}");
    for n in needles {
        assert!(r.stderr.contains(n), "expected `{n}`: {r:?}");
    }
    assert!(!r.stderr.contains('\x1b') && !r.stderr.contains('\x07'), "raw control characters: {r:?}");
    let repos = env.home.path().join("repos");
    let left: Vec<String> = super::listing(&repos).into_iter().filter(|n| n != "repos.json").collect();
    assert!(left.is_empty(), "left in {}: {left:?}", repos.display());
    let reg = std::fs::read_to_string(repos.join("repos.json")).unwrap_or_default();
    assert!(!reg.contains("\"team\""), "registered anyway: {reg}");
    r
}

/// Bait files in /var/tmp and in the folder that holds ENGINE_HOME: where
/// a climbing name lands.
fn bait(env: &Env, tag: &str) -> Bait {
    let beside = env.home.path().parent().unwrap().to_str().unwrap().to_string();
    Bait::new(tag, &["/var/tmp", &beside])
}

/// What changed of this test's own bait (other tests bait the same folders).
fn changed(b: &Bait, tag: &str) -> Vec<String> {
    b.changes().into_iter().filter(|c| c.contains(tag)).collect()
}

/// `PREFIX/../../…/FILE-planted`: enough `..` to reach `/` from any
/// ENGINE_HOME, then down to a new file beside the bait `file` (absolute),
/// whose name carries the bait's tag.
fn climbing(prefix: &str, file: &Path) -> String {
    format!("{prefix}/{}{}-planted", "../".repeat(24), file.strip_prefix("/").unwrap().display())
}

/// A real result archive (`result.json`) in the publisher's folder, and
/// its entry for the index: an unchecked engine unpacks it and renames it
/// to where the version's folder name points.
fn result_archive(h: &Hostile) -> Value {
    let body = b"{}";
    let mut t = tar_member("result.json", tar::EntryType::Regular, 0o644, body.len() as u64, body);
    t.extend([0u8; 1024]);
    let bytes = gz(&t);
    let rel = "results/baseline/baseline-1.0.0.tar.gz";
    std::fs::create_dir_all(h.out.path().join("results/baseline")).unwrap();
    std::fs::write(h.out.path().join(rel), &bytes).unwrap();
    json!({"path": rel, "sha256": sha256(&bytes), "size": bytes.len()})
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// A result entry with one version.
fn result_entry(archive: &Value, name: &str, version: &str) -> Value {
    json!({"name": name, "versions": [
        {"version": version, "title": "R", "identifiers": ["a"], "results": 1, "archive": archive, "engine": "0.1.0"},
    ]})
}

/// One hostile index: `edit` gets the index, a real result archive's entry
/// and two bait files (in /var/tmp and beside ENGINE_HOME) to aim at;
/// `repo add` must refuse it naming `field` and `why`, and nothing of the
/// bait's may change or appear.
fn attack(tag: &str, field: &str, why: &str, edit: impl FnOnce(&mut Value, &Value, &Path, &Path)) {
    let env = Env::new();
    let h = published(&env);
    let tag = format!("names-{tag}");
    let b = bait(&env, &tag);
    let archive = result_archive(&h);
    resign(&h, |v| edit(v, &archive, &b.files[0].0, &b.files[1].0));
    let r = add(&env, &h);
    let outside = changed(&b, &tag);
    for (p, _) in &b.files {
        // What an unchecked engine would have left (removed, not to litter).
        let (dir, stem) = (p.parent().unwrap(), p.file_name().unwrap().to_string_lossy());
        for n in super::listing(dir).iter().filter(|n| n.starts_with(&format!("{stem}-planted"))) {
            let _ = std::fs::remove_dir_all(dir.join(n));
        }
    }
    assert!(outside.is_empty(), "changed outside ENGINE_HOME: {outside:?}\n{r:?}");
    assert_refused(&env, r, &[&format!(": {field}: "), why, "one path component"]);
}

#[test]
fn a_re_signed_index_is_accepted_so_the_refusals_are_about_names() {
    let env = Env::new();
    let h = published(&env);
    let archive = result_archive(&h);
    resign(&h, |v| v["results"] = json!([result_entry(&archive, "baseline", "2.0.0")]));
    let r = add(&env, &h);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(env.home.path().join("repos/team/results/baseline@2.0.0/result.json").is_file());
}

#[test]
fn a_result_version_is_a_name() {
    for (tag, why) in [("rv-var", "contains `/`"), ("rv-beside", "contains `/`")] {
        attack(tag, "results[0].versions[0].version", why, |v, a, var, beside| {
            let target = if tag == "rv-var" { var } else { beside };
            let r = result_entry(a, "baseline", &climbing("x", target));
            v["results"] = json!([r]);
        });
    }
    attack("rv-dots", "results[0].versions[0].version", "is `..`", |v, a, _, _| {
        let r = result_entry(a, "baseline", "..");
        v["results"] = json!([r]);
    });
    attack("rv-esc", "results[0].versions[0].version", "control character U+001B", |v, a, _, _| {
        let r = result_entry(a, "baseline", "2\u{1b}]0;owned\u{7}\u{1b}[2J");
        v["results"] = json!([r]);
    });
    attack("rv-nul", "results[0].versions[0].version", "control character U+0000", |v, a, _, _| {
        let r = result_entry(a, "baseline", "2\0");
        v["results"] = json!([r]);
    });
    attack("rv-long", "results[0].versions[0].version", "more than 100", |v, a, _, _| {
        let r = result_entry(a, "baseline", &"9".repeat(300));
        v["results"] = json!([r]);
    });
}

#[test]
fn a_result_name_is_a_name() {
    attack("rn-var", "results[0].name", "contains `/`", |v, a, var, _| {
        let r = result_entry(a, &climbing("x", var), "2.0.0");
        v["results"] = json!([r]);
    });
    attack("rn-back", "results[0].name", "contains `\\`", |v, a, _, _| {
        let r = result_entry(a, "..\\..\\x", "2.0.0");
        v["results"] = json!([r]);
    });
    attack("rn-esc", "results[0].name", "control character U+001B", |v, a, _, _| {
        let r = result_entry(a, "base\u{1b}[31mline", "2.0.0");
        v["results"] = json!([r]);
    });
}

#[test]
fn a_profile_id_and_version_are_names() {
    attack("pi-var", "profiles[0].id", "contains `/`", |v, _, var, _| {
        v["profiles"][0]["id"] = json!(climbing("plain", var));
    });
    attack("pi-dots", "profiles[0].id", "is `..`", |v, _, _, _| v["profiles"][0]["id"] = json!(".."));
    attack("pv-beside", "profiles[0].versions[0].version", "contains `/`", |v, _, _, beside| {
        v["profiles"][0]["versions"][0]["version"] = json!(climbing("1.0.0", beside));
    });
    attack("pv-esc", "profiles[0].versions[0].version", "control character U+000A", |v, _, _, _| {
        v["profiles"][0]["versions"][0]["version"] = json!("1.0.0\nplain@9.9.9: installed");
    });
}

#[test]
fn a_suite_id_and_version_are_names() {
    attack("si-var", "suites[0].id", "contains `/`", |v, _, var, _| {
        v["suites"][0]["id"] = json!(climbing("small", var));
    });
    attack("si-esc", "suites[0].id", "control character U+009B", |v, _, _, _| {
        v["suites"][0]["id"] = json!("small\u{9b}2J");
    });
    attack("sv-beside", "suites[0].versions[0].version", "contains `/`", |v, _, _, beside| {
        v["suites"][0]["versions"][0]["version"] = json!(climbing("1.0.0", beside));
    });
    attack("sv-dot", "suites[0].versions[0].version", "is `.`", |v, _, _, _| {
        v["suites"][0]["versions"][0]["version"] = json!(".");
    });
}

/// The publisher's side: what every user's `repo add` would refuse is
/// refused when publishing, naming the file.
#[test]
fn publishing_names_that_are_no_names_is_refused() {
    let env = Env::new();
    let h = Hostile::new(&env);
    h.suite("Bad Suite", "title: Bad\ntests:\n  - profile: plain\n");
    let r = publish(&env, &h.src, h.out.path(), &h.secret);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("Bad Suite.yaml: `Bad Suite@1.0.0` cannot be published"), "{r:?}");
    let h = Hostile::new(&env);
    h.profile("plain", &script_profile("plain", "sh", "true", "", "")).file("plain", "x\\y", b"");
    let r = publish(&env, &h.src, h.out.path(), &h.secret);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("its name cannot be a file name: it contains `\\`"), "{r:?}");
}

/// A raw tar member: its header, then its data padded to 512 bytes.
fn tar_member(name: &str, kind: tar::EntryType, mode: u32, size: u64, data: &[u8]) -> Vec<u8> {
    let mut h = tar::Header::new_gnu();
    h.set_path(name).unwrap();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_mtime(946_684_800);
    if matches!(kind, tar::EntryType::Char | tar::EntryType::Block) {
        h.set_device_major(8).unwrap();
        h.set_device_minor(0).unwrap();
    }
    h.set_cksum();
    let mut out = h.as_bytes().to_vec();
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// The `plain` profile's folder as a tar stream (no end blocks yet).
fn plain_members() -> Vec<u8> {
    let yaml = script_profile("plain", "sh", "true", "", "");
    let mut t = tar_member("plain/", tar::EntryType::Directory, 0o755, 0, b"");
    t.extend(tar_member("plain/profile.yaml", tar::EntryType::Regular, 0o644, yaml.len() as u64, yaml.as_bytes()));
    t
}

/// Puts `bytes` in place of the `plain` profile's archive and signs an
/// index that lists them (their sha256 and size).
fn replace_profile_archive(h: &Hostile, bytes: &[u8]) {
    let sha = sha256(bytes);
    resign(h, |v| {
        let a = &mut v["profiles"][0]["versions"][0]["archive"];
        std::fs::write(h.out.path().join(a["path"].as_str().unwrap()), bytes).unwrap();
        a["sha256"] = json!(sha);
        a["size"] = json!(bytes.len());
    });
}

/// Every file under ENGINE_HOME, with its size: a refused add left nothing.
fn home_bytes(env: &Env) -> u64 {
    super::walk(env.home.path()).iter().filter_map(|p| std::fs::symlink_metadata(p).ok()).map(|m| m.len()).sum()
}

#[test]
fn setuid_setgid_and_sticky_bits_do_not_survive_repo_add() {
    let env = Env::new();
    let h = published(&env);
    let mut t = plain_members();
    t.extend(tar_member("plain/bin/", tar::EntryType::Directory, 0o1777, 0, b""));
    t.extend(tar_member("plain/bin/suid", tar::EntryType::Regular, 0o4755, 3, b"#!\n"));
    t.extend(tar_member("plain/bin/sgid", tar::EntryType::Regular, 0o2711, 3, b"#!\n"));
    t.extend(tar_member("plain/bin/open", tar::EntryType::Regular, 0o6777, 3, b"#!\n"));
    t.extend([0u8; 1024]);
    replace_profile_archive(&h, &gz(&t));
    let r = add(&env, &h);
    assert_eq!(r.code, 0, "{r:?}");
    let dir = env.home.path().join("repos/team/profiles/plain@1.0.0/plain/bin");
    let mode = |n: &str| std::fs::symlink_metadata(dir.join(n)).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode("suid"), 0o755);
    assert_eq!(mode("sgid"), 0o711);
    assert_eq!(mode("open"), 0o775, "no setuid, setgid, nor write for others");
    assert_eq!(std::fs::symlink_metadata(&dir).unwrap().permissions().mode() & 0o7777, 0o775);
    for f in super::walk(&env.home.path().join("repos")) {
        let m = std::fs::symlink_metadata(&f).unwrap().permissions().mode();
        assert_eq!(m & 0o7000, 0, "{} keeps {:o}", f.display(), m);
    }
}

#[test]
fn device_and_fifo_members_are_refused_and_nothing_stays() {
    for (kind, member) in [(tar::EntryType::Fifo, "plain/fifo"), (tar::EntryType::Char, "plain/sda")] {
        let env = Env::new();
        let h = published(&env);
        let mut t = plain_members();
        t.extend(tar_member(member, kind, 0o666, 0, b""));
        t.extend([0u8; 1024]);
        replace_profile_archive(&h, &gz(&t));
        refused(&env, &h, &[&format!("member `{member}` is a device or FIFO"), "nothing of it was kept"]);
        assert!(home_bytes(&env) < 64 << 10, "{} bytes in ENGINE_HOME", home_bytes(&env));
    }
}

#[test]
fn a_member_whose_name_is_no_name_is_refused() {
    let env = Env::new();
    let h = published(&env);
    let mut t = plain_members();
    t.extend(tar_member("plain/\u{1b}]0;owned\u{7}", tar::EntryType::Regular, 0o644, 1, b"x"));
    t.extend([0u8; 1024]);
    replace_profile_archive(&h, &gz(&t));
    refused(&env, &h, &["`plain/\\u{1b}]0;owned\\u{7}` is not a file name: it contains the control character U+001B"]);
}

/// A profile archive whose member `plain/zeros` holds `mib` MiB of zeros,
/// in about a kilobyte per MiB: gzip members concatenated, one compressed
/// MiB of zeros repeated (what `gzip` of the real bytes would give).
fn zeros_bomb(mib: u64) -> Vec<u8> {
    let mut head = plain_members();
    head.extend(tar_member("plain/zeros", tar::EntryType::Regular, 0o644, mib << 20, b""));
    let mut out = gz(&head);
    let one = gz(&vec![0u8; 1 << 20]);
    for _ in 0..mib {
        out.extend_from_slice(&one);
    }
    out.extend(gz(&[0u8; 1024]));
    out
}

#[test]
fn a_tar_bomb_stops_repo_add_with_a_clear_error_and_leaves_nothing() {
    // 1 GiB of zeros in about 1 MB: past the 64 MiB a repository archive may hold.
    let env = Env::new();
    let h = published(&env);
    let bomb = zeros_bomb(1024);
    assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());
    replace_profile_archive(&h, &bomb);
    let start = std::time::Instant::now();
    refused(
        &env,
        &h,
        &[
            "stopped at member `plain/zeros`",
            "more than 64.0 MiB (the most engine unpacks from one archive)",
            "a repository archive holds a profile, a suite or a result",
        ],
    );
    assert!(start.elapsed().as_secs() < 20, "refused before unpacking: {:?}", start.elapsed());
    assert!(home_bytes(&env) < 64 << 10, "{} bytes in ENGINE_HOME", home_bytes(&env));

    // Many members of 1 MiB each: the ratio stops them (100 times the
    // archive, at least 8 MiB) after some were written, and those go too.
    let env = Env::new();
    let h = published(&env);
    let mut t = plain_members();
    for i in 0..32 {
        t.extend(tar_member(&format!("plain/z{i:02}"), tar::EntryType::Regular, 0o644, 1 << 20, &vec![0u8; 1 << 20]));
    }
    t.extend([0u8; 1024]);
    replace_profile_archive(&h, &gz(&t));
    refused(&env, &h, &["stopped at member `plain/z0", "100 times the archive's", "at least 8.0 MiB"]);
    assert!(home_bytes(&env) < 64 << 10, "{} bytes in ENGINE_HOME", home_bytes(&env));
}

#[test]
fn a_zip_bomb_download_stops_install_at_the_configured_cap() {
    use std::io::Write;
    let env = Env::new();
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    z.start_file("zeros", o).unwrap();
    z.write_all(&vec![0u8; 16 << 20]).unwrap();
    let zip = z.finish().unwrap().into_inner();
    assert!(zip.len() < 64 << 10, "{} bytes", zip.len());
    let sha = sha256(&zip);
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(cache.path().join("bomb.zip"), &zip).unwrap();
    let h = Hostile::new(&env);
    let install = format!(
        "install:\n  downloads:\n    - file: bomb.zip\n      size: {}\n      sha256: {sha}\n      urls: [https://downloads.invalid/bomb.zip]\n",
        zip.len()
    );
    h.profile("zipbomb", &script_profile("zipbomb", "sh", "true", &install, ""));
    let r = h.add(&env, "team");
    assert_eq!(r.code, 0, "{r:?}");
    let r: Run = env
        .cmd(&["install", "team/zipbomb"])
        .env("ENGINE_DOWNLOAD_CACHE", cache.path())
        .env("ENGINE_DOWNLOAD_UNPACK_MAX", "4MiB")
        .output()
        .unwrap()
        .into();
    assert_ne!(r.code, 0, "{r:?}");
    let all = format!("{}{}", r.stdout, r.stderr);
    for n in ["bomb.zip: stopped at member `zeros`", "more than 4.0 MiB", "ENGINE_DOWNLOAD_UNPACK_MAX"] {
        assert!(all.contains(n), "expected `{n}`: {r:?}");
    }
    let installed = env.home.path().join("installed");
    let dirs: Vec<String> = super::listing(&installed).into_iter().filter(|n| installed.join(n).is_dir()).collect();
    assert!(dirs.is_empty(), "left in installed/: {dirs:?}");
    assert!(!super::walk(&installed).iter().any(|p| p.ends_with("zeros")), "nothing unpacked stays");
}
