//! Checkpoint/restart through the `weft` binary: a run stopped with `--stop-at` (or by a
//! signal, or at wall-time checkpoints) and resumed with `--restart` writes the same
//! `results`, `latency.hlog` and `node_events.csv` as a run that never stopped — with drops,
//! trims, retransmission timers and NIC pacing timers pending at the stop; and checkpoints
//! from another scenario, weft version, rank count or plan, or corrupted ones, are refused
//! with one line.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_weft");

/// Paced hosts (NIC wake-up timers pending at any time), DRILL with periodic refresh timers,
/// buffers of two packets (drops; no loss recovery: the run ends idle with flows incomplete).
const PACED: &str = "seed = 3\n[topology]\nk = 6\n[lb]\npolicy = \"drill\"\nstate_update_period_ns = 1500.0\n[host]\nload = 0.8\n[switch]\nbuffer_bytes = 8316\necn_threshold_bytes = 4000\n[workload]\nmessage_bytes = 400000\n[report]\ntrace_hosts = [0, 7]\nflow_log = true\n";

/// NSCC over REPS with trimming, ECN ramps, random loss and RTO timers: a reliable transport
/// that retransmits after drops.
const NSCC: &str = "seed = 5\n[topology]\nk = 6\n[lb]\npolicy = \"reps\"\n[host]\ncc = \"nscc\"\nload = 1.0\n[switch]\nbuffer_bytes = 30000\ntrim = true\necn = \"ramp\"\nloss_fraction = 0.01\n[workload]\nmessage_bytes = 400000\n[report]\ntrace_hosts = [0, 7]\nflow_log = true\n";

fn weft(args: &[&str]) -> Output {
    weft_env(args, &[])
}

fn weft_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("weft starts")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn error_lines(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("error:"))
        .map(String::from)
        .collect()
}

