//! MoE routing traces: how many tokens each GPU of an expert-parallel (EP) group sends to each
//! other over the scale-out network in one MoE layer's dispatch (combine is the reverse), from
//! a CSV file ([`read_csv`]) or from a synthetic generator ([`generate`], `weft moe-trace`).
//!
//! Generator (choices, and why):
//! - Popularity: expert e has p_e ∝ exp(sigma · z_e), z_e standard normals (Box-Muller) drawn
//!   once from `rng::stream(seed, group, Purpose::Moe)`: a log-normal skew with one parameter.
//! - Routing: each token picks `top_k` distinct experts with probability proportional to p,
//!   without replacement. This is the Plackett-Luce law, which is exactly the law of
//!   Gumbel-top-k on log p (Vieira 2014; Kool et al. 2019), drawn sequentially: inverse-CDF
//!   picks through a guide table, a pick already chosen is redrawn (after 255 draws in a token,
//!   the rest are drawn exactly from the remaining mass). This costs about top_k draws per token
//!   instead of `experts` Gumbels. The uniforms are a hash of (stream key, token, draw), so every
//!   sigma sees the same random numbers (common random numbers): the routing is deterministic
//!   and moves smoothly with sigma, which the bisection needs.
//! - Placement without EPLB: expert e lives on GPU e / (experts / gpus).
//! - Imbalance: max / mean over GPUs of the token copies they receive (their experts' load, not
//!   deduplicated; `MoeImbalanceOf::Experts`, the default) or of the tokens they receive over the
//!   scale-out network (the matrix's column sums, `MoeImbalanceOf::Network`: what a GPU's downlink
//!   carries, which hierarchical dispatch smooths by summing a server's experts into each
//!   landing GPU). Calibration bisects sigma until the measured value is within
//!   [`STOP_WITHIN`] of the target; [`generate`] fails unless it is within
//!   [`IMBALANCE_TOLERANCE`] (0.01). A target below what sampling noise gives at sigma = 0 is an
//!   error (ask for more tokens or a higher target).
//! - EPLB (`eplb`): after calibration, with the realized per-expert loads of this very batch (an
//!   oracle for the load history EPLB uses; TRT-LLM reports hot experts stable over tens to
//!   hundreds of iterations), `redundant_experts` extra slots go one at a time to the expert with
//!   the largest load per replica (deepseek-ai/EPLB's replicate step), then slots are packed
//!   heaviest first onto the least-loaded GPU that has a free slot, (experts + redundant) / gpus
//!   slots per GPU. A source GPU sends its copies of a replicated expert to its replicas in
//!   round-robin, starting at replica (source GPU mod replicas), so each replica gets an equal
//!   share. The default redundancy is one extra slot per GPU (`redundant_experts = gpus`), the
//!   smallest that keeps every GPU's slot count equal when experts = gpus; DeepSeek's prefill
//!   set-up (256 experts + 32 redundant on 32 GPUs) is also one per GPU. Measured at 128 GPUs,
//!   128 experts, top-8, 1.48 before EPLB: 1.02 to 1.12 after it over seeds 1-10 (the Ofan
//!   paper reports 1.13; nothing here is tuned to it).
//! - Cost: about top_k hashes and guide-table look-ups per token per bisection step; 128 GPUs ×
//!   8,192 tokens × top-8 calibrates in about 1.5 s (release, one core).
//! - Dispatch: a token goes once to each destination GPU holding one of its experts (DeepEP
//!   `is_token_in_rank`). `Flat`: remote-server GPUs are entries of the matrix, same-server
//!   ones go over NVLink. `Hierarchical` (DeepEP internode): once per destination server, to
//!   the GPU with the sender's local rank, which fans out over NVLink to the other GPUs of that
//!   server the token needs.

use crate::rng::{splitmix64, stream, Purpose};
use crate::scenario::{MoeDispatch, MoeImbalanceOf};
use anyhow::{anyhow, bail, Result};
use rand::Rng;
use std::path::Path;

/// The largest |measured − target| imbalance [`generate`] accepts (before EPLB).
pub const IMBALANCE_TOLERANCE: f64 = 0.01;
/// The bisection stops once the measured imbalance is this close to the target.
pub const STOP_WITHIN: f64 = 0.0025;
/// Bisection steps at most (sigma's bracket shrinks 2^40-fold: far below any effect).
const MAX_BISECTIONS: u32 = 40;
/// The largest sigma tried: exp(64 · Δz) puts all the mass on the top experts anyway.
const MAX_SIGMA: f64 = 64.0;
/// The matrix is gpus² counts: 4,096 GPUs is 128 MiB.
pub const MAX_GPUS: u32 = 4096;
/// Expert slots (experts + redundant_experts) at most: far above any model, and it bounds the
/// per-(GPU, expert) round-robin counters.
pub const MAX_EXPERT_SLOTS: u64 = 1 << 16;
/// Redrawn picks per token before drawing exactly from the remaining mass.
const MAX_DRAWS_PER_TOKEN: u64 = 255;

/// The generator's parameters; [`GenParams::new`] gives the defaults.
#[derive(Clone, Debug)]
pub struct GenParams {
    /// GPUs of one expert-parallel group (ep_size), a multiple of `gpus_per_server`.
    pub gpus: u32,
    /// GPUs per server (NVLink domain).
    pub gpus_per_server: u32,
    /// A multiple of `gpus`.
    pub experts: u32,
    /// 1..=experts.
    pub top_k: u32,
    /// Tokens each GPU routes.
    pub tokens_per_gpu: u32,
    /// Target max/mean per GPU, before EPLB, of what `imbalance_of` names; >= 1.
    pub imbalance: f64,
    /// What `imbalance` measures per GPU.
    pub imbalance_of: MoeImbalanceOf,
    /// EPLB-style replication of hot experts and balanced packing.
    pub eplb: bool,
    /// Extra expert slots for EPLB; experts + redundant_experts must be a multiple of gpus.
    /// Ignored without `eplb`.
    pub redundant_experts: u32,
    /// How tokens cross servers (flat or hierarchical).
    pub dispatch: MoeDispatch,
    /// Seed of the routing draws.
    pub seed: u64,
    /// The EP group: groups of one scenario get independent draws.
    pub group: u32,
}

