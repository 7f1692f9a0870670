//! `weft sweep`, `weft collect` and `weft plot` through the real binary: grid and zip
//! expansion, bad sweep files refused before any point runs, resuming, means and standard
//! errors on a hand-made folder, figures that decode with the expected number of series, and
//! bad plot inputs refused with one line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use weft::sweep::plot::figure::PALETTE;
use weft::sweep::spec::SweepSpec;

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .expect("run weft")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The one `error:` line of a failed command.
fn one_error_line(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    stderr
}

/// The repository's quickstart scenario (absolute, so sweep files anywhere can name it).
fn quickstart() -> String {
    format!("{}/scenarios/quickstart.toml", env!("CARGO_MANIFEST_DIR"))
}

/// A sweep of tiny runs: a 16 KiB permutation on a k = 4 fat tree.
fn write_sweep(dir: &Path, tables: &str) -> PathBuf {
    let path = dir.join("s.toml");
    let text = format!(
        "scenario = {:?}\n[set]\n\"topology.k\" = 4\n\"workload.message_bytes\" = 16384\n{tables}",
        quickstart()
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn values(spec: &SweepSpec) -> Vec<String> {
    spec.points()
        .iter()
        .map(|p| {
            let v: Vec<String> = p.varied.iter().map(|a| a.value.to_string()).collect();
            v.join(" ")
        })
        .collect()
}

#[test]
fn grids_zips_and_both_expand_in_the_documented_order() {
    let parse = |t: &str| SweepSpec::parse(t, Path::new("s.toml")).unwrap();
    let grid = parse("scenario = \"b.toml\"\n[grid]\np = [\"x\", \"y\"]\nseed = [1, 2, 3]\n");
    assert_eq!(grid.len(), 6);
    assert_eq!(
        values(&grid),
        ["\"x\" 1", "\"x\" 2", "\"x\" 3", "\"y\" 1", "\"y\" 2", "\"y\" 3"]
    );
    let zip = parse("scenario = \"b.toml\"\n[zip]\na = [1, 2, 3]\nb = [4, 5, 6]\n");
    assert_eq!(zip.len(), 3);
    assert_eq!(values(&zip), ["1 4", "2 5", "3 6"]);
    // Zip rows slowest, then the grid fields in file order.
    let both = parse(
        "scenario = \"b.toml\"\n[grid]\nseed = [1, 2]\n[zip]\na = [1, 2, 3]\nb = [4, 5, 6]\n",
    );
    assert_eq!(both.len(), 6);
    assert_eq!(
        values(&both),
        ["1 4 1", "1 4 2", "2 5 1", "2 5 2", "3 6 1", "3 6 2"]
    );
    assert_eq!(both.varied_fields(), ["a", "b", "seed"]);
}

#[test]
fn every_shipped_sweep_file_is_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut n = 0;
    let files = ["sweeps", "reproduce"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"));
    for path in files {
        let spec = SweepSpec::load(&path).unwrap();
        spec.validate_points()
            .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
        n += 1;
    }
    assert!(n >= 1);
}

#[test]
fn unknown_field_and_empty_grid_are_refused_before_any_point_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let bad = write_sweep(
        dir.path(),
        "[grid]\n\"lb.polcy\" = [\"ecmp\"]\nseed = [1, 2]\n",
    );
    let e = one_error_line(&weft(&["sweep", s(&bad), "--out", s(&out)]));
    assert!(e.contains("lb.polcy") && e.contains("point 0"), "{e}");
    assert!(
        !out.exists(),
        "no point may run before every point is valid"
    );
    // A bad value in the last point only: still refused before the first runs.
    let bad = write_sweep(
        dir.path(),
        "[grid]\n\"lb.policy\" = [\"ecmp\", \"nosuch\"]\n",
    );
    let e = one_error_line(&weft(&["sweep", s(&bad), "--out", s(&out)]));
    assert!(e.contains("point 1") && e.contains("lb.policy"), "{e}");
    assert!(!out.exists());
    let empty = write_sweep(dir.path(), "[grid]\n");
    let e = one_error_line(&weft(&["sweep", s(&empty), "--out", s(&out)]));
    assert!(e.contains("grid: empty"), "{e}");
    let zip = write_sweep(
        dir.path(),
        "[zip]\nseed = [1, 2]\n\"lb.policy\" = [\"ecmp\"]\n",
    );
    let e = one_error_line(&weft(&["sweep", s(&zip), "--out", s(&out)]));
    assert!(
        e.contains("zip.lb.policy: 1 values, but zip.seed has 2"),
        "{e}"
    );
}

/// A sweep key that uses a per-policy setting's old flat name (`lb.psp_remote`, now
/// `lb.psp.remote`) is refused with the new name, in `[grid]`, `[zip]` and `[set]`, before
/// any point runs.
#[test]
fn old_flat_lb_names_in_sweep_keys_name_the_new_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (tables, at) in [
        (
            "[grid]\n\"lb.psp_remote\" = [true, false]\n",
            "grid.lb.psp_remote",
        ),
        ("[zip]\nlb.psp_remote = [true]\n", "zip.lb.psp_remote"),
        ("[grid]\nseed = [1]\n", "set.lb.psp_remote"),
    ] {
        let path = write_sweep(dir.path(), tables);
        if at.starts_with("set.") {
            let text = std::fs::read_to_string(&path).unwrap();
            let text = text.replace("[set]\n", "[set]\n\"lb.psp_remote\" = true\n");
            std::fs::write(&path, text).unwrap();
        }
        let e = one_error_line(&weft(&["sweep", s(&path), "--out", s(&out)]));
        assert!(
            e.contains(&format!(
                "{at}: lb.psp_remote was renamed: use lb.psp.remote ([lb.psp] remote = ...)"
            )),
            "{e}"
        );
        assert!(!out.exists(), "no point may run");
    }
}

