//! What the calculator's answer looks like as a picture: how one GPU's memory divides
//! (weights, activation, non-torch, KV cache, the reserve the utilisation leaves), how many
//! requests fit at each context length, and the GPUs an operator picks from. Pure, so the
//! browser draws what the tests check.

use super::gpu::GpuReading;
use super::vram::{calculate, Inputs, ModelShape, Report};
use serde::{Deserialize, Serialize};

const GIB: f64 = (1u64 << 30) as f64;

/// One part of a GPU's memory in the bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, crate::decode::FromWire)]
pub enum Part {
    Weights,
    Activation,
    /// CUDA context, NCCL buffers and CUDA graphs (the calibrated "measured overhead").
    NonTorch,
    Kv,
    /// What `--gpu-memory-utilization` / `--mem-fraction-static` leaves outside the engine.
    Reserve,
    /// What the engine's share is short of: weights, activation and overhead over it.
    Overflow,
}

impl Part {
    pub const ALL: [Part; 6] = [
        Part::Weights,
        Part::Activation,
        Part::NonTorch,
        Part::Kv,
        Part::Reserve,
        Part::Overflow,
    ];

    /// The Fluent key suffix and CSS class.
    pub fn id(self) -> &'static str {
        match self {
            Part::Weights => "weights",
            Part::Activation => "activation",
            Part::NonTorch => "non-torch",
            Part::Kv => "kv",
            Part::Reserve => "reserve",
            Part::Overflow => "overflow",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct Segment {
    pub part: Part,
    pub gib: f64,
}

/// One GPU's memory as the report divides it, in bar order. The parts add up to the GPU's
/// size when the weights fit; when they do not, the KV part is absent and `Overflow` says by
/// how much the engine's share is exceeded (the bar then runs past the GPU's edge).
///
/// The engine's share is read back from the report (weights + activation + overhead + KV
/// budget), so a calibrated report divides the same way as an estimated one.
pub fn segments(r: &Report, gpu_gib: f64) -> Vec<Segment> {
    let overhead = r.non_torch_gib + r.graphs_gib;
    let share = r.weights_per_gpu_gib + r.activation_gib + overhead + r.kv_budget_gib;
    let mut out = vec![
        Segment {
            part: Part::Weights,
            gib: r.weights_per_gpu_gib.max(0.0),
        },
        Segment {
            part: Part::Activation,
            gib: r.activation_gib.max(0.0),
        },
        Segment {
            part: Part::NonTorch,
            gib: overhead.max(0.0),
        },
    ];
    if r.kv_budget_gib > 0.0 {
        out.push(Segment {
            part: Part::Kv,
            gib: r.kv_budget_gib,
        });
    }
    out.push(Segment {
        part: Part::Reserve,
        gib: (gpu_gib - share).max(0.0),
    });
    if r.kv_budget_gib < 0.0 {
        out.push(Segment {
            part: Part::Overflow,
            gib: -r.kv_budget_gib,
        });
    }
    out.retain(|s| s.gib.is_finite());
    out
}

/// A point of the concurrency curve: requests of `ctx` tokens that fit at once.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, crate::decode::FromWire)]
pub struct CurvePoint {
    pub ctx: u64,
    pub concurrency: f64,
}

/// Most points a curve has (doublings from 512 to 2^31 and the chosen point).
const MAX_POINTS: usize = 32;

/// Maximum concurrency against context length for these inputs: the calculator run again at
/// each doubling from 512 tokens to the model's longest context (and at the chosen context),
/// so the curve bends where the engine's own arithmetic does (sliding windows, V0's profile
/// batch growing with the context). Points the calculator refuses are left out.
pub fn concurrency_curve(m: &ModelShape, i: &Inputs) -> Vec<CurvePoint> {
    let top = m.max_position.max(512);
    let mut ctxs: Vec<u64> = std::iter::successors(Some(512u64), |c| c.checked_mul(2))
        .take_while(|&c| c < top)
        .take(MAX_POINTS - 2)
        .collect();
    ctxs.push(top);
    if i.ctx > 0 && i.ctx <= top {
        ctxs.push(i.ctx);
    }
    ctxs.sort_unstable();
    ctxs.dedup();
    ctxs.into_iter()
        .filter_map(|ctx| {
            let at = Inputs {
                ctx,
                concurrency: None,
                ..i.clone()
            };
            calculate(m, &at).ok().map(|r| CurvePoint {
                ctx,
                concurrency: r.max_concurrency.max(0.0),
            })
        })
        .collect()
}

/// A GPU an operator can pick without having one at hand. `usable_gib` is what CUDA reports
/// as the device's total (`torch.cuda.mem_get_info()`), which is what the engines multiply
/// by their utilisation; it is below the marketed size and below NVML's total by what the
/// driver reserves, and moves by a few hundred MiB with the driver and ECC.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuPreset {
    /// The name as NVML gives it (vLLM takes other defaults on an A100).
    pub name: &'static str,
    pub usable_gib: f64,
    /// Where the figure was read.
    pub source: &'static str,
}

/// Common devices, each figure from a real reading (an engine's log, PyTorch's out-of-memory
/// message "GPU 0 has a total capacity of …", or this project's own recording).
pub const PRESETS: &[GpuPreset] = &[
    GpuPreset {
        name: "NVIDIA H200",
        usable_gib: 139.80,
        source: "CUDA total on an H200, driver 580 (testdata/gpu)",
    },
    GpuPreset {
        name: "NVIDIA H100 80GB HBM3",
        usable_gib: 79.18,
        source: "vLLM startup logs (testdata/reference/vram-dev)",
    },
    GpuPreset {
        name: "NVIDIA A100-SXM4-80GB",
        usable_gib: 79.15,
        source: "PyTorch out-of-memory messages on A100 80GB",
    },
    GpuPreset {
        name: "NVIDIA A100-SXM4-40GB",
        usable_gib: 39.39,
        source: "PyTorch out-of-memory messages on A100 40GB",
    },
    GpuPreset {
        name: "NVIDIA L40S",
        usable_gib: 44.42,
        source: "PyTorch out-of-memory message on L40S",
    },
    GpuPreset {
        name: "NVIDIA L4",
        usable_gib: 22.03,
        source: "PyTorch out-of-memory message on L4",
    },
    GpuPreset {
        name: "NVIDIA GeForce RTX 4090",
        usable_gib: 23.64,
        source: "PyTorch out-of-memory message on RTX 4090",
    },
    GpuPreset {
        name: "NVIDIA GeForce RTX 3090",
        usable_gib: 23.58,
        source: "vLLM startup log (testdata/reference/vram-dev)",
    },
];

/// What the engines can use of a GPU NVML reads: its total less what the driver reserves
/// (NVML's v2 memory info; on an H200, 616 MiB). A reading without the reserve (older
/// recordings, drivers before v2) is taken at its total.
pub fn usable_bytes(g: &GpuReading) -> u64 {
    g.memory_total_bytes
        .saturating_sub(g.memory_reserved_bytes.unwrap_or(0))
}

pub fn usable_gib(g: &GpuReading) -> f64 {
    usable_bytes(g) as f64 / GIB
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::vram::{parse_config, EngineSetup, KvDtype};

    const LLAMA_8B: &str = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,"max_position_embeddings":131072,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"torch_dtype":"bfloat16","vocab_size":128256}"#;

