"""mt-metrics-eval's own WMT24 results on the shared en-cs ESA folder, for tests/meta/wmt24_en_cs_mtme.json.

Builds an mt-metrics-eval ``wmt24`` folder from the shared data (the ESA gold by the upstream rules,
nlgscore's exported metric scores) and runs mt-metrics-eval's tasks on it. Run it in its own environment
outside the project: numpy, scipy, pandas, absl-py, dacite and a google-research/mt-metrics-eval checkout
on PYTHONPATH (apache_beam, which mt-metrics-eval imports only for its optional parallel runs, may be a
stub module). The JSON's "full", "slice" and "full_three_metrics" are three runs of it.

usage: PYTHONHASHSEED=0 python mtme_wmt24_reference.py SHARED_EN_CS_FOLDER EXPORT_FOLDER OUT_JSON LIMIT METRIC...
(LIMIT > 0: only the first LIMIT rated lines keep their gold, the rest is None, as nlgscore's --limit)
"""

import json
import os
import sys
import tempfile

import pandas as pd
from mt_metrics_eval import data, stats, tasks

shared, export, out, limit = sys.argv[1:5]
limit = int(limit)
metrics = sys.argv[5:]
base = tempfile.mkdtemp()
root = f"{base}/wmt24"
os.makedirs(root + "/human-scores")
for sub in ("documents", "sources", "references"):
    os.symlink(os.path.join(shared, "txt", sub), os.path.join(root, sub))
os.makedirs(f"{root}/system-outputs/en-cs")  # every output, and the reference as the human "system" refA
for name in os.listdir(os.path.join(shared, "txt/system-outputs/en-cs")):
    os.symlink(os.path.join(shared, "txt/system-outputs/en-cs", name), f"{root}/system-outputs/en-cs/{name}")
os.symlink(os.path.join(shared, "txt/references/en-cs.refA.txt"), f"{root}/system-outputs/en-cs/refA.txt")
lp = "en-cs"
src = open(os.path.join(shared, "txt/sources/en-cs.txt")).read().splitlines()
n = len(src)

# ESA -> LP.esa.seg.score, after upstream humeval/tools.py load_data (BAD rows, tutorials, #incomplete, #dup
# dropped; a rater's repeated rating: the latest end time) and convert_to_metrics.py (mean over raters,
# None where unrated, 100.0 on the CANARY line 0); merge_to_jsonl.py also drops #bad documents.
df = pd.read_csv(os.path.join(shared, "humeval/esa_generalMT2024_wave2.en-cs.csv"), header=None, dtype=str)
df.columns = [
    "user_id",
    "system_id",
    "segment_id",
    "segment_type",
    "source_lang",
    "target_lang",
    "overall",
    "doc_id",
    "unk",
    "error_spans",
    "start_time",
    "end_time",
]
df = df[df.segment_type == "TGT"]
df = df[~df.system_id.str.contains("tutorial")]
for tag in ("#incomplete", "#dup", "#bad", "-tutorial"):
    df = df[~df.doc_id.str.contains(tag)]
df["end_time"] = df.end_time.astype(float)
df = df.sort_values("end_time", ascending=False).drop_duplicates(["user_id", "system_id", "segment_id"], keep="first")
df["overall"] = df.overall.astype(float)
df["segment_id"] = df.segment_id.astype(int)
seg = df.groupby(["system_id", "segment_id"]).overall.mean()
rated_all = sorted({0} | set(df.segment_id))
kept = set(rated_all[:limit]) if limit > 0 else set(rated_all)
systems = sorted(df.system_id.unique())
with open(f"{root}/human-scores/{lp}.esa.seg.score", "w") as f:
    for s in systems:
        for i in range(n):
            v = None if i not in kept else 100.0 if i == 0 else seg.get((s, i))
            f.write(f"{s}\t{v}\n")
with open(f"{root}/human-scores/{lp}.esa.sys.score", "w") as f:
    for s in systems:
        f.write(f"{s}\t{df[df.system_id == s].overall.mean()}\n")