impl GenParams {
    /// Defaults: 8 GPUs per server, 128 experts, top-8, imbalance 1.48 (the Ofan set-up), no
    /// EPLB (one redundant slot per GPU when turned on), hierarchical dispatch, seed 1, group 0.
    pub fn new(gpus: u32, tokens_per_gpu: u32) -> GenParams {
        GenParams {
            gpus,
            gpus_per_server: 8,
            experts: 128,
            top_k: 8,
            tokens_per_gpu,
            imbalance: 1.48,
            imbalance_of: MoeImbalanceOf::Experts,
            eplb: false,
            redundant_experts: gpus,
            dispatch: MoeDispatch::Hierarchical,
            seed: 1,
            group: 0,
        }
    }

    /// One line naming every parameter.
    pub fn comment(&self) -> String {
        format!(
            "gpus={} gpus_per_server={} experts={} top_k={} tokens_per_gpu={} imbalance={}{} eplb={} redundant_experts={} dispatch={} seed={} group={}",
            self.gpus,
            self.gpus_per_server,
            self.experts,
            self.top_k,
            self.tokens_per_gpu,
            self.imbalance,
            match self.imbalance_of {
                MoeImbalanceOf::Experts => String::new(),
                o => format!(" imbalance_of={}", o.name()),
            },
            self.eplb,
            if self.eplb { self.redundant_experts } else { 0 },
            self.dispatch.name(),
            self.seed,
            self.group
        )
    }

    fn check(&self) -> Result<()> {
        let p = self;
        if p.gpus == 0 || p.gpus > MAX_GPUS {
            bail!("gpus: must be from 1 to {MAX_GPUS} (got {})", p.gpus);
        }
        if p.gpus_per_server == 0 || p.gpus % p.gpus_per_server != 0 {
            bail!(
                "gpus_per_server: must be at least 1 and divide gpus ({}) (got {})",
                p.gpus,
                p.gpus_per_server
            );
        }
        if p.experts as u64 > MAX_EXPERT_SLOTS {
            bail!("experts: at most {MAX_EXPERT_SLOTS} (got {})", p.experts);
        }
        if p.experts == 0 || p.experts % p.gpus != 0 {
            bail!(
                "experts: must be a positive multiple of gpus ({}) (got {})",
                p.gpus,
                p.experts
            );
        }
        if p.top_k == 0 || p.top_k > p.experts {
            bail!(
                "top_k: must be from 1 to experts ({}) (got {})",
                p.experts,
                p.top_k
            );
        }
        if p.tokens_per_gpu == 0 {
            bail!("tokens_per_gpu: must be at least 1");
        }
        let most = self.max_imbalance();
        if !(p.imbalance >= 1.0 && p.imbalance < most) {
            bail!(
                "imbalance: must be at least 1 and below {most} (a GPU holding {} of the experts receives at most that many times the mean) (got {})",
                p.experts / p.gpus,
                p.imbalance
            );
        }
        if p.eplb {
            let slots = p.experts as u64 + p.redundant_experts as u64;
            if slots > MAX_EXPERT_SLOTS {
                bail!(
                    "redundant_experts: experts + redundant_experts must be at most {MAX_EXPERT_SLOTS} (got {slots})"
                );
            }
            if slots % p.gpus as u64 != 0 {
                bail!(
                    "redundant_experts: experts ({}) + redundant_experts ({}) must be a multiple of gpus ({})",
                    p.experts,
                    p.redundant_experts,
                    p.gpus
                );
            }
        }
        Ok(())
    }

    /// The largest max/mean possible: one GPU in every token's top-k as often as it can be.
    fn max_imbalance(&self) -> f64 {
        let per_gpu = (self.experts / self.gpus).min(self.top_k);
        self.gpus as f64 * per_gpu as f64 / self.top_k as f64
    }
}

/// A routing trace of one EP group.
#[derive(Clone, Debug)]
pub struct Trace {
    /// GPUs of the group.
    pub gpus: u32,
    /// Tokens GPU i sends over the scale-out network to GPU j (row-major gpus × gpus, diagonal
    /// 0). Flat: tokens of i with at least one selected expert on j, for j on another server.
    /// Hierarchical: for each server S other than i's, the tokens of i with at least one expert
    /// on S, sent once to the GPU of S with i's local rank.
    pub tokens: Vec<u64>,
    /// Token copies over NVLink: same-server destinations, plus hierarchical fan-out.
    pub nvlink_token_copies: u64,
    /// Measured max/mean of token copies received per GPU, after EPLB when on (NaN when read
    /// from a file without a `# measured:` line).
    pub imbalance: f64,
    /// The same before EPLB (equal to `imbalance` without EPLB).
    pub imbalance_before_eplb: f64,
    /// The calibrated sigma of the log-normal popularity.
    pub sigma: f64,
    /// Token copies each GPU receives (its experts' load); empty when read from a file.
    pub gpu_load: Vec<u64>,
    /// One line describing the parameters (written as `# params: ...`).
    pub params_comment: String,
}

impl Trace {
    /// Tokens GPU `i` sends over the scale-out network.
    pub fn sent_by(&self, i: u32) -> u64 {
        let n = self.gpus as usize;
        self.tokens[i as usize * n..(i as usize + 1) * n]
            .iter()
            .sum()
    }

    /// Tokens sent over the scale-out network by all GPUs.
    pub fn total_tokens(&self) -> u64 {
        self.tokens.iter().sum()
    }

