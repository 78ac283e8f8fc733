#!/usr/bin/env python3
"""Converts scenarios/published/sources/published_runs.yaml (the curated record of published training
runs, kept in the repository with every record's citation) into ptdsim's validation dataset,
scenarios/published/dataset.yaml (interface.md "Validation dataset").

Every source record becomes one dataset record with the same name. The rules (documented in
docs/data.md) are spelled out here per source group; anything the source does not state and that
the scenario needs is either the default of the framework the record ran (`training.framework`,
core/framework.hpp, cited in docs/inputs.md) or an explicit assumption written into the record's
`notes`. Records the tool cannot express keep `not_modelled: <reason>` instead of a scenario. Run:

    python3 scenarios/published/convert.py > scenarios/published/dataset.yaml
    python3 scenarios/published/convert.py --check   # exit 1 and a diff when dataset.yaml differs
"""
import argparse
import re
import difflib
import json
import os
import sys

import yaml

MODELS = "../../models/"
HW_A100_40 = "../../hardware/dgx-a100-40g.yaml"
HW_A100_80 = "../../hardware/dgx-a100-80g.yaml"
HW_H100 = "../../hardware/dgx-h100.yaml"
HW_GRAND_TETON = "../../hardware/grand-teton-h100.yaml"
TORCHTITAN_MODELS = {"Llama 3.1 8B": "llama3-8b.yaml", "Llama 3.1 70B": "llama3-70b.yaml", "Llama 3.1 405B": "llama3-405b.yaml"}

# The framework each source group ran (core/framework.hpp): its documented defaults fill the switches
# the record leaves unset, and `ptdsim evaluate` says which.
FRAMEWORK_NOTE = "switches the source leaves unstated come from training.framework {} (docs/inputs.md)"


def q(s):
    return json.dumps(s, ensure_ascii=False)


def gpt(name, source, layers, hidden, heads, vocab=51200, seq=2048, **extra):
    """A GPT-2/3-style Megatron model: GeLU, LayerNorm with bias, learned positions, ffn 4h, tied."""
    m = {"name": name, "source": source, "layers": layers, "hidden": hidden, "heads": heads,
         "ffn_hidden": 4 * hidden, "vocab": vocab, "mlp": "gelu", "norm": "layernorm",
         "position": "learned", "max_seq_len": seq, "tied_embeddings": True}
    m.update(extra)
    return m


NARAYANAN_SRC = "Narayanan et al. SC21 Table 1 (layers, hidden, heads); vocab 51200 and seq 2048 per Sec. 5; ffn 4h and tied embeddings per Eq. 2"
NEMO_LAUNCHER = "architecture from the public NeMo model config (NeMo-Framework-Launcher conf/training/gpt3/{5b,20b}.yaml), not from the performance table; vocab 51200 as the table's 175B row"

# Shapes for the NeMo rows whose architecture the performance table leaves out (missing_core_fields):
# taken from the named public model definitions, stated per record in `notes`.
NEMO_MODELS = {
    "nemo2407_GPT3_5B_64gpu": gpt("nemo-gpt3-5b", NEMO_LAUNCHER, 24, 4096, 32),
    "nemo2407_GPT3_20B_64gpu": gpt("nemo-gpt3-20b", NEMO_LAUNCHER, 44, 6144, 48),
    "nemo2407_GPT3_175B_128gpu": MODELS + "gpt3-175b.yaml",
    "nemo2407_GPT3_175B_512gpu": MODELS + "gpt3-175b.yaml",
    "nemo2407_Llama2_7B_8gpu": MODELS + "llama2-7b.yaml",
    "nemo2407_Llama2_13B_16gpu": MODELS + "llama2-13b.yaml",
    "nemo2407_Llama2_70B_64gpu": MODELS + "llama2-70b.yaml",
    "nemo2407_Llama3_8B_8gpu": MODELS + "llama3-8b.yaml",
    "nemo2407_Llama3_70B_64gpu": MODELS + "llama3-70b.yaml",
    "nemo2407_Nemotron_8B_64gpu": {
        "name": "nemotron3-8b",
        "source": "NeMo Nemotron-3 8B config (32 layers, hidden 4096, 32 heads, ffn 16384, vocab 256000, RoPE, squared-ReLU MLP, LayerNorm without bias, untied); squared ReLU expressed as gelu (same two ffn matrices)",
        "layers": 32, "hidden": 4096, "heads": 32, "ffn_hidden": 16384, "vocab": 256000,
        "mlp": "gelu", "norm": "layernorm", "position": "rope", "max_seq_len": 4096,
        "tied_embeddings": False, "bias": False},
    "nemo2407_Nemotron_22B_64gpu": {
        "name": "nemotron3-22b",
        "source": "NeMo Nemotron-3 22B config (40 layers, hidden 6144, 48 heads, ffn 24576, vocab 256000, RoPE, squared-ReLU MLP, LayerNorm without bias, untied); squared ReLU expressed as gelu",
        "layers": 40, "hidden": 6144, "heads": 48, "ffn_hidden": 24576, "vocab": 256000,
        "mlp": "gelu", "norm": "layernorm", "position": "rope", "max_seq_len": 4096,
        "tied_embeddings": False, "bias": False},
    "nemo2407_Nemotron4_340B_128gpu": {
        "name": "nemotron4-340b",
        "source": "NVIDIA 2024, Nemotron-4 340B Technical Report, arXiv:2406.11704, Table 1 (96 layers, hidden 18432, 96 heads, 8 KV heads, seq 4096, vocab 256000); ffn 4h = 73728 with squared ReLU (expressed as gelu), RoPE, untied, no bias",
        "layers": 96, "hidden": 18432, "heads": 96, "kv_heads": 8, "ffn_hidden": 73728, "vocab": 256000,
        "mlp": "gelu", "norm": "layernorm", "position": "rope", "max_seq_len": 4096,
        "tied_embeddings": False, "bias": False},
}


def mpt(m, source):
    """An MPT model as llm-foundry builds it (MPTConfig defaults): GeLU MLP with expansion 4, LayerNorm
    with biases (no_bias false), learned positions (alibi off; the table's NumParams grows with the
    sequence), input and output embeddings tied."""
    return {"name": "mpt-" + m["name"].split("-")[1].lower() + "-seq" + str(m["seq_len"]), "source": source,
            "layers": m["layers"], "hidden": m["hidden"], "heads": m["heads"], "ffn_hidden": m["ffn_hidden"],
            "vocab": m["vocab"], "mlp": "gelu", "norm": "layernorm", "position": "learned",
            "max_seq_len": m["seq_len"], "tied_embeddings": True, "bias": True}


LLMFOUNDRY_HW = {"H100 80GB": HW_H100, "A100 80GB": HW_A100_80, "A100 40GB": HW_A100_40}

KORTHIKANTI_MODELS = {"22B": "megatron-22b.yaml", "175B": "gpt3-175b.yaml",
                      "530B": "megatron-530b.yaml", "1T": "megatron-1t.yaml"}

# The BLOOM production run: 70 transformer layers plus the two (tied) embedding slots partitioned
# by DeepSpeed over 12 stages, 6 items each, so the end stages hold 5 transformer layers.
BLOOM_STAGES = [5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5]


