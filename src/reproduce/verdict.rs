//! Evaluates a claim on its sweep's table: the metric with its standard error, and whether
//! the paper's statement holds. The verdict reads the mean alone (the error is reported next
//! to it, not used to widen a tolerance): a claim's tolerance says how close counts.

use super::claims::{Claim, Test};
use super::expr::{ColumnRef, Condition, Expr, Measured};
use super::table::{NotRun, SummaryTable};
use anyhow::Result;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Agrees,
    Disagrees,
    NotRun,
    /// The claim itself is wrong (a bad expression, an unknown column): bad input.
    Error,
}

impl Verdict {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Verdict::Agrees => "AGREES",
            Verdict::Disagrees => "DISAGREES",
            Verdict::NotRun => "NOT RUN",
            Verdict::Error => "ERROR",
        }
    }
}

/// One line of the report.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub id: String,
    pub figure: String,
    pub paper: String,
    /// What weft measured, as text (value ± standard error, or the ordered values).
    pub weft: String,
    /// The test, as text ("< 1", "within 20 % of 7.3", ...).
    pub test: String,
    pub verdict: Verdict,
    /// Why it is not run, the error, or the claim's known reason and note.
    pub note: String,
    /// The claim marks its disagreement as known and explained.
    pub known: bool,
    /// The measured value lies within one standard error of the test's boundary, on either
    /// side: the verdict reads the mean, but these seeds cannot tell.
    pub within_se: bool,
}

/// Three significant digits, without a trailing exponent for ordinary magnitudes.
pub(crate) fn fmt3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..6).contains(&mag) {
        return format!("{v:.2e}");
    }
    let decimals = (2 - mag).max(0) as usize;
    format!("{v:.decimals$}")
}

/// Decimals that show a value at the resolution of its tolerance (at least 3 significant
/// digits): a bound tested to 0.005 ns prints as 17057.940, not 17058.
fn tolerance_decimals(value: f64, rel_tol: f64, abs_tol: f64) -> usize {
    let tol = (rel_tol * value.abs()).max(abs_tol);
    if tol <= 0.0 || !tol.is_finite() {
        return 3;
    }
    (1.0 - tol.log10().floor()).clamp(0.0, 9.0) as usize
}

pub(crate) fn fmt_measured(m: Measured) -> String {
    // Below 1e-9 of the value an error is rounding noise (an exact fit), not a measurement.
    if m.se > 1e-9 * m.value.abs() {
        format!("{} ± {}", fmt3(m.value), fmt3(m.se))
    } else {
        fmt3(m.value)
    }
}

pub(crate) fn describe(test: &Test) -> String {
    match test {
        Test::Value {
            value,
            rel_tol,
            abs_tol,
        } => {
            let mut parts = Vec::new();
            if *rel_tol > 0.0 {
                parts.push(format!("{} %", fmt3(rel_tol * 100.0)));
            }
            if *abs_tol > 0.0 {
                parts.push(fmt3(*abs_tol));
            }
            if parts.is_empty() {
                parts.push("0".into());
            }
            let decimals = tolerance_decimals(*value, *rel_tol, *abs_tol);
            format!("within {} of {value:.decimals$}", parts.join(" or "))
        }
        Test::Below(b) => format!("< {}", fmt3(*b)),
        Test::Above(a) => format!("> {}", fmt3(*a)),
        Test::Between(lo, hi) => format!("in [{}, {}]", fmt3(*lo), fmt3(*hi)),
        Test::Ascending => "ascending".into(),
        Test::Exponent { x, lo, hi } => {
            format!("exponent in {x} within [{}, {}]", fmt3(*lo), fmt3(*hi))
        }
    }
}