    /// max / mean over GPUs of the tokens received over the scale-out network.
    pub fn network_imbalance(&self) -> f64 {
        max_over_mean(&received_over_network(self.gpus, &self.tokens))
    }
}

/// Expert popularity at one sigma, with an inverse-CDF guide table.
struct Popularity {
    p: Vec<f64>,
    cum: Vec<f64>,
    /// guide\[b\] = the first expert whose cumulative probability exceeds b / guide.len().
    guide: Vec<u32>,
}

impl Popularity {
    fn new(z: &[f64], sigma: f64) -> Popularity {
        // Relative to the largest z, so a large sigma underflows the cold experts to 0
        // instead of overflowing the hot ones.
        let z_max = z.iter().cloned().fold(f64::MIN, f64::max);
        let w: Vec<f64> = z.iter().map(|z| (sigma * (z - z_max)).exp()).collect();
        let total: f64 = w.iter().sum();
        let p: Vec<f64> = w.iter().map(|w| w / total).collect();
        let mut cum = Vec::with_capacity(p.len());
        let mut acc = 0.0;
        for &x in &p {
            acc += x;
            cum.push(acc);
        }
        // Every u < 1 then finds an expert, whatever the rounding.
        *cum.last_mut().expect("experts >= 1") = 1.0;
        let buckets = 4 * p.len();
        let mut guide = Vec::with_capacity(buckets);
        let mut i = 0;
        for b in 0..buckets {
            let at = b as f64 / buckets as f64;
            while cum[i] <= at {
                i += 1;
            }
            guide.push(i as u32);
        }
        Popularity { p, cum, guide }
    }

    /// The expert whose CDF interval holds `u` in [0, 1).
    #[inline]
    fn pick(&self, u: f64) -> u32 {
        let b = ((u * self.guide.len() as f64) as usize).min(self.guide.len() - 1);
        let mut i = self.guide[b] as usize;
        while self.cum[i] <= u {
            i += 1;
        }
        i as u32
    }
}

/// A uniform in [0, 1) from 53 bits of a hash.
#[inline]
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The random numbers of one (seed, group): expert z-scores and the routing key.
struct Draws {
    z: Vec<f64>,
    key: u64,
}

impl Draws {
    fn new(p: &GenParams) -> Draws {
        let mut rng = stream(p.seed, p.group as u64, Purpose::Moe);
        let mut z = Vec::with_capacity(p.experts as usize + 1);
        while z.len() < p.experts as usize {
            // Box-Muller; 1 - u is in (0, 1], so ln never sees 0.
            let r = (-2.0 * (1.0 - rng.gen::<f64>()).ln()).sqrt();
            let a = std::f64::consts::TAU * rng.gen::<f64>();
            z.push(r * a.cos());
            z.push(r * a.sin());
        }
        z.truncate(p.experts as usize);
        Draws { z, key: rng.gen() }
    }
}

/// Calls `f(source GPU, selected experts)` for every token of the group, in order.
fn route(p: &GenParams, pop: &Popularity, key: u64, mut f: impl FnMut(u32, &[u32])) {
    let experts = p.experts as usize;
    let k = p.top_k as usize;
    let exact_key = splitmix64(key ^ 0x6d6f_655f_6578_6163);
    let mut chosen: Vec<u32> = Vec::with_capacity(k);
    let mut mark = vec![u64::MAX; experts];
    for src in 0..p.gpus {
        for t in 0..p.tokens_per_gpu as u64 {
            let token = src as u64 * p.tokens_per_gpu as u64 + t;
            let base = token.wrapping_mul(MAX_DRAWS_PER_TOKEN + 1);
            chosen.clear();
            let mut draw = 0;
            while chosen.len() < k && draw < MAX_DRAWS_PER_TOKEN {
                let e = pop.pick(unit(splitmix64(key.wrapping_add(base + draw))));
                draw += 1;
                if mark[e as usize] != token {
                    mark[e as usize] = token;
                    chosen.push(e);
                }
            }
            while chosen.len() < k {
                // Only under extreme skew: draw from the mass left, exactly.
                let u = unit(splitmix64(
                    exact_key.wrapping_add(base + chosen.len() as u64),
                ));
                let left: f64 = (0..experts)
                    .filter(|&e| mark[e] != token)
                    .map(|e| pop.p[e])
                    .sum();
                let mut e_pick = None;
                if left > 0.0 {
                    let mut acc = 0.0;
                    for e in (0..experts).filter(|&e| mark[e] != token) {
                        acc += pop.p[e];
                        e_pick = Some(e);
                        if acc > u * left {
                            break;
                        }
                    }
                } else {
                    // All the mass left underflowed: take the most popular remaining.
                    e_pick = (0..experts)
                        .filter(|&e| mark[e] != token)
                        .max_by(|&a, &b| pop.p[a].total_cmp(&pop.p[b]).then(b.cmp(&a)));
                }
                let e = e_pick.expect("top_k <= experts leaves one");
                mark[e] = token;
                chosen.push(e as u32);
            }
            f(src, &chosen);
        }
    }
}

/// Token copies per expert at one sigma.
fn expert_loads(p: &GenParams, d: &Draws, sigma: f64) -> Vec<u64> {
    let pop = Popularity::new(&d.z, sigma);
    let mut load = vec![0u64; p.experts as usize];
    route(p, &pop, d.key, |_, es| {
        for &e in es {
            load[e as usize] += 1;
        }
    });
    load
}

/// max / mean of per-GPU loads.
fn max_over_mean(gpu_load: &[u64]) -> f64 {
    let total: u64 = gpu_load.iter().sum();
    let max = gpu_load.iter().copied().max().unwrap_or(0);
    if total == 0 {
        return 1.0;
    }
    max as f64 * gpu_load.len() as f64 / total as f64
}

