//! Checkpoint/restart: every rank's full state written at a window boundary, and a run
//! resumed from it that ends byte-identically to one that never stopped.
//!
//! A window boundary is a consistent cut: every event before it has been processed, none at
//! or after it, and every outbox is empty (the exchange has delivered them). Stopping there
//! never shortens a window ([`Engine::run`]), so the resumed run processes exactly the windows
//! the uninterrupted one does. The state is the partitions (queues, nodes, transports, RNG
//! streams, metrics) and the loop statistics; the model and the plan are rebuilt from the
//! scenario, whose hash the checkpoint carries. See `store.rs` for the layout and why a crash
//! while writing leaves the previous checkpoint usable.

pub(crate) mod header;
pub mod signals;
pub(crate) mod store;

use crate::engine::comm::agree;
use crate::engine::comm::Comm;
use crate::engine::partition::{Outbox, Partition};
use crate::engine::plan::Plan;
use crate::engine::{Ending, Engine, LoopStats, ProgressSample};
use crate::scenario::Scenario;
use crate::time::NEVER_PS;
use anyhow::{anyhow, bail, Context, Result};
use header::Header;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Exit status of a run that checkpointed because of a signal: "checkpointed, requeue me"
/// (EX_TEMPFAIL in sysexits.h). `slurm/weft-run.sbatch` requeues the job on it.
pub const REQUEUE_EXIT_CODE: i32 = 75;

/// Test only: with this variable set to `R`, rank `R` raises the signal flag itself after its
/// first checkpoint (a deterministic stand-in for SIGUSR1 arriving mid-run).
pub const TEST_RAISE_ENV: &str = "WEFT_TEST_SIGNAL_AFTER_CHECKPOINT";

/// The weft version a checkpoint is tied to: the crate version and the git commit it was
/// built from (`unknown` outside a git checkout; see build.rs).
pub fn version() -> String {
    format!("{}+{}", env!("CARGO_PKG_VERSION"), env!("WEFT_GIT_COMMIT"))
}

/// How often to checkpoint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Every {
    /// At the first window boundary at or after each multiple of this simulated time.
    SimPs(u64),
    /// When this much wall time has passed on rank 0 since the start or the last checkpoint.
    Wall(Duration),
}

/// The checkpoint flags of `weft run`.
#[derive(Clone, Debug, Default)]
pub struct CheckpointOptions {
    /// `--checkpoint DIR`: where checkpoints go. Without it nothing is written.
    pub dir: Option<PathBuf>,
    /// `--checkpoint-every`: how often to checkpoint; without it only `--stop-at` and a
    /// signal do.
    pub every: Option<Every>,
    /// `--stop-at`: checkpoint at the first window boundary at or after it, then stop.
    pub stop_at_ps: Option<u64>,
    /// `--restart DIR`: resume from the checkpoint `DIR/LATEST` names.
    pub restart: Option<PathBuf>,
}

/// Parses a simulated time with a unit: `500ns`, `8us`, `2ms`, `1s`, `1500ps` (decimals
/// allowed, rounded to the picosecond), in ps.
pub fn parse_sim_time(text: &str) -> Result<u64> {
    let units: [(&str, f64); 5] = [
        ("ps", 1.0),
        ("ns", 1e3),
        ("us", 1e6),
        ("ms", 1e9),
        ("s", 1e12),
    ];
    // Longest suffix first: "ms" before "s".
    for (unit, ps) in units {
        if let Some(num) = text.strip_suffix(unit) {
            let v: f64 = num.trim().parse().map_err(|_| {
                anyhow!("{text:?} is not a number with a unit (e.g. 500ns, 8us, 2ms, 1s)")
            })?;
            let total = (v * ps).round();
            if !(total.is_finite() && total >= 1.0 && total < NEVER_PS as f64) {
                bail!("{text:?} must be at least 1 ps");
            }
            return Ok(total as u64);
        }
    }
    bail!("{text:?} needs a unit: ps, ns, us, ms or s (e.g. 500ns, 8us, 2ms, 1s)")
}

/// Parses `--checkpoint-every`: a simulated time, or `wall:` and a wall time (`wall:30min`,
/// `wall:90s`, `wall:2h`, `wall:500ms`).
pub fn parse_every(text: &str) -> Result<Every> {
    let Some(wall) = text.strip_prefix("wall:") else {
        return parse_sim_time(text).map(Every::SimPs);
    };
    let units: [(&str, f64); 4] = [("ms", 1e-3), ("min", 60.0), ("s", 1.0), ("h", 3600.0)];
    for (unit, s) in units {
        if let Some(num) = wall.strip_suffix(unit) {
            let v: f64 = num
                .trim()
                .parse()
                .map_err(|_| anyhow!("{text:?}: {num:?} is not a number"))?;
            let secs = v * s;
            if !(secs.is_finite() && secs > 0.0 && secs < 1e9) {
                bail!("{text:?} must be positive");
            }
            return Ok(Every::Wall(Duration::from_secs_f64(secs)));
        }
    }
    bail!("{text:?}: a wall time needs a unit: ms, s, min or h (e.g. wall:30min)")
}