/// The point folders of a sweep output, in index order.
fn point_dirs(out: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    let mut d: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("point.toml").is_file())
        .collect();
    d.sort();
    d
}

#[test]
fn a_rerun_runs_only_the_points_without_done() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let sweep = write_sweep(
        dir.path(),
        "[grid]\n\"lb.policy\" = [\"ecmp\", \"ofan\"]\nseed = [1, 2]\n",
    );
    let args = ["sweep", s(&sweep), "--out", s(&out), "--jobs", "2"];
    let first = weft(&args);
    assert!(first.status.success(), "{first:?}");
    let dirs = point_dirs(&out);
    let names: Vec<String> = dirs
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into())
        .collect();
    assert_eq!(
        names,
        ["000-ecmp_1", "001-ecmp_2", "002-ofan_1", "003-ofan_2"]
    );
    for d in &dirs {
        assert!(
            d.join("done").is_file() && d.join("summary.json").is_file(),
            "{}",
            d.display()
        );
    }
    // A finished point whose results were replaced must be left alone (not rerun) ...
    std::fs::write(dirs[0].join("summary.json"), "sentinel").unwrap();
    // ... and a point killed before its end (no `done`, partial files) must rerun.
    std::fs::remove_file(dirs[2].join("done")).unwrap();
    std::fs::write(dirs[2].join("summary.json"), "partial").unwrap();
    let kept: Vec<(Vec<u8>, std::time::SystemTime)> = [&dirs[1], &dirs[3]]
        .iter()
        .map(|d| {
            let f = d.join("summary.json");
            (
                std::fs::read(&f).unwrap(),
                std::fs::metadata(&f).unwrap().modified().unwrap(),
            )
        })
        .collect();
    let second = weft(&args);
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(second.status.success(), "{second:?}");
    assert!(stdout.contains("1 run, 3 skipped"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(dirs[0].join("summary.json")).unwrap(),
        "sentinel"
    );
    let rerun = std::fs::read_to_string(dirs[2].join("summary.json")).unwrap();
    assert!(
        rerun.contains("\"results\""),
        "point 2 was not rerun: {rerun}"
    );
    assert!(dirs[2].join("done").is_file());
    for (d, (bytes, mtime)) in [&dirs[1], &dirs[3]].iter().zip(&kept) {
        let f = d.join("summary.json");
        assert_eq!(&std::fs::read(&f).unwrap(), bytes);
        assert_eq!(
            &std::fs::metadata(&f).unwrap().modified().unwrap(),
            mtime,
            "{} reran",
            d.display()
        );
    }
    // A changed sweep file does not mix its points with the old ones.
    let changed = write_sweep(
        dir.path(),
        "[grid]\n\"lb.policy\" = [\"ecmp\", \"ofan\"]\nseed = [1, 3]\n",
    );
    let e = one_error_line(&weft(&["sweep", s(&changed), "--out", s(&out)]));
    assert!(e.contains("001-ecmp_2: a point of another sweep"), "{e}");
    assert!(!out.join("001-ecmp_3").exists());
}

