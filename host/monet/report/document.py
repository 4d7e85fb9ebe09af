"""`monet report RESULTS`: tables and plots of a campaign's results beside the MONet paper's figures."""

import html
import json
from collections import Counter
from pathlib import Path

from monet.benchmarks import REGISTRY
from monet.benchmarks.latency import distance_fits
from monet.campaign.results import load, read_manifest
from monet.report import table1
from monet.report.paper import PAPER, PAPER_TOLERANCE
from monet.report.tables import POINT_DEFAULTS, axis, fmt, markdown_table


def paper_comparison(records):
    """Rows: figure, paper value, the MONet-compatible profile and its deviation, our link and its deviation. Each
    benchmark gives the paper's figures its points measured (Benchmark.paper_figures)."""
    rows = []
    measured = {name: {} for name in ("monet", "ours")}
    for benchmark in REGISTRY.values():
        for name, figures in measured.items():
            figures.update(benchmark.paper_figures(records, name))
    for label, (value, unit, kind, source) in PAPER.items():
        row = {"figure": label, "paper": value, "unit": unit, "kind": kind, "source": source}
        for name, figures in measured.items():
            mine = figures.get(label)
            row[name] = mine
            row[f"{name}_deviation"] = None if mine is None else (mine - value) / value
        rows.append(row)
    return rows


def _online_section(records):
    """Linux on the board-in-a-box (target qemu): the remote memory node the guest brought online."""
    qemu = [r for r in records if r["point"]["target"] == "qemu"]
    if not qemu:
        return []
    onlined = [r["result"]["remote_memory"] for r in qemu if r["result"].get("remote_memory")]
    rows = [["node 1 (CPU-less, remote stand-in)", onlined[0]["mib"], onlined[0]["online_blocks"],
             onlined[0]["onlined_blocks"]]] if onlined else [["node 1", "-", "-", "-"]]
    return [("Remote memory online in the guest", ["NUMA node", "MiB online", "memory blocks online",
                                                   "blocks onlined by the overlay"], rows, None,
             "At boot the overlay's S45monet-remote-memory runs monet-online-remote (the board's script): it onlines "
             "every offline block of node 1 as movable memory and reports the node's size. On QEMU the device "
             "tree's node 1 memory is online from the start, so it onlines none.")]


LOWER_IS_BETTER = ("ns", "ns/m")   # units of the latencies; bandwidths and utilisations are better higher


def verdicts(row, name):
    """The summary's verdict on one profile's figure: the MONet-compatible profile reproduces the paper's value
    (within PAPER_TOLERANCE) or not; our link is better or worse than the paper."""
    mine, deviation = row[name], row[f"{name}_deviation"]
    if mine is None:
        return "-"
    if name == "monet":
        return "reproduced" if abs(deviation) <= PAPER_TOLERANCE else "not reproduced"
    better = mine < row["paper"] if row["unit"] in LOWER_IS_BETTER else mine > row["paper"]
    return "better" if better else "worse" if mine != row["paper"] else "equal"


def measured_line(records):
    """What a campaign measured, in one line: its points by benchmark, their targets, memories and profiles."""
    def count(key):
        return Counter(str(axis(r["point"], key)) for r in records)
    benchmarks = ", ".join(f"{name} {n}" for name, n in count("benchmark").items())
    line = f"Measured: {len(records)} points ({benchmarks}) on {', '.join(sorted(count('target')))}"
    if any(r["point"]["target"] == "sim" for r in records):
        line += (f"; memories {', '.join(sorted(count('memory')))}; link profiles "
                 f"{', '.join(sorted(count('profile')))}")
    return line


def summary_section(records, comparison):
    """The report's first section: what was measured, and the paper's figures beside ours with verdicts."""
    def dev(d):
        return "-" if d is None else f"{100 * d:+.1f} %"
    return ("Summary: beside the paper", ["figure", "paper", "unit", "monet profile", "deviation", "verdict",
                                          "MONet-open", "deviation", "verdict", "paper value is", "source"],
            [[c["figure"], fmt(c["paper"], 2), c["unit"], fmt(c["monet"], 2), dev(c["monet_deviation"]),
              verdicts(c, "monet"), fmt(c["ours"], 2), dev(c["ours_deviation"]), verdicts(c, "ours"), c["kind"],
              c["source"]] for c in comparison], None,
            measured_line(records) + ". The monet profile is the paper's path modelled in the same sim (same memory "
            f"model, same distance): it reproduces a figure within {PAPER_TOLERANCE:.0%}; its constants and their "
            "sources are in host/monet/link/profiles.py. MONet-open is our link, better or worse than the paper. "
            "Memory: remote DDR4 (LiteDRAM) where the campaign ran it, else the on-card SRAM; the HMC row is the "
            "half-width HMC behind our link, one 64 B line write at a time from the benchmark block. Bandwidth rows "
            "use the best 8 m, 64 B read or write point at that rate. The detail follows the provenance.")


