//! Checkpoint files on disk.
//!
//! ```text
//! DIR/LATEST                      "ckpt-<sim_ps>\n": the newest complete checkpoint
//! DIR/ckpt-<sim_ps>/rank-<r>.bin  header line (see header.rs), then the payload
//! DIR/ckpt-<sim_ps>/manifest.json every rank's header, for people and tools
//! ```
//!
//! Atomicity: every rank writes `rank-<r>.bin.tmp`, fsyncs it, renames it and fsyncs the
//! folder; only when every rank has done so (a collective in `super::save`) does rank 0
//! replace `LATEST` (temp file, fsync, rename, fsync DIR), then remove the older folders. A
//! crash at any point leaves `LATEST` naming a complete checkpoint (or no `LATEST` at all
//! before the first one); a half-written folder is never named by it, and restart reads only
//! the folder `LATEST` names.
//!
//! Payload: pieces, each a little-endian u64 length and that many bytes (the loop statistics,
//! then one piece per partition, so that they encode and decode in parallel); the header's
//! CRC-32 covers all of it.

use super::header::Header;
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

pub(crate) const LATEST: &str = "LATEST";

pub(crate) fn folder_name(sim_ps: u64) -> String {
    format!("ckpt-{sim_ps}")
}

pub(crate) fn rank_file(folder: &Path, rank: u32) -> PathBuf {
    folder.join(format!("rank-{rank}.bin"))
}

/// The folder `DIR/LATEST` names, or `None` without a `LATEST`.
pub(crate) fn latest(dir: &Path) -> Result<Option<PathBuf>> {
    let path = dir.join(LATEST);
    let name = match std::fs::read_to_string(&path) {
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let name = name.trim();
    if !name.starts_with("ckpt-") || name.contains('/') {
        bail!("{} is corrupted (names {name:?})", path.display());
    }
    Ok(Some(dir.join(name)))
}

/// Writes this rank's file into `folder` (created if missing): header, payload, fsync, rename.
pub(crate) fn write_rank(folder: &Path, mut header: Header, pieces: &[Vec<u8>]) -> Result<Header> {
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let mut crc = crc32fast::Hasher::new();
    let mut len = 0u64;
    for p in pieces {
        let n = (p.len() as u64).to_le_bytes();
        crc.update(&n);
        crc.update(p);
        len += 8 + p.len() as u64;
    }
    header.payload_bytes = len;
    header.crc32 = crc.finalize();
    let path = rank_file(folder, header.rank);
    let tmp = path.with_extension("bin.tmp");
    let write = || -> std::io::Result<()> {
        let mut f = std::io::BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        f.write_all(header.to_line().as_bytes())?;
        for p in pieces {
            f.write_all(&(p.len() as u64).to_le_bytes())?;
            f.write_all(p)?;
        }
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        sync_dir(folder)
    };
    write().with_context(|| format!("cannot write {}", path.display()))?;
    Ok(header)
}

/// Rank 0, once every rank's file is durable: the manifest, then `LATEST` (atomically), then
/// the removal of every other `ckpt-*` folder (older ones and half-written leftovers).
pub(crate) fn commit(dir: &Path, folder: &Path, headers: &[String]) -> Result<()> {
    let manifest = serde_json::json!({
        "layout": super::header::LAYOUT,
        "ranks": headers.iter().map(|h| h.trim_end()).collect::<Vec<_>>(),
    });
    let text = serde_json::to_string_pretty(&manifest)? + "\n";
    replace_file(&folder.join("manifest.json"), text.as_bytes())?;
    let name = folder.file_name().context("checkpoint folder has a name")?;
    let line = format!("{}\n", name.to_string_lossy());
    replace_file(&dir.join(LATEST), line.as_bytes())?;
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let e = e?;
        let n = e.file_name();
        if n != name && n.to_string_lossy().starts_with("ckpt-") && e.path().is_dir() {
            std::fs::remove_dir_all(e.path())
                .with_context(|| format!("cannot remove {}", e.path().display()))?;
        }
    }
    Ok(())
}

/// Replaces `path` atomically: a temp file beside it, fsync, rename, fsync the folder.
fn replace_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let write = || -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        sync_dir(path.parent().unwrap_or(Path::new(".")))
    };
    write().with_context(|| format!("cannot write {}", path.display()))
}

/// Makes a folder's entries (new names, renames) durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// A rank file opened and its header read; the payload follows.
pub(crate) struct Opened {
    pub path: PathBuf,
    pub header: Header,
    reader: BufReader<File>,
}

pub(crate) fn open_rank(folder: &Path, rank: u32) -> Result<Opened> {
    let path = rank_file(folder, rank);
    let f = File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 20, f);
    let mut line = Vec::new();
    // A header is a few hundred bytes; a file that has no newline early is not a checkpoint.
    (&mut reader)
        .take(4096)
        .read_until(b'\n', &mut line)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let header = std::str::from_utf8(&line)
        .ok()
        .filter(|l| l.ends_with('\n'))
        .context("no header line")
        .and_then(|l| Header::parse(l.trim_end()))
        .with_context(|| format!("{} is corrupted", path.display()))?;
    Ok(Opened {
        path,
        header,
        reader,
    })
}

/// The payload, checked (length and checksum), and where each piece lies in it.
pub(crate) struct Payload {
    pub bytes: Vec<u8>,
    pub pieces: Vec<std::ops::Range<usize>>,
}

impl Payload {
    pub(crate) fn piece(&self, i: usize) -> &[u8] {
        &self.bytes[self.pieces[i].clone()]
    }
}

/// Reads the payload, checking its length and checksum.
pub(crate) fn read_payload(mut o: Opened) -> Result<Payload> {
    let corrupted = |why: &str| anyhow::anyhow!("{} is corrupted ({why})", o.path.display());
    let mut payload = Vec::with_capacity(o.header.payload_bytes.min(1 << 34) as usize);
    o.reader
        .read_to_end(&mut payload)
        .with_context(|| format!("cannot read {}", o.path.display()))?;
    if payload.len() as u64 != o.header.payload_bytes {
        return Err(corrupted("truncated or too long"));
    }
    if crc32fast::hash(&payload) != o.header.crc32 {
        return Err(corrupted("checksum"));
    }
    let mut pieces = Vec::new();
    let mut at = 0usize;
    while at < payload.len() {
        let len = payload.get(at..at + 8).ok_or_else(|| corrupted("pieces"))?;
        let len = u64::from_le_bytes(len.try_into().expect("8 bytes")) as usize;
        let end = (at + 8)
            .checked_add(len)
            .filter(|&e| e <= payload.len())
            .ok_or_else(|| corrupted("pieces"))?;
        pieces.push(at + 8..end);
        at = end;
    }
    Ok(Payload {
        bytes: payload,
        pieces,
    })
}
