//! FCT by flow size (`report.fct_bins_bytes`, `results.fct_by_size`, the `fct_ns.bin_*`
//! histograms of `latency.hlog`): a completed flow's FCT goes to the first bin whose upper
//! edge is ≥ its payload bytes, or to the overflow bin after the last edge. The histograms
//! are kept and merged like the per-phase ones (`Metrics::fct_by_size_ns`, grown on first
//! use, merged by addition), so they do not depend on threads, partitions or ranks. No
//! edges: no bins, nothing recorded.

/// The bin of a flow of `bytes` (`edges.len()`: the overflow bin). `edges` is not empty.
#[inline]
pub(crate) fn bin_of(edges: &[u64], bytes: u64) -> usize {
    edges.partition_point(|&e| e < bytes)
}

/// Number of bins (the overflow bin included) for `edges`; 0 when there are none.
pub(crate) fn bins(edges: &[u64]) -> usize {
    if edges.is_empty() {
        0
    } else {
        edges.len() + 1
    }
}

/// The hlog tag of bin `i`: `fct_ns.bin_LE_<edge>`, or `fct_ns.bin_GT_<last edge>`.
pub(crate) fn tag(edges: &[u64], i: usize) -> String {
    match edges.get(i) {
        Some(e) => format!("fct_ns.bin_LE_{e}"),
        None => format!("fct_ns.bin_GT_{}", edges[edges.len() - 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_lands_in_the_first_bin_whose_edge_holds_it() {
        let e = [10_000, 100_000];
        assert_eq!(bin_of(&e, 1), 0);
        assert_eq!(bin_of(&e, 10_000), 0);
        assert_eq!(bin_of(&e, 10_001), 1);
        assert_eq!(bin_of(&e, 100_000), 1);
        assert_eq!(bin_of(&e, 100_001), 2);
        assert_eq!(bins(&e), 3);
        assert_eq!(bins(&[]), 0);
        assert_eq!(tag(&e, 1), "fct_ns.bin_LE_100000");
        assert_eq!(tag(&e, 2), "fct_ns.bin_GT_100000");
    }
}