    fn inputs(weights_gib: f64, gpu: f64, ctx: u64) -> Inputs {
        Inputs {
            weights_bytes: (weights_gib * GIB) as u64,
            gpu_gib: gpu,
            tp: 1,
            util: 0.9,
            ctx,
            kv_dtype: KvDtype::Auto,
            concurrency: None,
            activation_gib: None,
            non_torch_gib: None,
            engine: EngineSetup {
                version: Some("0.11.0".into()),
                ..Default::default()
            },
            calibration: None,
        }
    }

    #[test]
    fn the_parts_of_a_gpu_add_up_to_its_size_and_the_reserve_is_what_utilisation_leaves() {
        let m = parse_config(LLAMA_8B).unwrap();
        let r = calculate(&m, &inputs(14.99, 79.18, 32768)).unwrap();
        let s = segments(&r, 79.18);
        let total: f64 = s.iter().map(|s| s.gib).sum();
        assert!((total - 79.18).abs() < 1e-9, "{s:?}");
        let of = |p| s.iter().find(|s| s.part == p).map(|s| s.gib);
        assert!((of(Part::Reserve).unwrap() - 0.1 * 79.18).abs() < 1e-9);
        assert!((of(Part::Kv).unwrap() - r.kv_budget_gib).abs() < 1e-12);
        assert_eq!(of(Part::Overflow), None);
    }

    #[test]
    fn weights_over_the_share_show_as_overflow_past_the_gpu_edge_with_no_kv() {
        let m = parse_config(LLAMA_8B).unwrap();
        // 70B-class weights on one 80 GiB GPU: the engine's share is exceeded.
        let r = calculate(&m, &inputs(75.0, 79.18, 32768)).unwrap();
        let s = segments(&r, 79.18);
        assert!(s.iter().all(|s| s.part != Part::Kv));
        let over = s.iter().find(|s| s.part == Part::Overflow).unwrap().gib;
        assert!((over + r.kv_budget_gib).abs() < 1e-12 && over > 0.0);
    }

    #[test]
    fn the_curve_falls_as_context_grows_and_holds_the_chosen_point() {
        let m = parse_config(LLAMA_8B).unwrap();
        let i = inputs(14.99, 79.18, 20000);
        let c = concurrency_curve(&m, &i);
        assert_eq!(c.first().unwrap().ctx, 512);
        assert_eq!(c.last().unwrap().ctx, 131072);
        let chosen = c
            .iter()
            .find(|p| p.ctx == 20000)
            .expect("the chosen context is on the curve");
        let direct = calculate(&m, &i).unwrap().max_concurrency;
        assert!((chosen.concurrency - direct).abs() < 1e-9);
        assert!(c
            .windows(2)
            .all(|w| w[0].ctx < w[1].ctx && w[0].concurrency >= w[1].concurrency));
    }

    #[test]
    fn a_model_with_a_huge_context_stays_a_bounded_curve() {
        let mut m = parse_config(LLAMA_8B).unwrap();
        m.max_position = u64::MAX;
        let c = concurrency_curve(&m, &inputs(14.99, 79.18, 4096));
        assert!(c.len() <= MAX_POINTS, "{}", c.len());
    }

    #[test]
    fn the_h200_recording_is_usable_less_its_reserve() {
        let g: crate::domain::gpu::GpuState =
            serde_json::from_str(include_str!("../../../testdata/gpu/h200-idle.json")).unwrap();
        let crate::domain::gpu::GpuState::Available { gpus, .. } = g else {
            panic!("the recording has a GPU")
        };
        // The recording predates the reserve field: taken at its total.
        assert_eq!(usable_bytes(&gpus[0]), 150_754_820_096);
        let mut with = gpus[0].clone();
        // What CUDA reported on that GPU: total less the driver's reserve.
        with.memory_reserved_bytes = Some(150_754_820_096 - 150_109_880_320);
        assert!((usable_gib(&with) - 139.80).abs() < 0.005);
        with.memory_reserved_bytes = Some(u64::MAX);
        assert_eq!(usable_bytes(&with), 0);
    }
}