/// Writes a scenario file into `dir`.
fn scenario(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// What must be identical: `results`, and every other file `--out` wrote (latency.hlog,
/// node_events.csv, timeseries.csv, cwnd.csv, flows.csv), by name.
type Outputs = (Value, Vec<(String, Vec<u8>)>);

fn outputs(out: &Path) -> Outputs {
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(n, _)| n != "summary.json")
        .map(|(n, p)| (n, std::fs::read(p).unwrap()))
        .collect();
    files.sort();
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    for want in [
        "latency.hlog",
        "node_events.csv",
        "timeseries.csv",
        "cwnd.csv",
        "flows.csv",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    (summary["results"].clone(), files)
}

fn run_ok(args: &[&str]) -> Output {
    let o = weft(args);
    assert!(o.status.success(), "weft {args:?}: {}", stderr(&o));
    o
}

/// An uninterrupted run's outputs (3 partitions, 2 threads).
fn reference(dir: &Path, scen: &str) -> Outputs {
    let name = Path::new(scen).file_stem().unwrap().to_string_lossy();
    let out = dir.join(format!("ref-{name}"));
    run_ok(&[
        "run",
        scen,
        "--threads",
        "2",
        "--partitions",
        "3",
        "--out",
        s(&out),
    ]);
    outputs(&out)
}

/// Runs `scen` (2 threads, 3 partitions) up to `stop`, checkpointing into `ck-TAG`, then
/// resumes it with one thread (the partitions come from the checkpoint) into `out-TAG`:
/// the stopped run's output and both folders.
fn stop_and_resume(dir: &Path, scen: &str, tag: &str, stop: &str) -> (Output, PathBuf, PathBuf) {
    let (ck, out) = (
        dir.join(format!("ck-{tag}")),
        dir.join(format!("out-{tag}")),
    );
    let o = run_ok(&[
        "run",
        scen,
        "--threads",
        "2",
        "--partitions",
        "3",
        "--checkpoint",
        s(&ck),
        "--stop-at",
        stop,
    ]);
    run_ok(&[
        "run",
        scen,
        "--threads",
        "1",
        "--restart",
        s(&ck),
        "--out",
        s(&out),
    ]);
    (o, ck, out)
}

/// The `[weft] checkpoint at X ns: FOLDER` lines of a run, as (X in ps, folder name).
fn checkpoints_written(o: &Output) -> Vec<(u64, String)> {
    stderr(o)
        .lines()
        .filter_map(|l| l.strip_prefix("[weft] checkpoint at "))
        .map(|l| {
            let (ns, rest) = l.split_once(" ns: ").unwrap();
            let folder = rest.split(' ').next().unwrap();
            let name = Path::new(folder).file_name().unwrap().to_string_lossy();
            (
                (ns.parse::<f64>().unwrap() * 1000.0).round() as u64,
                name.into(),
            )
        })
        .collect()
}

fn latest(ck: &Path) -> String {
    std::fs::read_to_string(ck.join("LATEST"))
        .unwrap()
        .trim()
        .to_string()
}

fn ckpt_folders(ck: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(ck)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ckpt-"))
        .collect();
    v.sort();
    v
}

#[test]
fn a_run_stopped_and_restarted_at_several_points_ends_like_an_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, stops) in [
        (
            "paced",
            PACED,
            [
                ("1us", 1_000_000),
                ("3300ns", 3_300_000),
                ("6us", 6_000_000),
            ],
        ),
        (
            "nscc",
            NSCC,
            [
                ("2us", 2_000_000),
                ("5500ns", 5_500_000),
                ("20us", 20_000_000),
            ],
        ),
    ] {
        let scen = scenario(dir.path(), name, text);
        let expected = reference(dir.path(), &scen);
        let r = &expected.0;
        assert!(
            r["packets"]["dropped"].as_u64().unwrap() > 0,
            "{name}: drops"
        );
        let end_ns = r["end_ns"].as_f64().unwrap();
        for (stop, stop_ps) in stops {
            let (o, ck, out) = stop_and_resume(dir.path(), &scen, &format!("{name}-{stop}"), stop);
            let said = String::from_utf8_lossy(&o.stdout);
            assert!(said.starts_with("checkpoint at simulated time "), "{said}");
            assert!(!ck.join("ref").exists() && ck.join("LATEST").exists());
            let written = checkpoints_written(&o);
            assert_eq!(written.len(), 1, "{}", stderr(&o));
            // The first window boundary at or after the stop, before the end of the run.
            assert!(written[0].0 >= stop_ps && (written[0].0 as f64) < end_ns * 1000.0);
            assert_eq!(latest(&ck), written[0].1);
            let got = outputs(&out);
            let summary: Value =
                serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
            let resumed = summary["run"]["resumed_at_ns"].as_f64().unwrap();
            assert_eq!(
                (resumed * 1000.0).round() as u64,
                written[0].0,
                "resumed, not rerun"
            );
            assert!(
                got.0 == expected.0,
                "{name}: results differ after a stop at {stop}"
            );
            let names = |o: &Outputs| o.1.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
            assert_eq!(names(&got), names(&expected));
            for (g, e) in got.1.iter().zip(&expected.1) {
                assert!(g == e, "{name}: {} differs after a stop at {stop}", e.0);
            }
        }
    }
}

