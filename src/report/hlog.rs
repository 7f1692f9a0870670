//! HdrHistogram interval logs (`.hlog`), readable by the standard HdrHistogram tools
//! (HistogramLogProcessor, hdrhistogram-py, ...). One interval per histogram, tagged, values in
//! ns, V2 deflate-compressed. The log's times are simulated seconds from the start of the run,
//! with StartTime/BaseTime 0, so the file is identical from run to run.

use anyhow::{anyhow, Result};
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use std::io::Write;
use std::time::Duration;

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
    let mut serializer = V2DeflateSerializer::new();
    let mut w = IntervalLogWriterBuilder::new().begin_log_with(out, &mut serializer)?;
    let length = Duration::from_nanos(duration_ps / 1000);
    for (tag, h) in hists {
        let tag = Tag::new(tag).ok_or_else(|| anyhow!("invalid hlog tag {tag}"))?;
        w.write_histogram(*h, Duration::ZERO, length, Some(tag))
            .map_err(|e| anyhow!("writing hlog: {e}"))?;
    }
    Ok(())
}
