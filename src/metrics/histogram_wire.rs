//! Histograms on the wire between ranks: HdrHistogram V2 deflate-compressed, the standard
//! encoding, so what a rank sends is what any HdrHistogram tool reads.

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// Encodes a histogram as HdrHistogram V2 deflate bytes.
pub fn encode(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut out)
        .expect("histograms serialize");
    out
}

/// Decodes bytes made by [`encode`] (panics on anything else).
pub fn decode(bytes: &[u8]) -> Histogram<u64> {
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .expect("a histogram encoded by this build decodes")
}

/// Serde for histograms (checkpoints): the same V2 deflate bytes as on the wire. A decoded
/// recording histogram grows again as it records (auto-resize is not part of the encoding).
pub(crate) mod serde_v2 {
    use hdrhistogram::Histogram;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Serializes `h` as its [`super::encode`] bytes.
    pub(crate) fn serialize<S: Serializer>(h: &Histogram<u64>, s: S) -> Result<S::Ok, S::Error> {
        super::encode(h).serialize(s)
    }
    /// Reads a histogram back from its V2 deflate bytes, auto-resizing.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Histogram<u64>, D::Error> {
        let bytes = Vec::<u8>::deserialize(d)?;
        let mut h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| serde::de::Error::custom(format!("histogram: {e:?}")))?;
        h.auto(true);
        Ok(h)
    }
}

/// Serde for a list of histograms (one per stage), each as in [`serde_v2`].
pub(crate) mod serde_v2_vec {
    use hdrhistogram::Histogram;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Serializes each histogram as its [`super::encode`] bytes.
    pub(crate) fn serialize<S: Serializer>(hs: &[Histogram<u64>], s: S) -> Result<S::Ok, S::Error> {
        hs.iter()
            .map(super::encode)
            .collect::<Vec<_>>()
            .serialize(s)
    }
    /// Reads the list back, each histogram auto-resizing.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<Histogram<u64>>, D::Error> {
        let all = Vec::<Vec<u8>>::deserialize(d)?;
        all.iter()
            .map(|bytes| {
                let mut h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
                    .deserialize(&mut &bytes[..])
                    .map_err(|e| serde::de::Error::custom(format!("histogram: {e:?}")))?;
                h.auto(true);
                Ok(h)
            })
            .collect()
    }
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