/// Tokens each GPU receives over the scale-out network: the column sums of a row-major
/// `gpus` × `gpus` matrix.
fn received_over_network(gpus: u32, tokens: &[u64]) -> Vec<u64> {
    let n = gpus as usize;
    let mut recv = vec![0u64; n];
    for row in tokens.chunks(n) {
        for (r, &c) in recv.iter_mut().zip(row) {
            *r += c;
        }
    }
    recv
}

/// Per-GPU load with `experts / gpus` consecutive experts per GPU.
fn static_gpu_load(p: &GenParams, expert_load: &[u64]) -> Vec<u64> {
    expert_load
        .chunks((p.experts / p.gpus) as usize)
        .map(|c| c.iter().sum())
        .collect()
}

/// Finds sigma so that the pre-EPLB imbalance is within [`STOP_WITHIN`] of the target (or as
/// close as the bisection gets); returns (sigma, expert loads there, imbalance there).
fn calibrate(p: &GenParams, d: &Draws) -> Result<(f64, Vec<u64>, f64)> {
    let layout = Layout::consecutive(p);
    let eval = |sigma: f64| {
        let load = expert_loads(p, d, sigma);
        let imb = match p.imbalance_of {
            MoeImbalanceOf::Experts => max_over_mean(&static_gpu_load(p, &load)),
            MoeImbalanceOf::Network => {
                let mut tally = Tally::new(&layout);
                route(p, &Popularity::new(&d.z, sigma), d.key, |src, es| {
                    tally.add(src, es)
                });
                max_over_mean(&received_over_network(p.gpus, &tally.tokens))
            }
        };
        (sigma, load, imb)
    };
    let target = p.imbalance;
    let lo0 = eval(0.0);
    if lo0.2 >= target - IMBALANCE_TOLERANCE {
        if lo0.2 <= target + IMBALANCE_TOLERANCE {
            return Ok(lo0);
        }
        bail!(
            "imbalance: {target} is below the {:.4} that sampling noise alone gives with uniform popularity (sigma 0) at tokens_per_gpu {}; ask for at least that, or more tokens",
            lo0.2,
            p.tokens_per_gpu
        );
    }
    let mut best = lo0.clone();
    let closer = |best: &mut (f64, Vec<u64>, f64), c: (f64, Vec<u64>, f64)| {
        if (c.2 - target).abs() < (best.2 - target).abs() {
            *best = c;
        }
    };
    // Bracket: double sigma until the imbalance reaches the target.
    let mut lo = 0.0;
    let mut hi = 0.5;
    loop {
        let c = eval(hi);
        let reached = c.2 >= target;
        closer(&mut best, c);
        if (best.2 - target).abs() <= STOP_WITHIN {
            return Ok(best);
        }
        if reached {
            break;
        }
        if hi >= MAX_SIGMA {
            bail!(
                "imbalance: {target} not reached (at most {:.4} at sigma {MAX_SIGMA})",
                best.2
            );
        }
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..MAX_BISECTIONS {
        let mid = 0.5 * (lo + hi);
        let c = eval(mid);
        if c.2 >= target {
            hi = mid;
        } else {
            lo = mid;
        }
        closer(&mut best, c);
        if (best.2 - target).abs() <= STOP_WITHIN {
            break;
        }
    }
    if (best.2 - target).abs() > IMBALANCE_TOLERANCE {
        bail!(
            "imbalance: cannot calibrate {target} within {IMBALANCE_TOLERANCE} (closest {:.4} at sigma {:.6}); the per-GPU loads move in steps too coarse at tokens_per_gpu {}: use more tokens",
            best.2,
            best.0,
            p.tokens_per_gpu
        );
    }
    Ok(best)
}

/// Which GPUs hold each expert (its replicas, in order).
struct Layout {
    gpus: u32,
    gpus_per_server: u32,
    experts: u32,
    dispatch: MoeDispatch,
    replicas: Vec<Vec<u32>>,
}

impl Layout {
    fn consecutive(p: &GenParams) -> Layout {
        let per_gpu = p.experts / p.gpus;
        Layout {
            gpus: p.gpus,
            gpus_per_server: p.gpus_per_server,
            experts: p.experts,
            dispatch: p.dispatch,
            replicas: (0..p.experts).map(|e| vec![e / per_gpu]).collect(),
        }
    }

    /// EPLB: replicate the hottest experts into `redundant` slots, pack the slots.
    fn eplb(p: &GenParams, expert_load: &[u64]) -> Layout {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        // Non-negative f64s order as their bits do, so heaps can key on them.
        let key = |w: f64| w.to_bits();
        let experts = p.experts as usize;
        let mut count = vec![1u32; experts];
        // The largest load per replica first; ties to the lowest expert.
        let mut hot: BinaryHeap<(u64, Reverse<usize>)> = (0..experts)
            .map(|e| (key(expert_load[e] as f64), Reverse(e)))
            .collect();
        for _ in 0..p.redundant_experts {
            let (_, Reverse(e)) = hot.pop().expect("experts >= 1");
            count[e] += 1;
            hot.push((key(expert_load[e] as f64 / count[e] as f64), Reverse(e)));
        }
        let mut slots: Vec<(f64, u32)> = (0..experts)
            .flat_map(|e| {
                let w = expert_load[e] as f64 / count[e] as f64;
                (0..count[e]).map(move |_| (w, e as u32))
            })
            .collect();
        slots.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let per_gpu = slots.len() / p.gpus as usize;
        let mut weight = vec![0.0f64; p.gpus as usize];
        let mut free = vec![per_gpu; p.gpus as usize];
        let mut replicas = vec![Vec::new(); experts];
        // The least-loaded GPU with a free slot first; ties to the lowest GPU.
        let mut open: BinaryHeap<Reverse<(u64, usize)>> = (0..p.gpus as usize)
            .map(|g| Reverse((key(0.0), g)))
            .collect();
        for (w, e) in slots {
            let Reverse((_, g)) = open.pop().expect("slots = gpus × per_gpu");
            weight[g] += w;
            free[g] -= 1;
            if free[g] > 0 {
                open.push(Reverse((key(weight[g]), g)));
            }
            replicas[e as usize].push(g as u32);
        }
        Layout {
            replicas,
            ..Layout::consecutive(p)
        }
    }
}

/// The matrix, NVLink copies and per-GPU loads, added up token by token.
struct Tally<'a> {
    layout: &'a Layout,
    tokens: Vec<u64>,
    nvlink: u64,
    gpu_load: Vec<u64>,
    /// Copies sent so far per (source GPU, expert), for round-robin over replicas.
    sent: Vec<u32>,
    dests: Vec<u32>,
    servers: Vec<u32>,
}