/// A hand-made finished point.
fn hand_point(out: &Path, index: u32, policy: &str, seed: u32, cct_ns: f64, done: bool) {
    let d = out.join(format!("{index:03}-{policy}_{seed}"));
    std::fs::create_dir_all(&d).unwrap();
    let point = format!("index = {index}\nscenario = \"b.toml\"\n[fixed]\n[varied]\n\"lb.policy\" = \"{policy}\"\nseed = {seed}\n");
    std::fs::write(d.join("point.toml"), point).unwrap();
    let summary = format!(
        r#"{{"scenario": {{}}, "results": {{"cct_ns": {cct_ns}, "ended": "completed", "queues": {{"a": {{"max_bytes": {}}}}}, "phases": [1, 2]}}, "run": {{"wall_s": 0.5}}}}"#,
        seed * 100
    );
    std::fs::write(d.join("summary.json"), summary).unwrap();
    if done {
        std::fs::write(d.join("done"), "").unwrap();
    }
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

#[test]
fn collect_computes_means_and_standard_errors_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    // ecmp: CCT 10, 14 → mean 12, s² = (4 + 4)/1 = 8, se = √8/√2 = 2.
    hand_point(out, 0, "ecmp", 1, 10.0, true);
    hand_point(out, 1, "ecmp", 2, 14.0, true);
    // ofan: 1, 2, 6 → mean 3, s² = (4 + 1 + 9)/2 = 7, se = √(7/3).
    hand_point(out, 2, "ofan", 1, 1.0, true);
    hand_point(out, 3, "ofan", 2, 2.0, true);
    hand_point(out, 4, "ofan", 3, 6.0, true);
    // Not done: left out.
    hand_point(out, 5, "ofan", 4, 1000.0, false);
    let r = weft(&["collect", s(out)]);
    assert!(r.status.success(), "{r:?}");
    let (header, rows) = read_csv(&out.join("runs.csv"));
    assert_eq!(
        header,
        [
            "index",
            "lb.policy",
            "seed",
            "cct_ns",
            "ended",
            "queues.a.max_bytes",
            "wall_s",
            "events_per_s"
        ]
    );
    assert_eq!(rows.len(), 5);
    assert_eq!(
        rows[4],
        ["4", "ofan", "3", "6", "completed", "300", "0.5", ""]
    );
    let (header, rows) = read_csv(&out.join("summary.csv"));
    assert_eq!(
        &header[..5],
        ["lb.policy", "runs", "cct_ns_mean", "cct_ns_se", "cct_ns_n"]
    );
    assert!(
        !header
            .iter()
            .any(|h| h.starts_with("ended") || h.starts_with("events_per_s")),
        "{header:?}"
    );
    let num = |row: &[String], col: &str| -> f64 {
        row[header.iter().position(|h| h == col).unwrap()]
            .parse()
            .unwrap()
    };
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0][0].as_str(), rows[0][1].as_str()), ("ecmp", "2"));
    assert_eq!(num(&rows[0], "cct_ns_mean"), 12.0);
    assert!((num(&rows[0], "cct_ns_se") - 2.0).abs() < 1e-12);
    assert_eq!(num(&rows[0], "cct_ns_n"), 2.0);
    assert_eq!((rows[1][0].as_str(), rows[1][1].as_str()), ("ofan", "3"));
    assert_eq!(num(&rows[1], "cct_ns_mean"), 3.0);
    assert!((num(&rows[1], "cct_ns_se") - (7.0f64 / 3.0).sqrt()).abs() < 1e-12);
    // The extremes over each group's runs.
    assert_eq!(
        (num(&rows[0], "cct_ns_min"), num(&rows[0], "cct_ns_max")),
        (10.0, 14.0)
    );
    assert_eq!(
        (num(&rows[1], "cct_ns_min"), num(&rows[1], "cct_ns_max")),
        (1.0, 6.0)
    );
    // queues.a.max_bytes of ofan: 100, 200, 300 → mean 200, s² = 10000, se = 100/√3.
    assert_eq!(num(&rows[1], "queues.a.max_bytes_mean"), 200.0);
    assert!((num(&rows[1], "queues.a.max_bytes_se") - 100.0 / 3f64.sqrt()).abs() < 1e-9);
}