/// Evaluates `claim` on `table` (none: its sweep was not run at this size, for `why`).
pub(crate) fn evaluate(claim: &Claim, table: Option<&SummaryTable>, why_not: &str) -> Outcome {
    let mut o = Outcome {
        id: claim.id.clone(),
        figure: claim.figure.clone(),
        paper: claim.paper.clone(),
        weft: String::new(),
        test: describe(&claim.test),
        verdict: Verdict::NotRun,
        note: String::new(),
        known: claim.known.is_some(),
        within_se: false,
    };
    let Some(table) = table else {
        o.note = why_not.to_string();
        return o;
    };
    match measure(claim, table) {
        Ok(m) => {
            o.weft = m.text;
            o.verdict = if m.holds {
                Verdict::Agrees
            } else {
                Verdict::Disagrees
            };
            o.within_se = m.within_se;
        }
        Err(e) => match e.downcast_ref::<NotRun>() {
            Some(n) => o.note = n.0.clone(),
            None => {
                o.verdict = Verdict::Error;
                o.note = format!("{e:#}").replace('\n', "; ");
            }
        },
    }
    if o.verdict != Verdict::Error && o.verdict != Verdict::NotRun {
        let mut notes = Vec::new();
        if o.within_se {
            let side = if o.verdict == Verdict::Agrees {
                "holds"
            } else {
                "misses"
            };
            notes.push(format!(
                "{side} by less than one standard error: these seeds cannot tell."
            ));
        }
        if let Some(k) = &claim.known {
            if o.verdict == Verdict::Disagrees {
                notes.push(format!("known: {k}"));
            }
        }
        if let Some(n) = &claim.note {
            notes.push(n.clone());
        }
        o.note = notes.join(" ");
    }
    o
}

/// What a test measured: the text, whether it holds, and whether the value lies within one
/// standard error of the test's boundary, holding or not (then the seeds cannot tell; the
/// verdict still reads the mean). Both sides are flagged so that a report shows its fragile
/// agreements as plainly as its fragile disagreements.
struct Measurement {
    text: String,
    holds: bool,
    within_se: bool,
}

/// Signed distance from `v` to the boundary of [lo, hi]: positive outside (by how much it
/// misses), negative inside (minus the slack to the nearer end).
fn miss(v: f64, lo: f64, hi: f64) -> f64 {
    (lo - v).max(v - hi)
}

fn measure(claim: &Claim, table: &SummaryTable) -> Result<Measurement> {
    let (text, holds, margin, se) = measure_parts(claim, table)?;
    Ok(Measurement {
        text,
        holds,
        within_se: se > 0.0 && margin.abs() <= se,
    })
}

/// The text, whether the test holds, its signed margin (positive: by how much it misses;
/// negative: the slack by which it holds) and the standard error of that margin.
fn measure_parts(claim: &Claim, table: &SummaryTable) -> Result<(String, bool, f64, f64)> {
    match &claim.test {
        Test::Ascending => {
            let vals = claim
                .metrics
                .iter()
                .map(|m| m.eval(table))
                .collect::<Result<Vec<_>>>()?;
            let text: Vec<String> = claim
                .labels
                .iter()
                .zip(&vals)
                .map(|(l, v)| format!("{l} {}", fmt_measured(*v)))
                .collect();
            let holds = vals.windows(2).all(|w| w[0].value <= w[1].value);
            // Failing: the worst inversion and its error. Holding: the pair nearest to
            // inverting, counted in its own errors (the largest margin + error).
            let key = |(m, se): (f64, f64)| if holds { m + se } else { m };
            let (margin, se) = vals
                .windows(2)
                .map(|w| (w[0].value - w[1].value, w[0].se.hypot(w[1].se)))
                .fold((f64::MIN, 0.0), |a, b| if key(b) > key(a) { b } else { a });
            Ok((text.join(" ≤ "), holds, margin, se))
        }
        Test::Exponent { x, lo, hi } => {
            let (slope, n) = exponent(&claim.metrics[0], x, table)?;
            let holds = (*lo..=*hi).contains(&slope.value);
            Ok((
                format!("exponent {} over {n} values of {x}", fmt_measured(slope)),
                holds,
                miss(slope.value, *lo, *hi),
                slope.se,
            ))
        }
        t => {
            let m = claim.metrics[0].eval(table)?;
            let v = m.value;
            let holds = match *t {
                Test::Value {
                    value,
                    rel_tol,
                    abs_tol,
                } => (v - value).abs() <= (rel_tol * value.abs()).max(abs_tol),
                Test::Below(b) => v < b,
                Test::Above(a) => v > a,
                Test::Between(lo, hi) => (lo..=hi).contains(&v),
                Test::Ascending | Test::Exponent { .. } => unreachable!("handled above"),
            };
            let margin = match *t {
                Test::Value {
                    value,
                    rel_tol,
                    abs_tol,
                } => {
                    let tol = (rel_tol * value.abs()).max(abs_tol);
                    miss(v, value - tol, value + tol)
                }
                Test::Below(b) => v - b,
                Test::Above(a) => a - v,
                Test::Between(lo, hi) => miss(v, lo, hi),
                Test::Ascending | Test::Exponent { .. } => unreachable!("handled above"),
            };
            let text = match *t {
                Test::Value {
                    value,
                    rel_tol,
                    abs_tol,
                } if fmt3(v).parse::<f64>().is_ok_and(|shown| {
                    (shown - v).abs() > (rel_tol * value.abs()).max(abs_tol) / 10.0
                }) =>
                {
                    let d = tolerance_decimals(value, rel_tol, abs_tol);
                    if m.se > 1e-9 * v.abs() {
                        format!("{v:.d$} ± {}", fmt3(m.se))
                    } else {
                        format!("{v:.d$}")
                    }
                }
                _ => fmt_measured(m),
            };
            Ok((text, holds, margin, m.se))
        }
    }
}