/// 64-bit FNV-1a.
fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The scenario as run (after `--set`), serialized canonically (JSON, fields in declaration
/// order), hashed. File paths inside it are as resolved when loading.
pub fn scenario_hash(s: &Scenario) -> u64 {
    fnv64(
        serde_json::to_string(s)
            .expect("scenarios serialize")
            .as_bytes(),
    )
}

/// The plan's node → partition → rank assignment and window length, hashed.
pub fn plan_hash(plan: &Plan) -> u64 {
    let mut bytes = Vec::with_capacity(4 * (plan.node_part.len() + plan.part_rank.len()) + 16);
    for v in plan.node_part.iter().chain(&plan.part_rank) {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    bytes.extend_from_slice(&plan.lookahead_ps.to_le_bytes());
    bytes.extend_from_slice(&plan.ranks.to_le_bytes());
    fnv64(&bytes)
}

/// A checkpoint's rank file opened for a restart, its header checked against this run.
pub(crate) struct Opened {
    dir: PathBuf,
    file: store::Opened,
}

impl Opened {
    /// The checked header of this rank's file.
    pub(crate) fn header(&self) -> &Header {
        &self.file.header
    }
}

/// Finds `dir/LATEST` and opens this rank's file, refusing a checkpoint from another weft
/// version, scenario or rank count. Each refusal is one line naming what differs.
pub(crate) fn open(dir: &Path, s: &Scenario, comm: &dyn Comm) -> Result<Opened> {
    let ctx = || format!("--restart {}", dir.display());
    let folder = store::latest(dir)
        .with_context(ctx)?
        .ok_or_else(|| anyhow!("{}: no checkpoint there (no LATEST file)", ctx()))?;
    let file = store::open_rank(&folder, comm.rank()).with_context(ctx)?;
    let h = &file.header;
    let d = dir.display();
    if h.weft != version() {
        bail!(
            "checkpoint {d} was written by weft {}, this is weft {}",
            h.weft,
            version()
        );
    }
    if h.ranks != comm.ranks() {
        bail!(
            "checkpoint {d} is for {} ranks, this run has {}",
            h.ranks,
            comm.ranks()
        );
    }
    if h.scenario != scenario_hash(s) {
        bail!(
            "checkpoint {d} is from another scenario (scenario hash {:016x}, this run's {:016x}; give the same scenario file and --set options)",
            h.scenario,
            scenario_hash(s)
        );
    }
    let expected = store::folder_name(h.sim_ps);
    if h.rank != comm.rank() || folder.file_name() != Some(expected.as_ref()) {
        bail!(
            "{} is corrupted (header for rank {} at {} ps)",
            file.path.display(),
            h.rank,
            h.sim_ps
        );
    }
    Ok(Opened {
        dir: dir.to_path_buf(),
        file,
    })
}

/// A rank's state read back from a checkpoint.
pub struct Restored {
    /// This rank's partitions, each with an empty outbox (one slot per out-neighbour).
    pub parts: Vec<(Partition, Outbox)>,
    /// The loop statistics at the boundary.
    pub stats: LoopStats,
    /// The window boundary the state is at, in ps.
    pub boundary_ps: u64,
}

/// Reads and decodes this rank's partitions, refusing another partition plan or a corrupted
/// file.
pub(crate) fn load(
    o: Opened,
    plan: &Plan,
    comm: &dyn Comm,
    pool: Option<&rayon::ThreadPool>,
) -> Result<Restored> {
    let started = Instant::now();
    let d = o.dir.display().to_string();
    let h = o.file.header.clone();
    if h.partitions != plan.parts {
        bail!(
            "checkpoint {d} is for {} partitions, this run has {}",
            h.partitions,
            plan.parts
        );
    }
    if h.plan != plan_hash(plan) {
        bail!("checkpoint {d} was written with another partition plan (give the same --partitions or --partition)");
    }
    let path = o.file.path.clone();
    let payload = store::read_payload(o.file)?;
    let mine = plan.parts_of_rank(comm.rank());
    if payload.pieces.len() != mine.len() + 1 {
        bail!(
            "{} is corrupted ({} pieces for {} partitions)",
            path.display(),
            payload.pieces.len(),
            mine.len()
        );
    }
    let cfg = bincode::config::standard();
    let undecodable = || anyhow!("{} is corrupted (undecodable)", path.display());
    let (stats, _): (LoopStats, usize) =
        bincode::serde::decode_from_slice(payload.piece(0), cfg).map_err(|_| undecodable())?;
    let decode = |i: usize| -> Option<Partition> {
        let (p, _): (Partition, usize) =
            bincode::serde::decode_from_slice(payload.piece(i + 1), cfg).ok()?;
        Some(p)
    };
    let parts: Vec<Option<Partition>> = match pool {
        Some(pool) => pool.install(|| {
            use rayon::prelude::*;
            (0..mine.len()).into_par_iter().map(decode).collect()
        }),
        None => (0..mine.len()).map(decode).collect(),
    };
    let mut out = Vec::with_capacity(mine.len());
    for (p, &id) in parts.into_iter().zip(&mine) {
        let p = p.filter(|p| p.id == id).ok_or_else(undecodable)?;
        let slots = plan.out_neighbors[id as usize].len();
        out.push((p, vec![Vec::new(); slots]));
    }
    if comm.rank() == 0 {
        eprintln!(
            "[weft] resumed from {} at {} ns (rank 0: {:.1} MB read and decoded in {:.3} s)",
            path.parent().unwrap_or(&path).display(),
            h.sim_ps as f64 / 1000.0,
            h.payload_bytes as f64 / 1e6,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(Restored {
        parts: out,
        stats,
        boundary_ps: h.sim_ps,
    })
}

/// A checkpoint written.
pub struct Saved {
    /// The checkpoint's folder, `dir/ckpt-<sim_ps>`.
    pub folder: PathBuf,
    /// The window boundary it was written at, in ps.
    pub sim_ps: u64,
    /// A rank got SIGUSR1 or SIGTERM: stop and ask to be requeued.
    pub requeue: bool,
}

/// Writes every rank's state at the engine's boundary into `dir/ckpt-<sim_ps>` and, once all
/// are durable, points `dir/LATEST` at it. All ranks call it at the same boundary.
pub fn save(engine: &Engine<'_>, dir: &Path, scenario: u64) -> Result<Saved> {
    let comm = engine.comm;
    let sim_ps = engine.boundary_ps;
    assert!(
        engine.outboxes.iter().flatten().all(|o| o.is_empty()),
        "outboxes are empty at a window boundary"
    );
    let folder = dir.join(store::folder_name(sim_ps));
    // Already the newest checkpoint (a restart asked to stop where it resumed): the state is
    // the same, so keep the files rather than rewrite the one LATEST names.
    let current = comm.rank() == 0 && store::latest(dir).ok().flatten().as_ref() == Some(&folder);
    let current = comm.broadcast_bytes(&[current as u8])[0] == 1;
    let started = Instant::now();
    if !current {
        let written = encode(engine).and_then(|pieces| {
            let h = Header {
                weft: version(),
                scenario,
                partitions: engine.plan.parts,
                ranks: comm.ranks(),
                plan: plan_hash(engine.plan),
                rank: comm.rank(),
                sim_ps,
                payload_bytes: 0,
                crc32: 0,
            };
            store::write_rank(&folder, h, &pieces)
        });
        let written = agree(
            written.with_context(|| format!("--checkpoint {}", dir.display())),
            comm,
        )?;
        if let Some(lines) = comm.gather_bytes(written.to_line().as_bytes()) {
            let lines: Vec<String> = lines
                .iter()
                .map(|l| String::from_utf8_lossy(l).into())
                .collect();
            agree(
                store::commit(dir, &folder, &lines)
                    .with_context(|| format!("--checkpoint {}", dir.display())),
                comm,
            )?;
            let bytes: u64 = lines
                .iter()
                .filter_map(|l| Header::parse(l.trim_end()).ok())
                .map(|h| h.payload_bytes)
                .sum();
            // One line per checkpoint on stderr (job logs): where, how big, how long.
            eprintln!(
                "[weft] checkpoint at {} ns: {} ({:.1} MB, {} ranks, written in {:.3} s)",
                sim_ps as f64 / 1000.0,
                folder.display(),
                bytes as f64 / 1e6,
                lines.len(),
                started.elapsed().as_secs_f64()
            );
        } else {
            agree(Ok(()), comm)?;
        }
    }
    // Any rank's signal stops every rank (decided together, after the checkpoint is durable).
    let requeue = comm.sum_u64(&[signals::requested() as u64])[0] > 0;
    Ok(Saved {
        folder,
        sim_ps,
        requeue,
    })
}

/// This rank's payload pieces: the loop statistics, then each partition (in parallel).
fn encode(engine: &Engine<'_>) -> Result<Vec<Vec<u8>>> {
    let cfg = bincode::config::standard();
    let mut pieces = vec![bincode::serde::encode_to_vec(engine.stats, cfg)?];
    let one =
        |p: &crossbeam::utils::CachePadded<Partition>| bincode::serde::encode_to_vec(&**p, cfg);
    let all = &engine.parts;
    let parts: Result<Vec<Vec<u8>>, _> = match engine.pool {
        Some(pool) => pool.install(|| {
            use rayon::prelude::*;
            all.par_iter().map(one).collect()
        }),
        None => all.iter().map(one).collect(),
    };
    pieces.extend(parts?);
    Ok(pieces)
}

/// How the window loop under checkpoints ended.
pub enum Drove {
    /// The run is over (as `Engine::run` would have ended it).
    Ended(Ending),
    /// Stopped after writing a checkpoint (`--stop-at`, or a signal).
    Saved(Saved),
}

/// Runs the engine to `end_ps`, writing checkpoints as `opts` asks.
pub fn drive(
    engine: &mut Engine<'_>,
    end_ps: u64,
    opts: &CheckpointOptions,
    scenario: u64,
    mut progress: Option<&mut dyn FnMut(ProgressSample)>,
) -> Result<Drove> {
    let Some(dir) = &opts.dir else {
        return Ok(Drove::Ended(engine.run(end_ps, progress)));
    };
    let root = engine.comm.rank() == 0;
    let wall_every = match opts.every {
        Some(Every::Wall(d)) => Some(d),
        _ => None,
    };
    let deadline = std::cell::Cell::new(wall_every.map(|d| Instant::now() + d));
    // Rank 0's clock decides wall-time checkpoints; any rank's signal counts.
    let pause =
        || signals::requested() || (root && deadline.get().is_some_and(|d| Instant::now() >= d));
    let stop_at = opts.stop_at_ps.unwrap_or(NEVER_PS);
    loop {
        let next_sim = match opts.every {
            Some(Every::SimPs(t)) => (engine.boundary_ps / t).saturating_add(1).saturating_mul(t),
            _ => NEVER_PS,
        };
        let target = end_ps.min(next_sim).min(stop_at);
        let p = progress
            .as_mut()
            .map(|f| &mut **f as &mut dyn FnMut(ProgressSample));
        let ending = engine.run_until(target, p, &pause);
        match ending {
            Ending::WorkloadDone | Ending::Idle => return Ok(Drove::Ended(ending)),
            Ending::Stopped if engine.boundary_ps >= end_ps => return Ok(Drove::Ended(ending)),
            Ending::Stopped | Ending::Interrupted => {}
        }
        let saved = save(engine, dir, scenario)?;
        deadline.set(wall_every.map(|d| Instant::now() + d));
        if std::env::var(TEST_RAISE_ENV).ok() == Some(engine.comm.rank().to_string()) {
            signals::request();
        }
        if saved.requeue || engine.boundary_ps >= stop_at {
            return Ok(Drove::Saved(saved));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_with_their_units() {
        assert_eq!(parse_sim_time("500ns").unwrap(), 500_000);
        assert_eq!(parse_sim_time("8us").unwrap(), 8_000_000);
        assert_eq!(parse_sim_time("2ms").unwrap(), 2_000_000_000);
        assert_eq!(parse_sim_time("1s").unwrap(), 1_000_000_000_000);
        assert_eq!(parse_sim_time("1.5us").unwrap(), 1_500_000);
        assert_eq!(parse_sim_time("7ps").unwrap(), 7);
        for bad in ["", "5", "us", "0us", "-1us", "1 min", "wall:1s", "nanus"] {
            assert!(parse_sim_time(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_every("8us").unwrap(), Every::SimPs(8_000_000));
        assert_eq!(
            parse_every("wall:30min").unwrap(),
            Every::Wall(Duration::from_secs(1800))
        );
        assert_eq!(
            parse_every("wall:90s").unwrap(),
            Every::Wall(Duration::from_secs(90))
        );
        assert_eq!(
            parse_every("wall:2h").unwrap(),
            Every::Wall(Duration::from_secs(7200))
        );
        assert_eq!(
            parse_every("wall:250ms").unwrap(),
            Every::Wall(Duration::from_millis(250))
        );
        for bad in ["wall:", "wall:5", "wall:0s", "wall:xs", "wall:-1min"] {
            assert!(parse_every(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn fnv_matches_its_reference_values() {
        // FNV-1a 64 test vectors (Fowler, Noll, Vo).
        assert_eq!(fnv64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
