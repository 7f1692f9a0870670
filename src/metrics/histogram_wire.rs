//! Histograms on the wire between ranks: HdrHistogram V2 deflate-compressed, the standard
//! encoding, so what a rank sends is what any HdrHistogram tool reads.

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

pub fn encode(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut out)
        .expect("histograms serialize");
    out
}

pub fn decode(bytes: &[u8]) -> Histogram<u64> {
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .expect("a histogram encoded by this build decodes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_merge_equal_direct_recording() {
        let mut a = crate::metrics::new_histogram();
        let mut b = crate::metrics::new_histogram();
        let mut both = crate::metrics::new_histogram();
        for v in [1u64, 5, 3000, 3001, 99_999, 7_000_000] {
            a.record(v).unwrap();
            both.record(v).unwrap();
        }
        for v in [2u64, 3000, 123_456_789] {
            b.record(v).unwrap();
            both.record(v).unwrap();
        }
        let mut merged = crate::metrics::new_histogram();
        merged.add(decode(&encode(&a))).unwrap();
        merged.add(decode(&encode(&b))).unwrap();
        assert_eq!(merged, both);
        assert_eq!(encode(&merged), encode(&both));
    }
}