/// `e` with `field=value` added to each column reference that does not select `field`.
fn pinned(e: &Expr, field: &str, value: &str) -> Expr {
    match e {
        Expr::Column(c) if !c.select.iter().any(|s| s.field == field) => {
            let mut select = c.select.clone();
            select.push(Condition {
                field: field.to_string(),
                value: value.to_string(),
                contains: false,
            });
            Expr::Column(ColumnRef {
                column: c.column.clone(),
                stat: c.stat,
                select,
            })
        }
        Expr::Number(_) | Expr::Column(_) => e.clone(),
        Expr::Neg(a) => Expr::Neg(Box::new(pinned(a, field, value))),
        Expr::Binary(op, a, b) => Expr::Binary(
            *op,
            Box::new(pinned(a, field, value)),
            Box::new(pinned(b, field, value)),
        ),
        Expr::Call(f, args) => {
            Expr::Call(*f, args.iter().map(|a| pinned(a, field, value)).collect())
        }
    }
}

/// The least-squares slope of ln(metric) on ln(x) over the values of `x` in the table, with
/// its standard error (0 with two points), and the number of points.
fn exponent(metric: &Expr, x: &str, table: &SummaryTable) -> Result<(Measured, usize)> {
    if !table.is_varied(x) {
        return Err(NotRun(format!(
            "{x} is not varied at this size of sweep {}",
            table.sweep
        ))
        .into());
    }
    let mut points = Vec::new();
    for xv in table.values_of(x) {
        let xf: f64 = xv
            .parse()
            .map_err(|_| anyhow::anyhow!("x: {x}={xv} is not a number"))?;
        let y = match pinned(metric, x, &xv).eval(table) {
            Ok(y) => y.value,
            Err(e) if e.downcast_ref::<NotRun>().is_some() => continue,
            Err(e) => return Err(e),
        };
        if xf <= 0.0 || y <= 0.0 {
            anyhow::bail!(
                "exponent: the metric is {y} at {x}={xv}: a growth exponent needs positive values"
            );
        }
        points.push((xf.ln(), y.ln()));
    }
    if points.len() < 2 {
        return Err(NotRun(format!("fewer than two values of {x} were run")).into());
    }
    Ok((fit_slope(&points), points.len()))
}