impl<'a> Tally<'a> {
    fn new(layout: &'a Layout) -> Tally<'a> {
        let n = layout.gpus as usize;
        Tally {
            layout,
            tokens: vec![0; n * n],
            nvlink: 0,
            gpu_load: vec![0; n],
            sent: vec![0; n * layout.experts as usize],
            dests: Vec::new(),
            servers: Vec::new(),
        }
    }

    fn add(&mut self, src: u32, experts: &[u32]) {
        let l = self.layout;
        let n = l.gpus as usize;
        self.dests.clear();
        for &e in experts {
            let reps = &l.replicas[e as usize];
            let g = if reps.len() == 1 {
                reps[0]
            } else {
                let c = &mut self.sent[src as usize * l.experts as usize + e as usize];
                let g = reps[(*c as usize + src as usize) % reps.len()];
                *c += 1;
                g
            };
            self.gpu_load[g as usize] += 1;
            if !self.dests.contains(&g) {
                self.dests.push(g);
            }
        }
        let gps = l.gpus_per_server;
        let home = src / gps;
        let row = src as usize * n;
        match l.dispatch {
            MoeDispatch::Flat => {
                for &j in &self.dests {
                    if j == src {
                        continue;
                    }
                    if j / gps == home {
                        self.nvlink += 1;
                    } else {
                        self.tokens[row + j as usize] += 1;
                    }
                }
            }
            MoeDispatch::Hierarchical => {
                self.servers.clear();
                for &j in &self.dests {
                    let s = j / gps;
                    if s != home && !self.servers.contains(&s) {
                        self.servers.push(s);
                        self.tokens[row + (s * gps + src % gps) as usize] += 1;
                    }
                }
                for &j in &self.dests {
                    if j == src {
                        continue;
                    }
                    // Same server: NVLink from the source. Another server: the landing GPU
                    // (same local rank as the source) has it and fans it out over NVLink.
                    let landing = (j / gps) * gps + src % gps;
                    if j / gps == home || j != landing {
                        self.nvlink += 1;
                    }
                }
            }
        }
    }
}

/// Generates a trace (see the module comment); errors name the parameter.
pub fn generate(p: &GenParams) -> Result<Trace> {
    p.check()?;
    let d = Draws::new(p);
    let (sigma, expert_load, _) = calibrate(p, &d)?;
    let before = max_over_mean(&static_gpu_load(p, &expert_load));
    let layout = if p.eplb {
        Layout::eplb(p, &expert_load)
    } else {
        Layout::consecutive(p)
    };
    let pop = Popularity::new(&d.z, sigma);
    let mut tally = Tally::new(&layout);
    route(p, &pop, d.key, |src, es| tally.add(src, es));
    let imbalance = max_over_mean(&tally.gpu_load);
    Ok(Trace {
        gpus: p.gpus,
        tokens: tally.tokens,
        nvlink_token_copies: tally.nvlink,
        imbalance,
        imbalance_before_eplb: before,
        sigma,
        gpu_load: tally.gpu_load,
        params_comment: p.comment(),
    })
}

/// Writes `# params: ...` and `# measured: ...` comment lines, then `gpus` lines of `gpus`
/// comma-separated token counts (row = source GPU, column = destination GPU).
pub fn write_csv(t: &Trace, w: &mut impl std::io::Write) -> std::io::Result<()> {
    writeln!(w, "# params: {}", t.params_comment)?;
    writeln!(
        w,
        "# measured: imbalance={:.4} imbalance_before_eplb={:.4} sigma={:.6} nvlink_token_copies={}",
        t.imbalance, t.imbalance_before_eplb, t.sigma, t.nvlink_token_copies
    )?;
    writeln!(
        w,
        "# row i, column j: tokens GPU i sends to GPU j over the scale-out network"
    )?;
    let n = t.gpus as usize;
    let mut line = String::new();
    for row in t.tokens.chunks(n) {
        line.clear();
        for (j, c) in row.iter().enumerate() {
            if j > 0 {
                line.push(',');
            }
            line.push_str(&c.to_string());
        }
        writeln!(w, "{line}")?;
    }
    Ok(())
}

/// Reads a trace of `gpus` GPUs (the scenario's ep_size); errors are "FILE:LINE: ...".
/// Blank lines and `#` comments are skipped, except that `# params:` and `# measured:` lines
/// fill the trace's description and measured figures.
pub fn read_csv(path: &Path, gpus: u32) -> Result<Trace> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
    parse_csv(&text, gpus).map_err(|(line, e)| match line {
        Some(l) => anyhow!("{}:{l}: {e}", path.display()),
        None => anyhow!("{}: {e}", path.display()),
    })
}

type LineError = (Option<usize>, String);