#[test]
fn a_restarted_run_can_stop_again_and_checkpoint_every_keeps_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let scen = scenario(dir.path(), "nscc", NSCC);
    let expected = reference(dir.path(), &scen);
    let ck = dir.path().join("ck");
    let common = ["run", &scen, "--threads", "2", "--partitions", "3"];
    // Stop at 3 us; resume to 9 us writing a checkpoint every 2 us; resume to the end.
    let a = run_ok(&[&common[..], &["--checkpoint", s(&ck), "--stop-at", "3us"]].concat());
    let first = checkpoints_written(&a);
    let b = run_ok(
        &[
            &common[..],
            &[
                "--restart",
                s(&ck),
                "--checkpoint",
                s(&ck),
                "--checkpoint-every",
                "2us",
            ],
            &["--stop-at", "9us"],
        ]
        .concat(),
    );
    let written = checkpoints_written(&b);
    // Boundaries at or after 4, 6 and 8 us (the multiples of 2 us after the 3 us
    // checkpoint), then the one at or after 9 us; windows are 0.5 us long here, so each is
    // less than a window after its target.
    let targets = [4_000_000u64, 6_000_000, 8_000_000, 9_000_000];
    assert!(
        first[0].0 >= 3_000_000 && first[0].0 < 4_000_000,
        "{first:?}"
    );
    let got: Vec<u64> = written.iter().map(|w| w.0).collect();
    assert_eq!(got.len(), targets.len(), "{written:?}");
    for (&g, &t) in got.iter().zip(&targets) {
        assert!(
            g >= t && g < t + 500_000,
            "checkpoint at {g} ps for target {t}"
        );
    }
    // LATEST names the newest, and the older folders are gone.
    assert_eq!(latest(&ck), written.last().unwrap().1);
    assert_eq!(ckpt_folders(&ck), [written.last().unwrap().1.clone()]);
    let out = dir.path().join("out");
    run_ok(&[&common[..], &["--restart", s(&ck), "--out", s(&out)]].concat());
    assert!(outputs(&out) == expected, "a twice-restarted run differs");

    // --checkpoint-every on a whole run changes nothing in its outputs.
    let out2 = dir.path().join("out2");
    let ck2 = dir.path().join("ck2");
    let c = run_ok(
        &[
            &common[..],
            &[
                "--checkpoint",
                s(&ck2),
                "--checkpoint-every",
                "8us",
                "--out",
                s(&out2),
            ],
        ]
        .concat(),
    );
    assert!(checkpoints_written(&c).len() >= 3, "{}", stderr(&c));
    assert!(
        outputs(&out2) == expected,
        "--checkpoint-every changed the outputs"
    );
}

#[test]
fn a_half_written_checkpoint_folder_is_ignored_and_then_removed() {
    let dir = tempfile::tempdir().unwrap();
    let scen = scenario(dir.path(), "paced", PACED);
    let expected = reference(dir.path(), &scen);
    let ck = dir.path().join("ck");
    let common = ["run", &scen, "--threads", "2", "--partitions", "3"];
    run_ok(&[&common[..], &["--checkpoint", s(&ck), "--stop-at", "2us"]].concat());
    let good = latest(&ck);
    // A crash while writing a later checkpoint: a folder LATEST does not name, with a
    // temp file and a garbage rank file.
    let crashed = ck.join("ckpt-99999999");
    std::fs::create_dir(&crashed).unwrap();
    std::fs::write(crashed.join("rank-0.bin"), b"garbage").unwrap();
    std::fs::write(crashed.join("rank-1.bin.tmp"), b"half").unwrap();
    let out = dir.path().join("out");
    run_ok(
        &[
            &common[..],
            &[
                "--restart",
                s(&ck),
                "--checkpoint",
                s(&ck),
                "--stop-at",
                "4us",
            ],
        ]
        .concat(),
    );
    assert_ne!(latest(&ck), good);
    assert_eq!(ckpt_folders(&ck), [latest(&ck)], "leftovers are removed");
    run_ok(&[&common[..], &["--restart", s(&ck), "--out", s(&out)]].concat());
    assert!(outputs(&out) == expected);
}