docs = [row.split("\t")[0] for row in open(os.path.join(shared, "txt/documents/en-cs.docs")).read().splitlines()]
df["domain"] = [docs[i] for i in df.segment_id]
with open(f"{root}/human-scores/{lp}.esa.domain.score", "w") as f:
    for (d, s), v in df.groupby(["domain", "system_id"]).overall.mean().items():
        f.write(f"{d}\t{s}\t{v}\n")

# metric scores: nlgscore's exports cover the rated lines; every other line gets 0.0 (mtme leaves out every
# cell whose gold is None, so those values never count)
human = {}
for line in open(f"{root}/human-scores/{lp}.esa.seg.score"):
    s, v = line.split()
    human.setdefault(s, []).append(v != "None")
rated = [i for i in range(n) if any(h[i] for h in human.values())]
os.makedirs(f"{root}/metric-scores/{lp}")
all_sys = [os.path.splitext(x)[0] for x in os.listdir(f"{root}/system-outputs/{lp}")]
for metric in metrics:
    name = metric.replace(":", "_")
    scores = {}
    for line in open(
        next(
            p
            for p in (os.path.join(export, lp, f"{name}-ref{r}.seg.score") for r in ("A", "refA"))
            if os.path.exists(p)
        )
    ):
        s, v = line.rstrip("\n").split("\t")
        scores.setdefault(s, []).append(float(v))
    with open(f"{root}/metric-scores/{lp}/{name}-refA.seg.score", "w") as f:
        for s in all_sys:
            full = [0.0] * n
            for i, v in zip(rated, scores.get(s, [0.0] * len(rated))):
                full[i] = v
            f.write("".join(f"{s}\t{v!r}\n" for v in full))

evs = data.EvalSet("wmt24", lp, read_stored_metric_scores=True, path=base)
ts, weights = tasks.WMT24(lps=[lp], primary=False, k=0)
res = ts.Run(eval_set_dict={("wmt24", lp): evs})
# mtme's PCE depends on the order of the systems (a set, so PYTHONHASHSEED's) where a permutation's difference
# ties the observed one; the reference takes them sorted, as nlgscore does: stats.PairwiseConfidenceError on
# vectors packed in sorted system order, put into the task results so AverageCorrs averages them.
gold = evs.Scores("seg", "esa")
ordered = sorted(
    s for s in evs.sys_names - {"refA"} - evs.human_sys_names if s in gold and any(v is not None for v in gold[s])
)
for r in res:
    if r.attr_vals["corr_fcn"] == "pce":
        for m in list(r.corr_ranks):
            scores = evs.Scores("seg", [k for k in evs.metric_names if evs.DisplayName(k, "spreadsheet") == m][0])
            g = [v for s in ordered for v in gold[s]]
            x = [v for s in ordered for v in scores[s]]
            r.corr_ranks[m][0] = stats.PairwiseConfidenceError(g, x, len(ordered), filter_nones=True)[0]
out_json = {"tasks": {}, "avg_corr": {}, "avg_rank": {}, "pdp": {}}
for r in res:
    key = "spa" if r.attr_vals["corr_fcn"] == "pce" else "acc-eq"
    out_json["tasks"][key] = {m: float(r.Corr(m)) for m in r.metrics}
out_json["avg_corr"] = {m: float(v) for m, v in res.AverageCorrs(weights).items()}
out_json["avg_rank"] = {m: float(v) for m, v in res.AverageRanks(weights).items()}
corrs = data.GetCorrelations(evs, "seg", {"refA"}, set(), False, False, "esa", False, metric_format="spreadsheet")
out_json["pdp"] = {m: float(c.Pearson(average_by="item", pdp=True)[0]) for m, c in corrs.items()}
out_json["systems"] = sorted(evs.sys_names & set(systems) - {"refA"})
out_json["rated_lines"] = len(rated)
out_json["limit"] = limit
json.dump(out_json, open(out, "w"), indent=1, sort_keys=True)
print(json.dumps(out_json, indent=1, sort_keys=True))