fn parse_csv(text: &str, gpus: u32) -> std::result::Result<Trace, LineError> {
    let n = gpus as usize;
    let mut t = Trace {
        gpus,
        tokens: Vec::with_capacity(n * n),
        nvlink_token_copies: 0,
        imbalance: f64::NAN,
        imbalance_before_eplb: f64::NAN,
        sigma: f64::NAN,
        gpu_load: Vec::new(),
        params_comment: String::new(),
    };
    let mut rows = 0;
    let mut last_line = 0;
    for (no, l) in text.lines().enumerate() {
        let line = no + 1;
        let l = l.trim();
        if let Some(c) = l.strip_prefix('#') {
            let c = c.trim();
            if let Some(params) = c.strip_prefix("params:") {
                t.params_comment = params.trim().to_string();
            } else if let Some(m) = c.strip_prefix("measured:") {
                read_measured(&mut t, m).map_err(|e| (Some(line), e))?;
            }
            continue;
        }
        if l.is_empty() {
            continue;
        }
        last_line = line;
        let cells: Vec<&str> = l.split(',').map(str::trim).collect();
        if rows == 0 && cells.len() != n {
            return Err((
                Some(line),
                format!(
                    "the trace has {} GPUs, the scenario's ep_size is {gpus}",
                    cells.len()
                ),
            ));
        }
        if rows == n {
            return Err((Some(line), format!("more than {n} rows (one per GPU)")));
        }
        if cells.len() != n {
            return Err((
                Some(line),
                format!("{} values, expected {n} (one per GPU)", cells.len()),
            ));
        }
        for (c, cell) in cells.iter().enumerate() {
            let v = cell.parse::<u64>().map_err(|_| {
                (
                    Some(line),
                    format!(
                        "column {}: \"{cell}\" is not a token count (a non-negative integer)",
                        c + 1
                    ),
                )
            })?;
            if c == rows && v != 0 {
                return Err((
                    Some(line),
                    format!(
                        "column {}: GPU {rows} sends {v} tokens to itself; the diagonal must be 0",
                        c + 1
                    ),
                ));
            }
            t.tokens.push(v);
        }
        rows += 1;
    }
    if rows < n {
        let at = if last_line > 0 { Some(last_line) } else { None };
        return Err((
            at,
            format!("{rows} rows, expected {n} (one per GPU of the scenario's ep_size)"),
        ));
    }
    Ok(t)
}