/// Refused with exactly one `error:` line containing `want`, exit status 1.
fn refused(o: &Output, want: &str) {
    let lines = error_lines(o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    assert_eq!(lines.len(), 1, "{}", stderr(o));
    assert!(lines[0].contains(want), "{:?} lacks {want:?}", lines[0]);
}

/// Replaces `from` by `to` in the header line of `file`.
fn edit_header(file: &Path, from: &str, to: &str) {
    let bytes = std::fs::read(file).unwrap();
    let nl = bytes.iter().position(|&b| b == b'\n').unwrap();
    let line = String::from_utf8(bytes[..nl].to_vec()).unwrap();
    assert!(line.contains(from), "{line}");
    let mut edited = line.replacen(from, to, 1).into_bytes();
    edited.extend_from_slice(&bytes[nl..]);
    std::fs::write(file, edited).unwrap();
}

#[test]
fn mismatched_or_corrupted_checkpoints_are_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let scen = scenario(dir.path(), "paced", PACED);
    let ck = dir.path().join("ck");
    let common = ["run", &scen, "--threads", "2", "--partitions", "3"];
    run_ok(&[&common[..], &["--checkpoint", s(&ck), "--stop-at", "2us"]].concat());
    let folder = ck.join(latest(&ck));
    let file = folder.join("rank-0.bin");
    let pristine = std::fs::read(&file).unwrap();
    let restart = |extra: &[&str]| weft(&[&common[..], &["--restart", s(&ck)], extra].concat());

    // Another scenario: one --set more.
    refused(&restart(&["--set", "seed=2"]), "is from another scenario");
    // Another partition count.
    refused(
        &weft(&["run", &scen, "--partitions", "2", "--restart", s(&ck)]),
        "is for 3 partitions, this run has 2",
    );
    // A flipped byte in the payload.
    let mut flipped = pristine.clone();
    let at = pristine.len() - 100;
    flipped[at] ^= 0x10;
    std::fs::write(&file, &flipped).unwrap();
    refused(&restart(&[]), "is corrupted (checksum)");
    // Truncated.
    std::fs::write(&file, &pristine[..pristine.len() - 1]).unwrap();
    refused(&restart(&[]), "is corrupted (truncated or too long)");
    // Another weft version (the header names the version that wrote it).
    std::fs::write(&file, &pristine).unwrap();
    edit_header(&file, "weft=", "weft=0.0.0-other+");
    let o = restart(&[]);
    refused(&o, "was written by weft 0.0.0-other+");
    assert!(error_lines(&o)[0].contains(", this is weft "));
    // Another rank count.
    std::fs::write(&file, &pristine).unwrap();
    edit_header(&file, "ranks=1", "ranks=2");
    refused(&restart(&[]), "is for 2 ranks, this run has 1");
    // Not a checkpoint at all.
    std::fs::write(&file, b"hello\n").unwrap();
    refused(&restart(&[]), "is corrupted");
    // The pristine file restarts fine.
    std::fs::write(&file, &pristine).unwrap();
    run_ok(&[&common[..], &["--restart", s(&ck)]].concat());
    // No checkpoint there at all.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    refused(
        &weft(&["run", &scen, "--restart", s(&empty)]),
        "no checkpoint there (no LATEST file)",
    );
    // Flags.
    refused(
        &weft(&["run", &scen, "--stop-at", "1us"]),
        "--stop-at: needs --checkpoint DIR",
    );
    refused(
        &weft(&["run", &scen, "--checkpoint-every", "1us"]),
        "--checkpoint-every: needs --checkpoint DIR",
    );
    let c = s(&ck);
    refused(
        &weft(&["run", &scen, "--checkpoint", c, "--stop-at", "5"]),
        "--stop-at",
    );
    refused(
        &weft(&[
            "run",
            &scen,
            "--checkpoint",
            c,
            "--checkpoint-every",
            "wall:5",
        ]),
        "--checkpoint-every",
    );
}

#[test]
fn a_signal_checkpoints_and_exits_75_and_the_run_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let scen = scenario(dir.path(), "nscc", NSCC);
    let expected = reference(dir.path(), &scen);
    let ck = dir.path().join("ck");
    let common = ["run", &scen, "--threads", "2", "--partitions", "3"];
    // The flag is raised (as SIGUSR1 would) right after the 2 us checkpoint: the run stops at
    // the next window boundary, which is that checkpoint's (no window ran since), so it is not
    // written again; status 75.
    let o = weft_env(
        &[
            &common[..],
            &["--checkpoint", s(&ck), "--checkpoint-every", "2us"],
        ]
        .concat(),
        &[("WEFT_TEST_SIGNAL_AFTER_CHECKPOINT", "0")],
    );
    assert_eq!(o.status.code(), Some(75), "{}", stderr(&o));
    assert!(error_lines(&o).is_empty(), "{}", stderr(&o));
    let written = checkpoints_written(&o);
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].0 >= 2_000_000 && written[0].0 < 2_500_000);
    assert_eq!(latest(&ck), written[0].1);
    let said = String::from_utf8_lossy(&o.stdout);
    let ns = written[0].0 as f64 / 1000.0;
    assert!(
        said.contains(&format!("checkpoint at simulated time {ns} ns")),
        "{said}"
    );
    let out = dir.path().join("out");
    run_ok(&[&common[..], &["--restart", s(&ck), "--out", s(&out)]].concat());
    assert!(outputs(&out) == expected);
}

