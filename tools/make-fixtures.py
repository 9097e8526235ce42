#!/usr/bin/env python3
"""make-fixtures.py - regenerate (or check) the generated test data under tests/data.

  make-fixtures.py                 rewrite every generated fixture in tests/data
  make-fixtures.py --check         regenerate into a temporary directory and compare it
                                   byte for byte with tests/data (exit 1 on a difference)
  make-fixtures.py --step-models [--shared DIR]
                                   first re-cut tests/data/sources/*.step.json.gz from the
                                   real traces in ../shared/traces/real (needs ../shared)
  make-fixtures.py --list          print the recipes

RECIPES is the single list of what is generated and how (seeds included); tests/data/
README.md describes each fixture and the results a feature test should expect.
Python 3 standard library only.
"""

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

TOOLS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TOOLS)
DATA = os.path.join(REPO, "tests", "data")
TRACELENS = "AMD-AGI/TraceLens"
TL_COMMIT = "171dd74721ca1ec45709e5805b68ae1f65e27811"

# (shared trace, step model, hidden size, origin inside TraceLens)
STEP_MODELS = [
    ("sglang_qwen3_8b_decode_mi300x.json.gz", "sglang-qwen3-8b-decode.step.json.gz", 4096,
     "tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz"),
    ("sglang_qwen3_8b_prefilldecode_mi300x.json.gz", "sglang-qwen3-8b-prefill.step.json.gz", 4096,
     "tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz"),
    ("vllm_gptoss_decode_fullgraph_amd.json.gz", "vllm-gptoss-decode.step.json.gz", 2880,
     "tests/traces/inference/vllm_decode_full/graph_execution.json.gz"),
    ("vllm_gptoss_prefilldecode_piecewise_amd.json.gz", "vllm-gptoss-mixed.step.json.gz", 2880,
     "tests/traces/inference/vllm_prefilldecode_piecewise/graph_execution.json.gz"),
]

# (destination under tests/data, generator, arguments)
RECIPES = [
    ("ranks/vllm-v1-dp2-tp4", "make-rank-set.py",
     ["--framework", "vllm", "--ranks", "8", "--dp", "2", "--nodes", "2", "--slow-rank", "5",
      "--slowdown", "0.10", "--layers", "4", "--decode-steps", "3", "--seed", "12"]),
    ("ranks/sglang-decode-slow2-tp4", "make-rank-set.py",
     ["--framework", "sglang", "--ranks", "4", "--slow-rank", "2", "--slowdown", "0.05",
      "--layers", "4", "--decode-steps", "3", "--seed", "16"]),
    ("ranks/sglang-decode-first-wait-tp4", "make-rank-set.py",
     ["--framework", "sglang", "--ranks", "4", "--stage", "decode", "--layers", "4",
      "--decode-steps", "4", "--first-collective-wait", "450", "--seed", "14"]),
    # the structure of real profile directories (../shared/spec/real-multirank.md): vLLM V1
    # over two nodes (rank-0/, rank-1/, clocks apart), prefill and decode in one file per
    # worker, empty steps; a GPU-slow rank in prefill, a host-late rank in decode
    ("ranks/vllm-v1-tp8-2nodes", "make-rank-set.py",
     ["--framework", "vllm", "--ranks", "8", "--nodes", "2", "--stage", "both", "--layers", "3",
      "--prefill-steps", "1", "--decode-steps", "4", "--empty-steps", "2", "--slow-rank", "3",
      "--slowdown", "0.15", "--slow-stage", "prefill", "--late-rank", "6", "--late-us", "400",
      "--late-stage", "decode", "--seed", "31"]),
    # SGLang with the TP size in the folder and file prefix (..._tp4_...-TP-N)
    ("ranks/qwen3_tp4_bs32", "make-rank-set.py",
     ["--framework", "sglang", "--ranks", "4", "--stage", "both", "--layers", "2",
      "--prefill-steps", "1", "--decode-steps", "4", "--profile-id", "qwen3-8b_tp4_bs32",
      "--slow-rank", "1", "--slowdown", "0.15", "--slow-stage", "prefill", "--late-rank", "2",
      "--late-us", "300", "--late-stage", "decode", "--seed", "32"]),
    # the real directory shape with a work-imbalance straggler (brief 11 defect 4): vLLM V1
    # DP 2 x TP 4 over two nodes, replicas of 3 and 4 steps, rank 2's expert GEMMs 1.4x,
    # rank 3's trace without deviceProperties
    ("ranks/vllm-v1-dp2-tp4-moe-hot2", "make-rank-set.py",
     ["--framework", "vllm", "--ranks", "8", "--dp", "2", "--nodes", "2", "--stage", "decode",
      "--layers", "4", "--decode-steps", "3", "--seed", "31", "--moe-imbalance", "0.4",
      "--moe-hot-rank", "2", "--no-device-props", "3"]),
    ("stages/sglang-step-annotations-tp4", "make-rank-set.py",
     ["--framework", "sglang", "--ranks", "4", "--stage", "both", "--layers", "2",
      "--prefill-steps", "1", "--decode-steps", "5", "--seed", "13"]),
    ("diff/generated", "make-diff-runs.py", ["--seed", "15"]),
    ("escape/hostile.trace.json", "make-escape-trace.py", []),
]