/// A sweep over `switch.buffer` carries the switch-level occupancy into `summary.csv` as it
/// does the per-port one: one column family per tier and `all`, the shared run's peak
/// within the pool (k = 4 fat tree: 4 ports × 20,000 bytes; sampled every 20 ns).
#[test]
fn switch_occupancy_reaches_the_sweep_summary() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let sweep = write_sweep(
        dir.path(),
        "\"switch.buffer_bytes\" = 20000\n\"switch.ecn_threshold_bytes\" = 10000\n\
         \"report.timeseries_us\" = 0.02\n\
         [grid]\n\"switch.buffer\" = [\"per_port\", \"shared\"]\n",
    );
    let r = weft(&["sweep", s(&sweep), "--out", s(&out)]);
    assert!(r.status.success(), "{r:?}");
    let r = weft(&["collect", s(&out)]);
    assert!(r.status.success(), "{r:?}");
    let (header, rows) = read_csv(&out.join("summary.csv"));
    for field in ["avg_bytes", "p99_bytes", "max_bytes", "samples"] {
        let tiers = ["edge", "agg", "core", "all"].map(|t| format!("switch_occupancy.{t}"));
        for table in tiers.iter().chain([&"buffer_occupancy.all".to_string()]) {
            let col = format!("{table}.{field}_mean");
            assert!(header.contains(&col), "{col} missing: {header:?}");
        }
    }
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1][col("switch.buffer")], "shared");
    let max: f64 = rows[1][col("switch_occupancy.all.max_bytes_mean")]
        .parse()
        .unwrap();
    assert!(max > 0.0 && max <= 80_000.0, "{max}");
}

/// Inputs of every plot kind: a summary.csv of 3 groups, two .hlog files, two summary.json
/// files with per-stage queues, a timeseries.csv of which 2 columns are plotted.
fn plot_inputs(dir: &Path) {
    let mut csv = String::from(
        "lb.policy,workload.message_bytes,runs,cct_increase_mean,cct_increase_se,cct_increase_n\n",
    );
    for (p, base) in [("ecmp", 0.5), ("ofan", 0.1), ("rsq", 0.2)] {
        for (i, size) in [65536, 262144, 1048576].iter().enumerate() {
            csv += &format!("{p},{size},2,{},{},2\n", base + i as f64 * 0.1, 0.02);
        }
    }
    std::fs::write(dir.join("summary.csv"), csv).unwrap();
    for (name, shift) in [("a.hlog", 0u64), ("b.hlog", 500)] {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for v in [1000u64, 1500, 2000, 4000] {
            h.record(v + shift).unwrap();
        }
        let mut f = std::fs::File::create(dir.join(name)).unwrap();
        weft::report::write_hlog(&mut f, 10_000_000, &[("latency_ns", &h), ("fct_ns", &h)])
            .unwrap();
    }
    for (name, q) in [("s1.json", 1000), ("s2.json", 3000)] {
        let json = format!(
            r#"{{"results": {{"queues": {{"host_edge": {{"max_bytes": {q}}}, "edge_agg": {{"max_bytes": {}}}, "agg_core": {{"max_bytes": 500}}}}}}}}"#,
            2 * q
        );
        std::fs::write(dir.join(name), json).unwrap();
    }
    let mut ts = String::from("time_us,a_util,b_util,goodput_gbps\n");
    for t in 1..=10 {
        ts += &format!(
            "{t},{},{},{}\n",
            t as f64 / 10.0,
            1.0 - t as f64 / 10.0,
            t * 100
        );
    }
    std::fs::write(dir.join("timeseries.csv"), ts).unwrap();
}

