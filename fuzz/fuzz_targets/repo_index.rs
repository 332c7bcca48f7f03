//! Repository index and its signature (issue 14): any bytes parse or give an
//! error naming the file and field; an index that parses serializes and
//! parses again to the same index; every archive path it lists is a safe
//! relative path; the signature check of arbitrary signature text with a
//! fixed key never panics and never accepts.
#![no_main]
use engine::repo::{index, sign};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first line (if any) is tried as a minisign signature of the rest.
    let (sig, body) = match data.iter().position(|&b| b == b'\n') {
        Some(i) if i < 512 => (&data[..i], &data[i + 1..]),
        _ => (&b""[..], data),
    };
    match index::parse(body, "fuzz/index.json") {
        Ok(idx) => {
            let bytes = idx.to_bytes();
            let again = index::parse(&bytes, "fuzz/index.json").expect("a serialized index parses");
            assert_eq!(again.to_bytes(), bytes, "an index changes when serialized and parsed again");
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
            let _ = e.hint();
        }
    }
    // A key nobody has the secret of: no signature may verify.
    let key = sign::PublicKey::parse("RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3").expect("a public key");
    if let Ok(text) = std::str::from_utf8(sig) {
        assert!(sign::verify(&key, body, text).is_err(), "an arbitrary signature verified");
    }
});