def run_recipe(root, dest, tool, args):
    """Generate one fixture under root (a directory, or a file for make-escape-trace)."""
    target = os.path.join(root, dest)
    if os.path.isdir(target):
        shutil.rmtree(target)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    cmd = [sys.executable, os.path.join(TOOLS, tool)]
    cmd += [target] if tool == "make-escape-trace.py" else ["--out", target] + args
    subprocess.run(cmd, check=True)


def cut_step_models(shared):
    for trace, model, hidden, origin in STEP_MODELS:
        label = f"{TRACELENS} {origin} @ {TL_COMMIT} (MIT), via ../shared/traces/real/{trace}"
        subprocess.run([sys.executable, os.path.join(TOOLS, "make-rank-set.py"), "--out", "-",
                        "--write-step-model", os.path.join(shared, "traces", "real", trace),
                        os.path.join(DATA, "sources", model), "--hidden", str(hidden),
                        "--source-label", label], check=True)


def compare_trees(want_root, got_root):
    """Differences between the committed fixtures and a fresh generation."""
    problems = []
    for dest, _, _ in RECIPES:
        want, got = os.path.join(want_root, dest), os.path.join(got_root, dest)
        if os.path.isfile(got):
            if not (os.path.isfile(want) and filecmp.cmp(want, got, shallow=False)):
                problems.append(dest)
            continue
        for base, _, files in os.walk(got):
            for name in files:
                rel = os.path.relpath(os.path.join(base, name), got_root)
                w = os.path.join(want_root, rel)
                if not (os.path.isfile(w) and filecmp.cmp(w, os.path.join(base, name), shallow=False)):
                    problems.append(rel)
        for base, _, files in os.walk(want):
            for name in files:
                rel = os.path.relpath(os.path.join(base, name), want_root)
                if not os.path.exists(os.path.join(got_root, rel)):
                    problems.append(f"{rel} (no longer generated)")
        manifest = dest + ".manifest.json"
        if os.path.exists(os.path.join(got_root, manifest)):
            if not filecmp.cmp(os.path.join(want_root, manifest), os.path.join(got_root, manifest), shallow=False):
                problems.append(manifest)
    return problems


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true")
    p.add_argument("--step-models", action="store_true")
    p.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    p.add_argument("--list", action="store_true")
    args = p.parse_args(argv)
    if args.list:
        for dest, tool, targs in RECIPES:
            print(f"tests/data/{dest}: tools/{tool} {' '.join(targs)}")
        return 0
    if args.step_models:
        cut_step_models(args.shared)
    if not args.check:
        for dest, tool, targs in RECIPES:
            run_recipe(DATA, dest, tool, targs)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        for dest, tool, targs in RECIPES:
            run_recipe(tmp, dest, tool, targs)
        problems = compare_trees(DATA, tmp)
    for item in problems:
        print(f"make-fixtures: tests/data/{item} differs from a fresh generation")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