fn hex(c: &plotters::style::RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// Series colours used in an SVG: the palette entries that appear in it.
fn svg_series(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
        "{}",
        path.display()
    );
    let used: Vec<bool> = PALETTE.iter().map(|c| text.contains(&hex(c))).collect();
    let n = used.iter().take_while(|u| **u).count();
    assert!(
        used[n..].iter().all(|u| !u),
        "palette colours used out of order: {used:?}"
    );
    n
}

/// Decodes a PNG: checks its size and that it is not blank; returns the palette entries that
/// appear as pixels.
fn png_series(path: &Path, width: u32, height: u32) -> usize {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (width, height));
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let pixels: Vec<[u8; 3]> = buf[..info.buffer_size()]
        .chunks(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    let not_white = pixels.iter().filter(|p| **p != [255, 255, 255]).count();
    assert!(
        not_white > 1000,
        "{}: nearly blank ({not_white} pixels drawn)",
        path.display()
    );
    let used: Vec<bool> = PALETTE
        .iter()
        .map(|c| pixels.contains(&[c.0, c.1, c.2]))
        .collect();
    let n = used.iter().take_while(|u| **u).count();
    assert!(
        used[n..].iter().all(|u| !u),
        "palette colours used out of order: {used:?}"
    );
    n
}

#[test]
fn every_plot_kind_writes_an_svg_and_a_png_with_its_series() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    plot_inputs(d);
    let p = |f: &str| d.join(f).to_str().unwrap().to_string();
    let kinds: [(&str, Vec<String>, usize); 4] = [
        (
            "line",
            vec![
                "line".into(),
                p("summary.csv"),
                "--x".into(),
                "workload.message_bytes".into(),
                "--y".into(),
                "cct_increase".into(),
                "--group".into(),
                "lb.policy".into(),
            ],
            3,
        ),
        (
            "cdf",
            vec![
                "cdf".into(),
                p("a.hlog"),
                p("b.hlog"),
                "--tag".into(),
                "fct_ns".into(),
            ],
            2,
        ),
        (
            "bars",
            vec![
                "bars".into(),
                p("s1.json"),
                p("s2.json"),
                "--label".into(),
                "one".into(),
                "--label".into(),
                "two".into(),
            ],
            2,
        ),
        (
            "timeseries",
            vec![
                "timeseries".into(),
                p("timeseries.csv"),
                "--y".into(),
                "a_util,b_util".into(),
            ],
            2,
        ),
    ];
    for (name, args, series) in kinds {
        for ext in ["svg", "png"] {
            let out = d.join(format!("{name}.{ext}"));
            let mut all: Vec<&str> = vec!["plot"];
            all.extend(args.iter().map(String::as_str));
            all.extend(["-o", s(&out), "--width", "640", "--height", "400"]);
            let r = weft(&all);
            assert!(r.status.success(), "{name}: {r:?}");
            let got = if ext == "svg" {
                svg_series(&out)
            } else {
                png_series(&out, 640, 400)
            };
            assert_eq!(got, series, "{}", out.display());
        }
    }
    // Log axes: the same series.
    let out = d.join("line_log.png");
    let r = weft(&[
        "plot",
        "line",
        &p("summary.csv"),
        "--x",
        "workload.message_bytes",
        "--y",
        "cct_increase",
        "--group",
        "lb.policy",
        "--logx",
        "--logy",
        "-o",
        s(&out),
    ]);
    assert!(r.status.success(), "{r:?}");
    assert_eq!(png_series(&out, 800, 500), 3);
    // The legend names the groups, and the axes their columns.
    let svg = std::fs::read_to_string(d.join("line.svg")).unwrap();
    for label in [
        "lb.policy = ecmp",
        "lb.policy = ofan",
        "lb.policy = rsq",
        "workload.message_bytes",
        "cct_increase",
    ] {
        assert!(svg.contains(label), "{label}");
    }
    assert!(std::fs::read_to_string(d.join("cdf.svg"))
        .unwrap()
        .contains("fct (ns)"));
}

