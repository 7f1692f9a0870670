//! HdrHistogram interval logs (`.hlog`), readable by the standard HdrHistogram tools
//! (HistogramLogProcessor, hdrhistogram-py, ...): one interval per histogram, tagged, values in
//! ns, V2 deflate-compressed and base64-encoded. Times are simulated seconds from the start of
//! the run with StartTime/BaseTime 0, so the file is identical from run to run.
//!
//! The lines are written here rather than by the hdrhistogram crate's log writer, which
//! prints times with 3 decimals: a simulated run lasts microseconds, so its interval length
//! would read 0.000. Nine decimals keep nanoseconds.

use crate::sim::RunOutput;
use anyhow::Result;
use base64::Engine;
use hdrhistogram::Histogram;
use std::io::Write;

/// Writes an interval log of the tagged histograms `hists`, each as one interval covering
/// the run's `duration_ps` from time 0.
pub fn write_hlog(
    out: &mut impl Write,
    duration_ps: u64,
    hists: &[(&str, &Histogram<u64>)],
) -> Result<()> {
    writeln!(
        out,
        "#[weft one-way latency and FCT histograms, values in ns, times in simulated seconds]"
    )?;
    writeln!(out, "#[StartTime: 0.000 (seconds since epoch)]")?;
    writeln!(out, "#[BaseTime: 0.000 (seconds since epoch)]")?;
    writeln!(
        out,
        "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
    )?;
    let length_s = duration_ps as f64 / 1e12;
    for (tag, h) in hists {
        assert!(
            !tag.contains([',', ' ', '\n']),
            "hlog tags are single words"
        );
        let encoded = base64::engine::general_purpose::STANDARD
            .encode(crate::metrics::histogram_wire::encode(h));
        writeln!(
            out,
            "Tag={tag},{:.9},{length_s:.9},{:.3},{encoded}",
            0.0,
            h.max() as f64
        )?;
    }
    Ok(())
}

/// The run's `latency.hlog`: tags `latency_ns` and `fct_ns`, then one `latency_ns.PHASE`
/// per phase of a collective, in phase order (one-way latency of the phase's data packets;
/// empty if none arrived), merged across partitions and ranks like the others; then one
/// `fct_ns.PHASE` per phase (FCT of its completed flows); then one
/// `fct_ns.bin_LE_<bytes>` per FCT size bin and `fct_ns.bin_GT_<last edge>` (empty when
/// no flow of the bin completed; none without `report.fct_bins_bytes`).
pub fn write_run_hlog(out: &mut impl Write, o: &RunOutput) -> Result<()> {
    let m = &o.metrics;
    let empty = crate::metrics::new_histogram();
    let tags: Vec<String> = o
        .phase_names
        .iter()
        .map(|name| format!("latency_ns.{name}"))
        .collect();
    let fct_tags: Vec<String> = o
        .phase_names
        .iter()
        .map(|name| format!("fct_ns.{name}"))
        .collect();
    let bins = crate::metrics::fct_bins::bins(&o.fct_bins_bytes);
    let bin_tags: Vec<String> = (0..bins)
        .map(|i| crate::metrics::fct_bins::tag(&o.fct_bins_bytes, i))
        .collect();
    let mut hists = vec![("latency_ns", &m.latency_ns), ("fct_ns", &m.fct_ns)];
    for (i, tag) in tags.iter().enumerate() {
        hists.push((tag, m.phase_latency_ns.get(i).unwrap_or(&empty)));
    }
    for (i, tag) in fct_tags.iter().enumerate() {
        hists.push((tag, m.phase_fct_ns.get(i).unwrap_or(&empty)));
    }
    for (i, tag) in bin_tags.iter().enumerate() {
        hists.push((tag, m.fct_by_size_ns.get(i).unwrap_or(&empty)));
    }
    write_hlog(out, o.end_ps, &hists)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_decode_back_to_the_histogram_with_its_interval() {
        let mut h = crate::metrics::new_histogram();
        for v in [1_083u64, 3_427, 3_731] {
            h.record(v).unwrap();
        }
        let mut out = Vec::new();
        write_hlog(&mut out, 17_353_300, &[("latency_ns", &h)]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with("Tag=latency_ns,"))
            .expect("interval line");
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields[1], "0.000000000");
        assert_eq!(fields[2], "0.000017353");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(fields[4])
            .unwrap();
        assert_eq!(crate::metrics::histogram_wire::decode(&bytes), h);
        // The crate's own log reader parses it too.
        let mut n = 0;
        for item in
            hdrhistogram::serialization::interval_log::IntervalLogIterator::new(text.as_bytes())
        {
            if let hdrhistogram::serialization::interval_log::LogEntry::Interval(i) = item.unwrap()
            {
                assert_eq!(i.tag().unwrap().as_str(), "latency_ns");
                n += 1;
            }
        }
        assert_eq!(n, 1);
    }
}