def make_report(results_dir, out_dir=None):
    from monet.model import power, runner
    out = Path(out_dir or results_dir)
    models = runner.stored_results(results_dir)
    if models and not (Path(results_dir) / "results.jsonl").exists():
        out.mkdir(parents=True, exist_ok=True)
        return _write(out, read_manifest(results_dir), runner.report_sections(models, out), models,
                      title="MONet-open model report")
    records, manifest = load(results_dir)
    # A store written before an axis existed lacks it: its points ran at the axis's default.
    for r in records:
        for k, v in POINT_DEFAULTS.items():
            r["point"].setdefault(k, v)
    out.mkdir(parents=True, exist_ok=True)
    fits = distance_fits(records)
    comparison = paper_comparison(records)
    sections = []   # (title, header, rows, image or None, note)

    t1 = table1.rows(records)
    records = sorted(records, key=lambda r: tuple(str(r["point"].get(k)) for k in ("benchmark", "profile", "memory",
                                                                                  "op", "pattern"))
                     + tuple(r["point"].get(k) or 0 for k in ("size", "lanes", "rate_gbps", "distance_m", "rep")))
    sections += _online_section(records)
    for benchmark in REGISTRY.values():
        sections += benchmark.sections(records, out)

    if not any(r["point"]["target"] == "sim" for r in records):
        return _write(out, manifest, sections, {"fits": fits, "paper": comparison}, summary=[
            ("Summary", None, [], None, measured_line(records) + ". No point ran on the sim: nothing to set "
             "beside the paper's figures.")])
    sections += table1.sections(t1)
    table2 = power.run({}, records=records)
    if any(row["measured_GBps"] for row in table2["rows"]):
        sections += power.sections(table2, out)

    return _write(out, manifest, sections, {"fits": fits, "paper": comparison, "table1": t1},
                  summary=[summary_section(records, comparison)])


def _write(out, manifest, sections, data, title="MONet-open campaign report", summary=()):
    """report.md, report.html and report.json: the title, the `summary` sections (the answer: the first screen),
    the provenance (the manifest's settings, hashes and versions), then the detail."""
    (out / "report.md").write_text(_markdown(manifest, list(summary), sections, title))
    (out / "report.html").write_text(_html(manifest, list(summary), sections, title))
    (out / "report.json").write_text(json.dumps(data, indent=1))
    return out / "report.md", out / "report.html"


PROVENANCE = ("Provenance", None, [], None, "What produced these figures: the campaign, the git revision, the "
              "builds' hashes and the tool versions.")


def _manifest_lines(manifest):
    keys = ("campaign", "git_revision", "gateware_hash", "firmware_hash", "nominal_clock_hz", "topology")
    lines = [f"{k}: {manifest[k]}" for k in keys if k in manifest]
    for name, model in manifest.get("sim_models", {}).items():
        memories = ["sram"] + [memory for memory in ("ddr4", "hmc") if model[f"with_{memory}"]]
        lines.append(f"sim model {name} ({', '.join(memories)}): gateware {model['gateware_hash']}, firmware "
                     f"{model['firmware_hash']}")
    if "qemu" in manifest:
        q = manifest["qemu"]
        lines.append(f"qemu: image {q['image_hash']}, {q['kernel_package']} ({q['suite']}), {q['machine']} "
                     f"{q['cpus']} x {q['cpu']}, node memory {q['node_memory_mb']} MiB, distance {q['node_distance']}, "
                     f"{q['qemu']}")
    if "board" in manifest:
        b = manifest["board"]
        lines.append(f"board: {b['board']}; image {b['image_hash']}, {b['kernel_package']}, {b['machine']}, "
                     f"node memory {b['node_memory_mb']} MiB; FPGA: {b['fpga']}; bitstream "
                     f"{b['bitstream_sha256'] or 'none'}, board serials {b['board_serials'] or 'none'}, "
                     f"cabling {b['cabling'] or 'none'}")
    for name, run in manifest.get("models", {}).items():
        lines.append(f"model {name}: input {run['input_file'] or 'defaults'} (sha256 {run['input_sha256'][:16]}), "
                     f"measured figures from {run['measured_from'] or 'none (the paper)'}, {run['wall_s']:.1f} s, "
                     f"{run['finished']}")
    versions = manifest.get("versions", {})
    if versions:
        lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    return lines


def _markdown(manifest, summary, sections, title):
    out = [f"# {title}"]
    for heading, header, rows, image, note in summary + [PROVENANCE] + sections:
        out += ["", f"## {heading}", "", note]
        if heading == PROVENANCE[0]:
            out += [""] + [f"- {l}" for l in _manifest_lines(manifest)]
        if header:
            out += [""] + markdown_table(header, rows)
        if image:
            out += ["", f"![{heading}]({image})"]
    return "\n".join(out) + "\n"


def _html(manifest, summary, sections, title):
    e = html.escape
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{e(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse;"
             "margin:1em 0}td,th{border:1px solid #bbb;padding:3px 8px;font-size:13px}th{background:#eee}</style>",
             f"</head><body><h1>{e(title)}</h1>"]
    for heading, header, rows, image, note in summary + [PROVENANCE] + sections:
        parts.append(f"<h2>{e(heading)}</h2><p>{e(note)}</p>")
        if heading == PROVENANCE[0]:
            parts.append("<ul>" + "".join(f"<li>{e(l)}</li>" for l in _manifest_lines(manifest)) + "</ul>")
        if header:
            parts.append("<table><tr>" + "".join(f"<th>{e(str(h))}</th>" for h in header) + "</tr>")
            for row in rows:
                parts.append("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>")
            parts.append("</table>")
        if image:
            parts.append(f"<img src='{e(image)}' alt='{e(heading)}'>")
    parts.append("</body></html>")
    return "\n".join(parts)
