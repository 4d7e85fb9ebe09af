"""System models fed with measured figures (issue 15): the switch-plane topology, power and energy, and the
FMU message-buffer model. Pure Python; each model takes a dict (a YAML file's contents) and returns a
JSON-ready dict that `monet model` stores and reports like a campaign."""


class ModelInputError(ValueError):
    """A model input a user gave is wrong: the message names the key, the value and what would be accepted."""


def paper_check(figure, paper, model, tolerance, note=None):
    """One of a paper's stated figures beside the model's: the deviation and PASS within `tolerance`
    (a fraction); `note` says why where it fails for a known reason."""
    deviation = None if model is None else model / paper - 1
    return {"figure": figure, "paper": paper, "model": model, "deviation": deviation, "tolerance": tolerance,
            "pass": deviation is not None and abs(deviation) <= tolerance, "note": note}


def check_lines(checks):
    """The checks as the terminal shows them: figure, paper, model, deviation, verdict, a check's `caveat` in
    brackets, and on its own line why a failing one fails."""
    from monet.report.tables import fmt
    lines = []
    for c in checks:
        paper = f"{c['paper']:g}" if isinstance(c["paper"], (int, float)) else c["paper"]
        deviation = f", {100 * c['deviation']:+.1f} %" if c["deviation"] is not None else ""
        within = f" (within {100 * c['tolerance']:.0f} %)" if c["tolerance"] is not None else ""
        caveat = f" [{c['caveat']}]" if c.get("caveat") else ""
        lines.append(f"{c['figure']}: paper {paper}, model {fmt(c['model'], 3)}{deviation}: "
                     f"{'PASS' if c['pass'] else 'FAIL'}{within}{caveat}")
        if c.get("note") and not c["pass"]:
            lines.append(f"  why: {c['note']}")
    return lines