/// `imbalance=X imbalance_before_eplb=X sigma=X nvlink_token_copies=N`, any subset.
fn read_measured(t: &mut Trace, m: &str) -> std::result::Result<(), String> {
    for kv in m.split_whitespace() {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("measured: \"{kv}\" is not KEY=VALUE"))?;
        let float = || {
            v.parse::<f64>()
                .map_err(|_| format!("measured: {k}: \"{v}\" is not a number"))
        };
        match k {
            "imbalance" => t.imbalance = float()?,
            "imbalance_before_eplb" => t.imbalance_before_eplb = float()?,
            "sigma" => t.sigma = float()?,
            "nvlink_token_copies" => {
                t.nvlink_token_copies = v
                    .parse()
                    .map_err(|_| format!("measured: {k}: \"{v}\" is not a count"))?
            }
            _ => return Err(format!("measured: unknown key \"{k}\"")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn params(gpus: u32, gps: u32, experts: u32, k: u32, tokens: u32) -> GenParams {
        GenParams {
            gpus_per_server: gps,
            experts,
            top_k: k,
            ..GenParams::new(gpus, tokens)
        }
    }

    /// 2 servers × 2 GPUs, 8 experts (GPU g holds 2g and 2g + 1), top-2, tokens chosen by hand.
    fn hand_tally(dispatch: MoeDispatch) -> (Vec<u64>, u64, Vec<u64>) {
        let p = GenParams {
            dispatch,
            ..params(4, 2, 8, 2, 1)
        };
        let layout = Layout::consecutive(&p);
        let mut t = Tally::new(&layout);
        t.add(0, &[4, 5]); // A: both on GPU 2 (remote): one copy
        t.add(0, &[4, 6]); // B: GPUs 2 and 3, both on server 1
        t.add(1, &[0, 7]); // C: GPU 0 (same server), GPU 3 (remote)
        t.add(3, &[6, 7]); // D: both on GPU 3 itself: nothing moves
        t.add(2, &[2, 4]); // E: GPU 1 (remote), GPU 2 itself
        (t.tokens, t.nvlink, t.gpu_load)
    }

    #[test]
    fn flat_dispatch_dedupes_per_gpu_by_hand() {
        let (m, nvlink, load) = hand_tally(MoeDispatch::Flat);
        #[rustfmt::skip]
        let want = [
            0, 0, 2, 1, // A and B to GPU 2, B to GPU 3
            0, 0, 0, 1, // C to GPU 3
            0, 1, 0, 0, // E to GPU 1
            0, 0, 0, 0, // D stays
        ];
        assert_eq!(m, want);
        assert_eq!(nvlink, 1, "only C's copy to GPU 0 is same-server");
        assert_eq!(load, [1, 1, 4, 4], "expert copies, not deduplicated");
    }

    #[test]
    fn hierarchical_dispatch_sends_once_per_server_to_the_same_local_rank_by_hand() {
        let (m, nvlink, load) = hand_tally(MoeDispatch::Hierarchical);
        #[rustfmt::skip]
        let want = [
            0, 0, 2, 0, // A, B: once each to server 1's local rank 0 (GPU 2)
            0, 0, 0, 1, // C: to server 1's local rank 1 (GPU 3)
            1, 0, 0, 0, // E: to server 0's local rank 0 (GPU 0), not GPU 1
            0, 0, 0, 0,
        ];
        assert_eq!(m, want);
        // B: GPU 2 -> GPU 3 fan-out; C: GPU 1 -> GPU 0; E: GPU 0 -> GPU 1 fan-out.
        assert_eq!(nvlink, 3);
        assert_eq!(load, [1, 1, 4, 4]);
    }

    #[test]
    fn eplb_replicates_the_hottest_and_packs_by_hand() {
        // 2 GPUs (one server), 2 experts with loads 30 and 10, 2 redundant slots (2 per GPU).
        let p = GenParams {
            eplb: true,
            redundant_experts: 2,
            ..params(2, 2, 2, 1, 1)
        };
        let l = Layout::eplb(&p, &[30, 10]);
        // Replicate: expert 0 (30 > 10), then expert 0 again (15 > 10): 3 replicas of 10 each.
        // Pack 10, 10, 10 (expert 0), 10 (expert 1), ties to the lowest GPU: 0, 1, 0, 1.
        assert_eq!(l.replicas, [vec![0, 1, 0], vec![1]]);
        // GPU 1 sends 4 copies of expert 0 round-robin from replica 1 mod 3: GPUs 1, 0, 0, 1.
        let mut t = Tally::new(&l);
        for _ in 0..4 {
            t.add(1, &[0]);
        }
        assert_eq!(t.gpu_load, [2, 2]);
        assert_eq!(
            t.nvlink, 2,
            "the 2 copies to GPU 0 cross NVLink; those to itself stay"
        );
    }

    #[test]
    fn generated_matrices_have_zero_diagonal_and_same_local_rank_hops_only() {
        for dispatch in [MoeDispatch::Flat, MoeDispatch::Hierarchical] {
            let p = GenParams {
                dispatch,
                imbalance: 1.3,
                ..params(16, 4, 64, 4, 2000)
            };
            let t = generate(&p).unwrap();
            let n = 16;
            for i in 0..n {
                for j in 0..n {
                    let v = t.tokens[i * n + j];
                    if i / 4 == j / 4 {
                        assert_eq!(v, 0, "{dispatch:?} {i}->{j} same server");
                    }
                    if dispatch == MoeDispatch::Hierarchical && i % 4 != j % 4 {
                        assert_eq!(v, 0, "{i}->{j} across local ranks");
                    }
                }
            }
        }
    }

    /// The flat matrix and NVLink count recomputed naively, token by token, from the routing.
    #[test]
    fn row_sums_count_each_token_once_per_distinct_remote_gpu() {
        let p = GenParams {
            dispatch: MoeDispatch::Flat,
            imbalance: 1.5,
            ..params(16, 4, 32, 6, 500)
        };
        let t = generate(&p).unwrap();
        let d = Draws::new(&p);
        let pop = Popularity::new(&d.z, t.sigma);
        let mut rows = vec![0u64; 16];
        let mut servers = vec![0u64; 16];
        let mut nvlink = 0;
        route(&p, &pop, d.key, |src, es| {
            let gpus: BTreeSet<u32> = es.iter().map(|e| e / 2).collect();
            let remote_servers: BTreeSet<u32> = gpus
                .iter()
                .map(|g| g / 4)
                .filter(|&s| s != src / 4)
                .collect();
            rows[src as usize] += gpus.iter().filter(|&&g| g / 4 != src / 4).count() as u64;
            servers[src as usize] += remote_servers.len() as u64;
            nvlink += gpus
                .iter()
                .filter(|&&g| g / 4 == src / 4 && g != src)
                .count() as u64;
        });
        let sums: Vec<u64> = (0..16).map(|i| t.sent_by(i)).collect();
        assert_eq!(sums, rows);
        assert_eq!(t.nvlink_token_copies, nvlink);
        let h = generate(&GenParams {
            dispatch: MoeDispatch::Hierarchical,
            ..p
        })
        .unwrap();
        assert_eq!(h.sigma, t.sigma, "dispatch does not change the routing");
        let hsums: Vec<u64> = (0..16).map(|i| h.sent_by(i)).collect();
        assert_eq!(
            hsums, servers,
            "hierarchical: once per distinct remote server"
        );
        assert!(h.total_tokens() < t.total_tokens());
    }

    #[test]
    fn calibration_hits_the_target_within_tolerance_over_seeds() {
        for seed in 1..=4 {
            let mut last_sigma = 0.0;
            for target in [1.2, 1.48, 2.0] {
                let p = GenParams {
                    seed,
                    imbalance: target,
                    ..params(32, 8, 128, 8, 2048)
                };
                let t = generate(&p).unwrap();
                assert!(
                    (t.imbalance - target).abs() <= IMBALANCE_TOLERANCE,
                    "seed {seed} target {target}: {}",
                    t.imbalance
                );
                let load = &t.gpu_load;
                assert_eq!(
                    load.iter().sum::<u64>(),
                    32 * 2048 * 8,
                    "every token copy lands once"
                );
                assert!(t.sigma > last_sigma, "more skew needs a larger sigma");
                last_sigma = t.sigma;
            }
        }
    }

    #[test]
    fn a_network_target_calibrates_the_downlinks_and_needs_more_expert_skew() {
        // Hierarchical dispatch sums a server's experts into each landing GPU, which smooths
        // the experts' skew: the same 1.48 asked of the network needs a larger sigma, and the
        // experts then end more skewed than the network.
        for seed in 1..=3 {
            let base = GenParams {
                seed,
                ..params(32, 4, 32, 4, 2048)
            };
            let experts = generate(&base).unwrap();
            let network = generate(&GenParams {
                imbalance_of: MoeImbalanceOf::Network,
                ..base.clone()
            })
            .unwrap();
            let got = network.network_imbalance();
            assert!(
                (got - 1.48).abs() <= IMBALANCE_TOLERANCE,
                "seed {seed}: {got}"
            );
            assert!(experts.network_imbalance() < 1.48 - IMBALANCE_TOLERANCE);
            assert!(network.sigma > experts.sigma);
            assert!(network.imbalance > 1.48 + IMBALANCE_TOLERANCE);
            assert!(network.params_comment.contains("imbalance_of=network"));
            assert!(!experts.params_comment.contains("imbalance_of"));
        }
    }

    #[test]
    fn groups_get_different_draws_and_a_seed_repeats() {
        let p = params(16, 8, 64, 4, 1000);
        let a = generate(&p).unwrap();
        let b = generate(&p).unwrap();
        let c = generate(&GenParams { group: 1, ..p }).unwrap();
        assert_eq!(a.tokens, b.tokens);
        assert_eq!(a.sigma, b.sigma);
        assert_ne!(a.tokens, c.tokens);
    }

    /// The shipped set-up: 128 GPUs, 128 experts, top-8, 1.48 before EPLB, one redundant slot
    /// per GPU. Measured after EPLB (4,096 tokens per GPU, seeds 1-5): 1.065, 1.101, 1.075,
    /// 1.021, 1.124; at 9,712 tokens, seeds 1-10: 1.02 to 1.12. Asserted below 1.2: under the
    /// worst seed seen with room for other draws, well under the 1.48 it starts from.
    #[test]
    fn eplb_lowers_the_imbalance_for_every_seed() {
        for seed in 1..=5 {
            let p = GenParams {
                seed,
                eplb: true,
                ..params(128, 8, 128, 8, 4096)
            };
            let t = generate(&p).unwrap();
            assert!((t.imbalance_before_eplb - 1.48).abs() <= IMBALANCE_TOLERANCE);
            assert!(
                t.imbalance < t.imbalance_before_eplb && t.imbalance < 1.2,
                "seed {seed}: {} -> {}",
                t.imbalance_before_eplb,
                t.imbalance
            );
            assert_eq!(t.gpu_load.iter().sum::<u64>(), 128 * 4096 * 8);
        }
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let ok = params(16, 8, 128, 8, 100);
        for (p, want) in [
            (
                GenParams {
                    gpus: 0,
                    ..ok.clone()
                },
                "gpus: ",
            ),
            (
                GenParams {
                    gpus_per_server: 6,
                    ..ok.clone()
                },
                "gpus_per_server: ",
            ),
            (
                GenParams {
                    experts: 100,
                    ..ok.clone()
                },
                "experts: ",
            ),
            (
                GenParams {
                    top_k: 0,
                    ..ok.clone()
                },
                "top_k: ",
            ),
            (
                GenParams {
                    top_k: 129,
                    ..ok.clone()
                },
                "top_k: ",
            ),
            (
                GenParams {
                    tokens_per_gpu: 0,
                    ..ok.clone()
                },
                "tokens_per_gpu: ",
            ),
            (
                GenParams {
                    imbalance: 0.9,
                    ..ok.clone()
                },
                "imbalance: ",
            ),
            (
                GenParams {
                    imbalance: f64::NAN,
                    ..ok.clone()
                },
                "imbalance: ",
            ),
            (
                GenParams {
                    imbalance: 16.0,
                    ..ok.clone()
                },
                "imbalance: ",
            ),
            (
                GenParams {
                    eplb: true,
                    redundant_experts: 3,
                    ..ok.clone()
                },
                "redundant_experts: ",
            ),
            (
                GenParams {
                    imbalance: 1.0,
                    ..ok.clone()
                },
                "imbalance: 1 is below",
            ),
        ] {
            let e = generate(&p).expect_err(want).to_string();
            assert!(e.starts_with(want), "{want}: {e}");
        }
    }

    #[test]
    fn read_csv_round_trips_write_csv() {
        let p = GenParams {
            eplb: true,
            ..params(16, 8, 64, 4, 1000)
        };
        let t = generate(&p).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let mut buf = Vec::new();
        write_csv(&t, &mut buf).unwrap();
        std::fs::write(&path, &buf).unwrap();
        let r = read_csv(&path, 16).unwrap();
        assert_eq!(r.tokens, t.tokens);
        assert_eq!(r.nvlink_token_copies, t.nvlink_token_copies);
        assert_eq!(r.params_comment, t.params_comment);
        assert!((r.imbalance - t.imbalance).abs() < 1e-4);
        assert!((r.imbalance_before_eplb - t.imbalance_before_eplb).abs() < 1e-4);
        assert!((r.sigma - t.sigma).abs() < 1e-6);
    }

    #[test]
    fn read_csv_names_the_file_and_line_of_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.csv");
        let f = path.display().to_string();
        for (text, gpus, want) in [
            (
                "0,1\n# c\n1,0,3\n",
                2,
                format!("{f}:3: 3 values, expected 2"),
            ),
            (
                "0,1\n-3,0\n",
                2,
                format!("{f}:2: column 1: \"-3\" is not a token count"),
            ),
            (
                "0,x\n1,0\n",
                2,
                format!("{f}:1: column 2: \"x\" is not a token count"),
            ),
            (
                "0,1\n1,4\n",
                2,
                format!("{f}:2: column 2: GPU 1 sends 4 tokens to itself"),
            ),
            (
                "# params: x\n\n0,1\n1,0\n",
                3,
                format!("{f}:3: the trace has 2 GPUs, the scenario's ep_size is 3"),
            ),
            ("0,1\n1,0\n1,1\n", 2, format!("{f}:3: more than 2 rows")),
            ("0,1\n", 2, format!("{f}:1: 1 rows, expected 2")),
            ("# only\n", 2, format!("{f}: 0 rows, expected 2")),
            (
                "# measured: sigma=abc\n0,1\n1,0\n",
                2,
                format!("{f}:1: measured: sigma: \"abc\" is not a number"),
            ),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = read_csv(&path, gpus).expect_err(text).to_string();
            assert!(e.starts_with(&want), "{text:?}: {e}");
            assert_eq!(e.lines().count(), 1);
        }
        let e = read_csv(&dir.path().join("none.csv"), 2)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("none.csv: cannot read"), "{e}");
    }
}