#[test]
fn sigusr1_from_outside_checkpoints_and_the_run_resumes() {
    let dir = tempfile::tempdir().unwrap();
    // Long enough (about a second) to be signalled mid-run.
    let text = NSCC.replace("message_bytes = 400000", "message_bytes = 20000000");
    let scen = scenario(dir.path(), "long", &text);
    let ck = dir.path().join("ck");
    let args = [
        "run",
        &scen,
        "--partitions",
        "3",
        "--checkpoint",
        s(&ck),
        "--checkpoint-every",
        "20us",
    ];
    let child = Command::new(BIN)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The handler is installed before the first checkpoint: wait for one.
    let start = std::time::Instant::now();
    while !ck.join("LATEST").exists() {
        assert!(start.elapsed().as_secs() < 120, "no checkpoint written");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let first = latest(&ck);
    let kill = Command::new("kill")
        .args(["-USR1", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(75), "{}", stderr(&o));
    // At the next window boundary: a new checkpoint, or the first one again if the signal
    // came before the run went past it (the same state; not written twice).
    let ps = |name: &str| name.trim_start_matches("ckpt-").parse::<u64>().unwrap();
    assert!(ps(&latest(&ck)) >= ps(&first));
    let out = dir.path().join("out");
    run_ok(&[
        "run",
        &scen,
        "--partitions",
        "3",
        "--restart",
        s(&ck),
        "--out",
        s(&out),
    ]);
    let whole = dir.path().join("whole");
    run_ok(&["run", &scen, "--partitions", "3", "--out", s(&whole)]);
    assert!(outputs(&out) == outputs(&whole));
}

#[test]
fn wall_time_checkpoints_change_nothing_in_the_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let scen = scenario(dir.path(), "nscc", NSCC);
    let expected = reference(dir.path(), &scen);
    let ck = dir.path().join("ck");
    let out = dir.path().join("out");
    // Every millisecond of wall time: a checkpoint every few windows.
    let o = run_ok(&[
        "run",
        &scen,
        "--threads",
        "2",
        "--partitions",
        "3",
        "--checkpoint",
        s(&ck),
        "--checkpoint-every",
        "wall:1ms",
        "--out",
        s(&out),
    ]);
    let written = checkpoints_written(&o);
    assert!(!written.is_empty(), "{}", stderr(&o));
    assert!(written.windows(2).all(|w| w[0].0 < w[1].0), "{written:?}");
    assert!(outputs(&out) == expected);
}

/// Opera with RotorLB (rack planning, Valiant relays, stale bounces) and NDP at once: the
/// combined workload on 12 racks of 2 hosts.
const OPERA: &str = "seed = 1\n[topology]\nkind = \"opera\"\nracks = 12\nhosts_per_rack = 2\n\
uplinks = 4\nlink_rate_gbps = 10\nlink_latency_ns = 500\n[topology.tiers.host_tor]\nlatency_ns = 0\n\
[topology.opera]\nepsilon_ns = 20000\nreconfig_ns = 2000\nrealizations = 20\n[packet]\n\
payload_bytes = 1436\nheader_bytes = 64\n[lb]\npolicy = \"rps\"\n[host]\ncc = \"ndp\"\n[switch]\n\
trim = true\nbuffer_bytes = 12000\necn_threshold_bytes = 12000\n[workload]\nkind = \"poisson\"\n\
size_cdf = \"sizes.csv\"\nload = 0.5\nduration_us = 200\n[workload.with_shuffle]\n\
message_bytes = 100000\nstart_us = 100\nbulk = true\n";

#[test]
fn an_opera_run_with_rotorlb_and_ndp_in_flight_resumes_identically() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sizes.csv"), "1000,0.5\n20000,1\n").unwrap();
    let scen = scenario(dir.path(), "opera", OPERA);
    let full = dir.path().join("full");
    run_ok(&["run", &scen, "--out", s(&full)]);
    let read = |out: &Path| {
        let summary: Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        let hlog = std::fs::read(out.join("latency.hlog")).unwrap();
        (summary["results"].clone(), hlog)
    };
    let want = read(&full);
    assert_eq!(want.0["flows"]["incomplete"], 0);
    for stop in ["150us", "1ms"] {
        let ck = dir.path().join(format!("ck-{stop}"));
        run_ok(&["run", &scen, "--checkpoint", s(&ck), "--stop-at", stop]);
        let out = dir.path().join(format!("resumed-{stop}"));
        run_ok(&[
            "run",
            &scen,
            "--restart",
            s(&ck),
            "--threads",
            "2",
            "--out",
            s(&out),
        ]);
        assert!(want == read(&out), "resumed from {stop}");
    }
}