#[test]
fn bad_plot_inputs_are_refused_with_one_line_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    plot_inputs(d);
    let p = |f: &str| d.join(f).to_str().unwrap().to_string();
    let out = p("x.svg");
    let e = one_error_line(&weft(&[
        "plot",
        "line",
        &p("summary.csv"),
        "--x",
        "workload.message_bytes",
        "--y",
        "nosuch",
        "-o",
        &out,
    ]));
    assert!(e.contains("summary.csv") && e.contains("\"nosuch\""), "{e}");
    let e = one_error_line(&weft(&[
        "plot",
        "timeseries",
        &p("timeseries.csv"),
        "--y",
        "a_util,zz_util",
        "-o",
        &out,
    ]));
    assert!(e.contains("\"zz_util\""), "{e}");
    std::fs::write(
        d.join("bad.hlog"),
        "#[comment]\nTag=latency_ns,0.0,1.0,5.0,bm90IGEgaGlzdG9ncmFt\n",
    )
    .unwrap();
    let e = one_error_line(&weft(&["plot", "cdf", &p("bad.hlog"), "-o", &out]));
    assert!(e.contains("bad.hlog: line 2: does not decode"), "{e}");
    std::fs::write(d.join("empty.hlog"), "not an hlog at all\n").unwrap();
    let e = one_error_line(&weft(&["plot", "cdf", &p("empty.hlog"), "-o", &out]));
    assert!(e.contains("empty.hlog: line 1: does not decode"), "{e}");
    let e = one_error_line(&weft(&[
        "plot",
        "cdf",
        &p("a.hlog"),
        "--tag",
        "nosuch_ns",
        "-o",
        &out,
    ]));
    assert!(e.contains("no histogram tagged \"nosuch_ns\""), "{e}");
    let e = one_error_line(&weft(&[
        "plot",
        "bars",
        &p("s1.json"),
        "--metric",
        "queues.avg_pkts",
        "-o",
        &out,
    ]));
    assert!(
        e.contains("results.queues.host_edge.avg_pkts: missing"),
        "{e}"
    );
    let e = one_error_line(&weft(&[
        "plot",
        "timeseries",
        &p("timeseries.csv"),
        "--y",
        "b_util",
        "--logy",
        "-o",
        &out,
    ]));
    assert!(
        e.contains("--logy: a logarithmic axis needs positive values (got 0)"),
        "{e}"
    );
    let e = one_error_line(&weft(&["plot", "cdf", &p("a.hlog"), "-o", &p("x.pdf")]));
    assert!(e.contains(".svg or .png"), "{e}");
    assert!(!d.join("x.svg").exists() && !d.join(".x.svg.partial.svg").exists());
}

#[test]
fn the_slurm_script_runs_one_point_per_array_task() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let sweep = write_sweep(dir.path(), "[grid]\nseed = [1, 2, 3]\n");
    let r = weft(&["sweep", s(&sweep), "--out", s(&out), "--slurm"]);
    assert!(r.status.success(), "{r:?}");
    assert!(String::from_utf8_lossy(&r.stdout).contains("sbatch "));
    let script = out.join("sweep.sbatch");
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(text.contains("#SBATCH --array=0-2\n"), "{text}");
    assert!(point_dirs(&out).is_empty(), "--slurm must not run points");
    let e = one_error_line(&weft(&[
        "sweep",
        s(&sweep),
        "--out",
        s(&out),
        "--only",
        "3",
    ]));
    assert!(e.contains("--only 3: the sweep has points 0 to 2"), "{e}");
    // What an array task does, without Slurm.
    let task = Command::new("bash")
        .arg(&script)
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("WEFT_BIN", env!("CARGO_BIN_EXE_weft"))
        .output()
        .unwrap();
    assert!(task.status.success(), "{task:?}");
    let dirs = point_dirs(&out);
    assert_eq!(dirs.len(), 1);
    assert!(
        dirs[0].ends_with("001-2") && dirs[0].join("done").is_file(),
        "{dirs:?}"
    );
}

