//! The `cd-persist` command on a cache written by hand in the documented store format (see
//! `format` in the crate): so the format's bytes are pinned here too, independently of the
//! writer.

use std::path::Path;
use std::process::Command;

/// One rank's store with one COPY entry of `data`, encoded from the format's description.
fn store(rank: u32, version: u64, data: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(b"CDPERS01");
    f.extend_from_slice(&1u32.to_le_bytes());
    f.extend_from_slice(&rank.to_le_bytes());
    f.extend_from_slice(&version.to_le_bytes());
    f.extend_from_slice(&(1u64 << 20).to_le_bytes());
    f.extend_from_slice(&(data.len() as u64).to_le_bytes());
    f.extend_from_slice(&1u32.to_le_bytes());
    f.push(0); // COPY
    f.extend_from_slice(&[0; 7]);
    f.extend_from_slice(&(data.len() as u64).to_le_bytes());
    let crc = crc32c::crc32c(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f.extend_from_slice(data);
    let trailer = crc32c::crc32c(data).to_le_bytes();
    f.extend_from_slice(&trailer);
    f.extend_from_slice(&crc32c::crc32c(&trailer).to_le_bytes());
    f
}

fn write_version(cache: &Path, v: u64, ranks: u32) {
    for r in 0..ranks {
        let vdir = cache.join(format!("node{r}/heat/v{v:08}"));
        std::fs::create_dir_all(&vdir).unwrap();
        std::fs::write(
            vdir.join(format!("data.{r}.cdp")),
            store(r, v, &[r as u8; 100]),
        )
        .unwrap();
        std::fs::write(vdir.join(format!("COMMIT.{r}")), format!("{v}\n")).unwrap();
    }
}

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cd-persist"))
        .args(args)
        .output()
        .expect("run cd-persist");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn lists_and_verifies_versions() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path();
    write_version(cache, 3, 2);
    write_version(cache, 4, 2);
    // a flushed copy of version 3
    let g = cache.join("global/heat/v00000003");
    std::fs::create_dir_all(&g).unwrap();
    for r in 0..2u32 {
        std::fs::write(
            g.join(format!("data.{r}.cdp")),
            store(r, 3, &[r as u8; 100]),
        )
        .unwrap();
    }
    std::fs::write(g.join("FLUSHED"), "3 2\n").unwrap();
    let template = format!("{}/node{{rank}}", cache.display());
    let global = cache.join("global");
    let global = global.to_str().unwrap();
    let base = ["--dir", &template, "--ranks", "2", "--global", global];

    let (code, out) = run(&[&["list"][..], &base, &["--verify"]].concat());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "heat:\n  v00000003 complete, intact, flushed\n  v00000004 complete, intact\n"
        ),
        "{out}"
    );

    // a flipped data byte on rank 1 of version 3: the local version cannot be rebuilt (no
    // redundancy here), the flushed copy restores it; version 4 lost everything on rank 0
    let data = cache.join("node1/heat/v00000003/data.1.cdp");
    let mut bytes = std::fs::read(&data).unwrap();
    bytes[64 + 5] ^= 0x80;
    std::fs::write(&data, &bytes).unwrap();
    std::fs::remove_dir_all(cache.join("node0/heat/v00000004")).unwrap();
    let (code, out) = run(&[
        &["verify"][..],
        &base,
        &["--name", "heat", "--version", "3"],
    ]
    .concat());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("lost ranks 1, flushed"), "{out}");
    assert!(
        out.contains("CRC32C mismatch in chunk 0 of entry 0"),
        "{out}"
    );
    assert!(out.contains("flushed copy: intact"), "{out}");
    let (code, out) = run(&[
        &["verify"][..],
        &base,
        &["--name", "heat", "--version", "4"],
    ]
    .concat());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("v00000004 complete, not rebuildable"), "{out}");
    assert!(out.contains("version 4 cannot be restored"), "{out}");

    let (code, out) = run(&["verify", "--dir", "x", "--ranks", "2"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("verify needs --name and --version"), "{out}");
    let (code, out) = run(&["list", "--ranks", "two"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("--ranks: \"two\" is not a number"), "{out}");
}