/// Ordinary least squares slope of y on x, with its standard error.
pub(crate) fn fit_slope(points: &[(f64, f64)]) -> Measured {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let se = if points.len() > 2 {
        let sse: f64 = points
            .iter()
            .map(|p| (p.1 - my - slope * (p.0 - mx)).powi(2))
            .sum();
        (sse / (n - 2.0) / sxx).sqrt()
    } else {
        0.0
    };
    Measured { value: slope, se }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::claims::ClaimsFile;
    use crate::reproduce::table::SummaryTable;
    use std::collections::BTreeMap;
    use std::path::Path;

    /// q grows linearly in m for rps, stays flat for ofan; c is a percentage.
    fn table() -> SummaryTable {
        let split = |s: &str| s.split(',').map(str::to_string).collect::<Vec<_>>();
        let rows = [
            "ofan,1,2,10,1,2,0.5,0.1,2",
            "ofan,4,2,10,1,2,0.6,0.1,2",
            "ofan,16,2,10,1,2,0.4,0.1,2",
            "rps,1,2,20,2,2,5,0.5,2",
            "rps,4,2,80,2,2,6,0.5,2",
            "rps,16,2,320,2,2,7,0.5,2",
            "reps,1,2,5,0,2,,,0",
        ];
        SummaryTable::new(
            "t",
            split("lb.policy,m,runs,q_mean,q_se,q_n,c_mean,c_se,c_n"),
            rows.iter().map(|r| split(r)).collect(),
            BTreeMap::new(),
        )
    }

    fn verdicts(claims: &str) -> Vec<(Verdict, String)> {
        let head = "paper = \"p\"\ntitle = \"P\"\n[sweep.s]\nfile = \"s.toml\"\nlaptop = {}\n";
        let f = ClaimsFile::parse(&format!("{head}{claims}"), Path::new("p.toml")).unwrap();
        assert!(f.bad.is_empty(), "{:?}", f.bad);
        let t = table();
        f.claims
            .iter()
            .map(|c| {
                let o = evaluate(c, Some(&t), "");
                (o.verdict, format!("{} | {}", o.weft, o.note))
            })
            .collect()
    }

    fn claim(test: &str) -> String {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!(
            "[[claim]]\nid = \"p.x{n}\"\nfigure = \"1\"\npaper = \"x\"\nsweep = \"s\"\n{test}\n"
        )
    }

    #[test]
    fn value_and_inequality_tests_pass_and_fail() {
        use Verdict::*;
        let v = verdicts(&[
            claim("metric = \"c[lb.policy=ofan, m=4]\"\nbelow = 1"),
            claim("metric = \"c[lb.policy=rps, m=4]\"\nbelow = 1.0"),
            claim("metric = \"c[lb.policy=rps, m=4] / c[lb.policy=ofan, m=4]\"\nvalue = 10\nrel_tol = 0.0"),
            claim("metric = \"c[lb.policy=rps, m=4] / c[lb.policy=ofan, m=4]\"\nvalue = 9.5\nrel_tol = 0.06"),
            claim("metric = \"c[lb.policy=rps, m=16] - c[lb.policy=ofan, m=16]\"\nabove = 6.5"),
            claim("metric = \"c[lb.policy=rps, m=16] - c[lb.policy=ofan, m=16]\"\nabove = 6.6001"),
            claim("metric = \"q[lb.policy=rps, m=1]\"\nbetween = [20, 20]"),
            claim("metric = \"q[lb.policy=rps, m=1]\"\nvalue = 21\nabs_tol = 0.5"),
            claim("metric = \"c[lb.policy=rps, m=1]\"\nbelow = 4.6"),
        ]
        .concat());
        let got: Vec<Verdict> = v.iter().map(|(v, _)| *v).collect();
        assert_eq!(
            got,
            [Agrees, Disagrees, Agrees, Agrees, Agrees, Disagrees, Agrees, Disagrees, Disagrees]
        );
        // 5 ± 0.5 against < 4.6 misses by 0.4: within one standard error, and said so.
        assert!(
            v[8].1.contains("less than one standard error"),
            "{}",
            v[8].1
        );
        // q[rps, m=1] = 20 ± 2 against 21 ± 0.5 misses by 0.5: within, said so too.
        assert!(
            v[7].1.contains("less than one standard error"),
            "{}",
            v[7].1
        );
        assert!(
            !v[1].1.contains("less than one standard error"),
            "{}",
            v[1].1
        );
        assert!(v[0].1.starts_with("0.600 ± 0.100"), "{}", v[0].1);
    }

    #[test]
    fn a_verdict_within_one_standard_error_is_flagged_on_either_side() {
        use Verdict::*;
        let v = verdicts(
            &[
                // c[rps, m=4] = 6 ± 0.5.
                claim("metric = \"c[lb.policy=rps, m=4]\"\nbelow = 6.3"),
                claim("metric = \"c[lb.policy=rps, m=4]\"\nbelow = 7"),
                claim("metric = \"c[lb.policy=rps, m=4]\"\nvalue = 5.8\nabs_tol = 0.5"),
                // 0.5 ± 0.1 then 0.6 ± 0.1: holds by 0.1 < √0.02 ≈ 0.14.
                claim("ascending = [\"c[lb.policy=ofan, m=1]\", \"c[lb.policy=ofan, m=4]\"]"),
                // 0.4 ± 0.1 then 5 ± 0.5: holds by far.
                claim("ascending = [\"c[lb.policy=ofan, m=16]\", \"c[lb.policy=rps, m=1]\"]"),
            ]
            .concat(),
        );
        let got: Vec<Verdict> = v.iter().map(|(v, _)| *v).collect();
        assert_eq!(got, [Agrees, Agrees, Agrees, Agrees, Agrees]);
        let fragile = |i: usize| v[i].1.contains("holds by less than one standard error");
        assert!(fragile(0), "6 ± 0.5 < 6.3 holds by 0.3: {}", v[0].1);
        assert!(!fragile(1), "6 ± 0.5 < 7 holds by 1: {}", v[1].1);
        assert!(
            fragile(2),
            "6 ± 0.5 within 5.8 ± 0.5 holds by 0.3: {}",
            v[2].1
        );
        assert!(fragile(3), "{}", v[3].1);
        assert!(!fragile(4), "{}", v[4].1);
        assert!(v.iter().all(|(_, n)| !n.contains("misses by")));
    }

    #[test]
    fn ordering_tests_pass_and_fail() {
        use Verdict::*;
        let v = verdicts(&[
            claim("ascending = [\"c[lb.policy=ofan, m=1]\", \"c[lb.policy=rps, m=1]\"]\nlabels = [\"ofan\", \"rps\"]"),
            claim("ascending = [\"q[lb.policy=rps, m=1]\", \"q[lb.policy=ofan, m=1]\"]"),
            claim("ascending = [\"q[lb.policy=ofan, m=1]\", \"q[lb.policy=ofan, m=4]\"]"),
            claim("ascending = [\"c[lb.policy=rps, m=4]\", \"c[lb.policy=rps, m=1]\"]"),
        ]
        .concat());
        // rps at m = 4 (6 ± 0.5) above m = 1 (5 ± 0.5): a miss of 1 > √0.5 ≈ 0.71.
        assert_eq!(v[3].0, Disagrees);
        assert!(!v[3].1.contains("less than one standard error"));
        assert!(!v[1].1.contains("less than one standard error"));
        assert_eq!(v[0].0, Agrees);
        assert_eq!(v[0].1, "ofan 0.500 ± 0.100 ≤ rps 5.00 ± 0.500 | ");
        assert_eq!(v[1].0, Disagrees);
        // Ties are in order.
        assert_eq!(v[2].0, Agrees);
    }

    #[test]
    fn growth_exponents_separate_the_classes() {
        use Verdict::*;
        let v = verdicts(
            &[
                claim("metric = \"q[lb.policy=rps]\"\nx = \"m\"\nexponent = [0.9, 1.1]"),
                claim("metric = \"q[lb.policy=ofan]\"\nx = \"m\"\nexponent = [-0.1, 0.1]"),
                claim("metric = \"q[lb.policy=rps]\"\nx = \"m\"\nexponent = [0.4, 0.6]"),
                claim("metric = \"q[lb.policy=reps]\"\nx = \"m\"\nexponent = [0.4, 0.6]"),
            ]
            .concat(),
        );
        assert_eq!(v[0].0, Agrees, "{}", v[0].1);
        assert!(
            v[0].1.starts_with("exponent 1.00 over 3 values of m"),
            "{}",
            v[0].1
        );
        assert_eq!(v[1].0, Agrees);
        assert_eq!(v[2].0, Disagrees);
        // One value of m run for reps: not enough for a slope.
        assert_eq!(v[3].0, NotRun);
    }

    #[test]
    fn a_claim_naming_a_missing_column_is_an_error_and_a_missing_row_not_run() {
        let v = verdicts(
            &[
                claim("metric = \"util[lb.policy=ofan, m=1]\"\nbelow = 1"),
                claim("metric = \"c[lb.policy=reps, m=1]\"\nbelow = 1"),
            ]
            .concat(),
        );
        assert_eq!(v[0].0, Verdict::Error);
        assert!(v[0].1.contains("util: no such column"));
        assert_eq!(v[1].0, Verdict::NotRun);
    }

    #[test]
    fn slope_by_hand() {
        // y = 2x + 1 exactly, then with residuals ±1 around y = x.
        let s = fit_slope(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]);
        assert!((s.value - 2.0).abs() < 1e-12 && s.se < 1e-12);
        let s = fit_slope(&[(0.0, 1.0), (1.0, 0.0), (2.0, 3.0), (3.0, 2.0)]);
        // slope 3/5; residuals 0.4, -1.2, 1.2, -0.4: sse = 3.2; sxx = 5.
        assert!((s.value - 0.6).abs() < 1e-12);
        assert!((s.se - (3.2f64 / 2.0 / 5.0).sqrt()).abs() < 1e-12);
        assert_eq!(fmt3(0.0123456), "0.0123");
        assert_eq!(fmt3(1234.6), "1235");
        assert_eq!(fmt3(17.05), "17.1");
        assert_eq!(tolerance_decimals(17056.94, 0.0, 0.005), 4);
        assert_eq!(tolerance_decimals(7.3, 0.2, 0.0), 1);
    }
}