def params_estimate(m):
    """Rough parameter count, used only to order records by model size for the split."""
    h, L = m["hidden"], m["layers"]
    kv = m.get("kv_heads", m["heads"])
    ffn = m.get("ffn_hidden", 4 * h)
    attn = 2 * h * h + 2 * h * kv * (h // m["heads"])
    mlp = (3 if m.get("mlp") == "swiglu" else 2) * h * ffn
    if "moe" in m:
        mlp *= m["moe"]["experts"]
    return L * (attn + mlp) + m["vocab"] * h


def load_shipped(path):
    return yaml.safe_load(open(path.replace("../../", REPO + "/")))


def model_dims(model):
    return load_shipped(model) if isinstance(model, str) else model


def convert(r):
    rid = r["id"]
    g = r["source_group"]
    src = r["source"]
    out = {"name": rid, "source": f'{src["title"]}, {src["locator"]}'}
    if src.get("repo"):
        out["source"] += f' ({src["repo"]}/{src.get("path") or ""} @{(src.get("commit") or "")[:12]})'
    m, hw, p, t, me = r["model"], r["hardware"], r["parallelism"], r["training"], r["measured"]
    notes = []
    not_modelled = None
    model = None
    hardware = HW_A100_80
    parallel = {}
    training = {}
    conv = "unstated"

    gpus = hw["num_gpus"]
    framework = None
    if g.startswith("Narayanan et al. SC21 Table 2"):
        # DeepSpeed ZeRO-3 without model parallelism; the model is the Table 1 529.6B row's. The
        # paper (arXiv April 2021) ran the ZeRO-3 of DeepSpeed v0.3 (released March 2021).
        conv = "megatron96"
        framework = "deepspeed-0.3"
        model = MODELS + "megatron-530b.yaml"
        parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], zero=3)
        training = dict(seq_len=2048, micro_batch=t["micro_batch_size"], global_batch=t["global_batch_size"],
                        precision="fp16", recompute="full", flash_attention=False)
        notes += ["model = the Table 1 529.6B shape (Table 2 gives only the parameter count; the source assumes the same model)",
                  "fp16 for 'mixed precision 16-bit' (A100 bf16 and fp16 peaks are equal)",
                  "flash_attention false: 2021, before FlashAttention",
                  "framework deepspeed-0.3: the ZeRO-3 of DeepSpeed v0.3.x, current when the paper was written (arXiv April 2021)"]
    elif g.startswith("Narayanan"):
        conv = "megatron96"
        framework = "megatron-lm-2021"
        size = rid.split("_")[-1]
        if size == "529.6B":
            model = MODELS + "megatron-530b.yaml"
        elif size == "1008.0B":
            model = MODELS + "megatron-1t.yaml"
        else:
            model = gpt("narayanan-gpt-" + size.lower(), NARAYANAN_SRC, m["layers"], m["hidden"], m["heads"])
        parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], vpp=1, schedule="1f1b")
        training = dict(seq_len=2048, micro_batch=1, global_batch=t["global_batch_size"], precision="fp16",
                        recompute="full")
        notes += ["micro_batch 1 ASSUMED (not in Table 1; Megatron default)",
                  "vpp 1 ASSUMED (Table 1 gives no virtual stages; the paper used interleaving for some large runs)",
                  "fp16 for 'mixed precision 16-bit' (A100 bf16 and fp16 peaks are equal)"]
    elif g.startswith("Korthikanti"):
        conv = "megatron72"
        if "abstract" in rid:
            not_modelled = ("abstract headline only: model shape, TP/PP/DP and batch sizes are not stated "
                            f"(missing {', '.join(r['missing_core_fields'])})")
            notes.append(f"measured MFU {me['mfu']} (model FLOPs / (time * GPUs * 312)); tflops_per_gpu = MFU * 312")
        else:
            framework = "megatron-lm-2021"
            size = rid.split("_")[2]
            model = MODELS + KORTHIKANTI_MODELS[size]
            seqsel = rid.endswith("seqsel")
            vpp = p["vp"] or 1
            parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], vpp=vpp, sequence_parallel=seqsel,
                            schedule="interleaved" if vpp > 1 else "1f1b")
            training = dict(seq_len=2048, micro_batch=t["micro_batch_size"], global_batch=t["global_batch_size"],
                            precision="fp16", recompute="selective" if seqsel else "full")
            notes += ["vpp and micro-batch from calculon's encoding of the setup (secondary source)",
                      "vocab 51200 (padded GPT-2 BPE; the source record leaves it null)"]
    elif g.startswith("Megatron-LM README"):
        hardware = HW_H100
        if "strong" in rid:
            not_modelled = "strong-scaling endpoint given as text only: TP/PP/DP not stated (missing parallelism.tp, pp, dp)"
            notes.append(f"measured MFU {me['mfu']}; tflops_per_gpu = MFU * 989 (the README's MFU definition)")
        else:
            size = rid.split("_")[-1]
            model = {"name": "mcore-gpt-" + size.lower(),
                     "source": "Megatron-LM README model_table.png (layers, hidden, heads; vocab 131072, seq 4096); ffn 4h, GeLU, no GQA ASSUMED (not stated)",
                     "layers": m["layers"], "hidden": m["hidden"], "heads": m["heads"], "vocab": m["vocab"],
                     "mlp": "gelu", "norm": "layernorm", "position": "rope", "max_seq_len": 4096}
            framework = "megatron-core-0.8"
            parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], vpp=1, sequence_parallel=p["tp"] > 1, zero=1,
                            schedule="1f1b")
            training = dict(seq_len=4096, micro_batch=1, global_batch=t["global_batch_size"], precision="bf16",
                            overlap={"dp": True, "tp": True, "pp": True})
            notes += ["micro_batch 1 and vpp 1 ASSUMED (not stated; Megatron defaults)",
                      "bf16 implied by MFU = TFLOP/s / 989",
                      "sequence parallel implied by --tp-comm-overlap, distributed optimizer (zero 1) by --overlap-param-gather",
                      "8 GPUs per node ASSUMED (DGX H100)"]
    elif g.startswith("NeMo"):
        conv = "model"
        framework = "nemo-24.07"
        hardware = HW_H100
        model = NEMO_MODELS[rid]
        vpp = p["vp"] or 1
        seq = m["seq_len"]
        parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], cp=p["cp"], vpp=vpp,
                        schedule="interleaved" if vpp > 1 else "1f1b")
        training = dict(seq_len=seq, micro_batch=t["micro_batch_size"], global_batch=t["global_batch_size"],
                        precision="fp8")
        if r["missing_core_fields"]:
            notes.append(f"source leaves {', '.join(r['missing_core_fields'])} out; shape from the named public model (see scenario.model)")
        notes += ["sequence parallel, distributed optimizer, recompute and communication overlap not stated in the table: "
                  "the NeMo 24.07 performance recipes' settings (training.framework)"]
    elif g.startswith("NVIDIA dgxc-benchmarking"):
        # NVIDIA's DGX Cloud benchmarking recipes (NeMo 24.09): a weak-scaling series, 16 sequences per
        # node, the same layout on every GPU count but dp.
        conv = "model"
        framework = "nemo-24.07"
        hardware = HW_H100
        model = MODELS + "llama3-70b.yaml"
        fp8 = t["precision"].upper().startswith("FP8")
        vpp = p["vp"] or 1
        parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], cp=p["cp"] or 1, vpp=vpp,
                        schedule="interleaved" if vpp > 1 else "1f1b")
        training = dict(seq_len=m["seq_len"], micro_batch=t["micro_batch_size"], global_batch=t["global_batch_size"],
                        precision="fp8" if fp8 else "bf16")
        notes += ["model llama3-70b: Llama 3.1 70B has Llama 3 70B's shape (the source's FLOP notes: 80 layers, 8192 hidden, "
                  "FFN 28672, 64 heads, 8 query groups, vocab 128256)",
                  "sequence parallel, distributed optimizer, recompute and communication overlap not stated: the NeMo "
                  "24.07 performance recipes' settings (training.framework; the source ran NeMo 24.09)",
                  "tflops_per_gpu = the source's MFU x " + ("1979 (FP8" if fp8 else "989 (BF16") + " dense peak, its convention)"]
    elif g.startswith("MT-NLG"):
        conv = "megatron96"
        model = gpt("mt-nlg-530b", "Smith et al. 2022 Sec. 2.4 (105 layers, hidden 20480, 128 heads, seq 2048); vocab 50272 = padded GPT-2 BPE (llm-analysis)",
                    105, 20480, 128, vocab=50272)
        framework = "deepspeed"
        parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], vpp=1, sequence_parallel=False, zero=1, schedule="1f1b")
        training = dict(seq_len=2048, micro_batch=1, global_batch=t["global_batch_size"], precision="bf16",
                        recompute="full", flash_attention=False)
        notes += ["micro_batch 1 ASSUMED (not stated; Megatron default)",
                  "zero 1: DeepSpeed's pipeline engine supports ZeRO stage 0/1 only (the llm-analysis script's ZeRO-3 cannot combine with PP)",
                  "A100 80GB (Selene) assumed; 40 vs 80 GB unresolved in the sources, which affects memory only",
                  "precision not stated; bf16 assumed (equal A100 peak to fp16)",
                  "TFLOP/s convention presumed Narayanan Eq. 3 (recompute counted), not restated by the source"]
    elif g.startswith("BLOOM"):
        if rid.startswith("bloom176b_final"):
            conv = "megatron96"
            framework = "deepspeed"
            model = MODELS + "bloom-176b.yaml"
            parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], vpp=1, sequence_parallel=False, zero=1,
                            schedule="1f1b", stage_layers=BLOOM_STAGES)
            training = dict(seq_len=2048, micro_batch=t["micro_batch_size"], global_batch=t["global_batch_size"],
                            precision="bf16", recompute="full", flash_attention=False)
            notes += ["ALiBi expressed as position rope (no position table)",
                      "zero 1: DeepSpeed BF16_Optimizer shards optimizer states (ZERO_STAGE=0 in the config)",
                      "stage_layers: DeepSpeed partitions 70 layers + 2 embedding slots, 6 per stage",
                      "Jean Zay uses Omni-Path (4 links per node) between nodes, not the HDR IB of dgx-a100-80g",
                      "tokens_per_s = samples_per_s 19.561 * 2048"]
        elif rid.startswith("bloom_prequel_best"):
            conv = "unstated"
            framework = "deepspeed"
            size = m["params_b"]
            model = gpt(f"bloom-candidate-{size}b", "BigScience tr11 chronicles-prequel 'Best TFLOPs' (layers, hidden, heads; VOCAB_LENGTH=250k); ffn 4h, GeLU, LayerNorm, tied ASSUMED (Megatron-DeepSpeed GPT)",
                        m["layers"], m["hidden"], m["heads"], vocab=m["vocab"])
            parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], vpp=1, sequence_parallel=False, zero=1, schedule="1f1b")
            training = dict(seq_len=2048, micro_batch=t["micro_batch_size"], global_batch=t["global_batch_size"],
                            precision="fp16", recompute="full", flash_attention=False)
            notes += ["recompute full ASSUMED (not restated here; the tr11 launch script uses --checkpoint-activations)",
                      "TFLOP/s by the OLD estimate P*4*2*seq*GBS/(time*GPUs), about 3% under Narayanan Eq. 3: compare step_s",
                      "iteration-2 snapshot, not steady state"]
        else:
            conv = "megatron96"
            not_modelled = ("model.heads not stated (head count sets attention activation memory), and precision and "
                            "recompute are not restated; iteration-2 snapshot")
    elif g.startswith("MosaicML llm-foundry"):
        framework = "llm-foundry"
        hardware = LLMFOUNDRY_HW[hw["gpu"]]
        model = mpt(m, f"llm-foundry scripts/train/yamls/pretrain/{m['name'].lower()}.yaml (d_model, n_heads, n_layers, "
                       "expansion_ratio 4, vocab 50368) with MPTConfig defaults: GeLU, LayerNorm with bias, learned "
                       "positions, tied embeddings")
        parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], zero=3)
        if "DEFAULT" in t["precision"]:
            # Composer's DEFAULT mixed precision reduces gradients in fp32 (PURE, the row's default: bf16)
            parallel["sharding"] = {"reduce_dtype": "fp32"}
        training = dict(seq_len=m["seq_len"], micro_batch=t["micro_batch_size"], global_batch=t["global_batch_size"],
                        precision="bf16", recompute="full" if t["recompute"].startswith("full") else "none")
        notes += [f"bf16 for '{t['precision']}' (bf16 compute either way; Composer's DEFAULT mode reduces gradients in fp32, "
                  "PURE in bf16: parallel.sharding.reduce_dtype)",
                  "8 GPUs per node ASSUMED (MosaicML platform nodes; interconnect "
                  + ("'" + hw["inter_node_interconnect"] + "', 25 GB/s per GPU as the DGX A100 file)"
                     if hw["inter_node_interconnect"] else "not stated: the DGX H100 file's NDR)"),
                  f"step_s = global batch {t['global_batch_size']} x seq {m['seq_len']} / {me['tokens_per_s']} tokens/s "
                  "(the source gives throughput only)"]
    elif g.startswith("torchtitan"):
        # PyTorch-native runs on Meta's Grand Teton H100s (96 GB HBM2e, 500 W): FSDP2 with TP, PP, CP.
        hardware = HW_GRAND_TETON
        other = me.get("other") or {}
        fw_text = t.get("framework") or ""
        compiled = "compile" in fw_text or "compile" in rid
        framework = "torchtitan-compile" if compiled else "torchtitan"
        model = MODELS + TORCHTITAN_MODELS[m["name"]]
        seq = m["seq_len"]
        local = other["local_batch_size"]
        parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], cp=p["cp"] or 1)
        if p["tp"] > 1:
            parallel["sequence_parallel"] = True
        asynctp = "AsyncTP" in fw_text or "asynctp" in rid.split("_")[-1] or "AsyncTP" in (other.get("technique") or "")
        micro = local
        if p["pp"] > 1:
            micro = max(1, local // p["pp"])
            parallel["schedule"] = "1f1b"
            notes.append(f"micro_batch {micro} ASSUMED: local batch {local} in pp {p['pp']} micro-batches "
                         "(torchtitan's default pipeline_parallel_microbatches = pp degree; the source does not say)")
        rec = t["recompute"] or ""
        op_sac = rec.startswith("selective") and ("op" in rec or "SAC" in rec)
        recompute = "full" if rec.startswith("full") else "op" if op_sac else "none"
        if op_sac:
            notes.append("recompute op for torchtitan's op-level selective checkpointing (selective_ac_option "
                         "\"op\"): every second mm and every elementwise operator recomputed, the attention output saved")
        float8 = "float8" in rid or "fp8" in rid or "Float8" in (t.get("precision") or "")
        training = dict(seq_len=seq, micro_batch=micro, global_batch=t["global_batch_size"],
                        precision="fp8" if float8 else "bf16", recompute=recompute)
        if asynctp:
            training["overlap"] = {"tp": True}
        if float8:
            if "rowwise" in rid:
                training["fp8_recipe"] = "rowwise"
            notes.append("precision fp8 for torchao Float8 linears, fp8_recipe " + ("rowwise" if "rowwise" in rid else
                         "current (torchao's tensorwise dynamic scaling, the framework row's)") +
                         ": its quantise passes are counted; the GEMMs run at the tensorwise FP8 tables' rate (no "
                         "rowwise GEMM table was measured)")
        notes += ["hardware grand-teton-h100 (the source's Grand Teton H100: 96 GB HBM2e, 500 W)",
                  "sequence_parallel with tp > 1 (torchtitan's TP plan shards the norms' activations)" if p["tp"] > 1
                  else "no tensor parallelism",
                  f"step_s = global batch {t['global_batch_size']} x seq {seq} / ({me['tokens_per_s_per_gpu']} "
                  f"tokens/s/GPU x {gpus} GPUs)"]
        if asynctp:
            notes.append("overlap.tp for AsyncTP (TP communication overlapped with the GEMMs)")
        if other.get("peak_memory_gib") is not None:
            notes.append(f"peak_reserved_gib = the source's {other['peak_memory_gib']} GiB, the caching allocator's "
                         "peak reserved memory (torchtitan logs reserved_bytes.all.peak: no CUDA context, no NCCL "
                         "buffers), compared with the predicted reserve")
    else:
        raise SystemExit(f"unknown source group {g} in {rid}")

    if framework:
        notes.append(FRAMEWORK_NOTE.format(framework))
    if me.get("peak_memory_gb") is not None and not g.startswith("torchtitan"):
        notes.append("peak_memory_gib = the source's 'GB', read as GiB (nvidia-smi-style MiB/1024 on 80 GiB cards; "
                     f"{me.get('memory_kind')})")
    if r.get("notes"):
        notes.append("source notes: " + " ".join(r["notes"].split()))

    out["flops_convention"] = conv
    measured = {}
    if me.get("iteration_time_s") is not None:
        measured["step_s"] = me["iteration_time_s"]
    elif g.startswith("MosaicML") and me.get("tokens_per_s") is not None:
        measured["step_s"] = round(t["global_batch_size"] * m["seq_len"] / me["tokens_per_s"], 4)
    elif g.startswith("torchtitan") and me.get("tokens_per_s_per_gpu"):
        measured["step_s"] = round(t["global_batch_size"] * m["seq_len"] / (me["tokens_per_s_per_gpu"] * gpus), 4)
    if me.get("tflops_per_gpu") is not None:
        measured["tflops_per_gpu"] = me["tflops_per_gpu"]
    elif me.get("mfu") is not None and not g.startswith("MosaicML") and not g.startswith("torchtitan"):
        # (torchtitan's MFU is against an H100 SXM peak its own 500 W parts do not reach: compare step_s)
        # (llm-foundry's MFU counts 6N + 12 l d s per token, a convention of its own: compare step_s)
        peak = 989 if g.startswith("Megatron-LM") else 312
        if g.startswith("NVIDIA dgxc-benchmarking"):
            peak = 1979 if t["precision"].upper().startswith("FP8") else 989
        measured["tflops_per_gpu"] = round(me["mfu"] * peak, 1)
    if g.startswith("torchtitan") and (me.get("other") or {}).get("peak_memory_gib") is not None:
        measured["peak_reserved_gib"] = me["other"]["peak_memory_gib"]
    elif me.get("peak_memory_gb") is not None:
        measured["peak_memory_gib"] = me["peak_memory_gb"]
    if me.get("tokens_per_s") is not None:
        measured["tokens_per_s"] = me["tokens_per_s"]
    elif me.get("tokens_per_s_per_gpu") is not None:
        measured["tokens_per_s"] = me["tokens_per_s_per_gpu"] * gpus
        notes.append(f"tokens_per_s = {me['tokens_per_s_per_gpu']} tokens/s/GPU * {gpus} GPUs")
    elif me.get("samples_per_s") is not None:
        measured["tokens_per_s"] = round(me["samples_per_s"] * m["seq_len"], 1)
    out["measured"] = measured
    out["notes"] = "; ".join(notes)
    if not_modelled:
        out["not_modelled"] = not_modelled
    else:
        if framework:
            training["framework"] = framework
        out["scenario"] = {"name": rid, "model": model, "hardware": hardware, "cluster": {"gpus": gpus},
                           "parallel": parallel, "training": training}
        out["_size"] = params_estimate(model_dims(model))
    return out


def assign_splits(records, groups):
    """Per source group, modelled records sorted by (model size, GPUs, name): positions 0,3 of each
    run of four are `fit`, 1,2 `holdout` (F H H F ...), so pairs that differ in one setting
    (full vs selective recompute) land in different splits and both splits span the size range."""
    by_group = {}
    for rec, g in zip(records, groups):
        if "scenario" in rec:
            by_group.setdefault(g, []).append(rec)
    for recs in by_group.values():
        recs.sort(key=lambda x: (x["_size"], x["scenario"]["cluster"]["gpus"], x["name"]))
        for i, rec in enumerate(recs):
            rec["split"] = "fit" if i % 4 in (0, 3) else "holdout"


def flow(d):
    return "{" + ", ".join(f"{k}: {fmt(v)}" for k, v in d.items()) + "}"


def fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return flow(v)
    if isinstance(v, list):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    if isinstance(v, str):
        return q(v)
    return str(v)


def emit(records, head):
    lines = [head]
    for r in records:
        lines.append(f"- name: {q(r['name'])}")
        lines.append(f"  source: {q(r['source'])}")
        lines.append(f"  flops_convention: {r['flops_convention']}")
        if "split" in r:
            lines.append(f"  split: {r['split']}")
        if r["notes"]:
            lines.append(f"  notes: {q(r['notes'])}")
        if "not_modelled" in r:
            lines.append(f"  not_modelled: {q(r['not_modelled'])}")
        else:
            s = r["scenario"]
            lines.append("  scenario:")
            lines.append(f"    name: {q(s['name'])}")
            if isinstance(s["model"], str):
                lines.append(f"    model: {s['model']}")
            else:
                lines.append("    model:")
                for k, v in s["model"].items():
                    lines.append(f"      {k}: {fmt(v)}")
            lines.append(f"    hardware: {s['hardware']}")
            for k in ("cluster", "parallel", "training"):
                lines.append(f"    {k}: {flow(s[k])}")
        lines.append(f"  measured: {flow(r['measured'])}")
    return "\n".join(lines) + "\n"


HEAD = """# ptdsim validation dataset: every record of scenarios/published/sources/published_runs.yaml
# ({n} records) converted by scenarios/published/convert.py.
# Do not edit by hand; change convert.py and regenerate. Conversion rules, assumptions and the
# fit/holdout split are documented in docs/data.md. Units: step_s seconds, tflops_per_gpu as the
# source counts them (see flops_convention), peak_memory_gib GiB, tokens_per_s tokens per second.
"""

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(REPO, "scenarios", "published")


HEAD_TORCHTITAN = """# ptdsim validation dataset of the PyTorch-native runs: every record of
# scenarios/published/sources/published_runs_torchtitan.yaml ({n} records, torchtitan on Grand Teton H100s)
# converted by scenarios/published/convert.py --torchtitan. Do not edit by hand; change convert.py and
# regenerate. Rules and assumptions: docs/data.md and each record's notes. Run: ptdsim validate
# scenarios/published/torchtitan.yaml. Units as dataset.yaml.
"""


def dataset_text(source_path, head=HEAD):
    src = yaml.safe_load(open(source_path, encoding="utf-8"))
    recs = [convert(r) for r in src]
    assign_splits(recs, [r["source_group"] for r in src])
    return emit(recs, head.format(n=len(src)))


# The MoE runs (convert.py --moe): Megatron-Bridge / NeMo performance tables, NVIDIA's dgxc recipes, the
# Megatron MoE model zoo and Megatron-Core write-ups. Hardware by the record's GPU; a GPU without a
# hardware file in the repository is refused with that reason.
MOE_HW = {"H100": HW_H100, "B200": "../../hardware/dgx-b200.yaml", "GB200": "../../hardware/gb200-nvl72.yaml",
          "GB300": "../../hardware/gb300-nvl72.yaml", "B300": "../../hardware/dgx-b300.yaml"}
MOE_MODELS = {"DeepSeek-V3": "deepseek-v3.yaml", "Qwen3-30B-A3B": "qwen3-30b-a3b.yaml",
              "Qwen3-235B-A22B": "qwen3-235b-a22b.yaml", "Mixtral 8x7B": "mixtral-8x7b.yaml"}
MIXTRAL_8X22B = {
    "name": "mixtral-8x22b",
    "source": "record's arch (56 layers, hidden 6144, 48 heads, 8 KV heads, expert FFN 16384, 8 experts top-2); vocab 32768 from the public config.json of mistralai/Mixtral-8x22B-v0.1 (the record leaves it null)",
    "layers": 56, "hidden": 6144, "heads": 48, "kv_heads": 8, "ffn_hidden": 16384, "vocab": 32768,
    "mlp": "swiglu", "norm": "rmsnorm", "position": "rope", "max_seq_len": 65536, "tied_embeddings": False,
    "bias": False, "moe": {"experts": 8, "top_k": 2, "every": 1, "ffn_hidden": 16384}}


def moe_gpu(gpu):
    for k in ("GB300", "GB200", "B300", "B200", "H100"):
        if gpu.startswith(k):
            return k
    return gpu


def bridge_2509_script(r, gpu):
    """The 25.09 container's rows name no recipe; Megatron-Bridge's performance script of that release
    (tag v0.1.0rc3, 2025-10-08, and v0.1.0rc4's "Cherry pick perf 2509 (#959)", scripts/performance/run_script.py)
    sets the MoE switches per model and GPU: DeepSeek-V3 on H100 runs DeepEP (enable_deepep) with the
    1F1B all-to-all overlap (A2A_1F1B: overlap_moe_expert_parallel_comm), recomputes mla_up_proj and mlp
    (rc3 and rc4 run_script.py:89-91) and does not overlap the gradient reduce-scatter
    (overlap_grad_reduce False, rc3 :95, rc4 :102); on B200 / GB200 it drops tokens (apply_moe_token_drop:
    capacity factor 1.0, padded) with the alltoall dispatcher and no overlap, on B200 recomputing
    mla_up_proj (rc4 :92-93, at the row's tp 1, pp 16; rc3's B200 preset had tp 2), on GB200 with token
    drop mla_up_proj too (rc4 :94-96; rc3 :91 named mla_up_proj, mlp and moe_act there); the configs'
    recompute granularity is selective (configs/deepseek/deepseek_v3_llm_pretrain.yaml). Qwen3 drops
    tokens with the alltoall dispatcher and recomputes nothing (its configs set recompute null). Returns
    (the recipe's words, the note) or None."""
    t = r["training"]
    if not r["source_group"].startswith("Megatron-Bridge") or "25.09" not in (t.get("framework") or ""):
        return None
    if r["model"]["name"] == "DeepSeek-V3" and gpu == "H100":
        return ("deepep moe_a2a_overlap=True overlap_grad_reduce=False recompute_modules=['mla_up_proj', 'mlp']",
                "dispatcher flex, overlap.ep, recompute_modules mla_up_proj, mlp and overlap.dp off from the 25.09 "
                "release's performance script (Megatron-Bridge v0.1.0rc3 / v0.1.0rc4 scripts/performance/run_script.py: "
                "DeepSeek-V3 on H100 sets enable_deepep, A2A_1F1B, i.e. overlap_moe_expert_parallel_comm, "
                "recompute_modules and overlap_grad_reduce False)")
    if r["model"]["name"] == "DeepSeek-V3" and gpu in ("B200", "GB200"):
        return ("alltoall tokendrop moe_a2a_overlap=False recompute_modules=['mla_up_proj']",
                "dispatcher alltoall with token drop (capacity factor 1.0, padded), overlap.ep off and recompute_modules "
                "mla_up_proj as the 25.09 release's performance script runs DeepSeek-V3 on this GPU (Megatron-Bridge "
                "v0.1.0rc4 scripts/performance/run_script.py)")
    return ("alltoall tokendrop moe_a2a_overlap=False",
            "dispatcher alltoall with token drop (capacity factor 1.0, padded) and overlap.ep off as the 25.09 "
            "release's performance script runs this model on this GPU (Megatron-Bridge v0.1.0rc3 "
            "scripts/performance/run_script.py: apply_moe_token_drop; A2A_1F1B only for DeepSeek-V3 on H100)")


def dgxc_2508_script(r, gpu):
    """dgxc-benchmarking's release 25.08 (59689f59, deepseek_v3/pretrain/launch.sh) runs NeMo at 9244b1ec
    (its metadata.yaml), whose scripts/performance/llm/pretrain_deepseek_v3.py sets the dispatcher per GPU:
    on H100 DeepEP (moe_token_dispatcher_type flex, moe_enable_deepep) with the router force-balanced
    (elsewhere alltoall with the token-drop callback: no such row in the data), and no all-to-all overlap
    (it sets no overlap_moe_expert_parallel_comm, which defaults off; launch.sh's -ol 0 is
    --activation_offload_layers 0, scripts/performance/argument_parser.py). Returns (the recipe's words,
    the note) or None."""
    if not (r["source"].get("commit") or "").startswith("59689f59") or r["model"]["name"] != "DeepSeek-V3" \
            or gpu != "H100":
        return None
    return ("deepep balanced moe_a2a_overlap=False",
            "dispatcher flex from the 25.08 release's recipe (dgxc-benchmarking 59689f59 runs NeMo 9244b1ec's "
            "scripts/performance/llm/pretrain_deepseek_v3.py: on H100 moe_token_dispatcher_type flex with "
            "moe_enable_deepep and moe_router_force_load_balancing, and no all-to-all overlap)")


def dgxc_deepseek_script(r, gpu):
    """dgxc-benchmarking's DeepSeek-V3 recipes of 2025. Release 25.05.04 (1f6d9f40,
    deepseek_v3/pretraining/launch.sh) runs NeMo 7a8f1cc's scripts/performance/llm/pretrain_deepseek_v3.py
    in the nemo:25.04.01 container with --recompute_modules core_attn on GB200 and mla_up_proj on H100,
    the alltoall dispatcher with NeMo's MegatronTokenDropCallback (USE_TOKEN_DROP; capacity factor 1.0,
    padded), MTP (pretrain_recipe use_mtp=True: one layer), no TP communication overlap
    (MegatronCommOverlapCallback tp_comm_overlap=False), DeepSeek's unfused RoPE (its config's
    apply_rope_fusion False), num_layers_in_first_pipeline_stage 64/pp - 1 and last 64/pp - 2, and no
    all-to-all overlap (the Megatron-Core it pins, 7094270c, has none; launch.sh's -ol 0 is
    --activation_offload_layers). On GB200 the TransformerEngine NeMo pins there (bee4649) refuses cuDNN's
    fused attention on sm100 for a head dim above 128 (transformer_engine/common/fused_attn/fused_attn.cpp,
    `!(sm_arch_ >= 100 && (head_dim_qk > 128 || head_dim_v > 128))`) and FlashAttention for unequal Q and V
    head dims, so MLA's 192/128 heads ran TE's unfused attention (TE 2.5, 71c76b6, enabled them on
    Blackwell). Release 25.10 (8e77d607, deepseek_v3/pretrain/launch.sh, nemo:25.09.00) runs
    Megatron-Bridge's run_script.py: alltoall with token drop and recompute_modules mla_up_proj on GB200.
    Returns (the recipe's words, the note) or None."""
    commit = r["source"].get("commit") or ""
    if r["model"]["name"] != "DeepSeek-V3" or gpu not in ("GB200", "H100"):
        return None
    if commit.startswith("1f6d9f40"):
        pp = r["parallelism"]["pp"]
        words = (f"alltoall tokendrop mtp_num_layers=1 moe_a2a_overlap=False tp_comm_overlap=False rope_fusion=False "
                 f"first_stage_layers={64 // pp - 1} last_stage_layers={64 // pp - 2}")
        source = ("from the 25.05.04 release's recipe (dgxc-benchmarking 1f6d9f40 launch.sh runs NeMo 7a8f1cc's "
                  "scripts/performance/llm/pretrain_deepseek_v3.py)")
        if gpu == "H100":
            return (words + " recompute_modules=['mla_up_proj']",
                    "dispatcher alltoall with token drop, MTP, recompute_modules mla_up_proj, no TP communication "
                    "overlap, RoPE unfused and the first and last stages one and two layers short " + source)
        return (words + " recompute_modules=['core_attn'] unfused_attention",
                "dispatcher alltoall with token drop, MTP, recompute_modules core_attn, no TP communication overlap, "
                "RoPE unfused, the first and last stages one and two layers short, and TransformerEngine's unfused "
                "attention " + source + "; the TransformerEngine it pins, bee4649, has no fused or flash attention "
                "for MLA's 192-wide heads on Blackwell: ASSUMED to be the container's)")
    if commit.startswith("8e77d607") and gpu == "GB200":
        return ("alltoall tokendrop moe_a2a_overlap=False recompute_modules=['mla_up_proj']",
                "dispatcher alltoall with token drop and recompute_modules mla_up_proj from the 25.10 release's recipe "
                "(dgxc-benchmarking 8e77d607 runs Megatron-Bridge's scripts/performance/run_script.py in nemo:25.09.00)")
    return None


def recipe_script(r, gpu):
    """The release script that names a row's MoE switches where its source does not, or None."""
    return bridge_2509_script(r, gpu) or dgxc_2508_script(r, gpu) or dgxc_deepseek_script(r, gpu)


# What the model zoo's benchmarking yaml sets beyond the table's columns, per model
# (yanring/Megatron-MoE-ModelZoo model_configs/benchmarking/<model>.yaml, MODEL_ARGS), in every version
# since the H100 table was first published (8017e11, 2025-05-27, to e8650517):
# --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split, and
# --overlap-grad-reduce and --overlap-param-gather (8017e11, the commit that added the H100 rows). (Its
# --cross-entropy-loss-fusion came later, by b0b92ff of 2025-11-04, after the table's runs, so the
# rows keep the preset's loss.)
# The performance presets of three containers' own Megatron-Bridge releases. The source's notes compare
# each 26.02.01 / 26.04.01 row with the nearest tag before the container (v0.3.0, v0.4.0) and name no
# preset for the 26.08 rows; the releases those containers carry are v0.3.1 (2026-03-20), v0.4.2
# (2026-05-28) and v0.6.0 (2026-08-19, whose docs/performance-summary.md is the 26.08 one). The rows'
# layouts that no earlier tag has (B200 DeepSeek-V3 pp 8 vp 2 ep 32, B300 DeepSeek-V3 pp 8 mbs 2,
# B200 Qwen3-30B mbs 4) first appear in them, and 26.02.01's Qwen3-235B layouts are v0.3.1's, not
# v0.4.0's. Transcribed from scripts/performance/configs/deepseek/deepseek_workload_base_configs.py and
# scripts/performance/configs/qwen/qwen3_workload_base_configs.py (v0.3.1, v0.4.2) and from
# src/megatron/bridge/perf_recipes/qwen/{gb200,gb300}/qwen3_moe.py, the 256-GPU fp8mx recipes, whose
# _enable_hybridep_full_iteration_mxfp8 (perf_recipes/qwen/common.py) sets
# overlap_moe_expert_parallel_comm (v0.6.0), NVIDIA-NeMo/Megatron-Bridge:
# (container, model, GPU) -> (tag, preset, (tp, pp, vp, ep, mbs, gbs), recompute_modules,
# moe_flex_dispatcher_backend, moe_a2a_overlap, pp_layout). The precision is each row's (MXFP8 on
# Blackwell, FP8 current scaling on H100).
RELEASE_PRESETS = {
    ("26.02.01", "DeepSeek-V3", "B200"): ("v0.3.1", "DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2", (1, 16, 1, 8, 1, 4096), ["mla_up_proj"], "hybridep", False, None),
    ("26.02.01", "DeepSeek-V3", "B300"): ("v0.3.1", "DEEPSEEK_V3_PRETRAIN_CONFIG_B300_FP8_MX_V2", (1, 16, 1, 8, 1, 4096), ["mla_up_proj"], "hybridep", False, None),
    ("26.02.01", "DeepSeek-V3", "GB300"): ("v0.3.1", "DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V2", (1, 2, 8, 32, 2, 4096), ["mla_up_proj"], "hybridep", False, "Et*4|(t*4|)*14tmL"),
    ("26.02.01", "Qwen3-235B-A22B", "B300"): ("v0.3.1", "QWEN3_235B_A22B_PRETRAIN_CONFIG_B300_FP8_MX_V2", (1, 8, 1, 8, 1, 8192), None, "deepep", False, None),
    ("26.02.01", "Qwen3-235B-A22B", "GB200"): ("v0.3.1", "QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200_FP8_MX_V2", (1, 8, 1, 32, 1, 8192), None, "hybridep", False, None),
    ("26.02.01", "Qwen3-235B-A22B", "GB300"): ("v0.3.1", "QWEN3_235B_A22B_PRETRAIN_CONFIG_GB300_FP8_MX_V2", (1, 4, 1, 32, 2, 8192), None, "hybridep", False, None),
    ("26.02.01", "Qwen3-30B-A3B", "B200"): ("v0.3.1", "QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_FP8_MX_V1", (1, 1, 1, 8, 4, 512), None, "hybridep", False, None),
    ("26.02.01", "Qwen3-30B-A3B", "B300"): ("v0.3.1", "QWEN3_30B_A3B_PRETRAIN_CONFIG_B300_FP8_MX_V1", (1, 1, 1, 8, 8, 512), None, "hybridep", False, None),
    ("26.02.01", "Qwen3-30B-A3B", "H100"): ("v0.3.1", "QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1", (1, 1, 1, 16, 1, 1024), None, "hybridep", False, None),
    ("26.04.01", "DeepSeek-V3", "B200"): ("v0.4.2", "DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2", (1, 8, 2, 32, 1, 4096), ["mla_up_proj", "mlp"], "deepep", True, "Et*4|(t*4|)*14tmL"),
    ("26.04.01", "DeepSeek-V3", "B300"): ("v0.4.2", "DEEPSEEK_V3_PRETRAIN_CONFIG_B300_FP8_MX_V2", (1, 8, 1, 8, 2, 4096), ["mla_up_proj"], "hybridep", False, None),
    ("26.04.01", "DeepSeek-V3", "GB300"): ("v0.4.2", "DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V2", (1, 2, 8, 32, 2, 4096), ["mla_up_proj"], "hybridep", False, "Et*4|(t*4|)*14tmL"),
    ("26.04.01", "Qwen3-235B-A22B", "B300"): ("v0.4.2", "QWEN3_235B_A22B_PRETRAIN_CONFIG_B300_FP8_MX_V2", (1, 8, 1, 8, 2, 8192), None, "hybridep", False, None),
    ("26.04.01", "Qwen3-235B-A22B", "GB200"): ("v0.4.2", "QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200_FP8_MX_V2", (1, 8, 3, 32, 1, 8192), None, "hybridep", False, None),
    ("26.04.01", "Qwen3-235B-A22B", "GB300"): ("v0.4.2", "QWEN3_235B_A22B_PRETRAIN_CONFIG_GB300_FP8_MX_V2", (1, 4, 12, 32, 2, 8192), None, "hybridep", False, None),
    ("26.04.01", "Qwen3-30B-A3B", "B200"): ("v0.4.2", "QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_FP8_MX_V1", (1, 1, 1, 8, 4, 512), None, "hybridep", False, None),
    ("26.04.01", "Qwen3-30B-A3B", "B300"): ("v0.4.2", "QWEN3_30B_A3B_PRETRAIN_CONFIG_B300_FP8_MX_V1", (1, 1, 1, 8, 8, 512), None, "hybridep", False, None),
    ("26.04.01", "Qwen3-30B-A3B", "H100"): ("v0.4.2", "QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1", (1, 1, 1, 16, 1, 1024), None, "hybridep", False, None),
    ("26.08", "Qwen3-235B-A22B", "GB200"): ("v0.6.0", "qwen3_235b_a22b_pretrain_256gpu_gb200_fp8mx_config", (1, 8, 3, 32, 1, 8192), None, "hybridep", True, None),
    ("26.08", "Qwen3-235B-A22B", "GB300"): ("v0.6.0", "qwen3_235b_a22b_pretrain_256gpu_gb300_fp8mx_config", (1, 4, 12, 32, 2, 8192), None, "hybridep", True, None),
}
# The presets whose recipe turns on TransformerEngine's fused MXFP8 grouped MLP (the performance
# scripts' cutedsl_fused_grouped_mlp, which scripts/performance/utils/overrides.py turns into
# use_transformer_engine_op_fuser=True and moe_mlp_glu_interleave_size=32, with
# NVTE_CUTEDSL_FUSED_GROUPED_MLP=1 in perf_plugins.py), NVIDIA-NeMo/Megatron-Bridge:
# v0.5.0 (the 26.06 container) scripts/performance/configs/qwen/qwen3_workload_base_configs.py:358,
# 388, 432 (Qwen3-30B-A3B) and 202, 229 (Qwen3-235B-A22B), deepseek_workload_base_configs.py:68, 98,
# 193, 209, 323 (DeepSeek-V3; V2 and GBS15360 inherit V1's switch by replace()); v0.5.1 (26.06.01,
# docs/versions1.json) keeps them; v0.6.0 (26.08) src/megatron/bridge/perf_recipes/qwen/common.py:51
# (_enable_hybridep_full_iteration_mxfp8) for the 256-GPU fp8mx recipes. Not at v0.4.x, whose
# overrides.py:63-64 forced the op fuser off; not for DeepSeek-V3 on B300 at v0.5.0.
FUSED_GROUPED_MLP = {
    "QWEN3_30B_A3B_PRETRAIN_CONFIG_GB300_FP8_MX_V1", "QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1",
    "QWEN3_30B_A3B_PRETRAIN_CONFIG_B300_FP8_MX_V1", "QWEN3_235B_A22B_PRETRAIN_CONFIG_GB300_FP8_MX_V2",
    "QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200_FP8_MX_V2", "DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V1",
    "DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V2", "DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_GBS15360",
    "DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V1", "DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V2",
    "qwen3_235b_a22b_pretrain_256gpu_gb200_fp8mx_config", "qwen3_235b_a22b_pretrain_256gpu_gb300_fp8mx_config",
}
FUSED_GROUPED_MLP_TAGS = ("v0.5.0", "v0.6.0")


def fused_grouped_mlp(switches, recipe):
    """(tag, preset) when the recipe text's preset turns the fused MXFP8 grouped MLP on, else None."""
    named = re.search(r"@ tag (v[\d.]+)(?: has a preset with exactly this layout)? \((\w+)\)", switches)
    if named and named.group(1) in FUSED_GROUPED_MLP_TAGS and named.group(2) in FUSED_GROUPED_MLP and recipe == "mxfp8":
        return named.group(1), named.group(2)
    return None


# The 25.11 container's release, Megatron-Bridge v0.2.0 (docs/versions1.json), runs HybridEP in every
# preset of these models on GB200 and GB300, at every precision (moe_flex_dispatcher_backend="hybridep"
# in scripts/performance/configs/qwen3/workload_base_configs.py QWEN3_235B_A22B_GB300_* / GB200_* and
# QWEN3_30B_A3B_GB300_* / GB200_*, configs/deepseek/workload_base_configs.py DEEPSEEK_V3_GB300_BASE_CONFIG
# and DEEPSEEK_V3_GB200_BASE_CONFIG): the dispatcher of a 25.11 row there whose layout no preset has.
RELEASE_HYBRIDEP = {("25.11", model, gpu) for model in ("DeepSeek-V3", "Qwen3-30B-A3B", "Qwen3-235B-A22B")
                    for gpu in ("GB200", "GB300")}


def container(r):
    """The NeMo container a Megatron-Bridge row names ('26.04.01'), or None."""
    named = re.search(r"NeMo (\d\d\.\d\d(?:\.\d\d)?) container", r["training"].get("framework") or "")
    return named.group(1) if named and r["source_group"].startswith("Megatron-Bridge") else None


def release_dispatcher(r, gpu):
    """'hybridep' where the row's container's release runs it for every preset of its model on its GPU."""
    return "hybridep" if (container(r), r["model"]["name"], gpu) in RELEASE_HYBRIDEP else None


PRESET_SENTENCE = re.compile(r"(Perf recipe \S+ @ tag \S+ has a preset with exactly this layout .*?medium confidence\."
                             r"|No preset in the perf recipes @ tag \S+ matches this exact layout;.*?left null\.)")


def release_preset(r, gpu, rec_notes):
    """The row's recipe text for the switches convert_moe reads (dispatcher backend, moe_a2a_overlap,
    recompute_modules, pp_layout): for a 26.02.01 / 26.04.01 / 26.08 row whose layout its release's preset has,
    that preset in place of the earlier tag's (RELEASE_PRESETS), first, so that it is what the readers
    find; else the source's notes. Returns (text, note or None, whether the preset applies)."""
    p, t = r["parallelism"], r["training"]
    release = container(r)
    hit = RELEASE_PRESETS.get((release, r["model"]["name"], gpu))
    if not hit:
        return rec_notes, None, False
    tag, name, layout, modules, backend, a2a, pp_layout = hit
    row = (p["tp"], p["pp"], p.get("vp") or 1, p["ep"], t["micro_batch_size"], t["global_batch_size"])
    if row != layout:
        return rec_notes, (f"the {release} release's preset ({name} @ Megatron-Bridge {tag}) has another layout "
                           f"(tp, pp, vp, ep, mbs, gbs {layout}); the source's notes kept"), False
    text = (f"Perf recipe @ tag {tag} ({name}): recompute_modules={modules}, dispatcher backend={backend}, "
            f"moe_a2a_overlap={a2a}, pp_layout={pp_layout},")
    return (text + " " + PRESET_SENTENCE.sub("", rec_notes),
            f"recipe switches from the {release} container's release, Megatron-Bridge {tag} ({name}, the row's "
            f"layout): recompute_modules {modules}, dispatcher backend {backend}, moe_a2a_overlap {a2a}, "
            f"pp_layout {pp_layout} (" + ("the source's notes compare an earlier tag" if PRESET_SENTENCE.search(rec_notes)
                                         else "the source's notes name no preset") + ")", True)


def pp_layout_stages(layout):
    """Megatron-Core's pipeline layout string (PipelineParallelLayerLayout: '|' ends a virtual stage, 't' a
    transformer layer, 'E' the embedding, 'm' an MTP module, 'L' the loss, 'x*N' and '(...)*N' repeats)
    as transformer layers per virtual stage, in pipeline order (Megatron-Core's order: virtual stage
    v of pipeline rank r is entry v*pp + r). Commas are cosmetic there and dropped."""
    s = layout.replace(",", "")
    while True:
        n = re.sub(r"\(([^()]*)\)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), s)
        if n == s:
            break
        s = n
    s = re.sub(r"(.)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), s)
    return [st.count("t") for st in s.split("|")]


MOEZOO_YAML = {"Qwen3-235B-A22B": "model_configs/benchmarking/Qwen3-235B-A22B.yaml"}


# The source groups whose TFLOP/s per GPU is Megatron-LM's own count (num_floating_point_operations,
# docs/validation.md "How the comparison is made"), by its revision: Megatron-Core v0.8's (2024) for
# the MoE README's headline, the one since 2025 for the rest. Megatron-Bridge's flop_utils.py and the
# NeMo log behind dgxc's rows count as it does (the test "Megatron's count reproduces the TFLOP/s the
# MoE sources print beside a step or tokens/s" checks it). A record with only TFLOP/s is
# predicted when its source counts this way: its step is that count over TFLOP/s x GPUs.
MEGATRON_COUNT = {"Megatron-Bridge performance summary (MoE rows, 25.09-26.08)": "megatron",
                  "Megatron-MoE-ModelZoo Qwen3 best practice": "megatron",
                  "Megatron-LM DeepSeek-V3 GB200 optimization write-up": "megatron",
                  "NVIDIA dgxc-benchmarking MoE recipes (DeepSeek-V3, Grok-1, Llama 4)": "megatron",
                  "Megatron-Core MoE README (Mixtral 8x7B headline)": "megatron-2024"}


def convert_moe(r):
    """One MoE record: every assumption goes into `notes`."""
    rid, g, src = r["id"], r["source_group"], r["source"]
    out = {"name": rid, "source": f'{src["title"]}, {src["locator"]}'}
    if src.get("repo"):
        out["source"] += f' ({src["repo"]}/{src.get("path") or ""} @{(src.get("commit") or "")[:12]})'
    m, hw, p, t, me = r["model"], r["hardware"], r["parallelism"], r["training"], r["measured"]
    mc = m.get("moe_config") or {}
    notes = []
    not_modelled = None
    gpus = hw["num_gpus"]
    gpu = moe_gpu(hw["gpu"])
    rec_notes = " ".join((r.get("notes") or "").split())
    switches, preset_note, preset_applies = release_preset(r, gpu, rec_notes)
    # the release script that names what the source does not (its words, lower case; its note)
    script = recipe_script(r, gpu)
    said = script[0].lower() if script else ""
    seq = m["seq_len"]
    step = None
    if me.get("iteration_time_s") is not None:
        step = me["iteration_time_s"]
    elif me.get("tokens_per_s_per_gpu") is not None and t.get("global_batch_size") and seq:
        step = round(t["global_batch_size"] * seq / (me["tokens_per_s_per_gpu"] * gpus), 4)
        notes.append(f"step_s = global batch {t['global_batch_size']} x seq {seq} / ({me['tokens_per_s_per_gpu']} "
                     f"tokens/s/GPU x {gpus} GPUs)")
    if r["completeness"] != "complete":
        not_modelled = ("parallel layout, batch and sequence length not stated (missing "
                        f"{', '.join(r.get('missing_core_fields') or ['core fields'])})")
    elif gpu not in MOE_HW:
        not_modelled = f"GPU {hw['gpu']} ({hw.get('system')}): no hardware file in hardware/ for it"
    elif step is None and g not in MEGATRON_COUNT:
        not_modelled = ("only TFLOP/s per GPU, in a FLOP count of the source's own that the tool does not have; "
                        "no step time or tokens/s to compare")
    elif m["name"] not in MOE_MODELS and m["name"] != "Mixtral 8x22B":
        not_modelled = f"model {m['name']}: no model file"
    model = None
    parallel, training = {}, {}
    framework = None
    if not not_modelled:
        if m["name"] == "Mixtral 8x22B":
            model = dict(MIXTRAL_8X22B)
        else:
            model = MODELS + MOE_MODELS[m["name"]]
        mtp = str(mc.get("mtp_layers"))
        if m["name"] == "DeepSeek-V3":
            if mtp.startswith("0"):
                model = dict(load_shipped(model))
                model["name"] = "deepseek-v3-womtp"
                model["mtp_layers"] = 0
                notes.append("model deepseek-v3 with mtp_layers 0 (the row says without MTP)")
            elif mtp.startswith("1"):
                notes.append("mtp_layers 1 (deepseek-v3.yaml) as the record says")
            elif "mtp_num_layers=1" in said:
                notes.append("mtp_layers 1 (deepseek-v3.yaml) as the release's recipe runs it (below)")
            else:
                notes.append("mtp_layers 1 ASSUMED (deepseek-v3.yaml; the source does not say whether MTP ran)")
        fw = (t.get("framework") or "") + " " + g
        if "Megatron-Core" in fw and "NeMo" not in fw or g.startswith("Megatron-MoE-ModelZoo") or g.startswith("Megatron-LM"):
            framework = "megatron-core-0.8-distopt"
            notes.append("framework megatron-core-0.8-distopt: the closest preset to the Megatron-Core release the run used "
                         "(distributed optimizer as the model zoo's and Megatron's MoE scripts set it)")
        elif g.startswith("Megatron-Bridge"):
            framework = "megatron-bridge"
            notes.append(f"framework megatron-bridge: the preset of the performance scripts behind '{t.get('framework')}' "
                         "(Megatron-Bridge scripts/performance v0.2.1-v0.6.0: sequence parallel, distributed optimizer, "
                         "TP/DP/PP overlap, alltoall dispatcher, moe_a2a_overlap off unless the workload sets it)")
        else:
            framework = "nemo-24.07"
            notes.append(f"framework nemo-24.07: the closest preset to '{t.get('framework')}' (the NeMo "
                         "performance recipes: sequence parallel, distributed optimizer, TP/DP/PP overlap)")
        vpp = p.get("vp") or 1
        parallel = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], cp=p.get("cp") or 1, ep=p["ep"])
        zoo = MOEZOO_YAML.get(m["name"]) if g.startswith("Megatron-MoE-ModelZoo") else None
        if p.get("etp") is not None:
            parallel["etp"] = p["etp"]
        elif zoo:
            parallel["etp"] = 1
            notes.append(f"etp 1: the model zoo's {zoo} sets --expert-tensor-parallel-size 1 (b06a6d8 to e8650517)")
        elif g.startswith("Megatron-Bridge") and "25.09" in (t.get("framework") or ""):
            # the 25.09 release's performance configs set etp 1 in every MoE preset (Megatron-Bridge
            # v0.1.0rc3 scripts/performance/configs/{deepseek,qwen3}/*_llm_pretrain.yaml perf_matrix,
            # applied by scripts/performance/utils/helpers.py:163)
            parallel["etp"] = 1
            notes.append("etp 1 from the 25.09 release's performance configs (Megatron-Bridge v0.1.0rc3 "
                         "scripts/performance/configs: every MoE preset's perf_matrix sets etp 1)")
        else:
            # Megatron-Core's parallel_state lays the experts over each stage's tp*cp*dp ranks as
            # etp x ep x edp (etp*ep*edp*pp = world). Its default etp = tp; where that cannot hold
            # the stated ep and the run ran, it ran folded (MoE parallel folding): the largest etp
            # dividing tp that can.
            block = p["tp"] * (p.get("cp") or 1) * p["dp"]
            fits = [e for e in range(p["tp"], 0, -1) if p["tp"] % e == 0 and block % (e * p["ep"]) == 0]
            if fits and fits[0] != p["tp"]:
                parallel["etp"] = fits[0]
                notes.append(f"etp {fits[0]} ASSUMED (not stated): Megatron-Core's default etp = tp ({p['tp']}) cannot lay "
                             f"ep {p['ep']} over tp*cp*dp = {block} ranks (parallel_state: etp*ep*edp*pp = world), so the run "
                             f"folded its experts (MoE parallel folding) at the largest etp that can")
            else:
                notes.append(f"etp not stated: Megatron-Core's default etp = tp ({p['tp']})")
        if str(p.get("zero_or_sharding") or "").startswith("Megatron FSDP"):
            parallel["zero"] = 3
            notes.append("zero 3 for 'Megatron FSDP': Megatron-Core's FSDP shards parameters, gradients and optimizer "
                         "states over the data-parallel ranks (the experts' over expert data parallel)")
        if framework.startswith("megatron-core") and p["tp"] > 1:
            # the megatron-core presets leave --sequence-parallel off (store_true), which an MoE model
            # with tp > 1 cannot run
            parallel["sequence_parallel"] = True
            notes.append("sequence_parallel true: Megatron-LM refuses an MoE model with tp > 1 without it "
                         "(megatron/training/arguments.py: 'When using MoE and tensor parallelism, sequence "
                         "parallelism must be used.')")
        if zoo and p["pp"] > 1:
            parallel["embedding_in_split"] = True
            parallel["loss_in_split"] = True
            notes.append(f"embedding_in_split, loss_in_split: the model zoo's {zoo} (8017e11 to e8650517) sets "
                         "--account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split")
        if vpp > 1:
            parallel["vpp"] = vpp
            parallel["schedule"] = "interleaved"
        elif not p.get("vp"):
            notes.append("vpp 1 (the source gives none or n/a)")
        layout = re.search(r"pp_layout=(\S+?),(?:\s|$)", switches)
        if layout and layout.group(1) != "None" and p["pp"] > 1:
            stages = pp_layout_stages(layout.group(1))
            if len(stages) == p["pp"] * vpp and min(stages) >= 1 and sum(stages) == m["layers"]:
                parallel["stage_layers"] = stages
                notes.append(f"stage_layers from the recipe's pp_layout {layout.group(1)} (Megatron-Core's "
                             "PipelineParallelLayerLayout: the embedding on the first virtual stage, the MTP module "
                             "and the loss on the last)")
            else:
                notes.append(f"pp_layout {layout.group(1)} not expressible as stage_layers (a virtual stage without a "
                             "transformer layer, or not pp x vpp stages): the tool's own split")
        # Megatron-Core's num_layers_in_first/last_pipeline_stage, as the release's recipe sets them: the
        # rest split evenly over the middle stages
        split = re.search(r"first_stage_layers=(\d+) last_stage_layers=(\d+)", said)
        if split and p["pp"] > 2 and vpp == 1 and "stage_layers" not in parallel:
            first, last = int(split.group(1)), int(split.group(2))
            middle, rest = divmod(m["layers"] - first - last, p["pp"] - 2)
            if rest == 0 and middle >= 1:
                parallel["stage_layers"] = [first] + [middle] * (p["pp"] - 2) + [last]
                notes.append(f"stage_layers {parallel['stage_layers']}: the recipe's num_layers_in_first_pipeline_stage "
                             f"{first} and num_layers_in_last_pipeline_stage {last}, the rest even")
        prec = (t.get("precision") or "")
        recipe = None
        if prec.startswith("not stated"):
            precision = "fp8"
            recipe = "mxfp8" if gpu != "H100" else "current"
            notes.append(f"precision fp8 / fp8_recipe {recipe} ASSUMED: the 25.09 table has no precision column; its footnote "
                         "contrasts the main values with a different FP8 quantisation granularity, so the main values are FP8 "
                         "(MXFP8 on Blackwell, tensorwise current scaling on H100)")
        elif "BF16" in prec.upper() and "FP8" not in prec.upper():
            precision = "bf16"
        elif "MX" in prec.upper():
            precision, recipe = "fp8", "mxfp8"
            notes.append(f"precision fp8, fp8_recipe mxfp8 for '{prec}'")
        elif "CS" in prec.upper() or gpu == "H100":
            precision, recipe = "fp8", "current"
            notes.append(f"precision fp8, fp8_recipe current for '{prec}' (Megatron-Bridge's H100 recipes: FP8 current scaling)")
        else:
            precision, recipe = "fp8", "delayed"
            notes.append(f"precision fp8, fp8_recipe delayed ASSUMED for '{prec}' (Transformer Engine's default recipe in NeMo 2.0)")
        if preset_note:
            notes.append(preset_note)
        rec = t.get("recompute") or ""
        listed = re.search(r"recompute_modules=\[([^\]]*)\]", switches)
        scripted = re.search(r"recompute_modules=\[([^\]]*)\]", said)
        if not rec and preset_applies and listed:
            rec = "selective: " + ", ".join(re.findall(r"[a-z_]+", listed.group(1)))
        elif not rec and scripted:  # (the script's note, below, says where from)
            rec = "selective: " + ", ".join(re.findall(r"[a-z_]+", scripted.group(1)))
        recompute = "full" if rec.startswith("full") else "none"
        # Megatron-Core's --recompute-modules the tool models (training.recompute_modules); any
        # other is not counted, and said so
        modules, left = [], []
        # the model zoo's table abbreviates its run scripts' modules: "norm, act" is the H100 235B
        # script's --recompute-modules moe_act layernorm (best_practice/qwen3/run_h100_235b.sh)
        table = re.fullmatch(r"selective \(table: ([^)]*)\)", rec)
        if table:
            rec = "selective: " + ", ".join({"norm": "layernorm", "act": "moe_act"}.get(w, w)
                                            for w in re.findall(r"[a-z_]+", table.group(1))) + \
                  f" (the table's '{table.group(1)}': best_practice/qwen3/run_h100_235b.sh runs this layout with " \
                  "--recompute-modules moe_act layernorm)"
        if rec.startswith("selective:"):
            for word in re.findall(r"[a-z_]+", rec.split(":", 1)[1].split("(")[0]):
                name = {"up_proj": "mla_up_proj"}.get(word, word)
                if name in ("core_attn", "mla_up_proj", "mlp", "moe", "moe_act", "layernorm", "shared_experts"):
                    if name not in modules:
                        modules.append(name)
                else:
                    left.append(word)
        if modules:
            recompute = "selective"
            notes.append(f"recompute selective with recompute_modules {', '.join(modules)} for '{rec}' (Megatron-Core's "
                         "--recompute-modules)" + (f"; {', '.join(left)} not modelled, its extra forward not counted"
                                                   if left else ""))
        elif rec.startswith("not stated"):
            notes.append(f"recompute none ASSUMED for '{rec}'")
        elif rec and recompute == "none":
            notes.append(f"recompute none for '{rec}': none of the named modules is one of Megatron-Core's that "
                         "training.recompute_modules models; their extra forward is not counted")
        elif not rec and preset_applies:
            notes.append("recompute none: the release's preset recomputes nothing")
        elif not rec:
            notes.append("recompute none ASSUMED (not stated)")
        training = dict(seq_len=seq, micro_batch=t["micro_batch_size"], global_batch=t["global_batch_size"],
                        precision=precision, recompute=recompute)
        if modules:
            training["recompute_modules"] = modules
        if recipe:
            training["fp8_recipe"] = recipe
        drop = str(mc.get("token_dropping") or "")
        low = (switches + " " + drop).lower()
        moe = {}
        if script:
            notes.append(script[1])
        if "hybridep" in low or "deepep" in low or "deepep" in said:
            moe["dispatcher"] = "flex"
            if "deepep" not in said:  # (else the release's script said so above)
                notes.append("dispatcher flex: the source names DeepEP / HybridEP (fused dispatch and combine)")
        elif zoo:
            moe["dispatcher"] = "flex"
            notes.append("dispatcher flex: the model zoo's runtime_configs/benchmarking/runtime.conf (b06a6d8 to e8650517) "
                         "runs this model with MOE_TOKEN_DISPATCHER flex unless the command sets another")
        elif release_dispatcher(r, gpu):
            moe["dispatcher"] = "flex"
            notes.append("dispatcher flex: every preset of this model on this GPU in the 25.11 container's release "
                         "(Megatron-Bridge v0.2.0 scripts/performance/configs) sets moe_flex_dispatcher_backend "
                         "hybridep")
        else:
            moe["dispatcher"] = "alltoall"
            if "alltoall" not in said:
                notes.append("dispatcher alltoall ASSUMED (not stated; the Megatron-Bridge / NeMo MoE recipes' "
                             "moe_token_dispatcher_type)")
        if "unfused_attention" in said:
            training["flash_attention"] = False
        if "tp_comm_overlap=false" in said and p["tp"] > 1:
            training.setdefault("overlap", {})["tp"] = False
        if "overlap_grad_reduce=false" in said:
            training.setdefault("overlap", {})["dp"] = False
        if "rope_fusion=false" in said:
            training.setdefault("fusion", {})["rope"] = "eager"
        if "token dropping" in drop or "tokendrop" in rid or "tokendrop" in said:
            if moe["dispatcher"] != "alltoall":
                moe["dispatcher"] = "alltoall"
                notes.append("dispatcher alltoall: token dropping runs only with it")
            moe["capacity_factor"] = 1
            if "tokendrop" not in said:
                notes.append("capacity_factor 1 ASSUMED for token dropping (the recipes' moe_expert_capacity_factor "
                             "1.0 with padding to capacity)")
        elif "balanc" in drop or "balanc" in r.get("measurement_context", "") or "balanced" in said:
            notes.append("dropless, load_imbalance 1: the row force-balances the router")
        else:
            notes.append("dropless, load_imbalance 1 ASSUMED (not stated; the tool's default)")
        training["moe"] = moe
        # EP overlap (training.overlap.ep, Megatron-Core overlap_moe_expert_parallel_comm): as the
        # record's recipe sets it; Megatron-Core and the Bridge recipes leave it off by default
        flags = str((me.get("other") or {}).get("command_flags") or "")  # the model zoo's command lines
        offload = re.search(r"activation offloading \(([^)]*)\)", flags)
        if offload:
            named = re.findall(r"[a-z_0-9]+", offload.group(1))
            modelled = [n for n in named if n in ("expert_fc1", "moe_act")]
            if modelled:
                training["offload_modules"] = modelled
            left = [n for n in named if n not in modelled]
            notes.append((f"offload_modules {', '.join(modelled)}" if modelled else "no offload_modules") +
                         f" for the command's --fine-grained-activation-offloading --offload-modules {' '.join(named)} "
                         "(Megatron-Core's fine-grained activation offloading)" +
                         (f"; {', '.join(left)} not modelled, its activations kept on the GPU" if left else ""))
        a2a = re.search(r"moe_a2a_overlap=(\w+)|A2A_OVERLAP=(\d)", switches + " " + (script[0] if script else "") + " " + flags)
        if a2a and (a2a.group(1) == "True" or a2a.group(2) == "1"):
            training.setdefault("overlap", {})["ep"] = True
            notes.append("overlap.ep true: the record's recipe sets moe_a2a_overlap (EP all-to-all beside another "
                         "micro-batch's compute)")
        elif a2a:
            notes.append(f"overlap.ep false: the record's recipe leaves moe_a2a_overlap off ({a2a.group(0)})")
        else:
            notes.append("overlap.ep false ASSUMED (not stated; the default of Megatron-Core's "
                         "overlap_moe_expert_parallel_comm and of the Bridge scripts' moe_a2a_overlap)")
        if zoo:
            training.setdefault("overlap", {})["dp"] = True
            notes.append(f"overlap.dp true: the model zoo's {zoo} (8017e11 to e8650517) sets --overlap-grad-reduce and "
                         "--overlap-param-gather, which the preset leaves off" +
                         (" (under zero 3 the gathers' prefetch, overlap.zero3_prefetch, is what overlaps them)"
                          if parallel.get("zero") == 3 else ""))
        # TransformerEngine's fused MXFP8 grouped MLP (training.fusion.grouped_mlp): as the row's preset
        # sets it (FUSED_GROUPED_MLP), else Megatron-Core's default, off
        named = fused_grouped_mlp(switches, recipe)
        if named:
            training.setdefault("fusion", {})["grouped_mlp"] = "fused"
            notes.append(f"fusion.grouped_mlp fused: the row's preset ({named[1]} @ Megatron-Bridge {named[0]}) "
                         "sets cutedsl_fused_grouped_mlp (TransformerEngine's fused MXFP8 grouped MLP: SwiGLU and fc2's "
                         "input quantisation in fc1's epilogue, dSwiGLU and fc1's gradient quantisation in fc2's)")
        training["framework"] = framework
    notes.append("source notes: " + rec_notes if rec_notes else "")
    notes = [n for n in notes if n]
    out["flops_convention"] = MEGATRON_COUNT.get(g, "model")
    measured = {}
    if step is not None:
        measured["step_s"] = step
    if me.get("tflops_per_gpu") is not None:
        measured["tflops_per_gpu"] = me["tflops_per_gpu"]
    if me.get("tokens_per_s") is not None:
        measured["tokens_per_s"] = me["tokens_per_s"]
    elif me.get("tokens_per_s_per_gpu") is not None:
        measured["tokens_per_s"] = me["tokens_per_s_per_gpu"] * gpus
    out["measured"] = measured
    out["notes"] = "; ".join(notes)
    if not_modelled:
        out["not_modelled"] = not_modelled
    else:
        out["scenario"] = {"name": rid, "model": model, "hardware": MOE_HW[gpu], "cluster": {"gpus": gpus},
                           "parallel": parallel, "training": training}
        out["_size"] = params_estimate(model_dims(model))
    return out


HEAD_MOE = """# ptdsim validation dataset of the Mixture-of-Experts runs: the {n} MoE records of
# scenarios/published/sources/published_runs_moe.yaml (its PyTorch-native dense records are torchtitan.yaml's)
# converted by scenarios/published/convert.py --moe. Do not edit by hand; change convert.py and regenerate.
# Rules and assumptions: docs/data.md "The MoE records" and each record's notes. Split: per source group,
# records sorted by (model size, GPUs, name), positions 0 and 3 of each run of four fit, 1 and 2 holdout.
# Records on a GPU without a hardware file, with only TFLOP/s in a count the tool does not have (Megatron's
# is one it has: flops_convention megatron), or without a layout are kept with not_modelled and their
# reason. Run: ptdsim validate scenarios/published/moe.yaml. Units as dataset.yaml.
"""


def moe_text(source_path):
    src = [r for r in yaml.safe_load(open(source_path, encoding="utf-8")) if r["model"].get("moe")]
    recs = [convert_moe(r) for r in src]
    assign_splits(recs, [r["source_group"] for r in src])
    return emit(recs, HEAD_MOE.format(n=len(src)))


def self_test():
    """Hand-worked cases of the recipe readers; returns the exit status."""
    ok = True

    def check(what, got, want):
        nonlocal ok
        if got != want:
            ok = False
            print(f"FAIL {what}: got {got!r}, want {want!r}")

    # Megatron-Bridge's DeepSeek-V3 layouts: 16 virtual stages of 4 layers but the last (a layer, the MTP
    # module and the loss); the H100's 32, the last holding no transformer layer
    check("pp_layout Et*4|(t*4|)*14tmL", pp_layout_stages("Et*4|(t*4|)*14tmL"), [4] * 15 + [1])
    check("pp_layout Et|(tt|)*30mL", pp_layout_stages("Et|(tt|)*30mL"), [1] + [2] * 30 + [0])
    check("pp_layout with cosmetic commas", pp_layout_stages("Et*3,|t*3|t*3,mL"), [3, 3, 3])
    row = {"source_group": "Megatron-Bridge performance summary", "model": {"name": "DeepSeek-V3"},
           "parallelism": {"tp": 1, "pp": 8, "vp": 2, "ep": 32},
           "training": {"framework": "Megatron-Bridge / NeMo 26.04.01 container", "micro_batch_size": 1,
                        "global_batch_size": 4096}}
    # the source's two wordings of the earlier tag's preset
    none = ("A. No preset in the perf recipes @ tag v0.4.0 matches this exact layout; recompute/ETP/dispatcher "
            "therefore left null. B.")
    earlier = ("A. Perf recipe scripts/performance/configs/deepseek/deepseek_workload_base_configs.py @ tag v0.4.0 has "
               "a preset with exactly this layout (X): recompute_modules=['mla_up_proj'], ETP=1, dispatcher "
               "backend=hybridep, moe_a2a_overlap=False, cuda_graph=None None, pp_layout=None, "
               "cpu_offloading_num_layers=None. The tag is the nearest release tag, not proven to be the exact code "
               "that produced the number, so etp/recompute are medium confidence. B.")
    for old in (none, earlier):
        text, note, applies = release_preset(row, "B200", old)
        check("release preset replaces the earlier tag's sentence", "v0.4.0" in text or "hybridep" in text, False)
        check("release preset: its switches, first", text.startswith("Perf recipe @ tag v0.4.2") and
              all(w in text for w in ("deepep", "moe_a2a_overlap=True", "'mlp'")), True)
        check("release preset: noted and applied", (note is not None and "v0.4.2" in note, applies), (True, True))
    row["training"]["micro_batch_size"] = 2
    text, note, applies = release_preset(row, "B200", earlier)
    check("another layout keeps the source's notes",
          (text, "another layout" in (note or ""), applies), (earlier, True, False))
    row["training"]["framework"] = "Megatron-Bridge / NeMo 26.04 container"
    check("a container without a release table", release_preset(row, "B200", none), (none, None, False))
    # the 26.08 container, whose rows' notes name no preset: v0.6.0's recipe, its overlap on
    row = {"source_group": "Megatron-Bridge performance summary", "model": {"name": "Qwen3-235B-A22B"},
           "parallelism": {"tp": 1, "pp": 4, "vp": 12, "ep": 32},
           "training": {"framework": "Megatron-Bridge / NeMo 26.08 container", "micro_batch_size": 2,
                        "global_batch_size": 8192}}
    text, note, applies = release_preset(row, "GB300", "A.")
    check("26.08: v0.6.0's recipe", (applies, "v0.6.0" in text, "moe_a2a_overlap=True" in text), (True, True, True))
    # the fused grouped MLP: the presets of v0.5.0 and v0.6.0 that set it, in MXFP8 only
    check("26.08: v0.6.0's recipe fuses the grouped MLP", fused_grouped_mlp(text, "mxfp8"),
          ("v0.6.0", "qwen3_235b_a22b_pretrain_256gpu_gb300_fp8mx_config"))
    sentence = ("Perf recipe scripts/performance/configs/qwen/qwen3_workload_base_configs.py @ tag {} has a preset with "
                "exactly this layout ({}): recompute_modules=None, ETP=1.")
    check("26.06: v0.5.0's GB200 Qwen3-30B preset", fused_grouped_mlp(
        sentence.format("v0.5.0", "QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1"), "mxfp8"),
        ("v0.5.0", "QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1"))
    check("26.04: the same preset at v0.4.0", fused_grouped_mlp(
        sentence.format("v0.4.0", "QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1"), "mxfp8"), None)
    check("26.06: v0.5.0's B300 DeepSeek-V3 preset", fused_grouped_mlp(
        sentence.format("v0.5.0", "DEEPSEEK_V3_PRETRAIN_CONFIG_B300_FP8_MX_V2"), "mxfp8"), None)
    row = {"source_group": "Megatron-Bridge performance summary", "model": {"name": "Qwen3-30B-A3B"},
           "training": {"framework": "Megatron-Bridge / NeMo 25.11 container"}}
    check("25.11 GB300: HybridEP in every preset", release_dispatcher(row, "GB300"), "hybridep")
    check("25.11 B200: no such rule", release_dispatcher(row, "B200"), None)
    check("not in MXFP8", fused_grouped_mlp(
        sentence.format("v0.5.0", "QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1"), "current"), None)
    print("convert.py self-test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="Convert the published-runs record into the validation dataset.")
    ap.add_argument("source", nargs="?", default=os.path.join(HERE, "sources", "published_runs.yaml"),
                    help="published-runs YAML (default: the copy in scenarios/published/sources)")
    ap.add_argument("--check", action="store_true",
                    help="compare with scenarios/published/dataset.yaml instead of printing; exit 1 on a difference")
    ap.add_argument("--torchtitan", action="store_true",
                    help="convert sources/published_runs_torchtitan.yaml into torchtitan.yaml instead")
    ap.add_argument("--moe", action="store_true",
                    help="convert the MoE records of sources/published_runs_moe.yaml into moe.yaml instead")
    ap.add_argument("--self-test", action="store_true",
                    help="check the recipe readers on hand-worked cases and exit (1 on a failure)")
    args = ap.parse_args()
    if args.self_test:
        sys.exit(self_test())
    target = "dataset.yaml"
    if args.moe:
        target = "moe.yaml"
        if args.source == os.path.join(HERE, "sources", "published_runs.yaml"):
            args.source = os.path.join(HERE, "sources", "published_runs_moe.yaml")
        text = moe_text(args.source)
    elif args.torchtitan:
        target = "torchtitan.yaml"
        if args.source == os.path.join(HERE, "sources", "published_runs.yaml"):
            args.source = os.path.join(HERE, "sources", "published_runs_torchtitan.yaml")
        text = dataset_text(args.source, HEAD_TORCHTITAN)
    else:
        text = dataset_text(args.source)
    if not args.check:
        sys.stdout.write(text)
        sys.exit(0)
    shipped_path = os.path.join(HERE, target)
    shipped = open(shipped_path, encoding="utf-8").read()
    if shipped == text:
        print(f"{shipped_path}: regenerated byte for byte from {args.source}")
        sys.exit(0)
    sys.stdout.writelines(difflib.unified_diff(shipped.splitlines(True), text.splitlines(True),
                                               f"{target} (shipped)", f"{target} (regenerated)"))
    print(f"{shipped_path} differs from what convert.py makes of {args.source}; regenerate it")
    sys.exit(1)