#[test]
fn a_killed_sweep_resumes_without_rerunning_finished_points() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Points of about 0.1 s (k = 8, 1 MB permutation), one at a time.
    let path = dir.path().join("s.toml");
    let text = format!(
        "scenario = {:?}\n[grid]\nseed = [1, 2, 3, 4, 5, 6]\n",
        quickstart()
    );
    std::fs::write(&path, text).unwrap();
    let args = ["sweep", s(&path), "--out", s(&out), "--jobs", "1"];
    // Its own process group, killed as a whole (as Ctrl-C or a job scheduler does).
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let done_count = || {
        point_dirs(&out)
            .iter()
            .filter(|d| d.join("done").is_file())
            .count()
    };
    let started = std::time::Instant::now();
    while done_count() == 0 {
        assert!(started.elapsed().as_secs() < 60, "no point finished");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let group = format!("-{}", child.id());
    let killed = Command::new("kill")
        .args(["-KILL", "--", &group])
        .status()
        .unwrap();
    assert!(killed.success());
    child.wait().unwrap();
    let finished: Vec<(PathBuf, std::time::SystemTime)> = point_dirs(&out)
        .into_iter()
        .filter(|d| d.join("done").is_file())
        .map(|d| {
            let t = std::fs::metadata(d.join("summary.json"))
                .unwrap()
                .modified()
                .unwrap();
            (d, t)
        })
        .collect();
    assert!(
        (1..6).contains(&finished.len()),
        "killed after {} points",
        finished.len()
    );
    let rerun = weft(&args);
    assert!(rerun.status.success(), "{rerun:?}");
    let stdout = String::from_utf8_lossy(&rerun.stdout);
    let expect = format!("{} run, {} skipped", 6 - finished.len(), finished.len());
    assert!(stdout.contains(&expect), "{stdout}");
    for (d, t) in &finished {
        let now = std::fs::metadata(d.join("summary.json"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(&now, t, "{} reran", d.display());
    }
    assert_eq!(done_count(), 6);
}

#[test]
fn a_failing_point_is_reported_and_does_not_stop_the_others() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(dir.path(), "[grid]\nseed = [1, 2, 3]\n");
    // A stand-in for `weft run`: fails for seed 2, otherwise writes a summary into --out.
    let fake = dir.path().join("fake-weft");
    std::fs::write(
        &fake,
        "#!/bin/sh\nout=\ncase \"$*\" in *seed=2*) echo 'error: boom' >&2; exit 1;; esac\n\
         while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n\
         echo '{\"results\": {}, \"run\": {}}' > \"$out/summary.json\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = SweepSpec::load(&sweep).unwrap();
    let out = dir.path().join("out");
    let opts = weft::sweep::runner::RunnerOptions {
        out: out.clone(),
        jobs: 2,
        only: None,
        weft_bin: fake,
    };
    let o = weft::sweep::runner::run(&spec, &opts).unwrap();
    assert_eq!((o.ran, o.skipped), (3, 0));
    assert_eq!(o.failed, [out.join("001-2")]);
    let dirs = point_dirs(&out);
    let done: Vec<bool> = dirs.iter().map(|d| d.join("done").is_file()).collect();
    assert_eq!(done, [true, false, true]);
    assert_eq!(
        std::fs::read_to_string(dirs[1].join("stderr.txt")).unwrap(),
        "error: boom\n"
    );
    // The real binary then finishes only the failed point.
    let r = weft(&["sweep", s(&sweep), "--out", s(&out)]);
    assert!(
        String::from_utf8_lossy(&r.stdout).contains("1 run, 2 skipped"),
        "{r:?}"
    );
    assert!(dirs[1].join("done").is_file());
}