/// A paced ring AllReduce over the 16 hosts of a k = 4 fat tree (30 dependent steps of 3
/// packets per member, a 300 ns compute delay: ready steps wait at the stops).
const RING: &str =
    "seed = 7\n[topology]\nk = 4\n[lb]\npolicy = \"ofan\"\n[workload]\nkind = \"ring\"\n\
collective = \"all_reduce\"\nmessage_bytes = 196608\nstep_delay_ns = 300\n[report]\n\
trace_hosts = [0, 7]\nflow_log = true\n";

/// FSDP2 in ring mode on 64 GPUs of a k = 8 fat tree (8 rings of 8 servers, random
/// placement, 3 layers of 7 steps of 4 packets) under NSCC with trims and random loss:
/// retransmissions and timers of running steps pending at the stops.
const FSDP2_RING: &str = "seed = 11\n[topology]\nk = 8\n[lb]\npolicy = \"reps\"\n[host]\n\
cc = \"nscc\"\n[switch]\nbuffer_bytes = 30000\necn_threshold_bytes = 15000\ntrim = true\nloss_fraction = 0.002\n[workload]\n\
kind = \"fsdp2\"\nlayer_params = [512000, 512000, 512000]\ngpus = 64\nplacement = \"random\"\n\
mode = \"ring\"\n[report]\ntrace_hosts = [0, 7]\nflow_log = true\n";

#[test]
fn a_ring_stopped_mid_way_resumes_its_generated_steps_identically() {
    // A ring's steps are generated as their predecessor's data arrives and freed as they
    // complete; the checkpoint holds the running steps, the trigger bookkeeping (counted
    // packets, missing dependencies, ready steps, start times) and the hosts' cursors.
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("ring", RING), ("fsdp2", FSDP2_RING)] {
        let scen = scenario(dir.path(), name, text);
        let expected = reference(dir.path(), &scen);
        let r = &expected.0;
        assert_eq!(r["flows"]["incomplete"], 0, "{name}");
        let end_ns = r["end_ns"].as_f64().unwrap();
        for frac in [0.2, 0.5, 0.8] {
            let stop = format!("{}ns", (end_ns * frac) as u64);
            let (o, _, out) = stop_and_resume(dir.path(), &scen, &format!("{name}-{frac}"), &stop);
            let written = checkpoints_written(&o);
            assert_eq!(written.len(), 1, "{}", stderr(&o));
            assert!((written[0].0 as f64) < end_ns * 1000.0, "{name}: mid-way");
            let got = outputs(&out);
            assert!(
                got.0 == expected.0,
                "{name}: results differ after a stop at {stop}"
            );
            assert_eq!(got.1.len(), expected.1.len());
            for (g, e) in got.1.iter().zip(&expected.1) {
                assert!(g == e, "{name}: {} differs after a stop at {stop}", e.0);
            }
        }
    }
}
